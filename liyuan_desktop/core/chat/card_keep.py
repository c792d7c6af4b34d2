"""A chat that keeps the version of its card it played (issue 33 §4, 「保持旧版」), across reopening.

When the card in the library is replaced and the user keeps the chat on the old version (``Chat.keep_card``), the
old card's JSON is written to ``kept-card.json`` in the chat folder with the stamp (``cards.edit.card_stamp``) of
the library file it declined. Opening the chat again (:func:`kept_card`) plays the kept card while the library file
is still that declined one; once the library card changes again, the chat reads the library card as usual (and the
window's card-update bar compares it with the kept one). Taking the new version (``Chat.refresh_card``) removes the
file (:func:`forget`); taking only some of the changes (:func:`take_picked`) keeps the merged card the same way.
The kept card has the library card's path (so later edits are noticed) and its assets.
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


def take_picked(directory: Path, card: Card, picks: list[str]) -> Card:
    """Take only ``picks`` (``cards.update_diff.pick_key``) of the library's newer version of ``card`` (the one the
    chat plays): the merged card is kept for the chat (as :func:`keep` does, against the library file's stamp) and
    returned. CardError when the library card no longer reads, OSError when the disk refuses."""
    from ..cards import load_card
    from ..cards.update_diff import merge_picked

    new = load_card(card.path)
    stamp = card_stamp(card.path) or ""
    merged = card_from_json(merge_picked(card, new, picks), card.path, source_format=card.source_format)
    merged = merged.model_copy(update={"assets": new.assets})
    keep(directory, merged, stamp)
    return merged


def forget(directory: Path) -> None:
    """The chat takes the library's card again: its kept version goes."""
    try:
        (Path(directory) / KEPT_FILE).unlink(missing_ok=True)
    except OSError:
        pass


__all__ = ["KEPT_FILE", "forget", "keep", "kept_card", "take_picked"]
