"""The ask dialog (岔口): the model's question, 2–4 option buttons, a free-text answer, and Stop.

Seed 000, 岔口交给用户: the user decides; Stop hands the pen back and ends the beat. The dialog is non-modal and lives
on the qasync loop: :meth:`AskDialog.ask` returns an awaitable answer while the draft pane keeps updating behind it.
Keyboard: 1–4 pick an option, Enter sends the free text, Esc is Stop.
"""

from __future__ import annotations

import asyncio
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ...core.beat.events import AskAnswer, AskRequest
from ..infra.i18n import tr
from ..infra.theme import set_role


class AskDialog(QDialog):
    """One question at a time. ``answered`` carries the :class:`AskAnswer` when the user decides."""

    answered = Signal(object)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle(tr("ask.title"))
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumWidth(480)
        self._future: Optional[asyncio.Future[AskAnswer]] = None
        lay = QVBoxLayout(self)
        self.question = QLabel()
        self.question.setWordWrap(True)
        self.question.setObjectName("askQuestion")
        self.question.setStyleSheet("font-size: 15px; font-weight: 600; padding: 4px 0 8px 0;")
        lay.addWidget(self.question)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        set_role(self.note, "warn")
        self.note.setVisible(False)
        lay.addWidget(self.note)
        self.options_box = QVBoxLayout()
        lay.addLayout(self.options_box)
        self.option_buttons: list[QPushButton] = []
        row = QHBoxLayout()
        self.free = QLineEdit()
        self.free.setPlaceholderText(tr("ask.free"))
        self.free.returnPressed.connect(self._send_free)
        self.send_btn = QPushButton(tr("ask.send"))
        self.send_btn.setAutoDefault(False)
        self.send_btn.clicked.connect(self._send_free)
        row.addWidget(self.free, 1)
        row.addWidget(self.send_btn)
        lay.addLayout(row)
        self.stop_btn = QPushButton(tr("ask.stop"))
        self.stop_btn.setAutoDefault(False)
        self.stop_btn.clicked.connect(self.stop)
        lay.addWidget(self.stop_btn, 0, Qt.AlignmentFlag.AlignRight)

    # -- API ------------------------------------------------------------------------------------------------
    async def ask(self, req: AskRequest) -> AskAnswer:
        """Show ``req`` and wait for the answer (an option, free text, or Stop)."""
        self._show(req)
        loop = asyncio.get_running_loop()
        self._future = loop.create_future()
        try:
            return await self._future
        finally:
            self._future = None
            self.hide()

    def set_note(self, text: str) -> None:
        """A line under the question (e.g. that the demo plays its recorded choice whatever is picked)."""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def choose(self, index: int) -> None:
        """Pick option ``index`` (0-based)."""
        if 0 <= index < len(self.option_buttons):
            self._finish(AskAnswer(answer=self.option_buttons[index].property("answer"), by="user"))

    def stop(self) -> None:
        """Stop: the pen goes back to the user and the beat ends."""
        self._finish(AskAnswer(answer=None, by="stop"))

    # -- internals ------------------------------------------------------------------------------------------
    def _show(self, req: AskRequest) -> None:
        self.question.setText(req.question)
        for b in self.option_buttons:
            self.options_box.removeWidget(b)
            b.deleteLater()
        self.option_buttons = []
        for i, opt in enumerate(req.options[:4]):
            b = QPushButton(f"{i + 1}. {opt}")
            b.setProperty("answer", opt)
            b.setStyleSheet("text-align: left; padding: 8px 10px;")
            b.setAutoDefault(False)
            b.clicked.connect(lambda _=False, k=i: self.choose(k))
            self.options_box.addWidget(b)
            self.option_buttons.append(b)
        self.free.clear()
        self.show()
        self.raise_()
        self.activateWindow()
        if self.option_buttons:  # keys 1-4 work at once; clicking the text box switches to free text
            self.option_buttons[0].setFocus()

    def _send_free(self) -> None:
        text = self.free.text().strip()
        if text:
            self._finish(AskAnswer(answer=text, by="user"))

    def _finish(self, ans: AskAnswer) -> None:
        self.answered.emit(ans)
        if self._future is not None and not self._future.done():
            self._future.set_result(ans)

    def keyPressEvent(self, ev: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = ev.key()
        if key == Qt.Key.Key_Escape:
            self.stop()
            return
        if Qt.Key.Key_1 <= key <= Qt.Key.Key_4 and not self.free.hasFocus():
            self.choose(key - Qt.Key.Key_1)
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._send_free()
            return
        super().keyPressEvent(ev)

    def closeEvent(self, ev) -> None:  # noqa: N802 - closing the window is Stop
        if self._future is not None and not self._future.done():
            self.stop()
        super().closeEvent(ev)
