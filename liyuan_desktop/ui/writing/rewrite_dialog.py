"""Rewrite a selection in the chapter editor (issue 28): select a passage, right-click → 改写 / 扩写 / 缩写 this
passage…; the model's proposal is shown as a prose diff (the checkpoint timeline's view) with the author's
instruction box; 采用 writes it (``Chat.apply_rewrite``: only that passage changes, a user checkpoint 「改写 …」 is
made, undone like any edit), 再来一次 asks again, 放弃 leaves the chapter as it is.

The engine does the work (``core/chat/rewrite.py``); the call runs as a task on the UI loop (the model call is
awaited, nothing blocks the thread) with Cancel. Offsets are the editor's QTextCursor positions — UTF-16 units, as
the engine counts them; an editor with unsaved changes is saved first so the file and the selection agree.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.story.checkpoint_model import FileDiff
from ..infra.i18n import register, show, tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role
from .prose_diff import ProseDiffView

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "rw.menu.rewrite": {"zh": "改写选中的一段…", "en": "Rewrite the selection…"},
    "rw.menu.expand": {"zh": "扩写选中的一段…", "en": "Expand the selection…"},
    "rw.menu.condense": {"zh": "缩写选中的一段…", "en": "Condense the selection…"},
    "rw.title": {"zh": "改写：{file}", "en": "Rewrite: {file}"},
    "rw.mode.rewrite": {"zh": "改写", "en": "Rewrite"},
    "rw.mode.expand": {"zh": "扩写", "en": "Expand"},
    "rw.mode.condense": {"zh": "缩写", "en": "Condense"},
    "rw.instruction": {"zh": "要求（可不填）：比如「更冷峻」「加一句对白」", "en": "What you want (optional): e.g. “colder”, “add a line of dialogue”"},
    "rw.asking": {"zh": "正在请模型改写……", "en": "Asking the model…"},
    "rw.ready": {"zh": "左边是原文，右边是新的一段；采用后只改这一段。", "en": "The old passage and the new one; accepting changes only this passage."},
    "rw.accept": {"zh": "采用", "en": "Accept"},
    "rw.again": {"zh": "再来一次", "en": "Try again"},
    "rw.reject": {"zh": "放弃", "en": "Reject"},
    "rw.cancel": {"zh": "取消", "en": "Cancel"},
    "rw.error": {"zh": "没能改写：{error}", "en": "Could not rewrite: {error}"},
    "rw.select.first": {"zh": "先在章节里选中一段文字。", "en": "Select a passage of the chapter first."},
})

MODES = ("rewrite", "expand", "condense")


class RewriteDialog(QDialog):
    """The proposal for one selection (module doc). ``chat``: the open agent chat; ``file``, ``start``, ``end``:
    the chapter and the selection (UTF-16 offsets); ``mode``: rewrite | expand | condense. ``accepted_id`` is the
    checkpoint made when the author accepts (else "")."""

    def __init__(self, chat: "Chat", file: str, start: int, end: int, mode: str = "rewrite",
                 session: Optional[Session] = None, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.chat, self.file, self.start, self.end = chat, file, start, end
        self.session = session_or_own(session, self)
        self.proposal: Any = None
        self.accepted_id = ""
        self.task: Optional[asyncio.Future[None]] = None
        self.setObjectName("rewriteDialog")
        self.setWindowTitle(tr("rw.title", file=file))
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.mode = QComboBox()
        self.mode.setObjectName("rewriteMode")
        for m in MODES:
            self.mode.addItem(tr(f"rw.mode.{m}"), m)
        self.mode.setCurrentIndex(MODES.index(mode) if mode in MODES else 0)
        self.instruction = QLineEdit()
        self.instruction.setObjectName("rewriteInstruction")
        self.instruction.setPlaceholderText(tr("rw.instruction"))
        row.addWidget(self.mode)
        row.addWidget(self.instruction, 1)
        lay.addLayout(row)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        set_role(self.status, "muted")
        lay.addWidget(self.status)
        self.diff = ProseDiffView()
        self.diff.set_side_by_side(True)
        lay.addWidget(self.diff, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.accept_btn = self._button(buttons, "rw.accept", self.accept_proposal)
        self.again_btn = self._button(buttons, "rw.again", self.ask)
        self.reject_btn = self._button(buttons, "rw.reject", self.reject)
        lay.addLayout(buttons)
        self.resize(860, 560)

    @staticmethod
    def _button(row: QHBoxLayout, key: str, slot: Callable[[], Any]) -> QPushButton:
        b = QPushButton(tr(key))
        b.clicked.connect(lambda _=False: slot())
        row.addWidget(b)
        return b

    def _set_busy(self, busy: bool) -> None:
        self.accept_btn.setEnabled(not busy and self.proposal is not None)
        self.again_btn.setText(tr("rw.cancel") if busy else tr("rw.again"))
        self.mode.setEnabled(not busy)
        self.instruction.setEnabled(not busy)

    def ask(self) -> None:
        """Ask the model (again); while it runs the same button cancels."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            return
        self.task = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        """One proposal: the model call, then the diff (or the error) shown."""
        self.proposal = None
        self.status.setText(tr("rw.asking"))
        self._set_busy(True)
        try:
            self.proposal = await self.chat.propose_rewrite(self.file, self.start, self.end,
                                                            str(self.mode.currentData()), self.instruction.text())
        except asyncio.CancelledError:
            self.status.setText("")
        except Exception as e:  # noqa: BLE001 - any failure is said in the dialog, the chapter untouched
            self.status.setText(tr("rw.error", error=show(getattr(e, "message", None) or e)))
        else:
            p = self.proposal
            self.diff.show_files([FileDiff(name=self.file, status="modified", old_text=p.old, new_text=p.new)])
            self.status.setText(tr("rw.ready"))
        finally:
            self._set_busy(False)

    def accept_proposal(self) -> bool:
        """Write the proposal (``Chat.apply_rewrite``) and broadcast its notice; close. False (said in the dialog)
        when the chapter changed meanwhile or the disk refused."""
        if self.proposal is None:
            return False
        try:
            self.accepted_id = self.chat.apply_rewrite(self.proposal)
        except Exception as e:  # noqa: BLE001 - ToolError (conflict), RuntimeError (busy), OSError
            self.status.setText(tr("rw.error", error=show(getattr(e, "message", None) or e)))
            return False
        self.session.broadcast(self.chat.last_changes)
        self.accept()
        return True

    def reject(self) -> None:
        """Close without writing (a running call is cancelled)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        super().reject()


def selection(editor: Any) -> Optional[tuple[int, int]]:
    """The chapter editor's selection as (start, end) in UTF-16 units, or None without one."""
    cur = editor.text.textCursor()
    a, b = cur.selectionStart(), cur.selectionEnd()
    return (a, b) if b > a else None


def open_rewrite(editor: Any, chat: Optional["Chat"], mode: str, session: Optional[Session]) -> Optional[RewriteDialog]:
    """From the editor's context menu: save unsaved edits (so the file and the selection agree), then show a
    :class:`RewriteDialog` asking at once. None when there is nothing to rewrite (said in the editor)."""
    sel = selection(editor)
    if chat is None or editor.name is None or sel is None:
        editor.inform(tr("rw.title", file=editor.name or ""), tr("rw.select.first"))
        return None
    if editor.dirty and not editor.save():
        return None
    dlg = RewriteDialog(chat, editor.name, sel[0], sel[1], mode, session, editor.window())
    dlg.finished.connect(lambda _r: editor.reload() if dlg.accepted_id else None)
    dlg.show()
    dlg.ask()
    return dlg


def install(editor: Any, current_chat: Callable[[], Optional["Chat"]], session: Session) -> list[QAction]:
    """Add 改写 / 扩写 / 缩写 to the chapter editor's text context menu; returns the actions."""
    acts = []
    for m in MODES:
        act = QAction(tr(f"rw.menu.{m}"), editor.text)
        act.setObjectName(f"rewrite_{m}")
        act.triggered.connect(lambda _=False, m=m: open_rewrite(editor, current_chat(), m, session))
        acts.append(act)
    editor.text.extra_actions = acts  # shown after Qt's own items (chapter_editor.WritingEdit.contextMenuEvent)
    return acts
