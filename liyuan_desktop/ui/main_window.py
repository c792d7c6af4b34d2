"""The main window: cards and chats on the left, the conversation in the centre, the draft and the ledger on the
right, the input box with Send / Stop / Regenerate at the bottom.

Thin by design: it opens chats (core), runs their commands as tasks on the qasync loop, and forwards engine events
to the panes. What is open and what runs — the chat, the selected card, demo mode, the beat task, the busy mark and
the transcript's paging — lives in its :class:`~.session.Session` (``self.session``, widget-free); ``chat``,
``chat_ref``, ``card_ref``, ``is_demo``, ``transcript``, ``chatShown`` and ``busyChanged`` here forward to it. The conversation view gets only the newest screenfuls of a long chat; older items are handed over
when the user scrolls up.

**The panes follow the chat shown** (issue 24 §3: no pane may show an older chat or beat). There is one path for
"another chat is shown" (:meth:`_after_open`) and one for "no chat is shown" (:meth:`close_chat`; a command that
drops ``win.chat`` itself is caught by :meth:`set_busy`, which every such command ends with); each ends with
the session's ``chatShown``, which panes installed from other modules (the find bar) follow. While a switch runs the
conversation is covered (``ConversationView.hold_until_painted``) until the page has painted the new chat, so no
frame shows the old chat's messages beside the new chat's panes. The draft pane follows the branch's newest beat
(:meth:`_show_branch_beat`) and keeps what it shows when that beat is the same one (a reply edited in place).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.cards import CardError, library
from ..core.cards.meta import set_card_scripts_allowed
from ..core.chat.changes import LIBRARY
from ..core.ledger.state import WorldState
from ..core.session.tree import SessionError
from ..core.settings import AppSettings, load_settings, save_settings
from . import (
    agent_desk,
    chat_work,  # the window's slow commands off the UI thread (its strings registered at import)
    writing_panes,
)
from .ask_dialog import AskDialog
from .branch_navigator import BranchNavigator, EditMessageDialog
from .chapter_tree import ChapterTreePane
from .checkpoint_timeline import CheckpointTimelinePane
from .conversation import ConversationView, chat_frame_context
from .draft_pane import DraftPane
from .i18n import show, tr
from .inspector import InspectorDialog
from .regex_worker import DisplayWorker, split_known
from .session import Session, TranscriptPage
from .state_pane import StatePane

if TYPE_CHECKING:  # pragma: no cover
    # the engine's chat (and with it the beat loop, world info, the scribe…) is imported when the first chat opens
    # or by ui/warm.py while the page loads, not before the window can show (issue 15: start-up)
    from ..core.chat import BeatResult, Chat
    from ..core.llm.replay import ReplayModel
    from ..core.llm.types import ChatModel

log = logging.getLogger(__name__)
PAGE = 60  # transcript items handed to the view at a time
DEMO_DELAY_MS = 45  # pause between streamed pieces of the demo's replay, so the draft is seen growing


class MainWindow(QMainWindow):
    """The app window. ``beatFinished(BeatResult)`` fires after every command (tests and the self-test use it)."""

    beatFinished = Signal(object)

    def __init__(self, settings: Optional[AppSettings] = None):
        super().__init__()
        self.settings = settings or load_settings()
        self.setWindowTitle("Liyuan")
        self.resize(1360, 860)
        self.setAcceptDrops(True)
        self.session = Session(self)  # the open chat, the selection, the running work (ui/session.py)
        self.demo_lines: list[str] = []
        self.last_result: Optional[BeatResult] = None
        self.results: list[BeatResult] = []
        self._inputs: dict[str, str] = {}  # unsent text per chat folder
        self._closing = False
        self._panes_chat: Optional[Chat] = None  # the chat the panes were last set up for (see the module doc)

        # left: cards and chats
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(6, 6, 6, 6)
        ll.addWidget(QLabel(tr("cards")))
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setObjectName("cardTree")
        self.tree.itemActivated.connect(self._tree_activated)
        self.tree.itemDoubleClicked.connect(self._tree_activated)
        ll.addWidget(self.tree, 1)
        for key, slot in (("import.card", self.import_card_dialog), ("new.chat", self.new_chat_dialog), ("settings", self.open_settings)):
            b = QPushButton(tr(key))
            b.clicked.connect(slot)
            ll.addWidget(b)

        # centre: conversation + input
        centre = QWidget()
        cl = QVBoxLayout(centre)
        cl.setContentsMargins(0, 0, 0, 0)
        self.view = ConversationView()
        self.view.olderRequested.connect(self._older)
        self.view.demoRequested.connect(self.start_demo)
        self.view.settingsRequested.connect(self.open_settings)
        self.view.swipeRequested.connect(self.swipe_clicked)
        self.view.editRequested.connect(self.edit_user_clicked)
        self.view.inspectRequested.connect(self.inspect_entry)
        self.view.frameVariablesChanged.connect(self._frame_variables_written)
        from . import theme  # issue 17: one palette + style sheet for every pane, dialog and the web view

        theme.notifier.changed.connect(self.view.set_theme)
        theme.apply(self.settings.theme)
        cl.addWidget(self.view, 1)
        row = QHBoxLayout()
        row.setContentsMargins(8, 4, 8, 8)
        self.input = QPlainTextEdit()
        self.input.setObjectName("input")
        self.input.setPlaceholderText(tr("input.placeholder"))
        self.input.setFixedHeight(84)
        row.addWidget(self.input, 1)
        btns = QVBoxLayout()
        self.send_btn = QPushButton(tr("send"))
        self.send_btn.clicked.connect(self.send_clicked)
        self.stop_btn = QPushButton(tr("stop"))
        self.stop_btn.clicked.connect(self.stop_clicked)
        self.regen_btn = QPushButton(tr("regenerate"))
        self.regen_btn.clicked.connect(self.regenerate_clicked)
        self.undo_btn = QPushButton(tr("undo"))
        self.undo_btn.setObjectName("undoButton")
        self.undo_btn.clicked.connect(self.undo_clicked)
        for b in (self.send_btn, self.stop_btn):
            btns.addWidget(b)
        again = QHBoxLayout()  # 重来 and 撤销本轮 side by side
        again.setSpacing(4)
        again.addWidget(self.regen_btn)
        again.addWidget(self.undo_btn)
        btns.addLayout(again)
        row.addLayout(btns)
        cl.addLayout(row)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, activated=self.send_clicked)

        # right: draft and ledger
        self.tabs = QTabWidget()
        self.draft_pane = DraftPane()
        # issue 13 §4: the card's display regex scripts run on a worker thread; the view paints first, fills in
        self.display_worker = DisplayWorker(self)
        self.display_worker.filled.connect(self._display_filled)
        self.display_worker.issue.connect(self.draft_pane.notice)
        self.draft_pane.sealAsIsRequested.connect(self.seal_as_is)
        self.draft_pane.repairLedgerRequested.connect(self.repair_ledger)
        self.draft_pane.resendRequested.connect(self.regenerate_clicked)
        self.draft_pane.editUnansweredRequested.connect(self._edit_unanswered)
        self.draft_pane.dropUnansweredRequested.connect(self._drop_unanswered)
        self.draft_pane.continueRequested.connect(self.continue_beat)
        self.state_pane = StatePane()
        self.state_pane.stateEdited.connect(self.ledger_edited)
        self.tabs.addTab(self.draft_pane, tr("draft"))
        self.tabs.addTab(self.state_pane, tr("ledger"))
        # issue 7: the branch navigator; the draft pane's 「查看提示词」
        self.branch_nav = BranchNavigator()
        self.branch_nav.nodeSelected.connect(self.select_node)
        self.branch_nav.refreshRequested.connect(lambda: self._refresh_branches(force=True))
        self.tabs.addTab(self.branch_nav, tr("nav.tab"))
        self.tabs.currentChanged.connect(lambda _i: self._refresh_branches())
        self.session.changed.connect(self._on_changes)  # change notices: each command's, broadcast by the session
        self._notice_focus: Optional[str] = None  # a branch node the next branches notice keeps in view
        self._nav_stale = True
        self.draft_pane.inspectRequested.connect(self.inspect_latest)
        # agent mode: the chapter tree (with its editor) and the checkpoint timeline
        self.chapter_pane = ChapterTreePane()
        self.timeline_pane = CheckpointTimelinePane()
        self.tabs.addTab(self.chapter_pane, tr("story.chapters"))
        self.tabs.addTab(self.timeline_pane, tr("story.timeline"))
        self.chapter_pane.changed.connect(self.timeline_pane.refresh)
        self.timeline_pane.restored.connect(self._after_restore)
        agent_desk.install(self)  # issue 17: 撤销本轮 says why it is off; the chapter editor's focus mode
        writing_panes.install(self)  # issue 19: 大纲, 伏笔, 设定 and 审稿 beside 章节; progress in 章节 and the status bar
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), False)

        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(centre)
        self.split.addWidget(self.tabs)
        self.split.setSizes([230, 700, 430])
        self.split.setChildrenCollapsible(False)
        self.setCentralWidget(self.split)
        self.status_label = QLabel("")
        self.statusBar().addPermanentWidget(self.status_label)
        self.ask_dialog = AskDialog(self)
        from .panels_view import PanelsView  # issue 5: the card's Liyuan panels beside the conversation

        self.panels_view = PanelsView()
        self.tabs.setTabVisible(self.tabs.addTab(self.panels_view, tr("panels.title")), False)

        from . import st_migration  # noqa: F401  its strings (文件 → 从 SillyTavern 导入…)

        menu = self.menuBar().addMenu(tr("app.title"))
        for text, slot, seq in ((tr("import.card"), self.import_card_dialog, "Ctrl+O"),
                                (tr("menu.import.prose"), self.import_prose_dialog, None),
                                (tr("work.menu.import.chat"), lambda: chat_work.import_st_chat_dialog(self), None),
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
        from .conversation import frames_trust_action  # issue 5: per-card "trusted status bars" switch

        self.frames_trust_action = frames_trust_action(self, lambda: self.chat, self.view)
        menu.insertAction(menu.actions()[1], self.frames_trust_action)  # next to 导入角色卡 (where scripts are asked)
        menu.aboutToShow.connect(self.frames_trust_action.sync)
        # the card's regex scripts (status bars, beautifying) can be switched on later, not only when importing
        self.scripts_action = QAction(tr("scripts.action"), self)
        self.scripts_action.setObjectName("cardScriptsAction")
        self.scripts_action.setCheckable(True)
        self.scripts_action.triggered.connect(self._scripts_toggled)
        menu.insertAction(self.frames_trust_action, self.scripts_action)
        menu.aboutToShow.connect(self._sync_scripts_action)
        self._build_chat_menu(menu)
        self.set_busy(False)
        try:
            library.ensure_demo_card()  # the bundled card is always there to start from
        except OSError as e:
            log.warning("could not install the demo card: %s", e)
        self.refresh_tree()
        self._restore_window()

    def _build_chat_menu(self, menu: Any) -> None:
        """The 对话 and 帮助 menus, and the screens hooked into them and into ``menu`` (梨园): presets, find,
        search, manage, export, avatars, reply actions, prose-only, profiles, about, persona, world books."""
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
        from .presets_dialog import add_presets_action  # issue 14 §3: the preset library and the chat's preset
        from .profiles import install_profile_bar  # issue 14 §3: connection profiles, switched in one click

        self.presets_action = add_presets_action(self, chat_menu)
        from .find_bar import install_find_bar  # issue 17: Ctrl+F, find in every message of the chat

        install_find_bar(self, chat_menu)
        from .search_dialog import install_search_dialog  # issue 17: every chat of every card

        install_search_dialog(self, chat_menu)
        from .manage import install_manage  # issue 17: rename / duplicate / delete to the 回收站, the folder watcher

        install_manage(self, menu)
        from .export_menu import install_export_menu  # issue 17: 导出 (chat .jsonl, story md/epub/docx, card png/json)

        install_export_menu(self, chat_menu)
        from .avatars import install_avatars  # issue 17: card and persona pictures in the list and the conversation

        install_avatars(self)
        from .reply_actions import install_reply_actions  # issue 17: edit a reply, 续写, 代拟, 作者注

        install_reply_actions(self, chat_menu)
        from .prose_toggle import install_prose_toggle  # issue 18 §2: tool play or prose-only play

        install_prose_toggle(self, chat_menu)
        install_profile_bar(self)
        from .about import show_about  # 关于梨园: version, build date, data and log folders

        self.about_action = self.menuBar().addMenu(tr("menu.help")).addAction(tr("about.action"))
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(lambda: show_about(self))
        from .persona_picker import open_persona_dialog  # issue 17: the persona per chat (menu 对话)

        self.persona_action = chat_menu.addAction(tr("persona.menu"))
        self.persona_action.setObjectName("personaAction")
        self.persona_action.triggered.connect(lambda: open_persona_dialog(self))
        from .world_books import open_world_books  # issue 17: world books per chat and global, the card's book

        self.books_action = chat_menu.addAction(tr("books.menu"))
        self.books_action.setObjectName("worldBooksAction")
        self.books_action.triggered.connect(lambda: open_world_books(self))

    # -- window state -----------------------------------------------------------------------------------------
    def _restore_window(self) -> None:
        w = self.settings.window or {}
        try:
            if w.get("geometry"):
                self.restoreGeometry(QByteArray(base64.b64decode(w["geometry"])))
            if w.get("split"):
                self.split.setSizes([int(x) for x in w["split"]])
        except (ValueError, TypeError):
            pass

    def save_window_state(self) -> None:
        """Persist geometry, pane sizes and the open chat in the settings file."""
        w = dict(self.settings.window or {})
        w["geometry"] = base64.b64encode(bytes(self.saveGeometry())).decode("ascii")
        w["split"] = self.split.sizes()
        if self.chat_ref is not None and self.card_ref is not None:
            w["last_card"] = self.card_ref.dir
            w["last_chat"] = self.chat_ref.dir
        self.settings.window = w
        try:
            # only the window part is this method's: the rest comes from the file as it is now, so settings edited
            # by hand (or by another window) while the app ran are not overwritten on exit
            on_disk = load_settings()
            on_disk.window = w
            save_settings(on_disk)
        except OSError as e:
            log.warning("could not save settings: %s", e)

    def closeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if self.busy:
            # stop the beat and close once it is stored (the draft so far lands in the session file)
            self._closing = True
            self.stop_clicked()
            self.statusBar().showMessage(tr("status.stopping"), 5000)
            ev.ignore()
            return
        self.save_window_state()
        self.display_worker.shutdown()
        super().closeEvent(ev)

    def start(self) -> Optional[asyncio.Task[Any]]:
        """After show(): reopen the last chat, or the welcome page when no model is configured / nothing open.

        The last chat is reopened off the UI thread (``chat_work.open_chat_async``, issue 15 item 12): a long chat
        takes a second or more to read, and the window paints and answers meanwhile (the welcome page shows if it
        cannot be reopened). Returns that task (None when there was nothing to reopen)."""
        w = self.settings.window or {}
        from .theme import mode as theme_mode

        self.view.set_theme(theme_mode())
        if w.get("split"):  # again now that the window has its restored size (sizes are laid out proportionally)
            try:
                self.split.setSizes([int(x) for x in w["split"]])
            except (ValueError, TypeError):
                pass
        last_card, last_chat = w.get("last_card"), w.get("last_chat")

        def at_home(p: Any) -> bool:  # a settings file copied from another data folder must not reopen its chats
            try:
                Path(p).resolve().relative_to(library.cards_root().resolve())
                return True
            except (ValueError, OSError, TypeError):
                return False

        if last_card and last_chat and at_home(last_card) and at_home(last_chat) and Path(last_chat, "session.jsonl").exists():
            card = library.CardRef(name=Path(last_card).name, dir=last_card)
            chat = library.ChatRef(name=Path(last_chat).name, dir=last_chat)
            from . import chat_work

            async def reopen() -> None:
                if not await chat_work.open_chat_async(self, card, chat, quiet=True):
                    self._show_home()

            return chat_work.spawn(self, reopen())
        self._show_home()
        return None

    def _show_home(self) -> None:
        """The page shown when no chat is open: the card list (a model is configured) or the welcome page (which
        gives way to the card list as soon as a model is set up: :meth:`apply_settings`)."""
        if self.settings.active_provider:
            # a model is configured: straight to the card list
            self.view.show_chat()
            self.view.set_transcript([], False)
            self.view.set_banner(tr("banner.pick"))
            self.statusBar().showMessage(tr("status.model.ready"), 8000)
        else:
            self.view.show_welcome()

    # -- tree -----------------------------------------------------------------------------------------------
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
        from .avatars import decorate_tree  # the cards' pictures (issue 17)

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

            chat_work.spawn(self, chat_work.open_chat_async(self, data[1], data[2]))
        elif data[0] == "card":
            self.card_ref = data[1]

    # -- models ---------------------------------------------------------------------------------------------
    def provider_models(self) -> tuple[Optional[ChatModel], Optional[ChatModel], str]:
        """The chat model, the scribe's model and why there is none, from the settings; on the UI thread before any
        chat is opened or created, so it also makes sure the engine is imported here (ui/warm.py), not on the worker
        that then opens the chat."""
        from ..core.chat.build import chat_models  # the one way from settings to models (the CLI's too)
        from . import warm

        warm.ensure_engine()
        models = chat_models(self.settings)
        return models.main, models.scribe, tr(models.why) if models.why else ""

    def _demo_model(self, chat_dir: Path, played: int) -> ReplayModel:
        replay = Path(self.card_ref.dir if self.card_ref else "") / "replay.json"
        from ..core.llm.replay import ReplayModel

        full = ReplayModel.from_file(replay, delay_ms=DEMO_DELAY_MS)
        beats = full.beats[played:]
        actor = [c for b in beats for c in b.actor]
        scribe = [s for b in beats for s in b.scribe]
        self.demo_lines = [b.user for b in beats]
        self.session.demo_answers = [a for b in beats for a in b.ask_answers]
        return ReplayModel(actor=actor, scribe=scribe, label=full.name.split(": ", 1)[-1], delay_ms=DEMO_DELAY_MS, beats=beats)

    # -- opening chats --------------------------------------------------------------------------------------
    def open_chat(self, card: library.CardRef, chat: library.ChatRef, quiet: bool = False) -> bool:
        """Open ``chat``; returns False (with a message unless ``quiet``) when it cannot be opened. Synchronous (the
        start-up restore, the demo, search hits); the chat list, new chats and imports open through
        :mod:`.chat_work`, which runs :meth:`load_chat` on a worker thread."""
        if not self.may_open(quiet):
            return False
        try:
            chat_obj, is_demo = self.load_chat(card, chat, self.provider_models())
        except (CardError, SessionError, OSError, ValueError) as e:
            if not quiet:
                QMessageBox.warning(self, tr("app.title"), tr("err.open.chat", error=e))
            return False
        return self.install_chat(card, chat, chat_obj, is_demo)

    def may_open(self, quiet: bool) -> bool:
        """Whether another chat may be opened now (no beat running; unsaved chapter edits confirmed)."""
        if self.session.task is not None and not self.session.task.done():
            return False
        editor = getattr(getattr(self, "chapter_pane", None), "editor", None)
        if editor is not None and getattr(editor, "dirty", False) and not quiet:
            from .dialogs import confirm  # No is the default: Enter or Esc keeps the unsaved chapter open

            if not confirm(self, tr("app.title"), tr("confirm.switch.unsaved")):
                return False
        return True

    def load_chat(self, card: library.CardRef, chat: library.ChatRef,
                   models: tuple[Optional[ChatModel], Optional[ChatModel], str]) -> tuple[Chat, bool]:
        """The engine half of opening a chat — card, session, books — touching no widget (safe on a worker thread;
        ``models``: :meth:`provider_models`, made on the UI thread). Returns (chat, is_demo). Raises CardError,
        SessionError, OSError, ValueError."""
        c = card.load()
        from ..core.chat.build import build_chat
        from ..core.chat.folder import chat_info

        is_demo = chat_info(Path(chat.dir)).demo
        model, scribe, why = models
        if is_demo:  # the replay is set up per beat (see send_clicked)
            model, scribe = None, None
        elif model is None:
            model = _NoModel(why)
        # the one way from settings to a chat (the CLI's too): world info, compaction share, the profile's sampling
        chat_obj = build_chat(Path(chat.dir), c, self.settings, model or _NoModel(""), scribe)
        # what the UI half asks first, computed here (on a worker, from chat_work) so that half stays quick: the
        # context meter (reads the whole history once; cached in the chat) and the transcript layout
        chat_obj.context_usage()
        chat_obj.warm_up()  # the book's matchers and key index: the first beat would build them on the UI thread
        chat_obj.transcript_page(None, 1)
        chat_obj.frame_variables()  # the frames' tables: a walk of the whole branch when none was ever written
        return chat_obj, is_demo

    def install_chat(self, card: library.CardRef, chat: library.ChatRef, chat_obj: Chat, is_demo: bool) -> bool:
        """The UI half of opening a chat: show ``chat_obj`` (made by :meth:`load_chat`). False when a beat started
        meanwhile (the new chat is dropped)."""
        if self.session.task is not None and not self.session.task.done():
            chat_work.release_chat(chat_obj)
            return False
        if self.chat_ref is not None:
            self._inputs[self.chat_ref.dir] = self.input.toPlainText()
        typed_before = self.input.toPlainText() if self.chat_ref is None else ""
        old = self.session.set_chat(card, chat, chat_obj, is_demo)
        self.display_worker.reset_issues()
        # each chat keeps its own unsent words; words typed before any chat was open go to the first one opened
        self.input.setPlainText(self._inputs.get(chat.dir, "") or typed_before)
        self._after_open()
        for w in chat_obj.load_warnings:  # kept in the activity list too: a status message is gone in 8 s
            w = show(w)  # an engine message (core/messages.py) in the window's language
            self.statusBar().showMessage(w, 8000)
            self.draft_pane.notice(w)
        if old is not chat_obj:
            chat_work.release_chat(old)  # freed off the UI thread, no collector pass (issue 15 item 12)
        return True

    def _after_open(self) -> None:
        """Another chat is shown: every pane follows it (module doc), the conversation covered until it is painted."""
        chat = self.chat
        assert chat is not None
        self.view.hold_until_painted()  # the old chat's messages are never seen beside the new chat's panes
        self.view.show_chat()
        self.view.set_card(Path(chat.card.path).parent if chat.card.path else None)  # frames' storage and trust
        self.view.set_user_label(chat.persona)
        agent = chat.mode == "agent"
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), agent)
            pane.set_chat(chat if agent else None)
        agent_desk.show_agent_desk(self, agent)  # an agent chat opens on 章节, not on the empty 稿纸
        self.writing_panes.set_chat(chat)  # issue 19: the writing room (agent chats only)
        demo = self.is_demo
        self.view.set_banner(tr("replay.banner") if demo or chat.model.is_replay else None)
        self.reload_transcript()
        self.refresh_state()
        self.draft_pane.beat_id = self.draft_pane.turn = None  # another chat: its beat shown afresh
        self._show_branch_beat()
        model_name = tr("model.replay.name") if demo else chat.model.name
        self.status_label.setText(tr("status.chat", card=chat.card.name, chat=self.chat_ref.name if self.chat_ref else "", model=model_name))
        self._prefill()
        self._panes_chat = chat
        self.set_busy(False)
        self._branches_changed()
        self._show_recovery()
        self.view.release_after_paint()
        self.session.announce_shown()

    def close_chat(self) -> None:
        """No chat is shown any more (the open one was deleted or moved): the conversation goes back to the card
        list and every pane empties — the draft, the ledger, the navigator, the agent panes, the find bar
        (:attr:`chatShown` with None). Safe to call when nothing is open."""
        old = self.chat
        if old is not None and self.chat_ref is not None:
            self._inputs.pop(self.chat_ref.dir, None)
        self.session.drop()
        self.display_worker.restart()
        self.view.set_transcript([], False)
        self.view.set_banner(tr("banner.pick"))
        self.status_label.setText("")
        self.set_busy(False)  # empties the panes (_panes_follow_none)

    def _panes_follow_none(self) -> None:
        """The panes of a chat, emptied (no chat shown)."""
        self._panes_chat = None
        self.draft_pane.reset()
        self.draft_pane.beat_id = self.draft_pane.turn = None
        self.draft_pane.set_context(None)
        self.draft_pane.show_recovery(0, None)
        self.state_pane.show_state(WorldState(), [], [], "")
        self.panels_view.refresh(None)  # the card's panels tab goes with its chat
        self.branch_nav.set_nodes([])
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), False)
            pane.set_chat(None)
        if self.tabs.currentWidget() in (self.chapter_pane, self.timeline_pane):
            self.tabs.setCurrentWidget(self.draft_pane)
        self.writing_panes.set_chat(None)
        self.input.clear()
        self.session.announce_shown()

    def _show_branch_beat(self) -> None:
        """The draft pane shows the newest beat of the shown branch: an unfinished one with its banner, else the
        last beat's draft and cache share, else nothing. The pane is kept as it is — the beat's activity, the model's
        output — while the branch still ends in the turn it shows and either that beat is still the newest or the
        turn's reply is a version the user wrote (``Chat.edit_reply``: a new version without a beat of its own, the
        item's ``edited``); the draft then reads as the reply does now."""
        chat, pane = self.chat, self.draft_pane
        turn = self._last_user_id()
        if chat is None:
            pane.reset()
            pane.beat_id = pane.turn = None
            return
        pending = chat.pending_draft()
        beat = pending if pending is not None else chat.latest_beat()
        last = self.transcript.items[-1] if len(self.transcript.items) else None
        edited = last is not None and last["role"] == "assistant" and bool(last.get("edited"))
        if pending is None and pane.beat_id is not None and turn is not None and pane.turn == turn \
                and ((beat is not None and beat.id == pane.beat_id) or edited):
            if last is not None and last["role"] == "assistant" and last["text"] != pane.draft.toPlainText():
                pane.draft.setPlainText(last["text"])
            return
        if beat is None:
            pane.reset()
        elif pending is not None:
            pane.show_unfinished(pending.draft, pending.draft_version, pending.outcome)
        else:
            pane.show_beat(beat.draft, beat.draft_version, beat.outcome, chat.last_beat_tokens())
        pane.beat_id = beat.id if beat is not None else None
        pane.turn = turn

    def _last_user_id(self) -> Optional[str]:
        """The session id of the newest user message on the shown branch (from the page of items), or None."""
        items = self.transcript.items
        for i in range(len(items) - 1, max(-1, len(items) - 1 - PAGE), -1):
            if items[i]["role"] == "user":
                return items[i]["id"]
        return None

    def _demo_progress(self) -> int:
        """Demo beats finished on this branch (sealed or revised); a stopped beat is played again."""
        if self.chat is None:
            return 0
        return self.chat.sealed_beat_count()

    def _prefill(self) -> None:
        if self.is_demo and self.chat is not None:
            played = self._demo_progress()
            from ..core.llm.replay import ReplayModel

            full = ReplayModel.from_file(Path(self.card_ref.dir) / "replay.json") if self.card_ref else None
            lines = [b.user for b in full.beats] if full else []
            if played < len(lines):
                self.input.setPlainText(lines[played])
                # called from a beat's own clean-up too, while its task is still finishing: ask set_busy's flag,
                # not the task (which would keep Send greyed out after every demo beat)
                self.send_btn.setEnabled(not self.session.marked_busy)
            else:
                self.input.clear()
                self.send_btn.setEnabled(False)
                self.statusBar().showMessage(tr("demo.done"), 15000)

    def start_demo(self) -> None:
        """Create a new demo chat on the 青梧 card (replay model) and open it, input pre-filled."""
        if self.refuse_read_only():
            return
        try:
            card = library.ensure_demo_card()
            d = library.new_chat_dir(card, time.strftime("演示-%Y%m%d-%H%M%S"))
            c = card.load()
            self.card_ref = card
            from ..core.chat.build import NewChat, build_chat

            build_chat(d, c, self.settings, _NoModel(""), new=NewChat(demo=True))
        except (CardError, SessionError, OSError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.demo", error=e))
            return
        self.session.broadcast(LIBRARY)
        self.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))

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
        from .presets_dialog import NewChatDialog, preset_for_new_chat

        dlg = NewChatDialog(self.settings.preset_for_new_chat(), self)  # mode and preset (default preselected)
        if dlg.exec() != NewChatDialog.DialogCode.Accepted:
            return
        mode, preset_name = dlg.choice()
        preset = preset_for_new_chat(preset_name)
        from ..core.chat.build import NewChat, build_chat  # here, on the UI thread: create() runs on a worker

        settings = self.settings

        def create(d: Path, models: tuple) -> None:  # on a worker thread (chat_work), then opened there too
            model, scribe, why = models  # the persona: the library's default, else 我的角色 (settings)
            build_chat(d, card.load(), settings, model or _NoModel(why), scribe, preset=preset,
                       new=NewChat(mode=mode)).close()

        from . import chat_work

        chat_work.spawn(self, chat_work.new_chat_async(self, card, create))

    def import_card_dialog(self) -> None:
        if self.refuse_read_only():
            return
        path, _ = QFileDialog.getOpenFileName(self, tr("import.card"), str(Path.home()), tr("import.card.filter"))
        if path:
            from . import chat_work  # read and copied on a worker thread
            from .manage import start_import  # a card that exists: 替换 / 保留两个 / 取消 (issue 17)

            if start_import(self, path):
                chat_work.spawn(self, chat_work.import_card_async(self, path))

    def import_sillytavern_dialog(self) -> None:
        """文件 → 从 SillyTavern 导入… (ui/st_migration.py, issue 16 §3); the card list refreshes after an import."""
        if self.refuse_read_only():
            return
        from .st_migration import open_dialog

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
        from ..core.cards.regex_scripts import scripts_from_card

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
        from ..core.chat.prose_import import ProseImportError, import_folder, import_long_text

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
        from ..core.chat.prose_import import roleplay_to_agent

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

    def _after_restore(self) -> None:
        self.chapter_pane.refresh()
        self.reload_transcript()
        self.refresh_state()
        self._branches_changed()
        agent_desk.after_restore(self)  # the conversation says what was restored and how to undo it

    def _on_changes(self, changes: Any) -> None:
        """Repaint only what a command's notice names (ui/session.py ``changed``; docs/architecture.md "Change
        notices"): the transcript for messages, the ledger pane and panels for ledger or settings, the navigator and
        the context meter for branches, the chapter tree and timeline for files, checkpoints, outline or threads; the card and chat lists for the
        library."""
        if changes.library:
            self.refresh_tree()
        if self.chat is None:
            return
        if changes.messages:
            self.reload_transcript()
        if changes.ledger or changes.settings:
            self.refresh_state()
        if changes.branches or changes.summaries:  # the context meter counts the summaries
            focus, self._notice_focus = getattr(self, "_notice_focus", None), None
            self._branches_changed(focus)
        if self.chat.mode == "agent" and (changes.files or changes.checkpoints or changes.outline or changes.threads):
            self._story_changed()

    def _story_changed(self) -> None:
        for pane in (getattr(self, "chapter_pane", None), getattr(self, "timeline_pane", None)):
            if pane is not None:
                pane.refresh()

    def dragEnterEvent(self, ev: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev: QDropEvent) -> None:  # noqa: N802 - Qt API
        for url in ev.mimeData().urls():
            if url.isLocalFile():
                from . import chat_work
                from .manage import start_import  # a card that exists: ask first (issue 17)

                if start_import(self, url.toLocalFile()):
                    chat_work.spawn(self, chat_work.import_card_async(self, url.toLocalFile()))

    def open_settings(self) -> None:
        from .settings import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        dlg.settingsSaved.connect(self.apply_settings)
        dlg.languageChanged.connect(self._language_changed)
        dlg.open()
        self._settings_dialog = dlg

    def _language_changed(self, _lang: str) -> None:
        """The language switched (settings dialog): every window's texts again, now (issue 17, ui/retranslate)."""
        from .retranslate import retranslate_app

        retranslate_app(self)
        if self.chat is not None and not self.busy:  # texts built from the chat's state (panes, banner); the draft
            self.reload_transcript()                 # pane keeps the beat's activity, switched by retranslate_app
            self.refresh_state()
            self._branches_changed(None)
            self._show_recovery()
            self.set_busy(self.busy)
        self.statusBar().showMessage(tr("lang.switched"), 6000)

    def open_world_info_settings(self) -> None:
        """世界书设置: SillyTavern's world-info settings for all chats or for the open one (ui/world_info_settings)."""
        from .world_info_settings import WorldInfoSettingsDialog

        chat = None if self.is_demo else self.chat
        dlg = WorldInfoSettingsDialog(self.settings, chat, self.chat_ref.name if chat is not None and self.chat_ref else "", self)
        dlg.settingsSaved.connect(self.apply_settings)
        dlg.chatSaved.connect(lambda: self.statusBar().showMessage(tr("wi.saved"), 8000))
        dlg.open()
        self._wi_dialog = dlg

    def apply_settings(self, s: AppSettings) -> None:
        """Settings saved (the settings dialogs, a profile switch): the theme, and the open chat's world-info
        defaults and models follow them (the demo keeps its replay)."""
        self.settings = s
        from .theme import apply as apply_theme

        apply_theme(s.theme)  # the conversation follows through theme.notifier
        if self.chat is None and self.view.mode() == "welcome" and s.active_provider:
            self._show_home()  # a model is set up now: the welcome page stops offering to set one up
        if self.chat is not None and not self.is_demo:
            self.chat.world_info_defaults = s.world_info  # the chat's own overrides stay on top
            model, scribe, _why = self.provider_models()
            if model is not None:
                self.chat.model, self.chat.scribe_model = model, scribe
                self.status_label.setText(tr("status.chat.short", card=self.chat.card.name, model=model.name))

    # -- transcript -----------------------------------------------------------------------------------------
    def reload_transcript(self) -> None:
        """Hand the newest page of the active branch's transcript to the view. Only that page is built (a
        10,000-beat chat shows its last screen as fast as a short one); older pages are built as they are scrolled
        to (``_items`` is a :class:`core.chat.TranscriptItems`)."""
        if self.chat is None:
            return
        self.display_worker.restart()  # results for the old page would paint over newer text
        self.transcript.items = self.chat.transcript_items(PAGE)  # type: ignore[assignment]
        self.transcript.shown_from = max(0, len(self.transcript.items) - PAGE)
        self._frame_context()
        self.view.set_transcript(self.display_items(self.transcript.shown_from, len(self.transcript.items)), self.transcript.shown_from > 0)

    def display_items(self, start: int, end: int) -> list[dict[str, Any]]:
        """Items start..end as shown: the card's display regex scripts applied at each item's depth, and the item's
        place in the transcript as its id (SillyTavern's message index: 0 = the opening), which is what status-bar
        scripts expect from getCurrentMessageId(); the session entry id stays in ``entry_id``. Items whose display
        text needs a script run come back from their stored text marked ``scripting`` and are queued on the
        display worker (newest first), which fills them in (issue 13 §4)."""
        n = len(self.transcript.items)
        chat = self.chat
        items = [dict(it, id=str(i), entry_id=it["id"]) for i, it in enumerate(self.transcript.items[start:end], start)]
        if chat is None:
            return items
        shown, todo = split_known(items, lambda it: chat.display_text_if_known(it, n - 1 - int(it["id"])))
        if todo:
            def run(it: dict[str, Any]) -> tuple[str, list[str]]:
                issues: list[str] = []
                return chat.display_text(it, n - 1 - int(it["id"]), issues), issues
            self.display_worker.submit(todo[::-1], run)
        return shown

    def _display_filled(self, _gen: int, item: dict[str, Any], text: str) -> None:
        """The display worker's result for one item: re-render it in place (if still shown)."""
        self.view.update_item(dict(item, text=text))

    def _older(self, _oldest_id: str) -> None:
        if self.transcript.shown_from <= 0:
            return
        start = max(0, self.transcript.shown_from - PAGE)
        chunk = self.display_items(start, self.transcript.shown_from)
        self.transcript.shown_from = start
        self.view.prepend(chunk, start > 0)

    def refresh_state(self) -> None:
        if self.chat is None:
            return
        e = self.chat.ledger_entry()
        state = WorldState.model_validate(e.state) if e else WorldState()
        self.state_pane.show_state(state, list(e.applied) if e else [], list(e.warnings) if e else [], e.source if e else "")
        self.panels_view.refresh(self.chat)  # issue 5: panels follow the scribe, the branch and ledger edits

    def _frame_context(self) -> None:
        """What the status bars built from now on see besides their message's variables (issue 13 §2): the persona
        and card names (SillyTavern.name1/name2, {{user}}/{{char}} in substitudeMacros) and the chat / character /
        global tables frames wrote on the active branch (empty when none)."""
        chat = self.chat
        if chat is None:
            return
        self.view.set_frame_context(**chat_frame_context(chat))

    def _frame_variables_written(self, frame_name: str, payload: dict) -> None:
        """A status bar wrote variables (± buttons, updateVariablesWith …): kept through the chat as a user
        snapshot on the branch, so the write survives reopening (Chat.write_frame_variables). While a beat runs the
        chat refuses; the bar keeps its value and the status bar says it was not saved."""
        chat = self.chat
        if chat is None:
            return
        try:
            chat.write_frame_variables(payload.get("message_id"), payload.get("variables") or {},
                                       str(payload.get("type") or "message"))
        except (RuntimeError, ValueError, OSError) as e:
            log.warning("status bar %s: variables not saved: %s", frame_name, e)
            self.statusBar().showMessage(tr("frame.vars.unsaved", error=e), 8000)

    # -- commands -------------------------------------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        """What can be done now (a beat running or not) — and, when the chat was dropped by a command that set
        ``chat`` to None itself, the panes emptied first (module doc)."""
        if self.chat is None and self._panes_chat is not None:
            self._panes_follow_none()
        has_chat = self.chat is not None
        self.send_btn.setEnabled(has_chat and not busy)
        self.regen_btn.setEnabled(has_chat and not busy and not self.is_demo
                                  and self.chat.last_user_text() is not None)  # nothing to play again before a beat
        self.regen_action.setEnabled(self.regen_btn.isEnabled())
        agent_desk.update_undo(self, busy)  # enabled, or a tooltip saying why not (the button and the menu item)
        self.branch_nav.set_busy(busy)
        self.stop_btn.setEnabled(busy)
        self.input.setReadOnly(busy)
        self.draft_pane.seal_btn.setEnabled(not busy)
        self.draft_pane.continue_btn.setEnabled(not busy)
        for b in (self.draft_pane.repair_btn, self.draft_pane.resend_btn, self.draft_pane.drop_btn):
            b.setEnabled(not busy)
        for pane in (getattr(self, "chapter_pane", None), getattr(self, "timeline_pane", None)):
            if pane is not None:
                pane.set_busy(busy)
        self.session.set_busy(busy)  # the panes that follow the session (the find bar, the agent desk)

    # -- the session's state, read and written through the window while the panes move to the session ---------
    @property
    def busy(self) -> bool:
        """Whether a beat command is running (:attr:`Session.busy`)."""
        return self.session.busy

    @property
    def chat(self) -> Optional[Chat]:
        """The open chat (:attr:`Session.chat`); None when none is shown."""
        return self.session.chat

    @chat.setter
    def chat(self, chat: Optional[Chat]) -> None:
        self.session.chat = chat

    @property
    def chat_ref(self) -> Optional[library.ChatRef]:
        """Where the open chat is stored (:attr:`Session.chat_ref`)."""
        return self.session.chat_ref

    @chat_ref.setter
    def chat_ref(self, ref: Optional[library.ChatRef]) -> None:
        self.session.chat_ref = ref

    @property
    def card_ref(self) -> Optional[library.CardRef]:
        """The selected card (:attr:`Session.card_ref`)."""
        return self.session.card_ref

    @card_ref.setter
    def card_ref(self, ref: Optional[library.CardRef]) -> None:
        self.session.card_ref = ref

    @property
    def is_demo(self) -> bool:
        """Whether the open chat is the bundled demo (:attr:`Session.is_demo`)."""
        return self.session.is_demo

    @is_demo.setter
    def is_demo(self, demo: bool) -> None:
        self.session.is_demo = demo

    @property
    def transcript(self) -> TranscriptPage:
        """The transcript's paging state (:attr:`Session.transcript`)."""
        return self.session.transcript

    @property
    def chatShown(self) -> Any:  # noqa: N802 - the session's Qt signal
        """:attr:`Session.chatShown`: another chat is shown (the ``Chat``), or none (None)."""
        return self.session.chatShown

    @property
    def busyChanged(self) -> Any:  # noqa: N802 - the session's Qt signal
        """:attr:`Session.busyChanged`: a command started (True) or ended (False)."""
        return self.session.busyChanged

    def on_event(self, ev: Any) -> None:
        """An engine event of the running beat (``core.chat`` events: ``kind`` beat_started, draft_changed,
        scribe_finished, …): the draft pane, the conversation's pending item and the ledger follow it."""
        self.draft_pane.on_event(ev)
        k = getattr(ev, "kind", "")
        if k == "beat_started":
            self.statusBar().clearMessage()  # a message about an earlier beat (an error) must not outlive it
            if ev.how in ("send", "edit"):
                self.view.append_item({"id": f"pending-user-{ev.beat}", "role": "user", "text": ev.user, "beat": ev.beat})
            elif self.transcript.items:  # regenerate / continue: the old reply or draft makes way for the new one
                last = self.transcript.items[-1]
                if last["role"] in ("assistant", "draft"):
                    self.view.remove_item(str(len(self.transcript.items) - 1))
            self.view.scroll_to_bottom()
            self.view.set_pending("", tr("conv.writing", name=self.chat.card.name if self.chat else ""))
            self.tabs.setCurrentWidget(self.draft_pane)
        elif k == "draft_changed":
            self.view.set_pending(ev.text, tr("pending.draft", v=ev.version))
        elif k == "scribe_finished":
            self.refresh_state()

    def run_command(self, make: Callable[[], Awaitable[BeatResult]], restore: str = "") -> Optional[asyncio.Task[Any]]:
        """Run one beat command as a task (one at a time). ``restore``: the words the input box gave up for it,
        put back when the disk refused them before anything was played."""
        if self.chat is None or self.busy or self.refuse_read_only():
            return None

        async def go() -> None:
            self.set_busy(True)
            res: Optional[BeatResult] = None
            from ..core.chat import BeatSaveError, SessionWriteError

            try:
                res = await make()
                self.last_result = res
                self.results.append(res)
                if res.outcome == "error" and res.error:
                    self.statusBar().showMessage(tr("err.beat", error=res.error), 15000)
            except ValueError as e:
                self.statusBar().showMessage(show(e), 8000)
            except OSError as e:
                if isinstance(e, SessionWriteError):
                    if restore and not self.input.toPlainText().strip():
                        self.input.setPlainText(restore)  # nothing was played: the words go back to the box
                    QMessageBox.critical(self, tr("app.title"), tr("err.disk.refused", error=e.strerror))
                elif isinstance(e, BeatSaveError):
                    self._offer_retry_save(e)
                else:
                    QMessageBox.critical(self, tr("app.title"), tr("err.disk.write", error=e))
            except Exception as e:  # never let a beat take the window down
                log.exception("beat failed")
                QMessageBox.critical(self, tr("app.title"), tr("err.beat.unexpected", error=f"{type(e).__name__}: {e}"))
            finally:
                self.view.set_pending(None)
                self.session.broadcast(self.chat.last_changes if self.chat is not None else None)
                beat = self.chat.pending_draft() or self.chat.latest_beat() if self.chat is not None else None
                self.draft_pane.beat_id = beat.id if beat is not None else None  # what the pane shows now
                self.draft_pane.turn = self._last_user_id()
                self._show_recovery()
                self.set_busy(False)
                self._prefill() if self.is_demo else None
                self.beatFinished.emit(res)
                if self._closing:
                    QTimer.singleShot(0, self.close)

        self.session.task = asyncio.ensure_future(go())
        return self.session.task

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

    def _offer_retry_save(self, e: Any) -> None:
        """The beat ran but the disk refused (part of) it: offer 「重试保存」 until it works or the user gives up
        (the lines stay in memory either way; the next successful save writes them)."""
        chat = self.chat
        while chat is not None:
            box = QMessageBox(QMessageBox.Icon.Critical, tr("app.title"), f"{e.strerror}", parent=self)
            retry = box.addButton(tr("save.retry"), QMessageBox.ButtonRole.AcceptRole)
            box.addButton(tr("save.later"), QMessageBox.ButtonRole.RejectRole)
            box.exec()
            if box.clickedButton() is not retry:
                return
            try:
                chat.retry_save()
                self.statusBar().showMessage(tr("saved"), 5000)
                if chat.needs_scribe:  # the beat was saved late: the scribe keeps its ledger now
                    QTimer.singleShot(0, lambda: self.run_command(lambda: chat.finish_pending(on_event=self.on_event)))
                return
            except OSError as again:
                e = again

    async def ask_user(self, req):
        """The engine's question to the user during a beat (an ask request), answered in the ask dialog; the demo
        notes the answer its recording gave."""
        note = ""
        if self.is_demo and self.session.demo_answers:
            note = tr("demo.ask.note", answer=self.session.demo_answers[0])
        self.ask_dialog.set_note(note)
        return await self.ask_dialog.ask(req)

    #: why nothing can be played: the data folder cannot be written (set by ``app`` at start-up; "" when it can)
    read_only_reason: str = ""

    def refuse_read_only(self) -> bool:
        """True (and says so in the status bar) when the data folder cannot be written: nothing that cannot be saved
        is started (issue 15 item 8)."""
        if not self.read_only_reason:
            return False
        self.statusBar().showMessage(tr("home.readonly.blocked"), 15000)
        return True

    def send_clicked(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.chat is None or self.busy or self.refuse_read_only():
            return
        if self.is_demo:
            # each demo beat replays its own recording, so a stopped beat is simply played again
            self.chat.model = self._demo_model(Path(self.chat.dir), self._demo_progress())
        if isinstance(self.chat.model, _NoModel):
            QMessageBox.information(self, tr("app.title"), self.chat.model.why or tr("model.none"))
            self.open_settings()
            return
        self.input.clear()
        chat = self.chat
        self.run_command(lambda: chat.send(text, ask=self.ask_user, on_event=self.on_event), restore=text)

    def stop_clicked(self) -> None:
        if self.chat is not None:
            self.chat.stop()
        if self.ask_dialog.isVisible():
            self.ask_dialog.stop()

    def regenerate_clicked(self) -> None:
        if self.chat is None:
            return
        if self.is_demo:
            self.statusBar().showMessage(tr("demo.no.regen"), 8000)
            return
        if self.chat.last_user_text() is None:
            self.statusBar().showMessage(tr("regen.none"), 6000)
            return
        chat = self.chat
        self.run_command(lambda: chat.regenerate(ask=self.ask_user, on_event=self.on_event))

    def seal_as_is(self) -> None:
        chat = self.chat
        if chat is not None:
            self.run_command(lambda: chat.seal_as_is(on_event=self.on_event))

    def continue_beat(self) -> None:
        chat = self.chat
        if chat is not None:
            self.run_command(lambda: chat.continue_beat(ask=self.ask_user, on_event=self.on_event))

    # -- what a crash left (issue 15) -----------------------------------------------------------------------
    def _show_recovery(self) -> None:
        """The draft pane's notices for ledger gaps and unanswered words on the shown branch."""
        chat = self.chat
        if chat is None or chat.mode == "agent":
            self.draft_pane.show_recovery(0, None)
            return
        left = chat.unanswered()
        self.draft_pane.show_recovery(len(chat.ledger_gaps()), left.text if left is not None else None)

    def repair_ledger(self) -> None:
        """「补记账」: the scribe for every reply a crash left without its ledger, oldest first."""
        chat = self.chat
        if chat is None:
            return

        async def repair() -> BeatResult:
            done = await chat.repair_ledger(on_event=self.on_event)
            from ..core.chat import BeatResult

            return done[-1] if done else BeatResult(user="", injection="", outcome="sealed")

        self.run_command(repair)

    def _edit_unanswered(self) -> None:
        """「改了再发」: the unanswered words go to the input box; sending them puts them beside the old ones."""
        left = self.chat.unanswered() if self.chat is not None else None
        if left is not None:
            self.input.setPlainText(left.text)
            self.input.setFocus()

    def _drop_unanswered(self) -> None:
        """「撤下」: the unanswered words leave the branch (kept on their own)."""
        if self.chat is None:
            return
        try:
            self.chat.drop_unanswered()
        except (ValueError, RuntimeError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        except OSError as e:
            QMessageBox.critical(self, tr("app.title"), tr("err.disk.write", error=e))
            return
        self.after_branch_switch()

    def ledger_edited(self, state: WorldState) -> None:
        """Append the user's ledger as a new snapshot; the next beat uses it."""
        if self.chat is None:
            return
        try:
            self.chat.edit_state(state)
        except OSError as e:
            QMessageBox.critical(self, tr("app.title"), tr("err.ledger.save", error=e))
            return
        self.session.broadcast(self.chat.last_changes)
        self.statusBar().showMessage(tr("ledger.updated"), 6000)

    # -- branches, inspector, summaries (issue 7) -----------------------------------------------------------
    def _branches_changed(self, focus: Optional[str] = None) -> None:
        """After anything that moves the branch: the navigator (now or when its tab is shown; ``focus`` a node to
        keep in view), 撤销本轮, the context meter."""
        self._nav_stale = True
        self._nav_focus = focus
        self._refresh_branches()
        agent_desk.update_undo(self)
        usage = None
        if self.chat is not None:
            try:
                usage = self.chat.context_usage()
            except Exception:  # the meter must never take the window down
                log.exception("context_usage failed")
        self.draft_pane.set_context(usage)

    def _can_undo(self) -> bool:
        """撤销本轮 applies to role-play chats with a user message on the branch (an agent chat undoes a turn in its
        checkpoint timeline, where the chapter files go back too)."""
        return self.chat is not None and self.chat.mode != "agent" and self.chat.last_user_text() is not None

    def _refresh_branches(self, force: bool = False) -> None:
        """Rebuild the navigator when it is the tab shown (else later, when it is shown)."""
        if self.chat is None:
            self.branch_nav.set_nodes([])
            return
        if not force and (not self._nav_stale or self.tabs.currentWidget() is not self.branch_nav):
            return
        self._nav_stale = False
        self.branch_nav.set_nodes(self.chat.branch_tree(), focus=getattr(self, "_nav_focus", None))

    def show_branches(self) -> None:
        """「分支」: show the navigator tab."""
        self.tabs.setCurrentWidget(self.branch_nav)
        self._refresh_branches(force=True)

    def after_branch_switch(self, message: str = "", focus: Optional[str] = None) -> None:
        """After anything that changes the shown branch (a swipe, the navigator, undo, an edited reply): the
        transcript, the ledger and the draft pane follow it (the newest beat shown, not the newest beat played)."""
        self._notice_focus = focus
        self.session.broadcast(self.chat.last_changes if self.chat is not None else None)
        self._show_branch_beat()
        self._show_recovery()
        self.set_busy(self.busy)  # what can be done follows the branch (重来, 续写)
        if self.is_demo:
            self._prefill()
        if message:
            self.statusBar().showMessage(message, 5000)

    def swipe_clicked(self, entry_id: str, delta: int) -> None:
        """「◀ / ▶」 on a reply or user message: show its previous / next alternative."""
        if self.chat is None or self.busy:
            return
        try:
            self.chat.swipe(entry_id, delta)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        self.after_branch_switch()

    def select_node(self, node_id: str) -> None:
        """A navigator row was clicked: show the branch through that user message."""
        if self.chat is None or self.busy:
            return
        try:
            self.chat.select(node_id)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        self.after_branch_switch(tr("nav.switched"), focus=node_id)

    def undo_clicked(self) -> None:
        """「撤销本轮」: the branch moves back before its last user message (nothing is deleted)."""
        if self.chat is None or self.busy:
            return
        if self.chat.mode == "agent":
            self.statusBar().showMessage(tr("undo.agent"), 8000)
            return
        last = self.chat.last_user_text()
        try:
            self.chat.undo()
        except ValueError:
            self.statusBar().showMessage(tr("undo.none"), 6000)
            return
        except (RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        if last is not None and not self.input.toPlainText().strip() and not self.is_demo:
            self.input.setPlainText(last)  # the undone words come back to the box, to send again or change
        self.after_branch_switch(tr("undo.done"))

    def edit_user_clicked(self, entry_id: str) -> Optional[EditMessageDialog]:
        """「编辑」 on a user message: a small box with its text; OK plays it again on a new branch."""
        if self.chat is None or self.busy:
            return None
        if self.is_demo:
            self.statusBar().showMessage(tr("branch.demo"), 8000)
            return None
        try:
            text = self.chat.entry_text(entry_id)
        except KeyError:
            return None
        dlg = EditMessageDialog(entry_id, text, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.submitted.connect(self.edit_user_submitted)
        dlg.open()
        self._edit_dialog = dlg
        return dlg

    def edit_user_submitted(self, entry_id: str, text: str) -> None:
        """Play the edited message: the view keeps what came before it, the beat runs like any other."""
        chat = self.chat
        if chat is None or self.busy:
            return
        if isinstance(chat.model, _NoModel):
            QMessageBox.information(self, tr("app.title"), chat.model.why or tr("model.none"))
            return
        # the edited message is on screen: look in the shown page only (older pages are built lazily)
        idx = next((i for i in range(len(self.transcript.items) - 1, self.transcript.shown_from - 1, -1) if self.transcript.items[i]["id"] == entry_id), None)
        if idx is not None:
            self.view.set_transcript(self.display_items(self.transcript.shown_from, idx), self.transcript.shown_from > 0)
        self.run_command(lambda: chat.edit_user(entry_id, text, ask=self.ask_user, on_event=self.on_event))

    def inspect_entry(self, entry_id: str) -> Optional[InspectorDialog]:
        """「查看提示词」 for the beat of a transcript item: every model call as sent, in a dialog."""
        if self.chat is None:
            return None
        try:
            calls = self.chat.inspect_beat(entry_id)
        except (KeyError, ValueError, OSError) as e:
            self.statusBar().showMessage(show(e), 8000)
            return None
        except Exception as e:  # a look at the record must never take the window down
            log.exception("inspect_beat failed")
            self.statusBar().showMessage(f"{tr('inspect.title')}{tr('sep.colon')}{type(e).__name__}: {e}", 8000)
            return None
        beat = next((it.get("beat") for it in self.transcript.items if it["id"] == entry_id), None)
        title = tr("inspect.title") + (f" · {tr('nav.beat', n=beat)}" if beat else "")
        dlg = InspectorDialog(calls, title, self)
        from .authors_note import notes_line  # issue 17: the Author's / Character's Note are shown here

        dlg.set_notes(notes_line(self.chat))
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self._inspector = dlg
        return dlg

    def inspect_latest(self) -> Optional[InspectorDialog]:
        """「查看提示词」 for the latest beat on the shown branch."""
        if self.chat is None:
            return None
        items = self.transcript.items or self.chat.transcript()
        last = next((it for it in reversed(items) if it["role"] in ("assistant", "draft", "user")), None)
        if last is None:
            self.statusBar().showMessage(tr("inspect.nobeat"), 6000)
            return None
        return self.inspect_entry(last["id"])

    def open_summaries(self):
        """「前情提要」: read and edit the relay summaries of the shown branch."""
        from .summaries import SummariesDialog

        if self.chat is None:
            return None
        dlg = SummariesDialog(self.chat, self, self.session)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self._summaries_dialog = dlg
        return dlg


class _NoModel:
    """Stands in when no model is configured: any call explains what to do."""

    is_replay = False

    def __init__(self, why: str):
        self.why = why
        self.name = tr("model.none.name")

    async def complete(self, request, on_delta=None):
        from ..core.llm.types import ModelError

        raise ModelError("no_model", self.why or tr("model.none.settings"))
