"""Character cards: reading (JSON, PNG/APNG, CHARX), the normalised :class:`Card`, lossless export and inspection.

Reading follows SillyTavern (see ../shared/design/cards.md §1):

* JSON V1 (flat, no ``spec``), V2 (``spec: "chara_card_v2"``) and V3 (``spec: "chara_card_v3"``): the fields are
  read from ``data.*`` first, with the root as fallback (SillyTavern writes the V1 fields at the root too, some
  generators copy ``character_book``/``extensions`` there). Pygmalion-style keys (``char_name``,
  ``char_persona``, ``char_greeting``, ``world_scenario``, ``example_dialogue``) are read as V1.
* PNG/APNG: the card in a ``ccv3`` (wins) or ``chara`` text chunk, see :mod:`.png`.
* CHARX: ``card.json`` in a zip plus ``embeded://`` assets, see :mod:`.charx`.

The file type is sniffed from the content, never from the extension; a JPEG/WEBP/GIF/… is named in the error
("这是 JPEG 图片，不是 PNG 角色卡"). A SillyTavern chat-completion preset, a World Info file, a ``lorebook_v3``
export or a chat log is refused with a message saying what it is. Every failure is a :class:`CardError` whose
text is ONE Chinese line naming the file.

Nothing is lost: :attr:`Card.raw` is the card JSON exactly as read (unknown keys at every level), and
:func:`export_json` / :func:`export_png` (in :mod:`.export`) start from it, applying only the fields that were
deliberately changed on the :class:`Card`. :func:`inspect_card` (in :mod:`.inspect`) summarises a card file.
:class:`CardEditor` / :func:`create_card` (in :mod:`.edit`) create and edit cards: every field of SillyTavern's
character panel, saved losslessly as a new version.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, Field

from ..lazy_exports import lazy_exports
from ..lore import Lorebook
from ..messages import Msg, MsgText, message, render
from ._common import (
    MAX_CARD_BYTES,
    PNG_SIGNATURE,
    CardError,
    MiB,
    fail,
    is_zip_head,
    parse_json_bytes,
    shown,
    sniff_foreign,
)

_TEXT_FIELDS = (
    "name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes",
    "system_prompt", "post_history_instructions", "creator", "character_version",
)
#: Fields the normaliser reads; :func:`export_json` writes a field back only when the Card's value differs from
#: what these keys of ``raw`` normalise to (a deliberate edit).
CARD_FIELDS = _TEXT_FIELDS + ("alternate_greetings", "tags", "extensions", "character_book")
#: Other spellings of a field at the root: SillyTavern's V1 ``creatorcomment``, Pygmalion/Gradio keys.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "creator_notes": ("creatorcomment",),
    "name": ("char_name",),
    "description": ("char_persona",),
    "first_mes": ("char_greeting",),
    "scenario": ("world_scenario",),
    "mes_example": ("example_dialogue",),
}
_CARD_HINTS = ("description", "first_mes", "personality", "scenario", "mes_example", "char_name", "char_persona",
               "char_greeting")
#: The foreign file kinds that are images (a plain name, or a catalog message by its key: ``filekind.ico``).
_IMAGE_TYPES = {"JPEG", "GIF", "WEBP", "BMP", "TIFF", "AVIF", "HEIC", "filekind.ico"}


class Card(BaseModel):
    """A character card, normalised for the engine.

    Text fields are always ``str`` (missing → ""), ``alternate_greetings``/``tags`` lists of ``str``,
    ``extensions`` a dict, ``character_book`` the card's book dict or None (``null``, ``{"entries": null}`` or a
    malformed book → None). ``spec`` is "v1" | "v2" | "v3"; ``source_format`` "json" | "png" | "charx";
    ``assets`` the embedded assets by the URI used in ``data.assets`` (``embeded://…`` for CHARX,
    ``__asset:…`` for PNG ``chara-ext-asset_`` chunks) → bytes; ``raw`` the card JSON exactly as read;
    ``warnings`` one-line notes about what was repaired or ignored (catalog messages, their keys kept); ``path`` the file it came from."""

    name: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    creator: str = ""
    character_version: str = ""
    alternate_greetings: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    extensions: dict[str, Any] = Field(default_factory=dict)
    character_book: Optional[dict[str, Any]] = None
    spec: str = "v1"
    source_format: str = "json"
    path: str = ""
    raw: dict[str, Any] = Field(default_factory=dict)
    assets: dict[str, bytes] = Field(default_factory=dict)
    warnings: list[MsgText] = Field(default_factory=list)

    @property
    def lorebook(self) -> Lorebook:
        """The card's embedded book (empty when the card has none). Entries with values the engine's model cannot
        take (string ids, a string for ``keys``, non-numeric order …) are coerced on a copy; ``raw`` is untouched."""
        return Lorebook.from_card_book(_engine_book(self.character_book), name=self.name)

    @property
    def persona_name(self) -> str:
        """Persona name suggested by the card (``extensions.liyuan.persona.name``), else ""."""
        p = (self.extensions.get("liyuan") or {}).get("persona") or {}
        return str(p.get("name") or "") if isinstance(p, dict) else ""

    @property
    def language(self) -> str:
        """Prose language of the card: ``extensions.liyuan.language`` when set, else guessed from the opening and the
        description — "ja" when kana are a visible share of the letters, "en" when Latin letters clearly outnumber
        CJK characters, else "zh" (an English SillyTavern card is played in English, not told to write Chinese)."""
        lj = self.extensions.get("liyuan") or {}
        chosen = lj.get("language") if isinstance(lj, dict) else None
        if chosen:
            return str(chosen)
        text = f"{self.first_mes}\n{self.description}"[:6000]
        kana = sum(1 for ch in text if "\u3040" <= ch <= "\u30ff")
        cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
        latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
        if kana and kana * 5 >= kana + cjk:
            return "ja"
        if latin > 4 * max(cjk, 1) and latin > 40:
            return "en"
        return "zh"


def _engine_book(book: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """``book`` with entries coerced to what :meth:`Lorebook.from_card_book` accepts (copies only what changes)."""
    if not isinstance(book, dict):
        return None
    entries = book.get("entries")
    if isinstance(entries, dict):
        entries = list(entries.values())
    if not isinstance(entries, list):
        return {**book, "entries": []}
    fixed: list[Any] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            continue
        patch: dict[str, Any] = {}
        for k in ("id", "uid"):
            if k in e and not _intlike(e[k]):
                patch[k] = i
        for k in ("insertion_order", "order"):
            if k in e and not _intlike(e[k]):
                patch[k] = 100
        for k in ("keys", "key", "secondary_keys", "keysecondary"):
            v = e.get(k)
            if isinstance(v, str):
                patch[k] = [v] if v else []
            elif v is not None and not isinstance(v, list):
                patch[k] = []
        if "case_sensitive" in e and not isinstance(e["case_sensitive"], (bool, type(None))):
            patch["case_sensitive"] = None
        if "extensions" in e and not isinstance(e["extensions"], dict):
            patch["extensions"] = {}
        fixed.append({**e, **patch} if patch else e)
    return {**book, "entries": fixed}


def _intlike(v: Any) -> bool:
    if v is None:
        return True
    try:
        int(v)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _label(path: str) -> str:
    """How an error names the file: its name, else the word "card" (``cardfile.label``, in the user's language)."""
    return Path(path).name if path and path != "角色卡" else message("cardfile.label")


def _fallback_name(path: str) -> str:
    """A card's name when the card names nobody: its library folder's name, else its file's stem, else 「未命名」 /
    "Untitled" in the reader's language (core.paths.reader_language; what the card list and a new folder show)."""
    p = Path(path) if path else None
    if p is not None and p.name.lower() == "card.json" and p.parent.name:  # a library folder: <card>/card.json
        return p.parent.name
    if p is not None and p.stem:
        return p.stem
    from ..paths import reader_language  # (paths imports the card models' package lazily too)

    return render(message("name.untitled"), reader_language())


def not_a_card(obj: dict[str, Any]) -> Optional[Msg]:
    """What a JSON object is when it is clearly not a character card (a ``cardfile.is.*`` catalog message, "这是 …，
    不是角色卡" / "This is …, not a card"), else None.

    Recognised: SillyTavern chat-completion presets (``prompts``/``prompt_order``, or sampler keys with no card
    fields), text-completion/instruct presets, World Info files (``entries`` and no card fields), ``lorebook_v3``
    exports, chat-log headers; anything with none of the card keys."""
    spec = obj.get("spec")
    if spec == "lorebook_v3":
        return message("cardfile.is.lorebook_v3")
    data = obj.get("data")
    if isinstance(spec, str) and spec.startswith("chara_card") and isinstance(data, dict):
        return None
    strong = any(k in obj for k in _CARD_HINTS) or (isinstance(data, dict) and any(k in data for k in ("name", *_CARD_HINTS)))
    if strong:
        return None
    if "prompts" in obj or "prompt_order" in obj or "chat_completion_source" in obj:
        return message("cardfile.is.cc_preset")
    if any(k in obj for k in ("input_sequence", "output_sequence", "story_string", "system_sequence")):
        return message("cardfile.is.instruct")
    if isinstance(obj.get("entries"), (dict, list)):
        return message("cardfile.is.world_info")
    if "user_name" in obj or "character_name" in obj:
        return message("cardfile.is.chat")
    if "name" in obj and not any(k in obj for k in ("temperature", "top_p", "rep_pen", "genamt", "max_length")):
        return None  # a bare V1 card with only a name
    if any(k in obj for k in ("temperature", "top_p", "rep_pen", "genamt", "max_length")):
        return message("cardfile.is.sampler")
    return message("cardfile.no_fields")


def card_data(obj: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The ``data`` object the fields are read from: ``obj["data"]`` for a V2/V3 card (``spec`` starting with
    ``chara_card``, or no spec but card fields only under ``data``), else None (a flat V1 card)."""
    data = obj.get("data")
    if not isinstance(data, dict):
        return None
    spec = obj.get("spec")
    if isinstance(spec, str) and spec.startswith("chara_card"):
        return data
    if not any(isinstance(obj.get(k), str) and obj.get(k) for k in ("name", "description", "first_mes")) and \
            any(k in data for k in ("name", *_CARD_HINTS)):
        return data
    return None


def _pick(obj: dict[str, Any], data: Optional[dict[str, Any]], key: str) -> Any:
    """``data[key]`` when present and not null, else the root key, else a root alias (``creatorcomment`` …)."""
    if data is not None and data.get(key) is not None:
        return data[key]
    if obj.get(key) is not None:
        return obj[key]
    for alias in FIELD_ALIASES.get(key, ()):
        if obj.get(alias) is not None:
            return obj[alias]
    return None


def card_from_json(obj: Any, path: str = "", *, source_format: str = "json") -> Card:
    """Normalise a parsed card JSON object into a :class:`Card` (``raw`` = ``obj``, not copied).

    ``data.*`` first, root as fallback (SillyTavern). Empty or missing name → the file name (for
    ``<folder>/card.json`` the folder name) with a warning. ``character_book: null`` or ``{entries: null}`` → no
    book; wrongly typed values are ignored with a warning. V3 ``spec_version`` ≥ 4 gives a warning (the spec says
    warn, not reject). Raises :class:`CardError` when ``obj`` is not an object or is clearly something else
    (preset, World Info, chat — see :func:`not_a_card`)."""
    label = _label(path)
    if not isinstance(obj, dict):
        kind = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}.get(
            type(obj), "null" if obj is None else "")
        raise fail(label, message("cardfile.top." + kind) if kind else message("cardfile.top", kind=type(obj).__name__))
    what = not_a_card(obj)
    if what:
        raise fail(label, what)
    warnings: list[Msg] = []
    spec_raw = obj.get("spec")
    spec = spec_raw if isinstance(spec_raw, str) else ""
    data = card_data(obj)
    if spec.startswith("chara_card") and data is None:
        warnings.append(message("cardwarn.v1_flat", spec=shown(spec)))
    elif data is not None and not spec:
        warnings.append(message("cardwarn.v2_no_spec"))
    fields: dict[str, Any] = {}
    for key in _TEXT_FIELDS:
        v = _pick(obj, data, key)
        if v is None:
            fields[key] = ""
        elif isinstance(v, str):
            fields[key] = v
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            fields[key] = str(v)
        else:
            fields[key] = ""
            warnings.append(message("cardwarn.not_text", key=key, type=type(v).__name__))
    if not fields["name"].strip():
        fields["name"] = _fallback_name(path)
        warnings.append(message("cardwarn.no_name", name=fields["name"]))
    greetings = _pick(obj, data, "alternate_greetings")
    alt: list[str] = []
    if isinstance(greetings, list):
        alt = [x for x in greetings if isinstance(x, str)]
        if len(alt) != len(greetings):
            warnings.append(message("cardwarn.greetings_items", n=len(greetings) - len(alt)))
    elif isinstance(greetings, str):
        alt = [greetings] if greetings.strip() else []
    elif greetings is not None:
        warnings.append(message("cardwarn.greetings"))
    tags_raw = _pick(obj, data, "tags")
    tags: list[str] = []
    if isinstance(tags_raw, list):
        tags = [str(x) for x in tags_raw if isinstance(x, (str, int)) and not isinstance(x, bool)]
    elif isinstance(tags_raw, str):
        tags = [t.strip() for t in tags_raw.split(",") if t.strip()]
    ext = _pick(obj, data, "extensions")
    if ext is not None and not isinstance(ext, dict):
        warnings.append(message("cardwarn.extensions", type=type(ext).__name__))
    book = _pick(obj, data, "character_book")
    if book is not None and not isinstance(book, dict):
        warnings.append(message("cardwarn.book", type=type(book).__name__))
        book = None
    elif isinstance(book, dict):
        entries = book.get("entries")
        if entries is None:
            book = None
        elif not isinstance(entries, (list, dict)):
            warnings.append(message("cardwarn.book_entries"))
            book = None
    if spec == "chara_card_v3":
        try:
            ver = float(str(obj.get("spec_version", "3.0")))
        except ValueError:
            ver = 3.0
        if ver >= 4.0:
            warnings.append(message("cardwarn.newer", v=shown(str(obj.get("spec_version")))))
    return Card(
        **fields,
        alternate_greetings=alt,
        tags=tags,
        extensions=ext if isinstance(ext, dict) else {},
        character_book=book,
        spec="v1" if data is None else {"chara_card_v2": "v2", "chara_card_v3": "v3"}.get(spec, "v2"),
        source_format=source_format,
        path=path,
        raw=obj,
        warnings=warnings,
    )


def _read_stream(f: Any, size: int, path: str, label: str) -> Card:
    from .charx import read_charx  # late: charx and png build Card objects, defined above in this module
    from .png import read_png_card

    if size == 0:
        raise fail(label, message("cardfile.empty"))
    f.seek(0)
    head = f.read(16)
    if head.startswith(PNG_SIGNATURE):
        png = read_png_card(f, size, label)
        card = card_from_json(png.card, path, source_format="png")
        card.assets = png.assets
        card.warnings = png.warnings + card.warnings
        return card
    foreign = sniff_foreign(head)
    if is_zip_head(head) or (foreign == "JPEG" and _has_zip_directory(f, size)):
        cx = read_charx(f, size, label)
        card = card_from_json(cx.card, path, source_format="charx")
        if isinstance(cx.card, dict) and not isinstance(cx.card.get("spec"), str):
            card.warnings.insert(0, message("cardwarn.charx_no_spec"))
        card.assets = cx.assets
        card.warnings = cx.warnings + card.warnings
        return card
    if foreign:
        if (foreign.key if isinstance(foreign, Msg) else foreign) in _IMAGE_TYPES:
            raise fail(label, message("cardfile.foreign_image", kind=foreign))
        raise fail(label, message("cardfile.foreign", kind=foreign))
    if size > MAX_CARD_BYTES:
        raise fail(label, message("cardfile.too_big", mib=size // MiB, max=MAX_CARD_BYTES // MiB))
    f.seek(0)
    data = f.read()
    start = data[3:].lstrip() if data.startswith(b"\xef\xbb\xbf") else data.lstrip()
    if not start.startswith((b"{", b"[", b'"')):
        unknown = b"\x00" in data[:4096]
        try:
            data[:4096].decode("utf-8")
        except UnicodeDecodeError as e:
            unknown = unknown or e.start < 4092  # (a multi-byte character cut at 4096 is not an error)
        if unknown:
            raise fail(label, message("cardfile.unknown_format"))
    obj = parse_json_bytes(data, label)
    return card_from_json(obj, path)


def _has_zip_directory(f: Any, size: int) -> bool:
    tail_len = min(size, 22 + 65535)
    f.seek(size - tail_len)
    return b"PK\x05\x06" in f.read(tail_len)


def load_card(path: str | Path) -> Card:
    """Read a card file: PNG/APNG, JSON (V1/V2/V3) or CHARX, sniffed from the content.

    Returns a :class:`Card` (``source_format`` set, ``path`` = ``str(path)``). Raises :class:`CardError` — one
    Chinese line starting with the file name — for a missing file, a folder, an empty file, another file type
    (JPEG/WEBP/GIF named), a broken container, invalid base64/UTF-8/JSON, JSON that is not a card object, a
    preset or a World Info file. Memory use is bounded by :data:`MAX_CARD_BYTES` plus CHARX assets; pixels are
    never decoded."""
    p = Path(path)
    label = p.name or str(p)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise fail(label, message("cardfile.folder"))
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
            raise fail(label, message("cardfile.not_regular"))
        f = open(p, "rb")
    except CardError:
        raise
    except FileNotFoundError:
        raise fail(label, message("cardfile.not_found")) from None
    except PermissionError:
        raise fail(label, message("cardfile.no_permission")) from None
    except OSError as e:
        raise fail(label, message("cardfile.cannot_read", error=shown(e.strerror or str(e)))) from None
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            return _read_stream(f, size, str(p), label)
        except OSError as e:
            raise fail(label, message("cardfile.read_error", error=shown(e.strerror or str(e)))) from None
        except MemoryError:
            raise fail(label, message("cardfile.no_memory")) from None


def load_card_bytes(data: bytes, filename: str = "角色卡") -> Card:
    """Like :func:`load_card` for bytes already in memory (drag-and-drop, downloads); ``filename`` names the card
    in messages and is the fallback name."""
    try:
        return _read_stream(io.BytesIO(data), len(data), filename, _label(filename))
    except MemoryError:
        raise fail(_label(filename), message("cardfile.no_memory_short")) from None


# Export and inspection are imported when first used (issue 15: start-up needs neither, and inspection brings the
# MVU initvar reader with yaml and json_repair).
__getattr__, __dir__ = lazy_exports(__name__, {
    "card_json_bytes": ".export", "export_json": ".export", "export_png": ".export", "icon_bytes": ".export",
    "format_inspect": ".inspect", "inspect_card": ".inspect", "inspect_loaded": ".inspect",
    "CardEditError": ".edit", "CardEditor": ".edit", "create_card": ".edit",
})
if TYPE_CHECKING:
    from .edit import CardEditError, CardEditor, create_card
    from .export import card_json_bytes, export_json, export_png, icon_bytes
    from .inspect import format_inspect, inspect_card, inspect_loaded

__all__ = ["CARD_FIELDS", "Card", "CardEditError", "CardEditor", "CardError", "card_data", "create_card", "card_from_json", "card_json_bytes", "export_json",
           "export_png", "format_inspect", "icon_bytes", "inspect_card", "inspect_loaded", "load_card",
           "load_card_bytes", "not_a_card"]
