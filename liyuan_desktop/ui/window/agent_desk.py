"""The main window's side of agent mode as a writer expects it (issue 17): the hooks ui/window/main_window.py calls.

* :func:`update_undo` — 「撤销本轮」 enabled or not, and when not, why: the reason is the button's tooltip and status
  tip, and hovering the disabled button puts it in the status bar (a disabled button cannot be clicked to ask).
  An agent chat undoes a turn in its checkpoint timeline (files and conversation together), so there the button is
  always off and says where to go.
* :func:`install` — the chapter editor's distraction-free mode hides the card list, the conversation and the side
  tabs (and brings them back, at their old sizes, when it ends).
* :func:`show_agent_desk` — an agent chat opens on 章节 (its chapters), not on the empty 稿纸.
* :func:`after_restore` — after a checkpoint restore the conversation (the centre pane, blank when the restore took
  the conversation back before the first turn) carries a banner saying what was restored and how to undo it; the
  banner goes back to what it was when the restore is undone or the next beat starts.

The window keeps its widgets; this module only reads ``chat.mode`` / ``chat.last_user_text()`` (public ``Chat``
queries) and toggles visibility.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QEvent, QObject

from ..infra.i18n import register, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "desk.undo.tip": {"zh": "撤销本轮：分支回到你最后一句话之前（什么都不删，可在「分支」里找回）",
                      "en": "Undo turn: the branch goes back to before your last message (nothing is deleted)"},
    "desk.undo.nochat": {"zh": "先打开一个对话。", "en": "Open a chat first."},
    "desk.undo.busy": {"zh": "正在生成：停下或等这一拍写完再撤销。", "en": "A beat is running: stop it or wait before undoing."},
    "desk.undo.agent": {"zh": "写长篇对话不在这里撤销：到「检查点」选这一轮，点「正文和对话一起回到这一轮之前」（正文文件也一起回去）。",
                        "en": "Long-form chats undo a turn in Checkpoints: pick the turn and choose “Files and conversation back to before this turn”."},
    "desk.undo.nothing": {"zh": "这条分支上还没有你说的话，没有可撤销的一轮。", "en": "Nothing to undo: you have not said anything on this branch yet."},
})


def undo_reason(chat: Optional[Chat], busy: bool) -> Optional[str]:
    """Why 撤销本轮 cannot be used now, or None when it can (no chat, a beat running, an agent chat, no user
    message on the branch)."""
    if chat is None:
        return tr("desk.undo.nochat")
    if busy:
        return tr("desk.undo.busy")
    if chat.mode == "agent":
        return tr("desk.undo.agent")
    if chat.last_user_text() is None:
        return tr("desk.undo.nothing")
    return None


def update_undo(window: Any, busy: Optional[bool] = None) -> None:
    """Enable / disable 撤销本轮 — the button (``window.undo_btn``) and the menu item 对话 → 撤销本轮
    (``window.undo_action``, once the menu exists) from the one :func:`undo_reason`, so they never disagree — and
    set their tooltip and status tip to the reason (or what it does)."""
    reason = undo_reason(getattr(window, "chat", None), window.busy if busy is None else busy)
    tip = reason or tr("desk.undo.tip")
    for w in (window.undo_btn, getattr(window, "undo_action", None)):
        if w is not None:
            w.setEnabled(reason is None)
            w.setToolTip(tip)
            w.setStatusTip(tip)


class _HoverReason(QObject):
    """Hovering the disabled 撤销本轮 shows its reason in the status bar."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt API
        if ev.type() == QEvent.Type.Enter and not obj.isEnabled():
            self.window.statusBar().showMessage(obj.statusTip(), 8000)
        return False


def _focus(window: Any, on: bool) -> None:
    room = getattr(window, "novel_room", None)
    if room is not None and room.active:  # the manuscript layout (ui/writing/novel_room.py) hides its docks
        room.focus(on)
        return
    split = window.split
    others = [split.widget(0), split.widget(1)]
    if on:
        window.desk.sizes = split.sizes()
        for w in others:
            w.hide()
        window.tabs.tabBar().hide()
    else:
        for w in others:
            w.show()
        window.tabs.tabBar().show()
        sizes = window.desk.sizes
        if sizes:
            split.setSizes(sizes)


def _base_banner(window: Any) -> Optional[str]:
    """The banner the conversation has without a restore: the replay notice for the demo or a replay model."""
    chat = getattr(window, "chat", None)
    replay = chat is not None and (getattr(window, "is_demo", False) or chat.model.is_replay)
    return tr("replay.banner") if replay else None


def after_restore(window: Any) -> None:
    """Show what the last restore did in the conversation's banner (or put the usual banner back)."""
    summary = window.timeline_pane.restore_summary()
    window.view.set_banner(summary or _base_banner(window))
    window.desk.restore_banner = bool(summary)


def _busy_changed(window: Any, busy: bool) -> None:
    if busy and window.desk.restore_banner:
        window.desk.restore_banner = False
        window.view.set_banner(_base_banner(window))


@dataclass
class DeskState:
    """What the agent desk remembers of one window (``window.desk``, set by :func:`install`): ``sizes``, the
    splitter's sizes (pixels, left to right) before the editor's distraction-free mode hid the other panes (None when
    it never did); ``restore_banner``, whether the conversation's banner shows a restore summary
    (:func:`after_restore`), cleared with the banner when the next beat starts."""

    sizes: Optional[list[int]] = None
    restore_banner: bool = False


def install(window: Any) -> None:
    """Connect the window: the hover reason on 撤销本轮, the editor's distraction-free mode, the first tooltip;
    ``window.desk`` holds this module's state (:class:`DeskState`)."""
    window.desk = DeskState()
    window.undo_btn.installEventFilter(_HoverReason(window))
    window.session.busyChanged.connect(lambda busy: _busy_changed(window, busy))
    window.chapter_pane.editor.focusModeChanged.connect(lambda on: _focus(window, on))
    update_undo(window, False)


def show_agent_desk(window: Any, agent: bool) -> None:
    """After a chat opened: an agent chat shows 章节; any other chat leaves a hidden agent tab for 稿纸."""
    editor = window.chapter_pane.editor
    if editor.focus_mode:
        editor.set_focus_mode(False)
    if agent:
        window.tabs.setCurrentWidget(window.chapter_pane)
    elif window.tabs.currentWidget() in (window.chapter_pane, window.timeline_pane):
        window.tabs.setCurrentWidget(window.draft_pane)
