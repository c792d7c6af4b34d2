"""Managing chats and cards in the library (issue 17 "Manage"): rename, duplicate ("new chat from here"), delete to
the in-app 回收站 and restore from it.

Deleting never destroys: a chat or card folder is *moved* into ``<home>/回收站/<ms>-<name>/`` with a ``trash.json``
record (:class:`TrashItem`: what it was, where it lived, when it went), and :func:`restore` moves it back (under a
numbered name when the old one is taken meanwhile). We keep our own 回收站 rather than the system trash: a restore
from inside the app (and from ``liyuan chats restore``) must know where the folder came from, which the system
trash does not tell portably, and no dependency is needed. :func:`empty_trash` is the only place anything is
removed for good.

Renaming a chat renames its folder (the chat list shows folder names) and its ``meta.json`` title; the session
file is append-only and keeps its header. Renaming a card renames its folder (the card list shows folder names;
the card's own name inside ``card.json`` is unchanged); its chats move with it and find their card by the folder
they live in (``cards.library.card_of_chat``), not by the old path their headers hold, and the per-chat persona
choices follow the new folder.

Duplicating copies the branch that ends at a message (SillyTavern's "branch from here"): the session lines from the
root to that message, the ledger snapshots and summaries that follow it before the next user turn (so the copy's
ledger is the one after that message), every ``chat-settings`` line (preset, sampling, world-info overrides, the
Author's Note) and a ``leaf`` line naming the message; lines are copied byte for byte, so everything they held is
kept. The chat's folders (attached world books 世界书/, agent mode's 正文/ and 历史/) are copied too; caches are not.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Iterable, Optional

from pydantic import BaseModel

from ..cards.library import CardRef, cards_root
from ..fsutil import atomic_write_text
from ..messages import message, render
from ..paths import home, home_folder, name_taken, safe_name
from ..session.tree import SessionTree, new_id

TRASH = "回收站"  # the Chinese layout's name; the trash is wherever trash_root() says (core.paths)
_RECORD = "trash.json"
_ID_AT_START = re.compile(rb'^\s*\{"id":"([^"\\]+)"')


class ManageError(ValueError):
    """A manage command that cannot be done as asked (the message is for the user, in Chinese)."""


class TrashItem(BaseModel):
    """One deleted chat or card in the 回收站. ``id``: its folder name in the trash; ``kind``: chat | card;
    ``name``: the folder's old name; ``card``: the card a chat belonged to; ``origin``: the old folder, relative to
    the data folder; ``deleted``: when (ms since the epoch)."""

    id: str
    kind: str
    name: str
    card: str = ""
    origin: str
    deleted: int

    @property
    def path(self) -> Path:
        """Where the folder is kept in the trash now."""
        return trash_root() / self.id / self.name


def trash_root() -> Path:
    """``<home>/回收站`` — ``<home>/trash`` in an English-layout data folder, :mod:`core.paths` — (created when
    missing)."""
    p = home_folder("trash")
    p.mkdir(parents=True, exist_ok=True)
    return p


def _free(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``… — the first that does not exist."""
    out, n = path, 2
    while name_taken(out.parent, out.name):  # case-insensitively: Windows and macOS
        out = path.with_name(f"{path.name}-{n}")
        n += 1
    return out


def _check_chat(chat_dir: Path) -> Path:
    d = Path(chat_dir)
    if not (d / "session.jsonl").is_file():
        raise ManageError(message("manage.not_chat", name=d.name))
    return d


# -- rename / duplicate ------------------------------------------------------------------------------------------
def rename_chat(chat_dir: Path, new_name: str) -> Path:
    """Rename a chat's folder to ``new_name`` (made file-system safe) and its ``meta.json`` title; returns the new
    folder. Raises ManageError for an empty or taken name, OSError when the disk refuses."""
    d = _check_chat(chat_dir)
    name = safe_name(new_name.strip(), "")
    if not name:
        raise ManageError(message("manage.empty_name"))
    if name == d.name:
        return d
    dest = d.with_name(name)
    if dest.exists():
        raise ManageError(message("manage.chat_taken", name=name))
    d.rename(dest)
    meta = dest / "meta.json"
    try:
        data = json.loads(meta.read_text("utf-8"))
        data["title"] = name
        atomic_write_text(meta, json.dumps(data, ensure_ascii=False, indent=1))
    except (OSError, ValueError):
        pass  # a cache: rewritten on the next open
    return dest


def rename_card(card: CardRef | Path, new_name: str) -> CardRef:
    """Rename a library card's folder to ``new_name`` (made file-system safe); its chats, switches and frame storage
    move with it, and the personas chosen for its chats are re-keyed to the new folder. Returns the renamed card.
    Raises ManageError for a folder that is not a library card, an empty name or a taken one; OSError when the
    disk refuses (nothing renamed)."""
    d = Path(card.dir) if isinstance(card, CardRef) else Path(card)
    if not (d / "card.json").is_file():
        raise ManageError(message("manage.not_card", name=d.name))
    name = safe_name(new_name.strip(), "")
    if not name:
        raise ManageError(message("manage.empty_name"))
    if name == d.name:
        return CardRef(name=d.name, dir=str(d))
    dest = d.with_name(name)
    if dest.exists():
        raise ManageError(message("manage.card_taken", name=name))
    d.rename(dest)
    _rekey_personas(d, dest)
    return CardRef(name=dest.name, dir=str(dest))


def _rekey_personas(old: Path, new: Path) -> None:
    """Move the per-chat persona choices of the chats under ``old`` to ``new`` (``cards.personas`` keys chats by
    folder). A persona file that cannot be read or written is left alone: the chats then use the default persona."""
    from ..cards.personas import chat_key, load_personas, save_personas

    try:
        store = load_personas()
    except OSError:
        return
    before, after = chat_key(old) + "/", chat_key(new) + "/"
    moved = {(after + k[len(before):] if k.startswith(before) else k): v for k, v in store.chats.items()}
    if moved != store.chats and not store.load_warning:
        store.chats = moved
        try:
            save_personas(store)
        except OSError:
            pass


def branch_ids(tree: SessionTree, upto: Optional[str] = None) -> tuple[list[str], str]:
    """What a copy "from here" keeps: ``(entry ids in file order, the copy's leaf)`` — the path from the root to
    ``upto`` (default: the active leaf), then the entries after it on the shown branch up to the next message or
    beat (its ledger snapshot and summaries; the last of them is the leaf), and every ``chat-settings`` entry.
    Raises KeyError for an unknown ``upto``."""
    leaf = upto or tree.leaf_id
    if leaf not in tree.entries:
        raise KeyError(leaf)
    keep = {e.id for e in tree.path_to(leaf)}
    shown = tree.path_to()
    ids = [e.id for e in shown]
    if leaf in ids:
        for e in shown[ids.index(leaf) + 1:]:
            if e.type in ("user", "assistant", "opening", "beat", "revision"):
                break
            keep.add(e.id)
            leaf = e.id
    keep.update(i for i in tree.order if tree.entries[i].type == "chat-settings")
    return [i for i in tree.order if i in keep], leaf


def duplicate_chat(chat_dir: Path, upto: Optional[str] = None, name: Optional[str] = None,
                   language: str = "zh") -> Path:
    """A new chat of the same card holding the branch that ends at message ``upto`` (default: the shown branch
    whole), named ``name`` or 「<old> 的副本」 / "<old> copy" by ``language`` (numbered when taken); see the module doc for what is copied. Returns
    the new folder. Raises ManageError (not a chat, unknown message), SessionError (an unreadable session), OSError."""
    d = _check_chat(chat_dir)
    tree = SessionTree.open(d / "session.jsonl")
    try:
        ids, leaf = branch_ids(tree, upto)
    except KeyError:
        raise ManageError(message("manage.no_message", id=upto)) from None
    keep = set(ids)
    dest = _free(d.with_name(safe_name((name or "").strip(), "") or render(message("name.copy", name=d.name), language)))
    tmp = d.with_name(f".{dest.name}.copying-{new_id()}")
    tmp.mkdir(parents=True)
    try:
        for sub in d.iterdir():  # the chat's own folders (world books, chapters, checkpoints); caches stay behind
            if sub.is_dir() and not sub.is_symlink() and not sub.name.startswith("."):
                shutil.copytree(sub, tmp / sub.name, symlinks=True)
        out: list[bytes] = []
        with open(d / "session.jsonl", "rb") as f:
            for raw in f:
                m = _ID_AT_START.match(raw)
                if m is not None and m.group(1).decode("utf-8", "replace") in keep:
                    out.append(raw if raw.endswith(b"\n") else raw + b"\n")
        mark = {"id": new_id(tree.entries), "parent_id": None, "ts": int(time.time() * 1000), "type": "leaf",
                "target": leaf}
        out.append(json.dumps(mark, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        (tmp / "session.jsonl").write_bytes(b"".join(out))
        SessionTree.open(tmp / "session.jsonl")  # the copy must open (raises SessionError if not)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


# -- trash ---------------------------------------------------------------------------------------------------------
def _to_trash(folder: Path, kind: str, card: str = "") -> TrashItem:
    folder = Path(folder)
    try:
        origin = str(folder.resolve().relative_to(home().resolve()))
    except ValueError:
        raise ManageError(message("manage.outside_home", name=folder)) from None
    ms = int(time.time() * 1000)
    slot = _free(trash_root() / f"{ms}-{safe_name(folder.name)}")
    slot.mkdir(parents=True)
    item = TrashItem(id=slot.name, kind=kind, name=folder.name, card=card, origin=origin, deleted=ms)
    atomic_write_text(slot / _RECORD, item.model_dump_json(indent=1))
    try:
        shutil.move(str(folder), str(slot / folder.name))
    except BaseException:
        shutil.rmtree(slot, ignore_errors=True)
        raise
    return item


def delete_chat(chat_dir: Path) -> TrashItem:
    """Move a chat folder to the 回收站 (restorable). Raises ManageError / OSError."""
    d = _check_chat(chat_dir)
    return _to_trash(d, "chat", card=d.parent.parent.name)


def delete_card(card: CardRef | Path) -> TrashItem:
    """Move a card folder — with all its chats — to the 回收站 (restorable). Raises ManageError / OSError."""
    d = Path(card.dir if isinstance(card, CardRef) else card)
    if not (d / "card.json").is_file() or d.parent.resolve() != cards_root().resolve():
        raise ManageError(message("manage.not_card", name=d.name))
    return _to_trash(d, "card", card=d.name)


def list_trash() -> list[TrashItem]:
    """What the 回收站 holds, newest first (slots without a readable record are left out)."""
    out = []
    for slot in trash_root().iterdir():
        try:
            item = TrashItem.model_validate_json((slot / _RECORD).read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if item.id == slot.name and item.path.exists():
            out.append(item)
    out.sort(key=lambda i: -i.deleted)
    return out


def find_trash(item_id: str) -> TrashItem:
    """The trash item whose id is or starts with ``item_id`` (or whose old name is ``item_id`` — the newest then).
    Raises ManageError when none or several match."""
    items = list_trash()
    hits = [i for i in items if i.id == item_id] or [i for i in items if i.id.startswith(item_id)] \
        or [i for i in items if i.name == item_id][:1]
    if len(hits) != 1:
        raise ManageError(message("manage.trash_none" if not hits else "manage.trash_many", id=item_id))
    return hits[0]


def restore(item: TrashItem | str) -> Path:
    """Move a trashed chat or card back where it was (numbered when that name is taken now; a chat whose card is
    gone goes back under that card's folder, which is made again only to hold it). Returns the restored folder."""
    it = find_trash(item) if isinstance(item, str) else item
    dest = _free(home() / it.origin)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(it.path), str(dest))
    shutil.rmtree(trash_root() / it.id, ignore_errors=True)
    return dest


def empty_trash(items: Optional[Iterable[TrashItem]] = None) -> int:
    """Remove trashed folders for good (all of them by default); returns how many."""
    n = 0
    for it in list(items) if items is not None else list_trash():
        shutil.rmtree(trash_root() / it.id, ignore_errors=True)
        n += 1
    return n


def replace_card(path: Path) -> tuple[CardRef, Optional[TrashItem]]:
    """Re-import ``path`` over the library card of the same name (the user chose 替换): the old card files
    (``card.json``, ``original.*``) are first saved to the 回收站 as a card folder holding just them — restoring
    it gives the old card back beside the new one —, then replaced; the card's chats and switches stay. Returns
    the card and the trash item (None when there was nothing to replace). Raises CardError / OSError."""
    from ..cards.library import existing_card, import_card

    old = existing_card(path)
    item = None
    if old is not None:
        src = Path(old.dir)
        ms = int(time.time() * 1000)
        slot = _free(trash_root() / f"{ms}-{safe_name(src.name)}")
        (slot / src.name).mkdir(parents=True)
        for f in [src / "card.json", *src.glob("original.*")]:
            if f.is_file():
                shutil.copy2(f, slot / src.name / f.name)
        item = TrashItem(id=slot.name, kind="card", name=src.name, card=src.name,
                         origin=str(src.resolve().relative_to(home().resolve())), deleted=ms)
        atomic_write_text(slot / _RECORD, item.model_dump_json(indent=1))
    return import_card(path, replace=True), item


__all__ = ["ManageError", "TRASH", "TrashItem", "branch_ids", "delete_card", "delete_chat", "duplicate_chat", "replace_card",
           "empty_trash", "find_trash", "list_trash", "rename_card", "rename_chat", "restore", "trash_root"]
