"""The foreshadowing ledger (伏笔, issue 19 §2): threads with their history, per branch.

Nothing here changes what the scribe writes (the golden runs stay byte for byte). A branch's threads are *derived*
from its ``rp-state`` snapshots, oldest first (:func:`build_threads`):

- the scribe's ``plot_threads`` (seed 002: a string array replaced whole) — a string that appears is a thread
  **planted** at that point; a string that disappears is **paid_off** (closed by the story); so role-play chats get
  first-class threads with history for free;
- explicit thread events, the optional extra key ``thread_events`` of a snapshot (a list of :class:`ThreadEvent`
  dicts) — written by the user's commands (edit, mark intentional, close, reopen, set due) as a user snapshot that
  carries the unchanged world state.

Because the input is the branch's snapshots, threads are per branch like the rest of the ledger, go back with the
conversation (撤销本轮, branch switches), and cost nothing when unused. Where a thread was planted/advanced is a
:class:`ThreadMark`: the beat number, the chapter file and its number in agent mode, and a quote with its UTF-16
offset in that file when one was found (the caller supplies the text of the chapters the turn changed).
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Iterable, Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..text import prompt_language

ThreadState = Literal["planted", "advancing", "paid_off", "dropped"]
THREAD_STATES: tuple[str, ...] = ("planted", "advancing", "paid_off", "dropped")
STATE_ZH: dict[str, str] = {"planted": "已埋", "advancing": "推进中", "paid_off": "已回收", "dropped": "已放弃"}
#: How many open threads the agent state block lists (the rest are counted).
BLOCK_MAX_THREADS = 12
#: A quote is cut to this many characters.
QUOTE_MAX = 60


class ThreadMark(DeferredModel):
    """Where something happened to a thread: ``beat`` (1-based user turn on the branch), ``chapter`` (1-based
    chapter number, agent mode), ``file`` (chapter file name in ``正文/``; "" in role-play), ``quote`` (the words
    in that file — in role-play, in that beat's reply), ``offset`` (UTF-16 offset of the quote in the file as it was
    then, or in the reply's text), ``note`` (free text), ``entry`` (the
    snapshot entry id that recorded it)."""

    beat: Optional[int] = None
    chapter: Optional[int] = None
    file: str = ""
    quote: str = ""
    offset: Optional[int] = None
    note: str = ""
    entry: str = ""


class Thread(DeferredModel):
    """One thread. ``id`` is stable (a hash of the title it was planted with); ``title`` the current wording;
    ``state``; ``planted`` / ``advanced`` / ``closed`` marks; ``due_chapter`` (1-based, the chapter it must be paid
    off by, None when nobody said); ``intentional`` (the user said leaving it open is deliberate: never flagged);
    ``note``; ``source`` ("scribe" when it came from plot_threads, "user" when the user added it)."""

    id: str
    title: str
    state: ThreadState = "planted"
    planted: ThreadMark = Field(default_factory=ThreadMark)
    advanced: list[ThreadMark] = Field(default_factory=list)
    closed: Optional[ThreadMark] = None
    due_chapter: Optional[int] = None
    intentional: bool = False
    note: str = ""
    source: Literal["scribe", "user"] = "scribe"

    @property
    def open(self) -> bool:
        """Planted or advancing (not paid off, not dropped)."""
        return self.state in ("planted", "advancing")

    def past_due(self, chapter: Optional[int]) -> bool:
        """Open, not intentional, and ``chapter`` (the chapter being worked on, 1-based) is past its due chapter."""
        return (self.open and not self.intentional and self.due_chapter is not None and chapter is not None
                and chapter > self.due_chapter)


class ThreadEvent(DeferredModel):
    """An explicit change, stored in a snapshot's ``thread_events``: ``op`` one of ``add`` (a new thread, ``title``),
    ``edit`` (``title`` / ``note`` / ``due_chapter``; a field left None is unchanged, due 0 clears it),
    ``advance`` (a mark), ``intentional`` (``value``), ``close`` (``state`` paid_off or dropped), ``reopen``;
    ``id`` the thread (for add: derived from the title); ``mark`` where it happened."""

    op: Literal["add", "edit", "advance", "intentional", "close", "reopen"]
    id: str = ""
    title: Optional[str] = None
    note: Optional[str] = None
    due_chapter: Optional[int] = None
    value: Optional[bool] = None
    state: Optional[ThreadState] = None
    mark: ThreadMark = Field(default_factory=ThreadMark)


def thread_id(title: str) -> str:
    """The stable id of a thread planted as ``title`` (12 hex digits of its SHA-256)."""
    return hashlib.sha256(title.encode("utf-8")).hexdigest()[:12]


#: Finds a quote for a newly planted or closed thread: (thread title, beat) → mark fields or None.
Locator = Callable[[str, int], Optional[ThreadMark]]


def build_threads(snapshots: Iterable[tuple[Any, int]], locate: Optional[Locator] = None) -> list[Thread]:
    """The branch's threads from its ``rp-state`` snapshots, oldest first, each as ``(entry, beat)`` (entry: a
    StateEntry-like object with ``id``, ``state`` dict and optional ``thread_events``; beat: the 1-based user turn
    it belongs to). ``locate`` (optional) supplies file/quote/offset for plants and closes found in plot_threads.
    Returns the threads in planting order (closed ones included)."""
    threads: dict[str, Thread] = {}
    by_title: dict[str, str] = {}
    prev: list[str] = []

    def mark(title: str, beat: int, entry: str) -> ThreadMark:
        m = locate(title, beat) if locate is not None else None
        m = m.model_copy() if m is not None else ThreadMark()
        m.beat, m.entry = beat, entry
        return m

    for e, beat in snapshots:
        st = getattr(e, "state", None) or {}
        cur = [t for t in (st.get("plot_threads") or []) if isinstance(t, str) and t]
        if cur != prev:
            for t in cur:
                if t in prev:
                    continue
                tid = by_title.get(t) or thread_id(t)
                th = threads.get(tid)
                if th is None:
                    threads[tid] = Thread(id=tid, title=t, planted=mark(t, beat, e.id))
                    by_title[t] = tid
                elif not th.open:  # back in plot_threads: reopened
                    th.state, th.closed = "advancing", None
                    th.advanced.append(mark(t, beat, e.id))
            for t in prev:
                if t in cur:
                    continue
                known = by_title.get(t)
                th = threads.get(known) if known else None
                if th is not None and th.open and th.source == "scribe":
                    th.state, th.closed = "paid_off", mark(t, beat, e.id)
            prev = cur
        for raw in getattr(e, "thread_events", None) or []:
            try:
                ev = ThreadEvent.model_validate(raw)
            except ValueError:
                continue
            _apply_event(threads, by_title, ev, beat, e.id)
    return list(threads.values())


def _apply_event(threads: dict[str, Thread], by_title: dict[str, str], ev: ThreadEvent, beat: int, entry: str) -> None:
    m = ev.mark.model_copy()
    m.beat = m.beat or beat
    m.entry = entry
    if ev.op == "add":
        title = (ev.title or "").strip()
        if not title:
            return
        tid = ev.id or thread_id(title)
        if tid in threads:
            return
        threads[tid] = Thread(id=tid, title=title, planted=m, due_chapter=ev.due_chapter or None,
                              note=ev.note or "", source="user")
        by_title.setdefault(title, tid)
        return
    th = threads.get(ev.id)
    if th is None:
        return
    if ev.op == "edit":
        if ev.title:
            th.title = ev.title
            by_title[ev.title] = th.id
        if ev.note is not None:
            th.note = ev.note
        if ev.due_chapter is not None:
            th.due_chapter = ev.due_chapter or None
    elif ev.op == "advance":
        if th.state == "planted":
            th.state = "advancing"
        th.advanced.append(m)
    elif ev.op == "intentional":
        th.intentional = bool(ev.value if ev.value is not None else True)
    elif ev.op == "close":
        th.state = ev.state if ev.state in ("paid_off", "dropped") else "paid_off"
        th.closed = m
    elif ev.op == "reopen":
        th.state, th.closed = ("advancing" if th.advanced else "planted"), None


#: The 【伏笔】 body's words in English (a chat in English, issue 32).
STATE_EN: dict[str, str] = {"planted": "planted", "advancing": "advancing", "paid_off": "paid off", "dropped": "dropped"}


def format_threads_block(threads: list[Thread], chapter: Optional[int], limit: int = BLOCK_MAX_THREADS,
                         language: str = "zh") -> str:
    """The 【伏笔】 body for the agent state block: open threads, past-due ones first (flagged 「已过期」), each with
    where it was planted and its due chapter; at most ``limit`` lines, then a count of the rest. "" when no thread
    is open. ``language``: the chat's (English for every language but Chinese)."""
    open_ = [t for t in threads if t.open]
    if not open_:
        return ""
    open_.sort(key=lambda t: (not t.past_due(chapter), t.due_chapter or 10**9))
    w = THREAD_WORDS[prompt_language(language)]
    lines = []
    for t in open_[:limit]:
        bits = [w["states"][t.state]]
        p = t.planted
        if p.chapter:
            bits.append(w["in_chapter"].format(n=p.chapter))
        elif p.beat:
            bits.append(w["in_turn"].format(n=p.beat))
        if t.due_chapter:
            bits.append(w["due"].format(n=t.due_chapter))
        if t.intentional:
            bits.append(w["intentional"])
        flag = w["overdue"] if t.past_due(chapter) else ""
        lines.append(w["line"].format(flag=flag, title=t.title, bits=w["sep"].join(bits)))
    if len(open_) > limit:
        lines.append(w["more"].format(n=len(open_) - limit))
    return "\n".join(lines)


#: The open-threads block's words per language (Chinese: the seed's; English for an English chat, issue 32).
THREAD_WORDS: dict[str, dict[str, Any]] = {
    "zh": {"states": STATE_ZH, "in_chapter": "埋于第 {n} 章", "in_turn": "埋于第 {n} 轮", "due": "须在第 {n} 章前回收",
           "intentional": "有意悬置", "overdue": "⚠已过期 ", "line": "- {flag}{title}（{bits}）", "sep": "，",
           "more": "…另有 {n} 条未回收"},
    "en": {"states": STATE_EN, "in_chapter": "planted in chapter {n}", "in_turn": "planted in turn {n}",
           "due": "to be paid off before chapter {n}", "intentional": "left open on purpose", "overdue": "(!) overdue ",
           "line": "- {flag}{title} ({bits})", "sep": ", ", "more": "…{n} more open"},
}


def quote_at(text: str, title: str) -> Optional[tuple[str, int]]:
    """A quote in ``text`` for thread ``title``: the longest piece of the title (2+ characters) found in the text,
    widened to its sentence (cut to :data:`QUOTE_MAX`); returns (quote, UTF-16 offset of the quote) or None."""
    from ..text import utf16_len

    n = len(title)
    for size in range(n, 1, -1):
        for i in range(0, n - size + 1):
            piece = title[i:i + size]
            if not piece.strip() or any(ch in "，。、；：！？ ,.;:!?" for ch in piece):
                continue
            at = text.find(piece)
            if at < 0:
                continue
            start = max(text.rfind(s, 0, at) for s in "。！？\n!?") + 1
            end_c = [x for x in (text.find(s, at + size) for s in "。！？\n!?") if x >= 0]
            end = min(end_c) + 1 if end_c else len(text)
            quote = text[start:end].strip()
            lead = len(text[start:end]) - len(text[start:end].lstrip())
            start += lead
            if len(quote) > QUOTE_MAX:
                start = max(start, at - 10)
                quote = text[start:start + QUOTE_MAX]
            return quote, utf16_len(text[:start])
    return None
