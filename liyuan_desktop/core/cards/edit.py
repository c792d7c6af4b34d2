"""Creating and editing character cards: SillyTavern's character panel as an engine API (issue 26 §1).

The one entry point is :class:`CardEditor`: open a library card (or any card ``.json`` file), read and set its
fields by key, validate, count tokens, save a new version. Front ends (the window's editor dialog, ``liyuan card
new|set``) use nothing else::

    ed = CardEditor.open(card_dir)                 # a library card folder, its card.json, or a .json card file
    ed.get("description"); ed.set("tags.0", "奇幻"); ed.set("depth_prompt.depth", 2)
    ed.add_item("alternate_greetings", "……"); ed.move_item("alternate_greetings", 2, 0)
    ed.problems()                                  # [] or [FieldProblem(key, msg)]
    ed.tokens(counter)                             # TokenReport: per field, total, permanent
    ed.save()                                      # a new version; the previous one is kept in versions/

**Fields** (:data:`FIELDS`, keys as :meth:`CardEditor.set` takes them): every field of SillyTavern's character
panel, V2/V3 — the texts ``name description personality scenario first_mes mes_example system_prompt
post_history_instructions creator_notes creator character_version``, the lists ``alternate_greetings`` and
``tags`` (an item by index: ``alternate_greetings.2``, ``tags.0``; index = length appends), the Character's Note
``depth_prompt.prompt`` / ``depth_prompt.depth`` (int, default 4) / ``depth_prompt.role`` (system|user|assistant)
under ``data.extensions.depth_prompt`` and ``talkativeness`` (0–1, ``data.extensions.talkativeness``). Not plain
fields, with their own methods: the embedded world book (:meth:`CardEditor.book` / :meth:`CardEditor.set_book`,
the :class:`~liyuan_desktop.core.lore.Lorebook` the book editor opens), the linked library books
(:meth:`CardEditor.linked_books` / :meth:`CardEditor.set_linked_books`, kept in ``liyuan.json`` as
:mod:`.book_links` reads them), the regex scripts (:meth:`CardEditor.scripts`, :meth:`CardEditor.set_script_enabled`,
:meth:`CardEditor.set_script`) and the avatar (:meth:`CardEditor.set_avatar`). Every other key of
``data.extensions`` is kept as it was.

**Lossless.** The editor changes the normalised :class:`~liyuan_desktop.core.cards.Card` and writes through
:func:`.export.export_json` — the one rule for where an edited field goes: ``data.<field>``, plus the root copy when
the card has one (SillyTavern mirrors the V1 fields at the root; ``creator_notes`` also to ``creatorcomment``).
Every key the editor does not touch — unknown root keys, unknown ``data`` keys, other extensions, the book when not
edited, ``assets`` — keeps its value and its place. A flat V1 card is saved as V2 (its root keys stay), as
SillyTavern converts V1 on save. The library keeps the file the user imported (``original.png`` with all its
chunks, ``original.charx`` with its assets) untouched unless the avatar is replaced; exports take the picture from
there (:func:`.export.card_image`).

**Versions.** :meth:`CardEditor.save` writes atomically and first copies the files it replaces (``card.json``, and
``original.png`` when the avatar changes) to ``versions/<UTC time>/`` beside the card, keeping the newest
:data:`KEEP_VERSIONS`; :func:`list_versions` and :func:`restore_version` undo an edit (a restore is itself saved as
a version first).

**Chats.** A chat notices an edited card at its next beat (``Chat.refresh_card``: the card file's
:func:`card_stamp` changed): it reads the card again and the beat's activity list says so (message
``card.edited_notice``; the prompt's cached prefix changes once). A chat reopened after an edit says so as well
(:func:`edited_since`).

Errors: :class:`CardEditError` (a :class:`~liyuan_desktop.core.cards.CardError`) carrying a catalog message
(``cardedit.*``), for an unknown field, a bad index or value, a card too large, a card that cannot be edited.
"""

from __future__ import annotations

import calendar
import copy
import hashlib
import json
import math
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Literal, NamedTuple, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..fsutil import atomic_write_bytes
from ..lore import Lorebook
from ..messages import Msg, message
from ..paths import safe_name
from . import Card, CardError, card_from_json, load_card
from ._common import MAX_CARD_BYTES, PNG_SIGNATURE, sniff_foreign

__all__ = ["AVATAR_FILE", "CARD_FILE", "FIELDS", "KEEP_VERSIONS", "CardEditError", "CardEditor", "CardVersion",
           "FieldProblem", "FieldSpec", "TokenReport", "card_stamp", "carry_chunks", "create_card", "edited_notice",
           "edited_since", "field_spec", "fields_or_card", "list_versions", "new_card_json", "restore_version", "with_greeting"]

CARD_FILE = "card.json"
#: The card's picture in a library folder: the imported PNG, or the avatar set in the editor (see :func:`.export.card_image`).
AVATAR_FILE = "original.png"
VERSIONS_DIR = "versions"
#: Versions kept per card (the oldest beyond are removed at save).
KEEP_VERSIONS = 20
#: Bounds of what the editor accepts (SillyTavern has none; these keep a hostile or mistaken value sane).
MAX_TEXT_CHARS = 2_000_000
MAX_LINE_CHARS = 500
MAX_LIST_ITEMS = 1000
MAX_DEPTH = 10_000
MAX_AVATAR_BYTES = 32 * 1024 * 1024
ROLES = ("system", "user", "assistant")

Kind = Literal["text", "line", "list", "int", "float", "choice"]


class CardEditError(CardError):
    """An edit that cannot be made. ``args[0]`` is a :class:`~liyuan_desktop.core.messages.Msg` (``cardedit.*``)
    the front end renders in the user's language; ``str(err)`` is its Chinese text."""


class FieldSpec(BaseModel):
    """One editable field. ``key``: what :meth:`CardEditor.set` takes; ``kind``: text (multi-line) | line (one
    line) | list (of texts; items by ``key.N``) | int | float | choice; ``label``: its display name (a catalog
    message, ``cardfield.<key>``); ``max_chars`` per text or item; ``prompt``: the text reaches the prompt (counted in the
    token total); ``permanent``: sent on every beat (SillyTavern's "permanent tokens"); ``item_kind``: the kind of
    a list's items; ``minimum``/``maximum`` for numbers; ``choices``; ``default``."""

    model_config = ConfigDict(frozen=True)

    key: str
    kind: Kind
    max_chars: int = MAX_TEXT_CHARS
    prompt: bool = False
    permanent: bool = False
    item_kind: Kind = "text"
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    choices: tuple[str, ...] = ()
    default: Any = ""

    @property
    def label(self) -> Msg:
        """The field's display name (catalog ``cardfield.<key>``; render it in the user's language)."""
        return message(f"cardfield.{self.key}")


#: The fields of SillyTavern's character panel, in its order.
FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(key="name", kind="line", max_chars=MAX_LINE_CHARS, prompt=True, permanent=True),
    FieldSpec(key="description", kind="text", prompt=True, permanent=True),
    FieldSpec(key="personality", kind="text", prompt=True, permanent=True),
    FieldSpec(key="scenario", kind="text", prompt=True, permanent=True),
    FieldSpec(key="first_mes", kind="text", prompt=True),
    FieldSpec(key="alternate_greetings", kind="list", prompt=True, default=[]),
    FieldSpec(key="mes_example", kind="text", prompt=True),
    FieldSpec(key="system_prompt", kind="text", prompt=True, permanent=True),
    FieldSpec(key="post_history_instructions", kind="text", prompt=True, permanent=True),
    FieldSpec(key="depth_prompt.prompt", kind="text", prompt=True, permanent=True),
    FieldSpec(key="depth_prompt.depth", kind="int", minimum=0, maximum=MAX_DEPTH, default=4),
    FieldSpec(key="depth_prompt.role", kind="choice", choices=ROLES, default="system"),
    FieldSpec(key="talkativeness", kind="float", minimum=0.0, maximum=1.0, default=0.5),
    FieldSpec(key="creator_notes", kind="text"),
    FieldSpec(key="tags", kind="list", item_kind="line", max_chars=100, default=[]),
    FieldSpec(key="creator", kind="line", max_chars=MAX_LINE_CHARS),
    FieldSpec(key="character_version", kind="line", max_chars=MAX_LINE_CHARS),
)
_BY_KEY = {f.key: f for f in FIELDS}
_INDEXED = re.compile(r"^(alternate_greetings|tags)\.(-?\d+)$")


def field_spec(key: str) -> FieldSpec:
    """The :class:`FieldSpec` of ``key`` (an item key ``tags.0`` gives its list's spec). CardEditError
    (``cardedit.unknown_field``, naming the known keys) for anything else."""
    m = _INDEXED.match(key)
    spec = _BY_KEY.get(m.group(1) if m else key)
    if spec is None:
        raise CardEditError(message("cardedit.unknown_field", key=key, known=", ".join(f.key for f in FIELDS)))
    return spec


class FieldProblem(NamedTuple):
    """A value :meth:`CardEditor.problems` found wrong: the field ``key`` (a :data:`FIELDS` key) and ``msg``, a
    catalog message (``cardedit.*``, rendered in the user's language by the front end)."""

    key: str
    msg: Msg


class TokenReport(BaseModel):
    """Token counts of a card (:meth:`CardEditor.tokens`): ``fields`` per text field and per list item
    (``alternate_greetings.0`` …; a list's own key is the sum of its items), ``total`` of the fields that reach the
    prompt (greetings included: SillyTavern's "total tokens"), ``permanent`` of those sent on every beat (name,
    description, personality, scenario, system prompt, post-history instructions, Character's Note)."""

    fields: dict[str, int] = Field(default_factory=dict)
    total: int = 0
    permanent: int = 0


class CardVersion(BaseModel):
    """A saved version of a card (:func:`list_versions`): ``id`` (its folder name, UTC ``YYYYMMDD-HHMMSS-mmm``),
    ``path`` (the folder), ``saved_ms`` (when it was replaced, ms since the epoch), ``files`` (the file names it
    holds: ``card.json`` — or the card file's own name outside the library — and ``original.png`` when the avatar
    changed)."""

    id: str
    path: str
    saved_ms: int
    files: list[str] = Field(default_factory=list)


def new_card_json(name: str) -> dict[str, Any]:
    """A new, empty card as SillyTavern writes one: V3 (``spec``/``spec_version``), every V2 field under ``data``
    (``group_only_greetings: []``; ``extensions`` with ``talkativeness: "0.5"``, ``fav: false``, ``world: ""``,
    ``depth_prompt {prompt: "", depth: 4, role: "system"}``) and the V1 fields mirrored at the root with
    ``avatar: "none"``, ``chat``, ``talkativeness``, ``fav``, ``creatorcomment``, ``tags``, ``create_date``
    (SillyTavern's ``charaFormatData``; dates as its ``humanizedDateTime``, "2023-5-12 @21h 32m 29s 228ms").
    CardEditError for an empty or over-long name."""
    name = _check_text(field_spec("name"), "name", name)
    if not name.strip():
        raise CardEditError(message("cardedit.name_empty"))
    now = time.time()
    t = time.localtime(now)  # SillyTavern's humanizedDateTime(): local time, no zero padding
    created = f"{t.tm_year}-{t.tm_mon}-{t.tm_mday} @{t.tm_hour}h {t.tm_min}m {t.tm_sec}s {int(now * 1000) % 1000}ms"
    return {
        "name": name, "description": "", "personality": "", "scenario": "", "first_mes": "", "mes_example": "",
        "creatorcomment": "", "avatar": "none", "chat": f"{name} - {created}", "talkativeness": "0.5", "fav": False,
        "tags": [],
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {
            "name": name, "description": "", "personality": "", "scenario": "", "first_mes": "", "mes_example": "",
            "creator_notes": "", "system_prompt": "", "post_history_instructions": "", "tags": [], "creator": "",
            "character_version": "", "alternate_greetings": [],
            "extensions": {"talkativeness": "0.5", "fav": False, "world": "",
                           "depth_prompt": {"prompt": "", "depth": 4, "role": "system"}},
            "group_only_greetings": [],
        },
        "create_date": created,
    }


def _check_text(spec: FieldSpec, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise CardEditError(message("cardedit.not_text", key=key))
    if len(value) > spec.max_chars:
        raise CardEditError(message("cardedit.too_long", key=key, n=len(value), max=spec.max_chars))
    if spec.kind == "line" or (spec.kind == "list" and spec.item_kind == "line"):
        if "\n" in value or "\r" in value:
            raise CardEditError(message("cardedit.one_line", key=key))
    return value


def _number(spec: FieldSpec, key: str, value: Any) -> float:
    if isinstance(value, bool):
        raise CardEditError(message("cardedit.not_number", key=key, value=str(value)))
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise CardEditError(message("cardedit.not_number", key=key, value=value[:40])) from None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CardEditError(message("cardedit.not_number", key=key, value=str(value)[:40]))
    if spec.kind == "int" and value != int(value):
        raise CardEditError(message("cardedit.not_int", key=key, value=str(value)))
    lo, hi = spec.minimum, spec.maximum
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise CardEditError(message("cardedit.out_of_range", key=key, value=str(value), min=_num(lo), max=_num(hi)))
    return float(value)


def _num(x: Optional[float]) -> str:
    return "" if x is None else (str(int(x)) if x == int(x) else str(x))


class CardEditor:
    """An open card being edited (module doc). Not thread-safe; cheap to make (one card read).

    ``card``: the edited normalised card (its ``raw`` is the JSON as read, untouched until :meth:`save`);
    ``path``: the card file written by :meth:`save` (``<folder>/card.json`` for a library card); ``dirty``: an edit
    was made since opening or saving."""

    def __init__(self, card: Card, path: Path):
        self.card = card
        self.path = Path(path)
        self.dirty = False
        self._book_links: Optional[list[str]] = None
        self._avatar: Optional[bytes] = None
        #: the field keys set since opening: only their problems stop a save (a real card's odd untouched tag
        #: never does)
        self._edited: set[str] = set()

    # -- opening --------------------------------------------------------------------------------------------
    @classmethod
    def open(cls, where: str | Path) -> "CardEditor":
        """Open a card for editing: a library card folder (its ``card.json``), a ``card.json``, or any JSON card
        file. CardError for a file that is not a readable card; CardEditError (``cardedit.not_json``) for a PNG or
        CHARX file outside the library (import it first: the library keeps the card as JSON beside the original)."""
        p = Path(where)
        if p.is_dir():
            p = p / CARD_FILE
        card = load_card(p)
        if card.source_format != "json":
            raise CardEditError(message("cardedit.not_json", file=p.name))
        return cls(card, p)

    # -- fields ---------------------------------------------------------------------------------------------
    def get(self, key: str) -> Any:
        """The value of field ``key`` (:data:`FIELDS`; ``alternate_greetings.N`` / ``tags.N`` an item): str, a
        list copy, int (depth) or float (talkativeness; a card without one gives the default). CardEditError for an
        unknown key or an index out of range."""
        spec = field_spec(key)
        m = _INDEXED.match(key)
        if m:
            items: list[str] = getattr(self.card, m.group(1))
            return items[self._index(key, items, int(m.group(2)))]
        if key.startswith("depth_prompt."):  # as stored, or the default when the card holds something odd
            value = self._depth_prompt().get(key.split(".", 1)[1], spec.default)
            try:
                if spec.kind == "int":
                    return int(_number(spec, key, value))
                if spec.kind == "choice":
                    return value if value in spec.choices else spec.default
                return _check_text(spec, key, value)
            except CardEditError:
                return spec.default
        if key == "talkativeness":
            try:
                return _number(spec, key, self.card.extensions.get("talkativeness", spec.default))
            except CardEditError:
                return float(spec.default)
        value = getattr(self.card, key)
        return list(value) if isinstance(value, list) else value

    def values(self) -> dict[str, Any]:
        """Every field of :data:`FIELDS` by key (:meth:`get`)."""
        return {f.key: self.get(f.key) for f in FIELDS}

    def set(self, key: str, value: Any) -> None:
        """Set field ``key`` to ``value`` (checked: kind, size, range, choices; numbers may come as text).
        ``alternate_greetings.N``/``tags.N`` replaces item N, or appends when N is the list's length; a whole list
        takes a list of texts (``tags`` also a comma-separated text). CardEditError (``cardedit.*``) for an unknown
        field, a bad index or value; nothing changes then."""
        spec = field_spec(key)
        m = _INDEXED.match(key)
        if m:
            name = m.group(1)
            items = list(getattr(self.card, name))
            i = int(m.group(2))
            text = _check_text(spec, key, value)
            if i == len(items):
                self._check_count(name, len(items) + 1)
                items.append(text)
            else:
                items[self._index(key, items, i)] = text
            self._put(name, items)
        elif spec.kind == "list":
            if isinstance(value, str) and key == "tags":
                value = [t.strip() for t in value.split(",") if t.strip()]
            if not isinstance(value, list):
                raise CardEditError(message("cardedit.not_list", key=key))
            self._check_count(key, len(value))
            self._put(key, [_check_text(spec, f"{key}.{i}", v) for i, v in enumerate(value)])
        elif key.startswith("depth_prompt."):
            self._set_depth_prompt(spec, key, value)
        elif key == "talkativeness":
            n = _number(spec, key, value)
            old = self.card.extensions.get("talkativeness")
            self._set_extension("talkativeness", str(n) if isinstance(old, str) or old is None else n)
        else:
            text = _check_text(spec, key, value)
            if key == "name" and not text.strip():
                raise CardEditError(message("cardedit.name_empty"))
            self._put(key, text)

    def add_item(self, key: str, text: str = "", at: Optional[int] = None) -> int:
        """Insert ``text`` into the list ``key`` (``alternate_greetings`` or ``tags``) at index ``at`` (None: at
        the end). Returns its index. CardEditError for another key, a bad index or value, a list already full."""
        items = self._list(key)
        pos = len(items) if at is None else at
        if not 0 <= pos <= len(items):
            raise CardEditError(message("cardedit.bad_index", key=key, i=pos, n=len(items)))
        self._check_count(key, len(items) + 1)
        items.insert(pos, _check_text(field_spec(key), f"{key}.{pos}", text))
        self._put(key, items)
        return pos

    def remove_item(self, key: str, index: int) -> str:
        """Remove item ``index`` of the list ``key``; returns it. CardEditError for a bad key or index."""
        items = self._list(key)
        old = items.pop(self._index(f"{key}.{index}", items, index))
        self._put(key, items)
        return old

    def move_item(self, key: str, index: int, to: int) -> None:
        """Move item ``index`` of the list ``key`` to position ``to`` (the others shift). CardEditError for a bad
        key or index."""
        items = self._list(key)
        item = items.pop(self._index(f"{key}.{index}", items, index))
        if not 0 <= to <= len(items):
            raise CardEditError(message("cardedit.bad_index", key=f"{key}.{to}", i=to, n=len(items) + 1))
        items.insert(to, item)
        self._put(key, items)

    # -- the world book, linked books, regex scripts, the avatar ----------------------------------------------
    def book(self) -> Lorebook:
        """The embedded world book (``character_book``) for the book editor (empty when the card has none)."""
        return self.card.lorebook

    def set_book(self, book: Optional[Lorebook]) -> None:
        """Replace the embedded world book with ``book`` (its card form, :meth:`Lorebook.to_card_book`: a book read
        from this card comes back with its unknown keys; None or an empty book removes it)."""
        new = book.to_card_book() if book is not None and book.entries else None
        self.card = self.card.model_copy(update={"character_book": new})
        self.dirty = True

    def linked_books(self) -> list[str]:
        """The library world books linked to the card, primary first (:func:`.book_links.card_links`, or what
        :meth:`set_linked_books` set since)."""
        from .book_links import card_links

        return list(self._book_links) if self._book_links is not None else card_links(self.card)

    def set_linked_books(self, names: list[str]) -> None:
        """Link the library books ``names`` (file stems, primary first; [] unlinks all). Saved by :meth:`save` into
        ``liyuan.json`` (:func:`.meta.set_card_linked_books`); the card's ``extensions.world`` (SillyTavern's
        primary link) follows the first name when it names another book. CardEditError for a name that is not a
        plain file name."""
        clean = list(dict.fromkeys(n.strip() for n in names if n.strip()))
        for n in clean:
            if "/" in n or "\\" in n or n in (".", "..") or len(n) > MAX_LINE_CHARS:
                raise CardEditError(message("cardedit.bad_book_name", name=n[:60]))
        self._book_links = clean
        world = self.card.extensions.get("world")
        if (world or "") != (clean[0] if clean else ""):
            self._set_extension("world", clean[0] if clean else "")
        self.dirty = True

    def scripts(self) -> list[dict[str, Any]]:
        """The card's regex scripts (``data.extensions.regex_scripts``) as copies, in order, each with the
        SillyTavern keys as stored (``scriptName``, ``findRegex``, ``replaceString``, ``disabled`` …); [] when
        none. An item that is not an object is left out here but kept in the card."""
        rs = self.card.extensions.get("regex_scripts")
        return [copy.deepcopy(s) for s in rs if isinstance(s, dict)] if isinstance(rs, list) else []

    def set_script_enabled(self, index: int, enabled: bool) -> None:
        """Turn regex script ``index`` (as :meth:`scripts` lists them) on or off (its ``disabled`` key; the rest of
        the script is kept). CardEditError for a bad index."""
        raw, pos = self._script_pos(index)
        raw[pos] = {**raw[pos], "disabled": not enabled}
        self._set_extension("regex_scripts", raw)

    def set_script(self, index: int, script: dict[str, Any]) -> None:
        """Replace regex script ``index`` with ``script`` (an edited copy from :meth:`scripts`). CardEditError
        for a bad index or a script that is not an object with text ``findRegex``/``replaceString``."""
        if not isinstance(script, dict) or not all(isinstance(script.get(k, ""), str)
                                                   for k in ("scriptName", "findRegex", "replaceString")):
            raise CardEditError(message("cardedit.bad_script"))
        raw, pos = self._script_pos(index)
        raw[pos] = copy.deepcopy(script)
        self._set_extension("regex_scripts", raw)

    def set_avatar(self, image: bytes) -> None:
        """Use ``image`` (PNG or APNG bytes; crop it first — the window's job) as the card's picture. The chunks
        of the card's current picture that describe no pixels (text chunks, private chunks marked safe to copy —
        the PNG rule for an edited image) are carried over; the card's own ``chara``/``ccv3`` chunks are rewritten
        at :meth:`save`. Written to ``original.png`` beside the card by :meth:`save` (the previous one kept as a
        version). Pillow is not a dependency, so JPEG/WebP are refused (``cardedit.avatar_not_png``): the window
        converts them with Qt first. CardEditError for anything that is not a readable PNG, or over 32 MiB."""
        from .png import iter_chunks

        if len(image) > MAX_AVATAR_BYTES:
            raise CardEditError(message("cardedit.avatar_big", max=MAX_AVATAR_BYTES // (1024 * 1024)))
        if not image.startswith(PNG_SIGNATURE):
            raise CardEditError(message("cardedit.avatar_not_png", kind=sniff_foreign(image[:16]) or "?"))
        import io

        try:
            list(iter_chunks(io.BytesIO(image), len(image), "avatar"))
        except CardError:
            raise CardEditError(message("cardedit.avatar_broken")) from None
        self._avatar = carry_chunks(self._current_picture(), image)
        self.dirty = True

    def avatar(self) -> Optional[bytes]:
        """The card's picture as PNG bytes (the one set by :meth:`set_avatar` and not saved yet, else
        :func:`.export.card_image`), or None (the default picture is drawn)."""
        return self._avatar if self._avatar is not None else self._current_picture()

    def _current_picture(self) -> Optional[bytes]:
        from .export import card_image

        return card_image(self.card)

    # -- checking, counting, saving -------------------------------------------------------------------------
    def problems(self) -> list[FieldProblem]:
        """Everything that would make :meth:`save` refuse, as (key, message): an empty name, an over-long value,
        a list too long, a card over the size limit. [] when the card can be saved."""
        out: list[FieldProblem] = []
        for spec in FIELDS:
            try:
                value = self.get(spec.key)
                if spec.kind == "list":
                    self._check_count(spec.key, len(value))
                    for i, v in enumerate(value):
                        _check_text(spec, f"{spec.key}.{i}", v)
                elif spec.kind in ("text", "line"):
                    _check_text(spec, spec.key, value)
            except CardEditError as e:
                out.append(FieldProblem(spec.key, e.args[0]))
        if not self.card.name.strip():
            out.append(FieldProblem("name", message("cardedit.name_empty")))
        return out

    def blocking_problems(self) -> list[FieldProblem]:
        """The :meth:`problems` that stop :meth:`save`: those of the fields set since opening (and an empty name).
        An odd value the card came with (a tag of two lines …) is shown by :meth:`problems` but never stops a save
        of other fields: what the editor did not touch is written back as it was."""
        return [p for p in self.problems() if p.key in self._edited or p.msg.key == "cardedit.name_empty"]

    def tokens(self, counter: Any = None) -> TokenReport:
        """Token counts (:class:`TokenReport`) with ``counter`` — anything with ``text(str) -> int``: the chat's
        ``TokenCounter`` (``chat.window.tokens``, :mod:`liyuan_desktop.core.prompt.tokens`, calibrated by the
        server's usage numbers), or None for the estimate every chat starts from (that counter before any usage:
        ``llm.usage.estimate_text_tokens``, rounded)."""
        tc = counter if counter is not None else _Estimate()
        report = TokenReport()
        for spec in FIELDS:
            if spec.kind in ("int", "float", "choice"):
                continue
            value = self.get(spec.key)
            if spec.kind == "list":
                counts = [tc.text(v) for v in value]
                for i, n in enumerate(counts):
                    report.fields[f"{spec.key}.{i}"] = n
                n = sum(counts)
            else:
                n = tc.text(value)
            report.fields[spec.key] = n
            if spec.prompt:
                report.total += n
            if spec.permanent:
                report.permanent += n
        return report

    def document(self) -> dict[str, Any]:
        """The card JSON :meth:`save` writes: :func:`.export.export_json` of the edited card (a V1 card as V2)."""
        from .export import as_spec, export_json

        obj = export_json(self.card)
        if "talkativeness" in self._edited and "talkativeness" in obj:  # SillyTavern mirrors it at the root too
            obj["talkativeness"] = self.card.extensions.get("talkativeness")
        return as_spec(obj, "v2") if self.card.spec == "v1" and self.card.raw else obj

    def save(self) -> Path:
        """Write the edited card to :attr:`path` as a new version: the files it replaces are first copied to
        ``versions/<id>/`` beside it (newest :data:`KEEP_VERSIONS` kept), then written atomically (``card.json``;
        ``original.png`` when the avatar was set, carrying the card's ``chara``/``ccv3`` chunks so the picture is a
        card too; ``liyuan.json``'s linked books when set). Reloads :attr:`card` from the file. Returns the path.
        CardEditError listing the first problem (:meth:`problems`) or for a card over the size limit; OSError when
        the disk refuses (the old files stay)."""
        from .export import card_json_bytes, export_png

        bad = self.blocking_problems()
        if bad:
            raise CardEditError(message("cardedit.cannot_save", key=bad[0].key, msg=bad[0].msg))
        doc = self.document()
        blob = card_json_bytes(doc, indent=2)
        if len(blob) > MAX_CARD_BYTES:
            raise CardEditError(message("cardedit.card_big", mib=len(blob) // (1024 * 1024),
                                        max=MAX_CARD_BYTES // (1024 * 1024)))
        folder = self.path.parent
        picture = None
        if self._avatar is not None:
            picture = export_png(card_from_json(doc, str(self.path)), self._avatar)
        keep = [self.path] + ([folder / AVATAR_FILE] if picture is not None else [])
        _save_version(folder, [p for p in keep if p.is_file()])
        atomic_write_bytes(self.path, blob)
        if picture is not None:
            atomic_write_bytes(folder / AVATAR_FILE, picture)
        if self._book_links is not None:
            from .meta import set_card_linked_books

            set_card_linked_books(folder, self._book_links)
        self.card = load_card(self.path)
        self._avatar = None
        self.dirty = False
        self._edited.clear()
        return self.path

    # -- internals ------------------------------------------------------------------------------------------
    def _put(self, key: str, value: Any, edited: str = "") -> None:
        self.card = self.card.model_copy(update={key: value})
        self._edited.add(edited or key)
        self.dirty = True

    def _list(self, key: str) -> list[str]:
        if key not in ("alternate_greetings", "tags"):
            raise CardEditError(message("cardedit.not_list", key=key))
        return list(getattr(self.card, key))

    @staticmethod
    def _index(key: str, items: list[Any], i: int) -> int:
        if not 0 <= i < len(items):
            raise CardEditError(message("cardedit.bad_index", key=key, i=i, n=len(items)))
        return i

    @staticmethod
    def _check_count(key: str, n: int) -> None:
        if n > MAX_LIST_ITEMS:
            raise CardEditError(message("cardedit.too_many", key=key, max=MAX_LIST_ITEMS))

    def _set_extension(self, name: str, value: Any) -> None:
        ext = dict(self.card.extensions)  # shallow: the other extensions stay the very same objects
        ext[name] = value
        self._put("extensions", ext, {"depth_prompt": "depth_prompt.prompt"}.get(name, name))

    def _depth_prompt(self) -> dict[str, Any]:
        dp = self.card.extensions.get("depth_prompt")
        return dp if isinstance(dp, dict) else {}

    def _set_depth_prompt(self, spec: FieldSpec, key: str, value: Any) -> None:
        part = key.split(".", 1)[1]
        if part == "prompt":
            new: Any = _check_text(spec, key, value)
        elif part == "depth":
            new = int(_number(spec, key, value))
        else:
            new = str(value).strip().lower()
            if new not in spec.choices:
                raise CardEditError(message("cardedit.bad_choice", key=key, value=str(value)[:40],
                                            choices=", ".join(spec.choices)))
        dp = {"prompt": "", "depth": 4, "role": "system", **self._depth_prompt()}  # SillyTavern's defaults
        dp[part] = new
        self._set_extension("depth_prompt", dp)

    def _script_pos(self, index: int) -> tuple[list[Any], int]:
        """A copy of the raw script list and the position in it of script ``index`` (objects counted only)."""
        rs = self.card.extensions.get("regex_scripts")
        raw = list(rs) if isinstance(rs, list) else []
        positions = [i for i, s in enumerate(raw) if isinstance(s, dict)]
        if not 0 <= index < len(positions):
            raise CardEditError(message("cardedit.bad_index", key=f"regex_scripts.{index}", i=index,
                                        n=len(positions)))
        return raw, positions[index]


class _Estimate:
    """The chats' token estimate before calibration (``prompt.tokens.TokenCounter`` with ratio 1, whose one rule
    lives in ``llm.usage``: cards may not import the prompt layer)."""

    def text(self, text: str) -> int:
        from ..llm.usage import estimate_text_tokens

        return round(estimate_text_tokens(text))


# -- the picture ----------------------------------------------------------------------------------------------

#: Chunks that describe the pixels (or their animation): they come from the new image, never from the old one.
_IMAGE_CHUNKS = {b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"iCCP", b"sBIT", b"bKGD",
                 b"hIST", b"sPLT", b"pHYs", b"acTL", b"fcTL", b"fdAT", b"cICP", b"mDCV", b"cLLI", b"eXIf", b"tIME"}


def carry_chunks(old: Optional[bytes], new: bytes) -> bytes:
    """``new`` (a PNG) with the chunks of ``old`` (the card's previous PNG, or None) that describe no pixels added
    before its ``IEND``: text chunks (tEXt/zTXt/iTXt — an image tool's notes, ``chara-ext-asset_`` assets) and
    private ancillary chunks with the safe-to-copy bit, byte for byte, unless ``new`` has a text chunk of the same
    keyword. The card chunks (``chara``/``ccv3``) are left to the card writer. Chunks that are not safe to copy
    are dropped, as the PNG specification requires of an editor that changed the image. CardError for an
    unreadable ``new``; a broken ``old`` carries nothing."""
    import io

    from .png import CARD_KEYWORDS, TEXT_TYPES, iter_chunks

    def keyword(blob: bytes, start: int, length: int) -> bytes:
        head = blob[start + 8:start + 8 + min(length, 80)]
        return head.split(b"\x00", 1)[0].lower()

    new_chunks = list(iter_chunks(io.BytesIO(new), len(new), "avatar"))
    if old is None:
        return new
    try:
        old_chunks = list(iter_chunks(io.BytesIO(old), len(old), "old"))
    except CardError:
        return new
    have = {keyword(new, c.start, c.length) for c in new_chunks if c.type in TEXT_TYPES}
    card_kw = {k.encode("latin-1") for k in CARD_KEYWORDS}
    carried: list[bytes] = []
    for c in old_chunks:
        if c.type in _IMAGE_CHUNKS:
            continue
        if c.type in TEXT_TYPES:
            kw = keyword(old, c.start, c.length)
            if kw in card_kw or kw in have:
                continue
        elif not (c.type[0] & 0x20 and c.type[3] & 0x20):  # critical, or not safe to copy
            continue
        carried.append(old[c.start:c.end])
    if not carried:
        return new
    end = next((c for c in new_chunks if c.type == b"IEND"), None)
    cut = end.start if end is not None else len(new)
    from .png import make_chunk

    return new[:cut] + b"".join(carried) + (new[cut:] if end is not None else make_chunk(b"IEND", b""))


# -- versions -------------------------------------------------------------------------------------------------


def _save_version(folder: Path, files: list[Path]) -> Optional[Path]:
    """Copy ``files`` into a new ``versions/<id>/`` of ``folder``; drop the oldest beyond :data:`KEEP_VERSIONS`."""
    if not files:
        return None
    root = folder / VERSIONS_DIR
    t = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(t)) + f"-{int(t * 1000) % 1000:03d}"
    dest = root / stamp
    n = 2
    while dest.exists():
        dest = root / f"{stamp}-{n}"
        n += 1
    tmp = root / f".{dest.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in files:
        shutil.copyfile(f, tmp / f.name)
    os.replace(tmp, dest)  # a version appears whole or not at all
    for old in [v for v in list_versions(folder)][KEEP_VERSIONS:]:
        shutil.rmtree(old.path, ignore_errors=True)
    return dest


def _version_ms(folder: Path) -> int:
    """When the version in ``folder`` was saved, in ms since the epoch: read from its id (UTC
    ``YYYYMMDD-HHMMSS-mmm``, made from ``time.time()``), or the folder's mtime for a folder not named so."""
    m = re.fullmatch(r"(\d{8}-\d{6})-(\d{3})(?:-\d+)?", folder.name)
    if m is None:
        return int(folder.stat().st_mtime * 1000)
    secs = calendar.timegm(time.strptime(m.group(1), "%Y%m%d-%H%M%S"))
    return secs * 1000 + int(m.group(2))


def list_versions(card_dir: str | Path) -> list[CardVersion]:
    """The saved versions of the card in ``card_dir``, newest first (:class:`CardVersion`); [] when none."""
    root = Path(card_dir) / VERSIONS_DIR
    if not root.is_dir():
        return []
    out = []
    for d in root.iterdir():
        if d.name.startswith(".") or not d.is_dir():
            continue
        files = sorted(p.name for p in d.iterdir() if p.is_file())
        if not files:
            continue
        out.append(CardVersion(id=d.name, path=str(d), saved_ms=_version_ms(d), files=files))
    out.sort(key=lambda v: v.id, reverse=True)
    return out


def restore_version(card_dir: str | Path, version_id: str) -> Path:
    """Put version ``version_id`` of the card in ``card_dir`` back (its ``card.json`` and/or ``original.png``);
    what it replaces is saved as a new version first, so a restore can be undone too. Returns the folder's
    ``card.json`` (a standalone ``x.json`` card has its versions beside it too, restored by their file names).
    CardEditError (``cardedit.no_version``) for an unknown id or a version whose card does not load; OSError."""
    folder = Path(card_dir)
    found = next((v for v in list_versions(folder) if v.id == version_id), None)
    if found is None:
        raise CardEditError(message("cardedit.no_version", id=version_id[:60]))
    src = Path(found.path)
    for f in found.files:
        if f.endswith(".json"):
            load_card(src / f)  # CardError: never restore a card that does not read
    _save_version(folder, [folder / f for f in found.files if (folder / f).is_file()])
    for f in found.files:
        atomic_write_bytes(folder / f, (src / f).read_bytes())
    return folder / CARD_FILE


# -- creating, greetings, chats -------------------------------------------------------------------------------


def create_card(name: str, fields: Optional[dict[str, Any]] = None,
                base: Optional[dict[str, Any]] = None) -> CardEditor:
    """A new card in the library, saved: ``cards/<name>/card.json`` (a numbered folder when the name is taken).
    ``base``: a card JSON to start from (V2/V3, e.g. ``--from-json`` of a whole card; kept losslessly, its name
    replaced by ``name``), else :func:`new_card_json`. ``fields``: values by field key (:meth:`CardEditor.set`;
    a nested ``{"depth_prompt": {"depth": 2}}`` is accepted too). Returns the editor on the saved card.
    CardEditError for a bad name, field or value (nothing is written then); CardError for a ``base`` that is not
    a card; OSError."""
    from .export import card_json_bytes
    from .library import cards_root, numbered_name

    raw = copy.deepcopy(base) if base is not None else new_card_json(name)
    card = card_from_json(raw, "")
    ed = CardEditor(card, Path("."))
    ed.set("name", name)
    for key, value in _flatten(fields or {}):
        ed.set(key, value)
    bad = ed.blocking_problems()
    if bad:
        raise CardEditError(message("cardedit.cannot_save", key=bad[0].key, msg=bad[0].msg))
    root = cards_root()
    folder = root / numbered_name(safe_name(name), lambda n: (root / n).exists())
    folder.mkdir(parents=True)
    path = folder / CARD_FILE
    atomic_write_bytes(path, card_json_bytes(ed.document(), indent=2))
    return CardEditor.open(path)


def _flatten(fields: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in fields.items():
        if k == "depth_prompt" and isinstance(v, dict):
            out += [(f"depth_prompt.{sub}", x) for sub, x in v.items()]
        else:
            out.append((str(k), v))
    return out


def with_greeting(card: Card, n: int) -> Card:
    """``card`` with greeting ``n`` as its first message: 0 the first message itself, 1… alternate greeting n (the
    others follow as alternates, in order) — what ``liyuan card preview --greeting N`` shows, as SillyTavern's
    swipe n of message 0. CardEditError (``cardedit.no_greeting``) for a number the card does not have."""
    greetings = [card.first_mes, *card.alternate_greetings]
    if not 0 <= n < len(greetings):
        raise CardEditError(message("cardedit.no_greeting", n=n, max=len(greetings) - 1))
    if n == 0:
        return card
    rest = greetings[:n] + greetings[n + 1:]
    return card.model_copy(update={"first_mes": greetings[n], "alternate_greetings": rest})


def card_stamp(path: str | Path) -> Optional[str]:
    """What tells that a card file changed: the SHA-256 of its bytes (hex), or None when it cannot be read. A
    content hash, not (mtime, size): two saves within the file system's timestamp granularity (a few ms on a
    coarse kernel clock) with the same size left the older stamp equal and the edit unseen."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def edited_since(card_path: str | Path, since_ms: int) -> bool:
    """Whether the card at ``card_path`` was saved by the editor (a version was made) at or after ``since_ms`` (ms
    since the epoch, e.g. the last entry of a chat): a reopened chat then says it plays the edited card. The save's
    time is the version's id (taken from the same clock as the session's timestamps), not the folder's mtime, which
    the kernel's coarse clock can put a few ms before the save."""
    if not card_path:
        return False
    folder = Path(card_path).parent
    versions = list_versions(folder)
    return bool(versions) and versions[0].saved_ms >= since_ms


def edited_notice(card_name: str) -> Msg:
    """The notice a chat shows on the beat that first uses an edited card (``card.edited_notice``)."""
    return message("card.edited_notice", name=card_name)


def _json_fields(text: str, label: str) -> dict[str, Any]:
    """``--from-json`` text as a dict (a card JSON or a field map). CardEditError for anything else."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise CardEditError(message("cardedit.bad_json", file=label, error=str(e)[:80])) from None
    if not isinstance(obj, dict):
        raise CardEditError(message("cardedit.bad_json", file=label, error="not an object"))
    return obj


def fields_or_card(text: str, label: str) -> tuple[Optional[dict[str, Any]], dict[str, Any]]:
    """Read a ``--from-json`` file: a whole card (``spec``/``data``: returned as the base, fields {}) or a map of
    field keys to values (base None). CardEditError for invalid JSON, not an object, or (for a field map) an
    unknown key."""
    obj = _json_fields(text, label)
    if isinstance(obj.get("data"), dict) or str(obj.get("spec", "")).startswith("chara_card"):
        return obj, {}
    for key, _v in _flatten(obj):
        field_spec(key)
    return None, obj
