"""Errors and retries of the OpenAI-compatible client: which failures are retried (:data:`RETRY_STATUSES`, only
before any answer byte was consumed), how long to wait (:class:`BackoffWait`: exponential backoff with jitter, or
the server's ``Retry-After``, capped at :data:`MAX_RETRY_WAIT`), and how a server's error body or a transport
exception is turned into a short message for :class:`~.types.ModelError`.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:  # httpx and tenacity load with the HTTP client, not with the app (issue 15: start-up)
    import httpx

    from ..messages import Msg  # the catalog is imported where a message is built (mask_secrets loads early)

#: Statuses retried before any byte of the answer was consumed.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Longest single wait between attempts, in seconds (also caps a server's Retry-After).
MAX_RETRY_WAIT = 30.0
#: How much of an error body is read to find the server's message (bytes).
MAX_ERROR_BODY = 64 * 1024


#: ``scheme://user[:password]@`` in any text: the credentials part of a URL (RFC 3986 userinfo).
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@")


def url_secrets(url: str) -> list[str]:
    """The credentials inside ``url`` (``https://user:pass@host``): the password, the ``user:pass`` pair and their
    percent-decoded forms, longest first, each at least 4 characters; [] when the URL holds none. A user name alone
    (no password) counts as a credential too (some gateways put a token there)."""
    try:
        parts = urlsplit(url.strip())
        netloc = parts.netloc
    except ValueError:
        return []
    if "@" not in netloc:
        return []
    userinfo = netloc.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    found = {userinfo, unquote(userinfo), password, unquote(password)}
    if not password:
        found |= {user, unquote(user)}
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def mask_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential masked as ``***``: each of ``secrets`` (API keys, :func:`url_secrets`;
    ones shorter than 4 characters are ignored) and the userinfo of any URL written in the text
    (``https://user:pass@host`` → ``https://***@host``). Used for error messages, logs and anything saved."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    if "@" in text:
        text = _URL_USERINFO.sub(r"\1***@", text)
    return text


def parse_retry_after(headers: httpx.Headers) -> Optional[float]:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date); None when absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - time.time(), 0.0)


def describe_exc(exc: BaseException) -> str:
    """An exception as one line for a message: ``"ConnectError: all connection attempts failed"``, or only the class
    name when the exception has no text."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def collapse_text(text: str, limit: int = 300) -> str:
    """``text`` with every run of whitespace as one space, cut to ``limit`` characters (plus "…" when cut): a server's
    error body shown on one line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def error_message_from_json(data: Any) -> str:
    """The human message inside an error body: ``{"error": {"message": ...}}``, ``{"error": "..."}``,
    ``{"message": ...}`` or ``{"detail": ...}``."""
    if not isinstance(data, Mapping):
        return ""
    err = data.get("error")
    if isinstance(err, Mapping):
        msg = err.get("message") or err.get("msg") or ""
        meta = err.get("metadata")
        if isinstance(meta, Mapping) and isinstance(meta.get("raw"), str) and meta["raw"] not in str(msg):
            msg = f"{msg} ({meta['raw']})" if msg else meta["raw"]
        if not msg and err.get("code"):
            msg = str(err.get("code"))
        return str(msg)
    if isinstance(err, str) and err:
        return err
    for key in ("message", "detail", "msg"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value:
            return json.dumps(value, ensure_ascii=False)
    return ""


def error_code_from_json(data: Any) -> str:
    """The machine code inside an error body (``{"error": {"code"|"type": ...}}``), or "" when it has none."""
    if isinstance(data, Mapping) and isinstance(data.get("error"), Mapping):
        err = data["error"]
        return str(err.get("code") or err.get("type") or "")
    return ""



class Retryable(Exception):
    """An attempt failed before any answer byte was read and may be tried again (raised by the client's opening of a
    request, read by :class:`BackoffWait` and the retry loop): ``status`` (HTTP, None for a transport error),
    ``retry_after`` (seconds the server asked for), ``message`` and ``cause``."""

    def __init__(self, *, status: Optional[int] = None, retry_after: Optional[float] = None,
                 message: str = "", cause: Optional[BaseException] = None):
        super().__init__(message or (f"HTTP {status}" if status else repr(cause)))
        self.status = status
        self.retry_after = retry_after
        self.message = message
        self.cause = cause


class BackoffWait:
    """Exponential backoff with jitter (``base * 2**(n-1) + U(0, base)``, capped), or the server's Retry-After.
    A tenacity ``wait`` (tenacity takes any callable of the retry state returning seconds)."""

    def __init__(self, base: float, cap: float = MAX_RETRY_WAIT):
        from tenacity import wait_exponential, wait_random

        self._cap = cap
        # Spelled as a sum so it works on both tenacity 8 and 9 (wait_exponential_jitter renamed its args).
        self._exp = wait_exponential(multiplier=base, min=0, max=cap) + wait_random(0, base)

    def __call__(self, retry_state: Any) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, Retryable) and exc.retry_after is not None:
            return min(exc.retry_after, self._cap)
        return min(float(self._exp(retry_state)), self._cap)


# ----------------------------------------------------------------------------------------------------------------
# errors that retrying cannot fix: the server's configuration, or a prompt longer than its window

#: Phrases in a server's error text that say the request's *shape* is wrong for this server — retrying sends the
#: same body and fails the same way. Checked facts: llama.cpp's server answers 500 "tools param requires --jinja
#: flag" when started without ``--jinja``; Ollama answers "<model> does not support tools"; OpenAI-style proxies
#: answer "Unrecognized request argument supplied: …"; several servers name ``tool_choice`` when they reject it.
_CONFIG_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"--jinja", re.I), "jinja"),
    (re.compile(r"does not support (?:tools|function|tool)", re.I), "tools"),
    (re.compile(r"(?:tools?|functions?|function calling)\b.{0,40}\bnot (?:supported|enabled|allowed)", re.I), "tools"),
    (re.compile(r"tool_choice", re.I), "tools"),
    (re.compile(r"unrecognized request argument", re.I), "argument"),
    (re.compile(r"extra (?:inputs|fields) (?:are )?not permitted", re.I), "argument"),
)

#: Phrases that say the prompt does not fit the server's context window (checked: llama.cpp's
#: ``exceed_context_size_error`` "the request exceeds the available context size", with ``n_ctx``; OpenAI and vLLM
#: "This model's maximum context length is N tokens"; llama-cpp-python "Requested tokens (N) exceed context window
#: of M"; LM Studio "the model is loaded with context length of only N tokens").
_CONTEXT_PATTERNS = re.compile(
    r"context[_ ]length|context window|context size|exceed_context_size|n_ctx|maximum context|"
    r"prompt is too long|too many tokens|context_length_exceeded", re.I)
_WINDOW_NUMBERS = (
    re.compile(r"maximum context length is\s*(\d[\d,]*)", re.I),
    re.compile(r"context window of\s*(\d[\d,]*)", re.I),
    re.compile(r"context length of (?:only )?\s*(\d[\d,]*)", re.I),
    re.compile(r"\bn_ctx\b\D{0,5}(\d[\d,]*)", re.I),
    re.compile(r"context (?:size|length) (?:is|of)\s*(\d[\d,]*)", re.I),
)


def classify_error(status: Optional[int], message: str, data: Any = None) -> Optional[tuple[str, str]]:
    """Whether a failed call is one that no retry can fix, and why: ("config", what) or ("context", ""), else None.

    ``status``: the HTTP status (None for an error inside a stream); ``message``: the server's error text;
    ``data``: the parsed error body when there was one (llama.cpp puts ``type: exceed_context_size_error`` and
    ``n_ctx`` beside the message). ``what`` is "jinja", "tools" or "argument" (see :func:`config_hint`).

    Rules: a context-size error wins (it can come as 400 or 500); the configuration phrases of
    :data:`_CONFIG_PATTERNS` count for any status; a plain 4xx other than 408/429 is a bad request anyway
    (already not retried); 5xx without those phrases stays retryable."""
    err = data.get("error") if isinstance(data, Mapping) else None
    etype = str(err.get("type") or "") if isinstance(err, Mapping) else ""
    text = f"{message} {etype}"
    if "exceed_context_size" in etype or _CONTEXT_PATTERNS.search(text):
        return ("context", "")
    for pattern, what in _CONFIG_PATTERNS:
        if pattern.search(text):
            return ("config", what)
    return None


def server_window(message: str, data: Any = None) -> Optional[int]:
    """The server's context window in tokens as its context-size error states it (llama.cpp's ``n_ctx`` field,
    or "maximum context length is N" / "context window of N" / "context length of only N" in the text); None when
    it does not say."""
    err = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(err, Mapping):
        n = err.get("n_ctx")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
    for pattern in _WINDOW_NUMBERS:
        m = pattern.search(message or "")
        if m:
            try:
                return int(m.group(1).replace(",", ""))
            except ValueError:
                continue
    return None


def config_hint(what: str, provider: str = "") -> Msg:
    """The fix for a configuration error as a catalog message (``llm.err.hint.*``, rendered in the user's language):
    "jinja" → start llama.cpp with ``--jinja`` (or turn tools off for this provider); "tools" → turn tools off
    for this provider; "argument" (or anything else) → remove the named field from the provider's extra body /
    sampling. ``provider`` is accepted for callers that name it; the wording does not depend on it."""
    from ..messages import message

    if what in ("jinja", "tools"):
        return message(f"llm.err.hint.{what}")
    return message("llm.err.hint.argument")


def context_windows(theirs: Optional[int], ours: Optional[int]) -> Msg:
    """What a context-size error says about the windows, as a catalog message: the server's window (``theirs``,
    tokens, as its error stated it) and Liyuan's (``ours``, the provider's context window), either or both, or
    that the server did not say."""
    from ..messages import message

    if theirs and ours:
        return message("llm.err.ctx.both", theirs=message("llm.err.ctx.theirs", n=theirs),
                       ours=message("llm.err.ctx.ours", n=ours))
    if theirs:
        return message("llm.err.ctx.theirs", n=theirs)
    if ours:
        return message("llm.err.ctx.ours", n=ours)
    return message("llm.err.ctx.unknown")


def context_hint(theirs: Optional[int], ours: Optional[int]) -> Msg:
    """The fix for a context-size error as a catalog message: when the server's window (``theirs``) is smaller than
    the one Liyuan counts with (``ours``), set the provider's window to it; otherwise shorten the chat or give the
    server a larger context."""
    from ..messages import message

    if theirs and ours and theirs < ours:
        return message("llm.err.ctx.set", n=theirs)
    return message("llm.err.ctx.shorten")
