"""A card's linked world books (SillyTavern's "character lore"): which library books every chat of the card reads.

SillyTavern (``public/scripts/world-info.js`` ``getCharacterLore``, checked 2024-09): a character's lore is its
primary book ``data.extensions.world`` plus the "additional" books of ``world_info.charLore`` (``{name: <card file
stem>, extraBooks: [...]}``), each a book of the user's ``worlds/`` folder found by name when a prompt is built. A
linked book that is also globally selected, or that is the chat's own book, is skipped (it is read once, there); a
name with no book behind it is skipped (logged), never an error. The card's embedded ``character_book`` is not read
at play time in SillyTavern — it is imported as a world and linked as the primary book — whereas Liyuan reads the
embedded book itself (``Card.lorebook``), so a linked book whose entries the card carries embedded is that same book
and is not read twice.

Liyuan keeps the links per card in ``liyuan.json`` (:func:`.meta.card_linked_books`: written at import and by the
SillyTavern migration, edited in the window's 世界书 dialog); a card with no record uses its ``extensions.world``.
Books are looked up in the library (``<home>/世界书/未启用/``) and among the global books (``<home>/世界书/``,
read by every chat anyway). A chat that already has a book of that name in its own ``世界书/`` (on or switched off —
e.g. a copy an earlier SillyTavern import attached) keeps its own and does not get the link's copy as well.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Literal, NamedTuple, Optional

from pydantic import BaseModel

from ..lore import Lorebook
from ..lore.books import global_books_dir, library_books_dir
from ..messages import Msg, message
from ..paths import books_off_name, chat_books_dir
from . import Card
from .meta import card_linked_books, set_card_linked_books

log = logging.getLogger(__name__)

__all__ = ["BookLink", "LinkState", "LoadedLinks", "card_links", "find_library_book", "library_book_names",
           "link_states", "linked_books", "load_links", "link_on_import"]

#: What a link does in a chat: ``read`` (its entries join the chat's books), ``global`` (a global book: every chat
#: reads it already), ``chat`` (the chat has its own book of that name), ``embedded`` (the card carries it embedded),
#: ``missing`` (no such book in the library), ``broken`` (the file cannot be read).
LinkState = Literal["read", "global", "chat", "embedded", "missing", "broken"]


class BookLink(BaseModel):
    """One linked book as a chat sees it: ``name`` (file stem), ``state`` (:data:`LinkState`), ``path`` (the file
    found, "" when missing), ``primary`` (the card's own ``extensions.world``)."""

    name: str
    state: LinkState
    path: str = ""
    primary: bool = False


def _primary(card: Card) -> str:
    world = (card.extensions or {}).get("world")
    return world.strip() if isinstance(world, str) else ""


def card_links(card: Card) -> list[str]:
    """The card's linked book names, primary first: the ``liyuan.json`` record, else the card's
    ``extensions.world`` (SillyTavern's primary link; [] when the card names none)."""
    recorded = card_linked_books(card)
    if recorded is not None:
        return recorded
    primary = _primary(card)
    return [primary] if primary else []


def find_library_book(name: str) -> Optional[Path]:
    """The file of the library book ``name``: ``<home>/世界书/<name>.json`` (a global one) or
    ``<home>/世界书/未启用/<name>.json``; None when neither exists (or the name is not a plain file name)."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    for folder in (global_books_dir(), library_books_dir()):
        p = folder / f"{name}.json"
        if p.is_file():
            return p
    return None


def library_book_names() -> list[str]:
    """Every book a card can be linked to (the global ones and the library's), sorted, no duplicates."""
    names = {p.stem for folder in (global_books_dir(), library_books_dir()) if folder.is_dir()
             for p in folder.glob("*.json")}
    return sorted(names)


def _chat_book_names(chat_dir: Optional[Path]) -> set[str]:
    if chat_dir is None:
        return set()
    books = chat_books_dir(chat_dir)  # 世界书/ or world-books/ (core.paths)
    return {p.stem for folder in (books, books / books_off_name(books)) if folder.is_dir() for p in folder.glob("*.json")}


def _resolve(card: Card, chat_dir: Optional[Path], card_book: Optional[Lorebook] = None
             ) -> list[tuple[BookLink, Optional[Lorebook]]]:
    names = card_links(card)
    if not names:
        return []  # the card's book is not even built (a big one costs: lore.bookcache)
    primary = _primary(card)
    own_book = card_book if card_book is not None else card.lorebook
    embedded = {e.content.strip() for e in own_book.entries if e.content.strip()}
    own = _chat_book_names(chat_dir)
    out: list[tuple[BookLink, Optional[Lorebook]]] = []
    for name in names:
        is_primary = name == primary
        if name in own:
            out.append((BookLink(name=name, state="chat", primary=is_primary), None))
            continue
        path = find_library_book(name)
        if path is None:
            # the author's linked book travels inside the card (SillyTavern embeds it when it saves a card)
            state: LinkState = "embedded" if is_primary and embedded else "missing"
            out.append((BookLink(name=name, state=state, primary=is_primary), None))
            continue
        link = BookLink(name=name, state="read", path=str(path), primary=is_primary)
        if path.parent == global_books_dir():
            link.state = "global"
            out.append((link, None))
            continue
        try:
            book = Lorebook.from_any(json.loads(path.read_text("utf-8-sig")), name, source="card")
        except (OSError, ValueError) as e:
            log.warning("linked world book %s skipped: %s", path, e)
            link.state = "broken"
            out.append((link, None))
            continue
        contents = {e.content.strip() for e in book.entries if e.content.strip()}
        if embedded and contents and contents <= embedded:
            link.state = "embedded"
            out.append((link, None))
            continue
        out.append((link, book))
    return out


def link_states(card: Card, chat_dir: Optional[Path] = None) -> list[BookLink]:
    """Every link of ``card`` and what it does in the chat at ``chat_dir`` (None: no chat), in link order. Reads
    the linked files (to tell an embedded copy): off the UI thread for big books."""
    return [link for link, _book in _resolve(card, chat_dir)]


class LoadedLinks(NamedTuple):
    """What a chat loads from its card's links: ``links`` (every link with its state), ``books`` (the ones it
    reads), ``warnings`` (one per missing or unreadable book)."""

    links: list[BookLink]
    books: list[Lorebook]
    warnings: list[Msg]


def load_links(card: Card, chat_dir: Optional[Path] = None, card_book: Optional[Lorebook] = None) -> LoadedLinks:
    """The links of ``card`` for the chat at ``chat_dir``: the books it reads (state ``read``, link order,
    ``source="card"`` — SillyTavern's character lore) and a warning per link that names no book or an unreadable
    one (the chat opens without it, as SillyTavern skips it). ``card_book``: the card's own book when the caller
    has built it already (default ``card.lorebook``; only read when the card has links)."""
    out = LoadedLinks([], [], [])
    for link, book in _resolve(card, chat_dir, card_book):
        out.links.append(link)
        if book is not None:
            out.books.append(book)
        elif link.state == "missing":
            out.warnings.append(message("books.link_missing", name=link.name))
        elif link.state == "broken":
            out.warnings.append(message("books.link_broken", name=link.name))
    return out


def linked_books(card: Card, chat_dir: Optional[Path] = None, card_book: Optional[Lorebook] = None
                 ) -> tuple[list[Lorebook], list[Msg]]:
    """:func:`load_links` without the link list: (books read, warnings)."""
    loaded = load_links(card, chat_dir, card_book)
    return loaded.books, loaded.warnings


def link_on_import(card_dir: str | Path, card: Card) -> list[Msg]:
    """Record the card's SillyTavern link at import (``extensions.world`` naming a book of the library: linked;
    :func:`.meta.set_card_linked_books`). A card whose links were recorded before (a replaced card) keeps them.
    Returns what to tell the user: the named book is not in the library (not linked — SillyTavern's rule: say so,
    do not fail) unless the card carries it embedded. Raises OSError when ``liyuan.json`` cannot be written."""
    primary = _primary(card)
    if not primary or card_linked_books(Path(card_dir)) is not None:
        return []
    if find_library_book(primary) is not None:
        set_card_linked_books(card_dir, [primary])
        return []
    if card.lorebook.entries:
        return []
    return [message("books.link_not_found", card=card.name, name=primary)]
