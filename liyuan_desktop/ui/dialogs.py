"""The two small questions every pane asks: a yes/no confirmation (No is the default) and a warning to read; and
the compact tool button the side panes put in their button rows. Panes keep ``_confirm_dialog``/``_inform_dialog``
methods that call these, so tests can replace them."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QMessageBox, QToolButton, QWidget


def confirm(parent: QWidget, title: str, text: str) -> bool:
    """Ask ``text`` with 是 / 否 (No is the default button); True for Yes. Modal."""
    yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
    return QMessageBox.question(parent, title, text, yes | no, no) == yes


def inform(parent: QWidget, title: str, text: str) -> None:
    """Show ``text`` as a warning with OK. Modal."""
    QMessageBox.warning(parent, title, text)


def tool_button(bar: QBoxLayout, text: str, slot: Callable[[], Any], tip: str = "") -> QToolButton:
    """A text-only tool button added to ``bar`` that calls ``slot()`` when clicked (compact: the agent-mode panes
    must fit the main window's 430 px side column); ``tip`` its tooltip."""
    b = QToolButton()
    b.setText(text)
    b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    if tip:
        b.setToolTip(tip)
    b.clicked.connect(lambda _=False: slot())
    bar.addWidget(b)
    return b
