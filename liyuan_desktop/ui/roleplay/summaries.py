"""前情提要: read and edit the relay summaries of the shown branch.

Data: :meth:`Chat.summaries` → ``[{"id", "text", "beats": [first, last], "layer", "source"}]`` (active on the
branch, earliest first) and :meth:`Chat.edit_summary` ``(id, text)``, which appends the user's version as a new
entry (nothing is rewritten). One box per summary, each with its own 「保存」.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat


def summary_heading(s: dict[str, Any]) -> str:
    """「第 a–b 拍 · 第 n 层 · 来源」 for one summary."""
    beats = s.get("beats") or []
    span = tr("sum.beats", a=beats[0], b=beats[-1]) if beats else ""
    source = {"user": tr("sum.source.user"), "scribe": tr("sum.source.scribe"), "model": tr("sum.source.scribe")}.get(str(s.get("source") or ""), str(s.get("source") or ""))
    parts = [p for p in (span, tr("sum.layer", n=s.get("layer", 1)), source) if p]
    return " · ".join(parts)


class SummariesDialog(QDialog):
    """Lists ``chat.summaries()`` with an edit box each; 「保存」 calls ``chat.edit_summary(id, text)`` and reloads.
    ``edited(id)`` fires after a save."""

    edited = Signal(str)

    def __init__(self, chat: Chat, parent: Optional[QWidget] = None, session: Optional[Session] = None):
        super().__init__(parent)
        self.chat = chat
        self.session = session_or_own(session, self)  # its saves are broadcast; it repaints from summaries notices
        self.session.changed.connect(self._on_changes)
        self.setWindowTitle(tr("sum.title"))
        self.resize(640, 620)
        lay = QVBoxLayout(self)
        self.note = QLabel(tr("sum.note"))
        self.note.setWordWrap(True)
        set_role(self.note, "muted")
        lay.addWidget(self.note)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        lay.addWidget(self.scroll, 1)
        self.status = QLabel("")
        self.status.setObjectName("sumStatus")
        lay.addWidget(self.status)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        self.editors: dict[str, QPlainTextEdit] = {}
        self.reload()

    def reload(self) -> None:
        """Rebuild the list from the chat."""
        inner = QWidget()
        col = QVBoxLayout(inner)
        self.editors = {}
        items = self.chat.summaries() if self.chat is not None else []
        if not items:
            empty = QLabel(tr("sum.empty"))
            empty.setWordWrap(True)
            col.addWidget(empty)
        for s in items:
            frame = QFrame()
            frame.setFrameShape(QFrame.Shape.StyledPanel)
            fl = QVBoxLayout(frame)
            row = QHBoxLayout()
            row.addWidget(QLabel(summary_heading(s)), 1)
            save = QPushButton(tr("save"))
            row.addWidget(save)
            fl.addLayout(row)
            ed = QPlainTextEdit(str(s.get("text", "")))
            ed.setMinimumHeight(120)
            fl.addWidget(ed)
            sid = str(s["id"])
            self.editors[sid] = ed
            save.clicked.connect(lambda _=False, i=sid: self.save(i))
            col.addWidget(frame)
        col.addStretch(1)
        self.scroll.setWidget(inner)

    def save(self, summary_id: str) -> bool:
        """Save the text of one box as the user's version of that summary; False (with a message) on failure."""
        ed = self.editors.get(summary_id)
        if ed is None:
            return False
        try:
            self.chat.edit_summary(summary_id, ed.toPlainText())
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            self.status.setText(tr("sum.failed", err=e))
            return False
        self.status.setText(tr("sum.saved"))
        ed.document().setModified(False)
        self.edited.emit(summary_id)
        self.session.broadcast(self.chat.declared_changes("edit_summary"))
        return True

    def _on_changes(self, changes: Any) -> None:
        """Reload the boxes on a notice naming the summaries, unless a box holds unsaved words (they would be
        lost; the next save or reopening shows the rest)."""
        if changes.summaries and not any(ed.document().isModified() for ed in self.editors.values()):
            self.reload()
