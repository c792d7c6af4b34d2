"""Issue 18 §1: capabilities probed against real loopback servers that imitate llama.cpp (``/props``), Ollama
(``/api/show``), vLLM (``/v1/models`` ``max_model_len``) and a server that rejects ``tools``; stored with the
provider settings, overridable, and "tools ignored" persisted for the beat side."""

from __future__ import annotations

import json

import pytest

try:
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.loopback_routes import RouteServer

from liyuan_desktop.core.llm import OpenAIChatModel, ProviderSettings, build_model
from liyuan_desktop.core.llm.capabilities import (
    Capabilities,
    apply_override,
    capabilities_for,
    fetch_context_window,
    probe,
    set_capabilities,
    summary,
)
from liyuan_desktop.core.provider_caps import capabilities_of, mark_tools_ignored, probe_provider
from liyuan_desktop.core.settings import AppSettings, load_settings, save_settings


def sse(*objs) -> str:
    return "".join(f"data: {json.dumps(o)}\n\n" for o in objs) + "data: [DONE]\n\n"


def piece(delta, finish=None):
    return {"object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def answer_plain_or_tool(body):
    """A chat endpoint that calls the tool when offered one (arguments in two pieces) and answers OK otherwise,
    reasoning in ``reasoning_content``, usage with cached tokens in the last chunk."""
    usage = {"object": "chat.completion.chunk", "choices": [], "usage": {
        "prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14, "prompt_tokens_details": {"cached_tokens": 0}}}
    if body.get("tools"):
        return 200, sse(piece({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                               "function": {"name": "get_time", "arguments": "{\"zone\":"}}]}),
                        piece({"tool_calls": [{"index": 0, "function": {"arguments": " \"UTC\"}"}}]}),
                        piece({}, "tool_calls"), usage)
    return 200, sse(piece({"reasoning_content": "嗯"}), piece({"content": "OK"}), piece({}, "stop"), usage)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


async def run_probe(srv: RouteServer, model: str = "m") -> Capabilities:
    client = OpenAIChatModel(srv.base_url, model, None, max_retries=0, read_timeout=5.0)
    try:
        return await probe(client)
    finally:
        await client.aclose()


async def test_llamacpp_like_server_tools_work_and_props_give_the_window():
    routes = {("GET", "/props"): (200, {"default_generation_settings": {"n_ctx": 4096}}),
              ("GET", "/v1/models"): (200, {"object": "list", "data": [{"id": "qwen.gguf", "meta": {"n_ctx_train": 32768}}]})}
    with RouteServer(routes, chat=[answer_plain_or_tool]) as srv:
        caps = await run_probe(srv)
        bodies = srv.chat_bodies()
    assert caps.tools == "works" and caps.streamed_tool_deltas is True
    assert caps.reasoning == "reasoning_content" and caps.usage is True and caps.cached_tokens is True
    assert caps.streaming is True
    assert caps.context_window == 4096  # the running window (/props), not the trained one
    assert caps.probed_at and caps.model == "m" and caps.base_url == srv.base_url
    assert any(b.get("tools") and b.get("tool_choice") == "auto" for b in bodies)
    assert any(not b.get("tools") for b in bodies)


async def test_ollama_like_server_api_show_gives_the_window_and_think_tags_are_seen():
    def chat(body):
        if body.get("tools"):
            return 200, sse(piece({"content": "现在是中午。"}), piece({}, "stop"))  # ignores the tool
        return 200, sse(piece({"content": "<think>想</think>OK"}), piece({}, "stop"))

    routes = {("POST", "/api/show"): lambda body: (200, {"model_info": {"general.architecture": "qwen2",
                                                                        "qwen2.context_length": 32768}})
              if body == {"model": "qwen2.5:3b"} else (404, {"error": "model not found"})}
    with RouteServer(routes, chat=[chat]) as srv:
        caps = await run_probe(srv, "qwen2.5:3b")
    assert caps.tools == "ignored"
    assert caps.reasoning == "think_tags"
    assert caps.usage is False and caps.cached_tokens is None
    assert caps.context_window == 32768


async def test_a_server_rejecting_tools_is_marked_rejected_with_one_request():
    def chat(body):
        if body.get("tools"):
            return 500, {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}
        return 200, sse(piece({"content": "OK"}), piece({}, "stop"))

    with RouteServer({("GET", "/v1/models"): (200, {"data": [{"id": "m", "max_model_len": 8192}]})}, chat=[chat]) as srv:
        caps = await run_probe(srv)
        tool_calls = [b for b in srv.chat_bodies() if b.get("tools")]
    assert caps.tools == "rejected" and len(tool_calls) == 1  # config error: not retried, not re-tried unstreamed
    assert caps.context_window == 8192
    assert any("--jinja" in n for n in caps.notes)


async def test_a_server_whose_streams_break_is_marked_non_streaming():
    def chat(body):
        if body.get("stream"):
            return 200, sse(piece({}, "stop"))  # streams nothing
        return 200, {"object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "OK"}}]}

    with RouteServer({}, chat=[chat]) as srv:
        caps = await run_probe(srv)
    assert caps.streaming is False
    assert caps.tools == "ignored"


async def test_fetch_context_window_none_when_nothing_says():
    with RouteServer({}) as srv:
        assert await fetch_context_window(srv.base_url, "m") is None


def test_stored_overridden_and_used_by_build_model():
    p = ProviderSettings(name="l", base_url="http://127.0.0.1:9/v1", model="m", context_window=32768)
    assert capabilities_for(p).tools == "unknown"
    set_capabilities(p, Capabilities(base_url=p.base_url, model="m", tools="works", streaming=False, context_window=4096))
    assert p.caps().tools == "works" and p.caps("other").tools == "unknown"
    client = build_model(p, api_key="")
    assert client.stream is False and client.context_window == 4096
    # the user overrides tools; a new probe keeps the override
    set_capabilities(p, apply_override(p.caps(), "tools", "rejected"))
    set_capabilities(p, Capabilities(base_url=p.base_url, model="m", tools="works", streaming=True))
    assert p.caps().tools == "rejected" and p.caps().streaming is True and "tools" in p.caps().overridden
    assert any("✎" in value for _, value in summary(p.caps()))
    again = ProviderSettings.model_validate(json.loads(p.model_dump_json()))  # round trip through settings.json
    assert again.caps() == p.caps()
    p.stream = True
    assert build_model(p, api_key="").stream is True  # the explicit setting wins


async def test_probe_provider_persists_and_mark_tools_ignored_for_the_beat_side(home):
    with RouteServer({("GET", "/props"): (200, {"n_ctx": 2048})}, chat=[answer_plain_or_tool]) as srv:
        settings = AppSettings(providers=[ProviderSettings(name="local", base_url=srv.base_url, model="m")],
                               active_provider="local")
        save_settings(settings)
        caps = await probe_provider("local", api_key="")
        assert caps.tools == "works" and caps.context_window == 2048
        assert capabilities_of("local").tools == "works"
        model = build_model(load_settings().provider("local"), api_key="")
        assert mark_tools_ignored(model) is True
        assert load_settings().provider("local").caps().tools == "ignored"
        await model.aclose()
    assert mark_tools_ignored("nobody") is False


def test_an_older_copy_saved_later_keeps_what_was_learned_meanwhile(home):
    p = ProviderSettings(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    save_settings(AppSettings(providers=[p], active_provider="local"))
    window_copy = load_settings()  # the window holds this while the beat side marks the model
    assert mark_tools_ignored("local") is True
    window_copy.persona_name = "阿月"
    save_settings(window_copy)  # e.g. the settings dialog saved from the older copy
    again = load_settings()
    assert again.persona_name == "阿月" and again.provider("local").caps().tools == "ignored"
    # a user override in the older copy still wins over the newer mark
    older = load_settings()
    set_capabilities(older.provider("local"), apply_override(older.provider("local").caps(), "tools", "works"))
    save_settings(older)
    assert load_settings().provider("local").caps().tools == "works"


def test_the_summary_is_in_one_language():
    """Settings → 模型服务 and ``liyuan models probe`` show it in the chosen language, not both at once."""
    import re

    from liyuan_desktop.core.llm.capabilities import Capabilities, summary

    caps = Capabilities(tools="works", streaming=True, usage=False, context_window=32768, reasoning="think_tags",
                        overridden=["tools"])
    en, zh = summary(caps, "en"), summary(caps)
    assert not [t for row in en for t in row if re.search(r"[\u4e00-\u9fff]", t)], en
    assert en[0] == ("Tool calling", "works ✎") and zh[0] == ("工具调用", "可用 ✎")
    assert not [t for row in zh for t in row if re.search(r"\b(works|yes|no|unknown|never)\b", t)], zh


async def test_the_probe_names_the_model_the_server_runs_and_a_local_server_gets_its_own_limits(home, capsys):
    """Issue 30 item 7: a llama.cpp server answers to any model name, so the probe reports the name the server
    gives (``served_model``) and ``liyuan models probe`` prints it; a local server is probed with the provider's own
    timeouts (a busy CPU server was reported "unknown" after a 30 s cap), a hosted one keeps the short caps."""
    import argparse

    from liyuan_desktop.cli.models import _probe
    from liyuan_desktop.core import provider_caps

    def served(body):
        code, text = answer_plain_or_tool(body)
        return code, text.replace('"model": "m"', '"model": "qwen2.5-1.5b-instruct-q4_k_m.gguf"')

    with RouteServer({("GET", "/props"): (200, {"n_ctx": 4096})}, chat=[served]) as srv:
        p = ProviderSettings(name="llamacpp", base_url=srv.base_url, model="llamacpp-preset", read_timeout=300,
                             total_timeout=900)
        save_settings(AppSettings(providers=[p], active_provider="llamacpp"))
        seen: list = []
        real = provider_caps.build_model

        def spy(settings, **kw):  # the real client, its limits noted
            seen.append((kw["read_timeout"], kw["total_timeout"]))
            return real(settings, **kw)

        provider_caps.build_model = spy
        try:
            caps = await probe_provider("llamacpp", api_key="")
            assert caps.served_model == "qwen2.5-1.5b-instruct-q4_k_m.gguf" and caps.model == "llamacpp-preset"
            assert seen == [(300, 900)]
            assert await _probe(argparse.Namespace(provider="llamacpp", json=False)) == 0
            assert "llamacpp · qwen2.5-1.5b-instruct-q4_k_m.gguf @" in capsys.readouterr().out
            hosted = ProviderSettings(name="far", base_url="https://api.example.invalid/v1", model="x",
                                      read_timeout=300, total_timeout=900)
            await probe_provider(hosted, api_key="", save=False)
            assert seen[-1] == (30.0, 60.0)
        finally:
            provider_caps.build_model = real
