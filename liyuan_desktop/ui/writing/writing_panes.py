"""The writing room in the main window (issue 19): the 大纲, 伏笔, 设定 and 审稿 tabs beside 章节, the progress line in
章节 and in the status bar, and opening a chapter at a place. ui/window/main_window.py calls :func:`install` once and
:meth:`WritingPanes.set_chat` after a chat opened; everything else is wired here.

Data: :func:`gather` asks the chat's read-only queries (outline, progress, threads, codex — the codex builds the
mentions index over the chapter files) on a worker thread through :func:`.tasks.run_in_worker` (nothing slow on the UI
thread; a progress dialog only if it takes over 300 ms), then each pane renders the :class:`RoomData`. It runs after
a chat opened, after every turn (when the window is no longer busy), after a hand edit in 章节, a restore in 检查点,
and after an edit in one of the panes; while a turn runs a refresh waits for its end (the engine is writing then).

Hooks into 章节 (its widgets, no change to ui/writing/chapter_tree.py): a 审稿 button and context-menu entry for the selected
chapter (switches to 审稿 and runs it), and a progress line under the buttons (the book's 字数 / target, today's
count, the selected chapter's 字数 / target).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QLabel, QToolButton

from ..infra.i18n import register, tr
from ..infra.tasks import WorkCancelled, run_in_worker
from ..infra.theme import set_role
from .codex_pane import CodexPane
from .outline_pane import OutlinePane, progress_text, words_text
from .review_panel import ReviewPanel
from .threads_pane import ThreadsPane

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "wr.gather": {"zh": "正在整理大纲、伏笔和设定…", "en": "Reading the outline, threads and codex…"},
    "wr.chapter.review": {"zh": "审稿", "en": "Review"},
    "wr.chapter.review.tip": {"zh": "审读选中的这一章（只报告，不改稿）", "en": "Review the selected chapter (reports only)"},
    "wr.chapter.progress": {"zh": "本章 {words}", "en": "this chapter {words}"},
})


@dataclass
class RoomData:
    """What the panes show, gathered off the UI thread: ``outline`` (or None), ``progress``, ``threads``, ``codex``,
    ``chapter`` (现在写到: the furthest chapter written on the branch, 1-based, ``Chat.chapter_reached``; None when
    none is)."""

    outline: Any = None
    progress: Any = None
    threads: list[Any] = field(default_factory=list)
    codex: list[Any] = field(default_factory=list)
    chapter: Optional[int] = None


def gather(chat: Chat) -> RoomData:
    """Read the writing room of ``chat`` through its public queries (no Qt: safe on a worker thread)."""
    outline = chat.outline()
    progress = chat.writing_progress()
    threads = chat.threads()
    codex = chat.codex()
    chapter = chat.chapter_reached()  # 现在写到: the furthest chapter written on this branch (issue 28)
    return RoomData(outline=outline, progress=progress, threads=threads, codex=codex, chapter=chapter)


def goto(editor: Any, offset: int, length: int = 0) -> None:
    """Put ``editor``'s (a ChapterEditor) cursor at UTF-16 ``offset`` of its file and select ``length`` units (the
    editor shows CRLF files with LF: the offset is moved back by the CRs before it)."""
    if offset < 0:
        return
    raw = editor.editor_text()
    prefix = raw.encode("utf-16-le")[:2 * offset].decode("utf-16-le", errors="ignore")
    pos = offset - prefix.count("\r\n")
    doc_len = editor.text.document().characterCount() - 1
    pos = max(0, min(pos, doc_len))
    cur = editor.text.textCursor()
    cur.setPosition(pos)
    cur.setPosition(min(doc_len, pos + max(0, length)), QTextCursor.MoveMode.KeepAnchor)
    editor.text.setTextCursor(cur)
    editor.text.ensureCursorVisible()
    editor.text.setFocus()


class WritingPanes(QObject):
    """The four panes of one main window and their wiring (module doc). ``dataShown(RoomData)``: the panes were
    just given what was gathered (the manuscript layout's binder and the editor's codex highlighting follow it)."""

    dataShown = Signal(object)

    def __init__(self, window: Any):
        super().__init__(window)
        self.window = window
        self.chat: Optional[Chat] = None
        self.data: Optional[RoomData] = None
        self._stale = False
        self._task: Optional[asyncio.Future] = None
        self._is_busy = False
        self.outline = OutlinePane()
        self.threads = ThreadsPane()
        self.codex = CodexPane()
        self.review = ReviewPanel()
        self.panes = (self.outline, self.threads, self.codex, self.review)
        tabs = window.tabs
        at = tabs.indexOf(window.chapter_pane) + 1
        for i, (pane, key) in enumerate(((self.outline, "wr.outline.tab"), (self.threads, "wr.threads.tab"),
                                         (self.codex, "wr.codex.tab"), (self.review, "wr.review.tab"))):
            tabs.insertTab(at + i, pane, tr(key))
            tabs.setTabVisible(tabs.indexOf(pane), False)
        for pane in self.panes:
            pane.openChapter.connect(self.open_at)
        for pane in (self.outline, self.threads, self.codex):
            pane.changed.connect(self.schedule)
        # 章节: a 审稿 button, a context-menu entry and the progress line
        cp = window.chapter_pane
        self.review_btn = QToolButton()
        self.review_btn.setText(tr("wr.chapter.review"))
        self.review_btn.setToolTip(tr("wr.chapter.review.tip"))
        self.review_btn.clicked.connect(lambda _=False: self.review_selected())
        bar = cp.bar.layout()
        bar.insertWidget(max(0, bar.count() - 1), self.review_btn)
        act = QAction(tr("wr.chapter.review.tip"), cp.list)
        act.triggered.connect(self.review_selected)
        cp.list.addAction(act)
        # issue 28 / 30 §5 additions (imported here: the window's start-up imports stay lean, tests/test_start_imports.py)
        from . import chapter_context, reply_chapter, rewrite_dialog, summaries_dialog, webnovel_panel

        webnovel_panel.install(self, cp.list, window.session)  # issue 28: length norm, 日更, 存稿
        rewrite_dialog.install(cp.editor, lambda: self.chat, window.session)  # issue 28: rewrite a selection
        summaries_dialog.install(self, cp.list, window.session)  # issue 28: a summary per chapter
        chapter_context.install(window, self)  # issue 28: the turn that wrote it, one click away
        reply_chapter.install(window)  # issue 30 §5: the reply is the chapter, for a model that only talks
        self.chapter_progress = QLabel("")
        self.chapter_progress.setWordWrap(True)
        set_role(self.chapter_progress, "muted")
        cp.layout().insertWidget(1, self.chapter_progress)
        cp.list.itemSelectionChanged.connect(self._chapter_selected)
        cp.changed.connect(self.schedule)
        window.timeline_pane.restored.connect(self.schedule)
        # change notices (ui/infra/session.py): a command that changed the outline, the threads or the chapter files gathers again
        window.session.changed.connect(lambda c: self.schedule() if c.outline or c.threads or c.files else None)
        window.busyChanged.connect(self.set_busy)
        self.status_progress = QLabel("")
        set_role(self.status_progress, "muted")
        self.status_progress.setContentsMargins(0, 0, 16, 0)
        window.statusBar().addPermanentWidget(self.status_progress)
        self.status_progress.hide()
        self._update_review_btn()

    # -- chat -----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` when it is an agent chat (the tabs appear), else hide the tabs; then gather."""
        self.chat = chat if chat is not None and chat.mode == "agent" else None
        self.data = None
        tabs = self.window.tabs
        for pane in self.panes:
            tabs.setTabVisible(tabs.indexOf(pane), self.chat is not None)
            pane.set_chat(self.chat)
        self.chapter_progress.setText("")
        self.status_progress.setText("")
        self.status_progress.setVisible(self.chat is not None)
        self._update_review_btn()
        if self.chat is not None:
            self.schedule()

    def set_busy(self, busy: bool) -> None:
        """A turn started (no edits, no review) or ended (gather again). The flag is the signal's, not
        ``window.busy``: the window says "not busy" from inside the task that is still finishing."""
        self._is_busy = busy
        for pane in self.panes:
            pane.set_busy(busy)
        self._update_review_btn()
        if not busy and self.chat is not None:
            self.review.refresh_pending()
            self.schedule()

    def _busy(self) -> bool:
        return self._is_busy

    # -- gathering ------------------------------------------------------------------------------------------
    def schedule(self) -> None:
        """Gather again soon (once; a gather already running is followed by one more)."""
        if self.chat is None:
            return
        if self._task is not None and not self._task.done():
            self._stale = True
            return
        coro = self.refresh()
        try:
            self._task = asyncio.ensure_future(coro)
        except RuntimeError:  # no event loop (a synchronous caller): gather right here
            coro.close()  # never started: closed, not left for the collector to warn about
            self.show(gather(self.chat))

    async def refresh(self) -> Optional[RoomData]:
        """Gather on a worker thread and show the result (nothing while a turn runs: it comes after)."""
        chat = self.chat
        if chat is None:
            return None
        if self._busy():
            self._stale = True
            return None
        while True:
            self._stale = False
            try:
                data = await run_in_worker(self.window, lambda _w: gather(chat), label=tr("wr.gather"))
            except WorkCancelled:
                return None
            except Exception:  # noqa: BLE001 - a pane that cannot be filled must not take the window down
                log.exception("writing room: gathering failed")
                return None
            if chat is not self.chat:
                return None
            if not self._stale:
                break
        self.show(data)
        return data

    def show(self, data: RoomData) -> None:
        """Render ``data`` in every pane and the progress lines."""
        self.data = data
        for pane in (self.outline, self.threads, self.codex):
            pane.show_data(data)
        self.status_progress.setText(progress_text(data.progress))
        self._chapter_selected()
        self.review.refresh_pending()
        self.dataShown.emit(data)

    # -- 章节 hooks -------------------------------------------------------------------------------------------
    def _chapter_selected(self) -> None:
        name = self.window.chapter_pane.selected()
        self._update_review_btn()
        if self.chat is None:
            return
        self.review.set_chapter(name)
        p = self.data.progress if self.data is not None else None
        text = progress_text(p)
        if p is not None and name:
            c = next((c for c in p.chapters if c.file == name), None)
            if c is not None:
                text += " · " + tr("wr.chapter.progress", words=words_text(c.words, c.target))
        self.chapter_progress.setText(text)

    def _update_review_btn(self) -> None:
        ok = self.chat is not None and not self._busy() and self.window.chapter_pane.selected() is not None
        self.review_btn.setVisible(self.chat is not None)
        self.review_btn.setEnabled(ok)

    def review_selected(self) -> None:
        """Switch to 审稿 and review the chapter selected in 章节."""
        name = self.window.chapter_pane.selected()
        if self.chat is None or not name:
            return
        self.window.tabs.setCurrentWidget(self.review)
        self.review.set_chapter(name)
        self.review.start_review()

    # -- opening a chapter at a place -----------------------------------------------------------------------
    def open_at(self, file: str, offset: int = -1, length: int = 0) -> bool:
        """Open chapter ``file`` in 章节 and, when ``offset`` ≥ 0, select ``length`` UTF-16 units there."""
        cp = self.window.chapter_pane
        self.window.tabs.setCurrentWidget(cp)
        cp.select(file)
        if not cp.open_chapter(file):
            return False
        goto(cp.editor, offset, length)
        return True


def install(window: Any) -> WritingPanes:
    """Create the writing room's panes in ``window`` (after its chapter pane and timeline exist) and return them
    (``window.writing_panes``)."""
    panes = WritingPanes(window)
    window.writing_panes = panes
    return panes


__all__ = ["RoomData", "WritingPanes", "gather", "goto", "install"]
