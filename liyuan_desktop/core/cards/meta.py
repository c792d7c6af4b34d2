"""The per-card "trusted status bars" switch (issue 5), off by default.

Kept like the regex-scripts permission (``core.chat.card_scripts_allowed``): a key in ``liyuan.json`` beside the
card file, ``"frames_trusted": true|false``. What it changes (``ui/conversation.py``): status-bar frames of a
trusted card may load **remote scripts, stylesheets and fonts over https** (bars that are a loader for a UI on
jsDelivr, ../shared/design/card-runtime.md §3.6); the CDN rewrite of bundled libraries still applies. Nothing else
is relaxed: frames stay sandboxed without same-origin, have no fetch/XHR/WebSocket, no pop-ups, no top navigation,
no loopback or private-network addresses, no ``file:``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_text

META_FILE = "liyuan.json"
KEY = "frames_trusted"


def _card_dir(card: Any) -> Path | None:
    """A card folder from a folder path, or from a :class:`cards.Card` (its file's folder); None without one."""
    if card is None:
        return None
    if isinstance(card, (str, Path)):
        return Path(card)
    path = getattr(card, "path", None)
    return Path(path).parent if path else None


def card_frames_trusted(card: Any) -> bool:
    """Whether the user trusted this card's status bars. ``card``: the card folder (str/Path) or a Card. False
    when the card has no folder, no ``liyuan.json``, or an unreadable one."""
    d = _card_dir(card)
    if d is None:
        return False
    try:
        meta = json.loads((d / META_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get(KEY) is True


def set_card_frames_trusted(card_dir: str | Path, trusted: bool) -> None:
    """Record the switch in ``<card_dir>/liyuan.json`` (other keys kept; atomic write). Raises OSError."""
    p = Path(card_dir) / META_FILE
    try:
        meta = json.loads(p.read_text("utf-8"))
        if not isinstance(meta, dict):
            meta = {}
    except (OSError, ValueError):
        meta = {}
    meta[KEY] = bool(trusted)
    atomic_write_text(p, json.dumps(meta, ensure_ascii=False, indent=1))
