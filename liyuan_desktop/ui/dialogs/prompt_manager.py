"""The 提示词管理 tab of the 预设 dialog (issue 26 §2): SillyTavern's Prompt Manager over one library preset.

The list shows the preset's prompts in order (``core.prompt.presets.manager.PromptManager.rows``), one row each:
on/off check box, name, role, position (relative, or in-chat @depth), tokens. Markers (chat history, world info
before/after, the card's description…) are shown greyed with ◆: Liyuan fills them, their content is not edited.
Rows are reordered by dragging (internal move) or with ↑/↓; the side editor changes the selected prompt's name,
role, position (depth, order) and content, where SillyTavern allows it (the row's ``can_edit`` / ``can_edit_text``).
Custom prompts are added at the top (as SillyTavern does) and deleted after a question (default No). 保存 writes the
preset into the library; 另存为… under a new name; 导出… writes SillyTavern JSON (``PromptManager.export``: fields not
edited stay as they were).

Token counts: the rows are painted at once with each text's own count; when a chat is open its counts
(``Chat.preset_prompt_rows``: markers filled for that chat, macros expanded, the branch's history) are computed on a
worker (``ui/infra/tasks.py`` ``LatestWins``) on a copy of the preset and painted when they arrive.

The widget never touches a chat: ``saved(name)`` tells its owner (the presets dialog) that the library preset
``name`` changed, and the owner re-reads it into the chat that uses it (``Chat.set_preset``, broadcast on the
session)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QDropEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.prompt.presets.manager import MAX_DEPTH, PromptManager, PromptRow
from ...core.prompt.presets.model import PresetError
from ..infra.i18n import register, show, tr
from ..infra.tasks import LatestWins

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "pm.tab": {"zh": "提示词管理", "en": "Prompt Manager"},
    "pm.col.name": {"zh": "名称", "en": "Name"},
    "pm.col.role": {"zh": "角色", "en": "Role"},
    "pm.col.position": {"zh": "位置", "en": "Position"},
    "pm.col.tokens": {"zh": "词元", "en": "Tokens"},
    "pm.relative": {"zh": "相对", "en": "relative"},
    "pm.in_chat": {"zh": "对话中 @{depth}", "en": "in-chat @{depth}"},
    "pm.pos.relative": {"zh": "相对（按列表顺序）", "en": "Relative (list order)"},
    "pm.pos.in_chat": {"zh": "对话中（按深度插入）", "en": "In-chat (at a depth)"},
    "pm.up": {"zh": "上移", "en": "Up"},
    "pm.down": {"zh": "下移", "en": "Down"},
    "pm.add": {"zh": "新建提示词", "en": "New prompt"},
    "pm.insert": {"zh": "插入", "en": "Insert"},
    "pm.insert.tip": {"zh": "预设里定义了、但不在列表中的提示词：插入到列表顶部（关着）",
                      "en": "Prompts the preset defines but does not list: insert at the top (switched off)"},
    "pm.delete": {"zh": "删除提示词", "en": "Delete prompt"},
    "pm.save": {"zh": "保存", "en": "Save"},
    "pm.save_as": {"zh": "另存为…", "en": "Save as…"},
    "pm.export": {"zh": "导出…", "en": "Export…"},
    "pm.apply": {"zh": "应用修改", "en": "Apply"},
    "pm.name": {"zh": "名称：", "en": "Name:"},
    "pm.role": {"zh": "角色：", "en": "Role:"},
    "pm.position": {"zh": "位置：", "en": "Position:"},
    "pm.depth": {"zh": "深度：", "en": "Depth:"},
    "pm.order": {"zh": "同深度顺序：", "en": "Order:"},
    "pm.content": {"zh": "内容：", "en": "Content:"},
    "pm.marker": {"zh": "标记：由梨园从角色卡、人设、世界书或对话记录填入，内容不在这里编辑。",
                  "en": "Marker: Liyuan fills it from the card, persona, world info or chat history; its content is "
                        "not edited here."},
    "pm.fixed": {"zh": "这个标记的名称、角色和位置不能改（与 SillyTavern 相同）。",
                 "en": "This marker's name, role and position cannot be changed (as in SillyTavern)."},
    "pm.none": {"zh": "左边选一个预设，这里列出它的提示词。", "en": "Choose a preset on the left to list its prompts."},
    "pm.header": {"zh": "预设「{name}」：{n} 条提示词，开着的共 {tokens} 词元{chat}{dirty}",
                  "en": "Preset “{name}”: {n} prompts, {tokens} tokens switched on{chat}{dirty}"},
    "pm.header.chat": {"zh": "（按本对话计）", "en": " (counted for this chat)"},
    "pm.header.dirty": {"zh": " · 有未保存的修改", "en": " · unsaved changes"},
    "pm.new.name": {"zh": "新提示词", "en": "New prompt"},
    "pm.confirm.delete": {"zh": "删除提示词「{name}」？", "en": "Delete the prompt “{name}”?"},
    "pm.saved": {"zh": "已保存预设「{name}」", "en": "Saved preset “{name}”"},
    "pm.exported": {"zh": "已导出到 {path}", "en": "Exported to {path}"},
    "pm.save_as.title": {"zh": "另存为", "en": "Save as"},
    "pm.save_as.label": {"zh": "新预设的名字：", "en": "Name of the new preset:"},
    "pm.export.filter": {"zh": "SillyTavern 预设 (*.json)", "en": "SillyTavern preset (*.json)"},
    "pm.unsaved": {"zh": "预设「{name}」的修改还没保存，放弃这些修改？", "en": "Discard the unsaved changes to “{name}”?"},
    "pm.discard": {"zh": "放弃修改", "en": "Discard"},
})

_ROLES = ("system", "user", "assistant")
_ID = Qt.ItemDataRole.UserRole
_MIME = "application/x-qabstractitemmodeldatalist"  # what a QTreeWidget's own drag carries


class PromptList(QTreeWidget):
    """The prompt rows; drag and drop moves a row (never into another one). ``reordered(list[str])`` carries the
    identifiers in their new order after a drop."""

    reordered = Signal(list)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("promptList")
        self.setColumnCount(5)
        self.setHeaderLabels(["", tr("pm.col.name"), tr("pm.col.role"), tr("pm.col.position"), tr("pm.col.tokens")])
        self.setRootIsDecorated(False)
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        head = self.header()
        head.setStretchLastSection(False)
        for col, width in ((0, 34), (2, 80), (3, 100), (4, 60)):
            self.setColumnWidth(col, width)
        head.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

    def identifiers(self) -> list[str]:
        """The identifiers in the order shown."""
        items = (self.topLevelItem(i) for i in range(self.topLevelItemCount()))
        return [it.data(0, _ID) for it in items if it is not None]

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """A row dropped on the list: the dragged row (the selected one) goes above the row under the pointer, or
        below it when dropped on its lower half, or to the end below the last row. The rows themselves are not
        moved by Qt: the drop is accepted as a copy (so the drag's source removes nothing) and ``reordered`` is
        sent after the drag has ended — the owner rebuilds the rows from the preset, which must not happen inside
        Qt's drop handling. Drops from elsewhere (another widget, another program) are refused."""
        moving = self.currentItem()
        if event.source() not in (self, None) or moving is None or not event.mimeData().hasFormat(_MIME):
            event.ignore()
            return
        ids = self.identifiers()
        src = self.indexOfTopLevelItem(moving)
        pos = event.position().toPoint()
        target = self.itemAt(pos)
        if target is None:
            dest = len(ids) - 1
        else:
            rect = self.visualItemRect(target)
            dest = self.indexOfTopLevelItem(target) + (1 if pos.y() > rect.center().y() else 0)
            dest -= 1 if dest > src else 0
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        ids.insert(dest, ids.pop(src))
        QTimer.singleShot(0, lambda: self.reordered.emit(ids))


class PromptEditor(QWidget):
    """The side editor of one prompt row: name, role, position, depth, order, content; ``applied`` when 应用修改 is
    clicked (the owner reads :meth:`values`)."""

    applied = Signal()

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.name = QLineEdit()
        self.name.setObjectName("promptName")
        self.role = QComboBox()
        self.role.setObjectName("promptRole")
        for r in _ROLES:
            self.role.addItem(r, r)
        self.position = QComboBox()
        self.position.setObjectName("promptPosition")
        self.position.addItem(tr("pm.pos.relative"), "relative")
        self.position.addItem(tr("pm.pos.in_chat"), "in_chat")
        self.depth_box = QSpinBox()
        self.depth_box.setRange(0, MAX_DEPTH)
        self.order = QSpinBox()
        self.order.setRange(-1_000_000, 1_000_000)
        self.content = QPlainTextEdit()
        self.content.setObjectName("promptContent")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.apply_btn = QPushButton(tr("pm.apply"))
        self.apply_btn.setObjectName("promptApply")
        self.apply_btn.clicked.connect(lambda: self.applied.emit())
        for label, w in (("pm.name", self.name), ("pm.role", self.role), ("pm.position", self.position),
                         ("pm.depth", self.depth_box), ("pm.order", self.order)):
            form.addRow(tr(label), w)
        form.addRow(tr("pm.content"), self.content)
        form.addRow(self.note)
        form.addRow(self.apply_btn)
        self.show_row(None)

    def show_row(self, row: Optional[PromptRow]) -> None:
        """Fill the form from ``row`` (None: empty and disabled); markers show their note, not a text box."""
        self.row = row
        self.name.setText(row.name if row else "")
        self.role.setCurrentIndex(_ROLES.index(row.role) if row else 0)
        self.position.setCurrentIndex(1 if row and row.position == "in_chat" else 0)
        self.depth_box.setValue(row.depth if row else 4)
        self.order.setValue(row.order if row else 100)
        self.content.setPlainText(row.content if row else "")
        edit = bool(row and row.can_edit)
        for w in (self.name, self.role, self.position, self.depth_box, self.order):
            w.setEnabled(edit)
        self.content.setEnabled(bool(row and row.can_edit_text))
        self.apply_btn.setEnabled(edit)
        self.note.setText(tr("pm.marker") + ("" if edit else "\n" + tr("pm.fixed")) if row and row.marker else "")

    def values(self) -> dict[str, Any]:
        """What the form changed, as ``PromptManager.edit`` keywords: only the fields that differ from the row, so
        an unchanged field is not written into the preset (text only for prompts that have one)."""
        row = self.row
        if row is None:
            return {}
        now: dict[str, Any] = {"name": self.name.text(), "role": self.role.currentData(),
                               "position": self.position.currentData(), "depth": self.depth_box.value(),
                               "order": self.order.value()}
        if row.can_edit_text:
            now["text"] = self.content.toPlainText()
        was = {"name": row.name, "role": row.role, "position": row.position, "depth": row.depth, "order": row.order,
               "text": row.content}
        return {k: v for k, v in now.items() if v != was[k]}


class PromptManagerWidget(QWidget):
    """SillyTavern's Prompt Manager for one library preset (module doc). :meth:`load` a preset by name; the
    commands (:meth:`toggle`, :meth:`move_prompt`, :meth:`add`, :meth:`delete`, :meth:`apply_edit`, :meth:`save`,
    :meth:`save_as`, :meth:`export`) are what the buttons call, without their file or name dialogs. ``chat``: the
    open chat its token counts are for (None: raw text counts). ``saved(name)`` after the preset was written into
    the library; ``message(str)`` for the owner's status line."""

    saved = Signal(str)
    message = Signal(str)

    def __init__(self, chat: Optional[Chat] = None, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("promptManager")
        self.chat = chat
        self.manager: Optional[PromptManager] = None
        self.rows: list[PromptRow] = []
        self.chat_counts = False
        self._counts = LatestWins(self, lane="work")
        self._counts.done.connect(self._counted)
        lay = QVBoxLayout(self)
        self.header = QLabel(tr("pm.none"))
        self.header.setObjectName("promptHeader")
        self.header.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        self.unlisted = QComboBox()
        self.unlisted.setObjectName("promptUnlisted")
        self.unlisted.setToolTip(tr("pm.insert.tip"))
        self.insert_btn = QPushButton(tr("pm.insert"))
        self.insert_btn.setObjectName("promptInsert")
        self.insert_btn.clicked.connect(lambda: self.attach(self.unlisted.currentData()))
        top.addWidget(self.unlisted)
        top.addWidget(self.insert_btn)
        lay.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.list = PromptList()
        self.list.itemChanged.connect(self._item_changed)
        self.list.currentItemChanged.connect(lambda *_: self._selected())
        self.list.reordered.connect(self.reorder)
        split.addWidget(self.list)
        self.editor = PromptEditor()
        self.editor.applied.connect(self.apply_edit)
        split.addWidget(self.editor)
        split.setSizes([420, 280])
        lay.addWidget(split, 1)
        lay.addLayout(self._buttons())

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for key, slot in (("pm.up", lambda: self._step(-1)), ("pm.down", lambda: self._step(1)),
                          ("pm.add", lambda: self.add()), ("pm.delete", self._delete_clicked),
                          ("pm.save", lambda: self.save()), ("pm.save_as", self._save_as_clicked),
                          ("pm.export", self._export_clicked)):
            b = QPushButton(tr(key))
            b.setObjectName(key.replace(".", "_"))
            b.clicked.connect(slot)
            row.addWidget(b)
            self.buttons[key] = b
            if key == "pm.delete":
                row.addStretch(1)
        return row

    # -- loading and painting -------------------------------------------------------------------------------
    def load(self, name: Optional[str]) -> None:
        """Show the library preset ``name`` (None: nothing). Errors go to the header."""
        self.manager = None
        if name:
            try:
                self.manager = PromptManager.load(name)
            except PresetError as e:
                self.header.setText(tr("presets.err", error=e))
        self.paint()

    def ask_discard(self) -> bool:
        """True when there is nothing unsaved, or the user chose to discard it (asked; default No)."""
        if self.manager is None or not self.manager.changed:
            return True
        from .dialogs import confirm

        return confirm(self, tr("pm.tab"), tr("pm.unsaved", name=self.manager.name), tr("pm.discard"))

    def paint(self, select: Optional[str] = None) -> None:
        """Rebuild the list from the manager (raw counts at once, the chat's from a worker); keep or move the
        selection to ``select``."""
        select = select or self.current_id()
        self.rows = self.manager.rows() if self.manager is not None else []
        self.chat_counts = False
        self.list.blockSignals(True)
        self.list.clear()
        muted = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        for r in self.rows:
            it = QTreeWidgetItem(["", ("◆ " if r.marker else "") + r.label, r.role, self._where(r), str(r.tokens)])
            it.setData(0, _ID, r.identifier)
            flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsDragEnabled
            if r.can_toggle:
                flags |= Qt.ItemFlag.ItemIsUserCheckable
            it.setFlags(flags)
            it.setCheckState(0, Qt.CheckState.Checked if r.enabled else Qt.CheckState.Unchecked)
            tip = show(r.note) or (tr("pm.marker") if r.marker else r.content[:300])
            for c in range(5):
                it.setToolTip(c, tip)
                if r.marker or r.missing:
                    it.setForeground(c, muted)
            self.list.addTopLevelItem(it)
            if r.identifier == select:
                self.list.setCurrentItem(it)
        self.list.blockSignals(False)
        for b in self.buttons.values():
            b.setEnabled(self.manager is not None)
        self._selected()  # after the buttons: 删除提示词 only for a prompt that may be deleted
        self._header()
        self._fill_unlisted()
        self._count_for_chat()

    def _fill_unlisted(self) -> None:
        """The prompts the preset defines but does not list (SillyTavern's "insert prompt" menu)."""
        self.unlisted.clear()
        for r in self.manager.unlisted() if self.manager is not None else []:
            self.unlisted.addItem(r.label, r.identifier)
        self.unlisted.setVisible(self.unlisted.count() > 0)
        self.insert_btn.setVisible(self.unlisted.count() > 0)

    def attach(self, identifier: Optional[str]) -> bool:
        """Put an unlisted prompt into the list at the top, switched off (as SillyTavern inserts one)."""
        if not identifier:
            return False
        return self._do(lambda m: m.attach(identifier, 0, enabled=False), identifier)

    @staticmethod
    def _where(r: PromptRow) -> str:
        return tr("pm.relative") if r.position == "relative" else tr("pm.in_chat", depth=r.depth)

    def _header(self) -> None:
        if self.manager is None:
            if not self.header.text() or self.header.text() == tr("pm.none"):
                self.header.setText(tr("pm.none"))
            return
        total = sum(r.tokens for r in self.rows if r.enabled and not r.duplicate)
        self.header.setText(tr("pm.header", name=self.manager.name, n=len(self.rows), tokens=total,
                               chat=tr("pm.header.chat") if self.chat_counts else "",
                               dirty=tr("pm.header.dirty") if self.manager.changed else ""))

    def _count_for_chat(self) -> None:
        """The chat's token counts on a worker, on a copy of the preset (the manager is not thread-safe)."""
        if self.chat is None or self.manager is None:
            return
        chat, copy = self.chat, PromptManager(self.manager.to_json(), self.manager.name)
        self._counts.start(lambda _cancelled: chat.preset_prompt_rows(copy))

    def _counted(self, gen: int, rows: Any) -> None:
        if gen != self._counts.gen or len(rows) != len(self.rows):
            return
        self.list.blockSignals(True)
        for i, r in enumerate(rows):
            self.rows[i].tokens = r.tokens
            it = self.list.topLevelItem(i)
            if it is not None:
                it.setText(4, str(r.tokens))
        self.list.blockSignals(False)
        self.chat_counts = True
        self._header()

    def current_id(self) -> Optional[str]:
        """The selected prompt's identifier, or None."""
        it = self.list.currentItem()
        return it.data(0, _ID) if it is not None else None

    def _row(self, ident: Optional[str]) -> Optional[PromptRow]:
        return next((r for r in self.rows if r.identifier == ident), None)

    def _selected(self) -> None:
        row = self._row(self.current_id())
        self.editor.show_row(row)
        self.buttons["pm.delete"].setEnabled(bool(row and row.can_delete))

    # -- commands -------------------------------------------------------------------------------------------
    def _do(self, fn: Any, select: Optional[str] = None) -> bool:
        """Run one manager edit; repaint; a refused edit is said in the header's place (nothing changed)."""
        if self.manager is None:
            return False
        try:
            fn(self.manager)
        except PresetError as e:
            self.message.emit(tr("presets.err", error=e))
            self.paint()
            return False
        self.paint(select)
        return True

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        """A check box clicked: the item already shows it, so only the manager and the header change (rebuilding
        the list here would delete the item Qt is still handling)."""
        if column != 0 or self.manager is None:
            return
        ident, on = item.data(0, _ID), item.checkState(0) == Qt.CheckState.Checked
        try:
            self.manager.set_enabled(ident, on)
        except PresetError as e:
            self.message.emit(tr("presets.err", error=e))
            QTimer.singleShot(0, lambda: self.paint())
            return
        for r in self.rows:
            if r.identifier == ident:
                r.enabled = on
        self._header()

    def toggle(self, identifier: str, on: bool) -> bool:
        """Switch a prompt on or off."""
        return self._do(lambda m: m.set_enabled(identifier, on), identifier)

    def move_prompt(self, identifier: str, index: int) -> bool:
        """Move a prompt to row ``index`` (0-based)."""
        return self._do(lambda m: m.move(identifier, index), identifier)

    def _step(self, delta: int) -> None:
        it = self.list.currentItem()
        if it is not None:
            self.move_prompt(it.data(0, _ID), self.list.indexOfTopLevelItem(it) + delta)

    def reorder(self, identifiers: list[str]) -> None:
        """Make the list's order ``identifiers`` (after a drag)."""
        if identifiers == [r.identifier for r in self.rows]:
            return

        def apply(m: PromptManager) -> None:
            for i, ident in enumerate(identifiers):
                m.move(ident, i)
        self._do(apply, self.current_id())

    def apply_edit(self) -> bool:
        """Write the side editor's values into the selected prompt."""
        ident, values = self.current_id(), self.editor.values()
        if ident is None:
            return False
        return self._do(lambda m: m.edit(ident, **values), ident)

    def add(self, name: str = "") -> Optional[str]:
        """Add a custom prompt at the top, switched on, and select it; returns its identifier."""
        new: list[str] = []
        self._do(lambda m: new.append(m.add(name or tr("pm.new.name"))))
        if new:
            self.paint(new[0])
        return new[0] if new else None

    def _delete_clicked(self) -> None:
        row = self._row(self.current_id())
        if row is None or not row.can_delete:
            return
        from .dialogs import confirm  # No is the default

        if confirm(self, tr("pm.tab"), tr("pm.confirm.delete", name=row.label), tr("pm.delete")):
            self.delete(row.identifier)

    def delete(self, identifier: str) -> bool:
        """Delete a custom prompt (no question: the button asks)."""
        return self._do(lambda m: m.delete(identifier))

    def save(self) -> bool:
        """Write the preset into the library under its name; ``saved`` tells the owner."""
        if self.manager is None:
            return False
        try:
            self.manager.save()
        except OSError as e:
            self.message.emit(tr("presets.err", error=e))
            return False
        self._header()
        self.message.emit(tr("pm.saved", name=self.manager.name))
        self.saved.emit(self.manager.name)
        return True

    def save_as(self, name: str) -> bool:
        """Write the preset as a new library preset ``name`` and go on editing that one."""
        if self.manager is None:
            return False
        try:
            self.manager.save_as(name)
        except (PresetError, OSError) as e:
            self.message.emit(show(e) if isinstance(e, PresetError) else tr("presets.err", error=e))
            return False
        self._header()
        self.message.emit(tr("pm.saved", name=self.manager.name))
        self.saved.emit(self.manager.name)
        return True

    def _save_as_clicked(self) -> None:
        if self.manager is None:
            return
        name, ok = QInputDialog.getText(self, tr("pm.save_as.title"), tr("pm.save_as.label"),
                                        text=self.manager.name + " 2")
        if ok and name.strip():
            self.save_as(name.strip())

    def export(self, path: str | Path) -> bool:
        """Write the preset as SillyTavern JSON to ``path``."""
        if self.manager is None:
            return False
        try:
            self.manager.export(path)
        except OSError as e:
            self.message.emit(tr("presets.err", error=e))
            return False
        self.message.emit(tr("pm.exported", path=str(path)))
        return True

    def _export_clicked(self) -> None:
        if self.manager is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, tr("pm.export"), str(Path.home() / f"{self.manager.name}.json"),
                                              tr("pm.export.filter"))
        if path:
            self.export(path)


__all__ = ["PromptManagerWidget", "PromptList", "PromptEditor"]
