"""世界书 (issue 17): the world books of the open chat and the global ones, each a list with on/off, 导入…
and 打开文件夹, plus the card's own book (opened in the editor, ``ui/dialogs/book_editor.py``) and the library books linked
to the card (SillyTavern's character lore, read by every chat of the card: ``Chat.linked_books`` /
``Chat.set_linked_books``, ``core/cards/book_links.py``).

Where the books live (``core/lore/books.py``): a chat's in ``<chat>/世界书``, the global ones (every chat) in
``<home>/世界书``; a book switched off moves to the ``未启用`` subfolder of its folder, which is not read (the global
folder's ``未启用`` is the library of books active nowhere, as the SillyTavern migration fills it). After a change
the chat re-reads its books (``Chat.reload_books``): the next beat's activation uses them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.lore.books import global_books_dir, import_book_file, list_book_files, set_book_enabled
from ..infra.i18n import register, show, tr
from ..infra.session import Session, session_or_own
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "books.menu": {"zh": "世界书…", "en": "World books…"},
    "books.title": {"zh": "世界书", "en": "World books"},
    "books.tab.chat": {"zh": "本对话", "en": "This chat"},
    "books.tab.global": {"zh": "全局（所有对话）", "en": "Global (every chat)"},
    "books.tab.card": {"zh": "角色卡", "en": "The card"},
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
    "books.filter": {"zh": "按名字查找…", "en": "Find by name…"},
    "books.sort.name": {"zh": "按名字", "en": "By name"},
    "books.sort.recent": {"zh": "最近改动", "en": "Recently changed"},
    "books.tip": {"zh": "{path}\n{size} KB · 改于 {date}", "en": "{path}\n{size} KB · changed {date}"},
    # the card's linked library books (SillyTavern's character lore: core/cards/book_links.py)
    "books.links.title": {"zh": "链接的世界书", "en": "Linked world books"},
    "books.links.hint": {"zh": "书库里链接到这张卡的世界书：这张卡的每个对话（包括新开的）都会读它们，"
                                "和 SillyTavern 的角色世界书（主世界书 + 附加世界书）一样。",
                         "en": "Library books linked to this card: every chat of the card, new ones included, reads "
                               "them, like SillyTavern's character lore (primary + additional books)."},
    "books.links.add": {"zh": "链接…", "en": "Link…"},
    "books.links.remove": {"zh": "取消链接", "en": "Unlink"},
    "books.links.pick": {"zh": "选择要链接的世界书", "en": "Choose a book to link"},
    "books.links.pick.label": {"zh": "书库里的世界书：", "en": "Books in the library:"},
    "books.links.none": {"zh": "（没有链接的世界书）", "en": "(no linked books)"},
    "books.links.nobooks": {"zh": "书库里没有可以链接的世界书（先在「全局」页导入）。",
                            "en": "The library has no book left to link (import one on the Global tab first)."},
    "books.links.primary": {"zh": "主", "en": "primary"},
    "books.links.state.read": {"zh": "这个对话在读", "en": "read in this chat"},
    "books.links.state.global": {"zh": "全局世界书，本来就在读", "en": "a global book, read anyway"},
    "books.links.state.chat": {"zh": "这个对话有自己的一份，用它的", "en": "this chat has its own copy, used instead"},
    "books.links.state.embedded": {"zh": "卡里已自带同样的条目，不重复读", "en": "the card carries the same entries, not read twice"},
    "books.links.state.missing": {"zh": "书库里没有这本", "en": "not in the library"},
    "books.links.state.broken": {"zh": "文件读不了", "en": "the file cannot be read"},
})



def _hint_list_error(lay: QVBoxLayout, hint: str, name: str) -> tuple[QListWidget, QLabel]:
    """A muted hint line, a list (object name ``name``) taking the room, and an error line under it, added to
    ``lay``; returns the list and the error label."""
    label = QLabel(hint)
    label.setWordWrap(True)
    set_role(label, "muted")
    lay.addWidget(label)
    lst = QListWidget()
    lst.setObjectName(name)
    lay.addWidget(lst, 1)
    error = QLabel("")
    error.setWordWrap(True)
    set_role(error, "error")
    lay.addWidget(error)
    return lst, error

def _stat(path: str) -> tuple[int, float]:
    """(size in bytes, mtime in s) of a book file; (0, 0.0) when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, 0.0
    return st.st_size, st.st_mtime


class BookList(QWidget):
    """One books folder as a checkable list. ``changed()`` after a book was switched or imported."""

    changed = Signal()

    def __init__(self, folder: Optional[Path], hint_key: str, name: str, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.folder = folder
        self.replace_same_name: Optional[Callable[[str], Optional[Path]]] = None
        lay = QVBoxLayout(self)
        find = QHBoxLayout()  # issue 26 §3: find and sort, as the card list has
        self.filter = QLineEdit()
        self.filter.setObjectName(name + "Filter")
        self.filter.setPlaceholderText(tr("books.filter"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(lambda _t: self.refresh())
        self.sort = QComboBox()
        self.sort.setObjectName(name + "Sort")
        self.sort.addItem(tr("books.sort.name"), "name")
        self.sort.addItem(tr("books.sort.recent"), "recent")
        self.sort.currentIndexChanged.connect(lambda _i: self.refresh())
        find.addWidget(self.filter, 1)
        find.addWidget(self.sort)
        lay.addLayout(find)
        self.list, self.error = _hint_list_error(lay, tr(hint_key), name)
        self.list.itemChanged.connect(self._toggled)
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
        every = list_book_files(self.folder) if self.folder is not None else []
        stats = {b.path: _stat(b.path) for b in every}
        query = self.filter.text().strip().casefold()
        books = [b for b in every if query in b.name.casefold()]
        if self.sort.currentData() == "recent":
            books.sort(key=lambda b: -stats[b.path][1])
        for b in books:
            it = QListWidgetItem(b.name)
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if b.enabled else Qt.CheckState.Unchecked)
            it.setData(Qt.ItemDataRole.UserRole, b.name)
            size, mtime = stats[b.path]
            it.setToolTip(tr("books.tip", path=b.path, size=max(1, round(size / 1024)),
                             date=time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))))
            self.list.addItem(it)
        if not books and not every:
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
        if self.replace_same_name is not None and (done := self.replace_same_name(path)) is not None:
            return done  # a new version of a library book (asked first: ui/roleplay/card_update.py)
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


class LinkedBooks(QWidget):
    """The card's linked library books (``Chat.linked_books``: name, state, primary) with 链接… and 取消链接;
    a change is stored beside the card (``Chat.set_linked_books``), so every chat of the card follows.
    ``changed()`` after the chat re-read its books."""

    changed = Signal()

    def __init__(self, chat: Optional[Chat], parent: Optional[QWidget] = None, session: Optional[Session] = None):
        super().__init__(parent)
        self.chat = chat
        self.session = session_or_own(session, self)  # set_links is broadcast; the list repaints from the notices
        self.session.changed.connect(lambda c: self.refresh() if c.settings else None)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 8, 0, 0)
        title = QLabel(tr("books.links.title"))
        set_role(title, "title")
        lay.addWidget(title)
        self.list, self.error = _hint_list_error(lay, tr("books.links.hint"), "linkedBooks")
        row = QHBoxLayout()
        self.add_btn = QPushButton(tr("books.links.add"))
        self.add_btn.setObjectName("linkBook")
        self.add_btn.clicked.connect(self.pick)
        self.remove_btn = QPushButton(tr("books.links.remove"))
        self.remove_btn.setObjectName("unlinkBook")
        self.remove_btn.clicked.connect(self.unlink_selected)
        row.addWidget(self.add_btn)
        row.addWidget(self.remove_btn)
        row.addStretch(1)
        lay.addLayout(row)
        for w in (self.add_btn, self.remove_btn, self.list):
            w.setEnabled(chat is not None)
        self.refresh()

    def names(self) -> list[str]:
        """The linked book names, primary first."""
        return [b.name for b in self.chat.linked_books()] if self.chat is not None else []

    def refresh(self) -> None:
        """Show the links as the chat loaded them."""
        self.list.clear()
        links = self.chat.linked_books() if self.chat is not None else []
        for b in links:
            label = f"{b.name}（{tr('books.links.primary')}）" if b.primary else b.name
            it = QListWidgetItem(f"{label} — {tr('books.links.state.' + b.state)}")
            it.setData(Qt.ItemDataRole.UserRole, b.name)
            it.setToolTip(b.path or b.name)
            self.list.addItem(it)
        if not links:
            it = QListWidgetItem(tr("books.links.none") if self.chat is not None else tr("books.nochat"))
            it.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(it)
        self.remove_btn.setEnabled(bool(links))

    def set_links(self, names: list[str]) -> bool:
        """Store ``names`` as the card's links and re-read the chat's books; False (said in the error line) when the
        chat refuses (a beat is running, the card has no folder, the disk)."""
        chat = self.chat
        if chat is None:  # the add/remove buttons are disabled without a chat
            return False
        try:
            chat.set_linked_books(names)
        except (RuntimeError, ValueError, OSError) as e:
            self.error.setText(tr("books.err", error=show(e)))
            return False
        self.error.setText("")
        self.session.broadcast(chat.last_changes)
        self.changed.emit()
        return True

    def link(self, name: str) -> bool:
        """Link the library book ``name`` (after the others)."""
        names = self.names()
        return name in names or self.set_links([*names, name])

    def unlink(self, name: str) -> bool:
        """Unlink ``name``."""
        return self.set_links([n for n in self.names() if n != name])

    def unlink_selected(self) -> None:
        it = self.list.currentItem()
        name = it.data(Qt.ItemDataRole.UserRole) if it is not None else None
        if name:
            self.unlink(name)

    def pick(self) -> None:
        """链接…: choose one of the library's books not linked yet."""
        if self.chat is None:
            return
        have = set(self.names())
        free = [n for n in self.chat.library_book_names() if n not in have]
        if not free:
            self.error.setText(tr("books.links.nobooks"))
            return
        name, ok = QInputDialog.getItem(self, tr("books.links.pick"), tr("books.links.pick.label"), free, 0, False)
        if ok and name:
            self.link(name)


class WorldBooksDialog(QDialog):
    """The chat's and the global world books, and the card's own. ``booksChanged()`` after the chat re-read them."""

    booksChanged = Signal()

    def __init__(self, chat: Optional[Chat], parent: Optional[QWidget] = None, session: Optional[Session] = None):
        super().__init__(parent)
        self.session = session_or_own(session, self)  # the linked-books part broadcasts and follows its notices
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
        self.links = LinkedBooks(chat, session=self.session)
        self.links.changed.connect(self.booksChanged.emit)
        cl.addWidget(self.links, 1)
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
        from ..roleplay.card_update import install_update_from_file  # issue 33 §4: a book replaced

        self.update_btn = install_update_from_file(self.global_list, self.session)
        self.chat_update_btn = install_update_from_file(self.chat_list, self.session)
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
        """The card's book in the editor (ui/dialogs/book_editor.py)."""
        from .book_editor import BookEditorDialog

        chat = self.chat
        if chat is None:  # the button is disabled without a chat
            return None
        self.editor = BookEditorDialog(chat, self)
        self.editor.saved.connect(self.booksChanged.emit)
        self.editor.saved.connect(lambda: self.card_label.setText(
            tr("books.card.entries", name=chat.card.name, n=len(chat.card_book().entries))))
        self.editor.open()
        return self.editor


def open_world_books(win: Any) -> WorldBooksDialog:
    """The main window's 世界书…: the dialog for the open chat (the global list works without one)."""
    chat = None if getattr(win, "is_demo", False) else getattr(win, "chat", None)
    dlg = WorldBooksDialog(chat, win, getattr(win, "session", None))
    dlg.booksChanged.connect(lambda: win.statusBar().showMessage(tr("books.changed"), 8000))
    dlg.open()
    win.books_dialog = dlg
    return dlg
