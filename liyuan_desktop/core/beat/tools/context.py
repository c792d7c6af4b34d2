"""What a tool handler gets besides its arguments: :class:`ToolContext`, one per beat.

The beat loop (:mod:`core.beat.loop`) builds it from its :class:`~core.beat.loop.BeatInput`; handlers read the beat's
inputs from it and report what they did to the beat through its outcome fields (``ended``, ``stopped``,
``revision``, ``asks``), which the loop reads after every call. Services only some tools need (the chapter folder
of agent mode, the memory search of a compacted branch) are None when the beat does not offer those tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

from ...ledger.state import WorldState
from ...lore import Lorebook
from ..draft import Draft
from ..events import AskAnswer, AskRequest

if TYPE_CHECKING:
    from ...story.workspace import StoryFolder
    from ..loop import PreviousBeat

#: Asks the user one question and waits for the answer (the UI's ask box; Stop answers ``by="stop"``).
AskHandler = Callable[[AskRequest], Awaitable[AskAnswer]]
#: memory_search over the active branch: (query, limit) → ``[{"beat", "kind", "snippet", "score"}]``, best first.
MemorySearch = Callable[[str, int], list[dict[str, Any]]]


def _ignore(_event: Any) -> None:
    return None


@dataclass
class ToolContext:
    """The beat as the tools see it.

    Inputs: ``draft`` (this beat's draft, mutated by the draft tools), ``previous`` (the previous sealed beat for
    previous_draft_read/edit, None on a first beat), ``state`` (the branch's world state, read-only), ``book`` (the
    world book), ``ask`` (None: an ask is answered as Stop), ``macros`` (text → text with the chat's macros applied;
    None: text as is), ``emit`` (sends an engine event to the UI; never raises), ``story`` (agent mode's chapter
    folder), ``memory_search`` and ``language`` (the chat's).

    Outcome, set by the handlers: ``ended`` (the beat is over — sealed, previous beat revised, or Stop in an ask:
    later calls of the same response are not run), ``stopped`` (the user pressed Stop), ``revision`` ((assistant id,
    new text, new version) after previous_draft_edit) and ``asks`` (every question with its answer, in order)."""

    draft: Draft = field(default_factory=Draft)
    previous: Optional[PreviousBeat] = None
    state: WorldState = field(default_factory=WorldState)
    book: Lorebook = field(default_factory=Lorebook)
    ask: Optional[AskHandler] = None
    macros: Optional[Callable[[str], str]] = None
    emit: Callable[[Any], None] = _ignore
    story: Optional[StoryFolder] = None
    memory_search: Optional[MemorySearch] = None
    #: The chat's language (issue 32): tool results and notes are written in it ("zh" or "en",
    #: :func:`.registry.spec_language`).
    language: str = "zh"
    ended: bool = False
    stopped: bool = False
    revision: Optional[tuple[str, str, int]] = None
    asks: list[tuple[AskRequest, AskAnswer]] = field(default_factory=list)
