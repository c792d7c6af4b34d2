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

The window lays out the panes and wires the menus; what it does lives in its parts, mixins it inherits (issue 25):
ui/window/chat_flow.py (open, install, close a chat; the demo; the panes following the chat shown; the transcript's
paging), ui/window/chat_commands.py (send, stop, regenerate, seal, continue, undo, swipe, edit, branches, inspect,
recovery, ledger repair, summaries), ui/window/library_tree.py (the card and chat list and what adds to it) and
ui/window/menus.py (the 对话 menu and the screens hooked into it). ui/window/window_face.py tells the type checker what they use.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.cards import library
from ...core.settings import AppSettings, load_settings, save_settings
from ..frames.conversation import ConversationView
from ..frames.regex_worker import DisplayWorker
from ..infra.i18n import language, tr
from ..infra.session import Session, TranscriptPage
from ..roleplay import card_update, ledger_timeline, script_buttons
from ..roleplay.ask_dialog import AskDialog
from ..roleplay.branch_navigator import BranchNavigator
from ..roleplay.draft_pane import DraftPane
from ..roleplay.state_pane import StatePane
from ..writing import writing_panes
from ..writing.chapter_tree import ChapterTreePane
from ..writing.checkpoint_timeline import CheckpointTimelinePane
from . import agent_desk, chat_work  # chat_work: the slow commands off the UI thread (its strings registered at import)
from .chat_commands import ChatCommandsMixin
from .chat_flow import ChatFlowMixin
from .library_tree import LibraryTreeMixin
from .menus import MenusMixin

if TYPE_CHECKING:  # pragma: no cover
    # the engine's chat (and with it the beat loop, world info, the scribe…) is imported when the first chat opens
    # or by ui/window/warm.py while the page loads, not before the window can show (issue 15: start-up)
    from ...core.chat import BeatResult, Chat

log = logging.getLogger(__name__)


class MainWindow(MenusMixin, LibraryTreeMixin, ChatFlowMixin, ChatCommandsMixin, QMainWindow):
    """The app window. ``beatFinished(BeatResult)`` fires after every command (tests and the self-test use it)."""

    beatFinished = Signal(object)
    windowReplaced = Signal(object)
    """The language switch built a new window (the argument) in place of this one (ui/window/language_switch.py)."""

    def __init__(self, settings: Optional[AppSettings] = None, install_demo: bool = True):
        """``install_demo``: put the window's language's demo card in the library (a start); the live language
        switch builds its window with False — switching languages changes the texts, never the library
        (ui/window/language_switch.py)."""
        super().__init__()
        self.settings = settings or load_settings()
        self.setWindowTitle("Liyuan")
        self.resize(1360, 860)
        self.setAcceptDrops(True)
        self.session = Session(self)  # the open chat, the selection, the running work (ui/infra/session.py)
        self.demo_lines: list[str] = []
        self.last_result: Optional[BeatResult] = None
        self.results: list[BeatResult] = []
        self.unsent_inputs: dict[str, str] = {}  # unsent text per chat folder
        self.settings_dialog: Any = None  # the Settings dialog opened last (open_settings)
        self._closing = False
        self._panes_chat: Optional[Chat] = None  # the chat the panes were last set up for (see the module doc)
        self.built_language = language()  # every text below comes from tr() in it (ui/window/language_switch.py)
        self.replaced_by: Optional[MainWindow] = None  # the window a language switch built in place of this one

        left = self._build_left()
        centre = self._build_centre()
        self._build_right()
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
        from ..frames.panels_view import PanelsView  # issue 5: the card's Liyuan panels beside the conversation

        self.panels_view = PanelsView()
        self.tabs.setTabVisible(self.tabs.addTab(self.panels_view, tr("panels.title")), False)

        from ..dialogs import st_migration  # noqa: F401  its strings (文件 → 从 SillyTavern 导入…)

        menu = self._build_file_menu()
        self._build_chat_menu(menu)
        self.set_busy(False)
        if install_demo:
            try:
                library.ensure_demo_card(language())  # the window's language's demo card is there to start from
            except OSError as e:
                log.warning("could not install the demo card: %s", e)
        self.refresh_tree()
        self._restore_window()

    def _build_left(self) -> QWidget:
        """The left column: the cards and chats tree and its three buttons. Returns the column."""
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

        return left

    def _build_centre(self) -> QWidget:
        """The centre column: the conversation view and the input row with its buttons. Returns the column."""
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
        from ..infra import theme  # issue 17: one palette + style sheet for every pane, dialog and the web view

        # the view takes the theme now (apply emits nothing when the theme is already applied: a rebuilt window),
        # and follows its changes from then on
        self.view.set_theme(theme.apply(self.settings.theme))
        theme.notifier.changed.connect(self.view.set_theme)
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
        self.script_row = script_buttons.ScriptButtonRow()  # issue 27: the card scripts' buttons above the input
        cl.addWidget(self.script_row)
        cl.addLayout(row)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, activated=self.send_clicked)

        return centre

    def _build_right(self) -> None:
        """The right column's tabs: draft, ledger, branches, the agent-mode panes (hidden until a novel is open)."""
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
        script_buttons.install(self, self.script_row)  # issue 27: the card's TavernHelper scripts run in hidden frames
        writing_panes.install(self)  # issue 19: 大纲, 伏笔, 设定 and 审稿 beside 章节; progress in 章节 and the status bar
        ledger_timeline.install(self)  # issue 33: 账本历史 beside 账本 (per-beat diffs, revert, value chart)
        card_update.install_card_update(self)  # issue 33 §4: the card changed on disk: use the new version or keep
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), False)


    def import_st_chat_dialog(self) -> None:
        """Menu 导入 SillyTavern 聊天记录… (``chat_work.import_st_chat_dialog``)."""
        chat_work.import_st_chat_dialog(self)

    # -- window state -----------------------------------------------------------------------------------------
    def _restore_window(self) -> None:
        """The saved geometry and pane sizes; on a first start a size that fits the screen (a 1366×768 laptop
        showed the bottom of the 860-pixel default cut off)."""
        w = self.settings.window or {}
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        if screen is not None and not w.get("geometry"):
            self.resize(min(1360, screen.width()), min(860, screen.height() - 40))
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
        from ..infra.theme import mode as theme_mode

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
                    self.show_home()

            return chat_work.spawn(self, reopen())
        self.show_home()
        return None

    def show_home(self) -> None:
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
        from ..settings.settings import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        dlg.settingsSaved.connect(self.apply_settings)
        dlg.languageChanged.connect(self.language_changed)
        dlg.open()
        self.settings_dialog = dlg

    def language_changed(self, lang: str) -> Any:
        """The language switched (settings dialog): the window is built again in ``lang`` — now, or when the running
        beat or command ends (ui/window/language_switch.py). Returns the window on screen after the call."""
        from . import language_switch

        return language_switch.request(self, lang)

    def open_world_info_settings(self) -> None:
        """世界书设置: SillyTavern's world-info settings for all chats or for the open one (ui/world_info_settings)."""
        from ..settings.world_info_settings import WorldInfoSettingsDialog

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
        from ..infra.theme import apply as apply_theme

        apply_theme(s.theme)  # the conversation follows through theme.notifier
        self.send_keys.sync()  # Enter sends or not (issue 26 §3): the input's placeholder says which
        if self.chat is None and self.view.mode() == "welcome" and s.active_provider:
            self.show_home()  # a model is set up now: the welcome page stops offering to set one up
        if self.chat is not None and not self.is_demo:
            self.chat.world_info_defaults = s.world_info  # the chat's own overrides stay on top
            model, scribe, _why = self.provider_models()
            if model is not None:
                self.chat.model, self.chat.scribe_model = model, scribe
                self.status_label.setText(tr("status.chat.short", card=self.chat.card.name, model=model.name))

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

    def window_(self) -> MainWindow:
        """This window, typed as such (its parts, the mixins, hand it to helpers that take the window)."""
        return self
