"""Where things live on disk: the user data folder (``LIYUAN_HOME`` overrides the platform's user data dir,
found with platformdirs) and the sample cards shipped with the app."""

from __future__ import annotations

import os
import re
from pathlib import Path

APP_NAME = "liyuan"


def home() -> Path:
    """The data folder: ``$LIYUAN_HOME`` if set, else the platform user data dir (e.g. ~/.local/share/liyuan)."""
    env = os.environ.get("LIYUAN_HOME", "").strip()
    if env:
        p = Path(env).expanduser()
    else:
        import platformdirs  # only without LIYUAN_HOME (issue 15: start-up)

        p = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    p.mkdir(parents=True, exist_ok=True)
    return p


def cache_dir() -> Path:
    """Rebuildable caches: ``<home>/cache`` (created on first use). Anything in it may be deleted at any time; a
    damaged or old-format file in it is ignored and rebuilt by its owner (e.g. compiled world books, ``lore.bookcache``)."""
    p = home() / "cache"
    p.mkdir(parents=True, exist_ok=True)
    return p


def sample_cards_dir() -> Path:
    """The shipped sample cards: ``cards/`` next to the package in a source checkout, else the copy installed
    inside the package (``liyuan_desktop/sample_cards``)."""
    pkg = Path(__file__).resolve().parent.parent
    for cand in (pkg.parent / "cards", pkg / "sample_cards"):
        if cand.is_dir():
            return cand
    raise FileNotFoundError("找不到随附的示例角色卡（cards/）")


def demo_card_path() -> Path:
    """The offline demo card (青梧)."""
    return sample_cards_dir() / "青梧" / "default_Qingwu.json"


def demo_replay_path() -> Path:
    """The demo card's recorded game, in our replay format."""
    return sample_cards_dir() / "青梧" / "replay.json"


_BAD = re.compile(r'[\\/:*?"<>|\x00-\x1f]')


def safe_name(name: str, fallback: str = "未命名") -> str:
    """A file-system-safe folder name (keeps CJK; drops path separators and reserved characters)."""
    s = _BAD.sub("_", name).strip().strip(".")
    return s[:80] or fallback


def chat_dir(card_name: str, chat_name: str) -> Path:
    """``<home>/cards/<card>/对话/<chat>`` (ARCHITECTURE.md, data on disk)."""
    return home() / "cards" / safe_name(card_name) / "对话" / safe_name(chat_name)
