"""Shapes shared by every model the engine can talk to (real HTTP client, replay model).

All models are pydantic so a call can be logged on the session tree exactly as sent and received.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Optional, Protocol

from pydantic import BaseModel, Field, model_serializer

from ..messages import MsgText
from .sampling import Sampling


class ToolCall(BaseModel):
    """One tool call as the model produced it.

    ``arguments`` is the raw JSON text the model streamed (it may be malformed: the beat loop, not the client,
    turns bad JSON into a tool error the model can act on).
    """

    id: str
    name: str
    arguments: str = ""


class Usage(BaseModel):
    """Token usage of one call. ``cached_tokens`` is read from ``prompt_tokens_details.cached_tokens`` (OpenAI)
    or ``prompt_cache_hit_tokens`` (DeepSeek), whichever the server sent. ``raw`` keeps the server's object.
    ``estimated``: the server reported no usage (many local servers stream none), so the counts are our estimate
    (:func:`.usage.estimate_usage`); front ends show them as「约」/ "~". Left out of the dump when False, so
    usage saved before this flag existed reads the same."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    raw: dict[str, Any] = Field(default_factory=dict)
    estimated: bool = False

    @model_serializer(mode="wrap")
    def _drop_unestimated(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.estimated:
            data.pop("estimated", None)
        return data


class ChatMessage(BaseModel):
    """An OpenAI chat message. ``tool_calls`` only on assistant messages, ``tool_call_id`` only on tool messages."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: Optional[list[ToolCall]] = None
    tool_call_id: Optional[str] = None
    reasoning_content: Optional[str] = None

    def to_openai(self) -> dict[str, Any]:
        """The wire form of the chat completions API (arguments stay raw strings)."""
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        return d


class ChatRequest(BaseModel):
    """One model call. ``tools`` are OpenAI function specs (``{"type":"function","function":{...}}``).
    ``purpose`` is "actor" for beat calls and "scribe" for the ledger call (the replay model keeps them apart).
    ``sampling``: the chat's sampling settings (:mod:`.sampling`; they win over ``max_tokens``/``temperature``),
    applied by the HTTP client as the provider accepts them; None = only the fields above. ``fresh``: the call
    writes new prose and has nothing of its own to quote yet (a role-play beat's call while its draft is empty,
    ``beat.loop``): a local llama.cpp server then gets the DRY sampler unless the sampling sets it
    (:func:`.sampling.local_dry`, issue 30 §1); calls that may quote text verbatim (draft or chapter edits, the
    scribe's patch) never do."""

    messages: list[ChatMessage]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    max_tokens: Optional[int] = None
    temperature: Optional[float] = None
    thinking: bool = True
    purpose: Literal["actor", "scribe", "summary"] = "actor"
    sampling: Optional[Sampling] = None
    fresh: bool = False


class ChatResponse(BaseModel):
    """What one call returned, assembled from the stream.

    ``finish_reason`` is the server's value ("stop", "tool_calls", "length") or "cut" when the stream ended early
    (connection dropped, no [DONE]); in that case ``content``/``tool_calls`` hold what had arrived."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: Optional[str] = None
    model: str = ""


#: What a streamed piece is (:class:`StreamDelta` ``kind``).
DeltaKind = Literal["content", "reasoning", "tool_args", "tool_name", "notice"]


class StreamDelta(BaseModel):
    """A streamed piece, for live display: kind is "content", "reasoning", "tool_args"/"tool_name" (with the call
    index), or "notice" (a line for the user, e.g. a retry after a failed connection)."""

    kind: DeltaKind
    text: MsgText  # a "notice" is a catalog message (core/messages.py) kept with its key
    index: int = 0


OnDelta = Callable[[StreamDelta], Any]


class ModelError(Exception):
    """A model call failed in a way the user must be told about.

    ``kind``: "auth" (401/403), "not_found" (404: wrong base URL or model), "rate_limit", "server", "network",
    "bad_response" (not JSON / not the chat completions shape), "config" (the server rejects the request's shape —
    tools without llama.cpp's ``--jinja``, a model without tool support, an unknown field: never retried, ``hint``
    names the fix), "context" (the prompt does not fit the server's window: never retried, ``server_window`` is the
    window the server stated, or None), "empty" (the server answered with no text and no tool call at all),
    "cancelled", "replay_exhausted".
    ``message`` (also the first argument) is the text fit for the UI and CLI: for the HTTP client's errors a catalog
    :class:`~..messages.Msg` (``llm.err.*``; its ``str`` is the Chinese text, ``messages.render(error, lang)`` gives
    the user's language — issue 32); it never contains the API key in any language. ``hint``: the fix in
    one line (also inside ``message``; a Msg too), "" when there is none. ``config``: for kind "config", what was rejected —
    "jinja", "tools" or "argument" (the beat side switches to prose-only play on "jinja"/"tools")."""

    def __init__(self, kind: str, message: str, *, status: Optional[int] = None, partial: Optional[ChatResponse] = None,
                 hint: str = "", server_window: Optional[int] = None, config: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.partial = partial
        self.hint = hint
        self.server_window = server_window
        self.config = config


class ChatModel(Protocol):
    """Anything the beat loop can call. ``name`` is shown to the user (a replay model says it is a replay)."""

    name: str
    is_replay: bool

    async def complete(self, request: ChatRequest, on_delta: Optional[OnDelta] = None) -> ChatResponse:
        """Run one call. Raises ModelError; ``asyncio.CancelledError`` propagates on Stop."""
        ...
