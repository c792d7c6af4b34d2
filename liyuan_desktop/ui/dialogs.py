"""The two small questions every pane asks: a yes/no confirmation (No is the default) and a warning to read.
Panes keep ``_confirm_dialog``/``_inform_dialog`` methods that call these, so tests can replace them."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget


def confirm(parent: QWidget, title: str, text: str) -> bool:
    """Ask ``text`` with 是 / 否 (No is the default button); True for Yes. Modal."""
    yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
    return QMessageBox.question(parent, title, text, yes | no, no) == yes


def inform(parent: QWidget, title: str, text: str) -> None:
    """Show ``text`` as a warning with OK. Modal."""
    QMessageBox.warning(parent, title, text)
