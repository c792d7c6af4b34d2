"""A chat that keeps the version of its card it played (issue 33 §4, 「保持旧版」), across reopening.

When the card in the library is replaced and the user keeps the chat on the old version (``Chat.keep_card``), the
old card's JSON is written to ``kept-card.json`` in the chat folder with the stamp (``cards.edit.card_stamp``) of
the library file it declined. Opening the chat again (:func:`kept_card`) plays the kept card while the library file
is still that declined one; once the library card changes again, the chat reads the library card as usual (and the
window's card-update bar compares it with the kept one). Taking the new version (``Chat.refresh_card``) removes the
file (:func:`forget`). The kept card has the library card's path (so later edits are noticed) and its assets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..cards import Card, CardError, card_from_json
from ..cards.edit import card_stamp
from ..fsutil import atomic_write_text

KEPT_FILE = "kept-card.json"


def keep(directory: Path, card: Card, declined_stamp: str) -> None:
    """Record that the chat in ``directory`` keeps ``card`` although the library file now has ``declined_stamp``.
    OSError when the disk refuses."""
    doc: dict[str, Any] = {"stamp": declined_stamp, "card": card.raw}
    atomic_write_text(Path(directory) / KEPT_FILE, json.dumps(doc, ensure_ascii=False))


def kept_card(directory: Path, card: Card) -> Card:
    """The card the chat in ``directory`` plays: its kept version while the library file (``card``, as read from
    the library) is still the one it declined, else ``card``. A missing or unreadable record is ``card``."""
    path = Path(directory) / KEPT_FILE
    if not card.path or not path.is_file():
        return card
    try:
        doc = json.loads(path.read_text("utf-8"))
        if not isinstance(doc, dict) or doc.get("stamp") != card_stamp(card.path):
            return card
        old = card_from_json(doc.get("card"), card.path, source_format=card.source_format)
    except (OSError, ValueError, CardError):
        return card
    return old.model_copy(update={"assets": card.assets})


def forget(directory: Path) -> None:
    """The chat takes the library's card again: its kept version goes."""
    try:
        (Path(directory) / KEPT_FILE).unlink(missing_ok=True)
    except OSError:
        pass


__all__ = ["KEPT_FILE", "forget", "keep", "kept_card"]
