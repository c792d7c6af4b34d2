"""网文设置 (issue 28, for web-novel authors): the book's chapter length norm, the daily target, and which chapters
are published, in one dialog; and the line the writing room shows (今日 x/y 字 · 连更 n 天 · 存稿 k 章).

Everything is computed by the engine (``core/story/webnovel.py`` through ``Chat.writing_progress``); the dialog
changes the settings with the one command ``Chat.set_webnovel`` and broadcasts its notice (outline), on which the
writing room gathers again. Opened from the 章节 pane's context menu (``install``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, show, tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "wn.action": {"zh": "网文设置（字数规范、日更、存稿）…", "en": "Web-novel settings (length, daily target, buffer)…"},
    "wn.title": {"zh": "网文设置", "en": "Web-novel settings"},
    "wn.min": {"zh": "每章至少（字）", "en": "Chapter at least (words)"},
    "wn.max": {"zh": "每章至多（字）", "en": "Chapter at most (words)"},
    "wn.daily": {"zh": "日更目标（字）", "en": "Daily target (words)"},
    "wn.none": {"zh": "不限", "en": "none"},
    "wn.published": {"zh": "已发布的章节（勾选）；没勾的已写章节就是存稿：",
                     "en": "Published chapters (ticked); written chapters not ticked are the buffer:"},
    "wn.row": {"zh": "{title} · {words} 字{mark}", "en": "{title} · {words} words{mark}"},
    "wn.short": {"zh": " · 偏短", "en": " · short"},
    "wn.long": {"zh": " · 偏长", "en": " · long"},
    "wn.line.daily": {"zh": " · 日更 {today}/{target}", "en": " · daily {today}/{target}"},
    "wn.line.streak": {"zh": " · 连更 {n} 天", "en": " · {n}-day streak"},
    "wn.line.buffer": {"zh": " · 存稿 {n} 章", "en": " · buffer {n}"},
    "wn.line.off": {"zh": " · {n} 章不合字数", "en": " · {n} off length"},
    "wn.err": {"zh": "没能保存：{error}", "en": "Could not save: {error}"},
})


def webnovel_text(p: Any) -> str:
    """The web-novel part of the writing room's progress line for a ``story.progress.Progress`` ("" without it):
    「 · 日更 3000/4000 · 连更 2 天 · 存稿 3 章 · 1 章不合字数」."""
    w = getattr(p, "webnovel", None)
    if w is None:
        return ""
    s = tr("wn.line.daily", today=w.today, target=w.daily_target) if w.daily_target else ""
    if w.streak:
        s += tr("wn.line.streak", n=w.streak)
    s += tr("wn.line.buffer", n=w.buffer_chapters)
    off = len(w.short) + len(w.long)
    return s + (tr("wn.line.off", n=off) if off else "")


def _spin(value: int, name: str) -> QSpinBox:
    box = QSpinBox()
    box.setObjectName(name)
    box.setRange(0, 1_000_000)
    box.setSingleStep(500)
    box.setSpecialValueText(tr("wn.none"))  # 0 = no bound / no target
    box.setValue(value)
    return box


class WebNovelDialog(QDialog):
    """The book's norm, daily target and published chapters (module doc). ``accept`` saves through
    ``Chat.set_webnovel`` and broadcasts the notice on ``session``; a refused change (a minimum above the maximum)
    is shown and the dialog stays open."""

    def __init__(self, chat: "Chat", progress: Any, session: Optional[Session] = None,
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.chat = chat
        self.session = session_or_own(session, self)
        self.setObjectName("webNovelDialog")
        self.setWindowTitle(tr("wn.title"))
        w = progress.webnovel
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.min_box = _spin(w.chapter_min, "wnMin")
        self.max_box = _spin(w.chapter_max, "wnMax")
        self.daily_box = _spin(w.daily_target, "wnDaily")
        form.addRow(tr("wn.min"), self.min_box)
        form.addRow(tr("wn.max"), self.max_box)
        form.addRow(tr("wn.daily"), self.daily_box)
        lay.addLayout(form)
        lay.addWidget(QLabel(tr("wn.published")))
        self.list = QListWidget()
        self.list.setObjectName("wnChapters")
        self._was: dict[str, bool] = {}
        for c in progress.chapters:
            if not c.file:
                continue
            mark = tr("wn.short") if c.norm == "short" else tr("wn.long") if c.norm == "long" else ""
            it = QListWidgetItem(tr("wn.row", title=c.title, words=c.words, mark=mark))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if c.published else Qt.CheckState.Unchecked)
            it.setData(Qt.ItemDataRole.UserRole, c.file)
            self.list.addItem(it)
            self._was[c.file] = c.published
        lay.addWidget(self.list, 1)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        set_role(self.error, "error")
        lay.addWidget(self.error)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        for spin in (self.min_box, self.max_box, self.daily_box):
            spin.valueChanged.connect(lambda _v: self.error.setText(""))
        self.resize(460, 480)

    def accept(self) -> None:
        """Save the settings and the published marks that changed; close on success."""
        publish: list[str] = []
        unpublish: list[str] = []
        for i in range(self.list.count()):
            it = self.list.item(i)
            f = it.data(Qt.ItemDataRole.UserRole)
            on = it.checkState() == Qt.CheckState.Checked
            if on != self._was.get(f):
                (publish if on else unpublish).append(f)
        try:
            self.chat.set_webnovel(chapter_min=self.min_box.value(), chapter_max=self.max_box.value(),
                                   daily_target=self.daily_box.value(), publish=publish, unpublish=unpublish)
        except (OSError, ValueError) as e:
            self.error.setText(tr("wn.err", error=show(e)))
            return
        self.session.broadcast(self.chat.last_changes)
        super().accept()


def install(panes: Any, chapter_list: QWidget, session: Session) -> QAction:
    """Add 网文设置… to the 章节 pane's context menu (``chapter_list``); ``panes`` is the writing room
    (``writing_panes.WritingPanes``: its ``chat`` and last gathered ``data.progress``). Returns the action."""
    act = QAction(tr("wn.action"), chapter_list)
    act.setObjectName("webNovelAction")

    def opened() -> None:
        chat, data = panes.chat, panes.data
        if chat is None or data is None or data.progress is None or data.progress.webnovel is None:
            return
        WebNovelDialog(chat, data.progress, session, chapter_list.window()).exec()

    act.triggered.connect(lambda _=False: opened())
    chapter_list.addAction(act)
    return act
