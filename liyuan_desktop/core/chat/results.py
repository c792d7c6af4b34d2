"""What a chat command hands back: :class:`BeatResult`, the two write failures, and the token accounting of a beat.

``BeatResult`` is what the CLI's ``--json`` prints (``sent``, ``scribe`` and ``output`` are excluded from it).
:class:`BeatSaveError` means the beat ran but the session file refused it (the lines stay pending in the tree;
``Chat.retry_save`` then ``Chat.finish_pending``); :class:`SessionWriteError` means nothing was played.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, Field, SkipValidation

from ..ledger.scribe import ScribeOutcome
from ..ledger.state import WorldState
from ..llm.types import ChatMessage
from ..messages import MsgText, message


class BeatResult(BaseModel):
    """One beat as the CLI's ``--json`` prints it, plus ids for the UI. ``state``/``roster`` are the formatted
    【世界状态】/【登场名录】 texts after the beat; ``calls`` lists the tool names of each model call."""

    user: str
    injection: str
    activated: list[str] = Field(default_factory=list)
    calls: list[list[str]] = Field(default_factory=list)
    final: str = ""
    sealed: bool = False
    revised_previous: bool = False
    outcome: str = ""
    state: str = ""
    roster: str = ""
    #: the ledger those texts were made from (not printed: the CLI's view says it in the reader's language)
    ledger: Optional[WorldState] = Field(default=None, exclude=True)
    warnings: list[MsgText] = Field(default_factory=list)
    activity: list[MsgText] = Field(default_factory=list)  # catalog messages kept with their keys
    error: Optional[MsgText] = None  # a catalog message keeps its key (the CLI's --json says it in the reader's language)
    #: the first call's messages (the engine's own objects: not validated again — O(chat length) per beat)
    sent: SkipValidation[list[ChatMessage]] = Field(default_factory=list, exclude=True)
    scribe: Optional[ScribeOutcome] = Field(default=None, exclude=True)
    output: Any = Field(default=None, exclude=True)
    revised_text: Optional[str] = None
    checkpoint: Optional[dict[str, Any]] = None
    #: token accounting of the beat (issue 7): ``{"prompt", "cached", "completion"}`` summed over the beat's model
    #: calls (server usage), ``"cache_hit_share"`` = cached / prompt (None without usage), ``"context"`` =
    #: ``Chat.context_usage()`` after the beat (the next prompt's estimate against the window)
    tokens: dict[str, Any] = Field(default_factory=dict)

    @property
    def messages_sent(self) -> list[dict[str, Any]]:
        """The first call's messages in wire form (``{"role", "content"}`` …), system first."""
        return [m.to_openai() for m in self.sent]


class BeatSaveError(OSError):
    """The beat ran but the session file refused the write (disk full, read-only…). ``result`` holds the beat;
    its lines stay pending in the tree, so ``Chat.retry_save`` can write them once the disk is fixed."""

    def __init__(self, result: BeatResult, cause: OSError, stage: str = "beat"):
        why = cause.strerror or str(cause)
        text = message("save.ledger_unwritten" if stage == "ledger" else "save.beat_unwritten", error=why)
        super().__init__(cause.errno, text)  # ``strerror`` is the catalog message (its key kept)
        self.result = result
        self.cause = cause
        #: "beat" (the reply itself is not on disk) or "ledger" (the reply is; the scribe's snapshot is not)
        self.stage = stage


class SessionWriteError(OSError):
    """The session file refused the write before a command did anything (the user's words could not be saved):
    nothing was played, memory was rolled back to what is on disk. The message is fit for the UI/CLI."""

    def __init__(self, cause: OSError):
        where = message("save.where", file=str(cause.filename)) if cause.filename else ""
        super().__init__(cause.errno, message("save.nothing_played", error=cause.strerror or str(cause), where=where))
        self.cause = cause


def call_tokens(calls: list[Any]) -> dict[str, Any]:
    """Server-reported usage summed over model calls (session.CallLog): ``{"prompt", "cached", "completion",
    "cache_hit_share"}`` in tokens; cached tokens are read from ``prompt_cache_hit_tokens`` (DeepSeek),
    ``prompt_tokens_details.cached_tokens`` (OpenAI) or ``cached_tokens``; the share is None without usage."""
    use = [c.usage or {} for c in calls]

    def total(*keys: str) -> int:
        n = 0
        for u in use:
            for k in keys:
                v = u.get(k)
                if isinstance(v, dict):
                    v = v.get("cached_tokens")
                if isinstance(v, (int, float)) and v:
                    n += int(v)
                    break
        return n

    prompt = total("prompt_tokens")
    cached = total("prompt_cache_hit_tokens", "prompt_tokens_details", "cached_tokens")
    return {"prompt": prompt, "cached": cached, "completion": total("completion_tokens"),
            "cache_hit_share": round(cached / prompt, 4) if prompt else None}
