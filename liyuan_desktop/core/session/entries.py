"""The entries of a session file, one pydantic model per ``type`` (header, opening, user, assistant, beat, revision,
rp-state, ask, summary, leaf, chat-settings; anything else is kept as :class:`OtherEntry`). Every entry has ``id``, ``parent_id``,
``type`` and ``ts`` (ms since the epoch); unknown fields are kept (``extra="allow"``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_serializer, field_validator

from ..deferred import DeferredModel
from ..messages import Msg, MsgText
from ..paths import home


def now_ms() -> int:
    """Wall clock in milliseconds since the epoch."""
    return int(time.time() * 1000)


class _Base(DeferredModel):
    model_config = ConfigDict(extra="allow")

    id: str
    parent_id: Optional[str] = None
    ts: int = Field(default_factory=now_ms)


def stored_card_path(path: str) -> str:
    """How a card's file path is written in a session header: relative to the data folder (``/``-separated, e.g.
    ``cards/青梧/card.json``) when the card lives there, else ``~/…`` when it is under the user's home folder,
    else as given. A session file shared with someone (or a bug report) thus does not carry the absolute path and
    the OS user name in it (issue 15 item 13)."""
    if not path or not os.path.isabs(path):
        return path
    p = Path(path)
    for base, prefix in ((home(), ""), (Path.home(), "~/")):
        try:
            return prefix + p.relative_to(base).as_posix()
        except ValueError:
            continue
    return path


def card_path_from_store(stored: str) -> str:
    """The absolute path of a header's ``card`` as :func:`stored_card_path` wrote it: ``~/…`` expanded, a relative
    path joined to the data folder when that file exists there; an absolute path (older files) or anything else
    (a bare name) as is."""
    if not stored or os.path.isabs(stored):
        return stored
    if stored.startswith("~/"):
        return str(Path(stored).expanduser())
    full = home() / stored
    return str(full) if full.exists() else stored


class HeaderEntry(_Base):
    """Root of the tree. ``mode`` is fixed at creation (seed 000, 写长篇: 建好不能切换). ``card`` is the card file's
    absolute path in memory and relative to the data folder on disk (:func:`stored_card_path`)."""

    type: Literal["header"] = "header"
    format: str = "liyuan-session"
    version: int = 1
    mode: Literal["roleplay", "agent"] = "roleplay"
    card: str = ""
    card_name: str = ""
    persona: str = ""
    title: str = ""

    @field_validator("card", mode="after")
    @classmethod
    def _card_absolute(cls, value: str) -> str:
        return card_path_from_store(value)

    @field_serializer("card")
    def _card_relative(self, value: str) -> str:
        return stored_card_path(value)


class OpeningEntry(_Base):
    """The card's opening (first_mes), as shown and as sent (with its 【开场 · name】 header)."""

    type: Literal["opening"] = "opening"
    text: str


class UserEntry(_Base):
    """The user's words of one beat, exactly as typed."""

    type: Literal["user"] = "user"
    text: str


class AssistantEntry(_Base):
    """The final (定稿) of a beat. ``sealed`` is False for a beat that ended without 收笔 and was kept anyway."""

    type: Literal["assistant"] = "assistant"
    text: str
    sealed: bool = True
    beat: Optional[str] = None


class ToolCallLog(DeferredModel):
    """One tool call of a model call: raw arguments as streamed, the parsed result the model got back."""

    id: str = ""
    name: str
    arguments: str = ""
    result: Any = None
    ok: bool = True
    mode: str = ""
    ms: float = 0.0


class CallLog(DeferredModel):
    """One model call of a beat: what came back (reasoning, text, tool calls with results) and usage."""

    round: int
    reasoning: str = ""
    content: str = ""
    tool_calls: list[ToolCallLog] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    finish_reason: Optional[str] = None
    #: the model's name; the replay model's is a catalog message (``llm.replay_named``), kept on disk as
    #: ``{"$msg": {key, params}}`` so the inspector shows it in the reader's language (issue 32)
    model: MsgText = ""
    ms: float = 0.0
    error: Optional[str] = None

    @field_validator("model", mode="before")
    @classmethod
    def _model_in(cls, value: Any) -> Any:
        return MessageRef._in(value)

    @field_serializer("model", when_used="json")
    def _model_out(self, value: str) -> Any:
        return MessageRef._out(value)


class MessageRef(BaseModel):
    """A catalog message (``core/messages.Msg``) as a session file keeps it: its ``key`` and ``params`` — a nested
    message parameter as ``{"$msg": {key, params}}``, a list item by item — so a reopened chat renders it in the
    reader's language without matching its text back to a key (issue 32)."""

    key: str
    params: dict[str, Any] = Field(default_factory=dict)

    @staticmethod
    def _out(value: Any) -> Any:
        if isinstance(value, Msg):
            return {"$msg": MessageRef.of(value).model_dump()}
        if isinstance(value, (list, tuple)):
            return [MessageRef._out(v) for v in value]
        return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)

    @staticmethod
    def _in(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"$msg"} and isinstance(value["$msg"], dict):
            return MessageRef.model_validate(value["$msg"]).to_msg()
        if isinstance(value, list):
            return [MessageRef._in(v) for v in value]
        return value

    @classmethod
    def of(cls, m: Msg) -> "MessageRef":
        """The stored form of ``m``."""
        return cls(key=m.key, params={k: cls._out(v) for k, v in m.params.items()})

    def to_msg(self) -> Msg:
        """The message again (its Chinese text as it was, renderable in any language)."""
        return Msg(self.key, **{k: self._in(v) for k, v in self.params.items()})


def _messages_in(value: Any) -> Any:
    """A stored list of activity lines: ``{key, params}`` objects become messages again; plain strings (sessions
    written before issue 32, or lines that never had a key) stay as they are."""
    if not isinstance(value, list):
        return value
    return [MessageRef.model_validate(v).to_msg() if isinstance(v, dict) else v for v in value]


def _messages_out(value: list[str]) -> list[Any]:
    """Lines as a session file keeps them: a message as ``{key, params}``, plain text as it is."""
    return [MessageRef.of(v).model_dump() if isinstance(v, Msg) else v for v in value]


class BeatEntry(_Base):
    """The log of one beat (every model call). ``outcome``: sealed | unsealed | revised_previous | stopped |
    out_of_rounds | error. ``draft`` and ``draft_version`` keep the draft as it stood at the end (nothing lost)."""

    type: Literal["beat"] = "beat"
    calls: list[CallLog] = Field(default_factory=list)
    outcome: str = "sealed"
    draft: str = ""
    draft_version: int = 0
    injection: str = ""
    activated: list[str] = Field(default_factory=list)
    #: the beat's activity lines: catalog messages (kept on disk as ``{key, params}``, :class:`MessageRef`) or, in
    #: sessions written before, plain text read as it is
    activity: list[MsgText] = Field(default_factory=list)
    warnings: list[MsgText] = Field(default_factory=list)  # like ``activity``
    error: Optional[str] = None
    #: The first call's messages as sent, encoded against the branch history (core.prompt.inspect.encode_sent): runs
    #: of history messages are stored as index ranges, everything else in full; with ``tools`` (names) and the system
    #: prompt's sha256, the prompt inspector rebuilds every call of the beat exactly.
    sent: Optional[dict[str, Any]] = None

    @field_validator("activity", "warnings", mode="before")
    @classmethod
    def _activity_in(cls, value: Any) -> Any:
        return _messages_in(value)

    @field_serializer("activity", "warnings")
    def _activity_out(self, value: list[str]) -> list[Any]:
        return _messages_out(value)


class RevisionEntry(_Base):
    """A previous-beat edit (previous_draft_edit): ``target`` is the assistant entry, ``text`` its new text."""

    type: Literal["revision"] = "revision"
    target: str
    text: str
    version: int


class StateEntry(_Base):
    """A ledger snapshot (rp-state): the whole WorldState as a dict, written by the scribe or the user."""

    type: Literal["rp-state"] = "rp-state"
    state: dict[str, Any]
    source: Literal["scribe", "user", "init"] = "scribe"
    #: the scribe's applied lines and warnings: catalog messages whose Chinese text is the seed's wording (kept on
    #: disk as ``{key, params}``, :class:`MessageRef`; the scribe's next prompt reads the same Chinese text), or
    #: plain text in sessions written before
    applied: list[MsgText] = Field(default_factory=list)
    warnings: list[MsgText] = Field(default_factory=list)
    raw: Optional[str] = None
    #: the scribe call's model name (like :attr:`CallLog.model`: the replay model's is a catalog message)
    scribe_model: Optional[MsgText] = None

    @field_validator("scribe_model", mode="before")
    @classmethod
    def _scribe_model_in(cls, value: Any) -> Any:
        return MessageRef._in(value)

    @field_serializer("scribe_model", when_used="json")
    def _scribe_model_out(self, value: Optional[str]) -> Any:
        return MessageRef._out(value)

    @field_validator("applied", "warnings", mode="before")
    @classmethod
    def _lines_in(cls, value: Any) -> Any:
        return _messages_in(value)

    @field_serializer("applied", "warnings")
    def _lines_out(self, value: list[str]) -> list[Any]:
        return _messages_out(value)


class AskEntry(_Base):
    """An ask: the model's question, 2-4 options, the answer (an option or free text) and who gave it
    (``by``: user | stop | auto)."""

    type: Literal["ask"] = "ask"
    question: str
    options: list[str]
    answer: Optional[str] = None
    by: str = "user"


class SummaryEntry(_Base):
    """A relay summary (前情提要) of older beats on this branch (issue 7, compaction; seed 000: 收笔之后……再判断要不要压缩).

    ``upto`` is the id of the last tree entry the summary covers (everything on the path up to and including it is
    replaced in the prompt by the summaries); ``beats`` the covered beat numbers ``[first, last]`` (1-based, 0 = the
    opening). ``layer`` 1 summarises beats, 2 summarises layer-1 summaries, 3 layer-2 ones (at most three layers);
    ``merges`` lists the ids of the summaries a layer-2/3 summary replaces. A user edit is a new entry with
    ``edit_of`` = the edited summary's id and ``source="user"`` (nothing is rewritten)."""

    type: Literal["summary"] = "summary"
    text: str
    upto: str
    beats: list[int] = Field(default_factory=list)
    layer: int = 1
    merges: list[str] = Field(default_factory=list)
    edit_of: Optional[str] = None
    source: Literal["scribe", "user"] = "scribe"
    tokens: int = 0


class LeafEntry(_Base):
    """Moves the active leaf. Not part of the tree itself (never a parent)."""

    type: Literal["leaf"] = "leaf"
    target: str


class ChatSettingsEntry(_Base):
    """A change of the chat's own settings, outside every branch (``parent_id`` None, never a parent, never the
    leaf): the newest one that carries a field wins for the whole chat (swipes, undo and branch switches do not
    undo it). ``preset``: the preset library name used from now on ("" = no preset); ``sampling``: the chat's
    sampling overrides (``llm.sampling.Sampling`` as JSON, {} = none); ``world_info``: the chat's world-info
    overrides (SillyTavern names → values, ``lore.settings.WorldInfoSettings``; {} = the app's settings);
    ``authors_note``: the chat's Author's Note (``prompt.authors_note.AuthorsNote`` as JSON, {} = none). A field
    left out is unchanged."""

    type: Literal["chat-settings"] = "chat-settings"
    preset: Optional[str] = None
    sampling: Optional[dict[str, Any]] = None
    world_info: Optional[dict[str, Any]] = None
    authors_note: Optional[dict[str, Any]] = None


class OtherEntry(_Base):
    """Any entry type this version does not know (kept as read, so newer files still load)."""

    type: str


Entry = Union[
    HeaderEntry, OpeningEntry, UserEntry, AssistantEntry, BeatEntry, RevisionEntry, StateEntry, AskEntry, SummaryEntry,
    LeafEntry, ChatSettingsEntry
]
ENTRY_TYPES: dict[str, type[BaseModel]] = {
    "header": HeaderEntry, "opening": OpeningEntry, "user": UserEntry, "assistant": AssistantEntry,
    "beat": BeatEntry, "revision": RevisionEntry, "rp-state": StateEntry, "ask": AskEntry, "summary": SummaryEntry,
    "leaf": LeafEntry, "chat-settings": ChatSettingsEntry,
}
# built on the first entry validated, like the entry models (core.deferred; issue 15: start-up)
ENTRY_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[Entry, Field(discriminator="type")],
                                         config=ConfigDict(defer_build=True))

