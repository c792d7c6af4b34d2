"""The quick-reply bar under the chat input (issue 26 §4): one button per reply of the sets active for the shown
chat (``core.cards.quick_replies.active_sets``: the global sets, then the chat's own), hidden replies left out, and
a 快速回复… button that opens the editor (``ui/dialogs/quick_replies_dialog.py``).

Clicking a reply does what SillyTavern does (``QuickReplySet.compose``): the message, macros expanded for the chat
(``Chat.ctx``), joins what is in the input box when the set says ``injectInput``; then it is sent as the user's
words (the window's own send, so a running beat or a read-only chat refuses as the Send button does) or, for a
reply in "insert" mode, left in the input box for the user to finish. STscript (a message starting with ``/`` or
holding ``| /command``) is never run: it is put into the input box as text, and its button's tooltip says so.

The bar reads the sets when the shown chat changes (``Session.chatShown``) and when the editor saved; a set is a
small JSON file (bounded by ``MAX_FILE_BYTES``). It follows the session's busy state."""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QScrollArea, QWidget

from ...core.cards.quick_replies import QuickReplyError, QuickReplySet, active_sets, load_set
from ..infra.i18n import register, tr
from ..infra.session import Session

register({
    "qrbar.edit": {"zh": "快速回复…", "en": "Quick replies…"},
    "qrbar.edit.tip": {"zh": "导入、编辑和启用 SillyTavern 的快速回复集", "en": "Import, edit and enable SillyTavern Quick Reply sets"},
    "qrbar.tip.send": {"zh": "点击以你的身份发送：\n{text}", "en": "Click to send as you:\n{text}"},
    "qrbar.tip.insert": {"zh": "点击放进输入框：\n{text}", "en": "Click to put into the input box:\n{text}"},
    "qrbar.tip.script": {"zh": "STscript 命令不会执行：点击只把文字放进输入框。\n{text}",
                         "en": "STscript commands are not run: clicking puts the text into the input box.\n{text}"},
    "qrbar.menu": {"zh": "快速回复…", "en": "Quick replies…"},
})


class QuickRepliesBar(QWidget):
    """The button row (module doc). ``session``: the window's (the shown chat, busy); ``input_box``: the chat
    input; ``send``: what the Send button does (reads the input box). :meth:`reload` re-reads the active sets;
    :meth:`click` is what a reply's button does; ``buttons`` maps ``(set name, reply id)`` to its button."""

    def __init__(self, session: Session, input_box: QPlainTextEdit, send: Callable[[], None],
                 parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("quickRepliesBar")
        self.session = session
        self.input_box = input_box
        self.send = send
        self.sets: dict[str, QuickReplySet] = {}
        self.buttons: dict[tuple[str, int], QPushButton] = {}
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 0, 8, 6)
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.area.setFixedHeight(34)
        outer.addWidget(self.area, 1)
        self.edit_btn = QPushButton(tr("qrbar.edit"))
        self.edit_btn.setObjectName("quickRepliesEdit")
        self.edit_btn.setToolTip(tr("qrbar.edit.tip"))
        self.edit_btn.clicked.connect(lambda: self.open_editor())
        outer.addWidget(self.edit_btn)
        self.editor: Any = None
        session.chatShown.connect(lambda _chat: self._chat_shown())
        session.busyChanged.connect(self._busy)
        self.reload()

    def _chat_shown(self) -> None:
        self.reload()
        if self.editor is not None:
            self.editor.set_chat(self.chat_dir())  # its 本对话 column follows the chat shown

    def chat_dir(self) -> Optional[str]:
        """The shown chat's folder (its own sets are keyed by it), or None."""
        chat = self.session.chat
        return str(chat.dir) if chat is not None and not self.session.is_demo else None

    def reload(self) -> None:
        """Re-read the sets active for the shown chat and lay out their buttons (a set that no longer loads is
        left out)."""
        self.sets, self.buttons = {}, {}
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        for name in active_sets(self.chat_dir()):
            try:
                qrs = load_set(name)
            except (QuickReplyError, OSError):
                continue
            self.sets[name] = qrs
            for q in qrs.visible():
                b = QPushButton(q.label or q.message[:16] or str(q.id))
                b.setObjectName("quickReply")
                kind = "qrbar.tip.script" if q.script else f"qrbar.tip.{qrs.mode_of(q)}"
                b.setToolTip((q.title + "\n" if q.title else "") + tr(kind, text=q.message[:400]))
                b.clicked.connect(lambda _=False, n=name, i=q.id: self.click(n, i))
                lay.addWidget(b)
                self.buttons[(name, q.id)] = b
        lay.addStretch(1)
        self.area.setWidget(row)
        self._busy(self.session.marked_busy)

    def _busy(self, busy: bool) -> None:
        on = self.session.chat is not None and not busy
        for b in self.buttons.values():
            b.setEnabled(on)

    def click(self, set_name: str, entry_id: int) -> bool:
        """Do what reply ``entry_id`` of ``set_name`` does (module doc); True when it was sent."""
        qrs = self.sets.get(set_name)
        chat = self.session.chat
        if qrs is None or chat is None:
            return False
        try:
            out = qrs.compose(entry_id, self.input_box.toPlainText(), chat.ctx)
        except QuickReplyError:
            return False
        self.input_box.setPlainText(out.text)
        if out.send:
            self.send()
            return True
        self.input_box.setFocus()
        self.input_box.moveCursor(QTextCursor.MoveOperation.End)
        return False

    def open_editor(self) -> Any:
        """The quick-reply editor (one per bar, non-modal); the bar re-reads the sets whenever it saves."""
        from ..dialogs.quick_replies_dialog import QuickRepliesDialog

        if self.editor is None:
            self.editor = QuickRepliesDialog(self.chat_dir(), self.window())
            self.editor.changed.connect(self.reload)
            self.editor.finished.connect(lambda _r: setattr(self, "editor", None))
        else:
            self.editor.set_chat(self.chat_dir())
        self.editor.show()
        self.editor.raise_()
        return self.editor


def install_quick_replies(win: Any, menu: Any = None) -> QuickRepliesBar:
    """Put the bar under the window's input row (the last item of the input's column) and, with ``menu``, a
    快速回复… action into it. Sets ``win.quick_replies``."""
    bar = QuickRepliesBar(win.session, win.input, win.send_clicked)
    column = win.input.parentWidget().layout()
    column.addWidget(bar)
    win.quick_replies = bar
    if menu is not None:
        act = QAction(tr("qrbar.menu"), win)
        act.setObjectName("quickRepliesAction")
        act.triggered.connect(lambda: bar.open_editor())
        menu.addAction(act)
    return bar


__all__ = ["QuickRepliesBar", "install_quick_replies"]
