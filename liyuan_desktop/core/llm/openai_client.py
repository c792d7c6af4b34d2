"""Streaming client for OpenAI-compatible ``/chat/completions`` endpoints.

Works against DeepSeek, OpenAI, OpenRouter, Ollama, LM Studio, the llama.cpp server and vLLM. Calls are
streamed (``stream: true``) so the UI can show text as it grows, unless the provider is set (or detected,
:mod:`.capabilities`) not to stream: then one plain JSON completion is asked for and turned into the same
response and the same ``on_delta`` pieces. A server that ignores ``stream`` and answers plain JSON is accepted too.

Every request carries the provider's output cap (``max_tokens``; the scribe's own cap for scribe and summary
calls) and, when tools are offered, ``tool_choice: "auto"`` (llama-cpp-python's function-calling mode drops
the tools without it). A reply with no text, no reasoning and no tool call is an error of its own ("empty"),
not a network failure; a server that reports no usage gets an estimate marked ``Usage.estimated``.

Retry policy: a call is retried (exponential backoff with jitter, through ``tenacity``) only while nothing of the
answer has been consumed yet: on 429, 500/502/503/504 and connection failures — except errors no retry can fix
(:func:`.errors.classify_error`: the server's configuration, e.g. llama.cpp without ``--jinja``, or a prompt
longer than its context window), which fail at once with a hint. Once the first byte of the body has been read,
a failure is reported as it is, with what had arrived in ``ModelError.partial``.

Where things are: this module builds the request and drives the call (:class:`OpenAIChatModel`); :mod:`.sse`
assembles the streamed answer; :mod:`.errors` holds the retry policy and the error classification;
:mod:`.client_messages` what each failure is called and what the user is told.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
from typing import Any, AsyncIterator, Mapping, Optional
from urllib.parse import urlsplit

import httpx
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from ..messages import message as catalog_message
from ..text import fix_surrogates
from .client_messages import ClientMessages
from .errors import (
    MAX_ERROR_BODY,
    RETRY_STATUSES,
    BackoffWait,
    Retryable,
    collapse_text,
    error_code_from_json,
    error_message_from_json,
    mask_secrets,
    parse_retry_after,
    url_secrets,
)
from .rate import MinRate
from .sampling import DRY_FIELDS, apply_sampling, local_dry, provider_kind
from .sse import MAX_PLAIN_BODY, SSE_FIELDS, StreamAssembler, stream_lines
from .types import ChatRequest, ChatResponse, ModelError, OnDelta, StreamDelta
from .usage import estimate_usage

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------------------------
# small helpers


def _safe_host(base_url: str) -> str:
    """``host[:port]`` of a URL, without any user:password part."""
    parts = urlsplit(base_url)
    host = parts.hostname or base_url
    if parts.port:
        host = f"{host}:{parts.port}"
    return host


def _is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_local_url(base_url: str) -> bool:
    """A server on this machine or its network: loopback, a private or link-local address, or a ``.local`` name
    (a llama.cpp / Ollama box on the LAN reads a long prompt as slowly as one on this machine)."""
    if _is_loopback(base_url):
        return True
    host = (urlsplit(base_url).hostname or "").strip("[]").lower()
    if host.endswith(".local"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_private or ip.is_link_local


def _content_mark(asm: StreamAssembler) -> int:
    """How many pieces of content (text, reasoning, tool names and arguments) ``asm`` has taken so far.

    Cheap (list lengths, not characters): compared after each line to tell content from keep-alives. Empty
    pieces are never stored by the assembler, so a chunk with an empty delta does not move the mark."""
    return len(asm.content) + len(asm.reasoning) + sum(len(s["arguments"]) + bool(s["name"]) for s in asm.calls.values())


def _deep_merge(into: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge ``extra`` into ``into`` in place; nested dicts are merged, anything else is replaced."""
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        else:
            into[key] = json.loads(json.dumps(value)) if isinstance(value, (dict, list)) else value



# ----------------------------------------------------------------------------------------------------------------
# the model


class OpenAIChatModel(ClientMessages):
    """A :class:`~liyuan_desktop.core.llm.types.ChatModel` over an OpenAI-compatible chat completions endpoint.

    Args:
        base_url: the API root, e.g. ``https://api.deepseek.com`` or ``http://127.0.0.1:11434/v1``
            (``/chat/completions`` is appended unless the URL already ends with it).
        model: model name sent as ``model``.
        api_key: sent as ``Authorization: Bearer <key>`` when set; never logged, never put in messages or repr.
        connect_timeout: seconds to open the connection.
        read_timeout: seconds allowed between two reads of the response (not the whole call).
        idle_timeout: seconds the stream may go on without any new *content* (text, reasoning, tool name or
            arguments) once the answer has started; keep-alive comments, empty chunks and role-only deltas do not
            count as content, so a server that only keeps the connection warm is cut here. Default 180 s. A local
            server (loopback URL, :attr:`is_local`) is the exception before the first content: llama.cpp sends ``:``
            keep-alives while it evaluates a long prompt on a CPU (minutes), and each one restarts this clock
            (issue 30 §3); the per-call cap still bounds the call.
        local: whether the server runs on this machine or its network (:attr:`is_local`); None = decided from
            ``base_url`` (loopback, private or link-local address, ``.local`` name).
        total_timeout: seconds one whole call may take, from the request to the last byte (retries included);
            the last bound on a slow answer. Default 600 s (10 minutes).
        min_rate_chars / min_rate_window: the minimum output rate (:mod:`.rate`): once the first piece of content
            has arrived, every sliding window of ``min_rate_window`` seconds must bring at least ``min_rate_chars``
            characters of content, or the call is cut (a server trickling one character every few seconds). Default
            60 characters in 60 s; 0 in either switches the rule off.
        max_retries: retries after the first attempt (so up to ``max_retries + 1`` requests), before any byte
            of the answer was read, on 429, 500/502/503/504 and connection failures.
        retry_base_wait: seconds; attempt n waits ``base * 2**(n-1)`` plus up to ``base`` of jitter, capped at
            30 s; a server's ``Retry-After`` (seconds, capped at 30) wins when present.
        extra_body: merged (deeply) into every request body, e.g. provider routing options.
        thinking_off_body: merged into the body when ``request.thinking`` is False, e.g.
            ``{"chat_template_kwargs": {"enable_thinking": False}}``.
        extra_headers: added to every request (never logged).
        max_tokens: output cap in tokens sent with actor calls (``max_tokens``); None = none sent. A request's own
            ``max_tokens`` is lowered to it; the chat's sampling ``max_tokens`` (the user's explicit choice) wins.
        scribe_max_tokens: the same for scribe and summary calls (``request.purpose`` "scribe"/"summary").
        stream: False asks for one plain JSON answer (``stream: false``) instead of SSE — for servers whose
            streamed tool calls break; the response and the ``on_delta`` pieces are the same.
        context_window: our idea of the model's window in tokens (the chat's meter and compaction read it; a
            context-size error names it beside the server's).
        provider_name: the configured provider this model was built from ("" when built by hand); used to
            record capabilities (:mod:`.capabilities`).
        provider: the provider's kind for :func:`.sampling.apply_sampling` ("openai", "deepseek", "openrouter",
            "ollama", "llamacpp", "lmstudio", "other"); default: guessed from ``base_url``.
        transport / client: injection for tests; an injected ``client`` is used as is and never closed here.

    ``complete()`` raises :class:`ModelError` (kinds: auth, not_found, bad_request, rate_limit, server, network,
    bad_response); ``asyncio.CancelledError`` closes the response and propagates.
    """

    is_replay: bool = False

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: Optional[str] = None,
        *,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        idle_timeout: float = 180.0,
        total_timeout: float = 600.0,
        min_rate_chars: int = 60,
        min_rate_window: float = 60.0,
        max_retries: int = 4,
        retry_base_wait: float = 1.0,
        extra_body: Optional[Mapping[str, Any]] = None,
        thinking_off_body: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        provider: Optional[str] = None,
        transport: Optional[httpx.AsyncBaseTransport] = None,
        client: Optional[httpx.AsyncClient] = None,
        max_tokens: Optional[int] = None,
        scribe_max_tokens: Optional[int] = None,
        stream: bool = True,
        context_window: Optional[int] = None,
        provider_name: str = "",
        local: Optional[bool] = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key or None
        self._secrets = ([self._api_key] if self._api_key else []) + url_secrets(base_url)
        self.connect_timeout = float(connect_timeout)
        self.read_timeout = float(read_timeout)
        self.idle_timeout = float(idle_timeout)
        self.total_timeout = float(total_timeout)
        self.min_rate_chars = max(int(min_rate_chars), 0)
        self.min_rate_window = max(float(min_rate_window), 0.0)
        self.max_retries = max(int(max_retries), 0)
        self.retry_base_wait = max(float(retry_base_wait), 0.0)
        self.extra_body = dict(extra_body or {})
        self.thinking_off_body = dict(thinking_off_body or {})
        self._extra_headers = dict(extra_headers or {})
        self.provider = provider or provider_kind("", self.base_url)
        self.max_tokens = max_tokens if max_tokens and max_tokens > 0 else None
        self.scribe_max_tokens = scribe_max_tokens if scribe_max_tokens and scribe_max_tokens > 0 else None
        self.stream = bool(stream)
        if context_window:
            self.context_window = int(context_window)
        self.provider_name = provider_name
        #: a server on this machine (loopback URL): keep-alives count as progress while it reads the prompt, and
        #: the prompt leaves out labels small local models copy (issue 30)
        self.is_local = is_local_url(self.base_url) if local is None else bool(local)
        #: role-play beats use the compact rules and tool set (ProviderSettings.compact_prompt, issue 30 §6)
        self.compact_prompt = False
        #: what the last answer showed about the server (``StreamAssembler.wire_facts``), for capability probes
        self.last_wire: dict[str, Any] = {}
        #: what the last request's sampling left out and why (see :func:`.sampling.apply_sampling`)
        self.sampling_dropped: list[str] = []
        self._transport = transport
        self._injected_client = client
        self._client: Optional[httpx.AsyncClient] = None
        self._client_loop: Optional[asyncio.AbstractEventLoop] = None
        self.host = _safe_host(self.base_url)
        self.name = f"{model} @ {self.host}"
        if self.base_url.endswith("/chat/completions"):
            self.url = self.base_url
        else:
            self.url = self.base_url + "/chat/completions"
        self._url_path = urlsplit(self.url).path or "/"

    def __repr__(self) -> str:
        return f"OpenAIChatModel(name={self.name!r}, url={self.host + self._url_path!r})"

    # -- plumbing ---------------------------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        """``text`` with the API key and any credentials of the base URL (``https://user:pass@host``, also as a
        server echoes them) masked as ``***`` (:func:`.errors.mask_secrets`)."""
        return mask_secrets(text, self._secrets)

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout, read=self.read_timeout, write=self.read_timeout, pool=self.connect_timeout
        )

    def _get_client(self) -> httpx.AsyncClient:
        if self._injected_client is not None:
            return self._injected_client
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._client_loop is not loop:
            # Pooled connections belong to one event loop: a new loop gets a new client.
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=self._timeout(),
                # Proxy variables must not capture local servers (Ollama, LM Studio...).
                trust_env=not _is_loopback(self.base_url),
                follow_redirects=False,
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool this model opened (an injected client is left alone)."""
        client, self._client = self._client, None
        if client is not None and not client.is_closed:
            await client.aclose()

    def output_cap(self, request: ChatRequest) -> Optional[int]:
        """The ``max_tokens`` to send for ``request`` before sampling: the request's own value lowered to the
        provider's cap for its purpose (:attr:`max_tokens` for actor calls, :attr:`scribe_max_tokens` for scribe
        and summary calls); either alone when the other is None; None = send none."""
        cap = self.max_tokens if request.purpose == "actor" else self.scribe_max_tokens
        own = request.max_tokens
        if own is None:
            return cap
        return own if cap is None else min(own, cap)

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body for ``request`` (exposed for tests and call logging; holds no key): ``stream`` as the
        provider is set (with ``stream_options.include_usage`` when streaming), ``tools`` with
        ``tool_choice: "auto"`` when tools are offered, the output cap (:meth:`output_cap`), then sampling, the
        DRY sampler for a ``fresh`` call to a local llama.cpp server whose sampling sets none
        (:func:`.sampling.local_dry`), the extra body and the thinking-off body."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in request.messages],
            "stream": self.stream,
        }
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = request.tools
            body["tool_choice"] = "auto"
        cap = self.output_cap(request)
        if cap is not None:
            body["max_tokens"] = cap
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.sampling is not None:
            self.sampling_dropped = apply_sampling(body, request.sampling, self.provider)  # type: ignore[arg-type]
        if (getattr(request, "fresh", False) and self.is_local and self.provider == "llamacpp"
                and not any(f in body for f in DRY_FIELDS)):  # issue 30 §1: a small model copies the opening
            body.update(local_dry(getattr(self, "context_window", None)))
        _deep_merge(body, self.extra_body)
        if not request.thinking and self.thinking_off_body:
            _deep_merge(body, self.thinking_off_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "text/event-stream, application/json",
            "Content-Type": "application/json",
            "User-Agent": "liyuan-desktop",
        }
        headers.update(self._extra_headers)
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    # -- one attempt ------------------------------------------------------------------------------------------

    async def _open(self, content: bytes, attempts: list[int]) -> tuple[httpx.Response, AsyncIterator[bytes], bytes]:
        """Send the request and read the first body bytes. Raises Retryable while retrying is still safe."""
        attempts[0] += 1
        client = self._get_client()
        request = client.build_request("POST", self.url, content=content, headers=self._headers(),
                                       timeout=self._timeout())
        log.debug("POST %s model=%s attempt=%d", self.host + self._url_path, self.model, attempts[0])
        try:
            response = await client.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError,
                httpx.ReadError, httpx.WriteError) as exc:
            # Nothing came back yet: the connection failed or was dropped before a response started.
            raise Retryable(cause=exc) from exc
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None

        try:
            status = response.status_code
            if not 200 <= status < 300:
                raw = b""
                try:
                    async for piece in response.aiter_bytes():
                        raw += piece
                        if len(raw) >= MAX_ERROR_BODY:
                            break
                except httpx.TransportError:
                    pass
                if 300 <= status < 400:
                    location = response.headers.get("location", "")
                    where = self._redact(collapse_text(location, 200))
                    raise ModelError("bad_response", catalog_message("llm.err.redirect", status=status, location=where),
                                     status=status)
                if status in RETRY_STATUSES:
                    text = raw.decode("utf-8", errors="replace")
                    try:
                        data = json.loads(text)
                    except ValueError:
                        data = None
                    message = error_message_from_json(data) if data is not None else collapse_text(text, 200)
                    code = error_code_from_json(data)
                    if status == 429 and ("insufficient_quota" in code or "insufficient_quota" in message):
                        raise self._status_error(status, message, code)
                    unfixable = self._unfixable(status, message, data)
                    if unfixable is not None:  # the same body would fail the same way: no retries
                        raise unfixable
                    raise Retryable(status=status, retry_after=parse_retry_after(response.headers),
                                     message=message)
                raise self._error_from_body(status, raw)

            chunks = response.aiter_bytes()
            try:
                first = await chunks.__anext__()
            except StopAsyncIteration:
                first = b""
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                raise Retryable(cause=exc) from exc
            except httpx.TransportError as exc:
                raise self._transport_error(exc) from None
            return response, chunks, first
        except BaseException:
            await response.aclose()
            raise

    # -- reading the answer ------------------------------------------------------------------------------------

    async def _dispatch(self, payload: str, asm: StreamAssembler) -> None:
        try:
            obj = json.loads(payload)
        except ValueError:
            raise ModelError(
                "bad_response",
                catalog_message("llm.err.chunk_not_json", snippet=self._redact(collapse_text(payload, 200))),
                partial=asm.response(finish_reason="cut") if asm.got_data else None,
            ) from None
        if not isinstance(obj, Mapping):
            return
        err = obj.get("error")
        if err:
            said = error_message_from_json(obj) or str(err)
            code = err.get("code") if isinstance(err, Mapping) else None
            status = code if isinstance(code, int) else 500
            error = self._status_error(status, said, error_code_from_json(obj), data=obj)
            if error.kind == "bad_response":
                said = self._redact(collapse_text(said))
                error = ModelError("server", catalog_message("llm.err.mid_stream", message=said), status=status)
            error.partial = asm.response(finish_reason="cut")
            raise error
        await asm.feed_chunk(obj)

    async def _read(self, first: bytes, chunks: AsyncIterator[bytes], asm: StreamAssembler,
                    hard_deadline: Optional[float] = None) -> ChatResponse:
        mode: Optional[str] = None  # "sse" or "plain", decided by the first non-blank line
        plain: list[str] = []
        plain_size = 0
        pending: list[str] = []  # data lines of an SSE event that did not parse on their own
        done = False

        # Three clocks on the event loop: idle (reset only when content arrives, or a plain body grows), the
        # minimum rate once content has started (.rate), and the call's hard deadline. httpx's read timeout counts
        # bytes, so keep-alives alone would never end a call.
        loop = asyncio.get_running_loop()
        hard = hard_deadline if hard_deadline is not None else loop.time() + self.total_timeout
        mark = _content_mark(asm)
        rate = MinRate(self.min_rate_chars, self.min_rate_window)
        which = "idle"

        def _next_deadline() -> float:
            nonlocal which
            idle = loop.time() + self.idle_timeout
            slow = rate.deadline()
            which, at = ("idle", idle) if idle < hard else ("total", hard)
            if slow is not None and slow < at:
                which, at = "rate", slow
            return at

        lines = stream_lines(first, chunks)
        try:
            async with asyncio.timeout_at(_next_deadline()) as clock, contextlib.aclosing(lines):
                async for line in lines:
                    now_mark = _content_mark(asm) + plain_size
                    if now_mark != mark:
                        mark = now_mark
                        rate.seen(loop.time(), asm.chars + plain_size)
                        clock.reschedule(_next_deadline())
                    if mode is None:
                        if not line.strip():
                            continue
                        mode = "sse" if line.lstrip().startswith(SSE_FIELDS) else "plain"
                    if mode == "plain":
                        plain.append(line)
                        plain_size += len(line)
                        if plain_size > MAX_PLAIN_BODY:
                            raise self._bad_response("\n".join(plain))
                        continue
                    # SSE
                    if not line:
                        if pending:
                            await self._dispatch("\n".join(pending), asm)
                            pending.clear()
                        continue
                    if line.startswith(":"):
                        if self.is_local and mark == 0:  # a local server evaluating the prompt says it is alive
                            clock.reschedule(_next_deadline())
                        continue  # comment / keep-alive
                    field, _, value = line.partition(":")
                    if field != "data":
                        continue  # event:, id:, retry: and unknown fields
                    if value.startswith(" "):
                        value = value[1:]
                    if value.strip() == "[DONE]":
                        if pending:
                            await self._dispatch("\n".join(pending), asm)
                            pending.clear()
                        done = True
                        break
                    if not pending:
                        try:
                            obj_ok = json.loads(value)
                        except ValueError:
                            pending.append(value)
                            continue
                        if isinstance(obj_ok, Mapping):
                            await self._dispatch(value, asm)
                        continue
                    pending.append(value)
        except httpx.TransportError as exc:
            if mode == "plain" or mode is None:
                raise self._transport_error(exc) from None
            raise self._cut_error(asm, exc) from None
        except TimeoutError:
            raise self._deadline_error(asm, which, rate.rate_in_window(loop.time()) if which == "rate" else 0) from None

        if mode is None:
            raise self._bad_response("")
        if mode == "plain":
            return await self._read_plain("\n".join(plain), asm)
        if pending:
            await self._dispatch("\n".join(pending), asm)
        if not done and not asm.finish_reason:
            raise self._cut_error(asm, None)
        return asm.response()

    async def _read_plain(self, text: str, asm: StreamAssembler) -> ChatResponse:
        """A 200 body that is not SSE: a non-stream completion is accepted, an error object or HTML is not."""
        try:
            data = json.loads(text)
        except ValueError:
            raise self._bad_response(text) from None
        if isinstance(data, Mapping) and data.get("error"):
            err = data["error"]
            code = err.get("code") if isinstance(err, Mapping) else None
            status = code if isinstance(code, int) else 500
            error = self._status_error(status, error_message_from_json(data), error_code_from_json(data), data=data)
            if error.kind == "bad_response":
                said = self._redact(collapse_text(error_message_from_json(data)))
                error = ModelError("server", catalog_message("llm.err.server_said", message=said), status=status)
            raise error
        if not isinstance(data, Mapping) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise self._bad_response(text, is_json=True)
        await asm.feed_message(data)
        return asm.response()

    # -- public -----------------------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest, on_delta: Optional[OnDelta] = None) -> ChatResponse:
        """Run one streamed call and return the assembled answer.

        ``on_delta`` (sync or async) gets a :class:`StreamDelta` for each content, reasoning, tool-name and
        tool-arguments piece as it arrives. Raises :class:`ModelError`; when the stream breaks after data
        arrived, ``kind == "network"`` and ``partial`` holds what arrived with ``finish_reason == "cut"``; the
        same when :attr:`idle_timeout` (no new content), the minimum rate (:attr:`min_rate_chars` in
        :attr:`min_rate_window`) or :attr:`total_timeout` (the whole call) runs out.
        ``asyncio.CancelledError`` closes the response and propagates.
        """
        content = fix_surrogates(json.dumps(self.build_body(request), ensure_ascii=False))[0].encode("utf-8")
        attempts = [0]

        def _before_sleep(state: Any) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            reason = f"HTTP {exc.status}" if isinstance(exc, Retryable) and exc.status else type(
                exc.cause if isinstance(exc, Retryable) else exc).__name__
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            log.info("model %s: attempt %d failed (%s), retrying in %.2fs", self.name, state.attempt_number,
                     reason, wait)
            if on_delta is not None:  # tell the user: a silent 20 s of retries looks like a hang
                try:
                    on_delta(StreamDelta(kind="notice", text=catalog_message("llm.retry", reason=reason, wait=f"{wait:.1f}",
                                                                             n=state.attempt_number)))
                except Exception:
                    log.debug("on_delta failed for a retry notice", exc_info=True)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=BackoffWait(self.retry_base_wait),
            retry=retry_if_exception_type(Retryable),
            before_sleep=_before_sleep,
            reraise=True,
        )
        hard = asyncio.get_running_loop().time() + self.total_timeout
        try:
            async with asyncio.timeout_at(hard):
                opened: tuple[httpx.Response, AsyncIterator[bytes], bytes] = await retrying(self._open, content, attempts)
                response, chunks, first = opened
        except TimeoutError:
            raise self._deadline_error(None, "total") from None
        except Retryable as exc:
            retries = attempts[0] - 1
            if exc.status is not None:
                raise self._status_error(exc.status, exc.message, retries=retries) from None
            raise self._transport_error(exc.cause or exc, retries) from None

        asm = StreamAssembler(on_delta, self.model)
        try:
            result = await self._read(first, chunks, asm, hard)
            self.last_wire = asm.wire_facts()
        finally:
            with contextlib.suppress(Exception):
                await chunks.aclose()  # type: ignore[attr-defined]
            await response.aclose()
        return self._finish(request, result)

    def _finish(self, request: ChatRequest, result: ChatResponse) -> ChatResponse:
        """The last checks on a complete answer: an answer with nothing in it (no text, no reasoning, no tool
        call) raises ModelError("empty") — the server ended the reply at once, which retrying the connection will
        not fix; a server that reported no usage gets an estimate (``Usage.estimated``)."""
        if not result.content and not result.reasoning and not result.tool_calls:
            why = catalog_message("llm.err.empty.why", reason=result.finish_reason) if result.finish_reason else ""
            raise ModelError("empty", catalog_message("llm.err.empty", why=why), partial=result)
        if not result.usage.total_tokens and not result.usage.raw:
            produced = result.content + result.reasoning + "".join(c.name + c.arguments for c in result.tool_calls)
            body_messages = [m.to_openai() for m in request.messages]
            result = result.model_copy(update={"usage": estimate_usage(body_messages, request.tools, produced)})
        return result
