"""The writing room of a chat (issue 19): outline (大纲), foreshadowing threads (伏笔), the codex with mentions, and
progress — what ``Chat``'s writing queries and commands delegate to.

- The outline is ``大纲.md`` in the chat folder (:mod:`core.story.outline`), captured by the checkpoints.
- Threads are derived from the branch's ``rp-state`` snapshots (:mod:`core.ledger.threads`); the user's changes are
  user snapshots carrying the unchanged world state plus ``thread_events``.
- The codex is the roster (characters, places, items, events) with the ledger's facts (scoped from the chapter they
  were recorded at), the first appearance, the chapters that mention each name (:mod:`core.story.mentions`, aliases
  from ``名录别名.json`` in the chat folder) and the lore entry whose title or key is the name.
- Progress is :mod:`core.story.progress` over the chapter files, the outline and the checkpoints.

The agent state block gains 【大纲】, 【伏笔】 and 【设定（第 N 章时）】 only when there is an outline or a
thread event the user made (:meth:`WritingRoom.state_blocks`): a chat using none of this sends exactly what it sent before.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..fsutil import atomic_write_text
from ..ledger.state import WorldState
from ..ledger.threads import Thread, ThreadEvent, ThreadMark, build_threads, format_threads_block, quote_at
from ..lore import Lorebook
from ..messages import message
from ..session.tree import SessionTree
from ..story import outline_tree as tree_ops
from ..story.checkpoint_model import Checkpoint, is_chapter_name
from ..story.checkpoints import StoryHistory
from ..story.codex import KIND_ZH, CodexBook, CodexError, CodexKind, CodexRecord, Relation, load_codex, save_codex
from ..story.layout import history_dir
from ..story.layout import story_dir as layout_story_dir
from ..story.links import (
    chapter_files,
    link_chapter,
    load_links,
    resolve,
    save_links,
    unlink_file,
)
from ..story.mentions import Mention, MentionIndex
from ..story.outline import (
    Outline,
    OutlineChapter,
    outline_path,
    parse_outline,
    read_outline,
    replace_text,
    set_chapter,
)
from ..story.outline_tree import DeletionPreview, NodeKind
from ..story.progress import Progress, WordCache, book_progress, daily_counts, with_webnovel
from ..story.summaries import summaries_block
from ..story.webnovel import load_webnovel
from ..text import prompt_language

#: The per-chat alias list of issue 19 (canonical name → aliases): still read and merged; aliases are now written
#: into the codex (``名录.json``, :mod:`core.story.codex`).
ALIASES_FILE = "名录别名.json"
#: SHA-256 of empty content (an empty chapter file is not "written").
EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#: 字数 by content hash, a rebuildable cache (story.progress.WordCache).
WORDS_CACHE_FILE = ".liyuan-words.json"
#: Bounds of the codex part of the state block.
CODEX_BLOCK_MAX_NAMES = 20
#: Bounds of 【本章涉及的设定】 (issue 28): entries, characters of one description, characters of the block.
MENTIONED_MAX_ENTRIES = 12
MENTIONED_DESC_MAX = 200
MENTIONED_BLOCK_MAX = 2400


class CodexFact(DeferredModel):
    """A ledger fact about a name, valid from a point in the story: ``text``, ``from_chapter`` (1-based chapter the
    snapshot was recorded at; None when unknown, e.g. role-play), ``beat`` (1-based user turn)."""

    text: str
    from_chapter: Optional[int] = None
    beat: Optional[int] = None


class LoreLink(DeferredModel):
    """The world-info entry matching a name (by title, else by key): ``uid``, ``title``, ``book``, ``content``
    (cut to 200 characters)."""

    uid: int
    title: str = ""
    book: str = ""
    content: str = ""


class CodexEntry(DeferredModel):
    """One name of the one list (roster and written entries, :mod:`core.story.codex`): ``name`` (canonical),
    ``kind``, ``aliases``, ``description`` / ``tags`` / ``relations`` / ``true_from`` (from the written entry;
    empty when there is none), ``written`` (a written entry exists), ``in_roster`` (the ledger's roster on this
    branch has it), ``first_seen`` (the roster's in-story time of first sight), ``facts`` (the ledger's, oldest
    first), ``first_mention`` (in the chapter files), ``chapters`` ({file: mentions}, book order), ``mentions``
    (total), ``lore``."""

    name: str
    kind: CodexKind
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    true_from: Optional[int] = None
    written: bool = False
    in_roster: bool = True
    first_seen: str = ""
    facts: list[CodexFact] = Field(default_factory=list)
    first_mention: Optional[Mention] = None
    chapters: dict[str, int] = Field(default_factory=dict)
    mentions: int = 0
    lore: Optional[LoreLink] = None

    def facts_at(self, chapter: Optional[int]) -> list[CodexFact]:
        """The facts that hold at ``chapter`` (1-based): the newest fact recorded at or before it (facts without a
        chapter count as always valid); all of them when ``chapter`` is None."""
        if chapter is None:
            return list(self.facts)
        ok = [f for f in self.facts if f.from_chapter is None or f.from_chapter <= chapter]
        return ok[-1:] if ok else []


def _first_error(e: ValueError) -> str:
    """The first of a validation error's messages, without pydantic's framing."""
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return f"{'.'.join(str(x) for x in first.get('loc', ()))}: {first.get('msg', '')}"
        except (IndexError, TypeError):
            pass
    return str(e).splitlines()[0] if str(e) else "?"


class WritingRoom:
    """The writing room of one chat folder ``directory``. ``tree``: the session; ``history``: () → the chapter
    checkpoints; ``story_dir``: the chapter folder (``正文/`` or ``chapters/``); ``book``: () → the chat's merged
    world book."""

    def __init__(self, directory: Path, tree: SessionTree, history: Callable[[], StoryHistory],
                 book: Callable[[], Lorebook]):
        self.dir, self.tree, self._history, self._book = Path(directory), tree, history, book
        self._mentions = MentionIndex()
        self._words = WordCache(self.dir / WORDS_CACHE_FILE)
        self._threads_key: Any = None
        self._threads: list[Thread] = []
        # the window gathers the panes on a worker thread while a turn may build its state block: one at a time
        self._lock = threading.RLock()
        #: the chat's language (issue 32): the state blocks are written in it
        self.language = "zh"

    @property
    def story_dir(self) -> Path:
        """The chapter folder ``正文/`` (``chapters/`` in the English layout, :mod:`core.story.layout`)."""
        return layout_story_dir(self.dir, self.language)

    def _has_history(self) -> bool:
        """Whether the chat has checkpoints yet (its ``历史/`` / ``history/`` folder exists)."""
        return history_dir(self.dir, self.language).is_dir()

    # ------------------------------------------------------------------ outline

    def outline(self) -> Optional[Outline]:
        """The parsed ``大纲.md`` with each chapter's ``file`` resolved through its stable id (the sidecar
        ``大纲链接.json``, then a hand-written ``file=``; None when the chapter has no linked file that exists:
        :func:`core.story.links.resolve`), or None when the chat has none. A link whose file was renamed outside
        the engine is healed here (by content hash) and the sidecar rewritten."""
        o = read_outline(self.dir)
        if o is None:
            return None
        links = load_links(self.dir)
        if not links.links and not any(c.file for c in o.chapters()):
            return o
        resolved, healed_links, healed = resolve(o, links, self.story_dir)
        if healed:
            try:
                save_links(self.dir, healed_links)
            except OSError:
                pass
        for c in o.chapters():
            c.file = resolved.get(c.id or f"#{c.index}")
        return o

    def has_outline(self) -> bool:
        """Whether ``大纲.md`` exists (the outline tools and blocks are offered only then)."""
        p = outline_path(self.dir, self.language)
        return p.is_file() and not p.is_symlink()

    def outline_text(self) -> str:
        """The outline's text ("" when none)."""
        o = read_outline(self.dir)
        return o.text if o is not None else ""

    def save_outline(self, text: str) -> Outline:
        """Write ``大纲.md`` whole (atomic; the next checkpoint records it) and return it parsed (links resolved).
        A heading that lost its id (a text editor's copy without them) gets back the id of the chapter of the same
        title (:func:`core.story.outline_tree.carry_ids`); others without one get a new id
        (:func:`core.story.outline_tree.ensure_ids`); the rest of the text is kept byte for byte. OSError."""
        before = read_outline(self.dir)
        if before is not None:
            text = tree_ops.carry_ids(before.text, text)
        atomic_write_text(outline_path(self.dir, self.language), tree_ops.ensure_ids(text))
        o = self.outline()
        assert o is not None
        return o

    def edit_outline(self, old: str, new: str) -> Outline:
        """Exact-text replace in the outline (``old`` must occur once). Raises ToolError (no outline: ``not_found``),
        OSError."""
        return self.save_outline(replace_text(self._outline_or_raise().text, old, new))

    def set_chapter(self, ref: str | int, *, status: Optional[str] = None, target: Optional[int] = None,
                    file: Optional[str] = None) -> Outline:
        """Change one outline chapter's status / target (:func:`core.story.outline.set_chapter`) and/or its linked
        file (``file``; "" unlinks: :meth:`link`). Raises ToolError, OSError."""
        if status is not None or target is not None:
            self.save_outline(set_chapter(tree_ops.ensure_ids(self._outline_or_raise().text), ref, status=status,
                                          target=target))
        if file is not None:
            self.link(ref, file, must_exist=False)
        o = self.outline()
        assert o is not None
        return o

    # ------------------------------------------------------------------ the outline as a tree (issue 28)

    def outline_edit(self, op: str, **kw: Any) -> tuple[Outline, str]:
        """Run one tree operation of :mod:`core.story.outline_tree` on the outline and save it: ``op`` one of
        ``add_volume`` (title, position), ``add_chapter`` (title, volume, position, status, target), ``add_beat``
        (chapter, beat, position), ``rename_volume`` (volume, title), ``rename_chapter`` (chapter, title),
        ``rename_beat`` (chapter, index, beat), ``move_chapter`` (chapter, volume, position), ``move_volume``
        (volume, position), ``move_beat`` (chapter, index, to_chapter, position), ``set_attrs`` (chapter, status,
        target), ``delete`` (kind, ref, index). No outline yet: an ``add_*`` starts one. Returns (the outline, the
        new node's id for ``add_volume`` / ``add_chapter``, else ""). Deleting a chapter drops its link (the file
        stays). Raises ToolError (``not_found``, ``bad_args``…), ValueError for an unknown ``op``, OSError."""
        text = read_outline(self.dir)
        if text is None and not op.startswith("add_"):
            self._outline_or_raise()
        cur = text.text if text is not None else ""
        new_id = ""
        if op in ("add_volume", "add_chapter"):
            new, new_id = getattr(tree_ops, op)(cur, **kw)
        elif op == "delete":
            gone = self._links_of_deleted(cur, kw.get("kind", "chapter"), kw["ref"], kw.get("index", 0))
            new = tree_ops.delete_node(cur, **kw)
            links = load_links(self.dir)
            if gone and any(cid in links.links for cid in gone):
                for cid in gone:
                    links.links.pop(cid, None)
                save_links(self.dir, links)
        elif op in tree_ops.OUTLINE_OPS:
            new = getattr(tree_ops, op)(cur, **kw)
        else:
            raise ValueError(f"unknown outline operation: {op}")
        return self.save_outline(new), new_id

    def _links_of_deleted(self, text: str, kind: str, ref: str | int, index: int) -> list[str]:
        o = parse_outline(tree_ops.ensure_ids(text)) if text else Outline()
        if kind == "beat":
            return []
        if kind == "chapter":
            return [o.find(ref).id]
        return [c.id for c in tree_ops.find_volume(o, ref).chapters]

    def deletion_preview(self, kind: NodeKind, ref: str | int, index: int = 0) -> DeletionPreview:
        """What deleting a volume / chapter / beat would lose (chapters, beats, note lines, linked files), nothing
        changed: the front ends ask with it first (default No). Raises ToolError ``not_found``."""
        o = self._outline_or_raise()
        resolved = self.outline()
        links = {c.id: c.file for c in (resolved.chapters() if resolved else []) if c.id and c.file}
        return tree_ops.deletion_preview(o.text, kind, ref, index, links)

    def link(self, ref: str | int, file: str, *, must_exist: bool = True) -> Outline:
        """Link outline chapter ``ref`` to chapter file ``file`` (a name in ``正文/``; "" unlinks), kept by the
        chapter's stable id in ``大纲链接.json`` (:func:`core.story.links.link_chapter`). Raises ToolError
        ``not_found`` (no outline, chapter or — ``must_exist`` — file), OSError."""
        link_chapter(self.dir, ref, file, must_exist=must_exist)
        o = self.outline()
        assert o is not None
        return o

    def unlink_file(self, file: str) -> Optional[str]:
        """Unlink chapter file ``file`` from its outline chapter; returns that chapter's id or None. OSError."""
        return unlink_file(self.dir, file)

    def unlinked_files(self) -> list[str]:
        """The chapter files of ``正文/`` no outline chapter links (what the binder offers for linking), by name."""
        o = self.outline()
        linked = {c.file for c in o.chapters() if c.file} if o is not None else set()
        return [f for f in chapter_files(self.story_dir) if f not in linked]

    def _outline_or_raise(self) -> Outline:
        o = self.outline()
        if o is None:
            from ..errors import ToolError
            raise ToolError("not_found", message("outline.none"))
        return o

    # ------------------------------------------------------------------ the branch, by turn

    def _turns(self) -> tuple[list[tuple[Any, int]], dict[int, Checkpoint]]:
        """The branch's rp-state snapshots with their beat (1-based user turn) and the checkpoint of each beat."""
        snaps: list[tuple[Any, int]] = []
        users: dict[str, int] = {}
        beat = 0
        for e in self.tree.path_to():
            if e.type == "user":
                beat += 1
                users[e.id] = beat
            elif e.type == "rp-state":
                snaps.append((e, beat))
        cps: dict[int, Checkpoint] = {}
        if users and self._has_history():
            for c in self._history().checkpoints():
                if c.turnId in users:
                    cps[users[c.turnId]] = c
        return snaps, cps

    def _replies(self) -> dict[int, tuple[str, str]]:
        """{beat: (reply entry id, text)} of the branch's sealed replies (the last one of each user turn)."""
        out: dict[int, tuple[str, str]] = {}
        beat = 0
        for e in self.tree.path_to():
            if e.type == "user":
                beat += 1
            elif e.type == "assistant" and beat:
                out[beat] = (e.id, str(getattr(e, "text", "") or ""))
        return out

    def _chapter_no(self, cp: Optional[Checkpoint], outline: Optional[Outline]) -> tuple[Optional[int], str]:
        """The chapter a checkpoint's turn worked on: (1-based number, file) of the last chapter file it changed —
        numbered by the outline when linked there, else by its place in the checkpoint's manifest."""
        if cp is None:
            return None, ""
        ch = cp.changed
        changed = [n for n in [*ch.added, *ch.modified, *[r["to"] for r in ch.renamed]] if is_chapter_name(n)]
        if not changed:
            return None, ""
        f = sorted(changed)[-1]
        if outline is not None:
            oc = outline.chapter_for_file(f)
            if oc is not None:
                return oc.index + 1, f
        names = sorted(n for n in cp.files if is_chapter_name(n))
        return (names.index(f) + 1 if f in names else None), f

    # ------------------------------------------------------------------ threads

    def threads(self) -> list[Thread]:
        """The branch's threads (planting order; closed ones included), each plant/close located in the chapter
        text of its turn's checkpoint when the chat has one. Thread-safe."""
        with self._lock:
            return self._threads_locked()

    def _threads_locked(self) -> list[Thread]:
        snaps, cps = self._turns()
        outline = self.outline()
        key = (self.tree.leaf_id, len(snaps), snaps[-1][0].id if snaps else None, len(cps),
               hash(outline.text) if outline is not None else None,
               tuple(c.file for c in outline.chapters()) if outline is not None else ())
        if key == self._threads_key:
            return [t.model_copy(deep=True) for t in self._threads]
        hist = self._history() if cps else None

        replies = self._replies() if not cps else {}

        def locate(title: str, beat: int) -> Optional[ThreadMark]:
            cp = cps.get(beat)
            if cp is None and beat in replies:  # role-play: the quote is in that beat's reply (file "")
                rid, text = replies[beat]
                q = quote_at(text, title)
                return ThreadMark(quote=q[0], offset=q[1], note=f"回复 {rid}") if q is not None else None
            no, f = self._chapter_no(cp, outline)
            if cp is None or not f or hist is None:
                return None
            m = ThreadMark(chapter=no, file=f)
            try:
                text = hist.object_text(cp.files[f])
            except (KeyError, OSError, ValueError):
                return m
            q = quote_at(text, title)
            if q is not None:
                m.quote, m.offset = q
            return m

        self._threads = build_threads(snaps, locate)
        if cps:  # positions in chapters once a chapter exists (issue 28): a mark without one gets the chapter
            # reached by then — the furthest chapter of the last checkpoint of this branch at or before its beat
            reach = {b: self._reached({n for n, h in c.files.items() if is_chapter_name(n) and h != EMPTY_SHA},
                                      outline) for b, c in cps.items()}
            beats = sorted(reach)
            for t in self._threads:
                for m in (t.planted, *t.advanced, *([t.closed] if t.closed is not None else [])):
                    if m.chapter is None and m.beat:
                        at = [b for b in beats if b <= m.beat]
                        m.chapter = reach[at[-1]] if at else None
        due = outline.due_chapters() if outline is not None else {}
        for t in self._threads:  # the outline says when a thread is due (a due chapter the user set wins)
            if t.due_chapter is None and due:
                hit = due.get(t.title) or next((n for k, n in due.items() if k and (k in t.title or t.title in k)), None)
                t.due_chapter = hit
        self._threads_key = key
        return [t.model_copy(deep=True) for t in self._threads]

    @staticmethod
    def _reached(files: set[str], outline: Optional[Outline]) -> Optional[int]:
        """The furthest chapter among chapter ``files`` (non-empty files): the highest outline number of a chapter
        linked to one of them; else, without links, the highest ``NNN-`` number of the files, else their count."""
        if not files:
            return None
        if outline is not None:
            nums = [c.index + 1 for c in outline.chapters() if c.file in files]
            if nums:
                return max(nums)
        prefixed = [int(n.split("-", 1)[0].split(".", 1)[0]) for n in files
                    if n.split("-", 1)[0].split(".", 1)[0].isdigit()]
        if prefixed and len(prefixed) == len(files) and max(prefixed) > 0:
            return max(prefixed)
        return len(files)

    def chapter_reached(self) -> Optional[int]:
        """现在写到 (issue 28): the furthest chapter written on the active branch (1-based; None when nothing is
        written) — over the chapter files of the branch's last checkpoint (an agent turn of this branch or a user
        checkpoint such as an import; the folder as it is when that is the newest checkpoint, or there is none),
        numbered by the outline chapter each
        is linked to, else by the files' ``NNN-`` numbers (:meth:`_reached`). Thread-safe."""
        with self._lock:
            users = {e.id for e in self.tree.path_to() if e.type == "user"}
            latest = None
            if self._has_history():
                cps = self._history().checkpoints()
                for c in cps:
                    if not c.turnId or c.turnId in users or c.turnId not in self.tree.entries:
                        latest = c
                if latest is not None and cps and latest.id == cps[-1].id:
                    latest = None  # the folder goes on from it (renames, edits since): read the folder itself
            if latest is not None:
                files = {n for n, h in latest.files.items() if is_chapter_name(n) and h != EMPTY_SHA}
            else:
                sd = self.story_dir  # (resolved once: the layout looks at the disk)
                files = {f for f in chapter_files(sd) if (sd / f).stat().st_size > 0}
            return self._reached(files, self.outline())

    def threads_used(self) -> bool:
        """Whether the user has changed a thread on this branch (a snapshot with ``thread_events``): only then, or
        with an outline, does the agent state block list threads (threads derived from plot_threads alone leave the
        block as it always was — the golden agent runs)."""
        return any(getattr(e, "thread_events", None) for e in self.tree.iter_type("rp-state"))

    def thread_event(self, event: ThreadEvent, state: WorldState) -> Thread:
        """Record a user change of a thread as a user snapshot on the active branch carrying ``state`` unchanged and
        ``thread_events=[event]``; returns the thread after it. Raises KeyError (unknown thread id), OSError."""
        if event.op != "add" and not any(t.id == event.id for t in self.threads()):
            raise KeyError(event.id)
        self.tree.append("rp-state", state=state.to_dict(), source="user",
                         thread_events=[event.model_dump(exclude_none=True)])
        self.tree.commit()
        self._threads_key = None
        tid = event.id
        if event.op == "add":
            from ..ledger.threads import thread_id
            tid = event.id or thread_id((event.title or "").strip())
        return next(t for t in self.threads() if t.id == tid)

    # ------------------------------------------------------------------ codex

    def _legacy_aliases(self) -> dict[str, list[str]]:
        """The issue-19 alias lists from ``名录别名.json`` ({} when none or unreadable)."""
        try:
            raw = json.loads((self.dir / ALIASES_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict):
            return {}
        return {str(k): [str(a) for a in v if isinstance(a, str)] for k, v in raw.items() if isinstance(v, list)}

    def written_codex(self) -> CodexBook:
        """The written codex entries (``名录.json``; empty when none or damaged)."""
        return load_codex(self.dir)[0]

    def aliases(self) -> dict[str, list[str]]:
        """The alias lists (canonical name → aliases): the written entries' and the older ``名录别名.json``'s."""
        out = {k: list(v) for k, v in self._legacy_aliases().items() if v}
        for rec in self.written_codex().entries:
            merged = [*rec.aliases, *[x for x in out.pop(rec.name, []) if x not in rec.aliases]]
            if merged:
                out[rec.name] = merged
        return out

    def set_aliases(self, name: str, aliases: list[str]) -> None:
        """Set the aliases of ``name`` (an empty list removes them), in its written codex entry (made when there is
        none yet: the roster's name gets an entry of kind character unless one is set later). The older
        ``名录别名.json`` loses the name. Raises CodexError (a damaged ``名录.json``), OSError."""
        clean = [a.strip() for a in aliases if a and a.strip() and a.strip() != name]
        book = self.written_codex()
        rec = book.get(name)
        if rec is not None:
            rec.aliases = clean
            save_codex(self.dir, book)
        elif clean:
            book.entries.append(CodexRecord(name=name, aliases=clean))
            save_codex(self.dir, book)
        legacy = self._legacy_aliases()
        if name in legacy:
            legacy.pop(name)
            atomic_write_text(self.dir / ALIASES_FILE, json.dumps(legacy, ensure_ascii=False, indent=1))

    def codex_add(self, record: CodexRecord) -> CodexRecord:
        """Write a new codex entry. A roster name may get one (the roster and the codex are one list: the entry adds
        what the scribe does not know). Raises CodexError ``exists`` (an entry has that name or alias), ``damaged``,
        OSError."""
        book = self.written_codex()
        clash = next((n for n in record.names() if book.get(n) is not None), None)
        if clash is not None:
            raise CodexError("exists", name=clash)
        book.entries.append(record)
        save_codex(self.dir, book)
        return record

    def codex_set(self, name: str, state: Optional[WorldState] = None, **changes: Any) -> CodexRecord:
        """Change the written entry of ``name`` (name or alias): any of ``kind``, ``description``, ``aliases``,
        ``tags``, ``relations`` (list of :class:`Relation` or dicts), ``true_from`` (0 or None clears it), ``rename``
        (a new canonical name). A roster name (of ``state``'s roster) without an entry gets one first, of the
        roster's kind. Raises CodexError ``not_found`` / ``exists`` / ``bad_args`` / ``damaged``, OSError."""
        book = self.written_codex()
        rec = book.get(name)
        if rec is None:
            roster = self._names(state) if state is not None else {}
            if name not in roster:
                raise CodexError("not_found", name=name)
            rec = CodexRecord(name=name, kind=roster[name])
            book.entries.append(rec)
        data = rec.model_dump()
        new_name = changes.pop("rename", None)
        if changes.get("true_from") == 0:
            changes["true_from"] = None
        data.update({k: v for k, v in changes.items() if k in CodexRecord.model_fields})
        if new_name:
            other = book.get(new_name)
            if other is not None and other is not rec:
                raise CodexError("exists", name=new_name)
            data["name"] = new_name
        try:
            new = CodexRecord.model_validate(data)
        except ValueError as e:
            raise CodexError("bad_args", why=_first_error(e)) from None
        book.entries[book.entries.index(rec)] = new
        save_codex(self.dir, book)
        return new

    def codex_remove(self, name: str) -> bool:
        """Delete the written entry of ``name`` (a roster name stays in the codex, as the ledger has it). Returns
        whether one was deleted. Raises CodexError ``damaged``, OSError."""
        book = self.written_codex()
        rec = book.get(name)
        if rec is None:
            return False
        book.entries.remove(rec)
        save_codex(self.dir, book)
        return True

    def _names(self, state: WorldState) -> dict[str, CodexKind]:
        r = state.roster
        out: dict[str, CodexKind] = {}
        if r is not None:
            for kind, table in (("character", r.characters), ("place", r.places), ("item", r.items),
                                ("event", r.events)):
                for n in table:
                    out.setdefault(n, kind)  # type: ignore[arg-type]
        for n in state.characters:
            out.setdefault(n, "character")
        return out

    def mention_index(self, state: WorldState) -> MentionIndex:
        """The mentions index over ``正文/`` for the roster of ``state`` (incremental, see MentionIndex). Callers
        query it under the room's lock (:meth:`codex`, :meth:`mentions`)."""
        self._mentions.set_names({r[0]: r[3] for r in self._rows(state) if r[0]})
        self._mentions.update_folder(self.story_dir)
        return self._mentions

    def _rows(self, state: WorldState) -> list[tuple[str, CodexKind, Optional[CodexRecord], list[str], list[str]]]:
        """The one list: (canonical name, kind, written entry or None, aliases, roster names) — roster names in
        roster order (merged into the written entry whose name or alias they are), then entries only written."""
        book = self.written_codex()
        legacy = self._legacy_aliases()
        rows: dict[str, tuple[CodexKind, Optional[CodexRecord], list[str]]] = {}
        for n, kind in self._names(state).items():
            rec = book.get(n)
            canon = rec.name if rec is not None else n
            row = rows.setdefault(canon, (rec.kind if rec is not None else kind, rec, []))
            row[2].append(n)
        for rec in book.entries:
            rows.setdefault(rec.name, (rec.kind, rec, []))
        out = []
        for canon, (kind, rec, roster) in rows.items():
            al: list[str] = []
            for a in [*(rec.aliases if rec is not None else []), *roster, *legacy.get(canon, []),
                      *[x for r in roster for x in legacy.get(r, [])]]:
                if a and a != canon and a not in al:
                    al.append(a)
            out.append((canon, kind, rec, al, roster))
        return out

    def _facts(self) -> dict[str, list[CodexFact]]:
        snaps, cps = self._turns()
        outline = self.outline() if cps else None
        facts: dict[str, list[CodexFact]] = {}
        last: dict[str, str] = {}
        for e, beat in snaps:
            chars = (e.state or {}).get("characters") or {}
            if not isinstance(chars, dict):
                continue
            no = self._chapter_no(cps.get(beat), outline)[0] if cps else None
            for name, cs in chars.items():
                if not isinstance(cs, dict):
                    continue
                bits = [f"{k}：{cs[k]}" for k, zh in (("status", "状态"), ("notes", "备注"), ("at", "在")) if cs.get(k)]
                text = "；".join(b.replace("status：", "状态：").replace("notes：", "备注：").replace("at：", "在：")
                                for b in bits)
                if text and last.get(name) != text:
                    facts.setdefault(name, []).append(CodexFact(text=text, from_chapter=no, beat=beat))
                    last[name] = text
        return facts

    def _lore(self, name: str, aliases: list[str]) -> Optional[LoreLink]:
        try:
            entries = list(self._book().entries)
        except Exception:  # noqa: BLE001 - a book that fails to load simply links nothing
            return None
        want = {name, *aliases}
        hit = next((e for e in entries if e.title in want), None) or \
            next((e for e in entries if any(k in want for k in e.keys)), None)
        if hit is None:
            return None
        return LoreLink(uid=hit.uid, title=hit.title, book=str(getattr(hit, "book", "") or ""),
                        content=hit.content[:200])

    def codex(self, state: WorldState, name: Optional[str] = None) -> list[CodexEntry]:
        """The codex of the branch whose ledger is ``state``: every roster name (or only ``name``) with its facts,
        first appearance, mentions per chapter and lore link, in roster order (characters, places, items, events)."""
        with self._lock:
            return self._codex_locked(state, name)

    def _codex_locked(self, state: WorldState, name: Optional[str]) -> list[CodexEntry]:
        rows = self._rows(state)
        idx = self.mention_index(state)
        facts = self._facts()
        r = state.roster
        seen: dict[str, str] = {}  # name -> in-story time of first appearance (Roster's tables)
        if r is not None:
            for table in (r.characters, r.places, r.items, r.events):
                for n, t in table.items():
                    seen.setdefault(n, t)
        out: list[CodexEntry] = []
        for canon, kind, rec, al, roster in rows:
            if name is not None and name != canon and name not in al:
                continue
            counts = idx.counts(canon)
            fs = [f for n in dict.fromkeys([canon, *roster]) for f in facts.get(n, [])]
            fs.sort(key=lambda f: f.beat or 0)
            out.append(CodexEntry(
                name=canon, kind=kind, aliases=al, description=rec.description if rec else "",
                tags=list(rec.tags) if rec else [], relations=list(rec.relations) if rec else [],
                true_from=rec.true_from if rec else None, written=rec is not None, in_roster=bool(roster),
                first_seen=next((seen[n] for n in [canon, *roster] if seen.get(n)), ""), facts=fs,
                first_mention=idx.first(canon), chapters=counts, mentions=sum(counts.values()),
                lore=self._lore(canon, al)))
        return out

    def mentions(self, state: WorldState, name: str, limit: Optional[int] = None) -> list[Mention]:
        """Every mention of ``name`` (its canonical name or an alias; aliases included) in the chapter files, book
        order."""
        with self._lock:
            idx = self.mention_index(state)
            canon = next((r[0] for r in self._rows(state) if name == r[0] or name in r[3]), name)
            return idx.mentions(canon, limit)

    def mentions_in(self, state: WorldState, file: str) -> dict[str, int]:
        """{canonical name: mentions} of the codex names chapter ``file`` mentions, in order of first mention
        (what the editor highlights; offsets per name with :meth:`mentions`)."""
        with self._lock:
            return self.mention_index(state).names_in(file)

    # ------------------------------------------------------------------ progress

    def progress(self) -> Progress:
        """字数 per chapter / volume / book with the outline's targets, and the daily counts from the checkpoints.
        Thread-safe."""
        with self._lock:
            return self._progress_locked()

    def _progress_locked(self) -> Progress:
        from ..story.checkpoint_model import scan_chapters, sha256_hex
        files: dict[str, int] = {}
        shas: dict[str, str] = {}
        entries, _ = scan_chapters(self.story_dir) if self.story_dir.is_dir() else ([], [])
        for e in entries:
            try:
                data = Path(e.path).read_bytes()
            except OSError:
                continue
            shas[e.name] = sha256_hex(data)
            files[e.name] = self._words.count(shas[e.name], functools.partial(data.decode, "utf-8", "replace"))
        outline = self.outline()
        self._remember_hashes(shas)
        p = book_progress(files, outline)
        if self._has_history():
            hist = self._history()
            p.days, p.today = daily_counts(hist.checkpoints(),
                                           lambda h: self._words.count(h, lambda: hist.object_text(h)))
        with_webnovel(p, load_webnovel(self.dir))
        self._words.save()
        return p

    def _remember_hashes(self, shas: dict[str, str]) -> None:
        """Keep each link's remembered content hash current (so a file renamed outside the engine is followed)."""
        links = load_links(self.dir)
        changed = False
        for ln in links.links.values():
            h = shas.get(ln.file)
            if h and h != ln.sha:
                ln.sha, changed = h, True
        if changed:
            try:
                save_links(self.dir, links)
            except OSError:
                pass

    # ------------------------------------------------------------------ the agent state block

    def state_blocks(self, state: WorldState) -> str:
        """What the agent state block gains (issue 19): 【大纲】 (the outline's current branch, with the rule that
        the outline is law unless the user changes it), 【伏笔】 (open threads, past-due flagged) and the facts that
        hold at the chapter being worked on, and 【本章涉及的设定】 — the written codex entries mentioned in that
        chapter (:meth:`mentioned_block`), and 【章节摘要】 (the summaries of the chapters before the one being
        written, ``story.summaries``). "" when the chat has no outline, no thread event of the user, no written
        codex entry and no chapter summary (byte-stable: the golden agent runs)."""
        outline = self.outline()
        written = bool(self.written_codex().entries)
        lang = self.language
        en = prompt_language(lang) == "en"
        if outline is None and not self.threads_used() and not written:
            return summaries_block(self.dir, self.story_dir, language=lang)  # issue 28: every summary ("" if none)
        threads = self.threads()
        blocks: list[str] = []
        focus = None
        if outline is not None and outline.chapters():
            latest = self._history().latest() if self._has_history() else None
            f = self._chapter_no(latest, outline)[1] if latest is not None else ""
            focus = outline.focus(f or None)
            head = ("[Outline] The outline is law: write by it unless the user changed it; ask the user before changing "
                    "it, and change it with outline_edit.\n" if en else
                    "【大纲】大纲即法律：按大纲写，除非用户改了大纲；要改大纲先问用户，改用 outline_edit。\n")
            blocks.append(head + outline.branch(focus, language=lang))
        elif outline is not None:
            blocks.append("[Outline] (the outline has no chapters yet)" if en else "【大纲】（大纲.md 还没有章节）")
        chapter = focus.index + 1 if focus is not None else None
        tb = format_threads_block(threads, chapter, language=lang)
        if tb:
            blocks.append(("[Foreshadowing] Threads not paid off yet:\n" if en else "【伏笔】未回收的伏笔：\n") + tb)
        sb = summaries_block(self.dir, self.story_dir, focus.file if focus is not None and focus.file else "", lang)
        if sb:
            blocks.append(sb)
        if chapter is not None:
            facts = []
            for e in self.codex(state)[:CODEX_BLOCK_MAX_NAMES]:
                at = e.facts_at(chapter)
                if at and at[-1].from_chapter is not None:
                    facts.append(f"{e.name}: {at[-1].text} (since chapter {at[-1].from_chapter})" if en else
                                 f"{e.name}：{at[-1].text}（自第 {at[-1].from_chapter} 章）")
            if facts:
                blocks.append((f"[Setting as of chapter {chapter}]\n" if en else f"【设定（第 {chapter} 章时）】\n")
                              + "\n".join(facts))
        if written:
            mb = self.mentioned_block(state, outline, focus)
            if mb:
                blocks.append(mb)
        return "\n\n".join(blocks)

    def writing_file(self, outline: Optional[Outline], focus: Optional[OutlineChapter]) -> str:
        """The chapter file being written: the focus chapter's linked file, else the file the last checkpoint
        changed, else the last chapter file ("" when none)."""
        if focus is not None and focus.file:
            return focus.file
        if self._has_history():
            latest = self._history().latest()
            if latest is not None:
                f = self._chapter_no(latest, outline)[1]
                if f:
                    return f
        files = chapter_files(self.story_dir)
        return files[-1] if files else ""

    def mentioned_block(self, state: WorldState, outline: Optional[Outline] = None,
                        focus: Optional[OutlineChapter] = None) -> str:
        """【本章涉及的设定】 (issue 28): the written codex entries (with a description) that the chapter being
        written mentions — its file (:meth:`writing_file`) and, from the outline, its title and beats (a chapter not
        written yet) — in order of first mention, an entry ``true_from`` a later chapter left out. Bounded:
        :data:`MENTIONED_MAX_ENTRIES` entries, descriptions cut to :data:`MENTIONED_DESC_MAX` characters, the block
        to :data:`MENTIONED_BLOCK_MAX`. "" when none. It sits in the state block at the end of the prompt, so the
        cached prefix (system prompt, history) stays byte-stable."""
        with self._lock:
            idx = self.mention_index(state)
            f = self.writing_file(outline, focus)
            counts = dict(idx.names_in(f)) if f else {}
            if focus is not None:
                for n, k in idx.scan_text("\n".join([focus.title, *focus.beats])).items():
                    counts.setdefault(n, k)
            rows = {r[0]: r for r in self._rows(state)}
        chapter = focus.index + 1 if focus is not None else None
        lines: list[str] = []
        size = 0
        for n in counts:
            row = rows.get(n)
            rec = row[2] if row is not None else None
            if rec is None or not rec.description.strip():
                continue
            if rec.true_from is not None and chapter is not None and chapter < rec.true_from:
                continue
            d = " ".join(rec.description.split())
            d = d if len(d) <= MENTIONED_DESC_MAX else d[:MENTIONED_DESC_MAX] + "…"
            if prompt_language(self.language) == "en":
                aka = f", also called {', '.join(rec.aliases[:3])}" if rec.aliases else ""
                line = f"- {rec.name} ({rec.kind}{aka}): {d}"
            else:
                aka = f"，又名{'、'.join(rec.aliases[:3])}" if rec.aliases else ""
                line = f"- {rec.name}（{KIND_ZH[rec.kind]}{aka}）：{d}"
            if size + len(line) > MENTIONED_BLOCK_MAX or len(lines) >= MENTIONED_MAX_ENTRIES:
                break
            lines.append(line)
            size += len(line) + 1
        if not lines:
            return ""
        en = prompt_language(self.language) == "en"
        return ("[Setting in this chapter]\n" if en else "【本章涉及的设定】\n") + "\n".join(lines)
