"""「作者注」 — the chat's Author's Note editor (issue 17), with the card's Character's Note shown read-only.

The note (``core.prompt.authors_note.AuthorsNote``: text, position, depth, role, every N user messages) is read with
``Chat.authors_note()`` and saved with ``Chat.set_authors_note()`` (kept in the chat's session, per branch);
the card's Character's Note (``Chat.character_note()``, the card's ``extensions.depth_prompt``) belongs to the card
and is only shown. Non-modal (``open()``); the strings live here (prefix ``an.``) and join the one catalog at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.prompt.authors_note import AuthorsNote
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat.facade import Chat

register({
    "an.menu": {"zh": "作者注…", "en": "Author's Note…"},
    "an.title": {"zh": "作者注 · {name}", "en": "Author's Note · {name}"},
    "an.intro": {"zh": "作者注会按下面的位置插进每次发给模型的提示词里（SillyTavern 的 Author's Note）。"
                       "它记在这个对话里；系统提示词不变（缓存照样命中）。",
                 "en": "The Author's Note is placed in every prompt sent to the model at the position below "
                       "(SillyTavern's Author's Note). It is kept in this chat; the system prompt does not change "
                       "(the prompt cache still hits)."},
    "an.text": {"zh": "作者注", "en": "Note"},
    "an.text.placeholder": {"zh": "例如：{{char}}说话简短，多写环境和动作。留空 = 不用作者注。",
                            "en": "e.g. {{char}} speaks briefly; describe the surroundings. Empty = no note."},
    "an.position": {"zh": "位置", "en": "Position"},
    "an.pos.chat": {"zh": "对话中（按深度）", "en": "In chat (at depth)"},
    "an.pos.before": {"zh": "场景之前", "en": "Before scenario"},
    "an.pos.after": {"zh": "场景之后", "en": "After scenario"},
    "an.depth": {"zh": "深度", "en": "Depth"},
    "an.depth.tip": {"zh": "插在倒数第几条消息之前（0 = 最后一条之后）", "en": "Messages from the end (0 = after the last)"},
    "an.role": {"zh": "角色", "en": "Role"},
    "an.interval": {"zh": "插入频率", "en": "Insertion frequency"},
    "an.interval.suffix": {"zh": " 条用户消息一次（0 = 关闭）", "en": " user messages (0 = off)"},
    "an.char.group": {"zh": "角色注（来自角色卡，只读）", "en": "Character's Note (from the card, read-only)"},
    "an.char.none": {"zh": "这张卡没有角色注。", "en": "This card has no Character's Note."},
    "an.char.where": {"zh": "深度 {depth} · {role} · 每一拍都会插入", "en": "Depth {depth} · {role} · in every prompt"},
    "an.char.unused": {"zh": "深度 {depth} · {role} · 写长篇模式不发送角色注（助手直接读角色卡文件）",
                       "en": "Depth {depth} · {role} · not sent in agent mode (the assistant reads the card file itself)"},
    "an.saved": {"zh": "作者注已保存，下一拍生效。", "en": "Author's Note saved; it applies from the next beat."},
    "an.cleared": {"zh": "作者注已清除。", "en": "Author's Note cleared."},
    "an.unchanged": {"zh": "作者注没有改动。", "en": "The Author's Note did not change."},
    "an.line.note": {"zh": "作者注：{where}，每 {n} 条用户消息插入一次 ——「{text}」",
                     "en": "Author's Note: {where}, every {n} user messages — “{text}”"},
    "an.line.off": {"zh": "作者注：已关闭（间隔 0）——「{text}」", "en": "Author's Note: off (interval 0) — “{text}”"},
    "an.line.chat": {"zh": "对话中深度 {depth}（{role}）", "en": "in chat at depth {depth} ({role})"},
    "an.line.char": {"zh": "角色注（卡）：深度 {depth}（{role}）——「{text}」",
                     "en": "Character's Note (card): depth {depth} ({role}) — “{text}”"},
})


def _short(text: str, n: int = 40) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[:n] + "…"


def notes_line(chat: "Chat") -> str:
    """One line for the prompt inspector: the chat's Author's Note and the card's Character's Note, where each goes
    ("" when the chat has neither)."""
    out = []
    note = chat.authors_note()
    if note.text.strip():
        if note.interval == 0:
            out.append(tr("an.line.off", text=_short(note.text)))
        else:
            where = tr("an.line.chat", depth=note.depth, role=note.role) if note.position == "chat" else tr(f"an.pos.{note.position}")
            out.append(tr("an.line.note", where=where, n=note.interval, text=_short(note.text)))
    cn = chat.character_note()
    if cn is not None and chat.mode != "agent":  # every role-play prompt carries it (core.prompt.authors_note)
        out.append(tr("an.line.char", depth=cn.depth, role=cn.role, text=_short(cn.prompt)))
    return "\n".join(out)

_POSITIONS = ("chat", "before", "after")
_ROLES = ("system", "user", "assistant")


class AuthorsNoteDialog(QDialog):
    """The editor for ``chat``'s Author's Note. ``saved(str)`` carries the line to show after a save (saved /
    cleared / unchanged). The Character's Note box is read-only."""

    saved = Signal(str)

    def __init__(self, chat: "Chat", parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("authorsNoteDialog")
        self.chat = chat
        self.setWindowTitle(tr("an.title", name=chat.card.name))
        self.resize(560, 520)
        lay = QVBoxLayout(self)
        intro = QLabel(tr("an.intro"))
        intro.setWordWrap(True)
        set_role(intro, "muted")
        lay.addWidget(intro)
        note = chat.authors_note()
        form = QFormLayout()
        self.text = QPlainTextEdit(note.text)
        self.text.setObjectName("authorsNoteText")
        self.text.setPlaceholderText(tr("an.text.placeholder"))
        form.addRow(tr("an.text"), self.text)
        self.position = QComboBox()
        self.position.setObjectName("authorsNotePosition")
        for p in _POSITIONS:
            self.position.addItem(tr(f"an.pos.{p}"), p)
        self.position.setCurrentIndex(_POSITIONS.index(note.position))
        form.addRow(tr("an.position"), self.position)
        self.depth = QSpinBox()
        self.depth.setObjectName("authorsNoteDepth")
        self.depth.setRange(0, 999)
        self.depth.setValue(note.depth)
        self.depth.setToolTip(tr("an.depth.tip"))
        form.addRow(tr("an.depth"), self.depth)
        self.role = QComboBox()
        self.role.setObjectName("authorsNoteRole")
        for r in _ROLES:
            self.role.addItem(r, r)
        self.role.setCurrentIndex(_ROLES.index(note.role))
        form.addRow(tr("an.role"), self.role)
        self.interval = QSpinBox()
        self.interval.setObjectName("authorsNoteInterval")
        self.interval.setRange(0, 999)
        self.interval.setValue(note.interval)
        self.interval.setSuffix(tr("an.interval.suffix"))
        form.addRow(tr("an.interval"), self.interval)
        lay.addLayout(form, 1)
        self.position.currentIndexChanged.connect(self._sync)
        self._sync()

        group = QGroupBox(tr("an.char.group"))
        gl = QVBoxLayout(group)
        cn = chat.character_note()
        self.char_note = QPlainTextEdit(cn.prompt if cn is not None else "")
        self.char_note.setObjectName("characterNoteText")
        self.char_note.setReadOnly(True)
        self.char_note.setMaximumHeight(110)
        # every role-play prompt carries the card's depth_prompt, agent mode none (core.prompt.authors_note)
        where = "an.char.where" if chat.mode != "agent" else "an.char.unused"
        self.char_where = QLabel(tr(where, depth=cn.depth, role=cn.role) if cn is not None else tr("an.char.none"))
        self.char_where.setWordWrap(True)
        set_role(self.char_where, "small")
        gl.addWidget(self.char_where)
        gl.addWidget(self.char_note)
        self.char_note.setVisible(cn is not None)
        lay.addWidget(group)

        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        lay.addWidget(box)

    def _sync(self) -> None:
        in_chat = self.position.currentData() == "chat"
        self.depth.setEnabled(in_chat)
        self.role.setEnabled(in_chat)

    def note(self) -> AuthorsNote:
        """The note as the form stands."""
        return AuthorsNote(text=self.text.toPlainText().strip(), position=self.position.currentData(),
                           depth=self.depth.value(), role=self.role.currentData(), interval=self.interval.value())

    def accept(self) -> None:
        """Save the note on the chat (``Chat.set_authors_note``) and close; a refusal (a beat running, the disk)
        is shown and the dialog stays open."""
        note = self.note()
        try:
            changed = self.chat.set_authors_note(note)
        except (RuntimeError, OSError, ValueError) as e:
            QMessageBox.warning(self, self.windowTitle(), show(e))
            return
        super().accept()
        self.saved.emit(tr("an.unchanged") if not changed else tr("an.saved") if note.text else tr("an.cleared"))


def open_authors_note(window: QWidget, chat: Optional["Chat"]) -> Optional[AuthorsNoteDialog]:
    """Open the editor for ``chat`` (None: nothing) on ``window``; its save line goes to the window's status bar."""
    if chat is None:
        return None
    dlg = AuthorsNoteDialog(chat, window)
    status = getattr(window, "statusBar", None)
    if status is not None:
        dlg.saved.connect(lambda line: window.statusBar().showMessage(line, 6000))
    dlg.open()
    return dlg
