"""The card's own world book, viewable and editable (issue 17): an entries table and a form — not JSON.

The table is a model/view (:class:`EntryTableModel`, a QAbstractTableModel) that hands rows to the view in pages
(``canFetchMore``/``fetchMore``) and filters through a precomputed lower-case index, so a 50,000-entry book stays
responsive; the book itself is read and indexed on a worker thread (``ui/tasks.run_in_worker``, the one helper for
slow work: a progress dialog with Cancel when it takes long).
The form edits one entry: title (SillyTavern's ``comment``), keys, secondary keys, the selective logic (AND ANY /
NOT ALL / NOT ANY / AND ALL, ST's ``selectiveLogic`` 0-3), content, constant / selective / enabled, position
(ST's numbering, ``core/lore/model.POSITIONS``), depth (at-depth entries), order, probability. 保存 writes the book
back into the card file through ``Chat.save_card_book`` (lossless: unknown keys kept) and the chat re-reads it; for
a card that cannot be written the editor says so and saving keeps the book as this chat's own copy instead.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...core.lore import Lorebook
from ...core.lore.model import POSITIONS, LoreEntry
from ..infra.i18n import register, show, tr
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "book.title": {"zh": "角色卡世界书：{name}", "en": "Card world book: {name}"},
    "book.loading": {"zh": "读取中…", "en": "Loading…"},
    "book.filter": {"zh": "筛选：标题、关键词或内容", "en": "Filter: title, keys or content"},
    "book.count": {"zh": "{shown} / {total} 条", "en": "{shown} / {total} entries"},
    "book.col.on": {"zh": "启用", "en": "On"},
    "book.col.title": {"zh": "标题", "en": "Title"},
    "book.col.keys": {"zh": "关键词", "en": "Keys"},
    "book.col.constant": {"zh": "常驻", "en": "Constant"},
    "book.col.position": {"zh": "位置", "en": "Position"},
    "book.col.order": {"zh": "顺序", "en": "Order"},
    "book.col.probability": {"zh": "概率", "en": "Probability"},
    "book.f.title": {"zh": "标题（备注）", "en": "Title (comment)"},
    "book.f.keys": {"zh": "关键词（逗号分隔）", "en": "Keys (comma-separated)"},
    "book.f.secondary": {"zh": "次要关键词", "en": "Secondary keys"},
    "book.f.logic": {"zh": "次要关键词逻辑", "en": "Secondary logic"},
    "book.f.content": {"zh": "内容", "en": "Content"},
    "book.f.constant": {"zh": "常驻（不需要关键词）", "en": "Constant (no keys needed)"},
    "book.f.selective": {"zh": "使用次要关键词", "en": "Selective (use secondary keys)"},
    "book.f.enabled": {"zh": "启用", "en": "Enabled"},
    "book.f.position": {"zh": "位置", "en": "Position"},
    "book.f.depth": {"zh": "深度（@深度 位置）", "en": "Depth (at-depth position)"},
    "book.f.order": {"zh": "顺序", "en": "Order"},
    "book.f.probability": {"zh": "概率（%）", "en": "Probability (%)"},
    "book.logic.0": {"zh": "含任一（AND ANY）", "en": "AND ANY"},
    "book.logic.1": {"zh": "不全含（NOT ALL）", "en": "NOT ALL"},
    "book.logic.2": {"zh": "都不含（NOT ANY）", "en": "NOT ANY"},
    "book.logic.3": {"zh": "全都含（AND ALL）", "en": "AND ALL"},
    "book.pos.before_char": {"zh": "角色定义之前", "en": "Before character"},
    "book.pos.after_char": {"zh": "角色定义之后", "en": "After character"},
    "book.pos.an_top": {"zh": "作者注之前", "en": "Before author's note"},
    "book.pos.an_bottom": {"zh": "作者注之后", "en": "After author's note"},
    "book.pos.at_depth": {"zh": "@深度", "en": "At depth"},
    "book.pos.em_top": {"zh": "示例对话之前", "en": "Before examples"},
    "book.pos.em_bottom": {"zh": "示例对话之后", "en": "After examples"},
    "book.pos.outlet": {"zh": "出口（outlet）", "en": "Outlet"},
    "book.add": {"zh": "新条目", "en": "New entry"},
    "book.delete": {"zh": "删除条目", "en": "Delete entry"},
    "book.save": {"zh": "保存到角色卡", "en": "Save to the card"},
    "book.close": {"zh": "关闭", "en": "Close"},
    "book.saved": {"zh": "已保存到角色卡，下一拍起生效。", "en": "Saved to the card; applies from the next beat."},
    "book.readonly": {"zh": "这张角色卡不能写入（只读）：保存会存成这个对话自己的副本，只在这个对话里生效。",
                      "en": "This card cannot be written (read-only): saving keeps a copy for this chat, used in this chat only."},
    "book.saved.copy": {"zh": "已存成这个对话的副本（角色卡没有改），下一拍起生效。",
                        "en": "Saved as this chat's copy (the card is unchanged); applies from the next beat."},
    "book.err.save": {"zh": "保存失败：{error}", "en": "Could not save: {error}"},
    "book.err.load": {"zh": "读不出世界书：{error}", "en": "Could not read the world book: {error}"},
    "book.unsaved": {"zh": "有没保存的修改，确定关闭？", "en": "There are unsaved changes. Close anyway?"},
    "book.empty": {"zh": "（无标题）", "en": "(untitled)"},
})

COLUMNS = ("book.col.on", "book.col.title", "book.col.keys", "book.col.constant", "book.col.position",
           "book.col.order", "book.col.probability")
PAGE = 500  # rows handed to the view per fetchMore


def _haystack(e: LoreEntry) -> str:
    return "\n".join((e.title, " ".join(e.keys), " ".join(e.secondary_keys), e.content)).lower()


class EntryTableModel(QAbstractTableModel):
    """The entries of a book as rows (filtered, paged). ``rows`` are indexes into ``book.entries``."""

    def __init__(self, parent: Optional[QObject] = None):
        super().__init__(parent)
        self.book = Lorebook()
        self._hay: list[str] = []
        self._all: list[int] = []  # rows matching the filter
        self._shown = 0  # rows handed to the view so far
        self.query = ""

    # -- data -----------------------------------------------------------------------------------------------
    def set_book(self, book: Lorebook, hay: Optional[list[str]] = None) -> None:
        """Show ``book`` (``hay``: its filter index, built off the UI thread by the loader)."""
        self.beginResetModel()
        self.book = book
        self._hay = hay if hay is not None and len(hay) == len(book.entries) else [_haystack(e) for e in book.entries]
        self._refilter()
        self.endResetModel()

    def _refilter(self) -> None:
        q = self.query.strip().lower()
        self._all = [i for i, h in enumerate(self._hay) if q in h] if q else list(range(len(self._hay)))
        self._shown = min(PAGE, len(self._all))

    def set_filter(self, text: str) -> None:
        """Show only entries whose title, keys or content contain ``text`` (case-insensitive)."""
        self.beginResetModel()
        self.query = text
        self._refilter()
        self.endResetModel()

    def matching(self) -> int:
        """Entries matching the filter (loaded or not)."""
        return len(self._all)

    def entry_at(self, row: int) -> Optional[LoreEntry]:
        return self.book.entries[self._all[row]] if 0 <= row < self._shown else None

    def row_of(self, entry_index: int) -> int:
        """The view row of ``book.entries[entry_index]`` (fetching pages up to it), or -1 when filtered out."""
        try:
            pos = self._all.index(entry_index)
        except ValueError:
            return -1
        while pos >= self._shown and self.canFetchMore():
            self.fetchMore()
        return pos

    def entry_changed(self, entry_index: int) -> None:
        """An entry was edited in the form: refresh its filter text and its row."""
        if 0 <= entry_index < len(self._hay):
            self._hay[entry_index] = _haystack(self.book.entries[entry_index])
        try:
            row = self._all.index(entry_index)
        except ValueError:
            return
        if row < self._shown:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def add_entry(self) -> int:
        """A new enabled entry at the end (uid one past the highest); returns its index in the book."""
        uid = max((e.uid for e in self.book.entries), default=-1) + 1
        self.beginResetModel()
        self.book.entries.append(LoreEntry(uid=uid, title="", keys=[], content="", book=self.book.name, source="card"))
        self._hay.append("")
        self.query = ""
        self._refilter()
        self.endResetModel()
        return len(self.book.entries) - 1

    def delete_entry(self, entry_index: int) -> None:
        self.beginResetModel()
        del self.book.entries[entry_index]
        del self._hay[entry_index]
        self._refilter()
        self.endResetModel()

    # -- Qt model -------------------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def canFetchMore(self, parent: QModelIndex = QModelIndex()) -> bool:  # noqa: N802 - Qt API
        return not parent.isValid() and self._shown < len(self._all)

    def fetchMore(self, parent: QModelIndex = QModelIndex()) -> None:  # noqa: N802 - Qt API
        if parent.isValid():
            return
        n = min(PAGE, len(self._all) - self._shown)
        if n <= 0:
            return
        self.beginInsertRows(QModelIndex(), self._shown, self._shown + n - 1)
        self._shown += n
        self.endInsertRows()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(COLUMNS):
            return tr(COLUMNS[section])
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        e = self.entry_at(index.row()) if index.isValid() else None
        if e is None:
            return None
        c = index.column()
        if role == Qt.ItemDataRole.CheckStateRole and c in (0, 3):
            on = e.enabled if c == 0 else e.constant
            return Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if c == 1:
            return e.title or tr("book.empty")
        if c == 2:
            return ", ".join(e.keys)
        if c == 4:
            return tr(f"book.pos.{e.position}") if e.position in POSITIONS else e.position
        if c == 5:
            return e.order
        if c == 6:
            return e.probability
        return None


class BookEditorDialog(QDialog):
    """The editor for ``chat``'s card book. ``saved()`` after it was written into the card."""

    saved = Signal()

    def __init__(self, chat: Chat, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("bookEditor")
        self.chat = chat
        self.dirty = False
        self._current = -1  # index in book.entries shown in the form
        self._filling = False
        self.setWindowTitle(tr("book.title", name=chat.card.name))
        self.resize(1100, 700)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("bookFilter")
        self.filter_edit.setPlaceholderText(tr("book.filter"))
        self.filter_edit.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(150)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.count_label = QLabel(tr("book.loading"))
        set_role(self.count_label, "muted")
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        lay.addLayout(top)

        split = QSplitter(Qt.Orientation.Horizontal)
        left = self._build_table()
        split.addWidget(left)
        split.addWidget(self._build_form())
        split.setSizes([560, 540])
        lay.addWidget(split, 1)

        self.note = QLabel("")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        self.save_btn = QPushButton(tr("book.save"))
        self.save_btn.setObjectName("bookSave")
        self.save_btn.clicked.connect(self.save)
        self.close_btn = QPushButton(tr("book.close"))
        self.close_btn.clicked.connect(self.close)
        bottom.addWidget(self.save_btn)
        bottom.addWidget(self.close_btn)
        lay.addLayout(bottom)
        self.writable = bool(chat.card_book_writable())
        if not self.writable:
            self.note.setText(tr("book.readonly"))
            set_role(self.note, "warn")
        self._set_enabled(False)
        self.loaded = False
        self._load_task = asyncio.ensure_future(self._load())  # on the qasync loop (ui/infra/work.py)

    def _build_table(self) -> QWidget:
        """The entry table (paged model, short columns sized once from their labels) with 添加 / 删除 under it."""
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.model = EntryTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("bookTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # the short columns as wide as their header or longest label (no "Before …"), measured once from the texts:
        # ResizeToContents would ask every loaded row of a big book again on each change
        fm = self.table.fontMetrics()
        widest = {0: [tr(COLUMNS[0])], 3: [tr(COLUMNS[3])], 4: [tr(COLUMNS[4])] + [tr(f"book.pos.{p}") for p in POSITIONS],
                  5: [tr(COLUMNS[5]), "100000"], 6: [tr(COLUMNS[6]), "100"]}
        for col, texts in widest.items():
            hh.resizeSection(col, max(fm.horizontalAdvance(t) for t in texts) + 24)
        hh.resizeSection(1, 150)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self.show_row(cur.row()))
        ll.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_btn = QPushButton(tr("book.add"))
        self.add_btn.clicked.connect(self.add_entry)
        self.del_btn = QPushButton(tr("book.delete"))
        self.del_btn.clicked.connect(self.delete_entry)
        row.addWidget(self.add_btn)
        row.addWidget(self.del_btn)
        row.addStretch(1)
        ll.addLayout(row)
        return left

    async def _load(self) -> None:
        """Read and index the card's book on a worker thread (ui/tasks.run_in_worker: a progress dialog with Cancel
        after 300 ms; nothing crosses threads but the result)."""
        from ..infra.tasks import WorkCancelled, run_in_worker

        chat = self.chat

        def read(_work: Any) -> tuple[Lorebook, list[str]]:
            book = chat.card_book()
            return book, [_haystack(e) for e in book.entries]

        try:
            book, hay = await run_in_worker(self, read, label=tr("book.loading"), big=True)
        except WorkCancelled:
            return
        except Exception as e:  # noqa: BLE001 - shown in the dialog, never lost
            self._loaded(None, None, show(e))
            return
        try:
            self._loaded(book, hay, "")
        except RuntimeError:  # the dialog was closed meanwhile
            pass

    def _build_form(self) -> QWidget:
        w = QWidget()
        w.setObjectName("bookForm")
        f = QFormLayout(w)
        self.f_title = QLineEdit()
        self.f_keys = QLineEdit()
        self.f_secondary = QLineEdit()
        self.f_logic = QComboBox()
        for i in range(4):
            self.f_logic.addItem(tr(f"book.logic.{i}"), i)
        self.f_content = QPlainTextEdit()
        self.f_content.setObjectName("bookContent")
        self.f_constant = QCheckBox(tr("book.f.constant"))
        self.f_selective = QCheckBox(tr("book.f.selective"))
        self.f_enabled = QCheckBox(tr("book.f.enabled"))
        self.f_position = QComboBox()
        for p in POSITIONS:
            self.f_position.addItem(tr(f"book.pos.{p}"), p)
        self.f_depth = QSpinBox()
        self.f_depth.setRange(0, 10000)
        self.f_order = QSpinBox()
        self.f_order.setRange(-100000, 100000)
        self.f_probability = QSpinBox()
        self.f_probability.setRange(0, 100)
        self.f_probability.setSuffix(" %")
        f.addRow(tr("book.f.title"), self.f_title)
        f.addRow(tr("book.f.keys"), self.f_keys)
        f.addRow(tr("book.f.secondary"), self.f_secondary)
        f.addRow(tr("book.f.logic"), self.f_logic)
        f.addRow(tr("book.f.content"), self.f_content)
        checks = QHBoxLayout()
        for c in (self.f_enabled, self.f_constant, self.f_selective):
            checks.addWidget(c)
        checks.addStretch(1)
        f.addRow(checks)
        f.addRow(tr("book.f.position"), self.f_position)
        f.addRow(tr("book.f.depth"), self.f_depth)
        f.addRow(tr("book.f.order"), self.f_order)
        f.addRow(tr("book.f.probability"), self.f_probability)
        for sig in (self.f_title.textEdited, self.f_keys.textEdited, self.f_secondary.textEdited,
                    self.f_content.textChanged, self.f_constant.toggled, self.f_selective.toggled,
                    self.f_enabled.toggled, self.f_logic.currentIndexChanged, self.f_position.currentIndexChanged,
                    self.f_depth.valueChanged, self.f_order.valueChanged, self.f_probability.valueChanged):
            sig.connect(self._form_changed)
        self._form = w
        return w

    # -- loading --------------------------------------------------------------------------------------------
    def _loaded(self, book: Optional[Lorebook], hay: Optional[list[str]], error: str) -> None:
        if book is None:
            self.count_label.setText(tr("book.err.load", error=error))
            return
        self.model.set_book(book, hay)
        self.loaded = True
        self._set_enabled(True)
        self._update_count()
        if self.model.rowCount():
            self.table.selectRow(0)

    def _set_enabled(self, on: bool) -> None:
        for w in (self.table, self.add_btn, self.del_btn, self._form, self.filter_edit):
            w.setEnabled(on)
        self.save_btn.setEnabled(on)

    def _update_count(self) -> None:
        self.count_label.setText(tr("book.count", shown=self.model.matching(), total=len(self.model.book.entries)))

    def _apply_filter(self) -> None:
        self.model.set_filter(self.filter_edit.text())
        self._update_count()
        self._current = -1
        if self.model.rowCount():
            self.table.selectRow(0)
        else:
            self._fill(None)

    # -- the form -------------------------------------------------------------------------------------------
    def show_row(self, row: int) -> None:
        """Show the entry at view row ``row`` in the form."""
        e = self.model.entry_at(row)
        self._current = self.model._all[row] if e is not None else -1
        self._fill(e)

    def _fill(self, e: Optional[LoreEntry]) -> None:
        self._filling = True
        try:
            self._form.setEnabled(e is not None and self.loaded)
            e = e or LoreEntry()
            self.f_title.setText(e.title)
            self.f_keys.setText(", ".join(e.keys))
            self.f_secondary.setText(", ".join(e.secondary_keys))
            self.f_logic.setCurrentIndex(max(0, min(3, e.selective_logic)))
            self.f_content.setPlainText(e.content)
            self.f_constant.setChecked(e.constant)
            self.f_selective.setChecked(e.selective)
            self.f_enabled.setChecked(e.enabled)
            self.f_position.setCurrentIndex(max(0, self.f_position.findData(e.position)))
            self.f_depth.setValue(e.depth)
            self.f_order.setValue(e.order)
            self.f_probability.setValue(max(0, min(100, e.probability)))
        finally:
            self._filling = False

    @staticmethod
    def _split(text: str) -> list[str]:
        return [k.strip() for k in text.replace("，", ",").split(",") if k.strip()]

    def _form_changed(self, *_a: Any) -> None:
        if self._filling or self._current < 0:
            return
        e = self.model.book.entries[self._current]
        e.title = self.f_title.text()
        e.keys = self._split(self.f_keys.text())
        e.secondary_keys = self._split(self.f_secondary.text())
        e.selective_logic = int(self.f_logic.currentData() or 0)
        e.content = self.f_content.toPlainText()
        e.constant = self.f_constant.isChecked()
        e.selective = self.f_selective.isChecked()
        e.enabled = self.f_enabled.isChecked()
        e.position = str(self.f_position.currentData())
        e.depth = self.f_depth.value()
        e.order = self.f_order.value()
        e.probability = self.f_probability.value()
        e.use_probability = e.probability < 100 or e.use_probability
        self.model.book.invalidate()
        self.model.entry_changed(self._current)
        self.dirty = True

    def add_entry(self) -> None:
        """A new entry, selected in the table (the filter is cleared so it shows)."""
        self.filter_edit.blockSignals(True)
        self.filter_edit.clear()
        self.filter_edit.blockSignals(False)
        i = self.model.add_entry()
        row = self.model.row_of(i)
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))
        self._update_count()
        self.dirty = True
        self.f_title.setFocus()

    def delete_entry(self) -> None:
        if self._current < 0:
            return
        self.model.delete_entry(self._current)
        self._current = -1
        self._update_count()
        self.dirty = True
        if self.model.rowCount():
            self.table.selectRow(0)
        else:
            self._fill(None)

    # -- saving ---------------------------------------------------------------------------------------------
    def save(self) -> bool:
        """Write the book into the card (Chat.save_card_book); the chat uses it from the next beat."""
        try:
            self.chat.save_card_book(self.model.book)
        except (OSError, RuntimeError, ValueError) as e:
            self.note.setText(tr("book.err.save", error=show(e)))
            set_role(self.note, "error")
            return False
        self.dirty = False
        self.note.setText(tr("book.saved") if self.writable else tr("book.saved.copy"))
        set_role(self.note, "ok")
        self.saved.emit()
        return True

    def closeEvent(self, ev: Any) -> None:  # noqa: N802 - Qt API
        from .dialogs import confirm  # No is the default: Enter or Esc keeps the editor open with the edits

        if self.dirty and not confirm(self, self.windowTitle(), tr("book.unsaved")):
            ev.ignore()
            return
        super().closeEvent(ev)
