"""The window's card and chat list (the home tree) and what adds to it: new chat, import a card, SillyTavern, prose, role-play to writing.

Moved out of ui/window/main_window.py (issue 25); :class:`~.main_window.MainWindow` inherits it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QMessageBox,
    QTreeWidgetItem,
)

from ...core.cards import CardError, library
from ...core.cards.meta import set_card_scripts_allowed
from ...core.chat.changes import LIBRARY
from ...core.session.tree import SessionError
from ..infra.i18n import tr
from .chat_flow import _NoModel

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # pragma: no cover - the type checker sees the window's face (ui/window/window_face.py)
    from .window_face import WindowFace as _Window
else:
    _Window = object


class LibraryTreeMixin(_Window):
    """The window's card and chat list (the home tree) and what adds to it (a part of :class:`~.main_window.MainWindow`)."""

    def refresh_tree(self) -> None:
        """Rebuild the card/chat list from the data folder, keeping the row selected (by folder) and the scroll
        position; when that row is gone (the chat was renamed or deleted) the open chat's row is selected, else
        nothing — the selection never jumps to another card."""
        cur = self.tree.currentItem()
        data = cur.data(0, Qt.ItemDataRole.UserRole) if cur is not None else None
        keep = (data[2].dir if data[0] == "chat" else data[1].dir) if data else None
        scroll = self.tree.verticalScrollBar().value()
        self.tree.blockSignals(True)
        self.tree.clear()
        for card in library.list_cards():
            it = QTreeWidgetItem([card.name])
            it.setData(0, Qt.ItemDataRole.UserRole, ("card", card))
            for chat in library.list_chats(card):
                mode = tr("mode.agent") if chat.mode == "agent" else ""
                ch = QTreeWidgetItem([chat.name + (f"  [{mode}]" if mode else "")])
                ch.setData(0, Qt.ItemDataRole.UserRole, ("chat", card, chat))
                it.addChild(ch)
            self.tree.addTopLevelItem(it)
            it.setExpanded(True)
        self.tree.setCurrentItem(None)
        self.tree.blockSignals(False)
        for want in (keep, self.chat_ref.dir if self.chat_ref is not None else None):
            row = self._tree_row(want) if want else None
            if row is not None:
                self.tree.setCurrentItem(row)
                break
        self.tree.verticalScrollBar().setValue(scroll)
        from ..frames.avatars import decorate_tree  # the cards' pictures (issue 17)

        decorate_tree(self)

    def _tree_row(self, folder: str) -> Optional[QTreeWidgetItem]:
        """The card list's row of a card or chat folder, or None."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for it in [top] + [top.child(k) for k in range(top.childCount())]:
                d = it.data(0, Qt.ItemDataRole.UserRole)
                if d and Path(d[2].dir if d[0] == "chat" else d[1].dir) == Path(folder):
                    return it
        return None

    def _tree_activated(self, item: QTreeWidgetItem, _col: int = 0) -> None:
        data = item.data(0, Qt.ItemDataRole.UserRole)
        if not data:
            return
        if data[0] == "chat":
            from . import chat_work  # off the UI thread, with progress and Cancel (issue 15)

            chat_work.spawn(self.window_(), chat_work.open_chat_async(self.window_(), data[1], data[2]))
        elif data[0] == "card":
            self.card_ref = data[1]

    def selected_card(self) -> Optional[library.CardRef]:
        """The card the commands 新对话 / 导入聊天记录 act on: the one selected in the list (a card row or one of its
        chats), else the open chat's card; None when neither."""
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        return data[1] if data else self.card_ref

    def new_chat_dialog(self) -> None:
        """Ask for a card (the selected one), a mode (role-play default; fixed afterwards) and create the chat."""
        if self.refuse_read_only():
            return
        card = self.selected_card()
        if card is None:
            QMessageBox.information(self, tr("app.title"), tr("pick.card.first"))
            return
        from ..dialogs.presets_dialog import NewChatDialog, preset_for_new_chat

        dlg = NewChatDialog(self.settings.preset_for_new_chat(), self)  # mode and preset (default preselected)
        if dlg.exec() != NewChatDialog.DialogCode.Accepted:
            return
        mode, preset_name = dlg.choice()
        preset = preset_for_new_chat(preset_name)
        from ...core.chat.build import NewChat, build_chat  # here, on the UI thread: create() runs on a worker

        settings = self.settings

        def create(d: Path, models: tuple) -> None:  # on a worker thread (chat_work), then opened there too
            model, scribe, why = models  # the persona: the library's default, else 我的角色 (settings)
            build_chat(d, card.load(), settings, model or _NoModel(why), scribe, preset=preset,
                       new=NewChat(mode=mode)).close()

        from . import chat_work

        chat_work.spawn(self.window_(), chat_work.new_chat_async(self.window_(), card, create))

    def import_card_dialog(self) -> None:
        if self.refuse_read_only():
            return
        path, _ = QFileDialog.getOpenFileName(self, tr("import.card"), str(Path.home()), tr("import.card.filter"))
        if path:
            from . import chat_work  # read and copied on a worker thread
            from .manage import start_import  # a card that exists: 替换 / 保留两个 / 取消 (issue 17)

            if start_import(self, path):
                chat_work.spawn(self.window_(), chat_work.import_card_async(self.window_(), path))

    def import_sillytavern_dialog(self) -> None:
        """文件 → 从 SillyTavern 导入… (ui/dialogs/st_migration.py, issue 16 §3); the card list refreshes after an import."""
        if self.refuse_read_only():
            return
        from ..dialogs.st_migration import open_dialog

        open_dialog(self, on_imported=self.refresh_tree)

    def import_card_file(self, path: str) -> Optional[library.CardRef]:
        """Import a card file into the library; a clear message when it is not a card."""
        from .manage import import_asking  # a card that exists: 替换 / 保留两个 / 取消, never a silent replace

        try:
            ref = import_asking(self, path)
        except (CardError, OSError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.import", error=e))
            return None
        if ref is None:
            return None
        self.session.broadcast(LIBRARY)
        self.card_ref = ref
        self.ask_scripts(ref)
        self.statusBar().showMessage(tr("import.card.done", name=ref.name), 6000)
        return ref

    def ask_scripts(self, ref: library.CardRef, scripts: Optional[list] = None) -> None:
        """A card with regex scripts: ask once whether they may run (they change what is shown and sent).
        ``scripts``: the card's scripts when already read (on a worker: chat_work), else the card is read here."""
        from ...core.cards.regex_scripts import scripts_from_card

        try:
            scripts = scripts_from_card(ref.load().raw) if scripts is None else scripts
        except CardError:
            return
        if not scripts:
            return
        names = tr("sep.list").join(sc.scriptName or tr("scripts.unnamed") for sc in scripts[:6]) + ("…" if len(scripts) > 6 else "")
        answer = QMessageBox.question(
            self, tr("app.title"), tr("scripts.ask", n=len(scripts), names=names))
        set_card_scripts_allowed(Path(ref.dir), answer == QMessageBox.StandardButton.Yes)

    def import_prose_dialog(self) -> None:
        """Agent chats: import a folder of .md/.txt chapters or one long .txt split at chapter headings."""
        from ...core.chat.prose_import import ProseImportError, import_folder, import_long_text

        if self.chat is None or self.chat.mode != "agent":
            QMessageBox.information(self, tr("app.title"), tr("prose.need.agent"))
            return
        path, _ = QFileDialog.getOpenFileName(self, tr("prose.pick.txt"), str(Path.home()), tr("prose.filter"))
        try:
            if path:
                cp = import_long_text(self.chat, path)
            else:
                folder = QFileDialog.getExistingDirectory(self, tr("prose.pick.folder"), str(Path.home()))
                if not folder:
                    return
                cp = import_folder(self.chat, folder)
        except (ProseImportError, OSError, ValueError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.import", error=e))
            return
        self.statusBar().showMessage(cp.message if cp else tr("prose.none"), 8000)
        if cp:
            self.session.broadcast(self.chat.last_changes)  # Chat.import_chapters: files, checkpoints, outline, threads

    def roleplay_to_agent_clicked(self) -> None:
        """The open role-play chat becomes a new agent chat: opening and finals as chapters, the ledger carried."""
        from ...core.chat.prose_import import roleplay_to_agent

        if self.chat is None or self.chat.mode != "roleplay" or self.card_ref is None:
            QMessageBox.information(self, tr("app.title"), tr("to.agent.need.rp"))
            return
        d = library.new_chat_dir(self.card_ref, f"{self.chat_ref.name if self.chat_ref else '对话'}-长篇")
        try:
            model, scribe, why = self.provider_models()
            roleplay_to_agent(self.chat, d, model or _NoModel(why), scribe_model=scribe)
        except (OSError, ValueError, SessionError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.convert", error=e))
            return
        self.session.broadcast(LIBRARY)
        self.open_chat(self.card_ref, library.ChatRef(name=d.name, dir=str(d)))
