"""World books beside the card's own: the chat's attached ones (``<chat>/世界书/*.json``) and the global ones
(``<home>/世界书/*.json``, SillyTavern's global world info). ``Chat`` merges them after the card's book."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Optional

from ..deferred import DeferredModel
from ..fsutil import atomic_write_bytes
from ..paths import books_off_name, home_folder
from .lorebook import Lorebook

log = logging.getLogger(__name__)


def global_books_dir() -> Path:
    """World-info files that apply to every chat: ``<home>/世界书/*.json`` (SillyTavern's global world info;
    ``<home>/world-books/`` in an English-layout data folder, :mod:`core.paths`)."""
    return home_folder("world_books")


def library_books_dir() -> Path:
    """World books kept in the library but active in no chat by themselves: ``<home>/世界书/未启用/*.json`` (a
    subfolder, so :func:`load_books` of the global folder does not read them). SillyTavern keeps every book in
    ``worlds/`` and activates only the globally selected ones (``world_info.globalSelect``), the card-linked ones
    and the chat's; the SillyTavern migration (``core.migrate``) puts the books that were not global here. Moving a
    file up into :func:`global_books_dir` makes it global."""
    return global_books_dir() / books_off_name(global_books_dir())  # 未启用/ (disabled/ in world-books/)


def load_books(folder: Path, source: str) -> list[Lorebook]:
    """Every SillyTavern world-info (or card book) JSON in ``folder``, file-name order, each read by
    :meth:`Lorebook.from_file` (a big unchanged file comes from the rows cache without decoding its JSON) with ``source`` ("chat" | "global"). Unreadable or malformed files are skipped and
    logged (a broken book never stops a chat); a missing folder gives []."""
    out: list[Lorebook] = []
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("*.json")):
        try:
            out.append(Lorebook.from_file(f, f.stem, source=source))
        except (OSError, ValueError) as e:
            log.warning("world info %s skipped: %s", f, e)
    return out


def book_names(folder: Path) -> list[str]:
    """The names (file stems) of the world-info files in ``folder``, sorted; [] without the folder."""
    return sorted(f.stem for f in folder.glob("*.json")) if folder.is_dir() else []


# -- the window's book list (issue 17): on/off, import --------------------------------------------------------
OFF_FOLDER = "未启用"  # in a 世界书/ folder; books_off_name() names it in either layout (core.paths)


class BookFile(DeferredModel):  # built on first use (core.deferred)
    """A world-info file in a books folder: ``name`` (file stem), ``path``, ``enabled`` (in the folder itself;
    switched off = in its ``未启用`` subfolder, which :func:`load_books` does not read — the same rule as
    :func:`library_books_dir` for the global folder)."""

    name: str
    path: str
    enabled: bool


def list_book_files(folder: Path) -> list[BookFile]:
    """The books of ``folder`` (a chat's ``世界书`` or :func:`global_books_dir`): on ones, then off ones, each by
    name; [] without the folder."""
    folder = Path(folder)
    out = [BookFile(name=f.stem, path=str(f), enabled=True) for f in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    off = folder / books_off_name(folder)
    if off.is_dir():
        out += [BookFile(name=f.stem, path=str(f), enabled=False) for f in sorted(off.glob("*.json"))]
    return out


def set_book_enabled(folder: Path, name: str, enabled: bool) -> Path:
    """Switch the book ``name`` of ``folder`` on (moved into ``folder``) or off (moved into ``folder/未启用``).
    Returns its new path. FileNotFoundError when there is no such book, FileExistsError when the other place
    already has a book of that name, OSError when the disk refuses."""
    folder = Path(folder)
    off = folder / books_off_name(folder)  # 未启用/ (disabled/ in world-books/, core.paths)
    src = (off if enabled else folder) / f"{name}.json"
    dst = (folder if enabled else off) / f"{name}.json"
    if dst.exists() and not src.exists():
        return dst
    if not src.is_file():
        raise FileNotFoundError(str(src))
    if dst.exists():
        raise FileExistsError(str(dst))
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dst)
    return dst


class BookFileError(ValueError):
    """A file given as a world book is not one. ``args[0]`` is a catalog message (``bookfile.*`` in
    ``core/messages.py``): one Chinese line naming the file and the problem, rendered in English by the front ends."""


def read_book_json(raw: bytes, name: str) -> object:
    """The parsed JSON of a world-book file's bytes (UTF-8, a BOM allowed), checked to have the shape
    :meth:`Lorebook.from_any` reads: an object with ``entries`` (an object of entries — SillyTavern World Info —
    or a list — a card's ``character_book``), or a ``lorebook_v3`` export whose ``data`` has them. An empty
    ``entries`` is a valid empty book (SillyTavern creates new books so). ``name`` (the file name) starts the
    message. Raises :class:`BookFileError` for an empty file, a PNG, bytes that are not UTF-8, invalid or too
    deeply nested JSON, a top level that is no object, a character card, or no ``entries``."""
    from ..messages import message

    if not raw.strip():
        raise BookFileError(message("bookfile.empty", name=name))
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise BookFileError(message("bookfile.png", name=name))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BookFileError(message("bookfile.not_utf8", name=name, pos=e.start)) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise BookFileError(message("bookfile.bad_json", name=name, line=e.lineno, col=e.colno, why=e.msg)) from None
    except RecursionError:
        raise BookFileError(message("bookfile.too_deep", name=name)) from None
    if not isinstance(obj, dict):
        raise BookFileError(message("bookfile.not_object", name=name))
    data = _v if isinstance(_v := obj.get("data"), dict) else {}
    if str(obj.get("spec") or "").startswith("chara_card") or "first_mes" in obj or "first_mes" in data:
        raise BookFileError(message("bookfile.is_card", name=name))
    book = data if obj.get("spec") == "lorebook_v3" else obj
    if not isinstance(book.get("entries"), (dict, list)):
        raise BookFileError(message("bookfile.no_entries", name=name))
    return obj


def import_book_file(source: Path, folder: Path) -> Path:
    """Copy a SillyTavern world-info (or card book) JSON into ``folder``, switched on, under its own name (``-2``,
    ``-3``… when taken). The file is read first (:func:`read_book_json`): :class:`BookFileError` (a ValueError)
    when it is not a world book, OSError when it cannot be read or written."""
    source, folder = Path(source), Path(folder)
    raw = source.read_bytes()
    Lorebook.from_any(read_book_json(raw, source.name), source.stem)
    folder.mkdir(parents=True, exist_ok=True)
    stem, n = source.stem, 1
    dst = folder / f"{stem}.json"
    while dst.exists() or (folder / books_off_name(folder) / dst.name).exists():
        n += 1
        dst = folder / f"{stem}-{n}.json"
    atomic_write_bytes(dst, raw)
    return dst


#: The chat's own copy of the card's book, beside the session (outside ``世界书/`` so it is not read twice): saved
#: by the book editor when the card file cannot be written; it replaces the card's book in that chat only.
CARD_BOOK_COPY = "角色卡世界书.json"


def chat_card_book(chat_dir: Path) -> Optional[Lorebook]:
    """The chat's copy of the card's book (:data:`CARD_BOOK_COPY`, World Info JSON) or None when there is none or
    it cannot be read (logged; the card's own book is used then)."""
    p = Path(chat_dir) / CARD_BOOK_COPY
    if not p.is_file():
        return None
    try:
        return Lorebook.from_file(p, p.stem, source="card")
    except (OSError, ValueError) as e:
        log.warning("chat copy of the card book %s skipped: %s", p, e)
        return None
