"""The session tree: the single source of truth of a chat, as append-only JSONL.

One entry per line, each with ``id``, ``parent_id``, ``type`` and ``ts`` (ms since the epoch). A branch is the path
from a leaf to the root. The active leaf is persisted explicitly with ``leaf`` entries (pi derives it from the last
line, which loses a branch switch on reload — ../shared/design/lessons.md). Entries are never rewritten: an edit of a
past reply is a ``revision`` entry, a ledger edit is a new ``rp-state`` entry.

Loading never crashes on a damaged file: a torn or corrupt line is skipped and reported in ``load_warnings``.
``commit()`` flushes and fsyncs (called once per beat).
"""

from __future__ import annotations

import json
import os
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
    def open(cls, path: Path) -> "SessionTree":
        """Load a session file. A torn last line (a crash mid-write) or any corrupt line is skipped with a warning
        in ``load_warnings``; raises :class:`SessionError` when there is no usable header."""
        tree = cls(Path(path))
        try:
            data = tree.path.read_bytes()
        except OSError as e:
            raise SessionError(f"无法读取会话文件 {path}：{e}") from e
        tree._needs_newline = bool(data) and not data.endswith(b"\n")
        lines = data.split(b"\n")
        last_index = len(lines) - 1
        for n, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                try:
                    entry = _ADAPTER.validate_json(raw)
                except ValidationError:
                    obj = json.loads(raw)
                    if not isinstance(obj, dict) or obj.get("type") in _KNOWN:
                        raise
                    entry = OtherEntry.model_validate(obj)
            except (ValueError, ValidationError, AttributeError) as e:
                where = "最后一行不完整（上次写入时中断）" if n >= last_index - 1 else f"第 {n + 1} 行损坏"
                tree.load_warnings.append(f"{tree.path.name}：{where}，已跳过（{type(e).__name__}）")
                continue
            if entry.id in tree.entries:
                tree.load_warnings.append(f"{tree.path.name}：第 {n + 1} 行 id 重复（{entry.id}），已跳过")
                continue
            tree._index(entry)
        if not tree.order or not isinstance(tree.entries[tree.order[0]], HeaderEntry):
            raise SessionError(f"{path} 不是梨园会话文件（缺少 header）")
        if tree.leaf_id is None or tree.leaf_id not in tree.entries or tree._leaf_pos < len(tree.order):
            # Every commit ends with a leaf line, so tree entries after the last intact one mean that line was torn
            # (a crash mid-write): the commit's last entry was the leaf. No leaf line at all: the last entry too.
            tree.leaf_id = tree.order[-1]
        orphans = [n for n, i in enumerate(tree.order) if n and tree.entries[i].parent_id not in tree.entries]
        for n in orphans:
            # The parent's line was damaged: hang the entry under the entry written just before it (in memory only),
            # which is where an append-only writer put its parent in all but branch-switch cases.
            e = tree.entries[tree.order[n]]
            old = e.parent_id
            e.parent_id = tree.order[n - 1]
            tree.children_of.get(old, []).remove(e.id)
            tree.children_of.setdefault(e.parent_id, []).append(e.id)
        if orphans:
            tree.load_warnings.append(f"{tree.path.name}：{len(orphans)} 条记录的上级记录已损坏，已接到它前一条记录之后")
        tree._persisted_leaf = tree.leaf_id
        return tree

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
        return entry

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

    def latest(self, entry_type: str, leaf: Optional[str] = None) -> Optional[Any]:
        """The newest entry of ``entry_type`` on the branch, or None."""
        for e in reversed(self.path_to(leaf)):
            if e.type == entry_type:
                return e
        return None
