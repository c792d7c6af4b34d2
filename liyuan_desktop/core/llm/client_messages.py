"""The error messages of the OpenAI-compatible client (:class:`~.openai_client.OpenAIChatModel`), as a mixin: what
each failure is called and what the user is told — an HTTP status with the server's message, a
configuration or context-size error no retry can fix (:func:`.errors.classify_error`), a transport failure, a stream
cut short, a body that is not a chat completion, a call past its idle or total time. Every message goes through
the model's ``_redact`` (API key and URL credentials masked). Split from the client so each file stays readable.

Each message is a catalog message (``llm.err.*`` and friends in core/messages.py, issue 32): a :class:`~..messages.Msg`
as :attr:`ModelError.message` and first argument, so the window and the CLI render it in the user's language
(``render(error, lang)``). Redaction is applied to the *parameters* (the server's text, a redirect's location,
transport details) before they go into the message, so no language can show the key.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import httpx

from ..messages import message
from .errors import (
    classify_error,
    collapse_text,
    config_hint,
    context_hint,
    context_windows,
    describe_exc,
    error_code_from_json,
    error_message_from_json,
    server_window,
)
from .sse import StreamAssembler
from .types import ModelError


class ClientMessages:
    """Mixin of :class:`~.openai_client.OpenAIChatModel`: builds its :class:`ModelError` objects. Uses the model's
    ``host``, ``_url_path``, ``model``, ``_api_key``, ``provider``, ``context_window`` and timeouts."""

    host: str
    model: str
    provider: str
    _url_path: str
    _api_key: Optional[str]
    read_timeout: float
    connect_timeout: float
    idle_timeout: float
    total_timeout: float
    min_rate_chars: int
    min_rate_window: float

    def _redact(self, text: str) -> str:  # provided by the client
        raise NotImplementedError

    def _unfixable(self, status: Optional[int], text: str, data: Any = None) -> Optional[ModelError]:
        """A "config" or "context" :class:`ModelError` when the server's error is one no retry can fix
        (:func:`.errors.classify_error`), else None. The message says what the server said and the fix: for
        a configuration error the hint of :func:`.errors.config_hint`; for a context error the server's window
        (when it states one) and ours (:attr:`context_window`)."""
        found = classify_error(status if status != 429 else None, text, data) if status != 429 else None
        if found is None:
            return None
        kind, what = found
        said = self._redact(collapse_text(text))
        code = f" ({status})" if status else ""
        if kind == "config":
            hint = config_hint(what, self.provider)
            return ModelError("config", message("llm.err.config", code=code, hint=hint, said=said), status=status,
                              hint=hint, config=what)
        theirs = server_window(text, data)
        ours = getattr(self, "context_window", None)
        hint = context_hint(theirs, ours)
        return ModelError("context", message("llm.err.context", code=code, window=context_windows(theirs, ours),
                                             hint=hint, said=said),
                          status=status, hint=hint, server_window=theirs)

    def _status_error(self, status: int, text: str, code: str = "", retries: int = 0,
                      data: Any = None) -> ModelError:
        """The :class:`ModelError` for an HTTP error ``status`` whose server said ``text`` (its error message or the
        start of its body) with machine ``code`` after ``retries`` retries: a catalog message (``llm.err.*``) built
        from parameters already redacted (the server's text through :meth:`_redact`; the host is credential-free),
        so neither language can show the key."""
        unfixable = self._unfixable(status, text, data)
        if unfixable is not None:
            return unfixable
        text = self._redact(collapse_text(text))
        said = message("llm.err.said", message=text) if text else ""
        where = f"{self.host}{self._url_path}"
        host = self.host
        if status == 401 and not self._api_key:
            return ModelError("auth", message("llm.err.no_key", host=host, said=said), status=status)
        if status in (401, 403):
            return ModelError("auth", message("llm.err.bad_key", status=status, host=host, model=self.model,
                                              said=said), status=status)
        if status == 402:
            return ModelError("auth", message("llm.err.payment", host=host, said=said), status=status)
        if status == 404:
            return ModelError("not_found", message("llm.err.not_found", where=where, model=self.model, said=said),
                              status=status)
        if status == 429:
            if "insufficient_quota" in code or "insufficient_quota" in text:
                return ModelError("rate_limit", message("llm.err.quota", host=host, said=said), status=status)
            return ModelError("rate_limit", message("llm.err.rate_limit", retries=retries, said=said), status=status)
        if status >= 500:
            again = message("llm.err.again", n=retries) if retries else ""
            return ModelError("server", message("llm.err.server", status=status, again=again, said=said),
                              status=status)
        if 400 <= status < 500:
            return ModelError("bad_request", message("llm.err.bad_request", status=status,
                                                     message=text or message("llm.err.no_reason")), status=status)
        return ModelError("bad_response", message("llm.err.unexpected", status=status, where=where, said=said),
                          status=status)

    def _error_from_body(self, status: int, raw: bytes, retries: int = 0) -> ModelError:
        text = raw.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        said = error_message_from_json(data) if data is not None else collapse_text(text, 200)
        return self._status_error(status, said, error_code_from_json(data), retries, data)

    def _transport_error(self, exc: BaseException, retries: int = 0) -> ModelError:
        """A failed connection as a ModelError ("network") whose message carries its catalog key (issue 32: said
        in the user's language, never matched back from Chinese text)."""
        detail = self._redact(describe_exc(exc))
        tried = message("llm.tried", n=retries) if retries else ""
        if isinstance(exc, httpx.ReadTimeout):
            return ModelError("network", message("llm.read_timeout", seconds=f"{self.read_timeout:g}", detail=detail))
        if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
            return ModelError("network", message("llm.connect_timeout", seconds=f"{self.connect_timeout:g}",
                                                 host=self.host, tried=tried, detail=detail))
        return ModelError("network", message("llm.cannot_connect", host=self.host, tried=tried, detail=detail))

    def _cut_error(self, asm: StreamAssembler, exc: Optional[BaseException]) -> ModelError:
        got = asm.received_chars()
        if isinstance(exc, httpx.TimeoutException):
            lead = message("llm.err.cut.timeout", s=f"{self.read_timeout:g}")
        else:
            lead = message("llm.err.cut.network")
        detail = self._redact(describe_exc(exc)) if exc else "stream ended without [DONE]"
        return ModelError("network", message("llm.err.cut", lead=lead, got=got, detail=detail),
                          partial=asm.response(finish_reason="cut"))

    def _bad_response(self, text: str, status: int = 200, *, is_json: bool = False) -> ModelError:
        snippet = self._redact(collapse_text(text, 200))
        what = message("llm.err.not_chat.json" if is_json else "llm.err.not_chat.text")
        return ModelError("bad_response", message("llm.err.not_chat", what=what, where=f"{self.host}{self._url_path}",
                                                  snippet=snippet or message("llm.err.not_chat.empty")),
                          status=status)

    def _deadline_error(self, asm: Optional[StreamAssembler], which: str, in_window: int = 0) -> ModelError:
        """The error for a call cut by :attr:`idle_timeout` (``which == "idle"``), by the minimum rate (``"rate"``:
        ``in_window`` characters came in the last :attr:`min_rate_window` seconds, fewer than
        :attr:`min_rate_chars`) or by :attr:`total_timeout` (``"total"``). The message is a catalog message
        (``llm.deadline.*`` in core/messages.py); ``partial`` holds what had arrived (``finish_reason == "cut"``),
        so the beat keeps its draft."""
        got = asm.received_chars() if asm is not None else 0
        if which == "idle":
            text = message("llm.deadline.idle", s=f"{self.idle_timeout:g}", got=got)
        elif which == "rate":
            text = message("llm.deadline.rate", window=f"{self.min_rate_window:g}", n=in_window,
                           min=self.min_rate_chars, got=got)
        else:
            text = message("llm.deadline.total", s=f"{self.total_timeout:g}", got=got)
        return ModelError("network", text, partial=asm.response(finish_reason="cut") if asm is not None else None)
