"""The chat facade (:class:`Chat`) and what its commands return; the parts live beside it (context, turn,
pipeline, agent, ledger, results)."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

# issue 15: importing one part (``core.chat.manage``, ``core.chat.folder``…) no longer imports the facade and with it
# the whole engine; :class:`Chat` is imported when the name is first read
__getattr__, __dir__ = lazy_exports(__name__, {
    "Chat": ".facade",
    "BeatResult": ".results",
    "BeatSaveError": ".results",
    "SessionWriteError": ".results",
})

if TYPE_CHECKING:
    from .facade import Chat
    from .results import BeatResult, BeatSaveError, SessionWriteError

__all__ = ["BeatResult", "BeatSaveError", "Chat", "SessionWriteError"]
