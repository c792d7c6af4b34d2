"""The 审稿 panel of an agent chat (issue 19 §4): review one chapter and act on the findings.

审稿 runs ``Chat.review_chapter`` on the chapter chosen in 章节 (or given to :meth:`ReviewPanel.review`): the local
checks, then the chat's model unless 只做本地检查 is on; a model that fails leaves the local findings and says why.
Each finding shows its kind, the quote and the note; double-click (or 打开) opens the chapter at the quote
(``openChapter(file, utf16 offset, length)``). 采纳 queues a finding for the agent's next turn (its state block gets
【审稿意见】; ``Chat.accept_finding``), 有意 marks it intentional (``Chat.mark_finding_intentional``: never reported
again). Nothing here edits a chapter. 套话表… edits the user's stock-phrase list (``<data>/规则/套话.txt``; emptying
it brings the shipped list back). The last review of a chapter is shown again when the chapter is chosen
(``Chat.last_review``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.story.review import save_stock_phrases, stock_phrases_text
from ..infra import theme
from ..infra.i18n import register, show, tr
from .outline_pane import TextDialog
from .room_pane import KEY, RoomPane, role_label

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "wr.review.tab": {"zh": "审稿", "en": "Review"},
    "wr.review.run": {"zh": "审稿", "en": "Review"},
    "wr.review.run.tip": {"zh": "审读这一章：重复、套话、死者开口、失物复现、伏笔、篇幅，再请模型看人物走样、时间线、与上一章是否矛盾。只报告，不改稿。",
                          "en": "Review this chapter: repetition, stock phrases, dead characters speaking, lost items, threads, length; then the model checks character, timeline and continuity. Reports only, never edits."},
    "wr.review.local": {"zh": "只做本地检查", "en": "Local checks only"},
    "wr.review.phrases": {"zh": "套话表…", "en": "Stock phrases…"},
    "wr.review.phrases.tip": {"zh": "编辑审稿用的套话表（一行一个；清空则恢复自带的表）",
                              "en": "Edit the stock-phrase list (one per line; empty it to restore the shipped list)"},
    "wr.review.nochapter": {"zh": "在「章节」里选一章，再点审稿。", "en": "Choose a chapter in Chapters, then Review."},
    "wr.review.chapter": {"zh": "审稿：{file}", "en": "Review: {file}"},
    "wr.review.running": {"zh": "正在审读 {file}…", "en": "Reviewing {file}…"},
    "wr.review.result": {"zh": "{n} 条意见", "en": "{n} findings"},
    "wr.review.suppressed": {"zh": "（{n} 条已标为有意，不再报）", "en": " ({n} marked intentional, not shown)"},
    "wr.review.model": {"zh": " · 模型：{model}", "en": " · model: {model}"},
    "wr.review.local.only": {"zh": " · 仅本地检查", "en": " · local checks only"},
    "wr.review.model.error": {"zh": "模型没有审完：{error}（下面是本地检查的结果）", "en": "The model did not finish: {error} (local findings below)"},
    "wr.review.none": {"zh": "没有发现问题。", "en": "No findings."},
    "wr.review.never": {"zh": "这一章还没审过。", "en": "This chapter has not been reviewed yet."},
    "wr.review.accept": {"zh": "采纳", "en": "Accept"},
    "wr.review.accept.tip": {"zh": "交给 agent：下一轮它会先按这条意见改正文", "en": "Hand it to the agent: its next turn fixes it first"},
    "wr.review.intentional": {"zh": "有意为之", "en": "Deliberate"},
    "wr.review.intentional.tip": {"zh": "这是有意为之：以后不再报", "en": "Deliberate: never report it again"},
    "wr.review.open": {"zh": "打开", "en": "Open"},
    "wr.review.accepted": {"zh": "已采纳：agent 下一轮会先改这一条。", "en": "Accepted: the agent fixes it in its next turn."},
    "wr.review.marked": {"zh": "已标为有意：不再报。", "en": "Marked intentional: not reported again."},
    "wr.review.pending": {"zh": "等 agent 下一轮改的意见：{n} 条", "en": "Waiting for the agent's next turn: {n}"},
    "wr.review.col.kind": {"zh": "类别", "en": "Kind"},
    "wr.review.col.quote": {"zh": "原文 / 意见", "en": "Quote / note"},
    "wr.review.src.model": {"zh": "模型", "en": "model"},
    "wr.review.kind.dead_speaks": {"zh": "死者开口", "en": "Dead speaks"},
    "wr.review.kind.lost_item": {"zh": "失物复现", "en": "Lost item"},
    "wr.review.kind.contradiction": {"zh": "前后矛盾", "en": "Contradiction"},
    "wr.review.kind.timeline": {"zh": "时间线", "en": "Timeline"},
    "wr.review.kind.ooc": {"zh": "人物走样", "en": "Out of character"},
    "wr.review.kind.thread": {"zh": "伏笔未收", "en": "Open thread"},
    "wr.review.kind.outline": {"zh": "偏离大纲", "en": "Off outline"},
    "wr.review.kind.repetition": {"zh": "重复", "en": "Repetition"},
    "wr.review.kind.stock_phrase": {"zh": "套话", "en": "Stock phrase"},
    "wr.review.phrases.saved": {"zh": "套话表已保存：{path}", "en": "Stock phrases saved: {path}"},
})


class PhrasesDialog(TextDialog):
    """The stock-phrase list as text (Save writes the user's list)."""

    def __init__(self, text: str, parent: Optional[QWidget] = None):
        super().__init__(tr("wr.review.phrases"), text, parent, size=(420, 520))


class ReviewPanel(RoomPane):
    """Findings of one chapter (a :class:`.room_pane.RoomPane` that shows no gathered data): ``set_chapter(file)``,
    ``await review(file=None)``, ``accept()``, ``intentional()``; rows hold a finding under ``KEY``. Signal
    ``reviewed(result)`` besides ``openChapter``."""

    reviewed = Signal(object)

    TITLE_KEY = "wr.review.tab"
    HEADERS = ("wr.review.col.kind", "wr.review.col.quote")

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.file: Optional[str] = None
        self.result: Any = None
        self._running = False
        self.edit_phrases: Callable[[str], Optional[str]] = self._edit_phrases_dialog

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.head = role_label(lay, "title", tr("wr.review.nochapter"))
        bar = QHBoxLayout()
        bar.setSpacing(4)
        self.run_btn = QPushButton(tr("wr.review.run"))
        self.run_btn.setToolTip(tr("wr.review.run.tip"))
        self.run_btn.clicked.connect(lambda _=False: self.start_review())
        bar.addWidget(self.run_btn)
        self.local = QCheckBox(tr("wr.review.local"))
        bar.addWidget(self.local)
        bar.addStretch(1)
        self.phrases_btn = QToolButton()
        self.phrases_btn.setText(tr("wr.review.phrases"))
        self.phrases_btn.setToolTip(tr("wr.review.phrases.tip"))
        self.phrases_btn.clicked.connect(lambda _=False: self.phrases())
        bar.addWidget(self.phrases_btn)
        lay.addLayout(bar)
        self.summary = role_label(lay, "muted")
        self.error = role_label(lay, "warn")
        self.error.hide()
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(self.headers())
        self.tree.setRootIsDecorated(False)
        self.tree.setWordWrap(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        hdr = self.tree.header()
        hdr.setStretchLastSection(True)
        hdr.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemDoubleClicked.connect(lambda it, _c: self.open_selected())
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        lay.addWidget(self.tree, 1)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.note)
        acts = QHBoxLayout()
        self.accept_btn = QPushButton(tr("wr.review.accept"))
        self.accept_btn.setToolTip(tr("wr.review.accept.tip"))
        self.accept_btn.clicked.connect(lambda _=False: self.accept())
        self.intent_btn = QPushButton(tr("wr.review.intentional"))
        self.intent_btn.setToolTip(tr("wr.review.intentional.tip"))
        self.intent_btn.clicked.connect(lambda _=False: self.intentional())
        self.open_btn = QPushButton(tr("wr.review.open"))
        self.open_btn.clicked.connect(lambda _=False: self.open_selected())
        for b in (self.accept_btn, self.intent_btn, self.open_btn):
            acts.addWidget(b)
        acts.addStretch(1)
        lay.addLayout(acts)
        self.pending = role_label(lay, "muted", wrap=False)
        self.status = role_label(lay, "ok")
        self.task: Any = None
        self.set_chat(None)

    def _edit_phrases_dialog(self, text: str) -> Optional[str]:
        dlg = PhrasesDialog(text, self)
        return dlg.edit.toPlainText() if dlg.exec() == QDialog.DialogCode.Accepted else None

    # -- state ----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat`` (None empties the panel)."""
        self.chat = chat
        self.file = None
        self.result = None
        self.tree.clear()
        self.head.setText(tr("wr.review.nochapter"))
        self.summary.setText("")
        self.error.hide()
        self.status.setText("")
        self.refresh_pending()
        self._update_buttons()

    def set_chapter(self, file: Optional[str]) -> None:
        """Choose chapter ``file`` and show its last review (if any)."""
        if file == self.file and self.result is not None:
            return
        self.file = file
        self.result = None
        self.tree.clear()
        self.error.hide()
        self.status.setText("")
        if file is None or self.chat is None:
            self.head.setText(tr("wr.review.nochapter"))
            self.summary.setText("")
        else:
            self.head.setText(tr("wr.review.chapter", file=file))
            last = self.chat.last_review(file)
            if last is not None:
                self.show_result(last)
            else:
                self.summary.setText(tr("wr.review.never"))
        self._update_buttons()

    def refresh_pending(self) -> None:
        """Say how many accepted findings wait for the agent's next turn."""
        n = len(self.chat.pending_review()) if self.chat is not None else 0
        self.pending.setText(tr("wr.review.pending", n=n) if n else "")

    def findings(self) -> list[Any]:
        """The findings shown, in row order."""
        return self.rows()

    def _update_buttons(self) -> None:
        ok = self.chat is not None and not self._busy and not self._running
        self.run_btn.setEnabled(ok and self.file is not None)
        f = self.selected()
        self.accept_btn.setEnabled(self.chat is not None and f is not None)
        self.intent_btn.setEnabled(self.chat is not None and f is not None)
        self.open_btn.setEnabled(f is not None and bool(f.file))
        self.phrases_btn.setEnabled(True)
        self.note.setText("" if f is None else f.note)

    # -- results --------------------------------------------------------------------------------------------
    def show_result(self, r: Any) -> None:
        """Render review result ``r`` (``story.review.ChapterReviewResult``)."""
        self.result = r
        self.tree.clear()
        c = theme.colors()
        for f in r.findings:
            kind = tr(f"wr.review.kind.{f.kind}")
            if f.source == "model":
                kind += f" · {tr('wr.review.src.model')}"
            text = f"「{f.quote}」\n{f.note}" if f.quote else f.note
            it = QTreeWidgetItem([kind, text])
            it.setData(0, KEY, f)
            it.setToolTip(1, f"{f.file} @{f.offset}\n{f.note}" if f.offset is not None else f"{f.file}\n{f.note}")
            if f.kind in ("dead_speaks", "lost_item", "contradiction", "timeline"):
                it.setForeground(0, QColor(c["error"]))
            self.tree.addTopLevelItem(it)
        s = tr("wr.review.result", n=len(r.findings)) if r.findings else tr("wr.review.none")
        if r.suppressed:
            s += tr("wr.review.suppressed", n=r.suppressed)
        s += tr("wr.review.model", model=r.model) if r.model else tr("wr.review.local.only")
        self.summary.setText(s)
        self.error.setText(tr("wr.review.model.error", error=r.model_error) if r.model_error else "")
        self.error.setVisible(bool(r.model_error))
        self._update_buttons()

    def adopt(self, old: "ReviewPanel") -> None:
        """Show what ``old`` shows — its chapter, review result (findings, summary), selected finding and the
        local-only choice — made in the current language. The language switch builds a new window and this panel
        takes over the old one's (ui/window/language_switch.py)."""
        if old.chat is None or old.chat is not self.chat:
            return
        self.local.setChecked(old.local.isChecked())
        self.set_chapter(old.file)
        if old.result is not None:
            self.result = old.result
            self.show_result(old.result)
        was = old.tree.currentItem()
        row = old.tree.indexOfTopLevelItem(was) if was is not None else -1
        item = self.tree.topLevelItem(row) if row >= 0 else None
        if item is not None:
            self.tree.setCurrentItem(item)
        self.refresh_pending()

    # -- commands -------------------------------------------------------------------------------------------
    def start_review(self) -> None:
        """「审稿」: :meth:`review` of the chosen chapter as a task (``self.task``) on the running loop."""
        import asyncio

        self.task = asyncio.ensure_future(self.review())

    async def review(self, file: Optional[str] = None) -> Any:
        """Review ``file`` (default: the chosen chapter); returns the result (None when nothing ran)."""
        if file is not None:
            self.set_chapter(file)
        if self.chat is None or self.file is None or self._busy or self._running:
            return None
        self._running = True
        self._update_buttons()
        self.summary.setText(tr("wr.review.running", file=self.file))
        try:
            r = await self.chat.review_chapter(self.file, use_model=not self.local.isChecked())
        except Exception as e:  # noqa: BLE001 - ToolError (the chapter is gone), OSError: said, nothing changed
            self.summary.setText("")
            self.inform(show(getattr(e, "message", None) or e))
            return None
        finally:
            self._running = False
            self._update_buttons()
        self.show_result(r)
        self.reviewed.emit(r)
        return r

    def _on_finding(self, op: Callable[[str], Any], done_key: str) -> bool:
        """Apply ``op`` (a chat command taking a finding id) to the selected finding; say ``done_key``."""
        f = self.selected()
        if f is None or self.chat is None:
            return False
        try:
            op(f.id)
        except (KeyError, OSError) as e:
            self.inform(show(e))
            return False
        self.status.setText(tr(done_key))
        self.refresh_pending()
        return True

    def accept(self) -> bool:
        """Queue the selected finding for the agent's next turn."""
        return self.chat is not None and self._on_finding(self.chat.accept_finding, "wr.review.accepted")

    def intentional(self) -> bool:
        """Mark the selected finding intentional (it leaves the list and is never reported again)."""
        items = self.tree.selectedItems()
        if self.chat is None or not self._on_finding(self.chat.mark_finding_intentional, "wr.review.marked"):
            return False
        if items:
            self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(items[0]))
        self._update_buttons()
        return True

    def open_selected(self) -> None:
        """Open the selected finding's chapter at its quote."""
        f = self.selected()
        if f is not None and f.file:
            self.openChapter.emit(f.file, f.offset if f.offset is not None else -1, f.length)

    def phrases(self) -> bool:
        """Edit the stock-phrase list."""
        text = self.edit_phrases(stock_phrases_text())
        if text is None:
            return False
        try:
            p = save_stock_phrases(text)
        except OSError as e:
            self.inform(show(e))
            return False
        self.status.setText(tr("wr.review.phrases.saved", path=p.name))
        return True
