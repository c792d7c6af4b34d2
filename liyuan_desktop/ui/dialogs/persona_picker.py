"""本对话的角色 (issue 17): choose who the user plays in the open chat, from the persona library
(``core/cards/personas.py``, ``<home>/personas.json``), add a persona, and mark one as the default for new chats.

The choice goes through ``Chat.set_persona`` and takes effect from the next beat; the chat's earlier messages keep
the name they were written with. New chats take the library's default persona, else the persona of the settings
dialog (我的角色), else the card's suggestion (core/chat/build.py :func:`persona_for_new_chat`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.personas import Persona, PersonaStore, load_personas, save_personas
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "persona.menu": {"zh": "本对话的角色…", "en": "Persona for this chat…"},
    "persona.title": {"zh": "本对话的角色", "en": "Persona for this chat"},
    "persona.pick": {"zh": "扮演", "en": "Play as"},
    "persona.created": {"zh": "创建时的角色：{name}", "en": "As created: {name}"},
    "persona.default.mark": {"zh": "（默认）", "en": " (default)"},
    "persona.description": {"zh": "描述", "en": "Description"},
    "persona.make_default": {"zh": "新对话默认用这个角色", "en": "New chats start with this persona"},
    "persona.new": {"zh": "新建角色", "en": "New persona"},
    "persona.new.name": {"zh": "名字", "en": "Name"},
    "persona.new.description": {"zh": "描述", "en": "Description"},
    "persona.new.description.hint": {"zh": "{{persona}} 展开成这段描述；可以用 {{char}}、{{user}}",
                                     "en": "{{persona}} expands to this; {{char}} and {{user}} work in it"},
    "persona.add": {"zh": "添加", "en": "Add"},
    "persona.note": {"zh": "从下一拍起生效；之前的消息保留原来的名字。",
                     "en": "Applies from the next beat; earlier messages keep the name they were written with."},
    "persona.err": {"zh": "没能换角色：{error}", "en": "Could not change the persona: {error}"},
    "persona.changed.status": {"zh": "这个对话现在扮演「{name}」，下一拍起生效", "en": "This chat now plays “{name}”, from the next beat"},
    "persona.store.warning": {"zh": "人设文件有问题：{warning}", "en": "The persona file has a problem: {warning}"},
})


class PersonaDialog(QDialog):
    """Pick the open chat's persona. ``personaChanged(str)`` (the user's name now) after a change was applied."""

    personaChanged = Signal(str)

    def __init__(self, chat: Chat, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("personaDialog")
        self.setWindowTitle(tr("persona.title"))
        self.chat = chat
        self.resize(520, 460)
        try:
            self.store = load_personas()
        except OSError as e:
            self.store = PersonaStore(load_warning=str(e))
        info = chat.persona_info()
        self._initial = info["id"]
        self._created_name = info["name"] if info["id"] is None else ""
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.combo = QComboBox()
        self.combo.setObjectName("personaCombo")
        # issue 26 §3: a long persona list is searched by typing (any part of the name), not scrolled
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        completer = self.combo.completer()
        if completer is not None:
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        form.addRow(tr("persona.pick"), self.combo)
        self.description = QPlainTextEdit()
        self.description.setReadOnly(True)
        self.description.setMaximumHeight(110)
        form.addRow(tr("persona.description"), self.description)
        lay.addLayout(form)
        self.default_check = QCheckBox(tr("persona.make_default"))
        self.default_check.setObjectName("personaDefault")
        lay.addWidget(self.default_check)
        box = QGroupBox(tr("persona.new"))
        bl = QFormLayout(box)
        self.new_name = QLineEdit()
        self.new_name.setObjectName("personaNewName")
        self.new_desc = QPlainTextEdit()
        self.new_desc.setObjectName("personaNewDescription")
        self.new_desc.setMaximumHeight(80)
        self.new_desc.setPlaceholderText(tr("persona.new.description.hint"))
        self.add_btn = QPushButton(tr("persona.add"))
        self.add_btn.clicked.connect(self.add_persona)
        bl.addRow(tr("persona.new.name"), self.new_name)
        bl.addRow(tr("persona.new.description"), self.new_desc)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.add_btn)
        bl.addRow(row)
        lay.addWidget(box)
        note = QLabel(tr("persona.note"))
        note.setWordWrap(True)
        set_role(note, "muted")
        lay.addWidget(note)
        if self.store.load_warning:
            warn = QLabel(tr("persona.store.warning", warning=self.store.load_warning))
            warn.setWordWrap(True)
            set_role(warn, "warn")
            lay.addWidget(warn)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.apply)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.combo.currentIndexChanged.connect(self._picked)
        self._fill(self._initial)

    def _fill(self, select: Optional[str]) -> None:
        self.combo.blockSignals(True)
        self.combo.clear()
        info = self.chat.persona_info()
        created = self._created_name or info["name"]
        self.combo.addItem(tr("persona.created", name=created), None)
        for p in self.store.personas:
            mark = tr("persona.default.mark") if p.id == self.store.default else ""
            self.combo.addItem(p.name + mark, p.id)
        idx = self.combo.findData(select) if select is not None else 0
        self.combo.setCurrentIndex(max(idx, 0))
        self.combo.blockSignals(False)
        self._picked()

    def _picked(self, _i: int = 0) -> None:
        pid = self.combo.currentData()
        p = self.store.get(pid) if pid else None
        if p is not None:
            self.description.setPlainText(p.description)
        elif self._initial is None:
            self.description.setPlainText(self.chat.persona_info()["description"])
        else:
            self.description.setPlainText("")
        self.default_check.setEnabled(p is not None)
        self.default_check.setChecked(p is not None and p.id == self.store.default)

    def choose(self, persona_id: Optional[str]) -> None:
        """Select ``persona_id`` in the list (None = the persona the chat was created with)."""
        self.combo.setCurrentIndex(max(self.combo.findData(persona_id) if persona_id else 0, 0))

    def add_persona(self) -> Optional[Persona]:
        """Add the persona typed under 新建角色 to the library (saved now) and select it."""
        name = self.new_name.text().strip()
        if not name:
            self.new_name.setFocus()
            return None
        try:
            p = self.store.add(name, self.new_desc.toPlainText())
            save_personas(self.store)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, self.windowTitle(), tr("persona.err", error=show(e)))
            return None
        self.new_name.clear()
        self.new_desc.clear()
        self._fill(p.id)
        return p

    def apply(self) -> bool:
        """Apply the choice (and the default mark); closes the dialog on success."""
        pid = self.combo.currentData()
        try:
            if pid and self.default_check.isChecked() != (self.store.default == pid):
                self.store.set_default(pid if self.default_check.isChecked() else None)
                save_personas(self.store)
            name = self.chat.set_persona(pid)
        except (OSError, KeyError, RuntimeError, ValueError) as e:
            QMessageBox.warning(self, self.windowTitle(), tr("persona.err", error=show(e)))
            return False
        self.accept()
        if pid != self._initial:
            self.personaChanged.emit(name)
        return True


def open_persona_dialog(win: Any) -> Optional[PersonaDialog]:
    """The main window's 本对话的角色…: opens the dialog for the open chat (None without a chat or in the demo)."""
    chat = getattr(win, "chat", None)
    if chat is None or getattr(win, "is_demo", False):
        return None
    dlg = PersonaDialog(chat, win)

    def changed(name: str) -> None:
        win.view.set_user_label(name)
        win.statusBar().showMessage(tr("persona.changed.status", name=name), 8000)

    dlg.personaChanged.connect(changed)
    dlg.open()
    win.persona_dialog = dlg
    return dlg
