"""Managing chats and cards in the window (issue 17 "Manage"), on top of ``core.chat.manage``:

* the card list's context menu: a chat — 打开, 改名…, 复制为新对话, 删除（移到回收站）; a card — 删除角色卡（连同对话，
  移到回收站）; the conversation's context menu — 从这里新建对话 (a copy of the branch up to that message);
* 回收站… (app menu): what was deleted, 恢复 / 永久删除;
* re-importing a card that exists asks 替换 / 保留两个 / 取消 (:func:`import_asking`; 替换 keeps the old card files
  in the 回收站 and the card's chats);
* the card list follows the data folder: a QFileSystemWatcher on ``cards/`` and each card's ``对话/`` refreshes it
  (debounced) when a folder appears, goes or is renamed — a chat made by ``liyuan chat`` shows up by itself.

The open chat is never left pointing at a moved folder: renaming it reopens it under the new name, deleting it
closes it first. Nothing here runs while a beat runs (the commands say so in the status bar).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QFileSystemWatcher, QPoint, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from ...core.cards import CardError, library
from ...core.chat import manage
from ...core.chat.changes import LIBRARY
from ...core.session.tree import SessionError
from ..dialogs.dialogs import confirm
from ..infra.i18n import language, register, show, tr
from ..roleplay import script_buttons

log = logging.getLogger(__name__)

register({
    "manage.open": {"zh": "打开", "en": "Open"},
    "manage.rename": {"zh": "改名…", "en": "Rename…"},
    "manage.rename.prompt": {"zh": "对话的新名字：", "en": "New name for the chat:"},
    "manage.rename.card.prompt": {"zh": "角色卡的新名字（它的对话照常打开）：", "en": "New name for the card (its chats keep working):"},
    "manage.duplicate": {"zh": "复制为新对话", "en": "Duplicate as a new chat"},
    "manage.branch.here": {"zh": "从这里新建对话", "en": "New chat from here"},
    "manage.delete.chat": {"zh": "删除（移到回收站）", "en": "Delete (to the Trash)"},
    "manage.delete.card": {"zh": "删除角色卡（连同它的对话，移到回收站）", "en": "Delete card (with its chats, to the Trash)"},
    "manage.confirm.chat": {"zh": "把对话「{name}」移到回收站？可以在「回收站…」里恢复。",
                            "en": "Move the chat \"{name}\" to the Trash? It can be restored from Trash…"},
    "manage.confirm.card": {"zh": "把角色卡「{name}」和它的 {n} 个对话移到回收站？可以在「回收站…」里恢复。",
                            "en": "Move the card \"{name}\" and its {n} chats to the Trash? It can be restored from Trash…"},
    "manage.busy": {"zh": "正在生成，等这一拍结束再整理对话", "en": "A beat is running; wait for it to finish"},
    "manage.failed": {"zh": "没做成：{err}", "en": "Not done: {err}"},
    "manage.renamed": {"zh": "已改名为「{name}」", "en": "Renamed to \"{name}\""},
    "manage.duplicating": {"zh": "正在复制对话…", "en": "Copying the chat…"},
    "manage.duplicated": {"zh": "已复制为「{name}」", "en": "Copied as \"{name}\""},
    "manage.deleted": {"zh": "已移到回收站：{name}", "en": "Moved to the Trash: {name}"},
    "manage.restored": {"zh": "已恢复：{name}", "en": "Restored: {name}"},
    "manage.trash": {"zh": "回收站…", "en": "Trash…"},
    "manage.trash.title": {"zh": "回收站", "en": "Trash"},
    "manage.trash.col.name": {"zh": "名字", "en": "Name"},
    "manage.trash.col.kind": {"zh": "类型", "en": "Kind"},
    "manage.trash.col.from": {"zh": "原位置", "en": "From"},
    "manage.trash.col.when": {"zh": "删除时间", "en": "Deleted"},
    "manage.trash.kind.chat": {"zh": "对话", "en": "Chat"},
    "manage.trash.kind.card": {"zh": "角色卡", "en": "Card"},
    "manage.trash.restore": {"zh": "恢复", "en": "Restore"},
    "manage.trash.purge": {"zh": "永久删除", "en": "Delete forever"},
    "manage.trash.purge.confirm": {"zh": "永久删除选中的 {n} 项？这一步不能撤销。",
                                   "en": "Delete the {n} selected items forever? This cannot be undone."},
    "manage.trash.empty": {"zh": "回收站是空的。", "en": "The Trash is empty."},
    "manage.trash.empty_all": {"zh": "清空回收站", "en": "Empty the Trash"},
    "manage.trash.empty_all.confirm": {"zh": "永久删除回收站里的全部 {n} 项？这一步不能撤销。",
                                       "en": "Delete all {n} items in the Trash forever? This cannot be undone."},
    "manage.reimport.title": {"zh": "角色卡已存在", "en": "Card already exists"},
    "manage.reimport.text": {"zh": "资料库里已经有角色卡「{name}」，和这个文件不一样。\n\n替换：用新文件替换卡片（对话都保留，旧卡片文件放进回收站）。\n保留两个：新卡另存一份。",
                             "en": "The library already has a card \"{name}\" that differs from this file.\n\nReplace: the new file "
                                   "replaces the card (its chats stay; the old card files go to the Trash).\nKeep both: the "
                                   "new card is added beside it."},
    "manage.reimport.replace": {"zh": "替换", "en": "Replace"},
    "manage.reimport.keep": {"zh": "保留两个", "en": "Keep both"},
})


# -- asking (module functions, so a test can answer in place of the user) -------------------------------------------
def ask_text(parent: Any, title: str, label: str, text: str) -> Optional[str]:
    """A line of text from the user, or None when cancelled."""
    value, ok = QInputDialog.getText(parent, title, label, text=text)
    return value if ok else None


def ask_yes(parent: Any, text: str, yes: str = "") -> bool:
    """A yes/no question before a destructive step (``dialogs.confirm``: No is the default, Enter and Esc answer
    No); ``yes`` names the action on the yes button."""
    return confirm(parent, tr("app.title"), text, yes)


def ask_reimport(parent: Any, name: str) -> str:
    """replace | keep | cancel for a card that exists already."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(tr("manage.reimport.title"))
    box.setText(tr("manage.reimport.text", name=name))
    rep = box.addButton(tr("manage.reimport.replace"), QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton(tr("manage.reimport.keep"), QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(keep)
    box.exec()
    clicked = box.clickedButton()
    return "replace" if clicked is rep else "keep" if clicked is keep else "cancel"


def import_asking(win: Any, path: str) -> Optional[library.CardRef]:
    """Import a card file; when the library has a different card of that name, ask 替换 / 保留两个 / 取消 (None
    when cancelled). Raises CardError / OSError like ``library.import_card``."""
    old = library.existing_card(path)
    if old is None:
        return library.import_card(path)
    choice = ask_reimport(win, old.name)
    if choice == "cancel":
        return None
    if choice == "keep":
        return library.import_card(path)
    ref, _item = manage.replace_card(Path(path))
    if win.card_ref is not None and Path(win.card_ref.dir) == Path(ref.dir) and win.chat_ref is not None \
            and not win.busy:
        win.open_chat(ref, win.chat_ref, quiet=True)  # the open chat plays the new card from now on
    return ref


def reimport_choice(win: Any, path: str) -> Optional[str]:
    """For an import that runs on a worker (ui/window/chat_work.py): ask on the UI thread first. "new" (no such card yet,
    or the very same file), "keep", "replace", or None when the user cancelled. Reading the card's name reads the
    file once (CardError / OSError propagate like the import's)."""
    old = library.existing_card(path)
    if old is None:
        return "new"
    choice = ask_reimport(win, old.name)
    return None if choice == "cancel" else choice


def import_with_choice(path: str, choice: str) -> library.CardRef:
    """The import itself for a :func:`reimport_choice` answer (no Qt: safe on a worker thread)."""
    if choice == "replace":
        return manage.replace_card(Path(path))[0]
    return library.import_card(path)


def start_import(win: Any, path: str) -> bool:
    """Before the window's card import (a worker job that keeps both on a name clash): ask about a card that
    exists. True — go on with the normal import (a new card, the same file again, or 保留两个); False — nothing
    more to do (cancelled, or 替换 done here: the card files replaced, the old ones in the 回收站, the list
    refreshed). A file that is not a card returns True, so the normal import reports it."""
    try:
        choice = reimport_choice(win, path)
    except (CardError, OSError):
        return True
    if choice in ("new", "keep"):
        return True
    if choice == "replace":
        try:
            ref = import_with_choice(path, "replace")
        except (CardError, OSError) as e:
            QMessageBox.warning(win, tr("app.title"), tr("err.import", error=e))
            return False
        win.session.broadcast(LIBRARY)
        win.card_ref = ref
        win.statusBar().showMessage(import_done_message(ref), 10000 if ref.notes else 6000)
    return False


def import_done_message(ref: library.CardRef) -> str:
    """The status line after a card import: 「已导入…」 and what the import has to tell (``CardRef.notes``, e.g. a
    linked world book the library lacks), in the window's language."""
    return "　".join([tr("import.card.done", name=ref.name), *(show(n) for n in ref.notes)])


# -- the commands ---------------------------------------------------------------------------------------------------
class Manager:
    """The manage commands of one main window (module doc)."""

    def __init__(self, win: Any):
        self.win = win
        self.trash_dialog: Optional[TrashDialog] = None

    def _guard(self) -> bool:
        if self.win.busy:
            self.win.statusBar().showMessage(tr("manage.busy"), 6000)
            return False
        return True

    def _failed(self, e: Exception) -> None:
        QMessageBox.warning(self.win, tr("app.title"), tr("manage.failed", err=e))

    def _is_open(self, chat_dir: Path) -> bool:
        ref = self.win.chat_ref
        return ref is not None and Path(ref.dir) == Path(chat_dir)

    def close_chat(self) -> None:
        """Nothing open any more (the chat shown went to the trash)."""
        self.win.close_chat()  # the window's one path for "no chat is shown": every pane empties

    def rename_chat(self, card: library.CardRef, chat: library.ChatRef, name: Optional[str] = None) -> Optional[Path]:
        """改名…: ask for a name (unless given) and rename; the open chat is reopened under it."""
        if not self._guard():
            return None
        if name is None:
            name = ask_text(self.win, tr("manage.rename"), tr("manage.rename.prompt"), chat.name)
            if name is None:
                return None
        was_open = self._is_open(Path(chat.dir))
        try:
            new = manage.rename_chat(Path(chat.dir), name)
        except (manage.ManageError, OSError) as e:
            self._failed(e)
            return None
        if was_open:
            self.win.open_chat(card, library.ChatRef(name=new.name, dir=str(new), mode=chat.mode), quiet=True)
        self.win.session.broadcast(LIBRARY)
        self.win.statusBar().showMessage(tr("manage.renamed", name=new.name), 6000)
        return new

    def rename_card(self, card: library.CardRef, name: Optional[str] = None) -> Optional[library.CardRef]:
        """改名… on a card: ask for a name (unless given) and rename its folder (``chat.manage.rename_card``); a chat
        of it that is open is reopened from the new folder."""
        if not self._guard():
            return None
        if name is None:
            name = ask_text(self.win, tr("manage.rename"), tr("manage.rename.card.prompt"), card.name)
            if name is None:
                return None
        open_ref = self.win.chat_ref
        was_open = self.win.card_ref is not None and Path(self.win.card_ref.dir) == Path(card.dir) and open_ref is not None
        try:
            new = manage.rename_card(card, name)
        except (manage.ManageError, OSError) as e:
            self._failed(e)
            return None
        if was_open:
            from ...core.paths import chats_dir

            moved = chats_dir(new.dir) / Path(open_ref.dir).name
            self.win.open_chat(new, library.ChatRef(name=moved.name, dir=str(moved), mode=open_ref.mode), quiet=True)
        elif self.win.card_ref is not None and Path(self.win.card_ref.dir) == Path(card.dir):
            self.win.card_ref = new
        self.win.session.broadcast(LIBRARY)
        self.win.statusBar().showMessage(tr("manage.renamed", name=new.name), 6000)
        return new

    def duplicate(self, card: library.CardRef, chat_dir: Path, upto: Optional[str] = None,
                  open_it: bool = True) -> Any:
        """复制为新对话 / 从这里新建对话: the copy is made off the UI thread (a long chat's session file is read
        and written whole; ``ui.tasks.run_in_worker``) and then (by default) opened. Returns the task (None when
        refused); without a running event loop the copy is made at once and its folder returned."""
        if not self._guard():
            return None

        def done(new: Path) -> Path:
            self.win.session.broadcast(LIBRARY)
            if open_it:
                self.win.open_chat(card, library.ChatRef(name=new.name, dir=str(new)))
            self.win.statusBar().showMessage(tr("manage.duplicated", name=new.name), 6000)
            return new

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            try:
                return done(manage.duplicate_chat(Path(chat_dir), upto, language=language()))
            except (manage.ManageError, SessionError, OSError) as e:
                self._failed(e)
                return None

        async def go() -> Optional[Path]:
            from ..infra.tasks import WorkCancelled, run_in_worker

            try:
                new = await run_in_worker(self.win, lambda _w: manage.duplicate_chat(Path(chat_dir), upto, language=language()),
                                          label=tr("manage.duplicating"), cancellable=False)
            except WorkCancelled:
                return None
            except (manage.ManageError, SessionError, OSError) as e:
                self._failed(e)
                return None
            return done(new)

        return asyncio.ensure_future(go())

    def branch_from(self, entry_id: str) -> Optional[Path]:
        """「从这里新建对话」 on a message of the open chat."""
        win = self.win
        if win.chat_ref is None or win.card_ref is None:
            return None
        return self.duplicate(win.card_ref, Path(win.chat_ref.dir), entry_id)

    def delete_chat(self, chat: library.ChatRef, confirm: bool = True) -> Optional[manage.TrashItem]:
        """删除: to the 回收站 after a question; the open chat is closed first."""
        if not self._guard() or (confirm and not ask_yes(self.win, tr("manage.confirm.chat", name=chat.name),
                                                         tr("manage.delete.chat"))):
            return None
        if self._is_open(Path(chat.dir)):
            self.close_chat()
        try:
            item = manage.delete_chat(Path(chat.dir))
        except (manage.ManageError, OSError) as e:
            self._failed(e)
            return None
        self.win.session.broadcast(LIBRARY)
        self.win.statusBar().showMessage(tr("manage.deleted", name=chat.name), 6000)
        return item

    def delete_card(self, card: library.CardRef, confirm: bool = True) -> Optional[manage.TrashItem]:
        """删除角色卡: the card and its chats to the 回收站 after a question."""
        n = len(library.list_chats(card))
        if not self._guard() or (confirm and not ask_yes(self.win, tr("manage.confirm.card", name=card.name, n=n),
                                                         tr("manage.delete.card"))):
            return None
        if self.win.card_ref is not None and Path(self.win.card_ref.dir) == Path(card.dir):
            if self.win.chat_ref is not None:
                self.close_chat()
            self.win.card_ref = None
        try:
            item = manage.delete_card(card)
        except (manage.ManageError, OSError) as e:
            self._failed(e)
            return None
        self.win.session.broadcast(LIBRARY)
        self.win.statusBar().showMessage(tr("manage.deleted", name=card.name), 6000)
        return item

    def show_trash(self) -> "TrashDialog":
        """回收站…"""
        if self.trash_dialog is None:
            self.trash_dialog = TrashDialog(self.win)
        self.trash_dialog.refresh()
        self.trash_dialog.show()
        self.trash_dialog.raise_()
        return self.trash_dialog

    # -- the card list's context menu ------------------------------------------------------------------------------
    def tree_menu(self, pos: QPoint) -> Optional[QMenu]:
        """The context menu of the card list row at ``pos`` (shown; returned for tests)."""
        item = self.win.tree.itemAt(pos)
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if not data:
            return None
        menu = QMenu(self.win.tree)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if data[0] == "chat":
            card, chat = data[1], data[2]
            menu.addAction(tr("manage.open")).triggered.connect(lambda: self.win.open_chat(card, chat))
            menu.addAction(tr("manage.rename")).triggered.connect(lambda: self.rename_chat(card, chat))
            menu.addAction(tr("manage.duplicate")).triggered.connect(lambda: self.duplicate(card, Path(chat.dir)))
            extra = getattr(self.win, "chat_export_actions", None)
            if extra is not None:
                extra(menu, card, chat)
            menu.addSeparator()
            menu.addAction(tr("manage.delete.chat")).triggered.connect(lambda: self.delete_chat(chat))
        else:
            card = data[1]
            from ..dialogs.card_editor_menu import open_card_editor  # issue 26 §1: the card editor

            menu.addAction(tr("cardeditor.edit")).triggered.connect(lambda: open_card_editor(self.win, card))
            menu.addAction(tr("manage.rename")).triggered.connect(lambda: self.rename_card(card))
            menu.addAction(tr("scripts.th.menu")).triggered.connect(lambda: script_buttons.open_script_list(self.win, card))
            extra = getattr(self.win, "card_export_actions", None)
            if extra is not None:
                extra(menu, card)
                menu.addSeparator()
            menu.addAction(tr("manage.delete.card")).triggered.connect(lambda: self.delete_card(card))
        menu.popup(self.win.tree.viewport().mapToGlobal(pos))
        return menu


class TrashDialog(QDialog):
    """回收站: the deleted chats and cards, newest first; 恢复 / 永久删除 the selected rows."""

    def __init__(self, win: Any):
        super().__init__(win)
        self.win = win
        self.setObjectName("trashDialog")
        self.setWindowTitle(tr("manage.trash.title"))
        self.resize(680, 380)
        lay = QVBoxLayout(self)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.list.setHeaderLabels([tr("manage.trash.col.name"), tr("manage.trash.col.kind"),
                                   tr("manage.trash.col.from"), tr("manage.trash.col.when")])
        self.list.setColumnWidth(0, 180)
        self.list.setColumnWidth(2, 260)
        lay.addWidget(self.list, 1)
        self.empty = QLabel(tr("manage.trash.empty"))
        lay.addWidget(self.empty)
        row = QHBoxLayout()
        row.addStretch(1)
        self.restore_btn = QPushButton(tr("manage.trash.restore"))
        self.restore_btn.clicked.connect(lambda: self.restore_selected())
        self.purge_btn = QPushButton(tr("manage.trash.purge"))
        self.purge_btn.clicked.connect(lambda: self.purge_selected())
        self.empty_btn = QPushButton(tr("manage.trash.empty_all"))
        self.empty_btn.setObjectName("emptyTrash")
        self.empty_btn.clicked.connect(lambda: self.empty_all())
        for b in (self.restore_btn, self.purge_btn, self.empty_btn):
            b.setAutoDefault(False)  # Enter in the list must not delete anything
        row.addWidget(self.restore_btn)
        row.addWidget(self.purge_btn)
        row.addWidget(self.empty_btn)
        lay.addLayout(row)
        self.items: list[manage.TrashItem] = []

    def refresh(self) -> None:
        """Re-read the 回收站."""
        self.items = manage.list_trash()
        self.list.clear()
        for it in self.items:
            kind = tr("manage.trash.kind.card" if it.kind == "card" else "manage.trash.kind.chat")
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(it.deleted / 1000))
            self.list.addTopLevelItem(QTreeWidgetItem([it.name, kind, it.origin, when]))
        self.empty.setVisible(not self.items)
        self.empty_btn.setEnabled(bool(self.items))
        if self.items:
            self.list.setCurrentItem(self.list.topLevelItem(0))

    def selected(self) -> list[manage.TrashItem]:
        """The trash items of the selected rows."""
        return [self.items[self.list.indexOfTopLevelItem(r)] for r in self.list.selectedItems()]

    def restore_selected(self) -> list[Path]:
        """恢复: each selected item back where it was."""
        out = []
        for it in self.selected():
            try:
                out.append(manage.restore(it))
            except (manage.ManageError, OSError) as e:
                QMessageBox.warning(self, tr("app.title"), tr("manage.failed", err=e))
        self.refresh()
        self.win.session.broadcast(LIBRARY)
        if out:
            self.win.statusBar().showMessage(tr("manage.restored", name="、".join(p.name for p in out)), 6000)
        return out

    def purge_selected(self, confirm: bool = True) -> int:
        """永久删除 after a question."""
        sel = self.selected()
        if not sel or (confirm and not ask_yes(self, tr("manage.trash.purge.confirm", n=len(sel)),
                                               tr("manage.trash.purge"))):
            return 0
        n = manage.empty_trash(sel)
        self.refresh()
        return n

    def empty_all(self, confirm: bool = True) -> int:
        """清空回收站: every item removed for good, after a question that says how many (No is the default)."""
        items = manage.list_trash()
        if not items or (confirm and not ask_yes(self, tr("manage.trash.empty_all.confirm", n=len(items)),
                                                 tr("manage.trash.empty_all"))):
            return 0
        n = manage.empty_trash(items)
        self.refresh()
        return n


class LibraryWatcher:
    """Refreshes the card list when the data folder changes (module doc): watches ``cards/`` and each card's
    ``对话/`` folder; a change starts a 300 ms timer (a copy makes many events), then ``refresh`` runs and the
    watched folders are brought up to date."""

    def __init__(self, win: Any, refresh: Callable[[], None]):
        self.win = win
        self.refresh = refresh
        self.watcher = QFileSystemWatcher(win)
        self.timer = QTimer(win)
        self.timer.setSingleShot(True)
        self.timer.setInterval(300)
        self.timer.timeout.connect(self._fire)
        self.watcher.directoryChanged.connect(lambda _p: self.timer.start())
        self.sync()

    def folders(self) -> list[str]:
        """The folders to watch now."""
        from ...core.paths import chats_dir

        try:
            root = library.cards_root()
        except OSError:
            return []
        out = [str(root)]
        for c in library.list_cards():
            out.append(c.dir)
            chats = chats_dir(c.dir)
            if chats.is_dir():
                out.append(str(chats))
        return out

    def sync(self) -> None:
        """Watch exactly :meth:`folders`."""
        want = set(self.folders())
        have = set(self.watcher.directories())
        if have - want:
            self.watcher.removePaths(sorted(have - want))
        if want - have:
            self.watcher.addPaths(sorted(want - have))

    def _fire(self) -> None:
        try:
            self.refresh()
        except Exception:  # a folder that vanished mid-listing: the next change refreshes again
            log.exception("refreshing the card list failed")
        self.sync()


def install_manage(win: Any, menu: Any = None) -> Manager:
    """Wire the manage commands into ``win`` (module doc): the card list's context menu, 从这里新建对话 in the
    conversation, 回收站… in ``menu``, and the data-folder watcher. Sets ``win.manager`` and ``win.library_watcher``."""
    m = Manager(win)
    win.manager = m
    win.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    win.tree.customContextMenuRequested.connect(m.tree_menu)
    win.view.branchFromRequested.connect(m.branch_from)
    act = QAction(tr("manage.trash"), win)
    act.setObjectName("trashAction")
    act.triggered.connect(m.show_trash)
    if menu is not None:
        acts = menu.actions()
        menu.insertAction(acts[-1] if acts else None, act)  # before 退出
    win.library_watcher = LibraryWatcher(win, lambda: _refresh_keeping(win))
    return m


def _refresh_keeping(win: Any) -> None:
    """``win.refresh_tree()`` keeping the selected row selected (by folder) and the scroll position."""
    tree = win.tree
    cur = tree.currentItem()
    data = cur.data(0, Qt.ItemDataRole.UserRole) if cur is not None else None
    key = (data[2].dir if data[0] == "chat" else data[1].dir) if data else None
    scroll = tree.verticalScrollBar().value()
    win.refresh_tree()
    if key is not None:
        for i in range(tree.topLevelItemCount()):
            top = tree.topLevelItem(i)
            for it in [top] + [top.child(k) for k in range(top.childCount())]:
                d = it.data(0, Qt.ItemDataRole.UserRole)
                if d and (d[2].dir if d[0] == "chat" else d[1].dir) == key:
                    tree.setCurrentItem(it)
    tree.verticalScrollBar().setValue(scroll)


__all__ = ["LibraryWatcher", "Manager", "TrashDialog", "ask_reimport", "ask_text", "ask_yes", "import_asking",
           "import_with_choice", "install_manage", "reimport_choice", "start_import"]
