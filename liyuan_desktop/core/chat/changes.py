"""Change notices: what one command changed, so every pane refreshes only what it shows (issue 25, "Change notices";
the shape follows Anki's ``OpChanges``).

A :class:`Changes` is immutable (a frozen pydantic model): one flag per area a pane lists, plus the ids of the
messages whose versions changed. The facade records the notice of its last command in ``Chat.last_changes``
(commands keep their return values — a reply id, a ``BeatResult``, a path — so callers that print them do not
change; the session reads ``last_changes`` right after the command and broadcasts it). Which command changes what
is declared once, beside the command, with :func:`notices`; :data:`COMMAND_CHANGES` gathers the declarations so a
test can run every command and compare its notice with what a fresh reload shows differently.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ConfigDict

#: the areas a notice names, in the order panes are usually repainted
AREAS = ("messages", "versions", "ledger", "branches", "files", "outline", "threads", "checkpoints", "summaries",
         "settings", "library")


class Changes(BaseModel):
    """What one command changed. Every flag False (``Changes()``) means nothing a pane shows changed.

    - ``messages``: the shown branch's transcript (a message added, removed, edited, another branch shown);
    - ``versions``: ids of messages whose versions (「◀ n/m ▶」) changed, as a tuple of entry ids;
    - ``ledger``: the ledger / variables (the state pane, status bars, panels);
    - ``branches``: the branch list; ``files``: chapter files; ``outline``; ``threads``; ``checkpoints``;
    - ``summaries``: memory summaries; ``settings``: the chat's options (preset, persona, sampling, world info, the
      card's switches, Author's Note); ``library``: cards, chats, books of the library.
    """

    model_config = ConfigDict(frozen=True)

    messages: bool = False
    versions: tuple[str, ...] = ()
    ledger: bool = False
    branches: bool = False
    files: bool = False
    outline: bool = False
    threads: bool = False
    checkpoints: bool = False
    summaries: bool = False
    settings: bool = False
    library: bool = False

    def __or__(self, other: "Changes") -> "Changes":
        """The union of two notices (a flag set in either; the version ids of both, in order, once)."""
        flags = {a: bool(getattr(self, a) or getattr(other, a)) for a in AREAS if a != "versions"}
        ids = tuple(dict.fromkeys(self.versions + other.versions))
        return Changes.model_validate({**flags, "versions": ids})

    def names(self) -> set[str]:
        """The areas this notice names (``versions`` when any id is listed)."""
        return {a for a in AREAS if getattr(self, a)}

    @classmethod
    def of(cls, *areas: str) -> "Changes":
        """A notice naming ``areas`` (names from :data:`AREAS`, ``versions`` excluded). ValueError for another."""
        bad = [a for a in areas if a not in AREAS or a == "versions"]
        if bad:
            raise ValueError(f"unknown change areas: {bad}")
        return cls.model_validate({a: True for a in areas})


#: everything a pane shows: what a beat or a whole restore may change (a beat may touch any of it)
EVERYTHING = Changes.of(*(a for a in AREAS if a not in ("versions", "library")))
NOTHING = Changes()
#: what a beat played on the shown branch may change: everything but the chat's options (the Author's Note in force
#: only changes when another branch is shown)
BEAT = Changes.of(*(a for a in EVERYTHING.names() if a != "settings"))
#: a library command (a card imported, a chat made, deleted or renamed, a book added): the card and chat lists
LIBRARY = Changes.of("library")

#: command name -> the notice it declares (filled by :func:`notices`)
COMMAND_CHANGES: dict[str, Changes] = {}

F = TypeVar("F", bound=Callable[..., Any])


def notices(changes: Changes) -> Callable[[F], F]:
    """Declare on a ``Chat`` command what it changes: the command's name joins :data:`COMMAND_CHANGES`, and the
    wrapper sets ``self.last_changes`` to ``changes`` before the command runs (a command called by another joins the
    outer one's notice, :func:`_begin`) — a command that raises leaves the notice of what it may have begun to
    change, which only makes panes repaint more, never less. Async commands are handled the same way."""

    def wrap(fn: F) -> F:
        COMMAND_CHANGES[fn.__name__] = changes

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                outer = _begin(self, changes)
                try:
                    return await fn(self, *args, **kwargs)
                finally:
                    self._notice_running = outer

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            outer = _begin(self, changes)
            try:
                return fn(self, *args, **kwargs)
            finally:
                self._notice_running = outer

        return run  # type: ignore[return-value]

    return wrap


def _begin(chat: Any, changes: Changes) -> bool:
    """Start a command's notice on ``chat``: the command's own when it is the outermost, else joined to the running
    command's (a beat compacts memory: its notice names the summaries too). Returns whether one was running."""
    outer = bool(getattr(chat, "_notice_running", False))
    chat.last_changes = chat.last_changes | changes if outer else changes
    chat._notice_running = True
    return outer
