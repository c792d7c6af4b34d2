"""The session: a chat's append-only JSONL tree of entries — :mod:`.entries` (the entry models), :mod:`.lazy`
(beat and snapshot lines kept unparsed until read), :mod:`.tree` (:class:`SessionTree`: load, repair, append,
commit, walk a branch)."""

from .entries import AssistantEntry, BeatEntry, CallLog, HeaderEntry, StateEntry, ToolCallLog, UserEntry
from .tree import SessionError, SessionTree, new_id

__all__ = [
    "AssistantEntry", "BeatEntry", "CallLog", "HeaderEntry", "SessionError", "SessionTree", "StateEntry",
    "ToolCallLog", "UserEntry", "new_id",
]
