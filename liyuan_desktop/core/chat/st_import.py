"""A SillyTavern chat file (``.jsonl``) imported as a new Liyuan chat: the file format is read by
:mod:`core.cards.st_chat` (the one place for that format); this module only turns the session it writes into an
open :class:`Chat`. It lives with the chat facade because it creates a chat (cards/ sits below chat/)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..cards import Card
from ..cards.st_chat import read_st_chat, write_session
from ..llm.types import ChatModel
from .facade import Chat


def import_st_chat(path: str | Path, card: Card, dest_dir: str | Path, model: ChatModel,
                   scribe_model: Optional[ChatModel] = None, title: str = "") -> Chat:
    """Import an ST chat file as a new Liyuan chat in ``dest_dir`` (e.g. ``paths.chat_dir(card.name, stem)``) and
    open it. The persona is the chat's ``user_name``. Warnings (skipped lines, repaired swipes, another card's chat)
    are in ``chat.load_warnings``. Raises :class:`StChatError` for a file that is not a chat, SessionError when
    ``dest_dir`` already holds a session, OSError when the disk refuses (nothing is left behind then)."""
    st = read_st_chat(path)
    d = Path(dest_dir)
    d.mkdir(parents=True, exist_ok=True)
    tree = write_session(st, d / "session.jsonl", card_name=card.name, card_path=card.path, title=title)
    chat = Chat.open(d, card, model, scribe_model)
    chat.tree.load_warnings.extend(tree.load_warnings)  # the import's own findings (skipped lines …)
    return chat
