"""The session: a chat's append-only JSONL tree of entries — :mod:`.entries` (the entry models), :mod:`.lazy`
(beat and snapshot lines kept unparsed until read), :mod:`.tree` (:class:`SessionTree`: load, repair, append,
commit, walk a branch)."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

# issue 15: a name's module is imported when the name is first read (importing one submodule no longer
# imports them all, and what they import)
__getattr__, __dir__ = lazy_exports(__name__, {
    "AssistantEntry": ".entries",
    "BeatEntry": ".entries",
    "CallLog": ".entries",
    "HeaderEntry": ".entries",
    "StateEntry": ".entries",
    "ToolCallLog": ".entries",
    "UserEntry": ".entries",
    "SessionError": ".tree",
    "SessionTree": ".tree",
    "new_id": ".tree",
})

if TYPE_CHECKING:
    from .entries import AssistantEntry, BeatEntry, CallLog, HeaderEntry, StateEntry, ToolCallLog, UserEntry
    from .tree import SessionError, SessionTree, new_id

__all__ = [
    "AssistantEntry", "BeatEntry", "CallLog", "HeaderEntry", "SessionError", "SessionTree", "StateEntry",
    "ToolCallLog", "UserEntry", "new_id",
]
