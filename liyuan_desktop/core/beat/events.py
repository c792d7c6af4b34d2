"""Typed events the engine emits while a beat runs. The UI and the CLI render them; neither computes engine state.

Every event has a ``kind``. Handlers are plain callables ``on_event(event)``; an exception in a handler is logged
and never breaks the beat.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..messages import MsgText


class BeatStarted(DeferredModel):
    """A beat began: its number on the branch (``beat``, 1-based), the user's words, the injection block sent with
    them and the world-info titles it ``activated``, the actor model's name, whether it is a replay, ``how`` it was
    started and, in ``lore``, why each world-info entry fired (one line each)."""

    kind: Literal["beat_started"] = "beat_started"
    beat: int
    user: str
    injection: str
    activated: list[str]
    model: str
    is_replay: bool
    how: Literal["send", "regenerate", "continue", "edit"] = "send"  # edit: a past user message, new branch
    lore: list[MsgText] = Field(default_factory=list)  # which world-info entries fired and why (catalog messages)


class CallStarted(DeferredModel):
    """A model call of the beat began: ``round`` (1-based) of at most ``max_rounds``."""

    kind: Literal["call_started"] = "call_started"
    round: int
    max_rounds: int


class ModelDelta(DeferredModel):
    """Streamed text: ``channel`` is "content", "reasoning", "tool_args" or "tool_name"."""

    kind: Literal["delta"] = "delta"
    round: int
    channel: str
    text: MsgText  # a "notice" is a catalog message kept with its key
    index: int = 0


class CallFinished(DeferredModel):
    """A model call ended. ``usage``: prompt/completion/cached tokens; ``tools``: names of the calls it made."""

    kind: Literal["call_finished"] = "call_finished"
    round: int
    tools: list[str]
    usage: dict[str, Any] = Field(default_factory=dict)
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: Optional[str] = None
    ms: float = 0.0


class ToolStarted(DeferredModel):
    """The model called a tool: its ``name``, the call's id and its raw JSON ``arguments`` as the model sent them
    (parsed and validated only when the tool runs). ``from_text``: the model wrote the call in its reply's text
    and the engine recovered it (:mod:`core.beat.text_calls`)."""

    kind: Literal["tool_started"] = "tool_started"
    round: int
    call_id: str
    name: str
    arguments: str
    from_text: bool = False


class ToolFinished(DeferredModel):
    """A tool ran. ``summary`` is one human line (e.g. lorebook hit titles, an edit's match level)."""

    kind: Literal["tool_finished"] = "tool_finished"
    round: int
    call_id: str
    name: str
    ok: bool
    result: Any
    summary: MsgText = ""


class DraftChanged(DeferredModel):
    """The draft after a write. ``chars`` in UTF-16 units."""

    kind: Literal["draft_changed"] = "draft_changed"
    text: str
    version: int
    chars: int
    sealed: bool = False
    by: str = "model"


class Activity(DeferredModel):
    """A notice for the user, e.g. 「直出正文已代收为 draft_write」."""

    kind: Literal["activity"] = "activity"
    text: MsgText  # a catalog message (core/messages.Msg) kept with its key
    level: Literal["info", "warning", "error"] = "info"


class AskRequest(DeferredModel):
    """The model asks the user to choose. Answered by the ask handler with an :class:`AskAnswer`."""

    kind: Literal["ask"] = "ask"
    question: str
    options: list[str]


class AskAnswer(DeferredModel):
    """The user's answer: an option text or free text (``by="user"``), or Stop (``by="stop"``, answer None)."""

    answer: Optional[str] = None
    by: Literal["user", "stop", "auto"] = "user"


class Revised(DeferredModel):
    """The previous reply was revised in place (previous_draft_edit): ``target`` is the reply's entry id, ``text`` its
    new text and ``version`` the new version."""

    kind: Literal["revised"] = "revised"
    target: str
    text: str
    version: int


class ScribeFinished(DeferredModel):
    """The scribe's result: applied lines, warnings, the formatted ledger and roster; ``error`` when it failed."""

    kind: Literal["scribe_finished"] = "scribe_finished"
    applied: list[MsgText] = Field(default_factory=list)
    warnings: list[MsgText] = Field(default_factory=list)
    state: str = ""
    roster: str = ""
    error: Optional[MsgText] = None


class Compacted(DeferredModel):
    """Older beats were summarised into 【前情提要】 (issue 7): ``beats`` [first, last] covered, the summary's
    ``layer``, token estimates of the next prompt before/after (calibrated, tokens); ``error`` when the summary call
    failed (nothing was cut then; the next sealed beat tries again)."""

    kind: Literal["compacted"] = "compacted"
    beats: list[int] = Field(default_factory=list)
    layer: int = 1
    before: int = 0
    after: int = 0
    error: Optional[MsgText] = None


class BeatFinished(DeferredModel):
    """The beat ended: ``outcome`` (sealed | revised_previous | unsealed | stopped | out_of_rounds | error, as
    :class:`core.beat.loop.BeatOutput`), the ``final`` text, whether it was ``sealed`` and a line for the user."""

    kind: Literal["beat_finished"] = "beat_finished"
    outcome: str
    final: str
    sealed: bool
    message: MsgText = ""
