"""The chat facade (:class:`Chat`) and what its commands return; the parts live beside it (context, turn,
pipeline, agent, ledger, results)."""

from .facade import Chat
from .results import BeatResult, BeatSaveError, SessionWriteError

__all__ = ["BeatResult", "BeatSaveError", "Chat", "SessionWriteError"]
