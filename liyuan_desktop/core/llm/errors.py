"""Errors and retries of the OpenAI-compatible client: which failures are retried (:data:`RETRY_STATUSES`, only
before any answer byte was consumed), how long to wait (:class:`_BackoffWait`: exponential backoff with jitter, or
the server's ``Retry-After``, capped at :data:`MAX_RETRY_WAIT`), and how a server's error body or a transport
exception is turned into a short message for :class:`~.types.ModelError`.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any, Iterable, Mapping, Optional
from urllib.parse import unquote, urlsplit

import httpx
from tenacity import wait_exponential, wait_random
from tenacity.wait import wait_base

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


def _parse_retry_after(headers: httpx.Headers) -> Optional[float]:
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
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _describe_exc(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _collapse(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _error_message_from_json(data: Any) -> str:
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


def _error_code_from_json(data: Any) -> str:
    if isinstance(data, Mapping) and isinstance(data.get("error"), Mapping):
        err = data["error"]
        return str(err.get("code") or err.get("type") or "")
    return ""



class _Retryable(Exception):
    """Internal: an attempt failed before any answer byte was read and may be tried again."""

    def __init__(self, *, status: Optional[int] = None, retry_after: Optional[float] = None,
                 message: str = "", cause: Optional[BaseException] = None):
        super().__init__(message or (f"HTTP {status}" if status else repr(cause)))
        self.status = status
        self.retry_after = retry_after
        self.message = message
        self.cause = cause


class _BackoffWait(wait_base):
    """Exponential backoff with jitter (``base * 2**(n-1) + U(0, base)``, capped), or the server's Retry-After."""

    def __init__(self, base: float, cap: float = MAX_RETRY_WAIT):
        self._cap = cap
        # Spelled as a sum so it works on both tenacity 8 and 9 (wait_exponential_jitter renamed its args).
        self._exp = wait_exponential(multiplier=base, min=0, max=cap) + wait_random(0, base)

    def __call__(self, retry_state: Any) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(exc.retry_after, self._cap)
        return min(float(self._exp(retry_state)), self._cap)
