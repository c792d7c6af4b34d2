"""Lazily parsed entries (issue 7): ``beat`` entries (the model-call logs: calls, tool results, drafts, the prompt as
sent) are most of a file's bytes and ``rp-state`` snapshots most of its objects, yet only the newest ones are read
after their beat. :meth:`~.tree.SessionTree.open` keeps those two kinds as their raw bytes plus
``id``/``parent_id``/``ts``/``type`` (and a beat's ``outcome``, a snapshot's ``source``); the first access to any
other field parses the line (transparently: the entry is a :class:`~.entries.BeatEntry`/:class:`~.entries.StateEntry`
for ``isinstance`` and turns into a plain one). :func:`is_lazy` and :meth:`~.tree.SessionTree.lazy_count` tell how
many are still unparsed. A beat line whose other fields do not fit (never written by this program) loses just those
fields, when it is first read (logged).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .entries import ENTRY_TYPES, now_ms

# -- lazily parsed entries ----------------------------------------------------------------------------------
#: Entry types kept as raw bytes after loading until a field beyond the cheap ones is read.
_LAZY_TYPES = ("beat", "rp-state")
#: Fields a lazy entry has from the start (read at load); anything else parses the line.
_CHEAP = {"beat": ("id", "parent_id", "ts", "type", "outcome"), "rp-state": ("id", "parent_id", "ts", "type", "source")}
_PYDANTIC_SLOTS = frozenset({"__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NEEDLES: dict[tuple[type, str], Optional[bytes]] = {}  # (class, attribute) -> b'"name":' (None: parse to answer)


class _LazyMixin:
    """Turns a partly filled entry model into the full one on first use. Only the cheap fields are in the instance
    ``__dict__``; any other attribute misses, reaches :meth:`__getattr__` and parses the raw line, after which the
    instance is a plain instance of the real entry class (``__class__`` is swapped; identity is kept, so the tree's
    dicts and cached paths stay valid). The raw line is stashed in the unused ``__pydantic_private__`` slot (these
    models have no private attributes) as ``(file bytes, start, end, line number)`` — a tuple of atomic values,
    which the garbage collector stops tracking, like the cheap fields' dict. Methods of pydantic that read
    ``__dict__`` directly are wrapped below."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            raw = object.__getattribute__(self, "__pydantic_private__")
        except AttributeError:
            raw = None
        if type(raw) is not tuple:
            raise AttributeError(name)
        real = REAL_CLASSES[type(self)]
        needle = _NEEDLES.get((real, name), b"")
        if needle == b"":
            # not a declared field: an extra key (``lore_timed``…) or a probe (``__html__``…). Valid JSON has the
            # bytes "name": only where an object key is, so without them the line has no such key at all.
            plain = name not in _FIELDS[real] and name not in _PYDANTIC_SLOTS and _IDENT.fullmatch(name)
            needle = _NEEDLES[(real, name)] = b'"' + name.encode() + b'":' if plain else None
        if needle is not None and raw[0].find(needle, raw[1], raw[2]) < 0:
            raise AttributeError(f"{real.__name__!r} object has no attribute {name!r}")
        _materialize(self)
        return getattr(self, name)


def _materialize(entry: Any) -> None:
    """Parse a lazy entry's line and make ``entry`` a plain instance of its real class, in place. Values set on
    the lazy entry (e.g. ``parent_id`` re-hung at load) win over the line's. Never raises: the line was validated
    at load with the same model, but should it fail now it is kept with what the cheap fields say (defaults
    elsewhere) and the error is logged."""
    data, start, end, line = object.__getattribute__(entry, "__pydantic_private__")
    real = REAL_CLASSES[type(entry)]
    mine = entry.__dict__
    try:
        full = real.model_validate_json(data[start:end])
    except ValueError as e:  # ValidationError is a ValueError
        full = _salvage(real, data[start:end], mine)
        logging.getLogger(__name__).warning("session line %d: fields that do not fit %s dropped (%s)", line,
                                            real.__name__, "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}"
                                                                     for x in getattr(e, "errors", lambda: [])()[:5]))
    values = dict(full.__dict__)
    fields_set = set(full.__pydantic_fields_set__)
    for k, v in mine.items():
        if k not in values or values[k] != v:
            fields_set.add(k)
        values[k] = v
    mine.clear()
    mine.update(values)
    object.__setattr__(entry, "__pydantic_fields_set__", fields_set)
    object.__setattr__(entry, "__pydantic_extra__", full.__pydantic_extra__)
    object.__setattr__(entry, "__pydantic_private__", None)
    object.__setattr__(entry, "__class__", real)


def _salvage(real: type[BaseModel], raw: bytes, mine: dict[str, Any]) -> Any:
    """The entry a line makes when some of its fields do not fit the model (a beat line is only checked for JSON
    syntax and its cheap fields at load): the fields that fail are dropped (their defaults apply), the cheap
    fields are kept as read. Never raises."""
    try:
        obj = json.loads(raw)
    except ValueError:
        obj = {}
    data = {**(obj if isinstance(obj, dict) else {}), **mine}
    for _ in range(len(_FIELDS[real]) + 2):
        try:
            return real.model_validate(data)
        except ValidationError as e:
            bad = {err["loc"][0] for err in e.errors() if err["loc"]}
            if not bad or bad & set(mine):
                break
            for k in bad:
                data.pop(k, None)
    return real.model_construct(**mine)


class _BeatHead(BaseModel):
    """What :meth:`SessionTree.open` reads of a beat line (the rest is only checked to be valid JSON): the same
    types and defaults as :class:`BeatEntry`, so a line whose cheap fields would fail there fails here too."""

    model_config = ConfigDict(extra="ignore")

    id: str
    parent_id: Optional[str] = None
    ts: int = Field(default_factory=now_ms)
    type: Literal["beat"]
    outcome: str = "sealed"


BEAT_HEAD = _BeatHead.__pydantic_validator__
TYPE_AT_START = re.compile(rb'"type":"([a-z-]+)"')
#: Line type (as bytes) -> the validator tried first (a beat's: its cheap fields only; "beat!": the full one).
VALIDATORS: dict[bytes, Any] = {k.encode(): v.__pydantic_validator__ for k, v in ENTRY_TYPES.items()}
VALIDATORS[b"beat!"] = VALIDATORS[b"beat"]
VALIDATORS[b"beat"] = BEAT_HEAD


def _parsing(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        _materialize(self)
        return getattr(self, name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in ("model_dump", "model_dump_json", "model_copy", "__copy__", "__deepcopy__", "__getstate__", "__iter__",
              "__reduce__", "__reduce_ex__", "__repr__", "__str__", "__repr_args__", "__replace__", "__delattr__"):
    setattr(_LazyMixin, _name, _parsing(_name))


def _lazy_eq(self: Any, other: Any) -> Any:
    if self is other:
        return True
    if isinstance(other, BaseModel) and (REAL_CLASSES[type(self)] is not REAL_CLASSES.get(type(other), type(other))
                                         or self.__dict__.get("id") != other.__dict__.get("id")):
        return False  # what pydantic answers too, found without parsing (``entry in path`` stays cheap)
    _materialize(self)
    if is_lazy(other):
        _materialize(other)
    return self == other


_LazyMixin.__eq__ = _lazy_eq  # type: ignore[method-assign]
_LazyMixin.__hash__ = None  # type: ignore[assignment]  # like the models themselves

LAZY_CLASSES: dict[str, type[BaseModel]] = {}
REAL_CLASSES: dict[type, type[BaseModel]] = {}
_FIELDS: dict[type[BaseModel], frozenset[str]] = {}
for _t in _LAZY_TYPES:
    LAZY_CLASSES[_t] = type(f"Lazy{ENTRY_TYPES[_t].__name__}", (_LazyMixin, ENTRY_TYPES[_t]),
                     {"__module__": __name__, "__doc__": f"A {ENTRY_TYPES[_t].__name__} not parsed yet (see _LazyMixin)."})
    REAL_CLASSES[LAZY_CLASSES[_t]] = ENTRY_TYPES[_t]
    _FIELDS[ENTRY_TYPES[_t]] = frozenset(ENTRY_TYPES[_t].model_fields)


def is_lazy(entry: Any) -> bool:
    """Whether ``entry`` is still kept as its raw line (only its cheap fields parsed). Reading any other field
    parses it; callers never need to check this (it is for tests and memory figures)."""
    return type(entry) in REAL_CLASSES


def make_lazy(entry: Any, data: bytes, start: int, end: int, line: int) -> Any:
    """A lazy entry of ``entry``'s type with ``entry``'s cheap fields (``entry``: a parsed entry or a head)."""
    cls = LAZY_CLASSES[entry.type]
    lazy = cls.__new__(cls)
    object.__setattr__(lazy, "__dict__", {k: entry.__dict__[k] for k in _CHEAP[entry.type]})
    object.__setattr__(lazy, "__pydantic_private__", (data, start, end, line))
    return lazy


# -- every other entry type, for lines read from the index cache (:mod:`.index_cache`) ------------------------
#: Types that come back from the index cache as lazy entries too (their lines were validated when the cache was
#: written and are the same bytes now); the header is always parsed, leaf entries are rebuilt from the cache.
_CACHE_CHEAP = ("id", "parent_id", "ts", "type")
LAZY_CACHED: dict[str, type[BaseModel]] = dict(LAZY_CLASSES)
for _t, _cls in list(ENTRY_TYPES.items()) + [("*", None)]:
    if _t in LAZY_CACHED or _t in ("header", "leaf"):
        continue
    from .entries import OtherEntry as _Other  # noqa: E402  (entries is imported above; kept local to the loop)

    _real = _cls or _Other
    LAZY_CACHED[_t] = type(f"Lazy{_real.__name__}", (_LazyMixin, _real),
                            {"__module__": __name__, "__doc__": f"A {_real.__name__} not parsed yet (see _LazyMixin)."})
    REAL_CLASSES[LAZY_CACHED[_t]] = _real
    _FIELDS[_real] = frozenset(_real.model_fields)


def lazy_from_head(head: dict[str, Any], data: bytes, start: int, end: int, line: int) -> Any:
    """A lazy entry for a line whose cheap fields are known without parsing it (``head``: ``id``, ``parent_id``,
    ``ts``, ``type`` and, for a beat / snapshot, ``outcome`` / ``source``; read from the index cache). Any other
    field parses ``data[start:end]`` as :func:`_materialize` does. Types this version does not know become a lazy
    :class:`~.entries.OtherEntry`."""
    cls = LAZY_CACHED.get(head["type"]) or LAZY_CACHED["*"]
    lazy = cls.__new__(cls)
    object.__setattr__(lazy, "__dict__", head)
    object.__setattr__(lazy, "__pydantic_private__", (data, start, end, line))
    return lazy
