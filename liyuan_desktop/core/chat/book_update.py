"""World books replaced while chats use them (issue 33 §4, the world-book half of card updates).

A chat reads, besides its card's own book, books of the library — every global book (``<home>/世界书/*.json``) and
the books linked to its card that live in the library (``cards.book_links``, state ``read``) — and the books
attached to it (``<chat>/世界书/*.json``). When such a file is replaced by a newer version (re-imported over, updated
from a file: :func:`update_book_file`, saved by another program), each chat using it shows what changed
(``cards.update_diff.book_update_diff``) and offers: use the new version (``new``), keep this chat on the old one
(``old``), take single entries (``pick``), and undo the last of these (``undo``) — :func:`apply`.

A book is named by its *key*: its name for a library book, ``chat/<name>`` for one attached to the chat (a file
name has no ``/``, so the two never meet).

Where it is kept:

- the version of each book a chat last used: a ``chat-settings`` entry of its session tree (the source of truth)
  with ``library_books = {key: sha256 of the file}``, written when the chat is created or opened (the books it
  reads then: :func:`note_baseline`), when it first reads a book added later (its next beat, :func:`note_used`)
  and by every choice;
- every version a chat used, content-addressed (``<home>/世界书/历史版本/<name>/<sha256>.json``, written when the
  version is recorded): the checkpoint the diff compares against and undo returns to; never read as a book;
- a chat kept on an old (or merged) version: ``kept-books.json`` in its folder, ``{key: {"declined": <sha256 of
  the library file it declined>, "book": <the book JSON>}}`` — used instead of the library file while the library
  still holds the declined version (:func:`swap_kept`, called by the chat's context); a later update asks again.
  After ``undo`` the entry also has ``"offer": true``: the version played before is played, and the library's
  version is still offered.

Left alone, the next beat uses the new version (as a card update does) and records it, and the beat's activity list
says so (``book_update.taken``). SillyTavern has no such step: a chat silently reads whatever the file holds.
"""

from __future__ import annotations

import json
import logging
import os
import weakref
from pathlib import Path
from typing import Any, Iterator, Optional

from pydantic import BaseModel

from ..cards.book_links import BookLink, find_library_book
from ..cards.update_diff import BookDiff, book_update_diff, merge_book_picked
from ..fsutil import atomic_write_bytes, atomic_write_text
from ..lore import Lorebook
from ..lore.bookcache import file_digest
from ..lore.books import global_books_dir
from ..messages import Msg, message
from ..paths import book_versions_name, books_off_name, chat_books_dir

log = logging.getLogger(__name__)

KEPT_BOOKS = "kept-books.json"
#: The version store's folder under the global books folder (not read as books: only ``*.json`` directly inside a
#: books folder are).
VERSIONS_FOLDER = "历史版本"  # in 世界书/; versions_dir() names it in either layout (core.paths)
RECORD_KEY = "library_books"
#: The key prefix of a book attached to the chat (``<chat>/世界书/<name>.json``).
CHAT_PREFIX = "chat/"

#: The answers to an update (:func:`apply`).
HOWS = ("new", "old", "pick", "undo")

_hash_memo: dict[str, tuple[int, int, str]] = {}


def file_hash(path: Path) -> Optional[str]:
    """The SHA-256 (hex, ``lore.bookcache.file_digest``) of the file's bytes; None when it cannot be read. Remembered per (path, mtime, size), so a
    beat's check of unchanged books reads no file."""
    try:
        st = path.stat()
        memo = _hash_memo.get(str(path))
        if memo is not None and memo[:2] == (st.st_mtime_ns, st.st_size):
            return memo[2]
        digest = file_digest(path.read_bytes())
    except OSError:
        return None
    _hash_memo[str(path)] = (st.st_mtime_ns, st.st_size, digest)
    return digest


def versions_dir(name: str) -> Path:
    """Where the versions of the library book ``name`` that chats used are kept (``历史版本/<name>`` in the global
    books folder; ``versions/<name>`` in ``world-books/``, :mod:`core.paths`)."""
    books = global_books_dir()
    return books / book_versions_name(books) / name


def store_version(name: str, raw: bytes) -> str:
    """Keep ``raw`` (a book file's bytes) as a version of ``name``; returns its SHA-256. OSError when the disk
    refuses."""
    digest = file_digest(raw)
    p = versions_dir(name) / f"{digest}.json"
    if not p.is_file():
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(p, raw)
    return digest


def stored_version(name: str, digest: str) -> Optional[Any]:
    """The JSON of the kept version ``digest`` of ``name``; None when it was never kept or no longer reads."""
    p = versions_dir(name) / f"{digest}.json"
    try:
        return json.loads(p.read_text("utf-8-sig"))
    except (OSError, ValueError):
        return None


def book_key(book: Lorebook) -> str:
    """The key (module doc) of a book as the chat's context loaded it (``source`` "chat": attached to the chat)."""
    return CHAT_PREFIX + book.name if book.source == "chat" else book.name


def key_name(key: str) -> str:
    """The book's name (file stem) in ``key``."""
    return key[len(CHAT_PREFIX):] if key.startswith(CHAT_PREFIX) else key


def book_path(key: str, chat_dir: Path) -> Optional[Path]:
    """The file the chat at ``chat_dir`` reads for ``key``; None when there is none."""
    if key.startswith(CHAT_PREFIX):
        p = chat_books_dir(chat_dir) / f"{key_name(key)}.json"
        return p if p.is_file() else None
    return find_library_book(key)


def books_used(links: list[BookLink], chat_dir: Path) -> dict[str, Path]:
    """``{key: file}`` of the books beside the card's own that the chat at ``chat_dir`` reads: its attached books,
    the global books, then its card's linked library books (``links``: the chat context's ``book_links``,
    ``cards.book_links``; those of state ``read``)."""
    folder, own = global_books_dir(), chat_books_dir(chat_dir)
    out = {CHAT_PREFIX + p.stem: p for p in sorted(own.glob("*.json"))} if own.is_dir() else {}
    out.update({p.stem: p for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {})
    for link in links:
        if link.state == "read" and link.path:
            out.setdefault(link.name, Path(link.path))
    return out


def chat_links(chat: Any) -> list[BookLink]:
    """The card links whose library books the chat ``chat`` (a ``Chat``) reads: its context's ``book_links``; in a
    group chat (``chat.group_play``) also every other member's (``cards.book_links.link_states``), because each
    member's linked books are read whenever that member speaks — so an update of any of them is offered, whoever
    spoke last. The other members' links are resolved without reading their books (a beat must stay cheap): a
    name the chat has its own copy of, or a global book (read anyway), is left out."""
    from ..cards.book_links import card_links
    from .group_play import chat_group, member_cards

    links = list(chat.context.book_links)
    group = chat_group(chat)
    if group is None:
        return links
    have = {link.name for link in links}
    own = chat_books_dir(chat.dir)
    for card in member_cards(group).values():
        for name in card_links(card):
            path = find_library_book(name) if name not in have and not (own / f"{name}.json").is_file() else None
            if path is not None and path.parent != global_books_dir():
                have.add(name)
                links.append(BookLink(name=name, state="read", path=str(path)))
    return links


#: per tree: (entries looked at, the id of the last one, the newest record among them) — a beat reads only the
#: entries added since (a 100,000-message chat is not walked every beat)
_seen_memo: "weakref.WeakKeyDictionary[Any, tuple[int, str, Optional[dict[str, str]]]]" = weakref.WeakKeyDictionary()


def _record_of(e: Any) -> Optional[dict[str, str]]:
    if e.type != "chat-settings":
        return None
    extra = e.model_extra or {}
    books = extra.get(RECORD_KEY)
    return {str(k): str(v) for k, v in books.items()} if isinstance(books, dict) else None


def recorded(tree: Any) -> dict[str, str]:
    """``{key: sha256}`` of the books the chat last used (its newest ``chat-settings`` entry carrying
    ``library_books``); {} when never recorded. Reads only the entries added since the last call on ``tree``."""
    order = tree.order
    n, last, found = _seen_memo.get(tree, (0, "", None))
    if n > len(order) or (n and order[n - 1] != last):  # entries taken back (a rollback): from the start
        n, found = 0, None
    for i in order[n:]:
        rec = _record_of(tree.entries[i])
        found = rec if rec is not None else found
    try:
        _seen_memo[tree] = (len(order), order[-1] if order else "", found)
    except TypeError:  # a tree that cannot be weakly referenced: no memo
        pass
    return dict(found or {})


def _records(tree: Any) -> Iterator[dict[str, str]]:
    for i in reversed(tree.order):
        rec = _record_of(tree.entries[i])
        if rec is not None:
            yield rec


def _record(tree: Any, books: dict[str, str]) -> None:
    tree.append("chat-settings", parent_id=None, move_leaf=False, **{RECORD_KEY: dict(sorted(books.items()))})
    tree.commit()


def kept_books(chat_dir: Path) -> dict[str, dict[str, Any]]:
    """The chat's kept books (module doc): ``{key: {"declined": sha256, "book": JSON}}``; {} when none or
    unreadable."""
    try:
        doc = json.loads((Path(chat_dir) / KEPT_BOOKS).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in doc.items() if isinstance(v, dict) and "book" in v} if isinstance(doc, dict) else {}


def _write_kept(chat_dir: Path, kept: dict[str, dict[str, Any]]) -> None:
    p = Path(chat_dir) / KEPT_BOOKS
    if kept:
        atomic_write_text(p, json.dumps(kept, ensure_ascii=False))
    else:
        p.unlink(missing_ok=True)


def _kept_in_force(chat_dir: Path, kept: dict[str, dict[str, Any]], key: str) -> Optional[Any]:
    k = kept.get(key)
    path = book_path(key, chat_dir)
    if k is None or path is None or file_hash(path) != k.get("declined"):
        return None
    return k["book"]


def swap_kept(chat_dir: Path, books: list[Lorebook]) -> list[Lorebook]:
    """``books`` (the books beside the card's own, as the chat's context loaded them) with each one the chat keeps
    an old or merged version of (and whose file is still the declined one) replaced by that version (same name and
    source).
    One file check when the chat keeps nothing."""
    kept = kept_books(chat_dir)
    if not kept:
        return books
    out = []
    for b in books:
        doc = _kept_in_force(chat_dir, kept, book_key(b))
        try:
            out.append(b if doc is None else Lorebook.from_any(doc, b.name, source=b.source))
        except ValueError as e:  # a hand-damaged kept copy: the library's book
            log.warning("kept world book %s skipped: %s", b.name, e)
            out.append(b)
    return out


class BookUpdate(BaseModel):
    """One book the chat uses that changed since it last used it: ``key`` (module doc), ``name``, ``chat`` (attached
    to the chat, not a library book), ``path`` (the file),
    ``old_hash``/``new_hash``, ``diff`` (old = what the chat plays: its kept copy or the recorded version),
    ``in_prefix`` (a changed entry is a constant one: the system prompt, so the provider's cached prefix, changes
    once), ``kept`` (the chat plays its own kept or merged copy)."""

    key: str
    name: str
    chat: bool = False
    path: str
    old_hash: str
    new_hash: str
    diff: BookDiff
    in_prefix: bool = False
    kept: bool = False


def _constant(entry: Any) -> bool:
    return isinstance(entry, dict) and bool(entry.get("constant"))


def _played(chat_dir: Path, key: str, old_hash: str, kept: dict[str, dict[str, Any]]) -> tuple[Optional[Any], bool]:
    k = kept.get(key)
    if k is not None:
        return k["book"], True
    return stored_version(key_name(key), old_hash), False


def updates(links: list[BookLink], chat_dir: Path, tree: Any) -> list[BookUpdate]:
    """The library books of the chat (its card's ``links``, ``chat_dir``, its session ``tree``) replaced since it last used
    them and not declined (module doc), name order. A book never recorded, or whose recorded version was not kept,
    is no update (it is recorded at the next beat)."""
    seen, kept = recorded(tree), kept_books(chat_dir)
    out = []
    for key, path in sorted(books_used(links, chat_dir).items()):
        new_hash, old_hash = file_hash(path), seen.get(key)
        if new_hash is None or old_hash is None or new_hash == old_hash:
            continue
        k = kept.get(key, {})
        if k.get("declined") == new_hash and not k.get("offer"):
            continue
        old, is_kept = _played(chat_dir, key, old_hash, kept)
        try:
            new = json.loads(path.read_text("utf-8-sig"))
        except (OSError, ValueError):
            continue
        if old is None:
            continue
        diff = book_update_diff(old, new)
        if diff.empty():
            continue
        prefix = any(_constant(c.old) or _constant(c.new) for c in diff.entries)
        out.append(BookUpdate(key=key, name=key_name(key), chat=key.startswith(CHAT_PREFIX), path=str(path),
                              old_hash=old_hash, new_hash=new_hash, diff=diff,
                              in_prefix=prefix, kept=is_kept))
    return out


def note_used(links: list[BookLink], chat_dir: Path, tree: Any) -> list[Msg]:
    """The chat starts a beat: record (and keep a version of) each book it reads (beside the card's own) whose file is not the
    recorded one — a book read for the first time, or an update left alone (then the new version is what the beat
    reads, and the returned notices say so: ``book_update.taken``). A book the chat keeps an old version of stays.
    Nothing is written when nothing changed. OSError when the disk refuses."""
    seen, kept = recorded(tree), kept_books(chat_dir)
    now, notices = dict(seen), []
    for key, path in books_used(links, chat_dir).items():
        digest = file_hash(path)
        if digest is None or digest == seen.get(key) or kept.get(key, {}).get("declined") == digest:
            continue
        try:
            now[key] = store_version(key_name(key), path.read_bytes())
        except OSError:
            continue
        if key in seen:
            notices.append(message("book_update.taken", name=key_name(key)))
        if key in kept:
            del kept[key]
            _write_kept(chat_dir, kept)
    if now != seen:
        _record(tree, now)
    return notices


def note_baseline(links: list[BookLink], chat_dir: Path, tree: Any) -> bool:
    """Record (and keep a version of) each book the chat reads beside the card's own that its record does not name
    yet — called when the chat is created and when it is opened, so a book replaced before the chat's next beat
    (its first one included) is offered as an update rather than silently taken. A recorded book is never touched
    here (an update stays offered: :func:`note_used` takes it at the beat). True when a record was written; a disk
    that refuses is logged and skipped (the next beat records instead) — opening a chat never fails for it."""
    seen = recorded(tree)
    now = dict(seen)
    mark = tree.pending_mark()
    try:
        for key, path in books_used(links, chat_dir).items():
            if key not in seen and file_hash(path) is not None:
                now[key] = store_version(key_name(key), path.read_bytes())
        if now != seen:
            _record(tree, now)
    except OSError as e:  # a read-only data folder: nothing is left pending on the tree either
        tree.rollback(mark)
        log.warning("world-book baseline not recorded: %s", e)
        return False
    return now != seen


def _find(links: list[BookLink], chat_dir: Path, tree: Any, key: str) -> BookUpdate:
    for u in updates(links, chat_dir, tree):
        if u.key == key:
            return u
    raise KeyError(key)


def apply(links: list[BookLink], chat_dir: Path, tree: Any, key: str, how: str, picks: Optional[list[str]] = None) -> None:
    """Answer the update of the book ``key`` (module doc) for this chat: ``new`` — the file's version from the next
    beat (recorded; the version played before stays in the version store, the checkpoint ``undo`` returns to);
    ``old`` — keep the version the chat plays (``kept-books.json``, until the file changes again); ``pick`` — the
    version played with only ``picks`` (``cards.update_diff.pick_key``) taken from the new one, kept the same way;
    ``undo`` — back to the version played before the last ``new``/``pick`` (or the update a beat took), kept
    against the current file, with the file's version offered again. The caller re-reads the chat's books.
    KeyError when ``key`` has no update (``new``/``old``/``pick``) or nothing to undo; ValueError for another
    ``how``; OSError when the disk refuses."""
    if how not in HOWS:
        raise ValueError(how)
    chat_dir = Path(chat_dir)
    if how == "undo":
        _undo(chat_dir, tree, key)
        return
    u = _find(links, chat_dir, tree, key)
    kept, name = kept_books(chat_dir), key_name(key)
    old, _is_kept = _played(chat_dir, key, u.old_hash, kept)
    raw = Path(u.path).read_bytes()
    seen = recorded(tree)
    if how == "new":
        kept.pop(key, None)
        seen[key] = store_version(name, raw)
    elif how == "old":
        kept[key] = {"declined": u.new_hash, "book": old}
    else:
        book = merge_book_picked(old, json.loads(raw.decode("utf-8-sig")), picks or [])
        kept[key] = {"declined": u.new_hash, "book": book}
        # the merged version joins the store (the record names it), so undo can step back over it
        seen[key] = store_version(name, json.dumps(book, ensure_ascii=False).encode("utf-8"))
        store_version(name, raw)
    _write_kept(chat_dir, kept)
    if seen != recorded(tree):
        _record(tree, seen)


def _undo(chat_dir: Path, tree: Any, key: str) -> None:
    history = [r.get(key) for r in _records(tree)]
    if not history or history[0] is None:
        raise KeyError(key)
    before = next((h for h in history[1:] if h is not None and h != history[0]), None)
    path = book_path(key, chat_dir)
    doc = stored_version(key_name(key), before) if before is not None else None
    if before is None or doc is None or path is None:
        raise KeyError(key)
    kept = kept_books(chat_dir)
    current = file_hash(path) or ""
    if before == current:
        kept.pop(key, None)
    else:  # played as before, and the update offered again
        kept[key] = {"declined": current, "book": doc, "offer": True}
    _write_kept(chat_dir, kept)
    seen = recorded(tree)
    seen[key] = before
    _record(tree, seen)


def can_undo(tree: Any, key: str) -> bool:
    """True when the chat's records hold an earlier version of the book ``key`` than the one it plays now."""
    history = [r.get(key) for r in _records(tree)]
    return bool(history) and history[0] is not None and any(h not in (None, history[0]) for h in history[1:])


def update_book_file(folder: Path, name: str, source: Path) -> Path:
    """Replace the book ``name`` of the books folder ``folder`` (a chat's ``世界书`` or the global one; the book
    may be switched off, in ``folder/未启用`` — for the global folder that is the library) by the world-book file
    ``source`` (checked first: ``lore.books.read_book_json``); the version replaced is kept in the version store.
    Returns the file written. FileNotFoundError when the folder has no such book, ``BookFileError`` (a ValueError)
    when ``source`` is not a world book, OSError when the disk refuses."""
    return _replace(folder, name, Path(source).read_bytes(), Path(source).name)


def save_book(folder: Path, name: str, book: Lorebook) -> Path:
    """Write ``book`` (edited in the book editor) over the book ``name`` of the books folder ``folder`` as a
    SillyTavern World Info file (``Lorebook.to_world_info``: a book read from one comes back equal but for the
    edits) — the same replace as :func:`update_book_file` (the old version kept, every chat reading it offered the
    change). Returns the file written; FileNotFoundError when the folder has no such book, OSError."""
    raw = json.dumps(book.to_world_info(), ensure_ascii=False, indent=1).encode("utf-8")
    return _replace(folder, name, raw, f"{name}.json")


def _replace(folder: Path, name: str, raw: bytes, label: str) -> Path:
    from ..lore.books import read_book_json

    folder = Path(folder)
    plain = bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")
    places = (folder / f"{name}.json", folder / books_off_name(folder) / f"{name}.json") if plain else ()
    dest = next((p for p in places if p.is_file()), None)
    if dest is None:
        raise FileNotFoundError(str(folder / f"{name}.json"))
    Lorebook.from_any(read_book_json(raw, label), name)
    store_version(name, dest.read_bytes())
    atomic_write_bytes(dest, raw)
    _hash_memo.pop(str(dest), None)
    os.utime(dest)
    return dest


def update_library_book(name: str, source: Path) -> Path:
    """:func:`update_book_file` for the library book ``name`` (global, or in the library's ``未启用``)."""
    return update_book_file(global_books_dir(), name, source)


__all__ = ["BookUpdate", "CHAT_PREFIX", "HOWS", "KEPT_BOOKS", "RECORD_KEY", "VERSIONS_FOLDER", "apply", "book_key",
           "book_path", "books_used", "can_undo", "chat_links", "file_hash", "kept_books", "key_name", "note_baseline", "note_used", "recorded",
           "save_book", "store_version", "stored_version", "swap_kept", "update_book_file", "update_library_book", "updates",
           "versions_dir"]
