"""What a (provider, base URL, model) can do, found by a tiny probe and stored with the provider settings (issue 18 §1).

:class:`Capabilities` says whether tool calling works (or the server rejects ``tools``, or the model ignores them),
whether tool-call arguments stream in pieces, which reasoning field the server uses (``reasoning_content``,
``reasoning``, or ``<think>`` tags in the content), whether usage and cached-token counts are reported, the context
window the server states, and whether streaming works. :func:`probe` finds out with two small requests (one plain,
one offering a trivial tool) and the server's metadata:

* ``GET /v1/models``: vLLM's ``max_model_len``, OpenRouter's and LM Studio's ``context_length`` /
  ``max_context_length``, llama.cpp's ``meta.n_ctx_train`` on the entry of the model;
* llama.cpp ``GET /props``: ``default_generation_settings.n_ctx`` (the window the server was started with;
  ``n_ctx`` at the top in some versions);
* Ollama ``POST /api/show`` ``{"model": name}``: ``model_info["<architecture>.context_length"]``.

The user may override any field (``overridden`` lists them; a later probe keeps them). The beat side reads
:func:`capabilities_for` and, when a model never calls tools for 3 beats in a row, records it with
``core.provider_caps.mark_tools_ignored`` (which persists through the app settings).

This module reads and writes no file: providers keep their capabilities in ``ProviderSettings.capabilities``.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import logging
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Optional
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from ..messages import Msg, MsgText, message
from .types import ChatMessage, ChatRequest, ChatResponse, ModelError

if TYPE_CHECKING:  # httpx is imported by the functions that ask a server (issue 15: not at start-up)
    import httpx

log = logging.getLogger(__name__)

__all__ = ["Capabilities", "CAPABILITY_FIELDS", "ToolSupport", "capabilities_for", "set_capabilities", "keep_newer",
           "apply_override", "probe", "server_root", "fetch_context_window", "list_models", "summary"]

ToolSupport = Literal["works", "rejected", "ignored", "unknown"]
ReasoningField = Literal["reasoning_content", "reasoning", "think_tags"]

#: The fields a user may override (the rest are bookkeeping).
CAPABILITY_FIELDS = ("tools", "streamed_tool_deltas", "reasoning", "usage", "cached_tokens", "context_window",
                     "streaming")

#: The trivial tool offered by the probe.
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Return the current time. Call it whenever the user asks for the time.",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string", "description": "time zone"}},
                       "required": ["zone"]},
    },
}


class Capabilities(BaseModel):
    """What one model on one server can do. ``None`` / "unknown" = not known (never probed, or the probe could not
    tell).

    Fields:
        base_url, model: the pair these facts are about (the provider's base URL, the model name).
        tools: "works" (the model called the probe's tool), "rejected" (the server refused a request with
            ``tools``: llama.cpp without ``--jinja``, a model without tool support), "ignored" (the request was
            accepted but the model answered in prose — after the probe, or after 3 beats without a tool call),
            "unknown".
        streamed_tool_deltas: tool-call arguments arrived in several SSE pieces (True) or in one (False).
        reasoning: where the model's thinking came: the ``reasoning_content`` or ``reasoning`` field, or
            ``<think>…</think>`` tags inside the content ("think_tags"); None = none seen.
        usage: the server reports token usage (in the stream's last chunk or the JSON answer).
        cached_tokens: that usage has a cached-prompt field (``prompt_tokens_details.cached_tokens`` or
            ``prompt_cache_hit_tokens``).
        context_window: the window in tokens the server states (module doc), None when it says nothing.
        streaming: streaming works (False: the streamed call failed where a plain JSON one worked — use
            non-streaming for this provider).
        probed_at: ISO-8601 UTC time these facts were last learned (a probe, or the beat side's "tools ignored"
            mark), None = never.
        overridden: the fields the user set by hand; a new probe leaves them as they are.
        notes: short lines about what the probe saw (errors), catalog messages (kept as ``{key, params}`` in the
            settings file), for the settings summary.
    """

    model_config = ConfigDict(extra="ignore")

    base_url: str = ""
    model: str = ""
    served_model: str = ""
    """The model name the server says answered (the reply's ``model``; a llama.cpp server answers to any name, so
    a preset's name is not what runs). "" when unknown."""
    tools: ToolSupport = "unknown"
    streamed_tool_deltas: Optional[bool] = None
    reasoning: Optional[ReasoningField] = None
    usage: Optional[bool] = None
    cached_tokens: Optional[bool] = None
    context_window: Optional[int] = Field(default=None, gt=0)
    streaming: Optional[bool] = None
    probed_at: Optional[str] = None
    overridden: list[str] = Field(default_factory=list)
    notes: list[MsgText] = Field(default_factory=list)

    @field_validator("notes", mode="before")
    @classmethod
    def _notes_in(cls, value: Any) -> Any:
        """Notes as the settings file keeps them: ``{key, params}`` becomes a message again (plain text stays)."""
        if not isinstance(value, list):
            return value
        return [Msg(v["key"], **(v.get("params") or {})) if isinstance(v, dict) and isinstance(v.get("key"), str)
                else v for v in value]

    @field_serializer("notes", when_used="json")
    def _notes_out(self, value: list[str]) -> list[Any]:
        """A note that is a message is saved as ``{key, params}`` (issue 32: it renders in the reader's language)."""
        return [{"key": v.key, "params": {k: str(p) for k, p in v.params.items()}} if isinstance(v, Msg) else v
                for v in value]

    def merged_into(self, old: Optional["Capabilities"]) -> "Capabilities":
        """These (newly probed) facts, with the fields ``old`` marks as overridden kept from ``old``."""
        if old is None or not old.overridden:
            return self
        keep = {f: getattr(old, f) for f in old.overridden if f in CAPABILITY_FIELDS}
        return self.model_copy(update={**keep, "overridden": list(old.overridden)})


def _norm_url(url: str) -> str:
    return (url or "").strip().rstrip("/")


def capabilities_for(provider: Any, model: Optional[str] = None) -> Capabilities:
    """The stored capabilities of ``provider`` (a ``ProviderSettings``, or anything with ``base_url``, ``model`` and
    ``capabilities``) for ``model`` (default: the provider's model) on its current base URL; a fresh unknown
    :class:`Capabilities` when nothing is stored for that pair. Never raises for a missing entry."""
    name = (model or getattr(provider, "model", "") or "").strip()
    url = _norm_url(getattr(provider, "base_url", ""))
    stored: list[Capabilities] = getattr(provider, "capabilities", None) or []
    for caps in stored:
        if caps.model == name and _norm_url(caps.base_url) == url:
            return caps
    return Capabilities(base_url=url, model=name)


def set_capabilities(provider: Any, caps: Capabilities) -> Capabilities:
    """Store ``caps`` on ``provider`` (in place, replacing the entry of the same base URL and model and keeping
    that entry's overridden fields, :meth:`Capabilities.merged_into`). Returns what was stored."""
    stored: list[Capabilities] = list(getattr(provider, "capabilities", None) or [])
    url, name = _norm_url(caps.base_url), caps.model
    old = next((c for c in stored if c.model == name and _norm_url(c.base_url) == url), None)
    new = caps.merged_into(old)
    stored = [c for c in stored if c is not old] + [new]
    provider.capabilities = stored
    return new


def keep_newer(ours: list[Capabilities], stored: Iterable[Any]) -> list[Capabilities]:
    """``ours`` updated with what another writer stored meanwhile (``stored``: the entries in ``settings.json``,
    models or their JSON): an entry learned later (a later ``probed_at``: a probe, or the beat side's "tools
    ignored" mark) replaces ours, keeping the fields we override; an entry we do not have is added. Used when
    settings are saved from an older copy (the settings dialog, a profile switch), so a probe or mark made in
    the meantime is not lost. Invalid stored entries are skipped."""
    out = list(ours)
    for raw in stored or []:
        try:
            theirs = raw if isinstance(raw, Capabilities) else Capabilities.model_validate(raw)
        except ValueError:
            continue
        key = (_norm_url(theirs.base_url), theirs.model)
        i = next((j for j, c in enumerate(out) if (_norm_url(c.base_url), c.model) == key), None)
        if i is None:
            out.append(theirs)
        elif (theirs.probed_at or "") > (out[i].probed_at or ""):
            out[i] = theirs.merged_into(out[i])
    return out


def apply_override(caps: Capabilities, field: str, value: Any) -> Capabilities:
    """``caps`` with ``field`` set by the user to ``value`` (marked overridden), or, when ``value`` is the string
    "auto", with the override removed (the probed value comes back at the next probe; until then the field is
    unknown). ValueError for a field that cannot be overridden or a bad value."""
    if field not in CAPABILITY_FIELDS:
        raise ValueError(message("caps.not_settable", field=field))
    overridden = [f for f in caps.overridden if f != field]
    if value == "auto":
        default = Capabilities.model_fields[field].default
        return Capabilities.model_validate({**caps.model_dump(), field: default, "overridden": overridden})
    return Capabilities.model_validate({**caps.model_dump(), field: value, "overridden": overridden + [field]})


_SUMMARY_WORDS: dict[str, dict[str, str]] = {
    "zh": {"works": "可用", "rejected": "服务器拒绝", "ignored": "模型不调用", "unknown": "未知", "yes": "是", "no": "否",
           "reasoning_content": "reasoning_content 字段", "reasoning": "reasoning 字段", "think_tags": "<think> 标签",
           "none": "没有", "never": "未探测", "tokens": "tokens",
           "l.tools": "工具调用", "l.streaming": "流式输出", "l.streamed_tool_deltas": "工具参数分段流式",
           "l.reasoning": "思考内容", "l.usage": "用量统计", "l.cached_tokens": "缓存命中统计",
           "l.context_window": "服务器上下文", "l.probed": "探测时间"},
    "en": {"works": "works", "rejected": "rejected by the server", "ignored": "the model does not call them",
           "unknown": "unknown", "yes": "yes", "no": "no", "reasoning_content": "the reasoning_content field",
           "reasoning": "the reasoning field", "think_tags": "<think> tags", "none": "none", "never": "never",
           "tokens": "tokens",
           "l.tools": "Tool calling", "l.streaming": "Streaming", "l.streamed_tool_deltas": "Streamed tool arguments",
           "l.reasoning": "Reasoning", "l.usage": "Usage", "l.cached_tokens": "Cached tokens",
           "l.context_window": "Server context", "l.probed": "Probed"},
}


def summary(caps: Capabilities, lang: str = "zh") -> list[tuple[str, str]]:
    """(label, value) lines for a read-only summary in ``lang`` ("zh" or "en"; the window and ``liyuan models
    probe`` pass their language): tool calling, streaming, tool deltas, reasoning, usage, cache, context window,
    probed at. "✎" marks an overridden value."""
    w = _SUMMARY_WORDS["en" if lang == "en" else "zh"]

    def yn(v: Optional[bool]) -> str:
        return w["unknown"] if v is None else w["yes" if v else "no"]

    rows = [
        ("tools", w[caps.tools]),
        ("streaming", yn(caps.streaming)),
        ("streamed_tool_deltas", yn(caps.streamed_tool_deltas)),
        ("reasoning", w[caps.reasoning or "none"]),
        ("usage", yn(caps.usage)),
        ("cached_tokens", yn(caps.cached_tokens)),
        ("context_window", f"{caps.context_window} {w['tokens']}" if caps.context_window else w["unknown"]),
    ]
    out = [(w["l." + key], value + (" ✎" if key in caps.overridden else "")) for key, value in rows]
    out.append((w["l.probed"], caps.probed_at or w["never"]))
    return out


# ----------------------------------------------------------------------------------------------------------------
# server metadata


def server_root(base_url: str) -> str:
    """The server's root for its native endpoints: ``base_url`` without a trailing ``/v1`` (or ``/v1/chat/
    completions``), e.g. ``http://127.0.0.1:11434/v1`` → ``http://127.0.0.1:11434``."""
    parts = urlsplit(_norm_url(base_url))
    path = parts.path.rstrip("/")
    for tail in ("/chat/completions", "/v1"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def _models_url(base_url: str) -> str:
    url = _norm_url(base_url)
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return url + "/models"


def _positive(value: Any) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip()) or None
    return None


def _window_from_model_entry(entry: Mapping[str, Any]) -> Optional[int]:
    for key in ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx"):
        n = _positive(entry.get(key))
        if n:
            return n
    meta = entry.get("meta")
    if isinstance(meta, Mapping):
        for key in ("n_ctx", "n_ctx_train"):
            n = _positive(meta.get(key))
            if n:
                return n
    top = entry.get("top_provider")
    if isinstance(top, Mapping):
        return _positive(top.get("context_length"))
    return None


async def _get_json(client: httpx.AsyncClient, method: str, url: str, headers: Mapping[str, str],
                    body: Any = None) -> Any:
    """The JSON of one metadata request, or None on any failure (a missing endpoint is normal)."""
    import httpx

    try:
        response = await client.request(method, url, headers=dict(headers), json=body)
        if response.status_code != 200:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError) as exc:
        log.debug("metadata %s %s: %s", method, url, type(exc).__name__)
        return None


def model_entries(data: Any) -> list[dict[str, Any]]:
    """The model entries of a ``/v1/models`` answer (``{"data": [...]}``, a bare list, or Ollama's
    ``{"models": [...]}``), each a dict with at least ``id``."""
    items: Iterable[Any] = []
    if isinstance(data, Mapping):
        items = data.get("data") or data.get("models") or []
    elif isinstance(data, list):
        items = data
    out = []
    for item in items:
        if isinstance(item, Mapping):
            ident = item.get("id") or item.get("name") or item.get("model")
            if isinstance(ident, str) and ident:
                out.append({**item, "id": ident})
        elif isinstance(item, str) and item:
            out.append({"id": item})
    return out


async def list_models(base_url: str, api_key: Optional[str] = None, *, timeout: float = 5.0,
                      client: Optional[httpx.AsyncClient] = None) -> list[str]:
    """The model names a server lists at ``<base_url>/models`` (OpenAI shape; Ollama's ``/api/tags`` is tried when
    that fails). [] when it lists none or cannot be reached; never raises for a network failure. For the model
    picker of every provider (never call it on the UI thread without awaiting)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    own = client is None
    if client is None:
        import httpx

        client = httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False)
    try:
        names = [m["id"] for m in model_entries(await _get_json(client, "GET", _models_url(base_url), headers))]
        if not names:
            names = [m["id"] for m in model_entries(await _get_json(client, "GET", server_root(base_url) + "/api/tags",
                                                                 headers))]
        return list(dict.fromkeys(names))
    finally:
        if own:
            await client.aclose()


async def fetch_context_window(base_url: str, model: str, api_key: Optional[str] = None, *, timeout: float = 5.0,
                               client: Optional[httpx.AsyncClient] = None) -> Optional[int]:
    """The context window the server states for ``model`` (module doc: ``/v1/models`` metadata, llama.cpp
    ``/props``, Ollama ``/api/show``), asked concurrently; None when none says. Never raises for a network
    failure. The first source that answers wins in this order: ``/props`` (the running window), ``/api/show``,
    ``/v1/models``."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    root = server_root(base_url)
    own = client is None
    if client is None:
        import httpx

        client = httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False)
    try:
        models, props, show = await asyncio.gather(
            _get_json(client, "GET", _models_url(base_url), headers),
            _get_json(client, "GET", root + "/props", headers),
            _get_json(client, "POST", root + "/api/show", headers, {"model": model}),
        )
    finally:
        if own:
            await client.aclose()
    if isinstance(props, Mapping):
        settings = props.get("default_generation_settings")
        n = _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
        n = n or _positive(props.get("n_ctx"))
        if n:
            return n
    if isinstance(show, Mapping) and isinstance(show.get("model_info"), Mapping):
        for key, value in show["model_info"].items():
            if str(key).endswith("context_length"):
                n = _positive(value)
                if n:
                    return n
    entries = model_entries(models)
    for entry in entries:
        if entry["id"] == model:
            return _window_from_model_entry(entry)
    if len(entries) == 1:  # a one-model server (llama.cpp) answers to any name
        return _window_from_model_entry(entries[0])
    return None


# ----------------------------------------------------------------------------------------------------------------
# the probe


def now_iso() -> str:
    """Now in UTC as ISO 8601 to the second (``2026-01-31T12:00:00+00:00``), the form of ``Capabilities.probed_at``."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


async def _ask(client: Any, request: ChatRequest) -> tuple[Optional[ChatResponse], Optional[ModelError], dict[str, Any]]:
    """``(response, None, wire)`` when the request worked, ``(None, error, {})`` when it failed."""
    try:
        response = await client.complete(request)
    except ModelError as exc:
        return None, exc, {}
    return response, None, dict(getattr(client, "last_wire", {}) or {})


def _short(error: ModelError) -> str:
    """An error's message for a probe note: a catalog message kept whole (its key carried), plain text cut at 200."""
    return error.message if isinstance(error.message, Msg) else str(error.message)[:200]


async def probe(client: Any, *, api_key: Optional[str] = None, metadata_timeout: float = 5.0) -> Capabilities:
    """Find what ``client`` (an :class:`~.openai_client.OpenAIChatModel`; build it with ``max_retries=0`` and short
    timeouts) can do: a plain request ("reply OK", small ``max_tokens``), a request offering :data:`PROBE_TOOL`,
    and the server's metadata (:func:`fetch_context_window`), the metadata concurrently with the first request.

    When a streamed request fails in a way that is not the server's configuration (a dropped or broken stream, an
    empty reply), the same request is tried once without streaming; if that works, ``streaming`` is False.
    ``tools`` is "rejected" on a configuration error naming tools (:class:`ModelError` kind "config"), "works" when
    the tool was called, "ignored" when the model answered in prose. Network failures are noted in ``notes`` and
    leave the fields unknown. Never raises a :class:`ModelError`; cancellation propagates. The client's ``stream``
    setting is restored afterwards."""
    caps = Capabilities(base_url=_norm_url(client.base_url), model=client.model, probed_at=now_iso())
    notes: list[str] = []  # catalog messages (Msg), rendered by the reader
    original_stream = getattr(client, "stream", True)
    window_task = asyncio.ensure_future(fetch_context_window(client.base_url, client.model, api_key,
                                                             timeout=metadata_timeout))
    try:
        plain = ChatRequest(messages=[ChatMessage(role="user", content="Reply with the single word: OK")],
                            max_tokens=64, thinking=True, purpose="scribe")
        response, error, wire = await _ask(client, plain)
        if error is not None and error.kind in ("network", "bad_response", "empty") and original_stream:
            client.stream = False
            response2, error2, wire2 = await _ask(client, plain)
            if error2 is None:
                response, error, wire = response2, None, wire2
                caps.streaming = False
                notes.append(message("caps.stream_fallback"))
            client.stream = original_stream
        if error is not None:
            notes.append(message("caps.plain_failed", error=_short(error)))
        else:
            if response is not None and response.model:
                caps.served_model = response.model
            if caps.streaming is None:
                caps.streaming = bool(wire.get("streamed")) if original_stream else None
            caps.usage = bool(wire.get("usage"))
            caps.cached_tokens = bool(wire.get("cached_tokens")) if caps.usage else None
            field = wire.get("reasoning_field")
            if field:
                caps.reasoning = field
            elif response is not None and "<think>" in (response.content or ""):  # not None: error is None
                caps.reasoning = "think_tags"

        if error is None or error.kind not in ("auth", "not_found", "network"):
            use_stream = caps.streaming is not False and original_stream
            client.stream = use_stream
            tool_req = ChatRequest(messages=[ChatMessage(role="user", content="What time is it in UTC? Use the tool.")],
                                   tools=[PROBE_TOOL], max_tokens=128, thinking=False, purpose="scribe")
            response, terr, twire = await _ask(client, tool_req)
            if terr is not None and use_stream and terr.kind in ("network", "bad_response", "empty"):
                client.stream = False
                response2, terr2, twire2 = await _ask(client, tool_req)
                if terr2 is None:
                    response, terr, twire = response2, None, twire2
                    caps.streaming = False
                    notes.append(message("caps.tools_stream_fallback"))
            client.stream = original_stream
            if terr is not None:
                if terr.kind == "config" and terr.config in ("jinja", "tools", "argument"):
                    caps.tools = "rejected"
                elif terr.kind == "bad_request":
                    caps.tools = "rejected"
                notes.append(message("caps.tools_failed", error=_short(terr)))
            elif response is not None and response.tool_calls:  # not None: terr is None
                caps.tools = "works"
                if twire.get("streamed"):
                    caps.streamed_tool_deltas = twire.get("tool_pieces", 0) > 1
            else:
                caps.tools = "ignored"
                if caps.reasoning is None and response is not None and "<think>" in (response.content or ""):
                    caps.reasoning = "think_tags"
        caps.context_window = await window_task
    finally:
        client.stream = original_stream
        if not window_task.done():
            window_task.cancel()
    caps.notes = notes
    return caps
