"""An offline model that plays recorded answers back, for demos and tests without network.

Replay file format (JSON, UTF-8)::

    {"format": "liyuan-replay", "version": 1, "label": "…",
     "beats": [{"user": "…",
                "actor": [{"reasoning": "…", "content": "…",
                           "tool_calls": [{"name": "…", "arguments": {…} or "<JSON text>"}],
                           "usage": {…OpenAI usage object…}}, …],
                "scribe": ["<raw scribe output text>", …],
                "ask_answers": ["…", …]}, …]}

Actor calls of all beats are played, in order, to requests with ``purpose == "actor"``; scribe texts to
requests with ``purpose`` "scribe" or "summary".
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections import deque
from pathlib import Path
from typing import Any, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..messages import message
from .types import ChatRequest, ChatResponse, DeltaKind, ModelError, OnDelta, StreamDelta, ToolCall, Usage
from .usage import parse_usage


class RecordedToolCall(BaseModel):
    """A recorded tool call; ``arguments`` may be an object or raw JSON text; ``id`` is optional."""

    model_config = ConfigDict(extra="forbid")

    id: Optional[str] = None
    name: str
    arguments: Any = Field(default_factory=dict)


class RecordedCall(BaseModel):
    """One recorded actor answer. ``usage`` is an OpenAI-style usage object (or a dumped Usage)."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = ""
    content: str = ""
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    usage: Optional[dict[str, Any]] = None
    finish_reason: Optional[str] = None
    model: str = ""


class ReplayBeat(BaseModel):
    """One recorded beat: what the user typed, the actor calls, the scribe raw outputs, answers to ``ask``."""

    model_config = ConfigDict(extra="forbid")

    user: str = ""
    actor: list[RecordedCall] = Field(default_factory=list)
    scribe: list[str] = Field(default_factory=list)
    ask_answers: list[str] = Field(default_factory=list)


class ReplayFile(BaseModel):
    """The whole replay file."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["liyuan-replay"]
    version: Literal[1]
    label: str = ""
    beats: list[ReplayBeat] = Field(default_factory=list)


RecordedItem = Union[ChatResponse, RecordedCall, dict[str, Any], str]


def _to_response(item: RecordedItem) -> ChatResponse:
    """A recorded item as a fresh ChatResponse (tool-call ids may still be empty)."""
    if isinstance(item, ChatResponse):
        return item.model_copy(deep=True)
    if isinstance(item, str):
        return ChatResponse(content=item, finish_reason="stop")
    call = item if isinstance(item, RecordedCall) else RecordedCall.model_validate(item)
    calls = []
    for tc in call.tool_calls:
        args = tc.arguments if isinstance(tc.arguments, str) else json.dumps(tc.arguments, ensure_ascii=False)
        calls.append(ToolCall(id=tc.id or "", name=tc.name, arguments=args))
    usage = parse_usage(call.usage) if call.usage else Usage()
    return ChatResponse(
        content=call.content,
        reasoning=call.reasoning,
        tool_calls=calls,
        usage=usage,
        finish_reason=call.finish_reason or ("tool_calls" if calls else "stop"),
        model=call.model or "replay",
    )


def _pieces(text: str, count: int = 4, min_size: int = 8) -> list[str]:
    """Split ``text`` into at most ``count`` pieces of at least ``min_size`` chars (the last may be shorter)."""
    if not text:
        return []
    size = max(min_size, math.ceil(len(text) / count))
    return [text[i:i + size] for i in range(0, len(text), size)]


def _describe_validation(exc: ValidationError) -> list[Any]:
    """The first five of pydantic's complaints as ``"<where>: <pydantic's message>"`` items (a list, shown joined with
    the reader's list separator; the root is the catalog's ``mvu.root``), then "… n more" when there are more."""
    parts: list[Any] = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg', '')}" if loc else message("replay.file.root", msg=err.get("msg", "")))
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(message("replay.file.more", n=more))
    return parts


class ReplayModel:
    """A :class:`~liyuan_desktop.core.llm.types.ChatModel` that answers from recorded responses, offline.

    Args:
        actor: recorded answers for ``purpose == "actor"`` requests, in order: ChatResponse objects or dicts in
            the replay-file call shape (``reasoning``, ``content``, ``tool_calls``, ``usage``).
        scribe: recorded answers for "scribe" and "summary" requests (same shapes, or plain strings = content).
        label: shown in ``name``.
        delay_ms: pause before each streamed piece, in milliseconds (0 = none, only yields to the loop).
        beats: the parsed beats when built from a file (``from_file`` fills it).

    Tool calls without an id get ``replay_<n>`` (n counts from 1 over the whole script).
    ``complete()`` raises ``ModelError("replay_exhausted", …)`` when its queue is empty.
    """

    is_replay: bool = True

    def __init__(
        self,
        actor: Sequence[RecordedItem],
        scribe: Sequence[RecordedItem] = (),
        label: str = "",
        *,
        delay_ms: int = 0,
        beats: Optional[list[ReplayBeat]] = None,
    ):
        self.label = label
        self.name: str = message("llm.replay_named", label=label) if label else message("llm.replay_name")
        self.delay_ms = max(int(delay_ms), 0)
        self.beats: list[ReplayBeat] = list(beats or [])
        self._next_id = 0
        self._queues: dict[str, deque[ChatResponse]] = {
            "actor": deque(self._prepare(actor)),
            "scribe": deque(self._prepare(scribe)),
        }
        self._played: dict[str, int] = {"actor": 0, "scribe": 0}
        self._total: dict[str, int] = {k: len(q) for k, q in self._queues.items()}

    def __repr__(self) -> str:
        return f"ReplayModel(label={self.label!r}, remaining={self.remaining()})"

    def _prepare(self, items: Sequence[RecordedItem]) -> list[ChatResponse]:
        out = []
        for item in items:
            response = _to_response(item)
            for call in response.tool_calls:
                self._next_id += 1
                if not call.id:
                    call.id = f"replay_{self._next_id}"
            out.append(response)
        return out

    @staticmethod
    def _queue_name(purpose: str) -> str:
        return "actor" if purpose == "actor" else "scribe"

    def remaining(self) -> dict[str, int]:
        """How many recorded answers are left per queue: ``{"actor": n, "scribe": m}``."""
        return {name: len(q) for name, q in self._queues.items()}

    @classmethod
    def from_file(cls, path: Union[str, Path], *, delay_ms: int = 0) -> "ReplayModel":
        """Load a ``liyuan-replay`` version 1 file.

        Raises ``ValueError`` naming the file for anything wrong with it: unreadable, not UTF-8, not JSON,
        wrong format/version, or a field of the wrong shape.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(message("replay.file.cannot_read", path=str(path), error=str(exc))) from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(message("replay.file.bad_json", path=str(path), error=str(exc))) from exc
        if not isinstance(data, dict) or data.get("format") != "liyuan-replay":
            raise ValueError(message("replay.file.not_replay", path=str(path)))
        try:
            parsed = ReplayFile.model_validate(data)
        except ValidationError as exc:
            raise ValueError(message("replay.file.bad_shape", path=str(path), error=_describe_validation(exc))) from exc
        actor: list[RecordedItem] = [call for beat in parsed.beats for call in beat.actor]
        scribe: list[RecordedItem] = [raw for beat in parsed.beats for raw in beat.scribe]
        return cls(actor, scribe, parsed.label, delay_ms=delay_ms, beats=parsed.beats)

    async def _emit(self, on_delta: Optional[OnDelta], kind: DeltaKind, text: str, index: int = 0) -> None:
        if self.delay_ms:
            await asyncio.sleep(self.delay_ms / 1000.0)
        else:
            await asyncio.sleep(0)  # let the UI and cancellation in between pieces
        if on_delta is None:
            return
        result = on_delta(StreamDelta(kind=kind, text=text, index=index))
        if inspect.isawaitable(result):
            await result

    async def complete(self, request: ChatRequest, on_delta: Optional[OnDelta] = None) -> ChatResponse:
        """Return the next recorded answer for ``request.purpose``, streaming it to ``on_delta`` in pieces
        (reasoning, then content, then each tool call's name and arguments).

        Raises ``ModelError("replay_exhausted", …)`` when no recorded answer is left for that purpose.
        """
        queue_name = self._queue_name(request.purpose)
        queue = self._queues[queue_name]
        if not queue:
            what = message("llm.err.replay.actor" if queue_name == "actor" else "llm.err.replay.scribe")
            raise ModelError("replay_exhausted", message("llm.err.replay_exhausted", what=what,
                                                         total=self._total[queue_name],
                                                         n=self._played[queue_name] + 1))
        response = queue.popleft()
        self._played[queue_name] += 1
        for piece in _pieces(response.reasoning):
            await self._emit(on_delta, "reasoning", piece)
        for piece in _pieces(response.content):
            await self._emit(on_delta, "content", piece)
        for index, call in enumerate(response.tool_calls):
            if call.name:
                await self._emit(on_delta, "tool_name", call.name, index)
            for piece in _pieces(call.arguments):
                await self._emit(on_delta, "tool_args", piece, index)
        return response.model_copy(deep=True)
