"""The error messages of the OpenAI-compatible client (:class:`~.openai_client.OpenAIChatModel`), as a mixin: what
each failure is called and what the user is told (Chinese first) — an HTTP status with the server's message, a
configuration or context-size error no retry can fix (:func:`.errors.classify_error`), a transport failure, a stream
cut short, a body that is not a chat completion, a call past its idle or total time. Every message goes through
the model's ``_redact`` (API key and URL credentials masked). Split from the client so each file stays readable.
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

    def _unfixable(self, status: Optional[int], message: str, data: Any = None) -> Optional[ModelError]:
        """A "config" or "context" :class:`ModelError` when the server's error is one no retry can fix
        (:func:`.errors.classify_error`), else None. The message says what the server said and the fix: for
        a configuration error the hint of :func:`.errors.config_hint`; for a context error the server's window
        (when it states one) and ours (:attr:`context_window`)."""
        found = classify_error(status if status != 429 else None, message, data) if status != 429 else None
        if found is None:
            return None
        kind, what = found
        said = self._redact(collapse_text(message))
        code = f" ({status})" if status else ""
        if kind == "config":
            hint = config_hint(what, self.provider)
            return ModelError("config", f"服务器不接受这个请求{code}：{hint}。服务器说：{said}", status=status,
                              hint=hint, config=what)
        theirs = server_window(message, data)
        ours = getattr(self, "context_window", None)
        parts = []
        if theirs:
            parts.append(f"服务器的上下文窗口是 {theirs} tokens / the server's window is {theirs} tokens")
        if ours:
            parts.append(f"梨园按 {ours} tokens 计算 / Liyuan counts with {ours}")
        window = "；".join(parts) or "服务器没有说明窗口大小 / the server did not say its window"
        if theirs and ours and theirs < ours:
            hint = (f"把服务商设置里的上下文窗口改成 {theirs}，或用更大的上下文启动服务器"
                    f" / set this provider's context window to {theirs}, or start the server with a larger context")
        else:
            hint = "缩短对话或调大服务器的上下文 / shorten the chat or start the server with a larger context"
        return ModelError("context", f"提示词超出了模型的上下文{code}：{window}。{hint}。服务器说：{said}",
                          status=status, hint=hint, server_window=theirs)

    def _status_error(self, status: int, message: str, code: str = "", retries: int = 0,
                      data: Any = None) -> ModelError:
        unfixable = self._unfixable(status, message, data)
        if unfixable is not None:
            return unfixable
        message = self._redact(collapse_text(message))
        said = f" 服务器说：{message}" if message else ""
        where = f"{self.host}{self._url_path}"
        if status == 401 and not self._api_key:
            return ModelError("auth", f"没有设置 API key (401)：{self.host} 需要密钥，请在设置里填写。{said}",
                              status=status)
        if status in (401, 403):
            return ModelError(
                "auth",
                f"API key 无效或无权限 ({status})：请在设置里检查 {self.host} 的密钥是否正确、未过期、"
                f"有权使用模型 “{self.model}”。{said}",
                status=status,
            )
        if status == 402:
            return ModelError("auth", f"账户余额不足或需要付费 (402)：请检查 {self.host} 的账户。{said}", status=status)
        if status == 404:
            return ModelError(
                "not_found",
                f"找不到接口或模型 (404)：请检查 base URL 和模型名。请求地址 {where}，模型 “{self.model}”。{said}",
                status=status,
            )
        if status == 429:
            if "insufficient_quota" in code or "insufficient_quota" in message:
                text = f"额度已用完 (429)：{self.host} 的账户没有可用额度，请充值或换一个密钥。{said}"
            else:
                text = (f"请求太频繁，被限流 (429)：已重试 {retries} 次仍不行，请稍后再试，"
                        f"或检查账户额度。{said}")
            return ModelError("rate_limit", text, status=status)
        if status >= 500:
            again = f"已重试 {retries} 次仍失败，" if retries else ""
            return ModelError("server", f"模型服务器出错 ({status})：{again}请稍后再试。{said}", status=status)
        if 400 <= status < 500:
            return ModelError("bad_request", f"请求被服务器拒绝 ({status})：{message or '服务器没有说明原因'}",
                              status=status)
        return ModelError("bad_response", f"服务器返回了意外的状态 ({status})：请检查 base URL {where}。{said}",
                          status=status)

    def _error_from_body(self, status: int, raw: bytes, retries: int = 0) -> ModelError:
        text = raw.decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        message = error_message_from_json(data) if data is not None else collapse_text(text, 200)
        return self._status_error(status, message, error_code_from_json(data), retries, data)

    def _transport_error(self, exc: BaseException, retries: int = 0) -> ModelError:
        """A failed connection as a ModelError ("network") whose message carries its catalog key (issue 32: said
        in the user's language, never matched back from Chinese text)."""
        from ..messages import message

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
            lead = f"读取超时（{self.read_timeout:g} 秒没有新数据）"
        else:
            lead = "网络中断"
        detail = self._redact(describe_exc(exc)) if exc else "stream ended without [DONE]"
        return ModelError(
            "network",
            f"{lead}：模型输出中途断开，已收到 {got} 个字符，本次回复不完整，可以重试。(stream cut: {detail})",
            partial=asm.response(finish_reason="cut"),
        )

    def _bad_response(self, text: str, status: int = 200, *, is_json: bool = False) -> ModelError:
        snippet = self._redact(collapse_text(text, 200))
        what = "是 JSON 但不是聊天补全" if is_json else "不是 SSE 也不是 JSON"
        return ModelError(
            "bad_response",
            f"服务器的回答不是聊天补全格式（{what}）：{self.host}{self._url_path} 可能不是 OpenAI 兼容接口"
            f"（是否少了 /v1？是否被代理或登录页拦截？）。开头是：{snippet or '（空）'}",
            status=status,
        )

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
