"""Lossless card export: JSON (as read, plus deliberate edits) and PNG with both ``chara`` and ``ccv3`` chunks.

Nothing is rebuilt from the normalised fields: the export starts from a deep copy of :attr:`Card.raw` (every
unknown key at every level — card, ``data``, ``extensions``, book, entries, entry ``extensions`` — survives) and
writes back only the fields whose value on the :class:`Card` differs from what ``raw`` normalises to. This is
what SillyTavern's ``charaFormatData()`` achieves by starting from the old JSON.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any, Optional

from ..messages import message
from . import CARD_FIELDS, FIELD_ALIASES, Card, CardError, card_data, card_from_json
from .png import default_png, replace_card_chunks


def export_json(card: Card) -> dict[str, Any]:
    """The card as a JSON object for a ``.json`` file: a deep copy of ``card.raw`` with deliberate edits applied.

    An edit is a field of :data:`CARD_FIELDS` whose value on ``card`` differs from ``card_from_json(card.raw)``;
    it is written to ``data[field]`` for V2/V3 (and to the root copy when the root has one, as SillyTavern keeps
    the V1 fields mirrored at the root; ``creator_notes`` also to ``creatorcomment``), or to the root (or the
    alias the value came from) for a flat V1 card. ``character_book`` set to None removes the book. The spec is
    unchanged (V1 stays V1); a Card built in code (empty ``raw``) becomes a V3 card. Re-importing the result gives the same JSON (key order aside)."""
    if isinstance(card.raw, dict) and card.raw:
        out = copy.deepcopy(card.raw)
        try:
            base: Optional[Card] = card_from_json(card.raw, card.path)
        except CardError:
            base = None
    else:  # a Card made in code: a fresh V3 card
        out, base = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"group_only_greetings": []}}, None
    data = card_data(out)
    for key in CARD_FIELDS:
        value = getattr(card, key)
        if base is not None and getattr(base, key) == value:
            continue
        value = copy.deepcopy(value)
        if data is not None:
            _put(data, key, value)
            for rk in (key, *FIELD_ALIASES.get(key, ())):
                if rk in out and rk != "data":
                    _put(out, rk, value)
        else:
            target = key if key in out else next((a for a in FIELD_ALIASES.get(key, ()) if a in out), key)
            _put(out, target, value)
    return out


def _put(obj: dict[str, Any], key: str, value: Any) -> None:
    if value is None and key == "character_book":
        obj.pop(key, None)
    else:
        obj[key] = value


def as_spec(obj: dict[str, Any], version: str, card: Optional[Card] = None) -> dict[str, Any]:
    """A copy of the card JSON ``obj`` declared as ``version`` ("v2" → ``chara_card_v2``/``2.0``, "v3" →
    ``chara_card_v3``/``3.0``), like SillyTavern's PNG ``write()`` which copies the JSON and rewrites ``spec``.
    A flat V1 card gains a ``data`` object built from its normalised fields (its root keys stay, as SillyTavern
    keeps the V1 fields at the root; ``group_only_greetings: []`` included as SillyTavern does). V3 gets ``data.group_only_greetings: []`` when missing (required by the
    spec). All other keys are kept."""
    o = copy.deepcopy(obj)
    data = card_data(o)
    if data is None:
        c = card if card is not None else card_from_json(o)
        data = {k: copy.deepcopy(getattr(c, k)) for k in CARD_FIELDS if k != "character_book"}
        if c.character_book is not None:
            data["character_book"] = copy.deepcopy(c.character_book)
        data["group_only_greetings"] = []  # as SillyTavern's charaFormatData() writes for V2 and V3 alike
        o["data"] = data
    o["spec"], o["spec_version"] = ("chara_card_v3", "3.0") if version == "v3" else ("chara_card_v2", "2.0")
    if version == "v3" and not isinstance(data.get("group_only_greetings"), list):
        data["group_only_greetings"] = []
    return o


def card_json_bytes(obj: Any, indent: Optional[int] = None) -> bytes:
    """UTF-8 JSON of ``obj`` (compact unless ``indent``), CJK kept as is. A string with a lone surrogate (which
    UTF-8 cannot hold; rare, from ``\\udXXX`` escapes in the source) makes the whole text ``\\u``-escaped
    instead, so it still reads back identically."""
    seps = (",", ":") if indent is None else (",", ": ")
    try:
        return json.dumps(obj, ensure_ascii=False, separators=seps, indent=indent).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, separators=seps, indent=indent).encode("ascii")


def export_png(card: Card, image: Optional[bytes] = None) -> bytes:
    """A PNG card: ``image`` (PNG or APNG bytes; None → :func:`.png.default_png`, a plain 256×384 image) with
    its existing ``chara``/``ccv3`` chunks replaced by two new tEXt chunks just before IEND: ``chara`` =
    base64 of the V2 JSON, ``ccv3`` = base64 of the V3 JSON (both from :func:`export_json`, see
    :func:`as_spec`) — SillyTavern's ``write()`` layout. Other chunks (including APNG animation chunks and
    unrelated text) are copied byte for byte. Re-importing reads ``ccv3``.

    Raises :class:`CardError` when ``image`` is not a readable PNG (a JPEG/WEBP/GIF is named)."""
    obj = export_json(card)
    base_card = None if card_data(obj) is not None else card_from_json(obj, card.path)
    texts = [(kw, base64.b64encode(card_json_bytes(as_spec(obj, ver, base_card))).decode("ascii"))
             for kw, ver in (("chara", "v2"), ("ccv3", "v3"))]
    return replace_card_chunks(default_png() if image is None else image, texts, label=message("cardfile.label.export_image"))


def icon_bytes(card: Card) -> Optional[bytes]:
    """The card's main icon from its embedded assets (CHARX ``embeded://`` or PNG ``__asset:``), as SillyTavern
    picks the avatar of a CHARX: the first ``data.assets`` entry of type ``icon`` that is loaded (one named
    ``main`` preferred). None when there is none (for a PNG card the image itself is the icon)."""
    data = card_data(card.raw) if isinstance(card.raw, dict) else None
    assets = data.get("assets") if isinstance(data, dict) else None
    icons = [a for a in assets if isinstance(a, dict) and a.get("type") == "icon"
             and isinstance(a.get("uri"), str) and a["uri"] in card.assets] \
        if isinstance(assets, list) else []
    icons.sort(key=lambda a: a.get("name") != "main")
    return card.assets[icons[0]["uri"]] if icons else None


def card_image(card: Card) -> Optional[bytes]:
    """The card's picture as a PNG, or None: the file the user imported when it was a PNG/APNG (kept byte for byte
    as ``original.png`` beside the library's ``card.json``, or the card file itself), else the main icon of a
    CHARX/asset card when that is a PNG. For the card list, the conversation's avatars and :func:`export_png`
    (which then keeps the card's own image rather than the plain default)."""
    from pathlib import Path

    candidates = []
    if card.path:
        p = Path(card.path)
        candidates += [p.with_name("original.png"), p.with_name("original.apng")]
        if p.suffix.lower() in (".png", ".apng"):
            candidates.append(p)
    for c in candidates:
        try:
            data = c.read_bytes()
        except OSError:
            continue
        if data.startswith(b"\x89PNG\r\n\x1a\n"):
            return data
    icon = icon_bytes(card)
    return icon if icon is not None and icon.startswith(b"\x89PNG\r\n\x1a\n") else None
