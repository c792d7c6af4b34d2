"""Which key sends in the chat input (issue 26 §3): with ``AppSettings.enter_sends`` Enter sends and Shift+Enter
starts a new line (SillyTavern's default); without it Enter starts a new line. Ctrl+Enter sends either way (the
window's shortcut on the input). The input's placeholder says which keys do what, in the window's language.

An input method composing a word keeps its Enter (it reaches the input as the composition's commit, not as a key
press), so typing Chinese with a pinyin IME never sends half a word.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent

from ..infra.i18n import tr


class SendKeys(QObject):
    """The event filter on the main window's input box (``win.input``) that sends on Enter when the setting says
    so; ``win.send_clicked`` does the sending (an empty box or a running beat sends nothing, as the button)."""

    def __init__(self, win: Any) -> None:
        super().__init__(win)
        self.win = win
        win.input.installEventFilter(self)
        self.sync()

    def enter_sends(self) -> bool:
        """The setting as the window holds it now."""
        return bool(getattr(self.win.settings, "enter_sends", False))

    def sync(self) -> None:
        """The input's placeholder for the setting (call after the settings changed)."""
        self.win.input.setPlaceholderText(tr("input.placeholder.enter" if self.enter_sends() else "input.placeholder.ctrl"))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Enter (either key) without Shift/Ctrl/Alt sends when :meth:`enter_sends`; everything else goes on."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if event.key() not in (Qt.Key.Key_Return, Qt.Key.Key_Enter) or not self.enter_sends():
            return False
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods != Qt.KeyboardModifier.NoModifier:
            return False  # Shift+Enter: a new line; Ctrl+Enter: the window's shortcut sends
        QTimer.singleShot(0, self, self.win.send_clicked)  # after the key event (the box is cleared by the send)
        return True


def install_send_keys(win: Any) -> SendKeys:
    """Install :class:`SendKeys` on ``win.input`` (kept as ``win.send_keys``)."""
    keys = SendKeys(win)
    win.send_keys = keys
    return keys


__all__ = ["SendKeys", "install_send_keys"]
