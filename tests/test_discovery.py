"""Issue 18 §3: local servers found on loopback — servers of our own on ephemeral ports that imitate Ollama's
``/api/tags`` and LM Studio's ``/v1/models`` (and a KoboldCpp and a key-guarded Jan), asked concurrently; closed
ports are left out; a found server becomes a provider in one step."""

from __future__ import annotations

import socket
import time

try:
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.loopback_routes import RouteServer

from liyuan_desktop.core.llm.discovery import DEFAULT_TARGETS, Target, discover


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_default_ports():
    ports = {t.kind: t.port for t in DEFAULT_TARGETS}
    assert ports == {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080, "koboldcpp": 5001, "vllm": 8000,
                     "textgen": 5000, "jan": 1337}


async def test_discover_lists_what_answers_with_its_models():
    ollama = RouteServer({("GET", "/api/tags"): (200, {"models": [{"name": "qwen2.5:3b", "model": "qwen2.5:3b"},
                                                                  {"name": "llama3.2:1b"}]})})
    lmstudio = RouteServer({("GET", "/v1/models"): (200, {"object": "list", "data": [{"id": "qwen2.5-7b-instruct"}]})})
    kobold = RouteServer({("GET", "/api/v1/model"): (200, {"result": "koboldcpp/tiny"})})
    jan = RouteServer({("GET", "/v1/models"): (401, {"error": "unauthorized"})})
    with ollama, lmstudio, kobold, jan:
        targets = [Target(kind="ollama", label="Ollama", port=ollama.port),
                   Target(kind="lmstudio", label="LM Studio", port=lmstudio.port),
                   Target(kind="vllm", label="vLLM", port=closed_port()),
                   Target(kind="koboldcpp", label="KoboldCpp", port=kobold.port),
                   Target(kind="jan", label="Jan", port=jan.port)]
        found = await discover(targets, timeout=2.0)
    by_kind = {s.kind: s for s in found}
    assert list(by_kind) == ["ollama", "lmstudio", "koboldcpp", "jan"]  # order of the targets, closed port left out
    assert by_kind["ollama"].models == ["qwen2.5:3b", "llama3.2:1b"]
    assert by_kind["lmstudio"].models == ["qwen2.5-7b-instruct"]
    assert by_kind["koboldcpp"].models == ["tiny"]
    assert by_kind["jan"].needs_key and by_kind["jan"].models == []
    p = by_kind["ollama"].provider()
    assert p.base_url == f"http://127.0.0.1:{by_kind['ollama'].port}/v1" and p.model == "qwen2.5:3b"
    assert p.api_key_env is None and p.name == "ollama"
    assert by_kind["lmstudio"].provider("x", name="lm").model == "x"


async def test_closed_ports_answer_quickly_and_nothing_is_found():
    targets = [Target(kind="ollama", label="Ollama", port=closed_port()) for _ in range(7)]
    started = time.monotonic()
    assert await discover(targets, timeout=1.0) == []
    assert time.monotonic() - started < 30  # generous stall bound: all asked at once, no retries


async def test_another_web_server_on_a_default_port_is_not_a_model_server():
    other = RouteServer({("GET", "/"): (200, {"hello": "world"})})  # answers 404 on every model endpoint
    with other:
        found = await discover([Target(kind="llamacpp", label="llama.cpp", port=other.port)], timeout=2.0)
    assert found == []
