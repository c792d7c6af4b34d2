"""The book: :class:`Lorebook` (an ordered list of :class:`~.model.LoreEntry` plus the scan settings SillyTavern keeps
globally), read from and written back to a card book or a World Info file (:mod:`.formats`), compiled once per
edit (:mod:`.compile`), activated (:mod:`.activation`) and searched (:mod:`.search`); :func:`merge_books` joins the
books attached to a chat.
"""

from __future__ import annotations

import copy
import json
import logging
import math
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from pydantic import BaseModel, Field, PrivateAttr

from ..messages import message
from . import bookcache as _bookcache
from .activation import PLAIN_RUN, ActivationOptions, ActivationResult
from .activation import activate as _activate
from .bookcache import STATS, RawFile, book_key, file_digest, file_key, gc_paused, load_rows, save_rows
from .budget import token_weight
from .compile import CompiledBook, EntryRec, compile_book, constant_recs
from .formats import (
    as_int,
    book_json,
    entry_parsed,
    entry_raw,
    export_entry,
    js_key_order,
    json_copy,
    new_entry,
    opt_int,
    parse_card_entry,
    parse_wi_entry,
)
from .model import ENTRY_EDITS, LoreEntry, ScanMessage
from .search import LoreHit
from .search import index_titles as _index_titles
from .search import list_titles as _list_titles
from .search import search_entries as _search_entries

log = logging.getLogger(__name__)

#: Books with at least this many entries are parsed once per content (:func:`.bookcache.book_key`): the parse is kept
#: as plain rows in memory (the ``_MEMO_MAX_BOOKS`` most recent) and on disk (:mod:`.bookcache`), and every caller
#: gets its own objects built from the rows. A 50,000-entry book was parsed four times per chat open, 2.5 s each
#: (issue 15 item 10). Smaller books parse as before.
_MEMO_MIN_ENTRIES = 1000
#: The run behind :meth:`Lorebook.activate`: timed effects neither read nor written.
_DRY_RUN = ActivationOptions(dry_run=True)
_MEMO_MAX_BOOKS = 4
#: A parsed book in compact rows (:func:`_to_rows`): a 7-tuple kept in memory and written to the disk cache.
Rows = tuple[Any, ...]

_PARSED_MEMO: dict[str, Rows] = {}


_ENTRY_FIELDS = tuple(LoreEntry.model_fields)


def _to_rows(lb: "Lorebook", raw_entries: Any) -> Rows:
    """``lb`` (just parsed from ``raw_entries``, the book's entry list or World-Info entry dict) as compact plain
    rows: the book's field and private values, and per entry a tuple of its field values (model field order), its
    set-field names and the names it was read with (one shared frozenset/tuple per distinct set, so pickle stores
    each once), its extras, kind, the values as read that differ from its fields, and where in ``raw_entries`` it
    was read from (index or key). Values are shared, not copied (the model's rule: lists are replaced, never
    mutated in place)."""
    if isinstance(raw_entries, dict):
        ref = {id(v): k for k, v in raw_entries.items()}
    else:
        ref = {id(v): i for i, v in enumerate(raw_entries)}
    shared: dict[Any, Any] = {}
    ents = []
    for e in lb.entries:
        d = e.__dict__
        priv = e.__pydantic_private__ or {}
        extra = e.__pydantic_extra__ or None
        parsed = priv.get("_parsed")
        if tuple(d) == _ENTRY_FIELDS:
            vals: Any = tuple(d.values())
        else:  # not expected (pydantic keeps field order); stored as a dict then
            vals = dict(d)
        fs = frozenset(e.__pydantic_fields_set__)
        fs = shared.setdefault(fs, fs)
        pkeys = None
        diff: Optional[dict[str, Any]] = None
        if isinstance(parsed, dict):
            pkeys = tuple(parsed)
            pkeys = shared.setdefault(pkeys, pkeys)
            changed: dict[str, Any] = {}
            for k, v in parsed.items():
                if k in d:
                    cur = d[k]
                elif extra and k in extra:
                    cur = extra[k]
                else:
                    changed[k] = v
                    continue
                if cur is not v and (type(cur) is not type(v) or cur != v):
                    changed[k] = v
            diff = changed or None
        ents.append((vals, fs, None if extra is None else dict(extra), priv.get("_kind"), pkeys, diff,
                     ref.get(id(priv.get("_raw")))))
    book = {k: v for k, v in lb.__dict__.items() if k != "entries"}
    priv = lb.__pydantic_private__ or {}
    return (book, frozenset(lb.__pydantic_fields_set__), priv.get("_kind"), priv.get("_parsed"),
            priv.get("_entry_keys"), list(priv.get("_load_warnings") or []), ents)


#: Per shared "names read" tuple of the rows: an ``operator.itemgetter`` over the entry's fields when every name is
#: a model field (the common case), else None (then the slow per-name path). Keyed by the tuple itself.
_PARSED_GETTERS: dict[tuple[str, ...], Any] = {}
_FIELD_SET = frozenset(_ENTRY_FIELDS)


def _getter(pkeys: tuple[str, ...]) -> Any:
    g = _PARSED_GETTERS.get(pkeys, False)
    if g is False:
        g = None
        if len(pkeys) >= 2 and _FIELD_SET.issuperset(pkeys):
            g = itemgetter(*pkeys)
        if len(_PARSED_GETTERS) > 256:
            _PARSED_GETTERS.clear()
        _PARSED_GETTERS[pkeys] = g
    return g


def _values_read(d: dict[str, Any], pkeys: tuple[str, ...], diff: Optional[dict[str, Any]], extra: Optional[dict[str, Any]],
                 getter: Callable[[tuple[str, ...]], Any] = _getter) -> dict[str, Any]:
    """An entry's values as read (``_parsed``) from its row: the names ``pkeys`` taken from its field dict ``d``
    (fields as read), then ``extra``, with the row's differing values ``diff`` on top."""
    g = getter(pkeys)
    if g is not None:
        eparsed = dict(zip(pkeys, g(d)))
        if diff is not None:
            eparsed.update(diff)
        return eparsed
    eparsed = {}
    for k in pkeys:
        if diff is not None and k in diff:
            eparsed[k] = diff[k]
        elif k in d:
            eparsed[k] = d[k]
        else:
            eparsed[k] = extra[k] if extra and k in extra else None
    return eparsed


class _RowSource:
    """What an entry of a book opened from the rows cache (:meth:`Lorebook.from_file`) needs for export, kept
    undecoded until export asks (:func:`.formats.entry_raw`, :func:`.formats.entry_parsed`): its book file
    (:class:`.bookcache.RawFile`), its key or index there (``ref``), and its row's values as read. Immutable;
    copies of the entry share it."""

    __slots__ = ("file", "ref", "vals", "pkeys", "diff", "extra")
    file: RawFile
    ref: Any
    vals: Any
    pkeys: Optional[tuple[str, ...]]
    diff: Optional[dict[str, Any]]
    extra: Optional[dict[str, Any]]

    def __deepcopy__(self, memo: dict[int, Any]) -> "_RowSource":
        return self

    def raw(self) -> Optional[dict[str, Any]]:
        """The entry's JSON in its file (the file decoded once per book), or None (no place recorded, or the file
        changed since it was opened)."""
        if self.ref is None:
            return None
        book = book_json(self.file.get())
        ents = book.get("entries") if book is not None else None
        try:
            got = ents[self.ref] if ents is not None else None
        except (KeyError, IndexError, TypeError):
            return None
        return got if isinstance(got, dict) else None

    def parsed(self) -> Optional[dict[str, Any]]:
        """The entry's values as read (what ``_parsed`` holds for a parsed entry), or None."""
        if self.pkeys is None:
            return None
        vals = self.vals
        d = dict(zip(_ENTRY_FIELDS, vals)) if type(vals) is tuple else dict(vals)
        return _values_read(d, self.pkeys, self.diff, self.extra)


def _from_rows(rows: Rows, raw: Optional[dict[str, Any]], raw_entries: Any, lazy: Optional[RawFile] = None) -> "Lorebook":
    """A new, independent book straight from :func:`_to_rows` rows (as stored on disk; no validation: the rows are a
    parse's output) in one pass — each entry's field dict, its set fields, extras and values as read built once
    (issue 15 item 10: a warm open of a 50,000-entry book unpacked the rows, then copied them into entries: two
    passes). Its entries point back at ``raw_entries`` of ``raw`` (the JSON being opened, equal to the one parsed)
    for export; or, with ``lazy`` (``raw`` and ``raw_entries`` None: a book file opened without decoding it,
    :meth:`Lorebook.from_file`), at their place in the file's JSON, decoded when export asks
    (:func:`.formats.entry_raw`). Values are shared with the rows (lists are replaced, never mutated in place). A
    few µs per entry."""
    book, fields_set, kind, parsed, entry_keys, warnings, ents = rows
    new, sa = object.__new__, object.__setattr__
    entries: list[LoreEntry] = []
    append = entries.append
    fields = _ENTRY_FIELDS
    getter = _getter
    with gc_paused():
        for vals, fs, extra, ekind, pkeys, diff, ref in ents:
            d = dict(zip(fields, vals)) if type(vals) is tuple else dict(vals)
            e = new(LoreEntry)
            sa(e, "__dict__", d)
            sa(e, "__pydantic_fields_set__", set(fs))
            sa(e, "__pydantic_extra__", {} if extra is None else dict(extra))
            if lazy is None:
                eparsed = None if pkeys is None else _values_read(d, pkeys, diff, extra, getter)
                sa(e, "__pydantic_private__", {"_raw": None if ref is None else raw_entries[ref], "_kind": ekind,
                                               "_parsed": eparsed, "_lazy": None})
            else:
                src = new(_RowSource)
                src.file, src.ref, src.vals, src.pkeys, src.diff, src.extra = lazy, ref, vals, pkeys, diff, extra
                sa(e, "__pydantic_private__", {"_raw": None, "_kind": ekind, "_parsed": None, "_lazy": src})
            append(e)
        out = new(Lorebook)
        sa(out, "__dict__", {**book, "entries": entries})
        sa(out, "__pydantic_fields_set__", set(fields_set))
        sa(out, "__pydantic_extra__", None)
        sa(out, "__pydantic_private__", {"_raw": raw, "_kind": kind, "_parsed": parsed,
                                         "_entry_keys": None if entry_keys is None else list(entry_keys),
                                         "_load_warnings": list(warnings), "_compiled": None, "_lazy": lazy})
    ENTRY_EDITS[0] += 1
    STATS["built"] = STATS.get("built", 0) + 1
    return out


def _parsed_once(kind: str, raw: dict[str, Any], raw_entries: Any, name: str, source: str,
                 parse: Callable[[], "Lorebook"]) -> "Lorebook":
    """``parse()`` of a big book at most once per content: from the memory memo, else the disk cache, else parsed
    (and then stored in both). The memo keeps the compact rows; every call builds its own book from them in one
    pass (:func:`_from_rows`). The content key (:func:`.bookcache.book_key`, ~0.1 s for 20 MB of JSON) is computed
    once per call."""
    key = book_key(kind, raw, name, source)
    if key is None:
        return parse()
    rows = _PARSED_MEMO.pop(key, None)
    out: Optional[Lorebook] = None
    if rows is None:
        rows = load_rows(key)
        if rows is not None and not (isinstance(rows, tuple) and len(rows) == 7):
            rows = None  # a cache file of an unexpected shape: parse instead
    if rows is not None:
        try:
            out = _from_rows(rows, raw, raw_entries)
        except Exception:  # noqa: BLE001 - rows of an unexpected shape: parse instead
            rows = None
    if rows is None:
        with gc_paused():
            out = parse()
            rows = _to_rows(out, raw_entries)
        _keep_parsed(key, rows)
    else:
        _remember(key, rows)
    assert out is not None  # set by one of the two branches above
    return out


def _keep_parsed(key: str, rows: Any) -> None:
    """Count a book just parsed and keep its rows: in memory, and on disk when it is big enough to be worth it."""
    STATS["parsed"] = STATS.get("parsed", 0) + 1
    STATS["built"] = STATS.get("built", 0) + 1
    if len(rows[-1]) >= _bookcache.DISK_MIN_ENTRIES:
        save_rows(key, rows)
    _remember(key, rows)


def _copy_but_entries(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a book's JSON for export, its ``entries`` left as None in their place (export writes them anew):
    copying a 50,000-entry book's entries only to replace them cost seconds."""
    return {k: None if k == "entries" else json_copy(v) for k, v in raw.items()}


def _remember(key: str, rows: Rows) -> None:
    """Keep ``rows`` in the memory memo under ``key``, most recent last, at most ``_MEMO_MAX_BOOKS``."""
    _PARSED_MEMO[key] = rows
    while len(_PARSED_MEMO) > _MEMO_MAX_BOOKS:
        _PARSED_MEMO.pop(next(iter(_PARSED_MEMO)))


_COMPILE_FIELDS = frozenset({"entries", "name", "case_sensitive", "match_whole_words", "strategy"})


class Lorebook(BaseModel):
    """An ordered list of entries plus the scan settings SillyTavern keeps globally.

    Book order is the order titles are listed in. ``scan_depth``: how many of the newest messages are scanned
    (ST default 2). ``recursive`` (ST default on), ``case_sensitive`` (off), ``match_whole_words`` (on),
    ``include_names`` (on), ``use_group_scoring`` (off), ``max_recursion_steps`` / ``min_activations`` /
    ``min_activations_depth_max`` (0 = off), ``strategy`` (0 evenly, 1 character first, 2 global first).
    ``token_budget`` is the card book's value, informative only (ST ignores it; pass ``budget_tokens``).
    ``source``: where the book is attached ("card" | "chat" | "persona" | "global").
    """

    name: str = ""
    entries: list[LoreEntry] = Field(default_factory=list)
    scan_depth: int = 2
    extensions: dict[str, Any] = Field(default_factory=dict)
    description: str = ""
    token_budget: Optional[int] = None
    recursive: bool = True
    case_sensitive: bool = False
    match_whole_words: bool = True
    include_names: bool = True
    use_group_scoring: bool = False
    max_recursion_steps: int = 0
    min_activations: int = 0
    min_activations_depth_max: int = 0
    strategy: int = 1
    source: str = ""

    _raw: Optional[dict[str, Any]] = PrivateAttr(default=None)
    #: the chat's world-info budget in tokens for :meth:`fixed_constants` (None = none; set by the chat that
    #: reads this book: :meth:`set_constants_budget`)
    _constants_budget: Optional[int] = PrivateAttr(default=None)
    _kind: Optional[str] = PrivateAttr(default=None)
    _parsed: Optional[dict[str, Any]] = PrivateAttr(default=None)
    _entry_keys: Optional[list[str]] = PrivateAttr(default=None)  # WI: the entries' object keys as read
    _load_warnings: list[str] = PrivateAttr(default_factory=list)
    _compiled: Optional[CompiledBook] = PrivateAttr(default=None)
    #: the file whose JSON ``_raw`` is, not decoded yet (a book opened from the rows cache: :meth:`from_file`)
    _lazy: Optional[RawFile] = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _COMPILE_FIELDS:  # settings the compiled matchers depend on
            ENTRY_EDITS[0] += 1

    # -- loading --------------------------------------------------------------------------------------------
    @classmethod
    def from_card_book(cls, book: Optional[dict[str, Any]], name: str = "", source: str = "card") -> "Lorebook":
        """Build from a card's ``character_book`` (V2/V3 fields; SillyTavern extras under ``entry.extensions``, mapped
        as ST's ``convertCharacterBook``: e.g. missing ``enabled`` = disabled, missing ``selective`` = false, position
        from ``extensions.position`` else ``before_char``→0 / anything else→1). ``None`` or ``{"entries": null}`` is
        an empty book; a dict of entries (World Info shape) is read by :meth:`from_world_info`. Book-level
        ``scan_depth`` (positive int) and ``recursive_scanning`` (bool) become the book's settings."""
        if not book or not isinstance(book, dict):
            return cls(name=name, source=source)
        if book.get("spec") == "lorebook_v3" and isinstance(book.get("data"), dict):
            book = book["data"]
        if isinstance(book.get("entries"), dict):
            return cls.from_world_info(book, name=str(book.get("name") or name), source=source)
        entries_in = book.get("entries")
        if not isinstance(entries_in, list) or len(entries_in) < _MEMO_MIN_ENTRIES:
            return cls._parse_card_book(book, name, source)
        # a big book: opening a chat asks for the card's book several times — parse it once per content
        return _parsed_once("card", book, entries_in, name, source, lambda: cls._parse_card_book(book, name, source))

    @classmethod
    def _parse_card_book(cls, book: dict[str, Any], name: str, source: str) -> "Lorebook":
        """The parse behind :meth:`from_card_book` for a card-shaped (entry list) book, no memo."""
        raw_entries = _v if isinstance(_v := book.get("entries"), list) else []
        bname = str(book.get("name") or name)
        used = {as_int(e.get("id"), -1) for e in raw_entries if isinstance(e, dict) and e.get("id") is not None}
        next_id = 0
        entries: list[LoreEntry] = []
        warnings: list[str] = []
        for i, e in enumerate(raw_entries):
            if not isinstance(e, dict):
                warnings.append(message("bookwarn.entry_not_object", i=i + 1))
                continue
            if e.get("id") is not None and opt_int(e.get("id")) is not None:
                uid = as_int(e.get("id"), i)
            else:  # newer ST: the first id no other entry uses
                while next_id in used:
                    next_id += 1
                uid = next_id
                used.add(uid)
            if "enabled" not in e:
                warnings.append(message("bookwarn.no_enabled", uid=uid))
            entries.append(new_entry(parse_card_entry(e, uid), e, "card", bname, source))
        depth = book.get("scan_depth")
        out = cls(
            name=bname, entries=entries,
            scan_depth=depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else 2,
            extensions=copy.deepcopy(book["extensions"]) if isinstance(book.get("extensions"), dict) else {},
            description=str(book.get("description") or ""),
            token_budget=book.get("token_budget") if isinstance(book.get("token_budget"), int) else None,
            recursive=book["recursive_scanning"] if isinstance(book.get("recursive_scanning"), bool) else True,
            source=source,
        )
        out._raw, out._kind = book, "card"
        out._parsed = out._book_values()
        out._load_warnings = warnings
        return out

    @classmethod
    def from_world_info(cls, obj: Optional[dict[str, Any]], name: str = "", source: str = "global") -> "Lorebook":
        """Build from a SillyTavern World Info file ``{"entries": {"<uid>": {...}}, "originalData"?: ...}``. Entry
        fields are ST's camelCase ones with ST's defaults for missing fields (``selective`` true, ``order`` 100 …).
        Entries are listed in the order JavaScript iterates the object (numeric uids ascending), which is the order
        ST processes them in. A list of entries (card shape) is read by :meth:`from_card_book`."""
        if not obj or not isinstance(obj, dict):
            return cls(name=name, source=source)
        if isinstance(obj.get("entries"), list):
            return cls.from_card_book(obj, name=name, source=source)
        raw = _v if isinstance(_v := obj.get("entries"), dict) else {}
        if len(raw) >= _MEMO_MIN_ENTRIES:
            return _parsed_once("wi", obj, raw, name, source, lambda: cls._parse_world_info(obj, name, source))
        return cls._parse_world_info(obj, name, source)

    @classmethod
    def _parse_world_info(cls, obj: dict[str, Any], name: str, source: str) -> "Lorebook":
        """The parse behind :meth:`from_world_info` for an entry-dict book, no memo."""
        raw = _v if isinstance(_v := obj.get("entries"), dict) else {}
        entries: list[LoreEntry] = []
        warnings: list[str] = []
        bname = name or str(obj.get("name") or "")
        for k in js_key_order(raw.keys()):
            w = raw[k]
            if not isinstance(w, dict):
                warnings.append(message("bookwarn.key_not_object", k=k))
                continue
            uid = as_int(w.get("uid"), as_int(k, len(entries)))
            entries.append(new_entry(parse_wi_entry(w, uid), w, "wi", bname, source))
        out = cls(name=bname, entries=entries, source=source)
        out._raw, out._kind = obj, "wi"
        out._entry_keys = list(raw.keys())
        out._parsed = out._book_values()
        out._load_warnings = warnings
        return out

    @classmethod
    def from_file(cls, path: Union[str, Path], name: str = "", source: str = "global") -> "Lorebook":
        """The book in a JSON file (World Info, a card book or a ``lorebook_v3`` export; UTF-8, a BOM allowed), as
        :meth:`from_any` reads it. A big file (:data:`.bookcache.FILE_MIN_BYTES` or more) is keyed by the SHA-256
        of its bytes (:func:`.bookcache.file_key`): when the parse of those bytes is in memory or in the rows cache
        (:mod:`.bookcache`), the book is built from it without decoding the JSON — the entries' raw JSON, needed
        only for export, is decoded when export asks (:class:`.bookcache.RawFile`). A 50,000-entry World Info file
        (98 MB) opened in 2.8 s warm, mostly reading and decoding JSON (issue 29 §8). Otherwise the file is decoded
        and parsed, and a big book's parse is stored under that key. Any edit of the file changes the key (never
        served stale); a damaged cache file is ignored and rebuilt. Raises OSError when the file cannot be read,
        ValueError (UnicodeDecodeError, json.JSONDecodeError) when it is not UTF-8 JSON."""
        path = Path(path)
        data = path.read_bytes()
        if len(data) < _bookcache.FILE_MIN_BYTES:
            return cls.from_any(json.loads(data.decode("utf-8-sig")), name, source=source)
        digest = file_digest(data)
        key = file_key(digest, name, source)
        with gc_paused():  # one collection after the rows are loaded and built, not one after each
            rows = _PARSED_MEMO.pop(key, None)
            if rows is None:
                rows = load_rows(key)
            out = None
            if rows is not None and isinstance(rows, tuple) and len(rows) == 7:
                try:
                    out = _from_rows(rows, None, None, RawFile(path, digest))
                except Exception:  # noqa: BLE001 - rows of an unexpected shape: parse instead
                    out = None
        if out is not None:
            _remember(key, rows)
            return out
        with gc_paused():
            obj = json.loads(data.decode("utf-8-sig"))
        del data
        book = book_json(obj)
        ents = book.get("entries") if book is not None else None
        if book is None or not isinstance(ents, (dict, list)) or len(ents) < _MEMO_MIN_ENTRIES:
            return cls.from_any(obj, name, source=source)
        with gc_paused():
            if isinstance(ents, dict):  # from_world_info / from_card_book's lorebook_v3 branch, without the memo
                out = cls._parse_world_info(book, name if book is obj else str(book.get("name") or name), source)
            else:
                out = cls._parse_card_book(book, name, source)
            rows = _to_rows(out, ents)
        _keep_parsed(key, rows)
        return out

    @classmethod
    def from_any(cls, obj: Any, name: str = "", source: str = "global") -> "Lorebook":
        """A card book, a ``lorebook_v3`` export or a World Info file, told apart by shape."""
        if isinstance(obj, dict) and isinstance(obj.get("entries"), dict):
            return cls.from_world_info(obj, name=name, source=source)
        return cls.from_card_book(obj, name=name, source=source)

    def with_source(self, source: str) -> "Lorebook":
        """Mark the book and its entries as attached to ``source`` ("card" | "chat" | "persona" | "global")."""
        self.source = source
        for e in self.entries:
            e.source = source
        return self

    def _book_values(self) -> dict[str, Any]:
        return {"name": self.name, "scan_depth": self.scan_depth, "extensions": copy.deepcopy(self.extensions),
                "description": self.description, "token_budget": self.token_budget, "recursive": self.recursive}

    @property
    def warnings(self) -> list[str]:
        """Problems met while reading the book and regex keys that cannot be used (Chinese, one line each)."""
        return list(self._load_warnings) + list(self._compile().warnings)

    # -- export ---------------------------------------------------------------------------------------------
    def _raw_json(self) -> Optional[dict[str, Any]]:
        """The JSON the book was read from (decoded now when it was opened from the rows cache, :meth:`from_file`;
        None when built in code or when its file changed since)."""
        lazy = self._lazy
        if self._raw is None and lazy is not None:
            priv = self.__pydantic_private__
            assert priv is not None
            priv["_raw"] = book_json(lazy.get())  # in place: an assignment would count as an edit
            priv["_lazy"] = None
        return self._raw

    def to_card_book(self) -> dict[str, Any]:
        """The book as a card ``character_book``. A book read from a card book comes back equal unless edited (only
        changed fields are rewritten, unknown keys kept); World Info entries are converted as ST's
        ``convertWorldInfoToCharacterBook`` (``use_regex: true``, extras in ``extensions``)."""
        own = self._raw_json()
        if self._kind == "card" and own is not None:
            out = _copy_but_entries(own)
            cur, parsed = self._book_values(), self._parsed or {}
            for f, key in (("name", "name"), ("scan_depth", "scan_depth"), ("description", "description"),
                           ("token_budget", "token_budget"), ("recursive", "recursive_scanning"),
                           ("extensions", "extensions")):
                if cur[f] != parsed.get(f):
                    out[key] = copy.deepcopy(cur[f])
        else:
            out = {"name": self.name}
        with gc_paused():  # tens of thousands of new dicts: no collector passes over the heap meanwhile
            out["entries"] = [export_entry(e, "card") for e in self.entries]
        return out

    def to_world_info(self) -> dict[str, Any]:
        """The book as a SillyTavern World Info file. A book read from one comes back equal unless edited (same
        entry keys, only changed fields rewritten); card entries are converted as ST's ``convertCharacterBook``
        (WI template fields filled), and a book read from a card carries ``originalData`` (the card book) as ST's
        import does."""
        own = self._raw_json()
        if self._kind == "wi" and own is not None:
            out = _copy_but_entries(own)
        else:
            out = {}
        keys = list(self._entry_keys or [])
        raw_entries = (own or {}).get("entries") if self._kind == "wi" else None
        key_of = {id(v): k for k, v in raw_entries.items()} if isinstance(raw_entries, dict) else {}
        entries: dict[str, Any] = {}
        with gc_paused():  # tens of thousands of new dicts: no collector passes over the heap meanwhile
            for e in self.entries:
                k = str(e.uid)
                parsed = entry_parsed(e)
                if e._kind == "wi" and entry_raw(e) is not None and parsed is not None and parsed.get("uid") == e.uid:
                    # keep the key the entry was read under (it may differ from str(uid) in hand-made files)
                    k = key_of.get(id(e._raw), k)
                entries[k] = export_entry(e, "wi")
        if keys and set(keys) == set(entries):
            entries = {k: entries[k] for k in keys}
        out["entries"] = entries
        if self._kind == "card":
            out["originalData"] = self.to_card_book()
        return out

    # -- compile --------------------------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Drop the compiled matchers (after editing entry lists in place)."""
        self._compiled = None

    def _signature(self) -> tuple[object, ...]:
        return (ENTRY_EDITS[0], id(self.entries), len(self.entries), tuple(map(id, self.entries)))


    def _compile(self) -> CompiledBook:
        """The compiled book, rebuilt when an entry or a setting the matchers depend on changed."""
        sig = self._signature()
        c = self._compiled
        if c is not None and c.sig == sig:
            return c
        c = self._compiled = compile_book(self, sig)
        return c

    def warm_up(self) -> None:
        """Do now what the first activation would otherwise pay for (compiling the matchers, building or loading the
        key index, preparing every entry's record). For the front ends' open worker (issue 15 item 12): the first
        beat of a 50,000-entry book spent ~2 s of CPU here on the UI thread. Changes no state; never raises."""
        try:
            with gc_paused():
                comp = self._compile()
                comp.index  # noqa: B018 - builds (or loads) the key index
                comp.recs  # noqa: B018 - the per-entry records a pass prepares on demand
        except Exception:  # noqa: BLE001 - a warm-up that fails leaves the work to the first beat, as before
            log.debug("lore warm-up failed", exc_info=True)

    # -- activation -----------------------------------------------------------------------------------------
    def activate(self, messages: Sequence[Union[ScanMessage, str]]) -> list[LoreEntry]:
        """Non-constant entries activated for ``messages`` (oldest first; the newest ``scan_depth`` are scanned), in
        book order — the full :meth:`activate_detailed` semantics without timed state or budget (``chat_length`` =
        ``len(messages)``). Constant entries are not returned here (see :meth:`fixed_constants`); disabled
        entries never."""
        res = self.activate_detailed(messages, _DRY_RUN)
        return res.keyed(self.entries)

    def constants(self) -> list[LoreEntry]:
        """Enabled constant (常驻) entries, in book order."""
        return [e for e in self.entries if e.enabled and e.constant]

    def set_constants_budget(self, tokens: Optional[int]) -> None:
        """The world-info budget (tokens, None = none) that :meth:`fixed_constants` cuts the constants with — the
        chat's, fixed when it opens or changes its preset (``lore.settings.WorldInfoSettings.budget_basis``), so
        the system prompt stays byte-stable across beats."""
        self._constants_budget = tokens if tokens is None else int(tokens)

    @property
    def constants_budget(self) -> Optional[int]:
        """The budget set by :meth:`set_constants_budget` (None = none)."""
        return self._constants_budget

    def fixed_constants(self, character: Optional[str] = None) -> list[LoreEntry]:
        """The constant entries SillyTavern activates on every turn of a chat with ``character`` (the card's name),
        in ST's placement order (``order`` ascending, higher order nearer the chat; ties as
        :meth:`activate_detailed` places them) — what a byte-stable system prompt may hold.

        A constant is *fixed* when nothing in ``checkWorldInfo`` can keep it out on some turn: enabled, not
        ``@@dont_activate``, its character filter admits ``character`` (None = filters ignored), no probability
        roll (``use_probability`` off or 100 %), no inclusion group (a keyed member could win the group's roll), no
        ``delay``/``cooldown`` and no delay-until-recursion. Every other constant that activates is per turn: read
        it from the activation result.

        The budget (:meth:`set_constants_budget`): SillyTavern activates the constants in the first pass and cuts
        them as any entry — in processing order, once the activated text (each content plus a newline, counted in
        tokens) reaches the budget, the rest of the pass is dropped except entries that ignore the budget. The
        same rule runs here over the fixed constants alone (the activation's own counting,
        :func:`.activation.activate`; macros not expanded, bodies as written); a constant that keyed entries
        processed before it push out on some turn is still held (the system prompt is made once per chat)."""
        fixed = []
        for r in self._constant_recs():  # every one activates in the first pass, in processing order
            if r.deco_dont or r.dur or r.delay or r.cooldown or r.groups:
                continue
            if r.use_prob and r.probability != 100:
                continue
            if r.char_names and character is not None:
                inc = character in r.char_names or f"{character}.png" in r.char_names
                if inc if r.char_exclude else not inc:
                    continue
            fixed.append(r)
        budget = self._constants_budget
        if budget is not None:
            fixed = _within_budget(fixed, budget)
        # ST placement (as activate_detailed): order descending, stable over activation order, then reversed; no
        # scan needed — the old full activation rescanned the constants' text through every entry per recursion
        # pass (a 20,000-entry book: 85 s)
        return [r.entry for r in sorted(fixed, key=lambda r: -r.order)[::-1]]

    def _constant_recs(self) -> list[EntryRec]:
        """The enabled constants prepared (:class:`.compile.EntryRec`), processing order. From the compiled book when it is
        current; else without compiling it (:func:`.compile.constant_recs`: opening a chat places the constants, and
        the full compile — ~0.1-0.3 s for 50,000 entries — waits for the first activation)."""
        c = self._compiled
        if c is not None and c.sig == self._signature():
            return [c.rec(p) for p in c.constants]
        return constant_recs(self)

    def activate_detailed(
        self,
        messages: Sequence[Union[ScanMessage, str]],
        options: ActivationOptions = PLAIN_RUN,
    ) -> ActivationResult:
        """SillyTavern's ``checkWorldInfo`` over ``messages``, made as ``options`` says: see
        :func:`.activation.activate` for the arguments and the result."""
        comp = self._compile()
        if len(comp.order) < _MEMO_MIN_ENTRIES:
            return _activate(self, comp, messages, options)
        # a big book: the run prepares thousands of entries on its first passes; with the collector running, every
        # few hundred allocations walk a heap of hundreds of thousands of entry objects (a 50,000-entry cascade:
        # 3.3 s instead of 0.5 s). The run makes no cycles worth collecting mid-way.
        with gc_paused():
            return _activate(self, comp, messages, options)

    # -- index / tools --------------------------------------------------------------------------------------
    def index_titles(self) -> list[str]:
        """Titles of all enabled non-constant entries, book order (the 【设定集索引】); see :func:`.search.index_titles`."""
        return _index_titles(self.entries)

    def search(self, query: str, limit: int = 8) -> list[LoreHit]:
        """Entries ranked for ``query``, at most ``limit``; the scoring is :func:`.search.search_entries`."""
        return _search_entries(self.entries, query, limit)

    def list_titles(self) -> list[str]:
        """Every enabled title in book order, constant entries marked 「（常驻）」 (:func:`.search.list_titles`)."""
        return _list_titles(self.entries)


def _within_budget(recs: list[EntryRec], budget: int) -> list[EntryRec]:
    """The prepared constants ``recs`` (processing order) that one first activation pass keeps under ``budget``
    tokens: weights and the overflow rule as :func:`.activation.activate` counts them (each body plus a newline;
    after the overflow only entries that ignore the budget)."""
    kept, weight, over = [], 0.0, False
    for r in recs:
        if over and not r.ignore_budget:
            continue
        weight += token_weight(r.body) + 0.25
        if not r.ignore_budget and math.ceil(weight) >= budget:
            over = True
            continue
        kept.append(r)
    return kept


def merge_books(books: Iterable[Lorebook]) -> Lorebook:
    """One book from several (card, chat, global), entries concatenated in that order (the entries keep their
    ``book``/``source``, so activation still processes chat lore first and the UI can say where an entry came
    from). Scan settings come from the first book; ``scan_depth`` is the largest."""
    books = list(books)
    first = books[0] if books else Lorebook()
    out = Lorebook(name=" + ".join(b.name for b in books if b.name), recursive=first.recursive,
                   case_sensitive=first.case_sensitive, match_whole_words=first.match_whole_words,
                   include_names=first.include_names, use_group_scoring=first.use_group_scoring,
                   max_recursion_steps=first.max_recursion_steps, min_activations=first.min_activations,
                   min_activations_depth_max=first.min_activations_depth_max, strategy=first.strategy)
    for b in books:
        for e in b.entries:
            if not e.book and b.name:
                e.book = b.name
            if not e.source and b.source:
                e.source = b.source
        out.entries.extend(b.entries)
        out.scan_depth = max(out.scan_depth, b.scan_depth) if out.entries else b.scan_depth
    return out
