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
from typing import Any, Callable, Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..fsutil import atomic_write_text
from ..ledger.state import WorldState
from ..ledger.threads import Thread, ThreadEvent, ThreadMark, build_threads, format_threads_block, quote_at
from ..lore import Lorebook
from ..session.tree import SessionTree
from ..story.checkpoint_model import Checkpoint, is_chapter_name
from ..story.checkpoints import StoryHistory
from ..story.mentions import Mention, MentionIndex
from ..story.outline import Outline, outline_path, parse_outline, read_outline, replace_text, set_chapter
from ..story.progress import Progress, WordCache, book_progress, daily_counts

#: The per-chat alias list (canonical name → aliases), user-edited.
ALIASES_FILE = "名录别名.json"
#: 字数 by content hash, a rebuildable cache (story.progress.WordCache).
WORDS_CACHE_FILE = ".liyuan-words.json"
#: Bounds of the codex part of the state block.
CODEX_BLOCK_MAX_NAMES = 20

CodexKind = Literal["character", "place", "item", "event"]
KIND_ZH: dict[str, str] = {"character": "人物", "place": "地点", "item": "物品", "event": "剧情线"}


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
    """One name: ``name``, ``kind``, ``aliases``, ``first_seen`` (the roster's in-story time of first sight),
    ``facts`` (oldest first), ``first_mention`` (in the chapter files), ``chapters`` ({file: mentions}, book order),
    ``mentions`` (total), ``lore``."""

    name: str
    kind: CodexKind
    aliases: list[str] = Field(default_factory=list)
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


class WritingRoom:
    """The writing room of one chat folder ``directory``. ``tree``: the session; ``history``: () → the chapter
    checkpoints; ``story_dir``: the ``正文/`` folder; ``book``: () → the chat's merged world book."""

    def __init__(self, directory: Path, tree: SessionTree, history: Callable[[], StoryHistory],
                 book: Callable[[], Lorebook]):
        self.dir, self.tree, self._history, self._book = Path(directory), tree, history, book
        self._mentions = MentionIndex()
        self._words = WordCache(self.dir / WORDS_CACHE_FILE)
        self._threads_key: Any = None
        self._threads: list[Thread] = []
        # the window gathers the panes on a worker thread while a turn may build its state block: one at a time
        self._lock = threading.RLock()

    @property
    def story_dir(self) -> Path:
        """The chapter folder ``正文/``."""
        return self.dir / "正文"

    # ------------------------------------------------------------------ outline

    def outline(self) -> Optional[Outline]:
        """The parsed ``大纲.md``, or None when the chat has none."""
        return read_outline(self.dir)

    def has_outline(self) -> bool:
        """Whether ``大纲.md`` exists (the outline tools and blocks are offered only then)."""
        p = outline_path(self.dir)
        return p.is_file() and not p.is_symlink()

    def outline_text(self) -> str:
        """The outline's text ("" when none)."""
        o = self.outline()
        return o.text if o is not None else ""

    def save_outline(self, text: str) -> Outline:
        """Write ``大纲.md`` whole (atomic; the next checkpoint records it) and return it parsed. OSError."""
        atomic_write_text(outline_path(self.dir), text)
        return parse_outline(text)

    def edit_outline(self, old: str, new: str) -> Outline:
        """Exact-text replace in the outline (``old`` must occur once). Raises ToolError (no outline: ``not_found``),
        OSError."""
        return self.save_outline(replace_text(self._outline_or_raise().text, old, new))

    def set_chapter(self, ref: str | int, *, status: Optional[str] = None, target: Optional[int] = None,
                    file: Optional[str] = None) -> Outline:
        """Change one outline chapter's status / target / linked file (:func:`core.story.outline.set_chapter`).
        Raises ToolError, OSError."""
        return self.save_outline(set_chapter(self._outline_or_raise().text, ref, status=status, target=target,
                                             file=file))

    def _outline_or_raise(self) -> Outline:
        o = self.outline()
        if o is None:
            from ..errors import ToolError
            raise ToolError("not_found", "这一局还没有大纲（大纲.md）。")
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
        if users and (self.dir / "历史").is_dir():
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
               hash(outline.text) if outline is not None else None)
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
        due = outline.due_chapters() if outline is not None else {}
        for t in self._threads:  # the outline says when a thread is due (a due chapter the user set wins)
            if t.due_chapter is None and due:
                hit = due.get(t.title) or next((n for k, n in due.items() if k and (k in t.title or t.title in k)), None)
                t.due_chapter = hit
        self._threads_key = key
        return [t.model_copy(deep=True) for t in self._threads]

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

    def aliases(self) -> dict[str, list[str]]:
        """The alias lists (canonical name → aliases) from ``名录别名.json`` ({} when none or unreadable)."""
        try:
            raw = json.loads((self.dir / ALIASES_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict):
            return {}
        return {str(k): [str(a) for a in v if isinstance(a, str)] for k, v in raw.items() if isinstance(v, list)}

    def set_aliases(self, name: str, aliases: list[str]) -> None:
        """Set the aliases of ``name`` (an empty list removes them). OSError."""
        al = self.aliases()
        clean = [a.strip() for a in aliases if a and a.strip() and a.strip() != name]
        if clean:
            al[name] = clean
        else:
            al.pop(name, None)
        atomic_write_text(self.dir / ALIASES_FILE, json.dumps(al, ensure_ascii=False, indent=1))

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
        al = self.aliases()
        names = self._names(state)
        self._mentions.set_names({n: al.get(n, []) for n in names if n not in ("",)})
        self._mentions.update_folder(self.story_dir)
        return self._mentions

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
        names = self._names(state)
        idx = self.mention_index(state)
        al = self.aliases()
        facts = self._facts()
        r = state.roster
        seen: dict[str, str] = {}  # name -> in-story time of first appearance (Roster's tables)
        if r is not None:
            for table in (r.characters, r.places, r.items, r.events):
                for n, t in table.items():
                    seen.setdefault(n, t)
        out: list[CodexEntry] = []
        for n, kind in names.items():
            if name is not None and n != name:
                continue
            counts = idx.counts(n)
            out.append(CodexEntry(name=n, kind=kind, aliases=al.get(n, []), first_seen=seen.get(n, ""),
                                  facts=facts.get(n, []), first_mention=idx.first(n), chapters=counts,
                                  mentions=sum(counts.values()), lore=self._lore(n, al.get(n, []))))
        return out

    def mentions(self, state: WorldState, name: str, limit: Optional[int] = None) -> list[Mention]:
        """Every mention of ``name`` (aliases included) in the chapter files, book order."""
        with self._lock:
            return self.mention_index(state).mentions(name, limit)

    # ------------------------------------------------------------------ progress

    def progress(self) -> Progress:
        """字数 per chapter / volume / book with the outline's targets, and the daily counts from the checkpoints.
        Thread-safe."""
        with self._lock:
            return self._progress_locked()

    def _progress_locked(self) -> Progress:
        from ..story.checkpoint_model import scan_chapters, sha256_hex
        files: dict[str, int] = {}
        entries, _ = scan_chapters(self.story_dir)
        for e in entries:
            try:
                data = Path(e.path).read_bytes()
            except OSError:
                continue
            files[e.name] = self._words.count(sha256_hex(data), functools.partial(data.decode, "utf-8", "replace"))
        p = book_progress(files, self.outline())
        if (self.dir / "历史").is_dir():
            hist = self._history()
            p.days, p.today = daily_counts(hist.checkpoints(),
                                           lambda h: self._words.count(h, lambda: hist.object_text(h)))
        self._words.save()
        return p

    # ------------------------------------------------------------------ the agent state block

    def state_blocks(self, state: WorldState) -> str:
        """What the agent state block gains (issue 19): 【大纲】 (the outline's current branch, with the rule that
        the outline is law unless the user changes it), 【伏笔】 (open threads, past-due flagged) and the facts that
        hold at the chapter being worked on. "" when the chat has no outline and no open thread (byte-stable)."""
        outline = self.outline()
        if outline is None and not self.threads_used():
            return ""
        threads = self.threads()
        blocks: list[str] = []
        focus = None
        if outline is not None and outline.chapters():
            latest = self._history().latest() if (self.dir / "历史").is_dir() else None
            f = self._chapter_no(latest, outline)[1] if latest is not None else ""
            focus = outline.focus(f or None)
            blocks.append("【大纲】大纲即法律：按大纲写，除非用户改了大纲；要改大纲先问用户，改用 outline_edit。\n"
                          + outline.branch(focus))
        elif outline is not None:
            blocks.append("【大纲】（大纲.md 还没有章节）")
        chapter = focus.index + 1 if focus is not None else None
        tb = format_threads_block(threads, chapter)
        if tb:
            blocks.append("【伏笔】未回收的伏笔：\n" + tb)
        if chapter is not None:
            facts = []
            for e in self.codex(state)[:CODEX_BLOCK_MAX_NAMES]:
                at = e.facts_at(chapter)
                if at and at[-1].from_chapter is not None:
                    facts.append(f"{e.name}：{at[-1].text}（自第 {at[-1].from_chapter} 章）")
            if facts:
                blocks.append(f"【设定（第 {chapter} 章时）】\n" + "\n".join(facts))
        return "\n\n".join(blocks)
