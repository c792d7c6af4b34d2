"""The plan view (issue 28, Novelcrafter's Plan): the book's outline as cards — one row per volume, a card per chapter
with its title, status, 字数 against the target and its first beats — in a window beside the manuscript (书稿 →
提纲视图…). It follows the writing room's data (``WritingPanes.dataShown``: gathered off the UI thread), so a chapter
the agent writes or a status changed in the binder shows at once; double-clicking a card opens its chapter in the
editor. Read-only by design: the binder is where the outline is edited (one place per action)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, tr
from ..infra.theme import set_role

register({
    "plan.menu": {"zh": "提纲视图（卡片）…", "en": "Plan view (cards)…"},
    "plan.title": {"zh": "提纲视图", "en": "Plan"},
    "plan.none": {"zh": "还没有大纲：在左边的书稿树里加卷和章。", "en": "No outline yet: add volumes and chapters in the binder."},
    "plan.untitled": {"zh": "（未分卷）", "en": "(no volume)"},
    "plan.words": {"zh": "{words} 字", "en": "{words} words"},
    "plan.words.target": {"zh": "{words}/{target} 字", "en": "{words}/{target} words"},
    "plan.unwritten": {"zh": "未写", "en": "not written"},
    "plan.more": {"zh": "……还有 {n} 个情节点", "en": "… {n} more beats"},
})

COLUMNS = 4
"""Cards per row in a volume."""
BEATS_SHOWN = 3


class ChapterCard(QFrame):
    """One chapter as a card (module doc); ``opened(file)`` on a double-click when it has a file."""

    def __init__(self, chapter: Any, words: int, on_open: Callable[[str], None], parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.chapter = chapter
        self._on_open = on_open
        self.setObjectName("planCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(180)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        title = QLabel(chapter.title or "—")
        title.setWordWrap(True)
        set_role(title, "title")
        lay.addWidget(title)
        if chapter.file:
            amount = (tr("plan.words.target", words=words, target=chapter.target) if chapter.target
                      else tr("plan.words", words=words))
        else:
            amount = tr("plan.unwritten") + (f" · {chapter.target}" if chapter.target else "")
        status = tr(f"wr.status.{chapter.status}") if chapter.status else ""  # (outline_pane's labels)
        meta = QLabel(f"{status} · {amount}".strip(" ·"))
        set_role(meta, "muted")
        lay.addWidget(meta)
        beats = list(chapter.beats or [])
        for b in beats[:BEATS_SHOWN]:
            line = QLabel("• " + b)
            line.setWordWrap(True)
            lay.addWidget(line)
        if len(beats) > BEATS_SHOWN:
            more = QLabel(tr("plan.more", n=len(beats) - BEATS_SHOWN))
            set_role(more, "muted")
            lay.addWidget(more)
        lay.addStretch(1)
        if chapter.file:
            self.setToolTip(chapter.file)

    def mouseDoubleClickEvent(self, ev: QMouseEvent) -> None:  # noqa: N802 - Qt API
        """Open the chapter's file in the editor."""
        if self.chapter.file:
            self._on_open(self.chapter.file)
        ev.accept()


class PlanView(QDialog):
    """The cards of the outline (module doc). ``show_data(data)`` takes the writing room's ``RoomData``;
    ``on_open(file)`` opens a chapter."""

    def __init__(self, on_open: Callable[[str], None], parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("planView")
        self.setWindowTitle(tr("plan.title"))
        self._on_open = on_open
        self.cards: list[ChapterCard] = []
        lay = QVBoxLayout(self)
        self.empty = QLabel(tr("plan.none"))
        set_role(self.empty, "muted")
        lay.addWidget(self.empty)
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        lay.addWidget(self.area, 1)
        self.resize(960, 620)

    def show_data(self, data: Any) -> None:
        """Lay out the volumes and chapters of ``data.outline`` (with 字数 from ``data.progress``)."""
        outline = getattr(data, "outline", None)
        words = {c.file: c.words for c in (data.progress.chapters if getattr(data, "progress", None) else []) if c.file}
        inner = QWidget()
        grid = QVBoxLayout(inner)
        self.cards = []
        volumes = list(outline.volumes) if outline is not None else []
        for v in volumes:
            if not v.chapters and not v.title:
                continue
            head = QLabel(v.title or tr("plan.untitled"))
            set_role(head, "title")
            grid.addWidget(head)
            row = QGridLayout()
            for col in range(COLUMNS):  # four equal columns however many cards a volume has
                row.setColumnStretch(col, 1)
                row.setColumnMinimumWidth(col, 180)
            for i, c in enumerate(v.chapters):
                card = ChapterCard(c, words.get(c.file or "", 0), self._on_open)
                self.cards.append(card)
                row.addWidget(card, i // COLUMNS, i % COLUMNS, Qt.AlignmentFlag.AlignTop)
            grid.addLayout(row)
        grid.addStretch(1)
        self.area.setWidget(inner)
        self.empty.setVisible(not self.cards)


def install(room: Any, writing_panes: Any) -> Any:
    """Add 提纲视图… to the manuscript menu ``room.menu`` (ui/writing/novel_room.py); the view follows the writing
    room's data and opens chapters through it. Returns the menu action."""
    holder: dict[str, PlanView] = {}

    def opened() -> None:
        view = holder.get("view")
        if view is None:
            view = PlanView(lambda f: writing_panes.open_at(f, -1, 0), room.window)
            writing_panes.dataShown.connect(view.show_data)
            holder["view"] = view
        if writing_panes.data is not None:
            view.show_data(writing_panes.data)
        view.show()
        view.raise_()

    act = room.menu.addAction(tr("plan.menu"))
    act.setObjectName("planViewAction")
    act.triggered.connect(lambda _=False: opened())
    room.plan_view = holder
    return act
