"""「这一章的上下文记录」 (issue 28): from a chapter in 章节, one click opens the record of the agent turn that last
wrote it — every model call as sent, the state block with the chapter summaries, codex entries, outline and threads
it carried (the window's 查看提示词 inspector, ``MainWindow.inspect_entry``). The turn is found by the engine
(``Chat.chapter_turn``: the checkpoints of the shown branch, renames followed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtGui import QAction

from ..infra.i18n import register, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "chctx.action": {"zh": "这一章的上下文记录…", "en": "This chapter's context record…"},
    "chctx.none": {"zh": "「{file}」不是这个分支上 agent 写的（导入的或手写的），没有上下文记录。",
                   "en": "“{file}” was not written by the agent on this branch (imported or written by hand): no "
                         "context record."},
})


def open_record(window: Any, chat: Optional["Chat"], file: Optional[str]) -> Any:
    """Open the inspector on the turn that last wrote ``file``; said in the status bar when there is none.
    Returns the inspector dialog or None."""
    if chat is None or not file:
        return None
    turn = chat.chapter_turn(file)
    if turn is None:
        window.statusBar().showMessage(tr("chctx.none", file=file), 8000)
        return None
    return window.inspect_entry(turn)


def install(window: Any, panes: Any) -> QAction:
    """Add the action to the 章节 pane's context menu (``window.chapter_pane.list``)."""
    cp = window.chapter_pane
    act = QAction(tr("chctx.action"), cp.list)
    act.setObjectName("chapterContextAction")
    act.triggered.connect(lambda _=False: open_record(window, panes.chat, cp.selected()))
    cp.list.addAction(act)
    return act
