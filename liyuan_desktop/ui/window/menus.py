"""The window's chat menu (对话, 帮助 and the screens hooked into them) and the card's scripts switch in 梨园.

Moved out of ui/window/main_window.py (issue 25); :class:`~.main_window.MainWindow` inherits it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from ..infra.i18n import show, tr

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # pragma: no cover - the type checker sees the window's face (ui/window/window_face.py)
    from .window_face import WindowFace as _Window
else:
    _Window = object


class MenusMixin(_Window):
    """The window's chat menu (对话, 帮助 and the screens hooked into them) and the card's scripts switch in 梨园 (a part of :class:`~.main_window.MainWindow`)."""

    def _build_file_menu(self) -> QMenu:
        """The app menu (import, settings, demo, quit) with the card's status-bar trust and regex-script switches.
        Returns the menu; the chat menu is built after it."""
        menu = self.menuBar().addMenu(tr("app.title"))
        for text, slot, seq in ((tr("import.card"), self.import_card_dialog, "Ctrl+O"),
                                (tr("menu.import.prose"), self.import_prose_dialog, None),
                                (tr("work.menu.import.chat"), self.import_st_chat_dialog, None),
                                (tr("stmig.menu"), self.import_sillytavern_dialog, None),
                                (tr("menu.to.agent"), self.roleplay_to_agent_clicked, None),
                                (tr("settings"), self.open_settings, "Ctrl+,"),
                                (tr("wi.menu"), self.open_world_info_settings, None),
                                (tr("menu.demo"), self.start_demo, None), (tr("menu.quit"), self.close, "Ctrl+Q")):
            act = QAction(text, self)
            if seq:
                act.setShortcut(QKeySequence(seq))
            act.triggered.connect(slot)
            menu.addAction(act)
        from ..frames.conversation import frames_trust_action  # issue 5: per-card "trusted status bars" switch

        self.frames_trust_action = frames_trust_action(self, lambda: self.chat, self.view)
        menu.insertAction(menu.actions()[1], self.frames_trust_action)  # next to 导入角色卡 (where scripts are asked)
        menu.aboutToShow.connect(self.frames_trust_action.sync)
        from ..frames.remote_sites import sites_action  # issue 26 §3: allow one https site for one card's bars

        sites = sites_action(self, lambda: self.chat, self.view, self.session)
        menu.insertAction(menu.actions()[menu.actions().index(self.frames_trust_action) + 1], sites)
        menu.aboutToShow.connect(sites.sync)  # type: ignore[attr-defined]
        # the card's regex scripts (status bars, beautifying) can be switched on later, not only when importing
        self.scripts_action = QAction(tr("scripts.action"), self)
        self.scripts_action.setObjectName("cardScriptsAction")
        self.scripts_action.setCheckable(True)
        self.scripts_action.triggered.connect(self._scripts_toggled)
        menu.insertAction(self.frames_trust_action, self.scripts_action)
        menu.aboutToShow.connect(self._sync_scripts_action)
        return menu

    def _build_chat_menu(self, menu: Any) -> None:
        """The 对话 and 帮助 menus, and the screens hooked into them and into ``menu`` (梨园): presets, find,
        search, manage, export, avatars, reply actions, prose-only, profiles, about, persona, world books."""
        from .card_list import install_card_list  # issue 26 §3: search, sort, favourites, each chat's last message
        from .send_keys import install_send_keys  # issue 26 §3: Enter sends (a setting)

        install_card_list(self)
        install_send_keys(self)
        chat_menu = self.menuBar().addMenu(tr("menu.chat"))
        chat_acts = []
        for text, slot, seq in ((tr("regenerate"), self.regenerate_clicked, None), (tr("undo"), self.undo_clicked, None),
                                (tr("menu.branches"), self.show_branches, "Ctrl+B"),
                                (tr("menu.summaries"), self.open_summaries, None),
                                (tr("menu.inspect"), self.inspect_latest, "Ctrl+I")):
            act = QAction(text, self)
            if seq:
                act.setShortcut(QKeySequence(seq))
            act.triggered.connect(slot)
            chat_menu.addAction(act)
            chat_acts.append(act)
        # 重来 / 撤销本轮 in the menu are on exactly when their buttons are (set_busy, agent_desk.update_undo)
        self.regen_action, self.undo_action = chat_acts[0], chat_acts[1]
        self.undo_action.setObjectName("undoAction")
        self._install_screens(menu, chat_menu)

    def _install_screens(self, menu: Any, chat_menu: Any) -> None:
        """The screens hooked into the 梨园 (``menu``) and 对话 (``chat_menu``) menus, and the 帮助 menu."""
        from ..dialogs.presets_dialog import add_presets_action  # issue 14 §3: the preset library and the chat's preset
        from ..settings.profiles import install_profile_bar  # issue 14 §3: connection profiles, switched in one click

        self.presets_action = add_presets_action(self, chat_menu)
        from ..roleplay.quick_replies_bar import install_quick_replies  # issue 26 §4: the row under the input

        install_quick_replies(self, chat_menu)
        from ..frames.find_bar import install_find_bar  # issue 17: Ctrl+F, find in every message of the chat

        install_find_bar(self, chat_menu)
        from ..dialogs.search_dialog import install_search_dialog  # issue 17: every chat of every card

        install_search_dialog(self, chat_menu)
        from .manage import install_manage  # issue 17: rename / duplicate / delete to the 回收站, the folder watcher

        install_manage(self, menu)
        from ..dialogs.card_editor_menu import install_card_editor  # issue 26 §1: 新建角色卡… / 编辑角色卡…

        install_card_editor(self, menu, chat_menu)
        from ..dialogs.export_menu import (
            install_export_menu,  # issue 17: 导出 (chat .jsonl, story md/epub/docx, card png/json)
        )

        install_export_menu(self, chat_menu)
        from ..frames.avatars import (
            install_avatars,  # issue 17: card and persona pictures in the list and the conversation
        )

        install_avatars(self)
        from ..roleplay.reply_actions import install_reply_actions  # issue 17: edit a reply, 续写, 代拟, 作者注

        install_reply_actions(self, chat_menu)
        from ..roleplay.prose_toggle import install_prose_toggle  # issue 18 §2: tool play or prose-only play

        install_prose_toggle(self, chat_menu)
        from ..roleplay.group_members import install_group_chats  # issue 31: group chats, the 成员 tab

        install_group_chats(self, chat_menu)
        from ..roleplay.group_vars_box import install_pane_box  # issue 31: the 成员 tab's 共用变量 box

        install_pane_box(self)
        install_profile_bar(self)
        from ..dialogs.about import show_about  # 关于梨园: version, build date, data and log folders

        self.about_action = self.menuBar().addMenu(tr("menu.help")).addAction(tr("about.action"))
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(lambda: show_about(self))
        from ..dialogs.persona_picker import open_persona_dialog  # issue 17: the persona per chat (menu 对话)

        self.persona_action = chat_menu.addAction(tr("persona.menu"))
        self.persona_action.setObjectName("personaAction")
        self.persona_action.triggered.connect(lambda: open_persona_dialog(self))
        from ..dialogs.world_books import open_world_books  # issue 17: world books per chat and global, the card's book

        self.books_action = chat_menu.addAction(tr("books.menu"))
        self.books_action.setObjectName("worldBooksAction")
        self.books_action.triggered.connect(lambda: open_world_books(self))
        from ..dialogs.novel_dialog import install_novel_dialog  # issue 28: 新建长篇… (a novel without a card)
        from ..writing.novel_room import install_novel_room  # issue 28: the manuscript layout for agent chats

        install_novel_dialog(self, menu)
        install_novel_room(self)

    def _sync_scripts_action(self) -> None:
        chat = self.chat
        self.scripts_action.setEnabled(chat is not None and bool(chat.card.path))
        if chat is not None:
            self.scripts_action.setChecked(chat.scripts_allowed())

    def _scripts_toggled(self, on: bool) -> None:
        """「允许这张卡的正则脚本」: stored beside the card (the same permission the import asks for); the open chat
        re-renders with or without them."""
        chat = self.chat
        if chat is None or not chat.card.path:
            return
        try:
            chat.set_scripts_allowed(on)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, tr("app.title"), show(e))
            self._sync_scripts_action()
            return
        self.session.broadcast(chat.last_changes)
        self.statusBar().showMessage(tr("scripts.on" if on else "scripts.off", name=chat.card.name), 6000)
