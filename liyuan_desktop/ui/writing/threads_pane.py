"""The 伏笔 pane of an agent chat (issue 19 §2): the branch's foreshadowing threads — title, state, where each was
planted (chapter, the quote in the tooltip), the chapter it is due by — past-due threads (open, not intentional, due
before the chapter being worked on) in the theme's error colour and marked ⚠.

The user edits a thread (title / note / due chapter), marks it intentional (有意悬置, never flagged), closes it as paid
off or dropped, reopens it, or adds one; each is one ``Chat.thread_event`` (a user ledger snapshot on the branch, so
it goes back with the conversation). Double-click opens the chapter at the planted quote (``openChapter``). Closed
threads are listed greyed after the open ones. Dialogs go through ``ask_text``, ``ask_int``, ``ask_item`` and
``inform`` (tests replace them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QToolButton,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.ledger.threads import ThreadEvent, ThreadMark
from ..dialogs.dialogs import tool_button
from ..infra import theme
from ..infra.i18n import register, tr
from .room_pane import KEY, RoomPane, entry_tree, role_label
from .thread_dialog import ThreadForm, ask_thread

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "wr.threads.tab": {"zh": "伏笔", "en": "Threads"},
    "wr.threads.none": {"zh": "还没有伏笔。场记会把正文里埋下的线索记进账本（plot_threads），你也可以自己新增。",
                        "en": "No threads yet. The scribe records the story's open threads; you can add your own."},
    "wr.threads.col.title": {"zh": "伏笔内容", "en": "Thread"},
    "wr.threads.col.state": {"zh": "状态", "en": "State"},
    "wr.threads.col.planted": {"zh": "埋于", "en": "Planted"},
    "wr.threads.col.due": {"zh": "回收期限", "en": "Due by"},
    "wr.threads.add": {"zh": "新增…", "en": "Add…"},
    "wr.threads.edit": {"zh": "编辑…", "en": "Edit…"},
    "wr.threads.intentional": {"zh": "有意悬置", "en": "Intentional"},
    "wr.threads.intentional.tip": {"zh": "这条伏笔有意不回收：不再标为过期", "en": "Left open on purpose: never flagged as past due"},
    "wr.threads.close": {"zh": "标为已回收", "en": "Mark paid off"},
    "wr.threads.drop": {"zh": "标为放弃", "en": "Mark dropped"},
    "wr.threads.reopen": {"zh": "重开", "en": "Reopen"},
    "wr.threads.state.menu": {"zh": "收束", "en": "Close"},
    "wr.threads.ask.title": {"zh": "伏笔（一句话）：", "en": "Thread (one line):"},
    "wr.threads.ask.note": {"zh": "备注：", "en": "Note:"},
    "wr.threads.ask.due": {"zh": "须在第几章前回收（0 = 不设）：", "en": "Due by chapter (0 = none):"},
    "wr.threads.state.planted": {"zh": "已埋", "en": "planted"},
    "wr.threads.state.advancing": {"zh": "推进中", "en": "advancing"},
    "wr.threads.state.paid_off": {"zh": "已回收", "en": "paid off"},
    "wr.threads.state.dropped": {"zh": "已放弃", "en": "dropped"},
    "wr.threads.chapter": {"zh": "第 {n} 章", "en": "ch. {n}"},
    "wr.threads.beat": {"zh": "第 {n} 轮", "en": "turn {n}"},
    "wr.threads.pastdue": {"zh": "⚠ 已过期", "en": "⚠ past due"},
    "wr.threads.intent.mark": {"zh": "有意", "en": "intentional"},
    "wr.threads.count": {"zh": "{open} 条未回收，其中 {due} 条已过期（现在写到第 {ch} 章）",
                         "en": "{open} open, {due} past due (written up to chapter {ch})"},
    "wr.threads.count.nochapter": {"zh": "{open} 条未回收", "en": "{open} open"},
})


class ThreadsPane(RoomPane):
    """The threads list (a :class:`.room_pane.RoomPane`; rows hold a ``ledger.threads.Thread`` under ``KEY``)."""

    TITLE_KEY = "wr.threads.tab"
    HEADERS = ("wr.threads.col.title", "wr.threads.col.state", "wr.threads.col.planted", "wr.threads.col.due")

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        #: the one add/edit dialog (thread_dialog.py): (form, furthest chapter, editing?) → the answer or None
        self.ask_thread: Callable[[ThreadForm, Optional[int], bool], Optional[ThreadForm]] = (
            lambda form, reached, edit: ask_thread(self, form, reached, edit))

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.summary = role_label(lay, "title")
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.add_btn = tool_button(bar, tr("wr.threads.add"), self.add_thread)
        self.edit_btn = tool_button(bar, tr("wr.threads.edit"), self.edit_thread)
        self.intent_btn = tool_button(bar, tr("wr.threads.intentional"), self.toggle_intentional)
        self.intent_btn.setToolTip(tr("wr.threads.intentional.tip"))
        # close / drop / reopen in one menu button: the pane must fit the window's side column (its minimum width
        # is the tab widget's, hidden tabs included)
        self.state_btn = QToolButton()
        self.state_btn.setText(tr("wr.threads.state.menu"))
        self.state_btn.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.state_btn)
        self.close_btn = menu.addAction(tr("wr.threads.close"))
        self.close_btn.triggered.connect(lambda _=False: self.close_thread("paid_off"))
        self.drop_btn = menu.addAction(tr("wr.threads.drop"))
        self.drop_btn.triggered.connect(lambda _=False: self.close_thread("dropped"))
        self.reopen_btn = menu.addAction(tr("wr.threads.reopen"))
        self.reopen_btn.triggered.connect(lambda _=False: self.reopen_thread())
        self.state_btn.setMenu(menu)
        bar.addWidget(self.state_btn)
        bar.addStretch(1)
        lay.addLayout(bar)
        self.empty = role_label(lay, "muted", tr("wr.threads.none"))
        self.tree = entry_tree(self.headers(), flat=True)
        self.tree.itemDoubleClicked.connect(lambda it, _c: self._open(it))
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        lay.addWidget(self.tree, 1)
        self.detail = role_label(lay, "muted", plain=True)
        theme.notifier.changed.connect(self._theme_changed)  # a bound slot: disconnected when the pane goes
        self.set_chat(None)

    def _theme_changed(self, _mode: str) -> None:
        # (a lambda on the app-wide notifier outlived the pane and reached its deleted tree in later windows)
        if self.data is not None:
            self.show_data(self.data)

    # -- data -----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` (None empties the pane)."""
        self.chat = chat
        self.data = None
        self.tree.clear()
        self.summary.setText("")
        self.detail.setText("")
        self.empty.setVisible(False)
        self._update_buttons()

    def threads(self) -> list[Any]:
        """The threads shown (``ledger.threads.Thread``), in row order."""
        return self.rows()

    def show_data(self, data: Any) -> None:
        """Render the threads of ``data``: open ones first (past-due first), then the closed ones greyed."""
        self.data = data
        keep = self.selected()
        keep_id = keep.id if keep is not None else None
        self.tree.clear()
        ths = list(data.threads) if data is not None else []
        ch = data.chapter if data is not None else None
        c = theme.colors()
        ths.sort(key=lambda t: (not t.open, not t.past_due(ch), t.due_chapter or 10 ** 9))
        for t in ths:
            p = t.planted
            where = tr("wr.threads.chapter", n=p.chapter) if p.chapter else (
                tr("wr.threads.beat", n=p.beat) if p.beat else "")
            state = tr(f"wr.threads.state.{t.state}")
            if t.intentional:
                state += " · " + tr("wr.threads.intent.mark")
            due = tr("wr.threads.chapter", n=t.due_chapter) if t.due_chapter else ""
            late = t.past_due(ch)
            title = (tr("wr.threads.pastdue") + " " if late else "") + t.title
            it = QTreeWidgetItem([title, state, where, due])
            it.setData(0, KEY, t)
            tip = [t.title]
            if p.quote:
                tip.append(f"「{p.quote}」 {p.file} @{p.offset}")
            if t.note:
                tip.append(t.note)
            it.setToolTip(0, "\n".join(tip))
            if late:
                for col in range(4):
                    it.setForeground(col, QColor(c["error"]))
            elif not t.open:
                for col in range(4):
                    it.setForeground(col, QColor(c["muted"]))
            self.tree.addTopLevelItem(it)
            if t.id == keep_id:
                self.tree.setCurrentItem(it)
        open_ = [t for t in ths if t.open]
        self.summary.setText(tr("wr.threads.count", open=len(open_), due=sum(1 for t in open_ if t.past_due(ch)), ch=ch)
                             if ch else tr("wr.threads.count.nochapter", open=len(open_)))
        self.empty.setVisible(self.chat is not None and not ths)
        self._update_buttons()

    def select(self, thread_id: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            it = self.tree.topLevelItem(i)
            if it.data(0, KEY).id == thread_id:
                self.tree.setCurrentItem(it)
                return

    def _update_buttons(self) -> None:
        t = self.selected()
        ok = self.chat is not None and not self._busy
        self.add_btn.setEnabled(ok)
        self.edit_btn.setEnabled(ok and t is not None)
        self.intent_btn.setEnabled(ok and t is not None and t.open)
        self.intent_btn.setText(tr("wr.threads.intentional") if t is None or not t.intentional
                                else "✓ " + tr("wr.threads.intentional"))
        self.close_btn.setEnabled(ok and t is not None and t.open)
        self.drop_btn.setEnabled(ok and t is not None and t.open)
        self.reopen_btn.setEnabled(ok and t is not None and not t.open)
        self.state_btn.setEnabled(ok and t is not None)
        if t is None:
            self.detail.setText("")
        else:
            bits = [t.title]
            if t.planted.quote:
                bits.append(f"「{t.planted.quote}」 — {t.planted.file}")
            for m in t.advanced[-3:]:
                if m.quote or m.chapter:
                    bits.append(f"→ {tr('wr.threads.chapter', n=m.chapter) if m.chapter else ''} {m.quote}".strip())
            if t.note:
                bits.append(t.note)
            self.detail.setText("\n".join(bits))

    # -- commands -------------------------------------------------------------------------------------------
    def _open(self, it: QTreeWidgetItem) -> None:
        t = it.data(0, KEY)
        if t is not None and t.planted.file:
            self.openChapter.emit(t.planted.file, t.planted.offset if t.planted.offset is not None else -1,
                                  len(t.planted.quote.encode("utf-16-le")) // 2)

    def _event(self, ev: ThreadEvent) -> bool:
        if not self._editable():
            return False
        try:
            self.shown_chat.thread_event(ev)
        except (KeyError, RuntimeError, OSError, ValueError) as e:
            self.inform(str(e))
            return False
        self.changed.emit()
        return True

    def add_thread(self) -> bool:
        """Ask, in one dialog, the thread, a note, the chapter it was planted in (default: the furthest chapter
        written; the current turn when there is none) and its due chapter; add it."""
        if not self._editable():
            return False
        reached = self.data.chapter if self.data is not None else None
        form = self.ask_thread(ThreadForm(), reached, False)
        if form is None or not form.title.strip():
            return False
        return self._event(ThreadEvent(op="add", title=form.title.strip(), note=form.note or None,
                                       due_chapter=form.due, mark=ThreadMark(chapter=form.planted)))

    def edit_thread(self) -> bool:
        """Edit the selected thread's title, note and due chapter in the same dialog."""
        t = self.selected()
        if t is None:
            return False
        reached = self.data.chapter if self.data is not None else None
        form = self.ask_thread(ThreadForm(title=t.title, note=t.note, planted=t.planted.chapter,
                                          due=t.due_chapter), reached, True)
        if form is None or not form.title.strip():
            return False
        due = form.due or 0
        return self._event(ThreadEvent(op="edit", id=t.id, title=form.title if form.title != t.title else None,
                                       note=form.note if form.note != t.note else None,
                                       due_chapter=due if due != (t.due_chapter or 0) else None))

    def toggle_intentional(self) -> bool:
        """Mark the selected thread intentional (or not any more)."""
        t = self.selected()
        return t is not None and self._event(ThreadEvent(op="intentional", id=t.id, value=not t.intentional))

    def close_thread(self, state: str) -> bool:
        """Close the selected thread as ``paid_off`` or ``dropped``."""
        t = self.selected()
        return t is not None and self._event(ThreadEvent(op="close", id=t.id, state=state))  # type: ignore[arg-type]

    def reopen_thread(self) -> bool:
        """Reopen the selected closed thread."""
        t = self.selected()
        return t is not None and self._event(ThreadEvent(op="reopen", id=t.id))
