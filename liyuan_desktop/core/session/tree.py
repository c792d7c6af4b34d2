"""The session tree: the single source of truth of a chat, as append-only JSONL.

One entry per line, each with ``id``, ``parent_id``, ``type`` and ``ts`` (ms since the epoch). A branch is the path
from a leaf to the root. The active leaf is persisted explicitly with ``leaf`` entries (pi derives it from the last
line, which loses a branch switch on reload — ../shared/design/lessons.md). Entries are never rewritten: an edit of a
past reply is a ``revision`` entry, a ledger edit is a new ``rp-state`` entry.

Loading never crashes on a damaged file: a torn or corrupt line is skipped and reported in ``load_warnings``.
``commit()`` flushes and fsyncs (called once per beat).

Long chats (issue 7): ``beat`` entries (the model-call logs: calls, tool results, drafts, the prompt as sent) are
most of a file's bytes and ``rp-state`` snapshots most of its objects, yet only the newest ones are read after their
beat. :meth:`SessionTree.open` keeps those two kinds as their raw bytes plus ``id``/``parent_id``/``ts``/``type`` (and
a beat's ``outcome``, a snapshot's ``source``); the first access to any other field parses the line (transparently:
the entry is a :class:`BeatEntry`/:class:`StateEntry` for ``isinstance`` and turns into a plain one).
:func:`is_lazy` and :meth:`SessionTree.lazy_count` tell how many are still unparsed. Damaged lines are skipped as
before: every line is checked to be valid JSON with valid ``id``/``parent_id``/``ts``/``type``, and every line but a
beat's is fully validated at load. A beat line whose other fields do not fit (never written by this program) loses
just those fields, when it is first read (logged)."""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import secrets
import time
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


def now_ms() -> int:
    """Wall clock in milliseconds since the epoch."""
    return int(time.time() * 1000)


class _Base(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    parent_id: Optional[str] = None
    ts: int = Field(default_factory=now_ms)


class HeaderEntry(_Base):
    """Root of the tree. ``mode`` is fixed at creation (seed 000, 写长篇: 建好不能切换)."""

    type: Literal["header"] = "header"
    format: str = "liyuan-session"
    version: int = 1
    mode: Literal["roleplay", "agent"] = "roleplay"
    card: str = ""
    card_name: str = ""
    persona: str = ""
    title: str = ""


class OpeningEntry(_Base):
    """The card's opening (first_mes), as shown and as sent (with its 【开场 · name】 header)."""

    type: Literal["opening"] = "opening"
    text: str


class UserEntry(_Base):
    """The user's words of one beat, exactly as typed."""

    type: Literal["user"] = "user"
    text: str


class AssistantEntry(_Base):
    """The final (定稿) of a beat. ``sealed`` is False for a beat that ended without 收笔 and was kept anyway."""

    type: Literal["assistant"] = "assistant"
    text: str
    sealed: bool = True
    beat: Optional[str] = None


class ToolCallLog(BaseModel):
    """One tool call of a model call: raw arguments as streamed, the parsed result the model got back."""

    id: str = ""
    name: str
    arguments: str = ""
    result: Any = None
    ok: bool = True
    mode: str = ""
    ms: float = 0.0


class CallLog(BaseModel):
    """One model call of a beat: what came back (reasoning, text, tool calls with results) and usage."""

    round: int
    reasoning: str = ""
    content: str = ""
    tool_calls: list[ToolCallLog] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    finish_reason: Optional[str] = None
    model: str = ""
    ms: float = 0.0
    error: Optional[str] = None


class BeatEntry(_Base):
    """The log of one beat (every model call). ``outcome``: sealed | unsealed | revised_previous | stopped |
    out_of_rounds | error. ``draft`` and ``draft_version`` keep the draft as it stood at the end (nothing lost)."""

    type: Literal["beat"] = "beat"
    calls: list[CallLog] = Field(default_factory=list)
    outcome: str = "sealed"
    draft: str = ""
    draft_version: int = 0
    injection: str = ""
    activated: list[str] = Field(default_factory=list)
    activity: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    error: Optional[str] = None
    #: The first call's messages as sent, encoded against the branch history (core.inspect.encode_sent): runs of
    #: history messages are stored as index ranges, everything else in full; with ``tools`` (names) and the system
    #: prompt's sha256, the prompt inspector rebuilds every call of the beat exactly.
    sent: Optional[dict[str, Any]] = None


class RevisionEntry(_Base):
    """A previous-beat edit (previous_draft_edit): ``target`` is the assistant entry, ``text`` its new text."""

    type: Literal["revision"] = "revision"
    target: str
    text: str
    version: int


class StateEntry(_Base):
    """A ledger snapshot (rp-state): the whole WorldState as a dict, written by the scribe or the user."""

    type: Literal["rp-state"] = "rp-state"
    state: dict[str, Any]
    source: Literal["scribe", "user", "init"] = "scribe"
    applied: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    raw: Optional[str] = None


class AskEntry(_Base):
    """An ask: the model's question, 2-4 options, the answer (an option or free text) and who gave it
    (``by``: user | stop | auto)."""

    type: Literal["ask"] = "ask"
    question: str
    options: list[str]
    answer: Optional[str] = None
    by: str = "user"


class SummaryEntry(_Base):
    """A relay summary (前情提要) of older beats on this branch (issue 7, compaction; seed 000: 收笔之后……再判断要不要压缩).

    ``upto`` is the id of the last tree entry the summary covers (everything on the path up to and including it is
    replaced in the prompt by the summaries); ``beats`` the covered beat numbers ``[first, last]`` (1-based, 0 = the
    opening). ``layer`` 1 summarises beats, 2 summarises layer-1 summaries, 3 layer-2 ones (at most three layers);
    ``merges`` lists the ids of the summaries a layer-2/3 summary replaces. A user edit is a new entry with
    ``edit_of`` = the edited summary's id and ``source="user"`` (nothing is rewritten)."""

    type: Literal["summary"] = "summary"
    text: str
    upto: str
    beats: list[int] = Field(default_factory=list)
    layer: int = 1
    merges: list[str] = Field(default_factory=list)
    edit_of: Optional[str] = None
    source: Literal["scribe", "user"] = "scribe"
    tokens: int = 0


class LeafEntry(_Base):
    """Moves the active leaf. Not part of the tree itself (never a parent)."""

    type: Literal["leaf"] = "leaf"
    target: str


class OtherEntry(_Base):
    """Any entry type this version does not know (kept as read, so newer files still load)."""

    type: str


Entry = Union[
    HeaderEntry, OpeningEntry, UserEntry, AssistantEntry, BeatEntry, RevisionEntry, StateEntry, AskEntry, SummaryEntry,
    LeafEntry
]
_KNOWN = {
    "header": HeaderEntry, "opening": OpeningEntry, "user": UserEntry, "assistant": AssistantEntry,
    "beat": BeatEntry, "revision": RevisionEntry, "rp-state": StateEntry, "ask": AskEntry, "summary": SummaryEntry,
    "leaf": LeafEntry,
}
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[Entry, Field(discriminator="type")])


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
        real = _REAL[type(self)]
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
    real = _REAL[type(entry)]
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


def _salvage(real: type, raw: bytes, mine: dict[str, Any]) -> Any:
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


_BEAT_HEAD = _BeatHead.__pydantic_validator__
_TYPE_AT_START = re.compile(rb'"type":"([a-z-]+)"')
#: Line type (as bytes) -> the validator tried first (a beat's: its cheap fields only; "beat!": the full one).
_VALIDATORS: dict[bytes, Any] = {k.encode(): v.__pydantic_validator__ for k, v in _KNOWN.items()}
_VALIDATORS[b"beat!"] = _VALIDATORS[b"beat"]
_VALIDATORS[b"beat"] = _BEAT_HEAD


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
    if isinstance(other, BaseModel) and (_REAL[type(self)] is not _REAL.get(type(other), type(other))
                                         or self.__dict__.get("id") != other.__dict__.get("id")):
        return False  # what pydantic answers too, found without parsing (``entry in path`` stays cheap)
    _materialize(self)
    if is_lazy(other):
        _materialize(other)
    return self == other


_LazyMixin.__eq__ = _lazy_eq  # type: ignore[method-assign]
_LazyMixin.__hash__ = None  # type: ignore[assignment]  # like the models themselves

_LAZY: dict[str, type] = {}
_REAL: dict[type, type] = {}
_FIELDS: dict[type, frozenset[str]] = {}
for _t in _LAZY_TYPES:
    _LAZY[_t] = type(f"Lazy{_KNOWN[_t].__name__}", (_LazyMixin, _KNOWN[_t]),
                     {"__module__": __name__, "__doc__": f"A {_KNOWN[_t].__name__} not parsed yet (see _LazyMixin)."})
    _REAL[_LAZY[_t]] = _KNOWN[_t]
    _FIELDS[_KNOWN[_t]] = frozenset(_KNOWN[_t].model_fields)


def is_lazy(entry: Any) -> bool:
    """Whether ``entry`` is still kept as its raw line (only its cheap fields parsed). Reading any other field
    parses it; callers never need to check this (it is for tests and memory figures)."""
    return type(entry) in _REAL


def _make_lazy(entry: Any, data: bytes, start: int, end: int, line: int) -> Any:
    """A lazy entry of ``entry``'s type with ``entry``'s cheap fields (``entry``: a parsed entry or a head)."""
    cls = _LAZY[entry.type]
    lazy = cls.__new__(cls)
    object.__setattr__(lazy, "__dict__", {k: entry.__dict__[k] for k in _CHEAP[entry.type]})
    object.__setattr__(lazy, "__pydantic_private__", (data, start, end, line))
    return lazy


class SessionError(Exception):
    """The session file cannot be used (no header, unreadable). ``message`` is fit for the UI/CLI."""


def new_id(taken: Optional[set[str] | dict[str, Any]] = None) -> str:
    """A short random id (12 hex chars), unique within ``taken``."""
    while True:
        i = secrets.token_hex(6)
        if not taken or i not in taken:
            return i


def _dump(entry: BaseModel) -> str:
    d = entry.model_dump(mode="json", exclude_none=True)
    d = {"id": d.pop("id"), "parent_id": entry.parent_id, **d}  # parent_id always present (null at the root)
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


class SessionTree:
    """An open session file: all entries in memory (by id, in file order), pending lines buffered until
    :meth:`commit`. Not thread-safe; one writer (the engine) per file."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.entries: dict[str, Any] = {}
        self.order: list[str] = []
        self.children_of: dict[Optional[str], list[str]] = {}
        self.leaf_id: Optional[str] = None
        self.load_warnings: list[str] = []
        self._pending: list[str] = []
        self._pending_ids: list[str] = []
        self._path_cache: tuple[Optional[str], list[Any]] = (None, [])
        self._needs_newline = False
        self._persisted_leaf: Optional[str] = None
        self._leaf_pos = 0  # how many tree entries preceded the last leaf line read

    # -- opening / creating ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, header: HeaderEntry | None = None, **header_fields: Any) -> "SessionTree":
        """Create a new file with a header entry (fails if the file exists and is not empty)."""
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise SessionError(f"会话文件已存在：{path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        tree = cls(path)
        h = header or HeaderEntry(id=new_id(), **header_fields)
        tree._add(h)
        tree.leaf_id = h.id
        tree.commit()
        return tree

    @classmethod
    def open(cls, path: Path, lazy: bool = True) -> "SessionTree":
        """Load a session file. A torn last line (a crash mid-write) or any corrupt line is skipped with a warning
        in ``load_warnings``; raises :class:`SessionError` when there is no usable header.

        Every line is validated; with ``lazy`` (the default) ``beat`` entries are then kept as their raw bytes and
        parsed again on first use (see the module doc): a 10,000-beat file (~100 MB) opens in a fraction of the
        time and memory. ``lazy=False`` keeps every entry parsed (same content)."""
        tree = cls(Path(path))
        try:
            data = tree.path.read_bytes()
        except OSError as e:
            raise SessionError(f"无法读取会话文件 {path}：{e}") from e
        tree._needs_newline = bool(data) and not data.endswith(b"\n")
        name = tree.path.name
        size = len(data)
        gc_was_on = gc.isenabled()
        gc.disable()  # tens of thousands of new objects, none cyclic: collections would only rescan them
        try:
            start = n = 0
            while start <= size:  # the pieces of data.split(b"\n"), without copying them all at once
                end = data.find(b"\n", start)
                if end < 0:
                    end = size
                line_start, start = start, end + 1
                n += 1  # 1-based line number
                raw = data[line_start:end]
                if not raw or raw.isspace():
                    continue
                # the type as _dump writes it (after id, parent_id, ts) picks the model; anything else, and any
                # line that fails there, takes the general path below, which decides as it always did
                m = _TYPE_AT_START.search(data, line_start, min(end, line_start + 200))
                validator = _VALIDATORS.get(m.group(1)) if m else None
                entry = None
                if validator is _BEAT_HEAD and not lazy:
                    validator = _VALIDATORS[b"beat!"]
                if validator is not None:
                    try:
                        entry = validator.validate_json(raw)
                    except ValidationError:
                        entry = None
                    if validator is _BEAT_HEAD and entry is not None:
                        if entry.id in tree.entries:
                            entry = None  # the general path reports the duplicate
                        else:  # a beat: JSON and cheap fields checked, the rest parsed on first use
                            tree._index(_make_lazy(entry, data, line_start, end, n))
                            continue
                if entry is None:
                    try:
                        try:
                            entry = _ADAPTER.validate_json(raw)
                        except ValidationError:
                            obj = json.loads(raw)
                            if not isinstance(obj, dict) or obj.get("type") in _KNOWN:
                                raise
                            entry = OtherEntry.model_validate(obj)
                    except (ValueError, ValidationError, AttributeError) as e:
                        torn = start > size or data.find(b"\n", start) < 0  # the last line or the one before
                        where = "最后一行不完整（上次写入时中断）" if torn else f"第 {n} 行损坏"
                        tree.load_warnings.append(f"{name}：{where}，已跳过（{type(e).__name__}）")
                        continue
                if entry.id in tree.entries:
                    tree.load_warnings.append(f"{name}：第 {n} 行 id 重复（{entry.id}），已跳过")
                    continue
                if lazy and entry.type in _LAZY:
                    entry = _make_lazy(entry, data, line_start, end, n)
                tree._index(entry)
        finally:
            if gc_was_on:
                gc.enable()
        if not tree.order or not isinstance(tree.entries[tree.order[0]], HeaderEntry):
            raise SessionError(f"{path} 不是梨园会话文件（缺少 header）")
        if tree.leaf_id is None or tree.leaf_id not in tree.entries or tree._leaf_pos < len(tree.order):
            # Every commit ends with a leaf line, so tree entries after the last intact one mean that line was torn
            # (a crash mid-write): the commit's last entry was the leaf. No leaf line at all: the last entry too.
            tree.leaf_id = tree.order[-1]
        lost = [p for p in tree.children_of if p is not None and p not in tree.entries]  # parents never read
        orphans = [n for n, i in enumerate(tree.order) if n and tree.entries[i].parent_id not in tree.entries] if lost else []
        for n in orphans:
            # The parent's line was damaged: hang the entry under the entry written just before it (in memory only),
            # which is where an append-only writer put its parent in all but branch-switch cases.
            e = tree.entries[tree.order[n]]
            old = e.parent_id
            if is_lazy(e):
                e.__dict__["parent_id"] = tree.order[n - 1]  # kept when it is parsed (no need to parse it now)
            else:
                e.parent_id = tree.order[n - 1]
            tree.children_of.get(old, []).remove(e.id)
            tree.children_of.setdefault(e.parent_id, []).append(e.id)
        if orphans:
            tree.load_warnings.append(f"{tree.path.name}：{len(orphans)} 条记录的上级记录已损坏，已接到它前一条记录之后")
        tree._persisted_leaf = tree.leaf_id
        return tree

    @staticmethod
    def read_header(path: Path) -> HeaderEntry:
        """The header of a session file, reading only up to its first entry (for a chat list or a mode check; a
        10,000-beat file need not be loaded for that). Raises :class:`SessionError` when :meth:`open` would find no
        usable header there (unreadable file, first entry missing, damaged or not a header)."""
        try:
            with open(path, "rb") as f:
                for raw in f:
                    if not raw.strip():
                        continue
                    try:
                        entry = _ADAPTER.validate_json(raw)
                    except ValidationError:
                        break
                    if entry.type == "leaf":
                        continue
                    if isinstance(entry, HeaderEntry):
                        return entry
                    break
        except OSError as e:
            raise SessionError(f"无法读取会话文件 {path}：{e}") from e
        raise SessionError(f"{path} 不是梨园会话文件（缺少 header）")

    # -- internals ------------------------------------------------------------------------------------------
    def _index(self, entry: Any) -> None:
        if entry.type == "leaf":
            if entry.target in self.entries:
                self.leaf_id = entry.target
                self._leaf_pos = len(self.order)
            self.entries[entry.id] = entry
            return
        self.entries[entry.id] = entry
        self.order.append(entry.id)
        self.children_of.setdefault(entry.parent_id, []).append(entry.id)

    def _add(self, entry: Any) -> Any:
        self._index(entry)
        self._pending.append(_dump(entry))
        self._pending_ids.append(entry.id)
        return entry

    def pending_mark(self) -> tuple[int, Optional[str]]:
        """A mark for :meth:`rollback`: how many unwritten entries there are now, and the active leaf."""
        return len(self._pending_ids), self.leaf_id

    def rollback(self, mark: tuple[int, Optional[str]] = (0, None)) -> None:
        """Forget the unwritten entries appended after ``mark`` (:meth:`pending_mark`; default: all unwritten ones)
        and put the active leaf back (default: the one last written). For a command whose first write failed (the
        user's words could not be saved), so memory and disk agree again; lines an earlier failed save left pending
        for a retry stay when the mark was taken after them."""
        since, leaf = mark
        drop = self._pending_ids[since:]
        gone = set(drop)
        for i in drop:
            e = self.entries.pop(i, None)
            if e is None or getattr(e, "type", "") == "leaf":
                continue
            kids = self.children_of.get(e.parent_id)
            if kids and i in kids:
                kids.remove(i)
        if gone:
            self.order = [i for i in self.order if i not in gone]
        del self._pending[since:]
        del self._pending_ids[since:]
        self.leaf_id = leaf if leaf is not None and leaf in self.entries else self._persisted_leaf
        self._path_cache = (None, [])

    # -- public API -----------------------------------------------------------------------------------------
    @property
    def header(self) -> HeaderEntry:
        """The root entry."""
        return self.entries[self.order[0]]

    def get(self, entry_id: str) -> Any:
        """Entry by id (KeyError if unknown)."""
        return self.entries[entry_id]

    def append(self, entry_type: str, parent_id: Optional[str] = "__leaf__", move_leaf: bool = True, **fields: Any) -> Any:
        """Append an entry of ``entry_type`` under ``parent_id`` (default: the active leaf) and, by default, make it
        the active leaf. Returns the typed entry. Buffered until :meth:`commit`. Raises KeyError for an unknown
        parent, ValidationError for bad fields."""
        parent = self.leaf_id if parent_id == "__leaf__" else parent_id
        if parent is not None and parent not in self.entries:
            raise KeyError(f"unknown parent {parent}")
        cls = _KNOWN.get(entry_type)
        data = {"id": new_id(self.entries), "parent_id": parent, **fields}
        entry = cls(**data) if cls else OtherEntry(type=entry_type, **data)
        self._add(entry)
        if move_leaf and entry.type != "leaf":
            cached_leaf, cached = self._path_cache
            if cached_leaf is not None and cached_leaf == parent:
                self._path_cache = (entry.id, cached + [entry])
            self.leaf_id = entry.id
        return entry

    def set_leaf(self, entry_id: str) -> None:
        """Make ``entry_id`` the active leaf; the next :meth:`commit` persists it (a ``leaf`` entry; nothing else)."""
        if entry_id not in self.entries or self.entries[entry_id].type == "leaf":
            raise KeyError(f"unknown entry {entry_id}")
        self.leaf_id = entry_id

    def commit(self) -> None:
        """Write pending lines, then a ``leaf`` entry (whenever entries were written or the leaf moved), flush and
        fsync. Raises OSError (disk full…) with the pending lines kept and the partly written bytes cut off again,
        so a later commit can retry; lines already on disk before this call are never touched."""
        tree_lines = bool(self._pending)
        if self.leaf_id is not None and (self.leaf_id != self._persisted_leaf or tree_lines):
            entry = LeafEntry(id=new_id(self.entries), parent_id=None, target=self.leaf_id)
            self.entries[entry.id] = entry
            self._pending.append(_dump(entry))
            self._pending_ids.append(entry.id)
        if not self._pending:
            return
        blob = ("\n" if self._needs_newline else "") + "\n".join(self._pending) + "\n"
        size_before = self.path.stat().st_size if self.path.exists() else 0
        try:
            with open(self.path, "ab") as f:
                f.write(blob.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            try:
                os.truncate(self.path, size_before)
            except OSError:
                self._needs_newline = True  # could not cut the torn bytes: keep the next line apart from them
            raise
        self._needs_newline = False
        self._pending.clear()
        self._pending_ids.clear()
        self._persisted_leaf = self.leaf_id

    def persist_leaf(self) -> None:
        """Commit, recording the current active leaf (after a beat)."""
        self.commit()

    def path_to(self, leaf: Optional[str] = None) -> list[Any]:
        """Entries from the root to ``leaf`` (default: the active leaf), root first. Cached for the active leaf."""
        leaf = leaf or self.leaf_id
        cached_leaf, cached = self._path_cache
        if leaf == cached_leaf:
            return cached
        out = []
        cur = leaf
        while cur is not None:
            e = self.entries.get(cur)
            if e is None:  # parent line was damaged: the branch starts at the orphan (see load_warnings)
                break
            out.append(e)
            cur = e.parent_id
        out.reverse()
        self._path_cache = (leaf, out)
        return out

    def children(self, entry_id: Optional[str]) -> list[Any]:
        """Direct children of an entry, in file order."""
        return [self.entries[i] for i in self.children_of.get(entry_id, [])]

    def iter_type(self, entry_type: str, leaf: Optional[str] = None) -> Iterable[Any]:
        """Entries of one type on the branch, root first."""
        return (e for e in self.path_to(leaf) if e.type == entry_type)

    def lazy_count(self) -> int:
        """How many entries are still kept as raw lines (not parsed since :meth:`open`); O(entries)."""
        return sum(1 for e in self.entries.values() if type(e) in _REAL)

    def latest(self, entry_type: str, leaf: Optional[str] = None) -> Optional[Any]:
        """The newest entry of ``entry_type`` on the branch, or None."""
        for e in reversed(self.path_to(leaf)):
            if e.type == entry_type:
                return e
        return None
