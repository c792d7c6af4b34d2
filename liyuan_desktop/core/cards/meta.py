"""The per-card switches the user sets (``liyuan.json`` beside the card file), both off by default.

One JSON object, other keys kept on every write (atomic):

* ``"regex_allowed": true|false`` — the card's regex scripts may run (asked once at import; 「允许这张卡的正则脚本」).
  They change what is shown and what is sent, so a chat reads this when it loads its context.
* ``"frames_trusted": true|false`` — trusted status bars (issue 5). What it changes (``ui/frames/conversation.py``):
  status-bar frames of a trusted card may load **remote scripts, stylesheets and fonts over https** (bars that are
  a loader for a UI on jsDelivr, ../shared/design/card-runtime.md §3.6); the CDN rewrite of bundled libraries still
  applies. Nothing else is relaxed: frames stay sandboxed without same-origin, have no fetch/XHR/WebSocket, no
  pop-ups, no top navigation, no loopback or private-network addresses, no ``file:``.
* ``"world_books": ["name", ...]`` — the world books of the library linked to the card (SillyTavern's character
  lore: the primary book ``data.extensions.world`` first, then the card's "additional" books from SillyTavern's
  ``world_info.charLore``), by file stem in ``<home>/世界书/未启用/`` or ``<home>/世界书/``. Written at card import
  and by the SillyTavern migration, edited in the window's 世界书 dialog; every chat of the card reads them
  (:mod:`.book_links`). Absent = never recorded (the card's ``extensions.world`` is used, as SillyTavern does).

* ``"favorite": true|false`` — the card is starred in the card list (SillyTavern's ``data.extensions.fav``, kept
  here so the card file stays as imported); the window lists favourites first and can show only them.

This module is the only reader and writer of ``liyuan.json``; ``Chat.set_scripts_allowed`` / ``Chat.set_trusted``
call it and clear what depends on the switch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

from ..fsutil import atomic_write_text
from . import Card

META_FILE = "liyuan.json"
KEY = "frames_trusted"
SCRIPTS_KEY = "regex_allowed"
BOOKS_KEY = "world_books"
FAVORITE_KEY = "favorite"

CardLike = Union[str, Path, Card, None]


def _card_dir(card: CardLike) -> Path | None:
    """A card folder from a folder path, or from a :class:`cards.Card` (its file's folder); None without one."""
    if card is None:
        return None
    if isinstance(card, Card):
        return Path(card.path).parent if card.path else None
    return Path(card)


def read_meta(card: CardLike) -> dict[str, Any]:
    """The card's ``liyuan.json`` as a dict; {} when the card has no folder, no file, or an unreadable one."""
    d = _card_dir(card)
    if d is None:
        return {}
    try:
        meta = json.loads((d / META_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _set_key(card_dir: str | Path, key: str, value: Any) -> None:
    """Write one key into ``<card_dir>/liyuan.json``, other keys kept (atomic). Raises OSError."""
    meta = read_meta(Path(card_dir))
    meta[key] = value
    atomic_write_text(Path(card_dir) / META_FILE, json.dumps(meta, ensure_ascii=False, indent=1))


def card_frames_trusted(card: CardLike) -> bool:
    """Whether the user trusted this card's status bars. ``card``: the card folder (str/Path) or a Card. False
    when the card has no folder, no ``liyuan.json``, or an unreadable one."""
    return read_meta(card).get(KEY) is True


def set_card_frames_trusted(card_dir: str | Path, trusted: bool) -> None:
    """Record the trust switch in ``<card_dir>/liyuan.json`` (other keys kept; atomic write). Raises OSError."""
    _set_key(card_dir, KEY, bool(trusted))


def card_scripts_allowed(card: CardLike) -> bool:
    """Whether the user allowed this card's regex scripts (``regex_allowed``). ``card``: folder or Card; False
    without a folder or file."""
    return bool(read_meta(card).get(SCRIPTS_KEY))


def set_card_scripts_allowed(card_dir: str | Path, allowed: bool) -> None:
    """Record the user's answer for a card's regex scripts (asked once, at import). Raises OSError."""
    _set_key(card_dir, SCRIPTS_KEY, bool(allowed))


def card_linked_books(card: CardLike) -> Optional[list[str]]:
    """The names of the library world books linked to the card (``world_books``, primary first), or None when
    none were ever recorded (then SillyTavern's own link, the card's ``extensions.world``, applies:
    :func:`.book_links.card_links`). ``card``: folder or Card. Non-string items of a hand-edited file are dropped."""
    raw = read_meta(card).get(BOOKS_KEY)
    if not isinstance(raw, list):
        return None
    return list(dict.fromkeys(n for n in raw if isinstance(n, str) and n.strip()))


def set_card_linked_books(card_dir: str | Path, names: list[str]) -> None:
    """Record the card's linked world books (library file stems, primary first; duplicates dropped; [] = none,
    which also stops the card's ``extensions.world`` from applying). Raises OSError."""
    _set_key(card_dir, BOOKS_KEY, list(dict.fromkeys(n for n in names if n)))


def card_favorite(card: CardLike) -> bool:
    """Whether the user starred the card (``favorite``). ``card``: folder or Card; False without a folder or file."""
    return read_meta(card).get(FAVORITE_KEY) is True


def set_card_favorite(card_dir: str | Path, favorite: bool) -> None:
    """Star or unstar the card in the card list (``favorite`` in ``<card_dir>/liyuan.json``, other keys kept;
    atomic write). Raises OSError."""
    _set_key(card_dir, FAVORITE_KEY, bool(favorite))
