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

* ``"th_scripts": {"allowed": true|false, "switches": {"<script id>": true|false}}`` — the card's TavernHelper
  script library (issue 27, :mod:`.th_scripts`): ``allowed`` is the user's answer to 「运行这张卡的酒馆助手脚本？」
  (absent = never asked; TavernHelper asks once per card, its ``script.popuped.characters``), ``switches`` the user's
  own on/off for single scripts, which win over the card's ``enabled`` flags — the card file is never rewritten.

Presets keep the same record per preset name in one file of the preset library, ``<presets folder>/``
:data:`PRESET_META_FILE` (``{"<preset name>": {"allowed": …, "switches": {…}}}``; not ``.json``, so the library's
listing never takes it for a preset). The caller passes the folder (``prompt.presets.presets_dir()``: cards sit
below the prompt package).
* ``"favorite": true|false`` — the card is starred in the card list (SillyTavern's ``data.extensions.fav``, kept
  here so the card file stays as imported); the window lists favourites first and can show only them.

This module is the only reader and writer of ``liyuan.json``; ``Chat.set_scripts_allowed`` / ``Chat.set_trusted``
call it and clear what depends on the switch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional, Union

from pydantic import BaseModel, Field

from ..fsutil import atomic_write_text
from . import Card

META_FILE = "liyuan.json"
KEY = "frames_trusted"
SCRIPTS_KEY = "regex_allowed"
BOOKS_KEY = "world_books"
TH_KEY = "th_scripts"
PRESET_META_FILE = "liyuan-preset-scripts.meta"
FAVORITE_KEY = "favorite"
SITES_KEY = "allowed_sites"

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


class ScriptsPermission(BaseModel):
    """The user's record for one card's or preset's TavernHelper scripts: ``allowed`` True / False, None = never
    asked (ask once, as TavernHelper does, when the card or preset is first opened); ``switches`` ``{script id:
    on}``, the user's own switch for single scripts (wins over the script's ``enabled``)."""

    allowed: Optional[bool] = None
    switches: dict[str, bool] = Field(default_factory=dict)

    @property
    def asked(self) -> bool:
        """Whether the user has answered for this card or preset."""
        return self.allowed is not None


def _permission(raw: Any) -> ScriptsPermission:
    """A permission from a hand-editable record: wrong types read as never asked / no switches."""
    if not isinstance(raw, dict):
        return ScriptsPermission()
    allowed = raw.get("allowed")
    sw = raw.get("switches")
    return ScriptsPermission(allowed=allowed if isinstance(allowed, bool) else None,
                             switches={str(k): v for k, v in sw.items() if isinstance(v, bool)} if isinstance(sw, dict) else {})


def card_th_permission(card: CardLike) -> ScriptsPermission:
    """The user's record for the card's TavernHelper scripts (``th_scripts`` in ``liyuan.json``); never asked when
    the card has no folder or no record."""
    return _permission(read_meta(card).get(TH_KEY))


def set_card_th_allowed(card_dir: str | Path, allowed: bool) -> None:
    """Record the user's answer to running the card's TavernHelper scripts (switches kept). Raises OSError."""
    p = card_th_permission(Path(card_dir))
    p.allowed = bool(allowed)
    _set_key(card_dir, TH_KEY, p.model_dump())


def set_card_th_switch(card_dir: str | Path, script_id: str, on: Optional[bool]) -> None:
    """The user's switch for one of the card's scripts (``on`` None = back to the card's own ``enabled``); the card
    file is untouched. Raises OSError."""
    p = card_th_permission(Path(card_dir))
    if on is None:
        p.switches.pop(script_id, None)
    else:
        p.switches[script_id] = bool(on)
    _set_key(card_dir, TH_KEY, p.model_dump())


def _preset_meta(folder: str | Path) -> dict[str, Any]:
    try:
        meta = json.loads((Path(folder) / PRESET_META_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def preset_th_permission(folder: str | Path, name: str) -> ScriptsPermission:
    """The user's record for the TavernHelper scripts of the preset ``name`` (``folder``: the preset library)."""
    return _permission(_preset_meta(folder).get(name))


def set_preset_th_permission(folder: str | Path, name: str, allowed: Optional[bool] = None,
                             switch: Optional[tuple[str, Optional[bool]]] = None) -> None:
    """Record, for the preset ``name``, the user's answer (``allowed``, None = unchanged) and/or one script's switch
    (``(script id, on)``, on None = back to the preset's own flag). Other presets' records kept; atomic write.
    Raises OSError."""
    meta = _preset_meta(folder)
    p = _permission(meta.get(name))
    if allowed is not None:
        p.allowed = bool(allowed)
    if switch is not None:
        sid, on = switch
        if on is None:
            p.switches.pop(sid, None)
        else:
            p.switches[sid] = bool(on)
    meta[name] = p.model_dump()
    atomic_write_text(Path(folder) / PRESET_META_FILE, json.dumps(meta, ensure_ascii=False, indent=1))
def card_favorite(card: CardLike) -> bool:
    """Whether the user starred the card (``favorite``). ``card``: folder or Card; False without a folder or file."""
    return read_meta(card).get(FAVORITE_KEY) is True


def set_card_favorite(card_dir: str | Path, favorite: bool) -> None:
    """Star or unstar the card in the card list (``favorite`` in ``<card_dir>/liyuan.json``, other keys kept;
    atomic write). Raises OSError."""
    _set_key(card_dir, FAVORITE_KEY, bool(favorite))


_HOST = re.compile(r"(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}")


def normalize_site(text: str) -> str:
    """The host name a user or a refusal names, as it is stored for "allow this site for this card" (issue 26 §3):
    ``https://Battle.Example.com:443/ui/?x`` or ``battle.example.com`` → ``battle.example.com`` (lower case,
    IDNA-encoded, no port, path or trailing dot). Only https sites can be allowed: ValueError for another scheme
    (``http://``, ``file:`` …), an IP literal or a name that is not a dotted DNS name (``localhost``)."""
    t = text.strip()
    m = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):(//)?", t)
    if m:
        if m.group(1).lower() != "https" or not m.group(2):
            raise ValueError(f"only https sites can be allowed: {t[:80]!r}")
        t = t[m.end():]
    host = re.split(r"[/?#]", t, maxsplit=1)[0].rsplit("@", 1)[-1]
    host = re.sub(r":\d{1,5}$", "", host).rstrip(".").lower()
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"not a host name: {t[:80]!r}") from None
    if not _HOST.fullmatch(host) or re.fullmatch(r"[0-9.]+", host):
        raise ValueError(f"not a public host name: {t[:80]!r}")
    return host


def card_allowed_sites(card: CardLike) -> list[str]:
    """The https hosts the user allowed for this card's status bars (``allowed_sites``, sorted): their pages,
    scripts, styles, images and requests may load in this card's frames only, through the egress gate (never
    loopback or private addresses). [] by default, for a card without a folder, and for unreadable items."""
    raw = read_meta(card).get(SITES_KEY)
    out: set[str] = set()
    for item in raw if isinstance(raw, list) else []:
        try:
            out.add(normalize_site(item)) if isinstance(item, str) else None
        except ValueError:
            continue
    return sorted(out)


def set_card_site_allowed(card_dir: str | Path, site: str, allowed: bool) -> list[str]:
    """Allow (or revoke) the https host ``site`` (any form :func:`normalize_site` reads) for the card in
    ``card_dir``; returns the card's allowed hosts after the change. ValueError for a site that is not an https
    host name; OSError when ``liyuan.json`` cannot be written."""
    host = normalize_site(site)
    sites = set(card_allowed_sites(Path(card_dir)))
    sites.add(host) if allowed else sites.discard(host)
    _set_key(card_dir, SITES_KEY, sorted(sites))
    return sorted(sites)
