"""The card library in the data folder: cards, their chats, importing a card file, creating a chat.

Layout (../shared/design/ARCHITECTURE.md, data on disk)::

    <home>/cards/<card>/card.json                 the card as imported (normalised later by the card-import issue)
    <home>/cards/<card>/original<ext>             the file the user imported, kept byte for byte
    <home>/cards/<card>/对话/<chat>/session.jsonl  a chat (source of truth) + meta.json (cache)

The demo card (青梧, or Qingwu in English: ``paths.demo_set``) is copied in from the shipped sample cards on first use,
with its replay script.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Callable, Optional

from pydantic import BaseModel, Field

from ..fsutil import atomic_write_bytes
from ..messages import MsgText, message, render
from ..paths import chats_dir, demo_set, home, is_chats_folder, legacy_safe_name, name_key, name_taken, safe_name
from ..session.tree import SessionError, SessionTree
from . import Card, CardError, load_card
from .book_links import link_on_import


class CardRef(BaseModel):
    """A card in the library: display ``name`` and its folder; ``notes``: what :func:`import_card` tells the user
    (e.g. the card's linked world book is not in the library), [] otherwise."""

    name: str
    dir: str
    notes: list[MsgText] = Field(default_factory=list)

    @property
    def card_file(self) -> Path:
        """The card's ``card.json`` in its library folder (it need not exist)."""
        return Path(self.dir) / "card.json"

    def load(self) -> Card:
        """The card (raises CardError for a damaged card file)."""
        return load_card(self.card_file)


class ChatRef(BaseModel):
    """A chat of a card: folder, mode (roleplay|agent), title, last change (ms), beats (user messages on the
    active branch, from meta.json when present)."""

    name: str
    dir: str
    mode: str = "roleplay"
    updated: int = 0


def cards_root() -> Path:
    """The library's card folder ``<home>/cards`` (``LIYUAN_HOME`` or the platform's data folder), created when
    missing. Raises OSError when it cannot be created."""
    root = home() / "cards"
    root.mkdir(parents=True, exist_ok=True)
    return root


def list_cards() -> list[CardRef]:
    """Every card folder with a card.json, by name."""
    out = []
    for d in sorted(cards_root().iterdir()):
        if (d / "card.json").is_file():
            out.append(CardRef(name=d.name, dir=str(d)))
    return out


def list_chats(card: CardRef) -> list[ChatRef]:
    """The card's chats, newest first (meta.json is read when present, else the session header)."""
    base = chats_dir(card.dir)  # 对话/ or chats/ (core.paths)
    out: list[ChatRef] = []
    if not base.is_dir():
        return out
    for d in base.iterdir():
        if d.name.startswith("."):  # hidden: a chat import still in progress, or left by a kill (.liyuan-import-*)
            continue
        s = d / "session.jsonl"
        if not s.is_file():
            continue
        mode, updated = "roleplay", int(s.stat().st_mtime * 1000)
        try:
            meta = json.loads((d / "meta.json").read_text("utf-8"))
            mode = meta.get("mode", mode)
            updated = int(meta.get("updated", updated))
        except (OSError, ValueError):
            try:
                mode = SessionTree.read_header(s).mode  # the first line only: a big chat is not loaded for a list
            except SessionError:
                pass
        out.append(ChatRef(name=d.name, dir=str(d), mode=mode, updated=updated))
    out.sort(key=lambda c: -c.updated)
    return out


def card_folder(card_name: str) -> Path:
    """The library folder of a card named ``card_name``: :func:`~liyuan_desktop.core.paths.safe_name`'s, or the
    folder an earlier release made when only that one holds a card (names it cut at 80 characters, not at
    :data:`~liyuan_desktop.core.paths.NAME_MAX_UTF16` UTF-16 units) — so re-importing such a card still meets it."""
    dest = cards_root() / safe_name(card_name)
    old = cards_root() / legacy_safe_name(card_name)
    if old != dest and not (dest / "card.json").is_file() and (old / "card.json").is_file():
        return old
    return dest


def existing_card(path: str | Path) -> Optional[CardRef]:
    """The library card a re-import of ``path`` would meet: the folder named after the file's card, when it
    holds a card whose files differ from ``path`` (the very same file again is not a conflict: None). The window
    and the CLI ask the user then (replace / keep both); :func:`import_card` never replaces on its own. Raises
    CardError for a file that is not a readable card."""
    src = Path(path)
    dest = card_folder(load_card(src).name)
    if not (dest / "card.json").is_file():
        return None
    same = dest / ("original" + src.suffix.lower())
    if same.is_file() and same.read_bytes() == src.read_bytes():
        return None
    return CardRef(name=dest.name, dir=str(dest))


def card_of_chat(chat_dir: str | Path) -> Optional[CardRef]:
    """The library card a chat folder lives in (``<card>/对话/<chat>``: the card is the folder two levels up when it
    holds a ``card.json``), else None. Chats resolve their card this way first, so renaming a card's folder keeps
    its chats working although their (append-only) session headers still name the old path."""
    d = Path(chat_dir)
    card = d.parent.parent
    if is_chats_folder(d.parent.name) and (card / "card.json").is_file():  # 对话/ or chats/
        return CardRef(name=card.name, dir=str(card))
    return None


def import_card(path: str | Path, replace: bool = False) -> CardRef:
    """Copy a card file into the library (original kept byte for byte beside ``card.json``). A card whose name is
    taken gets a numbered folder ("keep both") unless ``replace``: then the card's files in the existing folder are
    replaced and its chats, switches and frame storage stay (the caller saved the old files first, see
    ``chat.manage.replace_card``). The very same file again returns the card already there. A new card naming a
    world book of the library (``extensions.world``) is linked to it (``cards.book_links.link_on_import``; a
    missing one is said in ``notes``). Raises CardError for a file that is not a readable card, OSError."""
    src = Path(path)
    from .export import card_json_bytes  # the export module loads when a card is imported (issue 15: start-up)

    card = load_card(src)
    dest = card_folder(card.name)
    name = dest.name
    if replace and (dest / "card.json").is_file():
        for old in dest.glob("original.*"):
            old.unlink()
        atomic_write_bytes(dest / ("original" + src.suffix.lower()), src.read_bytes())
        atomic_write_bytes(dest / "card.json", card_json_bytes(card.raw))
        return CardRef(name=dest.name, dir=str(dest))
    n = 2
    while name_taken(dest.parent, dest.name):  # Alice and alice are one folder on Windows and macOS
        dest = next((e for e in dest.parent.iterdir() if name_key(e.name) == name_key(dest.name)), dest)
        if not (dest / "card.json").exists():
            break
        if (dest / ("original" + src.suffix.lower())).exists() and (dest / ("original" + src.suffix.lower())).read_bytes() == src.read_bytes():
            return CardRef(name=dest.name, dir=str(dest))  # the same file again
        dest = cards_root() / f"{name}-{n}"
        n += 1
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest / ("original" + src.suffix.lower()))
    (dest / "card.json").write_bytes(card_json_bytes(card.raw))
    return CardRef(name=dest.name, dir=str(dest), notes=list(link_on_import(dest, card)))


def ensure_demo_card(language: str = "zh") -> CardRef:
    """The demo card for ``language`` in the library (``paths.demo_set``: 青梧 for Chinese, Qingwu for English and
    every other language), copied from the shipped sample on first use, with its replay script."""
    demo = demo_set(language)
    src = demo.card
    dest = cards_root() / demo.library_name
    dest.mkdir(parents=True, exist_ok=True)
    for name, source in (("card.json", src), ("original.json", src), ("replay.json", demo.replay)):
        target = dest / name
        data = source.read_bytes()
        try:  # written atomically, and repaired when a full disk left it empty or cut (never a half card)
            current = target.read_bytes() if target.exists() else None
        except OSError:
            current = None
        if name == "card.json" and current:
            try:
                load_card(target)
                continue  # a card the user may have edited: kept as long as it loads
            except Exception:
                pass
        if current != data:
            atomic_write_bytes(target, data)
    return CardRef(name=dest.name, dir=str(dest))


def numbered_name(name: str, taken: Callable[[str], bool]) -> str:
    """``name`` when ``taken(name)`` is false, else the first free 「name-2」, 「name-3」…: the one rule for a name
    already in use in the data folder (a card kept beside another of its name, a new chat's folder, and everything
    the SillyTavern migration renames — books, presets, chats, avatars, personas)."""
    if not taken(name):
        return name
    n = 2
    while taken(f"{name}-{n}"):
        n += 1
    return f"{name}-{n}"


def dated_chat_name(kind: str = "chat", language: str = "zh") -> str:
    """A dated chat name in ``language`` ("zh"/"en"): ``kind`` "chat" → 对话-/Chat-<YYYYmmdd-HHMMSS>, "demo" →
    演示-/Demo-… (catalog keys ``name.chat``, ``name.demo``)."""
    return render(message(f"name.{kind}", stamp=time.strftime("%Y%m%d-%H%M%S")), language)


def new_chat_dir(card: CardRef, title: Optional[str] = None, language: str = "zh") -> Path:
    """A fresh chat folder name under the card (``title`` or a dated name in ``language``,
    :func:`dated_chat_name`; numbered when taken)."""
    base = chats_dir(card.dir)  # 对话/ or chats/ (core.paths)
    return base / numbered_name(safe_name(title or dated_chat_name("chat", language)), lambda n: name_taken(base, n))


__all__ = ["CardRef", "ChatRef", "CardError", "card_of_chat", "cards_root", "ensure_demo_card", "existing_card", "import_card", "list_cards",
           "list_chats", "new_chat_dir", "numbered_name"]
