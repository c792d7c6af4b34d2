"""「回复即正文」 (issue 30 §5): for a model that only talks, agent chats get a row under the input — a switch and a
chapter name (an existing chapter or a new file name) — and while it is on, the next reply *is* that chapter's text
(``Chat.send(chapter=…)``: no tools, the answer written to the file before the turn's checkpoint). The choice lives
on the session (``Session.reply_chapter``); the row shows only for agent chats and refreshes its chapter list when
the files change (change notices)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QWidget

from ...core.story.links import chapter_files
from ..infra.i18n import register, tr
from ..infra.session import Session

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "rc.switch": {"zh": "回复即正文，写入", "en": "The reply is the chapter, written to"},
    "rc.tip": {"zh": "给只会说话、不会调用工具的小模型用：这一轮不提供工具，模型的回复原样写进这个章节文件（已有内容被替换），"
                     "然后照常建检查点、记账。",
               "en": "For small models that only talk: no tools this turn; the reply is written to this chapter file as "
                     "it is (replacing what it held), then checkpointed and scribed as usual."},
    "rc.placeholder": {"zh": "章节文件名，如 003-雨夜.md", "en": "chapter file, e.g. 003-rain.md"},
})


class ReplyChapterRow(QWidget):
    """The switch and the chapter box (module doc)."""

    def __init__(self, session: Session, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName("replyChapterRow")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 0, 8, 4)
        self.switch = QCheckBox(tr("rc.switch"))
        self.switch.setObjectName("replyChapterSwitch")
        self.switch.setToolTip(tr("rc.tip"))
        self.box = QComboBox()
        self.box.setObjectName("replyChapterBox")
        self.box.setEditable(True)
        self.box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line = self.box.lineEdit()
        if line is not None:
            line.setPlaceholderText(tr("rc.placeholder"))
        self.box.setMinimumWidth(220)
        lay.addWidget(self.switch)
        lay.addWidget(self.box, 1)
        lay.addStretch(1)
        self.switch.toggled.connect(lambda _on: self._sync())
        self.box.currentTextChanged.connect(lambda _t: self._sync())
        session.chatShown.connect(self.follow)
        session.changed.connect(lambda c: self.fill() if c.files else None)
        self.follow(session.chat)

    def _sync(self) -> None:
        name = self.box.currentText().strip()
        self.session.reply_chapter = name if self.switch.isChecked() and name else None

    def follow(self, chat: Optional["Chat"]) -> None:
        """Show the row for an agent chat (switched off), hide it otherwise."""
        agent = chat is not None and chat.mode == "agent"
        self.setVisible(agent)
        self.switch.setChecked(False)
        self.session.reply_chapter = None
        if agent:
            self.fill()

    def fill(self) -> None:
        """The chapter files of the open chat in the box (the typed name kept)."""
        chat = self.session.chat
        keep = self.box.currentText()
        self.box.blockSignals(True)
        self.box.clear()
        if chat is not None and chat.mode == "agent":
            for name in chapter_files(chat.story.story_dir):  # names only (one directory scan)
                self.box.addItem(name)
        self.box.setEditText(keep)
        self.box.blockSignals(False)
        self._sync()


def install(win: Any) -> ReplyChapterRow:
    """Add the row under the window's input (the input's column)."""
    row = ReplyChapterRow(win.session, win)
    win.input.parentWidget().layout().addWidget(row)
    return row
