"""章节摘要 (issue 28): every chapter's summary in one dialog — the chapters on the left (stale ones marked), the
selected chapter's summary on the right to read or rewrite; 保存 stores the author's own (``Chat.set_chapter_summary``),
让模型补做 has the model summarise the stale chapters (``Chat.summarize_chapters``, awaited on the UI loop with
Cancel; problems are listed, never raised). Opened from the 章节 pane's context menu (:func:`install`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, show, tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "sum.action": {"zh": "章节摘要…", "en": "Chapter summaries…"},
    "sum.title": {"zh": "章节摘要", "en": "Chapter summaries"},
    "sum.stale": {"zh": "（过时）", "en": " (stale)"},
    "sum.missing": {"zh": "（无）", "en": " (none)"},
    "sum.save": {"zh": "保存这一章的摘要", "en": "Save this summary"},
    "sum.make": {"zh": "让模型补做过时的摘要", "en": "Have the model redo stale summaries"},
    "sum.cancel": {"zh": "取消", "en": "Cancel"},
    "sum.close": {"zh": "关闭", "en": "Close"},
    "sum.working": {"zh": "正在做摘要……", "en": "Summarising…"},
    "sum.made": {"zh": "做好了 {n} 章。", "en": "{n} chapters done."},
    "sum.hint": {"zh": "摘要随检查点保存；agent 写后面的章节时会看到前面各章的摘要。",
                 "en": "Summaries are kept with the checkpoints; the agent sees earlier chapters' summaries."},
    "sum.err": {"zh": "没能保存：{error}", "en": "Could not save: {error}"},
})


class SummariesDialog(QDialog):
    """The chapters and their summaries (module doc)."""

    def __init__(self, chat: "Chat", session: Optional[Session] = None, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.chat = chat
        self.session = session_or_own(session, self)
        self.task: Optional[asyncio.Future[None]] = None
        self.setObjectName("summariesDialog")
        self.setWindowTitle(tr("sum.title"))
        lay = QVBoxLayout(self)
        hint = QLabel(tr("sum.hint"))
        hint.setWordWrap(True)
        set_role(hint, "muted")
        lay.addWidget(hint)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.list = QListWidget()
        self.list.setObjectName("summaryChapters")
        self.text = QPlainTextEdit()
        self.text.setObjectName("summaryText")
        split.addWidget(self.list)
        split.addWidget(self.text)
        split.setSizes([220, 420])
        lay.addWidget(split, 1)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        row = QHBoxLayout()
        self.save_btn = self._button(row, "sum.save", self.save_current)
        self.make_btn = self._button(row, "sum.make", self.make)
        row.addStretch(1)
        self._button(row, "sum.close", self.reject)
        lay.addLayout(row)
        self.list.currentItemChanged.connect(lambda cur, _prev: self._show(cur))
        self.resize(720, 480)
        self.fill()

    @staticmethod
    def _button(row: QHBoxLayout, key: str, slot: Callable[[], Any]) -> QPushButton:
        b = QPushButton(tr(key))
        b.clicked.connect(lambda _=False: slot())
        row.addWidget(b)
        return b

    def fill(self, keep: str = "") -> None:
        """List the chapters (stale or missing summaries marked), keeping ``keep`` selected."""
        self.rows = {r.file: r for r in self.chat.chapter_summaries()}
        self.list.clear()
        for r in self.rows.values():
            mark = tr("sum.missing") if not r.text else tr("sum.stale") if r.stale else ""
            it = QListWidgetItem(r.file + mark)
            it.setData(Qt.ItemDataRole.UserRole, r.file)
            self.list.addItem(it)
            if r.file == keep:
                self.list.setCurrentItem(it)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)

    def _show(self, it: Optional[QListWidgetItem]) -> None:
        r = self.rows.get(it.data(Qt.ItemDataRole.UserRole)) if it is not None else None
        self.text.setPlainText(r.text if r is not None else "")

    def current(self) -> str:
        """The selected chapter file ("" when none)."""
        it = self.list.currentItem()
        return str(it.data(Qt.ItemDataRole.UserRole)) if it is not None else ""

    def save_current(self) -> bool:
        """Store the text as the selected chapter's summary (the author's own)."""
        f = self.current()
        if not f:
            return False
        try:
            self.chat.set_chapter_summary(f, self.text.toPlainText())
        except (OSError, ValueError, RuntimeError) as e:
            self.status.setText(tr("sum.err", error=show(e)))
            return False
        self.session.broadcast(self.chat.last_changes)
        self.fill(f)
        return True

    def make(self) -> None:
        """Have the model summarise the stale chapters; the same button cancels while it runs."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            return
        self.task = asyncio.ensure_future(self._make())

    async def _make(self) -> None:
        keep = self.current()
        self.status.setText(tr("sum.working"))
        self.make_btn.setText(tr("sum.cancel"))
        try:
            done, problems = await self.chat.summarize_chapters()
        except asyncio.CancelledError:
            self.status.setText("")
            return
        except Exception as e:  # noqa: BLE001 - said in the dialog
            self.status.setText(tr("sum.err", error=show(e)))
            return
        finally:
            self.make_btn.setText(tr("sum.make"))
        self.status.setText("\n".join([tr("sum.made", n=len(done)), *problems]))
        self.session.broadcast(self.chat.last_changes)
        self.fill(keep)


def install(panes: Any, chapter_list: QWidget, session: Session) -> QAction:
    """Add 章节摘要… to the 章节 pane's context menu; ``panes.chat`` is the writing room's agent chat."""
    act = QAction(tr("sum.action"), chapter_list)
    act.setObjectName("summariesAction")

    def opened() -> None:
        if panes.chat is not None:
            SummariesDialog(panes.chat, session, chapter_list.window()).exec()

    act.triggered.connect(lambda _=False: opened())
    chapter_list.addAction(act)
    return act
