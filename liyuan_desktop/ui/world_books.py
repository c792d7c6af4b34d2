"""世界书 (issue 17): the world books of the open chat and the global ones, each a list with on/off, 导入…
and 打开文件夹, plus the card's own book (opened in the editor, ``ui/book_editor.py``).

Where the books live (``core/lore/books.py``): a chat's in ``<chat>/世界书``, the global ones (every chat) in
``<home>/世界书``; a book switched off moves to the ``未启用`` subfolder of its folder, which is not read (the global
folder's ``未启用`` is the library of books active nowhere, as the SillyTavern migration fills it). After a change
the chat re-reads its books (``Chat.reload_books``): the next beat's activation uses them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog, QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QTabWidget, QVBoxLayout,
    QWidget,
)

from ..core.lore.books import global_books_dir, import_book_file, list_book_files, set_book_enabled
from .i18n import register, show, tr
from .theme import set_role

register({
    "books.menu": {"zh": "世界书…", "en": "World books…"},
    "books.title": {"zh": "世界书", "en": "World books"},
    "books.tab.chat": {"zh": "本对话", "en": "This chat"},
    "books.tab.global": {"zh": "全局（所有对话）", "en": "Global (every chat)"},
    "books.tab.card": {"zh": "角色卡自带", "en": "The card's own"},
    "books.hint.chat": {"zh": "勾选的世界书只在这个对话里生效（在角色卡世界书之后合并）。",
                        "en": "Checked books apply in this chat only (merged after the card's book)."},
    "books.hint.global": {"zh": "勾选的世界书在所有对话里生效；取消勾选的留在书库里（未启用）。",
                          "en": "Checked books apply in every chat; unchecked ones stay in the library (not active)."},
    "books.import": {"zh": "导入…", "en": "Import…"},
    "books.import.pick": {"zh": "选择 SillyTavern 世界书（.json）", "en": "Choose a SillyTavern world book (.json)"},
    "books.folder": {"zh": "打开文件夹", "en": "Open folder"},
    "books.none": {"zh": "（还没有世界书）", "en": "(no world books yet)"},
    "books.nochat": {"zh": "先打开一个对话。", "en": "Open a chat first."},
    "books.err": {"zh": "没能完成：{error}", "en": "Could not do it: {error}"},
    "books.changed": {"zh": "世界书已更新，下一拍起生效。", "en": "World books updated; they apply from the next beat."},
    "books.card.entries": {"zh": "角色卡「{name}」自带的世界书：{n} 条。", "en": "The card “{name}” has its own world book: {n} entries."},
    "books.card.edit": {"zh": "查看与编辑…", "en": "View and edit…"},
    "books.close": {"zh": "关闭", "en": "Close"},
})


class BookList(QWidget):
    """One books folder as a checkable list. ``changed()`` after a book was switched or imported."""

    changed = Signal()

    def __init__(self, folder: Optional[Path], hint_key: str, name: str, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.folder = folder
        lay = QVBoxLayout(self)
        hint = QLabel(tr(hint_key))
        hint.setWordWrap(True)
        set_role(hint, "muted")
        lay.addWidget(hint)
        self.list = QListWidget()
        self.list.setObjectName(name)
        self.list.itemChanged.connect(self._toggled)
        lay.addWidget(self.list, 1)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        set_role(self.error, "error")
        lay.addWidget(self.error)
        row = QHBoxLayout()
        self.import_btn = QPushButton(tr("books.import"))
        self.import_btn.clicked.connect(self.import_dialog)
        self.folder_btn = QPushButton(tr("books.folder"))
        self.folder_btn.clicked.connect(self.open_folder)
        row.addWidget(self.import_btn)
        row.addWidget(self.folder_btn)
        row.addStretch(1)
        lay.addLayout(row)
        enabled = folder is not None
        for w in (self.import_btn, self.folder_btn, self.list):
            w.setEnabled(enabled)
        self.refresh()

    def refresh(self) -> None:
        """Re-read the folder."""
        self.list.blockSignals(True)
        self.list.clear()
        books = list_book_files(self.folder) if self.folder is not None else []
        for b in books:
            it = QListWidgetItem(b.name)
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if b.enabled else Qt.CheckState.Unchecked)
            it.setData(Qt.ItemDataRole.UserRole, b.name)
            it.setToolTip(b.path)
            self.list.addItem(it)
        if not books:
            it = QListWidgetItem(tr("books.none") if self.folder is not None else tr("books.nochat"))
            it.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(it)
        self.list.blockSignals(False)

    def names(self) -> list[tuple[str, bool]]:
        """(name, on) for every book listed."""
        out = []
        for i in range(self.list.count()):
            it = self.list.item(i)
            name = it.data(Qt.ItemDataRole.UserRole)
            if name:
                out.append((name, it.checkState() == Qt.CheckState.Checked))
        return out

    def set_enabled(self, name: str, on: bool) -> None:
        """Switch a book on/off (what ticking its box does)."""
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it.data(Qt.ItemDataRole.UserRole) == name:
                it.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _toggled(self, it: QListWidgetItem) -> None:
        name = it.data(Qt.ItemDataRole.UserRole)
        if not name or self.folder is None:
            return
        try:
            set_book_enabled(self.folder, name, it.checkState() == Qt.CheckState.Checked)
        except OSError as e:
            self.error.setText(tr("books.err", error=show(e)))
            self.refresh()
            return
        self.error.setText("")
        self.refresh()
        self.changed.emit()

    def import_file(self, path: str) -> Optional[Path]:
        """Import a world-book file into this folder (switched on)."""
        if self.folder is None:
            return None
        try:
            dst = import_book_file(Path(path), self.folder)
        except (OSError, ValueError) as e:
            self.error.setText(tr("books.err", error=show(e)))
            return None
        self.error.setText("")
        self.refresh()
        self.changed.emit()
        return dst

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("books.import.pick"), "", "JSON (*.json)")
        if path:
            self.import_file(path)

    def open_folder(self) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.folder)))


class WorldBooksDialog(QDialog):
    """The chat's and the global world books, and the card's own. ``booksChanged()`` after the chat re-read them."""

    booksChanged = Signal()

    def __init__(self, chat: Any, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("worldBooks")
        self.setWindowTitle(tr("books.title"))
        self.resize(560, 480)
        self.chat = chat
        lay = QVBoxLayout(self)
        self.tabs = QTabWidget()
        self.chat_list = BookList(chat.books_folder() if chat is not None else None, "books.hint.chat", "chatBooks")
        self.global_list = BookList(global_books_dir(), "books.hint.global", "globalBooks")
        self.tabs.addTab(self.chat_list, tr("books.tab.chat"))
        self.tabs.addTab(self.global_list, tr("books.tab.global"))
        card = QWidget()
        cl = QVBoxLayout(card)
        n = len(chat.card_book().entries) if chat is not None else 0
        self.card_label = QLabel(tr("books.card.entries", name=chat.card.name, n=n) if chat is not None else tr("books.nochat"))
        self.card_label.setWordWrap(True)
        cl.addWidget(self.card_label)
        self.edit_btn = QPushButton(tr("books.card.edit"))
        self.edit_btn.setObjectName("editCardBook")
        self.edit_btn.setEnabled(chat is not None)
        self.edit_btn.clicked.connect(self.open_editor)
        cl.addWidget(self.edit_btn, 0, Qt.AlignmentFlag.AlignLeft)
        cl.addStretch(1)
        self.tabs.addTab(card, tr("books.tab.card"))
        lay.addWidget(self.tabs, 1)
        close = QPushButton(tr("books.close"))
        close.clicked.connect(self.accept)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        lay.addLayout(row)
        for lst in (self.chat_list, self.global_list):
            lst.changed.connect(self._reload)
        self.editor = None

    def _reload(self) -> None:
        if self.chat is None:
            return
        try:
            self.chat.reload_books()
        except RuntimeError as e:  # a beat is running: the files changed, the chat reads them when it may
            self.chat_list.error.setText(tr("books.err", error=show(e)))
            return
        self.booksChanged.emit()

    def open_editor(self):
        """The card's book in the editor (ui/book_editor.py)."""
        from .book_editor import BookEditorDialog

        self.editor = BookEditorDialog(self.chat, self)
        self.editor.saved.connect(self.booksChanged.emit)
        self.editor.saved.connect(lambda: self.card_label.setText(
            tr("books.card.entries", name=self.chat.card.name, n=len(self.chat.card_book().entries))))
        self.editor.open()
        return self.editor


def open_world_books(win: Any) -> WorldBooksDialog:
    """The main window's 世界书…: the dialog for the open chat (the global list works without one)."""
    chat = None if getattr(win, "is_demo", False) else getattr(win, "chat", None)
    dlg = WorldBooksDialog(chat, win)
    dlg.booksChanged.connect(lambda: win.statusBar().showMessage(tr("books.changed"), 8000))
    dlg.open()
    win._books_dialog = dlg
    return dlg
