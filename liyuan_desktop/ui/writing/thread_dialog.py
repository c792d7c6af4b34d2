"""One dialog to add or edit a foreshadowing thread (伏笔, issue 28): the thread in one line, a note, where it was
planted (a chapter once the book has one; "this turn" otherwise) and the chapter it is due by — instead of two or
three modal prompts in a row. Used by ``ui/writing/threads_pane.py``; the pane turns the answer into a
``ledger.threads.ThreadEvent`` for ``Chat.thread_event``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, tr

register({
    "thr.add.title": {"zh": "新增伏笔", "en": "New thread"},
    "thr.edit.title": {"zh": "编辑伏笔", "en": "Edit thread"},
    "thr.text": {"zh": "伏笔（一句话）", "en": "Thread (one line)"},
    "thr.note": {"zh": "备注", "en": "Note"},
    "thr.planted": {"zh": "埋于第几章", "en": "Planted in chapter"},
    "thr.planted.now": {"zh": "本轮（还没有章节）", "en": "this turn (no chapter yet)"},
    "thr.due": {"zh": "须在第几章前回收", "en": "Due by chapter"},
    "thr.due.none": {"zh": "不设", "en": "none"},
})


@dataclass
class ThreadForm:
    """What the dialog asks: ``title`` (one line), ``note``, ``planted`` (1-based chapter; None = the current turn,
    or unchanged when editing), ``due`` (1-based chapter; None = none)."""

    title: str = ""
    note: str = ""
    planted: Optional[int] = None
    due: Optional[int] = None


class ThreadDialog(QDialog):
    """The form for :class:`ThreadForm`. ``reached``: the furthest chapter written on the branch (the planted
    chapter's default and the spin boxes' scale; None = no chapter yet: "planted" is the current turn). ``edit``:
    the planted field is not shown (a thread's plant is where the story put it)."""

    def __init__(self, form: ThreadForm, reached: Optional[int], edit: bool = False,
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("threadDialog")
        self.setWindowTitle(tr("thr.edit.title" if edit else "thr.add.title"))
        lay = QVBoxLayout(self)
        f = QFormLayout()
        self.title_edit = QLineEdit(form.title)
        self.title_edit.setObjectName("threadTitle")
        self.note_edit = QPlainTextEdit(form.note)
        self.note_edit.setObjectName("threadNote")
        self.note_edit.setMaximumHeight(80)
        top = max(reached or 0, form.due or 0, form.planted or 0) + 200
        self.planted = QSpinBox()
        self.planted.setObjectName("threadPlanted")
        self.planted.setRange(0, top)
        self.planted.setSpecialValueText(tr("thr.planted.now"))
        self.planted.setValue(form.planted or reached or 0)
        self.due = QSpinBox()
        self.due.setObjectName("threadDue")
        self.due.setRange(0, top)
        self.due.setSpecialValueText(tr("thr.due.none"))
        self.due.setValue(form.due or 0)
        f.addRow(tr("thr.text"), self.title_edit)
        f.addRow(tr("thr.note"), self.note_edit)
        if not edit:
            f.addRow(tr("thr.planted"), self.planted)
        f.addRow(tr("thr.due"), self.due)
        lay.addLayout(f)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.title_edit.textChanged.connect(lambda t: ok.setEnabled(bool(t.strip())))
        ok.setEnabled(bool(form.title.strip()))
        self.resize(420, 260)

    def form(self) -> ThreadForm:
        """The answer as it stands."""
        return ThreadForm(title=self.title_edit.text().strip(), note=self.note_edit.toPlainText(),
                          planted=self.planted.value() or None, due=self.due.value() or None)


def ask_thread(parent: QWidget, form: ThreadForm, reached: Optional[int], edit: bool = False) -> Optional[ThreadForm]:
    """Show :class:`ThreadDialog`; the answer, or None when cancelled."""
    dlg = ThreadDialog(form, reached, edit, parent)
    return dlg.form() if dlg.exec() == QDialog.DialogCode.Accepted else None
