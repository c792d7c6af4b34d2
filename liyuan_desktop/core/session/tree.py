"""The session tree: the single source of truth of a chat, as append-only JSONL.

One entry per line, each with ``id``, ``parent_id``, ``type`` and ``ts`` (ms since the epoch). A branch is the path
from a leaf to the root. The active leaf is persisted explicitly with ``leaf`` entries (pi derives it from the last
line, which loses a branch switch on reload — ../shared/design/lessons.md). Entries are never rewritten: an edit of a
past reply is a ``revision`` entry, a ledger edit is a new ``rp-state`` entry.

Loading never crashes on a damaged file: a torn or corrupt line is skipped and reported in ``load_warnings``.
``commit()`` flushes and fsyncs (called once per beat).

Long chats (issue 7): ``beat`` and ``rp-state`` entries are kept unparsed until read (:mod:`.lazy`). Damaged lines
are skipped as before: every line is checked to be valid JSON with valid ``id``/``parent_id``/``ts``/``type``, and
every line but a beat's is fully validated at load. The entry models are in :mod:`.entries`.

Very long chats (issue 15 item 11): a file of :data:`.index_cache.MIN_BYTES` or more keeps its line index in a
rebuildable cache beside it (:mod:`.index_cache`); the lines it covers come back as lazy entries of every type
(parsed on first use) without being parsed at open — a 100,000-message chat opens in a fraction of a second."""

from __future__ import annotations

import gc
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from pydantic import ValidationError

from ..fsutil import atomic_write_bytes
from ..messages import message
from ..text import fix_surrogates
from . import index_cache
from .branch_path import BranchPath
from .entries import ENTRY_ADAPTER, ENTRY_TYPES, Entry, HeaderEntry, LeafEntry, OtherEntry, now_ms
from .lazy import BEAT_HEAD, LAZY_CACHED, LAZY_CLASSES, REAL_CLASSES, TYPE_AT_START, VALIDATORS, is_lazy, make_lazy

_BOM = b"\xef\xbb\xbf"
_MISS = object()
_ID_AT_START = re.compile(rb'\{"id":"([^"\\]+)"')


class SessionError(Exception):
    """The session file cannot be used (no header, unreadable). ``message`` is fit for the UI/CLI."""


def new_id(taken: Optional[set[str] | dict[str, Any]] = None) -> str:
    """A short random id (12 hex chars), unique within ``taken``."""
    while True:
        i = secrets.token_hex(6)
        if not taken or i not in taken:
            return i


def _dump(entry: Entry | OtherEntry) -> str:
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
        self._suspects: list[int] = []  # positions in ``order`` whose parent was not indexed before them (load)
        self._latest: dict[tuple[Optional[str], str], Any] = {}  # (leaf, type) -> latest() answer
        self._type_count: dict[str, int] = {}  # entries per type (leaf lines not counted)

    # -- opening / creating ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, header: HeaderEntry | None = None, **header_fields: Any) -> "SessionTree":
        """Create a new file with a header entry (fails if the file exists and is not empty)."""
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise SessionError(message("stchat.session_exists", path=str(path)))
        path.parent.mkdir(parents=True, exist_ok=True)
        tree = cls(path)
        h = header or HeaderEntry(id=new_id(), **header_fields)
        tree._add(h)
        tree.leaf_id = h.id
        tree.commit()
        return tree

    @classmethod
    def open(cls, path: Path, lazy: bool = True,
             rebuild_header: Optional[Callable[[], dict[str, Any]]] = None) -> "SessionTree":
        """Load a session file. A torn last line (a crash mid-write) or any corrupt line is skipped with a warning
        in ``load_warnings``; raises :class:`SessionError` when there is no usable header.

        Repairs (issue 15), each reported in ``load_warnings``: a UTF-8 BOM (Notepad) is skipped and CRLF line
        ends are read like LF; a parent-id cycle or a parent written *after* its child (an append-only writer
        always writes the parent first, so such a link is damage) is cut and the entry re-hung under the entry
        written just before it, as a missing parent is — so every branch walk ends at the root; with
        ``rebuild_header`` (a callable giving header fields, e.g. from the chat folder's meta.json and card) a
        file with no usable header (0 bytes: a crash between create and the first write, a full disk) gets one:
        the damaged file is kept beside it as ``<name>.damaged-<ms>`` and a repaired copy (the header, then the
        old lines) replaces it atomically — the only time a session file is rewritten.

        Every line is validated; with ``lazy`` (the default) ``beat`` entries are then kept as their raw bytes and
        parsed again on first use (see the module doc): a 10,000-beat file (~100 MB) opens in a fraction of the
        time and memory. ``lazy=False`` keeps every entry parsed (same content)."""
        try:
            return cls._open(Path(path), lazy)
        except SessionError:
            if rebuild_header is None:
                raise
        repaired = cls._rebuild_header(Path(path), rebuild_header())
        tree = cls._open(Path(path), lazy)
        tree.load_warnings.insert(0, repaired)
        return tree

    @classmethod
    def _rebuild_header(cls, path: Path, fields: dict[str, Any]) -> str:
        """Write ``path`` again with a header line first (``fields``; its id is the root id the old lines point at,
        when they agree on one) and the old bytes after it (a BOM dropped); the old file is kept as
        ``<name>.damaged-<ms>`` unless it was empty. Returns the warning that says so. Raises SessionError."""
        try:
            data = path.read_bytes() if path.exists() else b""
        except OSError as e:
            raise SessionError(message("session.cannot_read", path=str(path), error=str(e))) from e
        if data.startswith(_BOM):
            data = data[len(_BOM):]
        ids, parents = set(), []
        for raw in data.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                ids.add(obj["id"])
                if isinstance(obj.get("parent_id"), str) and obj.get("type") != "leaf":
                    parents.append(obj["parent_id"])
        root = next((p for p in parents if p not in ids), None)  # the first entry's lost parent: the old header
        header = HeaderEntry(id=root or new_id(ids), **{k: v for k, v in fields.items() if k not in ("id", "type")})
        blob = (_dump(header) + "\n").encode("utf-8") + data
        try:
            if data.strip():
                (path.parent / f"{path.name}.damaged-{now_ms()}").write_bytes(path.read_bytes())
            atomic_write_bytes(path, blob)
        except OSError as e:
            raise SessionError(message("session.header_unfixable", error=str(e))) from e
        what = message("session.was_empty" if not data.strip() else "session.no_header")
        return message("session.header_rebuilt", file=path.name, what=what)

    @classmethod
    def _open(cls, path: Path, lazy: bool) -> "SessionTree":
        tree = cls(Path(path))
        try:
            data = tree.path.read_bytes()
        except OSError as e:
            raise SessionError(message("session.cannot_read", path=str(path), error=str(e))) from e
        if data.startswith(_BOM):  # Notepad's BOM: spaces keep every offset (and the lazy lines) where they were
            data = b"   " + data[len(_BOM):]
            tree.load_warnings.append(message("load.bom", file=tree.path.name))
        tree._needs_newline = bool(data) and not data.endswith(b"\n")
        name = tree.path.name
        size = len(data)
        big = lazy and size >= index_cache.MIN_BYTES
        cache = index_cache.load(tree.path, data) if big else None
        rows: Optional[list[list[Any]]] = None if not big else (cache.rows if cache else [])
        warn_from = len(tree.load_warnings)
        gc_was_on = gc.isenabled()
        gc.disable()  # tens of thousands of new objects, none cyclic: collections would only rescan them
        try:
            start = n = 0
            if cache is not None:
                tree._index_cached(cache, data)
                start, n = cache.size, cache.lines
            cached_lines = n
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
                m = TYPE_AT_START.search(data, line_start, min(end, line_start + 200))
                validator = VALIDATORS.get(m.group(1)) if m else None
                entry = None
                if validator is BEAT_HEAD and not lazy:
                    validator = VALIDATORS[b"beat!"]
                if validator is not None:
                    try:
                        entry = validator.validate_json(raw)
                    except ValidationError:
                        entry = None
                    if validator is BEAT_HEAD and entry is not None:
                        if entry.id in tree.entries:
                            entry = None  # the general path reports the duplicate
                        else:  # a beat: JSON and cheap fields checked, the rest parsed on first use
                            tree._index(make_lazy(entry, data, line_start, end, n))
                            if rows is not None:
                                rows.append([line_start, end, n, entry.id, entry.parent_id, entry.ts, "beat",
                                             entry.outcome])
                            continue
                if entry is None:
                    try:
                        try:
                            entry = ENTRY_ADAPTER.validate_json(raw)
                        except ValidationError:
                            obj = json.loads(raw)
                            if not isinstance(obj, dict) or obj.get("type") in ENTRY_TYPES:
                                raise
                            entry = OtherEntry.model_validate(obj)
                    except (ValueError, ValidationError, AttributeError) as e:
                        torn = start > size or data.find(b"\n", start) < 0  # the last line or the one before
                        where = message("session.torn_last") if torn else message("session.bad_line", n=n)
                        tree.load_warnings.append(message("session.line_skipped", file=name, where=where,
                                                          error=type(e).__name__))
                        continue
                if entry.id in tree.entries:
                    tree.load_warnings.append(message("load.dup_id", file=name, line=n, id=entry.id))
                    continue
                if lazy and entry.type in LAZY_CLASSES:
                    entry = make_lazy(entry, data, line_start, end, n)
                tree._index(entry)
                if rows is not None:
                    t = entry.type
                    extra = (entry.target if isinstance(entry, LeafEntry) else entry.__dict__.get("outcome") if t == "beat"
                             else entry.__dict__.get("source") if t == "rp-state" else None)
                    rows.append([line_start, end, n, entry.id, entry.parent_id, entry.ts, t, extra])
        finally:
            if gc_was_on:
                gc.enable()
        if (rows is not None and not tree._needs_newline and tree.order
                and isinstance(tree.entries[tree.order[0]], HeaderEntry)
                and (cache is None or n - cached_lines >= index_cache.REWRITE_LINES)):
            index_cache.save(tree.path, data, size, n - 1, rows,
                             (cache.warnings if cache else []) + tree.load_warnings[warn_from:])
        if not tree.order or not isinstance(tree.entries[tree.order[0]], HeaderEntry):
            raise SessionError(message("session.no_header_line", path=str(path)))
        if tree.leaf_id is None or tree.leaf_id not in tree.entries or tree._leaf_pos < len(tree.order):
            # Every commit ends with a leaf line, so tree entries after the last intact one mean that line was torn
            # (a crash mid-write): the commit's last entry was the leaf. No leaf line at all: the last entry too.
            tree.leaf_id = tree.order[-1]
        # A parent missing (its line damaged), or written after its child (a cycle, or a hand-edited file): an
        # append-only writer always wrote the parent first, so any other link is damage — and following it could
        # loop forever (a parent-id cycle once grew a path walk to 695 MB in 20 s).
        head = tree.entries[tree.order[0]]
        if head.parent_id is not None:
            tree.children_of.get(head.parent_id, []).remove(head.id)
            head.parent_id = None
            tree.children_of.setdefault(None, []).insert(0, head.id)
            tree.load_warnings.append(message("load.head_cycle", file=tree.path.name))
        # (_index noted every entry whose parent was not indexed before it: O(1) per entry, no second pass)
        orphans = [n for n in tree._suspects if n]
        cycles = sum(1 for n in orphans if (q := tree.entries.get(tree.entries[tree.order[n]].parent_id)) is not None
                     and q.type != "leaf")
        tree._suspects = []
        for n in orphans:
            # The parent's line was damaged: hang the entry under the entry written just before it (in memory only),
            # which is where an append-only writer put its parent in all but branch-switch cases.
            moved = tree.entries[tree.order[n]]
            old = moved.parent_id
            if is_lazy(moved):
                moved.__dict__["parent_id"] = tree.order[n - 1]  # kept when it is parsed (no need to parse it now)
            else:
                moved.parent_id = tree.order[n - 1]
            tree.children_of.get(old, []).remove(moved.id)
            tree.children_of.setdefault(moved.parent_id, []).append(moved.id)
        if len(orphans) > cycles:
            tree.load_warnings.append(message("load.orphans", file=tree.path.name, n=len(orphans) - cycles))
        if cycles:
            tree.load_warnings.append(message("session.parent_after", file=tree.path.name, n=cycles))
        tree._persisted_leaf = tree.leaf_id
        return tree

    def save_index(self) -> bool:
        """Write the index cache (:mod:`.index_cache`) of this tree's file from the entries in memory, without
        parsing a line: each line's id (the first key, as :func:`_dump` writes it) names its entry. For a file this
        tree wrote (an import): its first open is then as fast as later ones. Only for files of
        :data:`.index_cache.MIN_BYTES` or more with nothing pending; returns False (no cache) when a line does not
        name a known entry (a damaged line: the next open indexes the file itself) or the folder refuses."""
        if self._pending:
            return False
        try:
            data = self.path.read_bytes()
        except OSError:
            return False
        if len(data) < index_cache.MIN_BYTES or not data.endswith(b"\n"):
            return False
        rows: list[list[Any]] = []
        size, start, n = len(data), 0, 0
        while start < size:
            end = data.find(b"\n", start)
            line_start, start = start, end + 1
            n += 1
            if end == line_start:
                continue
            m = _ID_AT_START.match(data, line_start, end)
            e = self.entries.get(m.group(1).decode()) if m else None
            if e is None:
                return False
            t = e.type
            extra = (e.target if t == "leaf" else e.outcome if t == "beat" else e.source if t == "rp-state"
                     else None)
            rows.append([line_start, end, n, e.id, e.parent_id, e.ts, t, extra])
        return index_cache.save(self.path, data, size, n, rows, [])

    @staticmethod
    def read_header(path: Path) -> HeaderEntry:
        """The header of a session file, reading only up to its first entry (for a chat list or a mode check; a
        10,000-beat file need not be loaded for that). Raises :class:`SessionError` when :meth:`open` would find no
        usable header there (unreadable file, first entry missing, damaged or not a header)."""
        try:
            with open(path, "rb") as f:
                for n, raw in enumerate(f):
                    if n == 0 and raw.startswith(_BOM):
                        raw = raw[len(_BOM):]
                    if not raw.strip():
                        continue
                    try:
                        entry = ENTRY_ADAPTER.validate_json(raw)
                    except ValidationError:
                        break
                    if entry.type == "leaf":
                        continue
                    if isinstance(entry, HeaderEntry):
                        return entry
                    break
        except OSError as e:
            raise SessionError(message("session.cannot_read", path=str(path), error=str(e))) from e
        raise SessionError(message("session.no_header_line", path=str(path)))

    # -- internals ------------------------------------------------------------------------------------------
    def _index_cached(self, cache: "index_cache.IndexCache", data: bytes) -> None:
        """Index the lines an index cache covers (:mod:`.index_cache`): the header parsed, leaf entries rebuilt,
        every other entry lazy (its line parsed on first use), the cached load warnings reported again."""
        # (what lazy_from_head and _index do, inlined: this loop runs once per line of a 100,000-message chat)
        entries, order, children, suspects, counts = (self.entries, self.order, self.children_of, self._suspects,
                                                      self._type_count)
        classes, other, set_ = LAZY_CACHED, LAZY_CACHED["*"], object.__setattr__
        for start, end, line, eid, parent, ts, t, extra in cache.rows:
            if t == "header" or t == "leaf":
                self._index(ENTRY_ADAPTER.validate_json(data[start:end]) if t == "header" else
                            LeafEntry.model_construct(id=eid, parent_id=parent, ts=ts, target=extra))
                continue
            head = {"id": eid, "parent_id": parent, "ts": ts, "type": t}
            if t == "beat":
                head["outcome"] = extra
            elif t == "rp-state":
                head["source"] = extra
            cls = classes.get(t) or other
            entry = cls.__new__(cls)
            set_(entry, "__dict__", head)
            set_(entry, "__pydantic_private__", (data, start, end, line))
            if parent is not None and ((q := entries.get(parent)) is None or q.type == "leaf"):
                suspects.append(len(order))
            entries[eid] = entry
            counts[t] = counts.get(t, 0) + 1
            order.append(eid)
            kids = children.get(parent)
            if kids is None:
                children[parent] = [eid]
            else:
                kids.append(eid)
        self.load_warnings.extend(cache.warnings)

    def _index(self, entry: Any) -> None:
        if entry.type == "leaf":
            if entry.target in self.entries:
                self.leaf_id = entry.target
                self._leaf_pos = len(self.order)
            self.entries[entry.id] = entry
            return
        p = entry.parent_id
        if p is not None and ((q := self.entries.get(p)) is None or q.type == "leaf"):
            self._suspects.append(len(self.order))  # a missing parent or one written later: repaired at load
        self.entries[entry.id] = entry
        self._type_count[entry.type] = self._type_count.get(entry.type, 0) + 1
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
            if e is None or e.type == "leaf":
                continue
            self._type_count[e.type] -= 1
            kids = self.children_of.get(e.parent_id)
            if kids and i in kids:
                kids.remove(i)
        if gone:
            self.order = [i for i in self.order if i not in gone]
        del self._pending[since:]
        del self._pending_ids[since:]
        self.leaf_id = leaf if leaf is not None and leaf in self.entries else self._persisted_leaf
        self._path_cache = (None, [])
        self._latest.clear()

    # -- public API -----------------------------------------------------------------------------------------
    @property
    def header(self) -> HeaderEntry:
        """The root entry."""
        root: HeaderEntry = self.entries[self.order[0]]
        return root

    @property
    def active_leaf(self) -> str:
        """The active leaf's id (:attr:`leaf_id`), which an opened or created tree always has (the header at
        least). Raises RuntimeError on a tree made with ``SessionTree(path)`` and not loaded."""
        if self.leaf_id is None:
            raise RuntimeError(f"session tree not loaded: {self.path}")
        return self.leaf_id

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
        cls = ENTRY_TYPES.get(entry_type)
        data = {"id": new_id(self.entries), "parent_id": parent, **fields}
        entry: Any = cls(**data) if cls else OtherEntry(type=entry_type, **data)  # one of entries.Entry
        self._add(entry)
        if move_leaf and entry.type != "leaf":
            cached_leaf, cached = self._path_cache
            if cached_leaf is not None and cached_leaf == parent:  # extended in place: a copy is O(chat length)
                cached.append(entry)  # (bench/beat_overhead.py; views path_to handed out keep their length)
                self._path_cache = (entry.id, cached)
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
            try:
                data = blob.encode("utf-8")
            except UnicodeEncodeError:  # a lone UTF-16 surrogate got this far: U+FFFD, never a lost beat
                data = fix_surrogates(blob)[0].encode("utf-8")
            with open(self.path, "ab") as f:
                f.write(data)
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

    def path_to(self, leaf: Optional[str] = None) -> BranchPath:
        """Entries from the root to ``leaf`` (default: the active leaf), root first, as a read-only
        :class:`~.branch_path.BranchPath` (a sequence; slices are lists) that never changes after this call. Cached
        for the active leaf; :meth:`append` extends the cache in place rather than copying the whole path."""
        leaf = leaf or self.leaf_id
        cached_leaf, cached = self._path_cache
        if leaf == cached_leaf:
            return BranchPath(cached)
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
        return BranchPath(out)

    def children(self, entry_id: Optional[str]) -> list[Any]:
        """Direct children of an entry, in file order."""
        return [self.entries[i] for i in self.children_of.get(entry_id, [])]

    def iter_type(self, entry_type: str, leaf: Optional[str] = None) -> Iterable[Any]:
        """Entries of one type on the branch, root first."""
        return (e for e in self.path_to(leaf) if e.type == entry_type)

    def lazy_count(self) -> int:
        """How many entries are still kept as raw lines (not parsed since :meth:`open`); O(entries)."""
        return sum(1 for e in self.entries.values() if type(e) in REAL_CLASSES)

    def latest(self, entry_type: str, leaf: Optional[str] = None) -> Optional[Any]:
        """The newest entry of ``entry_type`` on the branch, or None. Remembered per (leaf, type): a branch never
        changes once written, so after one walk a later call — or a call for a leaf appended below it, which walks
        only down to the nearest entry already answered — costs O(new entries), not O(chat length) (a 100,000-message
        chat with no beat asked "latest beat?" on every redraw)."""
        if not self._type_count.get(entry_type):
            return None  # none in the whole file (an imported chat has no beat): no walk at all
        leaf = leaf or self.leaf_id
        memo = self._latest
        found = memo.get((leaf, entry_type), _MISS)
        if found is not _MISS:
            return found
        found = None
        for e in reversed(self.path_to(leaf)):
            if e.type == entry_type:
                found = e
                break
            prev = memo.get((e.id, entry_type), _MISS)
            if prev is not _MISS:
                found = prev
                break
        if len(memo) > 4096:
            memo.clear()
        memo[(leaf, entry_type)] = found
        return found
