"""The two small questions every pane asks: a yes/no confirmation (No is the default) and a warning to read; and
the compact tool button the side panes put in their button rows. Panes keep ``_confirm_dialog``/``_inform_dialog``
methods that call these, so tests can replace them."""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QMessageBox, QToolButton, QWidget

from ..infra.i18n import register, tr

register({
    "dialog.yes": {"zh": "是", "en": "Yes"},
    "dialog.no": {"zh": "否", "en": "No"},
})


def confirm(parent: Optional[QWidget], title: str, text: str, yes: str = "") -> bool:
    """Ask ``text`` (a question, already in the window's language) with two buttons, ``yes`` (default: 是 / Yes —
    pass the action's own name, e.g. 永久删除, where that reads better) and 否 / No. No is the default button and
    the escape button: Enter, Esc and closing the box all answer No, so nothing destructive happens by a reflex
    keystroke (issue 24 §2). True only when the yes button was clicked. Modal (runs a nested event loop).
    The box is named ``confirmBox`` and its buttons ``confirmYes`` / ``confirmNo`` so tests can click them."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("confirmBox")
    yes_btn = box.addButton(yes or tr("dialog.yes"), QMessageBox.ButtonRole.YesRole)
    yes_btn.setObjectName("confirmYes")
    no_btn = box.addButton(tr("dialog.no"), QMessageBox.ButtonRole.NoRole)
    no_btn.setObjectName("confirmNo")
    yes_btn.setAutoDefault(False)  # a focused Yes must not take Enter either
    box.setDefaultButton(no_btn)
    box.setEscapeButton(no_btn)
    no_btn.setFocus()
    box.exec()
    return box.clickedButton() is yes_btn


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
