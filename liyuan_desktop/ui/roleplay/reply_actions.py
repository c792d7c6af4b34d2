"""What a player does to a reply in the window (issue 17 "Messages and chats"): 「编辑」 a reply (a new version of it;
the ledger is not recomputed, and the window says so), 「续写」 the last reply (SillyTavern's Continue), 「代拟」 the
user's next line into the input box (Impersonate; nothing is sent), and the 「作者注…」 editor.

Issue 26 §3 adds SillyTavern's message actions, on hover in the conversation (``conversation.js`` "message actions")
and in its context menu: 复制 (the stored text to the clipboard), 编辑 in place (the page's editor; a reply becomes a new
version as above, a user message is played again on a new branch), 从这里分支 (从这里新建对话, ui/window/manage.py)
不发送 / 恢复发送 (SillyTavern's /hide: the message stays shown, dimmed, but leaves the prompt; ``Chat.set_hidden``)
and 删除 (asked first, No the default; ``Chat.delete_message``: the message and what follows leave the shown branch,
which stays in 分支 — nothing is erased).

:func:`install_reply_actions` wires them into the main window: two buttons beside 重来 / 撤销本轮, three entries in
the 对话 menu, and the conversation's 「编辑」 on replies (``ConversationView.editReplyRequested``). Every command goes
through ``Chat``'s public methods (``edit_reply``, ``continue_reply``, ``impersonate``, ``set_authors_note``). The
strings live here (prefix ``reply.``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Optional

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QLayout,
    QPushButton,
    QWidget,
)

from ..dialogs.authors_note import open_authors_note
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role
from .branch_navigator import EditMessageDialog

log = logging.getLogger(__name__)

register({
    "reply.edit.title": {"zh": "编辑回复", "en": "Edit reply"},
    "reply.edit.label": {"zh": "改好的文字存为这条回复的新版本，原文仍可用 ◀ ▶ 翻回。账本不会按改后的文字重算。",
                         "en": "The edited text is saved as a new version of this reply; ◀ ▶ still reaches the old "
                               "one. The ledger is not recomputed from the edited text."},
    "reply.continue": {"zh": "续写", "en": "Continue"},
    "reply.continue.tip": {"zh": "让模型接着最后一条回复往下写（成为它的新版本）",
                           "en": "Let the model write on from the last reply (a new version of it)"},
    "reply.continue.none": {"zh": "没有可以续写的回复：最后一条不是已收笔的回复。",
                            "en": "Nothing to continue: the last message is not a sealed reply."},
    "reply.impersonate": {"zh": "代拟", "en": "Impersonate"},
    "reply.impersonate.tip": {"zh": "让模型用你的人设替你拟下一句话，放进输入框（不会发送）",
                              "en": "Let the model draft your next line in your persona's voice into the input box (not sent)"},
    "reply.impersonate.running": {"zh": "正在代拟你的下一句…", "en": "Drafting your next line…"},
    "reply.impersonate.done": {"zh": "代拟好了：在输入框里，改一改再发送。", "en": "Drafted: it is in the input box; edit it, then send."},
    "reply.impersonate.failed": {"zh": "代拟失败：{error}", "en": "Impersonate failed: {error}"},
    "reply.menu.continue": {"zh": "续写最后一条回复", "en": "Continue the last reply"},
    "reply.menu.impersonate": {"zh": "代拟我的下一句", "en": "Impersonate my next line"},
})


class EditReplyDialog(EditMessageDialog):
    """「编辑」 a reply: its text in a box and one line saying what saving does (the ledger is not recomputed); OK
    emits ``submitted(entry_id, text)``. Non-modal (``open()``). The box is the user-message editor's."""

    def __init__(self, entry_id: str, text: str, parent: Optional[QWidget] = None):
        super().__init__(entry_id, text, parent, title_key="reply.edit.title", label_key="reply.edit.label",
                         editor_name="editReplyText", size=(640, 420))
        self.setObjectName("editReplyDialog")
        set_role(self.label, "muted")


def _layout_with(layout: Optional[QLayout], widget: QWidget) -> Optional[QBoxLayout]:
    """The box layout (searched depth-first under ``layout``) that holds ``widget`` directly."""
    if layout is None:
        return None
    if isinstance(layout, QBoxLayout) and layout.indexOf(widget) >= 0:
        return layout
    for i in range(layout.count()):
        found = _layout_with(layout.itemAt(i).layout(), widget)
        if found is not None:
            return found
    return None


class ReplyActions(QObject):
    """The reply commands of one main window (``window``: ``ui.main_window.MainWindow``)."""

    def __init__(self, window: Any, chat_menu: Any):
        super().__init__(window)
        self.w = window
        self.dialog: Optional[QDialog] = None
        self.impersonating: Optional[asyncio.Task[Any]] = None
        self.continue_btn = QPushButton(tr("reply.continue"))
        self.continue_btn.setObjectName("continueReplyButton")
        self.continue_btn.setToolTip(tr("reply.continue.tip"))
        self.continue_btn.clicked.connect(self.continue_clicked)
        self.impersonate_btn = QPushButton(tr("reply.impersonate"))
        self.impersonate_btn.setObjectName("impersonateButton")
        self.impersonate_btn.setToolTip(tr("reply.impersonate.tip"))
        self.impersonate_btn.clicked.connect(self.impersonate_clicked)
        row = _layout_with(window.regen_btn.parentWidget().layout(), window.regen_btn)
        outer = _layout_with(window.regen_btn.parentWidget().layout(), window.send_btn)
        if outer is not None:  # a second row under 重来 / 撤销本轮
            from PySide6.QtWidgets import QHBoxLayout

            more = QHBoxLayout()
            more.setSpacing(4)
            more.addWidget(self.continue_btn)
            more.addWidget(self.impersonate_btn)
            outer.addLayout(more)
        elif row is not None:
            row.addWidget(self.continue_btn)
            row.addWidget(self.impersonate_btn)
        self.continue_action = QAction(tr("reply.menu.continue"), window)
        self.continue_action.setObjectName("continueReplyAction")
        self.continue_action.triggered.connect(self.continue_clicked)
        self.impersonate_action = QAction(tr("reply.menu.impersonate"), window)
        self.impersonate_action.setObjectName("impersonateAction")
        self.impersonate_action.setShortcut(QKeySequence("Ctrl+Shift+I"))
        self.impersonate_action.triggered.connect(self.impersonate_clicked)
        self.note_action = QAction(tr("an.menu"), window)
        self.note_action.setObjectName("authorsNoteAction")
        self.note_action.triggered.connect(self.open_note)
        for act in (self.continue_action, self.impersonate_action, self.note_action):
            chat_menu.addAction(act)
        window.view.editReplyRequested.connect(self.edit_clicked)
        window.view.messageActionRequested.connect(lambda action, entry_id: self.message_action(action, entry_id))
        window.view.editSaved.connect(lambda entry_id, text: self.edit_saved(entry_id, text))
        window.busyChanged.connect(lambda _b: self.sync())
        window.beatFinished.connect(lambda _r: self.sync())
        self.sync()

    # -- state ----------------------------------------------------------------------------------------------
    def _roleplay(self) -> bool:
        chat = self.w.chat
        return chat is not None and chat.mode == "roleplay" and not getattr(self.w, "is_demo", False)

    def sync(self) -> None:
        """Enable what can be done now: 续写 with a sealed last reply, 代拟 with a role-play chat, both idle."""
        # the session's busy mark: busyChanged(False) comes from inside the finishing task, still "running" then
        idle = not self.w.session.marked_busy and self.impersonating is None
        rp = self._roleplay()
        can_continue = rp and idle and self.w.chat.last_reply_id() is not None
        for x in (self.continue_btn, self.continue_action):
            x.setEnabled(bool(can_continue))
        for x in (self.impersonate_btn, self.impersonate_action):
            x.setEnabled(bool(rp and idle))
        self.note_action.setEnabled(self.w.chat is not None and self.w.chat.mode == "roleplay")

    # -- edit -----------------------------------------------------------------------------------------------
    def edit_clicked(self, entry_id: str) -> Optional[EditReplyDialog]:
        """「编辑」 on a reply: its text (as shown, revisions included) in a box; OK saves a new version."""
        chat = self.w.chat
        if chat is None or self.w.busy:
            return None
        if getattr(self.w, "is_demo", False):
            self.w.statusBar().showMessage(tr("branch.demo"), 8000)
            return None
        shown = next((it for it in reversed(self.w.transcript.items) if it.get("id") == entry_id), None)
        try:
            text = shown["text"] if shown is not None else chat.entry_text(entry_id)
        except KeyError:
            return None
        dlg = EditReplyDialog(entry_id, text, self.w)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.submitted.connect(self.edit_submitted)
        dlg.open()
        self.dialog = dlg
        return dlg

    def edit_submitted(self, entry_id: str, text: str) -> None:
        """Save the edited reply as a new version and show it, with the one line saying the ledger was kept."""
        chat = self.w.chat
        if chat is None or self.w.busy or self.w.refuse_read_only():
            return
        try:
            chat.edit_reply(entry_id, text)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.w.statusBar().showMessage(show(e), 8000)
            return
        self.w.after_branch_switch(tr("chat.reply_edited"))
        self.w.statusBar().showMessage(tr("chat.reply_edited"), 10000)
        self.sync()

    # -- the message actions of the conversation (issue 26 §3) -------------------------------------------------
    def message_action(self, action: str, entry_id: str) -> None:
        """A message's hover button or context-menu entry: ``copy`` (its text to the clipboard), ``delete`` (asked
        first, No the default; :meth:`delete_message`), ``branch`` (a new chat up to it: 从这里新建对话)."""
        if action == "copy":
            text = self.w.view.item_text(entry_id)
            if text is None and self.w.chat is not None:
                try:
                    text = self.w.chat.entry_text(entry_id)
                except KeyError:
                    text = None
            if text is not None:
                QGuiApplication.clipboard().setText(text)
                self.w.statusBar().showMessage(tr("msg.copied"), 4000)
        elif action == "delete":
            self.delete_message(entry_id)
        elif action == "branch":
            self.w.view.branchFromRequested.emit(entry_id)
        elif action in ("hide", "unhide"):
            self.set_hidden(entry_id, action == "hide")

    def set_hidden(self, entry_id: str, hidden: bool) -> bool:
        """「不发送」 / 「恢复发送」 (SillyTavern's /hide, /unhide): the message stays shown, marked, and is left out of
        the prompts from the next beat on (``Chat.set_hidden``). True when it changed."""
        chat = self.w.chat
        if chat is None or self.w.busy or self.w.refuse_read_only() or getattr(self.w, "is_demo", False):
            return False
        try:
            changed = bool(chat.set_hidden(entry_id, hidden))
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.w.statusBar().showMessage(show(e), 8000)
            return False
        self.w.session.broadcast(chat.last_changes)  # messages: the transcript shows the mark
        self.w.statusBar().showMessage(tr("msg.hidden" if hidden else "msg.unhidden"), 5000)
        return changed

    def delete_message(self, entry_id: str, ask: Optional[Any] = None) -> bool:
        """「删除」 a message and what follows it on the shown branch (``Chat.delete_message``: the branch stays in
        分支, recoverable). Asks first — ``ask(title, text)`` (default :func:`~..dialogs.dialogs.confirm`, No the
        default answer). True when it was deleted."""
        chat = self.w.chat
        if chat is None or self.w.busy or self.w.refuse_read_only():
            return False
        if getattr(self.w, "is_demo", False):
            self.w.statusBar().showMessage(tr("branch.demo"), 8000)
            return False
        items = list(self.w.transcript.items)
        at = next((i for i in range(len(items) - 1, -1, -1) if str(items[i].get("entry_id", items[i]["id"])) == entry_id), None)
        after = len(items) - at - 1 if at is not None else 0
        text = " ".join(str(items[at].get("text") or "").split())[:120] if at is not None else ""
        from ..dialogs.dialogs import confirm

        if not (ask or confirm)(self.w, tr("app.title"), tr("msg.delete.ask", n=after, text=text)):
            return False
        try:
            chat.delete_message(entry_id)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.w.statusBar().showMessage(show(e), 8000)
            return False
        self.w.after_branch_switch(tr("msg.deleted"))
        self.sync()
        return True

    def edit_saved(self, entry_id: str, text: str) -> None:
        """The in-place editor saved: a reply becomes a new version (:meth:`edit_submitted`), a user message is
        played again on a new branch (the window's ``edit_user_submitted``)."""
        chat = self.w.chat
        if chat is None or not text.strip():
            return
        if getattr(self.w, "is_demo", False):
            self.w.statusBar().showMessage(tr("branch.demo"), 8000)
            return
        try:
            kind = chat.entry_kind(entry_id)
        except KeyError:
            return
        if kind == "assistant":
            self.edit_submitted(entry_id, text)
        elif kind == "user":
            self.w.edit_user_submitted(entry_id, text)

    # -- continue -------------------------------------------------------------------------------------------
    def continue_clicked(self) -> None:
        """「续写」: the model writes on from the last sealed reply, as a beat (Stop works; events as usual)."""
        chat = self.w.chat
        if chat is None or self.w.busy:
            return
        if chat.last_reply_id() is None:
            self.w.statusBar().showMessage(tr("reply.continue.none"), 6000)
            return
        self.w.run_command(lambda: chat.continue_reply(ask=self.w.ask_user, on_event=self.w.on_event))

    # -- impersonate ----------------------------------------------------------------------------------------
    def impersonate_clicked(self) -> Optional[asyncio.Task[Any]]:
        """「代拟」: one model call; its text streams into the input box (replacing what was there), nothing sent."""
        chat = self.w.chat
        if chat is None or self.w.busy or self.impersonating is not None or self.w.refuse_read_only():
            return None
        box = self.w.input
        before = box.toPlainText()
        pieces: list[str] = []
        flush = QTimer(self)
        flush.setInterval(40)

        def show() -> None:
            box.setPlainText("".join(pieces).lstrip())

        flush.timeout.connect(show)

        def on_delta(d: Any) -> None:
            if getattr(d, "kind", "") == "content":
                pieces.append(d.text)
                if not flush.isActive():
                    flush.start()

        async def go() -> None:
            box.setReadOnly(True)
            self.w.statusBar().showMessage(tr("reply.impersonate.running"))
            try:
                text = await chat.impersonate(on_delta)
            except Exception as e:  # a failed call must never take the window down
                flush.stop()
                box.setPlainText(before)
                msg = show(getattr(e, "message", None) or e)
                self.w.statusBar().showMessage(tr("reply.impersonate.failed", error=msg), 12000)
            else:
                flush.stop()
                box.setPlainText(text)
                box.moveCursor(box.textCursor().MoveOperation.End)
                box.setFocus()
                self.w.statusBar().showMessage(tr("reply.impersonate.done"), 8000)
            finally:
                box.setReadOnly(False)
                flush.deleteLater()
                self.impersonating = None
                self.sync()

        self.impersonating = asyncio.ensure_future(go())
        self.sync()
        return self.impersonating

    # -- Author's Note --------------------------------------------------------------------------------------
    def open_note(self) -> None:
        """「作者注…」 for the open chat."""
        self.dialog = open_authors_note(self.w, self.w.chat)


def install_reply_actions(window: Any, chat_menu: Any) -> ReplyActions:
    """Add the reply commands to ``window`` (the main window) and its 对话 menu ``chat_menu``; returns them (kept as
    ``window.reply_actions``)."""
    actions = ReplyActions(window, chat_menu)
    window.reply_actions = actions
    return actions
