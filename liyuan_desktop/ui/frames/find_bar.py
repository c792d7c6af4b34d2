"""Find in the open chat (issue 17 "Search"): Ctrl+F opens a find bar over the conversation.

The bar searches every message of the shown branch through ``Chat.search_messages`` (core/chat/search.py) — not
only the page the view has rendered — on a worker of the task runner's ``find`` lane (:class:`.tasks.LatestWins`), so typing never stalls the window: a 10,000-beat chat is searched in a fraction of a second off the UI
thread and each keystroke starts a new generation whose late results are dropped. Hits are listed under the bar
(beat, who, snippet); Enter / Shift+Enter / ▲▼ step through them; choosing one *jumps*: the window loads the page
around that message (:func:`show_message`), scrolls it to the middle, outlines it and marks the words. With
「所有分支」 messages on other branches are found too; jumping to one selects its branch first.

A jump far back loads a window of items around the hit rather than everything after it; the view then reads as the
chat's history up to a point, and the window returns to the newest page as soon as a beat starts (or Esc closes
the bar).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...core.linear_regex import LinearRegexRefused
from ..infra.i18n import register, show, tr
from ..infra.tasks import LatestWins

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

register({
    "find.menu": {"zh": "在对话中查找…", "en": "Find in chat…"},
    "find.placeholder": {"zh": "查找本对话的所有消息（不分大小写）", "en": "Find in every message of this chat (any case)"},
    "find.regex": {"zh": "正则", "en": "Regex"},
    "find.all": {"zh": "所有分支", "en": "All branches"},
    "find.prev": {"zh": "上一个（Shift+Enter）", "en": "Previous (Shift+Enter)"},
    "find.next": {"zh": "下一个（Enter）", "en": "Next (Enter)"},
    "find.close": {"zh": "关闭（Esc）", "en": "Close (Esc)"},
    "find.count": {"zh": "{k}/{n}", "en": "{k}/{n}"},
    "find.none": {"zh": "没有找到", "en": "No matches"},
    "find.busy": {"zh": "查找中…", "en": "Searching…"},
    "find.no.chat": {"zh": "先打开一个对话", "en": "Open a chat first"},
    "find.bad": {"zh": "正则有误：{err}", "en": "Bad pattern: {err}"},
    "find.more": {"zh": "（只列出前 {n} 条）", "en": "(first {n} only)"},
    "find.role.user": {"zh": "你", "en": "You"},
    "find.role.opening": {"zh": "开场", "en": "Opening"},
    "find.other.branch": {"zh": "另一分支", "en": "other branch"},
    "find.beat": {"zh": "第 {n} 拍", "en": "beat {n}"},
    "find.browsing": {"zh": "正在看较早的消息（第 {k} 条附近）；发送或按 Esc 回到最新",
                      "en": "Showing older messages (around #{k}); send or press Esc to return to the newest"},
    "find.switched": {"zh": "已切换到这条消息所在的分支", "en": "Switched to the branch with this message"},
})

LIMIT = 1000  # hits listed at most
#: items loaded when jumping: everything from the hit to the newest when at most this many, else a window
WINDOW_MAX = 400


def role_label(role: str, char: str, user: str = "") -> str:
    """Who wrote a message, as the hit list says it: the persona's name for the user's words (「你」 without one),
    「开场」 for the opening, else the character's name."""
    if role == "user":
        return user or tr("find.role.user")
    if role == "opening":
        return tr("find.role.opening")
    return char


def show_message(win: Any, index: int, needle: str = "") -> None:
    """Make transcript item ``index`` of the shown branch visible in ``win``'s conversation and focus it (scroll,
    outline, mark ``needle``). Items already loaded are only scrolled to; otherwise the view is reloaded from a
    little before the item — to the newest when that is at most :data:`WINDOW_MAX` items, else a window of them
    (the window returns to the newest when a beat starts; see the module doc)."""
    page = win.session.transcript
    items = page.items
    n = len(items)
    if not 0 <= index < n:
        return
    if index < page.shown_from or page.browsing:
        lo = max(0, index - 8)
        hi = n if n - lo <= WINDOW_MAX else min(n, index + 60)
        win.display_worker.restart()
        page.shown_from = lo
        win.view.set_transcript(win.display_items(lo, hi), lo > 0)
        page.browsing = hi < n
        if hi < n:
            win.view.set_banner(tr("find.browsing", k=index + 1))
    win.view.focus_item(str(index), needle)


def back_to_newest(win: Any) -> None:
    """Leave a window of older items (:func:`show_message`): the newest page again."""
    page = win.session.transcript
    if page.browsing:
        page.browsing = False
        demo = getattr(win, "is_demo", False)
        chat = win.chat
        win.view.set_banner(tr("replay.banner") if chat is not None and (demo or chat.model.is_replay) else None)
        win.reload_transcript()


class FindBar(QWidget):
    """The find bar (module doc). ``win``: the main window (its ``chat``, ``view`` and transcript paging)."""

    def __init__(self, win: Any):
        super().__init__()
        self.win = win
        self.setObjectName("findBar")
        self.hits: list[Any] = []
        self.current = -1
        self.worker = LatestWins(self)
        self.worker.done.connect(self._done)
        self.worker.failed.connect(self._failed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(2)
        row = QHBoxLayout()
        self.edit = QLineEdit()
        self.edit.setObjectName("findEdit")
        self.edit.setPlaceholderText(tr("find.placeholder"))
        self.edit.setClearButtonEnabled(True)
        row.addWidget(self.edit, 1)
        self.regex = QCheckBox(tr("find.regex"))
        self.all_branches = QCheckBox(tr("find.all"))
        row.addWidget(self.regex)
        row.addWidget(self.all_branches)
        self.count = QLabel("")
        self.count.setMinimumWidth(70)
        row.addWidget(self.count)
        for text, tip, slot in (("▲", "find.prev", lambda: self.step(-1)), ("▼", "find.next", lambda: self.step(1)),
                                ("✕", "find.close", self.close_bar)):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tr(tip))
            b.clicked.connect(slot)
            row.addWidget(b)
        lay.addLayout(row)
        self.list = QListWidget()
        self.list.setObjectName("findHits")
        self.list.setVisible(False)
        self.list.itemActivated.connect(lambda it: self.jump(self.list.row(it)))
        self.list.itemClicked.connect(lambda it: self.jump(self.list.row(it)))
        lay.addWidget(self.list)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self.search)
        self.edit.textChanged.connect(lambda _t: self._debounce.start())
        self.regex.toggled.connect(lambda _on: self.search())
        self.all_branches.toggled.connect(lambda _on: self.search())
        self.edit.returnPressed.connect(self._enter)
        QShortcut(QKeySequence("Shift+Return"), self.edit, activated=lambda: self.step(-1))
        QShortcut(QKeySequence("Escape"), self, activated=self.close_bar,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.setVisible(False)

    # -- opening / closing ---------------------------------------------------------------------------------
    def open_bar(self) -> None:
        """Show the bar with the query selected (Ctrl+F)."""
        self.setVisible(True)
        self.edit.setFocus()
        self.edit.selectAll()
        if self.edit.text().strip():
            self.search()

    def close_bar(self) -> None:
        """Hide the bar, drop a running search, and return to the newest page if a jump left an older window."""
        self.worker.cancel()
        self.setVisible(False)
        back_to_newest(self.win)
        self.win.view.focus_item("", "")  # clears the marks
        self.win.input.setFocus()

    def reset(self) -> None:
        """Another chat or branch is shown: the hits are stale."""
        self.worker.cancel()
        self.hits, self.current = [], -1
        self.list.clear()
        self.list.setVisible(False)
        self.count.setText("")
        if self.isVisible() and self.edit.text().strip():
            self._debounce.start()

    # -- searching ---------------------------------------------------------------------------------------------
    def search(self) -> None:
        """Start a search for the bar's text on the worker thread (a running one is dropped)."""
        query = self.edit.text()
        chat = self.win.chat
        self.hits, self.current = [], -1
        self.list.clear()
        if not query.strip():
            self.worker.cancel()
            self.count.setText("")
            self.list.setVisible(False)
            return
        if chat is None:
            self.count.setText(tr("find.no.chat"))
            return
        regex, every = self.regex.isChecked(), self.all_branches.isChecked()
        self.count.setText(tr("find.busy"))
        self.worker.start(lambda cancelled: chat.search_messages(query, regex=regex, all_branches=every,
                                                                 limit=LIMIT, cancelled=cancelled))

    def _failed(self, gen: int, e: Any) -> None:
        if gen != self.worker.gen:
            return
        self.worker.running = False
        if isinstance(e, (re.error, LinearRegexRefused, ValueError)):
            self.count.setText(tr("find.bad", err=e) if self.regex.isChecked() else "")
        else:
            log.warning("find failed: %r", e)
            self.count.setText(show(e))

    def _done(self, gen: int, hits: Any) -> None:
        if gen != self.worker.gen:
            return
        self.worker.running = False
        self.hits = list(hits)
        self.list.clear()
        chat = self.win.chat
        char, user = (chat.card.name, chat.persona) if chat is not None else ("", "")
        for h in self.hits:
            where = tr("find.beat", n=h.beat) if h.on_branch else tr("find.other.branch")
            it = QListWidgetItem(f"{where} · {role_label(h.role, char, user)}：{h.snippet}")
            it.setToolTip(h.snippet)
            self.list.addItem(it)
        self.list.setVisible(bool(self.hits))
        rows = min(len(self.hits), 6)  # as tall as its hits, at most six rows (the conversation keeps the room)
        self.list.setFixedHeight(rows * max(18, self.list.sizeHintForRow(0)) + 2 * self.list.frameWidth() + 2 if rows else 0)
        if not self.hits:
            self.count.setText(tr("find.none"))
            return
        more = tr("find.more", n=LIMIT) if len(self.hits) >= LIMIT else ""
        self.count.setText(tr("find.count", k=0, n=len(self.hits)) + more)
        self.count.setToolTip(more)

    # -- stepping and jumping ----------------------------------------------------------------------------------
    def _enter(self) -> None:
        if self._debounce.isActive() or (not self.hits and not self.worker.running):
            self._debounce.stop()
            self.search()
            return
        self.step(1)

    def step(self, delta: int) -> None:
        """The next (``delta`` 1) or previous (-1) hit, newest first from the start as a reader looks back."""
        if not self.hits:
            return
        if self.current < 0:
            k = len(self.hits) - 1 if delta > 0 else 0
        else:
            k = (self.current - delta) % len(self.hits)
        self.jump(k)

    def jump(self, k: int) -> None:
        """Show hit ``k``: select its branch when it is on another one, load its page, scroll and mark it."""
        if not 0 <= k < len(self.hits) or self.win.chat is None:
            return
        h = self.hits[k]
        self.current = k
        self.count.setText(tr("find.count", k=k + 1, n=len(self.hits)))
        self.list.blockSignals(True)
        self.list.setCurrentRow(k)
        self.list.blockSignals(False)
        needle = h.snippet[h.start:h.start + h.length]
        jump_to_entry(self.win, h.entry_id, needle)


def jump_to_entry(win: Any, entry_id: str, needle: str = "") -> bool:
    """Show the message ``entry_id`` of ``win``'s open chat (its branch selected first when it is not on the shown
    one), focused with ``needle`` marked. False when the chat has no such message or a beat runs."""
    chat = win.chat
    if chat is None:
        return False
    index = chat.message_index(entry_id)
    if index < 0:
        if win.busy:
            return False
        try:
            chat.select(entry_id)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            win.statusBar().showMessage(show(e), 6000)
            return False
        win.session.transcript.browsing = False
        win.after_branch_switch(tr("find.switched"), focus=entry_id)
        index = chat.message_index(entry_id)
        if index < 0:
            return False
    show_message(win, index, needle)
    return True


def install_find_bar(win: Any, menu: Any = None) -> FindBar:
    """Put the find bar above ``win``'s conversation, bind Ctrl+F (and a 「在对话中查找…」 entry in ``menu``), return
    to the newest page when a beat starts, and clear the hits and the count whenever another chat (or none) is
    shown (the window session's ``chatShown``)."""
    bar = FindBar(win)
    centre = win.view.parentWidget().layout()
    centre.insertWidget(0, bar)
    act = QAction(tr("find.menu"), win)
    act.setObjectName("findAction")
    act.setShortcut(QKeySequence.StandardKey.Find)
    act.triggered.connect(bar.open_bar)
    win.addAction(act)
    if menu is not None:
        menu.addAction(act)

    def busy(on: bool) -> None:
        if on:
            back_to_newest(win)

    def chat_shown(_chat: Chat) -> None:  # another chat, or none: the hits and the count are stale
        win.session.transcript.browsing = False
        bar.reset()

    win.session.busyChanged.connect(busy)
    win.session.chatShown.connect(chat_shown)
    win.find_bar = bar
    return bar


__all__ = ["FindBar", "install_find_bar", "jump_to_entry", "show_message", "back_to_newest"]
