"""The ledger (账本) as a form (issue 17): time and place, a characters table (name, affinity, status, where,
notes), inventory and plot threads as editable lists, flags as a key/value table. The JSON editor in the ledger
pane stays as the advanced view; both produce a :class:`core.ledger.state.WorldState` that the pane hands to
``Chat.edit_state`` (a new user snapshot; seed 002: 用户在界面上手改账本，也是追加一条新的 rp-state).

Rules checked before saving (the same the scribe's merge keeps, ``core/ledger/state.py``): a character needs a
name and names are unique; affinity is an integer -100..100 (``CharacterState.affinity``); flag keys are unique and
non-empty; empty list lines are dropped. The roster is not edited here: it is kept from the state being edited and
``register_roster`` adds new names when the pane saves.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.ledger.state import CharacterState, WorldState
from ..infra.i18n import register, tr
from ..infra.theme import set_role

register({
    "lform.add": {"zh": "添加", "en": "Add"},
    "lform.remove": {"zh": "删除所选", "en": "Remove selected"},
    "lform.inventory.new": {"zh": "新物品", "en": "New item"},
    "lform.thread.new": {"zh": "新剧情线", "en": "New plot thread"},
    "lform.flag.key": {"zh": "标记", "en": "Flag"},
    "lform.flag.value": {"zh": "值", "en": "Value"},
    "lform.char.new": {"zh": "新人物", "en": "New character"},
    "lform.advanced": {"zh": "高级（JSON）", "en": "Advanced (JSON)"},
    "lform.form": {"zh": "表单", "en": "Form"},
    "lform.err.name": {"zh": "第 {row} 行人物没有名字", "en": "Character row {row} has no name"},
    "lform.err.dup": {"zh": "人物「{name}」出现了两次", "en": "The character “{name}” appears twice"},
    "lform.err.flag": {"zh": "第 {row} 行标记没有名字", "en": "Flag row {row} has no name"},
    "lform.err.flagdup": {"zh": "标记「{name}」出现了两次", "en": "The flag “{name}” appears twice"},
    "lform.hint": {"zh": "双击单元格修改；好感为 -100 到 100 的整数。保存后追加一份你写的快照，下一拍起生效。",
                   "en": "Double-click a cell to edit; affinity is an integer from -100 to 100. Saving appends your "
                         "snapshot; it applies from the next beat."},
})

CHAR_COLS = ("ledger.col.name", "ledger.col.affinity", "ledger.col.status", "ledger.col.at", "ledger.col.notes")


class LedgerFormError(ValueError):
    """The form holds something the ledger cannot take; ``str(e)`` is the message in the current language."""


class _ListEditor(QWidget):
    """An editable list of strings with 添加 / 删除所选 (inventory, plot threads)."""

    def __init__(self, new_key: str, name: str, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self._new_key = new_key
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName(name)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.SelectedClicked)
        self.list.setMaximumHeight(120)
        lay.addWidget(self.list)
        row = QHBoxLayout()
        self.add_btn = QPushButton(tr("lform.add"))
        self.add_btn.clicked.connect(self.add)
        self.remove_btn = QPushButton(tr("lform.remove"))
        self.remove_btn.clicked.connect(self.remove)
        row.addWidget(self.add_btn)
        row.addWidget(self.remove_btn)
        row.addStretch(1)
        lay.addLayout(row)

    def set_values(self, values: list[str]) -> None:
        self.list.clear()
        for v in values:
            self._append(v)

    def _append(self, text: str) -> QListWidgetItem:
        it = QListWidgetItem(text)
        it.setFlags(it.flags() | Qt.ItemFlag.ItemIsEditable)
        self.list.addItem(it)
        return it

    def add(self) -> None:
        """A new line, selected and opened for editing."""
        it = self._append(tr(self._new_key))
        self.list.setCurrentItem(it)
        self.list.editItem(it)

    def remove(self) -> None:
        for it in self.list.selectedItems():
            self.list.takeItem(self.list.row(it))

    def values(self) -> list[str]:
        """The non-empty lines, trimmed, in order."""
        out = [self.list.item(i).text().strip() for i in range(self.list.count())]
        return [v for v in out if v]

    def retranslate(self) -> None:
        self.add_btn.setText(tr("lform.add"))
        self.remove_btn.setText(tr("lform.remove"))


class LedgerForm(QScrollArea):
    """The form. :meth:`set_state` fills it; :meth:`state` reads it back (raises :class:`LedgerFormError`)."""

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("ledgerForm")
        self.setWidgetResizable(True)
        self._base = WorldState()
        body = QWidget()
        lay = QVBoxLayout(body)
        form = QFormLayout()
        self.time_edit = QLineEdit()
        self.time_edit.setObjectName("ledgerTime")
        self.location_edit = QLineEdit()
        self.location_edit.setObjectName("ledgerLocation")
        self._time_label, self._place_label = QLabel(), QLabel()
        form.addRow(self._time_label, self.time_edit)
        form.addRow(self._place_label, self.location_edit)
        lay.addLayout(form)

        self._chars_label = QLabel()
        set_role(self._chars_label, "title")
        lay.addWidget(self._chars_label)
        self.chars = QTableWidget(0, len(CHAR_COLS))
        self.chars.setObjectName("ledgerCharacters")
        self.chars.verticalHeader().setVisible(False)
        heads = self.chars.horizontalHeader()  # every column in view: no sideways scrolling in a narrow pane
        heads.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        heads.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.chars.setMinimumHeight(140)
        lay.addWidget(self.chars)
        row = QHBoxLayout()
        self.char_add = QPushButton()
        self.char_add.clicked.connect(self.add_character)
        self.char_remove = QPushButton()
        self.char_remove.clicked.connect(lambda: self._remove_rows(self.chars))
        row.addWidget(self.char_add)
        row.addWidget(self.char_remove)
        row.addStretch(1)
        lay.addLayout(row)

        self._items_label = QLabel()
        set_role(self._items_label, "title")
        lay.addWidget(self._items_label)
        self.inventory = _ListEditor("lform.inventory.new", "ledgerInventory")
        lay.addWidget(self.inventory)

        self._flags_label = QLabel()
        set_role(self._flags_label, "title")
        lay.addWidget(self._flags_label)
        self.flags = QTableWidget(0, 2)
        self.flags.setObjectName("ledgerFlags")
        self.flags.verticalHeader().setVisible(False)
        self.flags.horizontalHeader().setStretchLastSection(True)
        self.flags.setMaximumHeight(130)
        lay.addWidget(self.flags)
        row = QHBoxLayout()
        self.flag_add = QPushButton()
        self.flag_add.clicked.connect(self.add_flag)
        self.flag_remove = QPushButton()
        self.flag_remove.clicked.connect(lambda: self._remove_rows(self.flags))
        row.addWidget(self.flag_add)
        row.addWidget(self.flag_remove)
        row.addStretch(1)
        lay.addLayout(row)

        self._threads_label = QLabel()
        set_role(self._threads_label, "title")
        lay.addWidget(self._threads_label)
        self.threads = _ListEditor("lform.thread.new", "ledgerThreads")
        lay.addWidget(self.threads)
        self._hint = QLabel()
        self._hint.setWordWrap(True)
        set_role(self._hint, "small")
        lay.addWidget(self._hint)
        lay.addStretch(1)
        self.setWidget(body)
        self.retranslate()

    # -- filling and reading ----------------------------------------------------------------------------------
    def set_state(self, state: WorldState) -> None:
        """Show ``state`` in the form (its roster is kept for :meth:`state`)."""
        self._base = state
        self.time_edit.setText(state.time)
        self.location_edit.setText(state.location)
        self.chars.setRowCount(0)
        for name, c in state.characters.items():
            self._add_char_row(name, c)
        self.inventory.set_values(list(state.inventory))
        self.flags.setRowCount(0)
        for k, v in state.flags.items():
            self._add_flag_row(k, v)
        self.threads.set_values(list(state.plot_threads))

    def _add_char_row(self, name: str, c: CharacterState) -> int:
        r = self.chars.rowCount()
        self.chars.insertRow(r)
        self.chars.setItem(r, 0, QTableWidgetItem(name))
        spin = QSpinBox()
        spin.setRange(-100, 100)
        spin.setValue(max(-100, min(100, int(c.affinity))))
        self.chars.setCellWidget(r, 1, spin)
        self.chars.setItem(r, 2, QTableWidgetItem(c.status))
        self.chars.setItem(r, 3, QTableWidgetItem(c.at or ""))
        self.chars.setItem(r, 4, QTableWidgetItem(c.notes))
        return r

    def _add_flag_row(self, key: str, value: str) -> int:
        r = self.flags.rowCount()
        self.flags.insertRow(r)
        self.flags.setItem(r, 0, QTableWidgetItem(key))
        self.flags.setItem(r, 1, QTableWidgetItem(value))
        return r

    def add_character(self) -> None:
        """A new character row (name selected for editing)."""
        r = self._add_char_row(tr("lform.char.new"), CharacterState())
        self.chars.setCurrentCell(r, 0)
        self.chars.editItem(self.chars.item(r, 0))

    def add_flag(self) -> None:
        r = self._add_flag_row("", "")
        self.flags.setCurrentCell(r, 0)
        self.flags.editItem(self.flags.item(r, 0))

    @staticmethod
    def _remove_rows(table: QTableWidget) -> None:
        rows = sorted({i.row() for i in table.selectedIndexes()} | ({table.currentRow()} if table.currentRow() >= 0 else set()),
                      reverse=True)
        for r in rows:
            table.removeRow(r)

    @staticmethod
    def _cell(table: QTableWidget, r: int, c: int) -> str:
        it = table.item(r, c)
        return it.text().strip() if it is not None else ""

    def state(self) -> WorldState:
        """The form as a WorldState (roster kept from :meth:`set_state`). Raises LedgerFormError (message in the
        current language) for a nameless or repeated character or flag."""
        chars: dict[str, CharacterState] = {}
        for r in range(self.chars.rowCount()):
            name = self._cell(self.chars, r, 0)
            if not name:
                raise LedgerFormError(tr("lform.err.name", row=r + 1))
            if name in chars:
                raise LedgerFormError(tr("lform.err.dup", name=name))
            spin = self.chars.cellWidget(r, 1)
            at = self._cell(self.chars, r, 3)
            chars[name] = CharacterState(affinity=spin.value() if isinstance(spin, QSpinBox) else 0,
                                         status=self._cell(self.chars, r, 2), notes=self._cell(self.chars, r, 4),
                                         at=at or None)
        flags: dict[str, str] = {}
        for r in range(self.flags.rowCount()):
            key, value = self._cell(self.flags, r, 0), self._cell(self.flags, r, 1)
            if not key and not value:
                continue
            if not key:
                raise LedgerFormError(tr("lform.err.flag", row=r + 1))
            if key in flags:
                raise LedgerFormError(tr("lform.err.flagdup", name=key))
            flags[key] = value
        roster = self._base.roster.model_copy(deep=True) if self._base.roster is not None else None
        return WorldState(time=self.time_edit.text().strip(), location=self.location_edit.text().strip(),
                          characters=chars, inventory=self.inventory.values(), flags=flags,
                          plot_threads=self.threads.values(), roster=roster)

    def retranslate(self) -> None:
        """Every text again in the current language."""
        self._time_label.setText(tr("ledger.time"))
        self._place_label.setText(tr("ledger.place"))
        self._chars_label.setText(tr("ledger.characters"))
        self._items_label.setText(tr("ledger.items"))
        self._flags_label.setText(tr("ledger.flags"))
        self._threads_label.setText(tr("ledger.threads"))
        self.chars.setHorizontalHeaderLabels([tr(k) for k in CHAR_COLS])
        self.flags.setHorizontalHeaderLabels([tr("lform.flag.key"), tr("lform.flag.value")])
        for b in (self.char_add, self.flag_add):
            b.setText(tr("lform.add"))
        for b in (self.char_remove, self.flag_remove):
            b.setText(tr("lform.remove"))
        self.inventory.retranslate()
        self.threads.retranslate()
        self._hint.setText(tr("lform.hint"))
