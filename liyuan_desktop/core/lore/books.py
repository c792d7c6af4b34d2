"""World books beside the card's own: the chat's attached ones (``<chat>/世界书/*.json``) and the global ones
(``<home>/世界书/*.json``, SillyTavern's global world info). ``Chat`` merges them after the card's book."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..paths import home
from .lorebook import Lorebook

log = logging.getLogger(__name__)


def global_books_dir() -> Path:
    """World-info files that apply to every chat: ``<home>/世界书/*.json`` (SillyTavern's global world info)."""
    return home() / "世界书"


def library_books_dir() -> Path:
    """World books kept in the library but active in no chat by themselves: ``<home>/世界书/未启用/*.json`` (a
    subfolder, so :func:`load_books` of the global folder does not read them). SillyTavern keeps every book in
    ``worlds/`` and activates only the globally selected ones (``world_info.globalSelect``), the card-linked ones
    and the chat's; the SillyTavern migration (``core.migrate``) puts the books that were not global here. Moving a
    file up into :func:`global_books_dir` makes it global."""
    return global_books_dir() / "未启用"


def load_books(folder: Path, source: str) -> list[Lorebook]:
    """Every SillyTavern world-info (or card book) JSON in ``folder``, file-name order, each read by
    :meth:`Lorebook.from_any` with ``source`` ("chat" | "global"). Unreadable or malformed files are skipped and
    logged (a broken book never stops a chat); a missing folder gives []."""
    out: list[Lorebook] = []
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("*.json")):
        try:
            out.append(Lorebook.from_any(json.loads(f.read_text("utf-8")), f.stem, source=source))
        except (OSError, ValueError) as e:
            log.warning("world info %s skipped: %s", f, e)
    return out


def book_names(folder: Path) -> list[str]:
    """The names (file stems) of the world-info files in ``folder``, sorted; [] without the folder."""
    return sorted(f.stem for f in folder.glob("*.json")) if folder.is_dir() else []
