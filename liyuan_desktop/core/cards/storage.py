"""Per-card ``localStorage`` for status-bar frames (issue 5; ../shared/design/card-runtime.md §4.2 item 9).

Status-bar frames run sandboxed (opaque origin), where the browser's own ``localStorage`` throws. Cards still use
it (settings of the bar, a collapsed/expanded state …), so the frame shim keeps a synchronous polyfill whose
contents the host persists **per card**: one JSON file in the card's own folder,
``<card folder>/frame_storage.json`` (for library cards that is ``<LIYUAN_HOME>/cards/<card>/frame_storage.json``).
The card folder is the storage key: a frame only ever receives the storage of the card whose chat the view shows,
and the view writes only into the folder of that card, so card X can never read or change card Y's storage.

File shape (version 1)::

    {"version": 1, "items": {"key": "value", …}}

Keys and values are strings (what ``Storage.setItem`` stores). The size of a storage is the UTF-8 length of all
keys plus all values (lone UTF-16 surrogates count 3 bytes, as browsers' encoders do); it may not exceed
:data:`MAX_BYTES` (1 MiB): :func:`save_card_storage` refuses a larger one and the frame shim refuses the
``setItem`` that would cross it (``QuotaExceededError`` and a console warning, as a browser does).

No Qt here; the UI (``ui/frames/conversation.py``) relays between frames and these functions.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..fsutil import atomic_write_text

log = logging.getLogger(__name__)

STORAGE_FILE = "frame_storage.json"
MAX_BYTES = 1_048_576
"""Largest storage per card, in UTF-8 bytes of keys + values (1 MiB)."""


class StorageQuotaError(ValueError):
    """A storage larger than :data:`MAX_BYTES` was to be saved (nothing was written)."""


class CardStorage(BaseModel):
    """The persisted file: ``{"version": 1, "items": {str: str}}``."""

    version: int = 1
    items: dict[str, str] = Field(default_factory=dict)


def storage_path(card_dir: str | Path) -> Path:
    """Where the frames' ``localStorage`` of the card in ``card_dir`` is kept: ``<card_dir>/frame_storage.json``."""
    return Path(card_dir) / STORAGE_FILE


def storage_size(items: dict[str, str]) -> int:
    """Bytes counted against :data:`MAX_BYTES`: UTF-8 length of every key and value (surrogates pass through as
    3 bytes each, matching a browser's ``TextEncoder`` on a lone surrogate)."""
    return sum(len(k.encode("utf-8", "surrogatepass")) + len(v.encode("utf-8", "surrogatepass")) for k, v in items.items())


def clean_items(items: Any) -> dict[str, str]:
    """``items`` as a ``{str: str}`` map. Raises ValueError when it is not a dict of strings (a frame or file sent
    something else)."""
    if not isinstance(items, dict):
        raise ValueError("storage items must be an object")
    out: dict[str, str] = {}
    for k, v in items.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValueError("storage keys and values must be strings")
        out[k] = v
    return out


def load_card_storage(card_dir: str | Path) -> dict[str, str]:
    """The stored items of the card in ``card_dir``; ``{}`` when there is no file yet. A damaged or oversized file
    is logged and treated as empty (it is left on disk untouched until the next save replaces it)."""
    p = storage_path(card_dir)
    try:
        text = p.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        log.warning("card storage %s unreadable: %s", p, e)
        return {}
    try:
        items = clean_items(CardStorage.model_validate(json.loads(text)).items)
    except (ValueError, TypeError) as e:
        log.warning("card storage %s damaged, starting empty: %s", p, e)
        return {}
    if storage_size(items) > MAX_BYTES:
        log.warning("card storage %s is over %d bytes, starting empty", p, MAX_BYTES)
        return {}
    return items


def save_card_storage(card_dir: str | Path, items: Any) -> Path:
    """Replace the stored items of the card in ``card_dir`` (atomic write, :mod:`fsutil`). Raises ValueError for
    items that are not ``{str: str}``, :class:`StorageQuotaError` above :data:`MAX_BYTES` (the old file stays),
    OSError when the disk refuses. Returns the file's path."""
    clean = clean_items(items)
    size = storage_size(clean)
    if size > MAX_BYTES:
        raise StorageQuotaError(f"card storage would be {size} bytes, more than {MAX_BYTES}")
    text = json.dumps(CardStorage(items=clean).model_dump(), ensure_ascii=True, indent=0, sort_keys=True)
    return atomic_write_text(storage_path(card_dir), text)
