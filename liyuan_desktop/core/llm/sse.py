"""Stream assembly for the OpenAI-compatible client: :class:`StreamAssembler` collects the chunks of a streamed answer
(SSE ``data:`` lines, split by :func:`stream_lines`) or one plain JSON completion into a :class:`~.types.ChatResponse` —
content, reasoning, tool calls put together from their pieces, usage — and reports each piece to the caller's
``on_delta``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import uuid
from typing import Any, AsyncGenerator, AsyncIterator, Mapping, Optional

from ..messages import message
from ..text import fix_surrogates
from .types import ChatResponse, DeltaKind, OnDelta, StreamDelta, ToolCall
from .usage import parse_usage

#: How much of a non-SSE 200 body is read before giving up on it (bytes).
MAX_PLAIN_BODY = 8 * 1024 * 1024

#: Line prefixes that mark a body as a server-sent event stream.
#: How a line of a Server-Sent Events body starts (a field name or a comment); a first line that starts with none of
#: them marks a plain (non-stream) body (openai_client decides the mode from it).
SSE_FIELDS = ("data:", ":", "event:", "id:", "retry:")


def _arguments_text(value: Any) -> str:
    """Tool-call arguments as raw text (some servers send an object instead of a JSON string)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)



#: The notice shown when a model's text held a lone UTF-16 surrogate (replaced by U+FFFD).
LONE_SURROGATE_NOTICE = message("llm.lone_surrogate")  # 模型输出里有不成对的 UTF-16 代理字符（半个表情等），已替换为 �


def fix_surrogates_in(value: Any) -> tuple[Any, int]:
    """:func:`fix_surrogates` over every string of a JSON value (dict keys and values, lists); (value, replaced)."""
    if isinstance(value, str):
        return fix_surrogates(value)
    if isinstance(value, dict):
        out, n = {}, 0
        for k, v in value.items():
            k2, a = fix_surrogates(k) if isinstance(k, str) else (k, 0)
            v2, b = fix_surrogates_in(v)
            out[k2] = v2
            n += a + b
        return out, n
    if isinstance(value, list):
        items = [fix_surrogates_in(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


class StreamAssembler:
    """Collects stream chunks (or one non-stream message) into a ChatResponse and reports pieces to on_delta."""

    def __init__(self, on_delta: Optional[OnDelta], model: str):
        self._on_delta = on_delta
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self._last_call_index: Optional[int] = None
        self.usage = parse_usage(None)
        self.finish_reason: Optional[str] = None
        self.model = model
        self.got_data = False
        self._carry: dict[tuple[DeltaKind, int], str] = {}
        #: lone surrogates replaced with U+FFFD in the assembled answer (see :func:`fix_surrogates`)
        self.replaced = 0
        self._warned = False
        #: what the wire looked like (for capability probes, :mod:`.capabilities`): the reasoning field the server
        #: used ("reasoning_content" / "reasoning", or None), and whether a tool call's arguments came in pieces
        self.reasoning_field: Optional[str] = None
        self.streamed = False
        #: characters of content taken so far (text, reasoning, tool names and arguments), counted as they come:
        #: the client's minimum-rate rule reads it after every line (:meth:`received_chars` sums the lists)
        self.chars = 0

    async def _emit(self, kind: DeltaKind, text: str, index: int = 0) -> None:
        if not text or self._on_delta is None:
            return
        if kind in ("content", "reasoning", "tool_args"):
            # a high surrogate at the end of a piece waits for its low half in the next piece of the same channel
            text = self._carry.pop((kind, index), "") + text
            if "\ud800" <= text[-1] <= "\udbff":
                self._carry[(kind, index)] = text[-1]
                text = text[:-1]
            text, _ = fix_surrogates(text)
            if not text:
                return
        result = self._on_delta(StreamDelta(kind=kind, text=text, index=index))
        if inspect.isawaitable(result):
            await result

    def _call_slot(self, piece: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        index = piece.get("index")
        if not isinstance(index, int):
            # Some servers omit "index": a new id starts a new call, anything else continues the last one.
            new_id = piece.get("id")
            known = {c["id"] for c in self.calls.values()}
            if self._last_call_index is None or (new_id and new_id not in known):
                index = max(self.calls, default=-1) + 1
            else:
                index = self._last_call_index
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        self._last_call_index = index
        return index, slot

    async def _tool_piece(self, piece: Any) -> None:
        if not isinstance(piece, Mapping):
            return
        index, slot = self._call_slot(piece)
        call_id = piece.get("id")
        if isinstance(call_id, str) and call_id and not slot["id"]:
            slot["id"] = call_id
        fn = piece.get("function")
        if not isinstance(fn, Mapping):
            return
        name = fn.get("name")
        if isinstance(name, str) and name and name != slot["name"]:
            # Usually the whole name comes once; a few servers stream it in pieces, some repeat it.
            slot["name"] += name
            self.chars += len(name)
            await self._emit("tool_name", name, index)
        args = _arguments_text(fn.get("arguments"))
        if args:
            slot["arguments"].append(args)
            self.chars += len(args)
            await self._emit("tool_args", args, index)

    async def _message_part(self, part: Mapping[str, Any]) -> None:
        reasoning = part.get("reasoning_content") or part.get("reasoning")
        if isinstance(reasoning, str) and reasoning and self.reasoning_field is None:
            self.reasoning_field = "reasoning_content" if part.get("reasoning_content") else "reasoning"
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            self.chars += len(reasoning)
            await self._emit("reasoning", reasoning)
        content = part.get("content")
        if isinstance(content, str) and content:
            self.content.append(content)
            self.chars += len(content)
            await self._emit("content", content)
        tool_calls = part.get("tool_calls")
        if isinstance(tool_calls, list):
            for piece in tool_calls:
                await self._tool_piece(piece)

    def _common(self, obj: Mapping[str, Any]) -> None:
        if isinstance(obj.get("model"), str) and obj["model"]:
            self.model = obj["model"]
        if isinstance(obj.get("usage"), Mapping):
            self.usage = parse_usage(obj["usage"])

    async def feed_chunk(self, obj: Mapping[str, Any]) -> None:
        """One ``chat.completion.chunk`` object from the stream."""
        self.got_data = True
        self.streamed = True
        self._common(obj)
        for choice in obj.get("choices") or []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) not in (0, None):
                continue  # only the first choice (n=1) is used
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                message = choice.get("message")
                delta = message if isinstance(message, Mapping) else {}
            await self._message_part(delta)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])

    async def feed_message(self, obj: Mapping[str, Any]) -> None:
        """A whole non-stream ``chat.completion`` object."""
        self.got_data = True
        self._common(obj)
        choices = obj.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], Mapping) else {}
        raw = choice.get("message")
        message: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        part = dict(message)
        if isinstance(part.get("tool_calls"), list):
            part["tool_calls"] = [
                {**tc, "index": i} if isinstance(tc, Mapping) else tc for i, tc in enumerate(part["tool_calls"])
            ]
        await self._message_part(part)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])

    def _fixed(self, text: str) -> str:
        text, n = fix_surrogates(text)
        self.replaced += n
        return text

    def response(self, finish_reason: Optional[str] = None) -> ChatResponse:
        """The assembled answer. Pieces are joined before surrogates are checked, so an emoji split across two
        chunks is whole again; a truly lone surrogate becomes U+FFFD (counted in :attr:`replaced`, logged)."""
        self.replaced = 0
        calls = []
        for index in sorted(self.calls):
            slot = self.calls[index]
            if not slot["id"]:
                slot["id"] = f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(id=slot["id"], name=self._fixed(slot["name"]),
                                  arguments=self._fixed("".join(slot["arguments"]))))
        content, reasoning = self._fixed("".join(self.content)), self._fixed("".join(self.reasoning))
        if self.replaced:
            logging.getLogger(__name__).warning("model output: %d lone UTF-16 surrogate(s) replaced", self.replaced)
            if self._on_delta is not None and not self._warned:
                self._warned = True  # once per call (response() is asked again for a cut stream's partial)
                shown = self._on_delta(StreamDelta(kind="notice", text=LONE_SURROGATE_NOTICE))
                if inspect.isawaitable(shown):
                    asyncio.ensure_future(shown)
        return ChatResponse(
            content=content,
            reasoning=reasoning,
            tool_calls=calls,
            usage=self.usage,
            finish_reason=finish_reason or self.finish_reason,
            model=self.model,
        )

    def wire_facts(self) -> dict[str, Any]:
        """What this answer showed about the server (read by capability probes): ``streamed`` (SSE chunks, not
        one JSON body), ``reasoning_field``, ``tool_pieces`` (most argument pieces of one tool call; > 1 means
        the server streams tool-call deltas), ``usage`` (the server sent a usage object) and ``cached_tokens``
        (it had a cached-token field)."""
        raw = self.usage.raw
        return {
            "streamed": self.streamed,
            "reasoning_field": self.reasoning_field,
            "tool_pieces": max((len(s["arguments"]) for s in self.calls.values()), default=0),
            "usage": bool(raw),
            "cached_tokens": bool(raw) and ("prompt_cache_hit_tokens" in raw or isinstance(
                raw.get("prompt_tokens_details"), Mapping) and "cached_tokens" in raw["prompt_tokens_details"]),
        }

    def received_chars(self) -> int:
        """Characters received so far (content, reasoning and tool-call arguments; code points), for the minimum-rate
        clock (core/llm/rate.py)."""
        return sum(map(len, self.content)) + sum(map(len, self.reasoning)) + sum(
            len("".join(s["arguments"])) for s in self.calls.values()
        )


async def stream_lines(first: bytes, chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
    """Split a byte stream into text lines (LF or CRLF); the last line may lack its newline.

    Linear in the stream (issue 29 §1): the buffer is a ``bytearray`` that grows in place, and each byte is searched
    for a newline once — a line that never ends, arriving in many small chunks, is not searched again from its start
    after every chunk."""
    buf = bytearray(first)
    scanned = 0  # bytes at the start of buf already known to hold no newline
    while True:
        nl = buf.find(b"\n", scanned)
        if nl >= 0:
            start = 0
            while nl >= 0:
                raw = bytes(buf[start:nl])
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                yield raw.decode("utf-8", errors="replace")
                start = nl + 1
                nl = buf.find(b"\n", start)
            del buf[:start]
        scanned = len(buf)
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            break
        buf += chunk
    if buf:
        yield bytes(buf).rstrip(b"\r").decode("utf-8", errors="replace")
