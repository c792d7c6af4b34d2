"""The card-update bar above the conversation (issue 33 §4): the card the shown chat plays was replaced in the library
(re-import, the card editor, ``liyuan card set``, another program).

The bar says what changed (``Chat.card_update``: fields, greetings, book entries, regex scripts, initial variables,
counted; 「查看改动」 lists them) and offers 「从下一拍用新版」 (``Chat.refresh_card``: the next prompt uses the new card;
its cached prefix changes once; the library kept the old version in the card's ``versions/``) or 「保持旧版」
(``Chat.keep_card``: this chat plays the version it read, also when opened again, until the card changes once
more — ``core/chat/card_keep.py``); in 「查看改动」 single changes can be checked and taken alone
(``Chat.take_card_changes``). Left alone, the next beat takes
the new version, as before. It looks when a chat is shown, after a notice naming the settings or the library, and
when the application becomes active again (the card may have been changed by another program). Strings: ``cu.``.

The same bar answers for the library world books the chat reads (global books, the card's linked library books;
``core/chat/book_update.py``) when one was replaced (updated from a file — :func:`install_update_from_file` puts
「从文件更新…」 on the global books list —, re-imported over, saved by an editor): 「世界书「X」已更新：条目 3 条、设置
1 处」 (and, when a constant entry changed, that the cached prefix changes once), 「查看改动」 with every entry
checkable, 「从下一拍用新版」 (``Chat.answer_book_update(name, "new")``; asked first when the chat plays its own kept
or merged copy, default No), 「保持旧版」 (``"old"``), and after 用新版 or 只用勾选的 a 「撤销」 that returns to the
version played before (the checkpoint in the library's version store). The card's update is shown first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...core.cards.update_diff import pick_key
from ...core.chat.book_update import key_name
from ...core.messages import message
from ..dialogs.dialogs import confirm
from ..infra.i18n import register, show, tr
from ..infra.tasks import LatestWins

if TYPE_CHECKING:  # pragma: no cover
    from ...core.cards.update_diff import BookDiff, CardDiff
    from ...core.chat import Chat
    from ...core.chat.book_update import BookUpdate

register({
    "cu.bar": {"zh": "角色卡「{name}」已更新：{what}。", "en": "The card “{name}” was updated: {what}."},
    "cu.fields": {"zh": "字段 {n} 处", "en": "fields: {n}"},
    "cu.greetings": {"zh": "开场白 {n} 处", "en": "greetings: {n}"},
    "cu.entries": {"zh": "世界书条目 {n} 条", "en": "book entries: {n}"},
    "cu.regex": {"zh": "正则脚本 {n} 个", "en": "regex scripts: {n}"},
    "cu.variables": {"zh": "初始变量 {n} 个", "en": "initial variables: {n}"},
    "cu.show": {"zh": "查看改动", "en": "Show changes"},
    "cu.use": {"zh": "从下一拍用新版", "en": "Use the new version from the next beat"},
    "cu.keep": {"zh": "保持旧版", "en": "Keep the old version"},
    "cu.used": {"zh": "下一拍起用新版角色卡（提示词缓存的前缀会变一次；旧版留在卡的 versions/ 里）。",
                "en": "The new card is used from the next beat (the prompt's cached prefix changes once; the old "
                      "version stays in the card's versions/)."},
    "cu.kept": {"zh": "这个对话继续用旧版角色卡（重新打开也是；卡再更新时会再问）。",
                "en": "This chat keeps the old card, also when opened again (a later update asks again)."},
    "cu.title": {"zh": "角色卡的改动", "en": "What changed in the card"},
    "cu.take": {"zh": "只用勾选的改动", "en": "Use only the checked changes"},
    "cu.close": {"zh": "关闭", "en": "Close"},
    "cu.pick.hint": {"zh": "勾选要用的改动（其余保持这个对话现在用的版本）；初始变量随它所在的世界书条目。",
                     "en": "Check the changes to use (the rest stays as this chat plays it); initial variables go with "
                           "their world-book entry."},
    "cu.picked": {"zh": "下一拍起用勾选的 {n} 处改动，其余保持旧版。",
                  "en": "The {n} checked change(s) are used from the next beat; the rest stays as it was."},
    "cu.added": {"zh": "新增", "en": "added"},
    "cu.removed": {"zh": "删除", "en": "removed"},
    "cu.changed": {"zh": "修改", "en": "changed"},
    # library world books (core/chat/book_update.py)
    "cu.settings": {"zh": "设置 {n} 处", "en": "settings: {n}"},
    "cu.book.bar": {"zh": "世界书「{name}」已更新：{what}。", "en": "The world book “{name}” was updated: {what}."},
    "cu.book.prefix": {"zh": "改动里有常驻条目：提示词缓存的前缀会变一次。",
                       "en": " Constant entries changed: the prompt's cached prefix changes once."},
    "cu.book.title": {"zh": "世界书的改动", "en": "What changed in the world book"},
    "cu.book.pick.hint": {"zh": "勾选要用的条目改动（其余保持这个对话现在用的版本）；设置一起取。",
                          "en": "Check the entry changes to use (the rest stays as this chat plays it); the settings "
                                "are taken together."},
    "cu.book.replace_kept": {"zh": "这个对话在用世界书「{name}」自己保留（或挑选合并）的版本。换成书库的新版吗？"
                                   "（可以用「撤销」回来）",
                             "en": "This chat plays its own kept (or merged) version of the world book “{name}”. "
                                   "Use the library's new version instead? (Undo brings it back.)"},
    "cu.undo": {"zh": "撤销", "en": "Undo"},
    "cu.book.more": {"zh": "（还有 {n} 本世界书也更新了，答完这本接着问。）",
                     "en": " ({n} more updated world book(s) follow once this one is answered.)"},
    "cu.book.update_file": {"zh": "从文件更新…", "en": "Update from file…"},
    "cu.book.update_pick": {"zh": "选择世界书「{name}」的新版本（.json）", "en": "Choose the new version of “{name}” (.json)"},
    "cu.book.update_ask": {"zh": "用「{file}」替换世界书「{name}」？用它的对话会收到改动提示；旧版留在历史版本里。",
                           "en": "Replace the world book “{name}” by “{file}”? Chats that use it are shown what "
                                 "changed; the old version is kept."},
    "cu.book.update_none": {"zh": "先在列表里选一本世界书。", "en": "Select a world book in the list first."},
    "cu.book.reimport_ask": {"zh": "这里已经有世界书「{name}」。用这个文件替换它（用它的对话会收到改动提示，旧版留在历史版本里）？"
                                   "选「否」则另存为一本新书。",
                             "en": "There is a world book “{name}” here already. Replace it by this file (chats that "
                                   "use it are shown what changed; the old version is kept)? No imports it as a new "
                                   "book."},
})

AREAS = ("fields", "greetings", "entries", "regex", "variables", "settings")
VALUE_AREAS = ("fields", "greetings", "variables", "settings")


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    text = text.replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")


def summary(diff: CardDiff | BookDiff) -> str:
    """「字段 1 处、世界书条目 4 条…」: the areas that changed, counted."""
    return tr("sep.list").join(tr(f"cu.{a}", n=n) for a, n in diff.counts().items())


def change_line(area: str, c: Any) -> str:
    """One change as a line: ``key（label）: kind [parts]  old → new`` (values for text areas only)."""
    label = f"（{c.label}）" if c.label and c.label != c.key else ""
    parts = f" [{', '.join(c.parts)}]" if c.parts else ""
    values = f"  {_short(c.old)} → {_short(c.new)}" if area in VALUE_AREAS else ""
    return f"{c.key}{label}: {tr('cu.' + c.kind)}{parts}{values}"


def change_detail(c: Any, limit: int = 300) -> str:
    """What one change holds, for its tooltip: each changed part ``part: old → new`` (a book entry's content, keys,
    order…), else the added or removed item's text (an entry's content, a script's replacement) or value."""
    if c.kind == "changed" and isinstance(c.old, dict) and isinstance(c.new, dict):
        return "\n".join(f"{p}: {_short(c.old.get(p), limit)} → {_short(c.new.get(p), limit)}" for p in c.parts)
    if c.kind == "changed":
        return f"{_short(c.old, limit)} → {_short(c.new, limit)}"
    value = c.new if c.kind == "added" else c.old
    if isinstance(value, dict):
        value = value.get("content") or value.get("replaceString") or ""
    return _short(value, limit)


def details(diff: CardDiff | BookDiff) -> str:
    """Every change, one line each, grouped by area (:func:`change_line`, indented under the area's count)."""
    lines: list[str] = []
    for area in AREAS:
        items = getattr(diff, area, [])
        if items:
            lines.append(tr(f"cu.{area}", n=len(items)))
            lines += [f"  {change_line(area, c)}" for c in items]
    return "\n".join(lines)


class PickDialog(QDialog):
    """Every change of a card (or world-book) update, one line each (the :func:`details` lines), those that can be
    taken alone checkable (a field, all greetings, a book entry — initial variables live in theirs —, a regex
    script; a world book's settings together). ``book``: the strings of a world book."""

    def __init__(self, diff: CardDiff | BookDiff, parent: Optional[QWidget] = None, book: bool = False):
        super().__init__(parent)
        self.setObjectName("cardUpdatePick")
        self.setWindowTitle(tr("cu.book.title" if book else "cu.title"))
        self.list = QListWidget()
        seen: set[str] = set()
        for area in AREAS:
            for c in getattr(diff, area, []):
                it = QListWidgetItem(change_line(area, c))
                it.setToolTip(change_detail(c))
                key = pick_key(area, c)
                if area != "variables" and key not in seen:
                    seen.add(key)
                    it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    it.setCheckState(Qt.CheckState.Unchecked)
                    it.setData(Qt.ItemDataRole.UserRole, key)
                self.list.addItem(it)
        take = QPushButton(tr("cu.take"))
        take.setObjectName("cardUpdateTake")
        take.clicked.connect(lambda _=False: self.accept())
        close = QPushButton(tr("cu.close"))
        close.clicked.connect(lambda _=False: self.reject())
        close.setDefault(True)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(take)
        row.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(tr("cu.book.pick.hint" if book else "cu.pick.hint")))
        lay.addWidget(self.list, 1)
        lay.addLayout(row)
        self.resize(640, 420)

    def picks(self) -> list[str]:
        """The keys of the checked changes."""
        out = []
        for i in range(self.list.count()):
            it = self.list.item(i)
            if it is not None and it.checkState() == Qt.CheckState.Checked and it.data(Qt.ItemDataRole.UserRole):
                out.append(str(it.data(Qt.ItemDataRole.UserRole)))
        return out


class CardUpdateBar(QFrame):
    """The bar (module doc); hidden while the shown chat's card and library books are the ones it last used."""

    def __init__(self, session: Any, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.session = session
        self.chat: Optional[Chat] = None
        self.diff: Optional[CardDiff | BookDiff] = None
        self.book: Optional[BookUpdate] = None  # the world-book update shown (None: the card's, or nothing)
        self.undo_name = ""  # the key of a world book just taken in a newer version: 撤销 is offered
        self.undo_text = ""  # what was done to it (the bar's text while 撤销 is offered)
        self.pick_dialog: Optional[PickDialog] = None
        self.confirm: Callable[[str, str], bool] = lambda title, text: confirm(self, title, text)
        self.finder = LatestWins(self, lane="work")  # the book comparison, off the UI thread
        self.finder.done.connect(self._books_found)
        self.setObjectName("cardUpdateBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.show_btn = QPushButton(tr("cu.show"))
        self.show_btn.setObjectName("cardUpdateShow")
        self.use_btn = QPushButton(tr("cu.use"))
        self.use_btn.setObjectName("cardUpdateUse")
        self.keep_btn = QPushButton(tr("cu.keep"))
        self.keep_btn.setObjectName("cardUpdateKeep")
        self.undo_btn = QPushButton(tr("cu.undo"))
        self.undo_btn.setObjectName("cardUpdateUndo")
        self.dismiss_btn = QPushButton(tr("cu.close"))
        self.dismiss_btn.setObjectName("cardUpdateDismiss")
        self.dismiss_btn.clicked.connect(lambda _=False: self.dismiss())
        self.show_btn.clicked.connect(lambda _=False: self.show_details())
        self.use_btn.clicked.connect(lambda _=False: self.use_new())
        self.keep_btn.clicked.connect(lambda _=False: self.keep_old())
        self.undo_btn.clicked.connect(lambda _=False: self.undo())
        lay = QVBoxLayout(self)  # the text on its own line: the conversation pane is narrow
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(self.label)
        row = QHBoxLayout()
        row.addStretch(1)
        for b in (self.show_btn, self.use_btn, self.keep_btn, self.undo_btn, self.dismiss_btn):
            row.addWidget(b)
        lay.addLayout(row)
        self.hide()

    def set_chat(self, chat: Optional[Chat]) -> None:
        """Another chat is shown (or none): look at its card and library books."""
        self.chat = chat
        self.undo_name = ""
        self.book = self.diff = None
        self.hide()
        self.check()

    def _buttons(self, undo: bool) -> None:
        for b in (self.show_btn, self.use_btn, self.keep_btn):
            b.setVisible(not undo)
        self.undo_btn.setVisible(undo)
        self.dismiss_btn.setVisible(undo)

    def dismiss(self) -> None:
        """关闭 of the 撤销 offer: the bar goes (the version taken stays)."""
        self.undo_name = ""
        self.hide()

    def check(self) -> None:
        """Show the bar when the shown chat's card, or a library book it reads, changed on disk (the card first);
        after a world book was taken in its new version, offer 撤销; else hide it. The books are compared on a
        worker (a big book's diff takes seconds): the bar keeps what it shows until their answer arrives."""
        chat = self.chat
        idle = chat is not None and not chat.beat_running()
        self.diff = chat.card_update() if chat is not None and idle else None
        if chat is not None and self.diff is not None and not self.diff.empty():
            self.finder.cancel()
            self.book, self.undo_name = None, ""
            self._buttons(undo=False)
            self.label.setText(tr("cu.bar", name=chat.card.name, what=summary(self.diff)))
            self.show()
            return
        if chat is None or not idle:
            self.finder.cancel()
            self.book = self.diff = None
            self.hide()
            return
        self.finder.start(lambda _cancelled: (chat, chat.book_updates()))

    def _books_found(self, gen: int, found: Any) -> None:
        """The worker's answer: (the chat, its book updates) — shown when it is still the shown chat's."""
        chat, ups = found
        if gen != self.finder.gen or chat is not self.chat:
            return
        self.finder.running = False
        self.book = ups[0] if ups else None
        self.diff = self.book.diff if self.book is not None else None
        if self.book is None:
            if self.undo_name:
                self.label.setText(self.undo_text)
                self._buttons(undo=True)
                self.show()
            else:
                self.hide()
            return
        self.undo_name = ""
        self._buttons(undo=False)
        prefix = tr("cu.book.prefix") if self.book.in_prefix else ""
        more = tr("cu.book.more", n=len(ups) - 1) if len(ups) > 1 else ""
        self.label.setText(tr("cu.book.bar", name=self.book.name, what=summary(self.book.diff)) + prefix + more)
        self.show()

    def app_state(self, state: Qt.ApplicationState) -> None:
        """The application became active again: the card may have been changed by another program."""
        if state == Qt.ApplicationState.ApplicationActive:
            self.check()

    def show_details(self) -> None:
        """The changes in a dialog (:class:`PickDialog`): closing it changes nothing; 「只用勾选的改动」 takes the
        checked ones (``Chat.take_card_changes`` / ``Chat.answer_book_update(name, "pick")``) and keeps the rest as
        the chat plays it."""
        if self.diff is None or self.chat is None:
            return
        dlg = PickDialog(self.diff, self, book=self.book is not None)
        self.pick_dialog = dlg
        if dlg.exec() != QDialog.DialogCode.Accepted or not dlg.picks():
            return
        if self.book is not None:
            self.answer_book("pick", dlg.picks())
            return
        chat = self.chat
        try:
            chat.take_card_changes(dlg.picks())
        except (OSError, RuntimeError, ValueError) as e:  # CardError is a ValueError
            self.status(show(e))
            return
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.picked", n=len(dlg.picks())))

    def answer_book(self, how: str, picks: Optional[list[str]] = None) -> None:
        """Answer the shown world-book update (``Chat.answer_book_update``): ``new`` (asked first when the chat
        plays its own kept or merged copy, default No), ``old``, ``pick``; then 撤销 is offered for new / pick."""
        chat, u = self.chat, self.book
        if chat is None or u is None:
            return
        if how == "new" and u.kept and not self.confirm(tr("cu.book.title"), tr("cu.book.replace_kept", name=u.name)):
            return
        try:
            chat.answer_book_update(u.key, how, picks)
        except KeyError:  # answered meanwhile (a beat took it, another program changed the book again)
            self.check()
            return
        except (OSError, RuntimeError, ValueError) as e:
            self.status(show(e))
            return
        said = {"new": message("book_update.used", name=u.name), "old": message("book_update.kept", name=u.name),
                "pick": message("book_update.picked", name=u.name, n=len(picks or []))}[how]
        self.undo_name = u.key if how in ("new", "pick") else ""
        self.undo_text = show(said)
        self.hide()  # until the books are compared again (撤销 then)
        self.session.broadcast(chat.last_changes)
        self.check()
        self.status(show(said))

    def undo(self) -> None:
        """撤销: the world book just taken goes back to the version the chat played before."""
        chat, name = self.chat, self.undo_name
        if chat is None or not name:
            return
        self.undo_name = ""
        try:
            chat.answer_book_update(name, "undo")
        except KeyError:  # nothing left to undo
            self.check()
            return
        except (OSError, RuntimeError, ValueError) as e:
            self.status(show(e))
            return
        self.hide()
        self.session.broadcast(chat.last_changes)
        self.check()
        self.status(show(message("book_update.undone", name=key_name(name))))

    def use_new(self) -> None:
        """From the next beat, the new version."""
        chat = self.chat
        if chat is None:
            return
        if self.book is not None:
            self.answer_book("new")
            return
        chat.refresh_card()
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.used"))

    def keep_old(self) -> None:
        """This chat keeps the version it plays (kept in its folder)."""
        chat = self.chat
        if chat is None:
            return
        if self.book is not None:
            self.answer_book("old")
            return
        try:
            chat.keep_card()
        except OSError as e:
            self.status(str(e))
            return
        self.session.broadcast(chat.last_changes)
        self.hide()
        self.status(tr("cu.kept"))

    def status(self, text: str) -> None:
        """Say ``text`` in the window's status bar."""
        win = self.window()
        bar = getattr(win, "statusBar", None)
        if callable(bar):
            bar().showMessage(show(text), 8000)


def update_book_from_file(books: Any, session: Any, name: str, path: str, ask: bool = True) -> bool:
    """Replace the book ``name`` of the books list ``books`` (``ui/dialogs/world_books.BookList``: the global
    folder — the library — or the chat's) by the file ``path`` (``chat.book_update.update_book_file``: checked
    first, the old version kept), asked first (default No) unless ``ask`` is false; then the list re-reads, the open
    chat re-reads its books (the list's ``changed``) and a library notice lets the card-update bar show what
    changed. True when replaced."""
    from pathlib import Path

    from ...core.chat.book_update import update_book_file
    from ...core.chat.changes import Changes

    if books.folder is None:
        return False
    if ask and not confirm(books, tr("cu.book.title"), tr("cu.book.update_ask", name=name, file=Path(path).name)):
        return False
    try:
        update_book_file(books.folder, name, Path(path))
    except (OSError, ValueError) as e:  # BookFileError is a ValueError
        books.error.setText(show(e))
        return False
    books.error.setText("")
    books.refresh()
    books.changed.emit()
    session.broadcast(Changes.of("library"))
    return True


def reimport(books: Any, session: Any, path: str) -> Optional[Any]:
    """导入… of a file named like a book of the list ``books`` (``镇子.json`` when it has 「镇子」, on or off): asked
    whether it replaces that book (:func:`update_book_from_file`; the chats that read it are shown what changed) —
    No (the default) imports it beside as before (「镇子-2」). Returns the file replaced, or None to import as
    usual."""
    from pathlib import Path

    from ...core.paths import books_off_name

    name = Path(path).stem
    folder = books.folder
    places = [folder / f"{name}.json", folder / books_off_name(folder) / f"{name}.json"] if folder is not None else []
    if not any(p.is_file() for p in places):
        return None
    if not confirm(books, tr("cu.book.title"), tr("cu.book.reimport_ask", name=name)):
        return None
    done = update_book_from_file(books, session, name, path, ask=False)
    return next((p for p in places if p.is_file()), None) if done else None


def install_update_from_file(books: Any, session: Any) -> QPushButton:
    """Put 「从文件更新…」 beside 导入… of the books list ``books`` (the global one or the chat's): the selected book
    is replaced by a file (:func:`update_book_from_file`), and 导入… of a file named like one of its books offers to
    replace it (:func:`reimport`). Returns the button (``bookUpdateFromFile``)."""
    from PySide6.QtWidgets import QFileDialog

    btn = QPushButton(tr("cu.book.update_file"))
    btn.setObjectName("bookUpdateFromFile")

    def pick() -> None:
        it = books.list.currentItem()
        name = it.data(Qt.ItemDataRole.UserRole) if it is not None else None
        if not name:
            books.error.setText(tr("cu.book.update_none"))
            return
        path, _ = QFileDialog.getOpenFileName(books, tr("cu.book.update_pick", name=name), "", "JSON (*.json)")
        if path:
            update_book_from_file(books, session, str(name), path)

    btn.clicked.connect(lambda _=False: pick())
    books.replace_same_name = lambda path: reimport(books, session, path)
    lay = books.layout()
    for i in range(lay.count()):
        row = lay.itemAt(i).layout()
        if row is not None and row.indexOf(books.import_btn) >= 0:
            row.insertWidget(row.indexOf(books.import_btn) + 1, btn)
    btn.setEnabled(books.folder is not None)
    return btn


def install_card_update(window: Any) -> CardUpdateBar:
    """Put the bar above the conversation of ``window`` (kept as ``window.card_update_bar``) and wire it to the
    session (chat shown, notices naming settings or the library) and to the application becoming active."""
    bar = CardUpdateBar(window.session)
    window.view.parentWidget().layout().insertWidget(0, bar)
    window.session.chatShown.connect(bar.set_chat)
    window.session.changed.connect(lambda c: bar.check() if c.settings or c.library else None)
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.applicationStateChanged.connect(bar.app_state)  # a bound slot: dropped with the bar
    window.card_update_bar = bar
    return bar


__all__ = ["CardUpdateBar", "PickDialog", "change_detail", "change_line", "details", "install_card_update", "install_update_from_file",
           "summary", "update_book_from_file"]
