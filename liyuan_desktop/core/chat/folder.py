"""Queries and commands on a chat *folder* that need no open :class:`Chat` (no card, no model): what its header
says, exporting its chapters, and SillyTavern chat files in and out. The window's chat list, the terminal commands and
:class:`Chat` itself use these, so a front end never reads a session file on its own.

A chat folder is ``<home>/cards/<card>/对话/<chat>/`` holding ``session.jsonl`` (the source of truth).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..session.tree import SessionError, SessionTree

if TYPE_CHECKING:  # the import/export modules load when used (issue 15: start-up needs none of them)
    from ..cards import Card

#: the export formats of a story (agent mode's chapters) → the name of the writer in core.story.export
STORY_FORMATS = {"md": "export_markdown", "epub": "export_epub", "docx": "export_docx"}


class ChatInfo(BaseModel):
    """What a chat's header says, read without loading the chat: ``mode`` (roleplay | agent, fixed at creation),
    the card it was made with (``card``: the card file's path as stored; ``card_name``), its ``title`` (empty when
    none was given) and whether it is the recorded offline demo (``demo``)."""

    folder: Path
    mode: str = "roleplay"
    card: str = ""
    card_name: str = ""
    title: str = ""
    demo: bool = False


def chat_info(folder: Path) -> ChatInfo:
    """The header of the chat in ``folder``, reading only its first line (a 10,000-beat chat costs the same as a new
    one). A session file whose header a crash lost (0 bytes, a torn first line) answers from the folder's
    ``meta.json`` (else role-play, untitled): ``Chat.open`` rebuilds the header (chat.recovery). Raises
    :class:`SessionError` when there is no session file or it cannot be read."""
    try:
        h = SessionTree.read_header(Path(folder) / "session.jsonl")
    except SessionError:
        if not (Path(folder) / "session.jsonl").is_file():
            raise
        try:
            meta = json.loads((Path(folder) / "meta.json").read_text("utf-8"))
        except (OSError, ValueError):
            meta = {}
        meta = meta if isinstance(meta, dict) else {}
        return ChatInfo(folder=Path(folder), mode="agent" if meta.get("mode") == "agent" else "roleplay",
                        card_name=str(meta.get("card") or ""), title=str(meta.get("title") or ""))
    return ChatInfo(folder=Path(folder), mode=h.mode, card=h.card, card_name=h.card_name, title=h.title,
                    demo=bool((h.model_extra or {}).get("demo", False)))


def export_story(folder: Path, fmt: str, output: Path) -> Path:
    """Write agent mode's chapters (``<folder>/正文/``, in file-name order) as ``fmt`` — ``md`` | ``epub`` | ``docx``
    — to ``output``, titled by the chat's title (else the folder name). Returns ``output``. Raises KeyError for an
    unknown format, OSError when a file cannot be read or written."""
    folder = Path(folder)
    try:
        title = chat_info(folder).title or folder.name
    except SessionError:
        title = folder.name
    writer = STORY_FORMATS[fmt]
    from ..story import export as book_export
    from ..story.layout import story_dir

    getattr(book_export, writer)(story_dir(folder), Path(output), title)  # 正文/ or chapters/ (story.layout)
    return Path(output)


def import_st_file(path: Path, card: Card, dest_dir: Path, title: str = "") -> list[str]:
    """Write a SillyTavern chat file (``.jsonl``) as a new chat of ``card`` in ``dest_dir`` without opening it;
    returns what the import noticed (skipped lines, repaired swipes, another card's chat). Raises
    :class:`~core.cards.st_chat.StChatError` for a file that is not a chat, SessionError when ``dest_dir`` already
    holds a session, OSError when the disk refuses."""
    from ..cards.st_chat import read_st_chat, write_session

    st = read_st_chat(path)
    d = Path(dest_dir)
    d.mkdir(parents=True, exist_ok=True)
    tree = write_session(st, d / "session.jsonl", card_name=card.name, card_path=card.path, title=title,
                         language=card.language)
    return list(tree.load_warnings) + list(st.warnings)


def export_st_file(folder: Path, out: Path) -> Path:
    """Write the chat in ``folder`` (its shown branch, every swipe) as a SillyTavern chat file ``out``. Raises
    SessionError for a broken session, OSError when ``out`` cannot be written."""
    from ..cards.st_chat_export import export_st_chat

    export_st_chat(SessionTree.open(Path(folder) / "session.jsonl"), out)
    return Path(out)
