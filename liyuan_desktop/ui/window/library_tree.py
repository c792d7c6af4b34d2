"""The window's card and chat list (the home tree) and what adds to it: new chat, import a card, SillyTavern, prose, role-play to writing.

Moved out of ui/window/main_window.py (issue 25); :class:`~.main_window.MainWindow` inherits it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QMessageBox,
    QTreeWidgetItem,
)

from ...core.cards import CardError, library
from ...core.cards.meta import set_card_favorite, set_card_scripts_allowed
from ...core.chat.changes import LIBRARY
from ...core.messages import message
from ...core.session.tree import SessionError
from ..infra.i18n import show, tr
from .card_list import DETAIL_ROLE, STAR_ROLE, ListInfo
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
        nothing — the selection never jumps to another card. Cards are filtered and sorted by the list's tools
        (ui/window/card_list.py); what rows show beyond their names is read again on a worker
        (:meth:`_gather_list_info`), which repaints the list when something changed."""
        cards = library.list_cards()
        chats = {c.dir: library.list_chats(c) for c in cards}
        self.render_tree(cards, chats)
        self._gather_list_info(cards, chats)

    def _list_info(self) -> ListInfo:
        info = getattr(self, "_card_list_info", None)
        if info is None:
            info = self._card_list_info = ListInfo()
        return info

    def render_tree(self, cards: list[library.CardRef], chats: dict[str, list[library.ChatRef]]) -> None:
        """Fill the list from ``cards`` and their ``chats`` (already read) with what :class:`ListInfo` knows."""
        info = self._list_info()
        cur = self.tree.currentItem()
        data = cur.data(0, Qt.ItemDataRole.UserRole) if cur is not None else None
        keep = (data[2].dir if data[0] == "chat" else data[1].dir) if data else None
        scroll = self.tree.verticalScrollBar().value()
        self.tree.blockSignals(True)
        self.tree.clear()
        newest = {d: (cs[0].updated if cs else 0) for d, cs in chats.items()}
        for card in info.order(cards, newest):
            it = QTreeWidgetItem([card.name])
            it.setData(0, Qt.ItemDataRole.UserRole, ("card", card))
            it.setData(0, STAR_ROLE, info.favorite(card.dir))
            it.setData(0, DETAIL_ROLE, info.card_line(card.dir))
            for chat in chats.get(card.dir, []):
                mode = tr("mode.agent") if chat.mode == "agent" else ""
                ch = QTreeWidgetItem([chat.name + (f"  [{mode}]" if mode else "")])
                ch.setData(0, Qt.ItemDataRole.UserRole, ("chat", card, chat))
                ch.setData(0, DETAIL_ROLE, info.chat_line(chat))
                s = info.chats.get(chat.dir)
                if s is not None and s.last_text:
                    ch.setToolTip(0, s.last_text)
                it.addChild(ch)
            self.tree.addTopLevelItem(it)
            it.setExpanded(True)
            it.setHidden(not info.matches(card.name, card.dir))
        self.tree.setCurrentItem(None)
        self.tree.blockSignals(False)
        for want in (keep, self.chat_ref.dir if self.chat_ref is not None else None):
            row = self._tree_row(want) if want else None
            if row is not None:
                self.tree.setCurrentItem(row)
                break
        self.tree.verticalScrollBar().setValue(scroll)
        self.tree_source = (cards, chats)
        from ..frames.avatars import decorate_tree  # the cards' pictures (issue 17)

        decorate_tree(self)
        self.sync_card_star()

    def _gather_list_info(self, cards: list[library.CardRef], chats: dict[str, list[library.ChatRef]]) -> None:
        """Read the cards' tags, dates and stars and the chats' summaries on a worker (ui/infra/tasks.py); when
        they differ from what the list shows, repaint it. A newer pass drops an older one's answer."""
        from ..infra import tasks
        from .card_list import gather

        info = self._list_info()
        info.generation += 1
        gen = info.generation
        card_dirs = [c.dir for c in cards]
        chat_dirs = [ch.dir for cs in chats.values() for ch in cs]
        known = dict(info.cards)

        def done(result: Any, error: Optional[BaseException]) -> None:
            if error is not None or result is None or gen != info.generation:
                if error is not None:
                    log.warning("card list details not read: %s", error)
                return
            found, sums = result
            same = {d: i.key() for d, i in info.cards.items()} == {d: i.key() for d, i in found.items()} \
                and info.chats == sums
            info.cards, info.chats = found, sums
            if not same:
                self.render_tree(*self.tree_source)

        tasks.submit(lambda w: gather(card_dirs, chat_dirs, known, w), done=done, guard=self.tree)

    def card_search_changed(self, text: str) -> None:
        """The search box changed: cards whose name or tags hold the words stay shown (no file is read)."""
        info = self._list_info()
        info.query = text
        self._apply_card_filter()

    def card_fav_only_changed(self, on: bool) -> None:
        """「只看收藏」 switched."""
        self._list_info().fav_only = on
        self._apply_card_filter()

    def card_sort_changed(self, key: str) -> None:
        """The sort changed (recent | name | created): the list is laid out again from what was read."""
        self._list_info().sort = key or "recent"
        if getattr(self, "tree_source", None) is not None:
            self.render_tree(*self.tree_source)

    def _apply_card_filter(self) -> None:
        info = self._list_info()
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            data = top.data(0, Qt.ItemDataRole.UserRole) if top is not None else None
            if top is not None and data:
                top.setHidden(not info.matches(data[1].name, data[1].dir))

    def sync_card_star(self) -> None:
        """The 收藏 button follows the selected card (or the card of the selected chat)."""
        bar = getattr(self, "card_bar", None)
        if bar is None:
            return
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        bar.sync_star(self._list_info().favorite(data[1].dir) if data else None)

    def toggle_favorite(self) -> None:
        """收藏 / 取消收藏 the selected card (stored in its ``liyuan.json``; core.cards.meta)."""
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if not data:
            return
        card = data[1]
        info = self._list_info()
        on = not info.favorite(card.dir)
        try:
            set_card_favorite(card.dir, on)
        except OSError as e:
            QMessageBox.warning(self, tr("app.title"), tr("cards.fav.failed", error=e))
            return
        known = info.cards.get(card.dir)
        if known is not None:
            known.favorite = on
        self.statusBar().showMessage(tr("cards.fav.on" if on else "cards.fav.off", name=card.name), 5000)
        self.session.broadcast(LIBRARY)  # the lists follow the notice (the star is part of the library)

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
        """A row was activated (double-click, Enter): a chat opens; a card opens its latest chat, or starts one
        when it has none (SillyTavern: clicking a character opens its last chat). The window wires both
        ``itemActivated`` and ``itemDoubleClicked`` here, and a double-click emits both: the second of one event is
        dropped."""
        data = item.data(0, Qt.ItemDataRole.UserRole)
        if not data:
            return
        folder = data[2].dir if data[0] == "chat" else data[1].dir
        if getattr(self, "_activating", None) == folder:
            return
        self._activating = folder
        QTimer.singleShot(0, self, lambda: setattr(self, "_activating", None))
        from . import chat_work  # off the UI thread, with progress and Cancel (issue 15)

        if data[0] == "chat":
            chat_work.spawn(self.window_(), chat_work.open_chat_async(self.window_(), data[1], data[2]))
        elif data[0] == "card":
            self.card_ref = data[1]
            rows = (item.child(k) for k in range(item.childCount()))
            chats = [r.data(0, Qt.ItemDataRole.UserRole) for r in rows if r is not None]
            latest = max((c[2] for c in chats if c and c[0] == "chat"), key=lambda c: c.updated, default=None)
            if latest is not None:
                self.statusBar().showMessage(tr("cards.opening", name=data[1].name), 4000)
                chat_work.spawn(self.window_(), chat_work.open_chat_async(self.window_(), data[1], latest))
            else:
                self.start_chat(data[1])

    def selected_card(self) -> Optional[library.CardRef]:
        """The card the commands 新对话 / 导入聊天记录 act on: the one selected in the list (a card row or one of its
        chats), else the open chat's card; None when neither."""
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        return data[1] if data else self.card_ref

    def new_chat_dialog(self) -> None:
        """Ask for a card (the selected one), a mode (role-play default; fixed afterwards) and create the chat. The
        dialog's choices start on role-play and the default preset, so Enter starts the chat."""
        if self.refuse_read_only():
            return
        card = self.selected_card()
        if card is None:
            QMessageBox.information(self, tr("app.title"), tr("pick.card.first"))
            return
        from ..dialogs.presets_dialog import NewChatDialog

        dlg = NewChatDialog(self.settings.preset_for_new_chat(), self)  # mode and preset (default preselected)
        self._new_chat_dialog = dlg
        if dlg.exec() != NewChatDialog.DialogCode.Accepted:
            return
        mode, preset_name = dlg.choice()
        self.start_chat(card, mode, preset_name)

    def start_chat(self, card: library.CardRef, mode: str = "roleplay", preset_name: Optional[str] = None) -> Any:
        """Create a chat with ``card`` and open it (on a worker, ui/window/chat_work.py): ``mode`` roleplay | agent,
        ``preset_name`` a library preset ("" = none; None = the preset new chats get, settings). Returns the task."""
        if self.refuse_read_only():
            return None
        from ..dialogs.presets_dialog import preset_for_new_chat

        preset = preset_for_new_chat((self.settings.preset_for_new_chat() or "") if preset_name is None else preset_name)
        from ...core.chat.build import NewChat, build_chat  # here, on the UI thread: create() runs on a worker

        settings = self.settings

        def create(d: Path, models: tuple) -> None:  # on a worker thread (chat_work), then opened there too
            model, scribe, why = models  # the persona: the library's default, else 我的角色 (settings)
            build_chat(d, card.load(), settings, model or _NoModel(why), scribe, preset=preset,
                       new=NewChat(mode=mode)).close()

        from . import chat_work

        return chat_work.spawn(self.window_(), chat_work.new_chat_async(self.window_(), card, create))

    def offer_chat_after_import(self, ref: library.CardRef) -> QMessageBox:
        """After a card import: 「现在就和它开始对话吗？」 (Yes is the default: nothing is lost either way). The box
        does not block (``open``); Yes starts a role-play chat with the default preset. Returns the box."""
        box = QMessageBox(QMessageBox.Icon.Question, tr("app.title"), tr("import.offer.chat", name=ref.name),
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setObjectName("startChatOffer")
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        yes = box.button(QMessageBox.StandardButton.Yes)
        box.finished.connect(lambda _code: self.start_chat(ref) if box.clickedButton() is yes else None)
        box.open()
        self._start_chat_offer = box
        return box

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
        self.offer_chat_after_import(ref)
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
        d = library.new_chat_dir(self.card_ref, show(message(
            "name.novel", name=self.chat_ref.name if self.chat_ref else message("name.novel_default"))))
        try:
            model, scribe, why = self.provider_models()
            roleplay_to_agent(self.chat, d, model or _NoModel(why), scribe_model=scribe)
        except (OSError, ValueError, SessionError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.convert", error=e))
            return
        self.session.broadcast(LIBRARY)
        self.open_chat(self.card_ref, library.ChatRef(name=d.name, dir=str(d)))
