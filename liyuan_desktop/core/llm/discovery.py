"""Local model servers, found on loopback (issue 18 §3).

:func:`discover` asks the usual local servers on 127.0.0.1, all at once with short timeouts, and lists those that
answer with the models each serves. The default ports (checked against each project's documentation, 2026):

==================  =====  ==================================================================
server              port   asked
==================  =====  ==================================================================
Ollama              11434  ``GET /api/tags`` (its native list), then ``/v1/models``
LM Studio           1234   ``GET /v1/models``
llama.cpp server    8080   ``GET /v1/models`` (+ ``GET /props`` tells it is llama.cpp)
KoboldCpp           5001   ``GET /v1/models``, ``GET /api/v1/model`` (``{"result": "koboldcpp/<name>"}``)
vLLM                8000   ``GET /v1/models``
text-generation-webui 5000 ``GET /v1/models`` (its OpenAI-compatible API)
Jan                 1337   ``GET /v1/models`` (Jan asks for an API key: a 401 still counts as "found")
==================  =====  ==================================================================

Each found server becomes a :class:`LocalServer` whose :meth:`LocalServer.provider` is a ready
``ProviderSettings`` (base URL with ``/v1``, the first model, no key). The list of places asked is injectable
(``targets``) so tests run against servers on ephemeral ports. Only loopback is asked by default; nothing here
runs on the UI thread (the caller awaits it off the UI's critical path).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Iterable, Optional

import httpx
from pydantic import BaseModel, Field

from .capabilities import model_entries
from .providers import ProviderSettings

log = logging.getLogger(__name__)

__all__ = ["LocalServer", "Target", "DEFAULT_TARGETS", "discover"]


class Target(BaseModel):
    """One place to ask: ``kind`` (the server's id: "ollama", "lmstudio", "llamacpp", "koboldcpp", "vllm",
    "textgen", "jan"), its ``label`` for the UI, ``host`` and ``port``."""

    kind: str
    label: str
    port: int
    host: str = "127.0.0.1"


#: The usual local servers at their default ports (module doc).
DEFAULT_TARGETS: tuple[Target, ...] = (
    Target(kind="ollama", label="Ollama", port=11434),
    Target(kind="lmstudio", label="LM Studio", port=1234),
    Target(kind="llamacpp", label="llama.cpp", port=8080),
    Target(kind="koboldcpp", label="KoboldCpp", port=5001),
    Target(kind="vllm", label="vLLM", port=8000),
    Target(kind="textgen", label="text-generation-webui", port=5000),
    Target(kind="jan", label="Jan", port=1337),
)


class LocalServer(BaseModel):
    """A local server that answered.

    Fields: ``kind``/``label``/``host``/``port`` from its :class:`Target`; ``base_url`` the OpenAI-compatible root
    (``http://host:port/v1``); ``models`` the model names it lists (may be empty: a llama.cpp or KoboldCpp server
    with one loaded model still answers to any name); ``needs_key`` the server answered 401/403 (Jan); ``detail``
    a short note (e.g. that llama.cpp's ``/props`` answered)."""

    kind: str
    label: str
    host: str
    port: int
    base_url: str
    models: list[str] = Field(default_factory=list)
    needs_key: bool = False
    detail: str = ""

    def provider(self, model: Optional[str] = None, name: Optional[str] = None) -> ProviderSettings:
        """A provider for this server and ``model`` (default: the first it lists, else "local-model"): its
        base URL, no key, named ``name`` (default the kind, e.g. "ollama"). llama.cpp gets the thinking-off body
        the built-in llamacpp preset has."""
        chosen = model or (self.models[0] if self.models else "local-model")
        extra: dict[str, Any] = {}
        if self.kind == "llamacpp":
            extra["thinking_off_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
        return ProviderSettings(name=name or self.kind, base_url=self.base_url, model=chosen, api_key_env=None,
                                **extra)


async def _get(client: httpx.AsyncClient, url: str) -> tuple[Optional[int], Any]:
    try:
        response = await client.get(url)
    except (httpx.HTTPError, OSError):
        return None, None
    try:
        data = response.json()
    except ValueError:
        data = None
    return response.status_code, data


async def _ask(client: httpx.AsyncClient, target: Target) -> Optional[LocalServer]:
    root = f"http://{target.host}:{target.port}"
    base = f"{root}/v1"
    models: list[str] = []
    needs_key = False
    detail = ""
    answered = False
    if target.kind == "ollama":
        status, data = await _get(client, f"{root}/api/tags")
        if status == 200:
            answered = True
            models = [m["id"] for m in model_entries(data)]
    status, data = await _get(client, f"{base}/models")
    if status == 200 and isinstance(data, (dict, list)):  # JSON: another web server's HTML page is not a model server
        answered = True
        models = models or [m["id"] for m in model_entries(data)]
    elif status in (401, 403):
        answered, needs_key = True, True
        detail = "需要 API key / needs an API key"
    if target.kind == "llamacpp":
        status, data = await _get(client, f"{root}/props")
        if status == 200 and isinstance(data, dict):
            answered = True
            detail = "llama.cpp /props"
    if target.kind == "koboldcpp" and not models:
        status, data = await _get(client, f"{root}/api/v1/model")
        if status == 200 and isinstance(data, dict) and isinstance(data.get("result"), str):
            answered = True
            name = data["result"].split("/", 1)[-1]
            models = [name] if name else []
    if not answered:
        return None
    return LocalServer(kind=target.kind, label=target.label, host=target.host, port=target.port, base_url=base,
                       models=list(dict.fromkeys(models)), needs_key=needs_key, detail=detail)


async def discover(targets: Optional[Iterable[Target]] = None, *, timeout: float = 1.5) -> list[LocalServer]:
    """Ask every target (default :data:`DEFAULT_TARGETS`) concurrently, each request bounded by ``timeout``
    seconds (connect and read), proxies ignored; the servers that answered, in the order of ``targets``.
    Never raises for a closed port or a strange answer (a port held by something else that does not answer any
    of the endpoints is left out)."""
    chosen = list(targets if targets is not None else DEFAULT_TARGETS)
    limits = httpx.Timeout(timeout, connect=timeout)
    async with httpx.AsyncClient(timeout=limits, trust_env=False, follow_redirects=False) as client:
        found = await asyncio.gather(*(_ask(client, t) for t in chosen), return_exceptions=True)
    out = []
    for item in found:
        if isinstance(item, LocalServer):
            out.append(item)
        elif isinstance(item, BaseException) and not isinstance(item, Exception):
            raise item
        elif isinstance(item, Exception):
            log.debug("local server probe failed: %s", type(item).__name__)
    return out
