"""The main window: cards and chats on the left, the conversation in the centre, the draft and the ledger on the
right, the input box with Send / Stop / Regenerate at the bottom.

Thin by design: it opens chats (core), runs their commands as tasks on the qasync loop, and forwards engine events
to the panes. The conversation view gets only the newest screenfuls of a long chat; older items are handed over
when the user scrolls up.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog, QHBoxLayout, QInputDialog, QLabel, QMainWindow, QMessageBox, QPlainTextEdit, QPushButton, QSplitter,
    QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from ..core import library
from ..core.cards import CardError
from ..core.chat import BeatResult, Chat
from ..core.llm.replay import ReplayModel
from ..core.llm.types import ChatModel
from ..core.session import SessionError
from ..core.settings import AppSettings, load_settings, resolve_key, save_settings
from ..core.state import WorldState
from .ask_dialog import AskDialog
from .chapter_tree import ChapterTreePane
from .checkpoint_timeline import CheckpointTimelinePane
from .conversation import ConversationView
from .draft_pane import DraftPane
from .i18n import tr
from .state_pane import StatePane

log = logging.getLogger(__name__)
PAGE = 60  # transcript items handed to the view at a time
DEMO_DELAY_MS = 45  # pause between streamed pieces of the demo's replay, so the draft is seen growing


class MainWindow(QMainWindow):
    """The app window. ``beatFinished(BeatResult)`` fires after every command (tests and the self-test use it)."""

    beatFinished = Signal(object)
    busyChanged = Signal(bool)

    def __init__(self, settings: Optional[AppSettings] = None):
        super().__init__()
        self.settings = settings or load_settings()
        self.setWindowTitle("Liyuan")
        self.resize(1360, 860)
        self.setAcceptDrops(True)
        self.chat: Optional[Chat] = None
        self.chat_ref: Optional[library.ChatRef] = None
        self.card_ref: Optional[library.CardRef] = None
        self.demo_lines: list[str] = []
        self._items: list[dict[str, Any]] = []
        self._shown_from = 0
        self._task: Optional[asyncio.Task[Any]] = None
        self.last_result: Optional[BeatResult] = None
        self.results: list[BeatResult] = []
        self._inputs: dict[str, str] = {}  # unsent text per chat folder
        self._closing = False

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
        for b in (self.send_btn, self.stop_btn, self.regen_btn):
            btns.addWidget(b)
        row.addLayout(btns)
        cl.addLayout(row)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, activated=self.send_clicked)

        # right: draft and ledger
        self.tabs = QTabWidget()
        self.draft_pane = DraftPane()
        self.draft_pane.sealAsIsRequested.connect(self.seal_as_is)
        self.draft_pane.continueRequested.connect(self.continue_beat)
        self.state_pane = StatePane()
        self.state_pane.stateEdited.connect(self.ledger_edited)
        self.tabs.addTab(self.draft_pane, tr("draft"))
        self.tabs.addTab(self.state_pane, tr("ledger"))
        # agent mode: the chapter tree (with its editor) and the checkpoint timeline
        self.chapter_pane = ChapterTreePane()
        self.timeline_pane = CheckpointTimelinePane()
        self.tabs.addTab(self.chapter_pane, tr("story.chapters"))
        self.tabs.addTab(self.timeline_pane, tr("story.timeline"))
        self.chapter_pane.changed.connect(self.timeline_pane.refresh)
        self.timeline_pane.restored.connect(self._after_restore)
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

        menu = self.menuBar().addMenu("梨园")
        for text, slot, seq in (("导入角色卡…", self.import_card_dialog, "Ctrl+O"),
                                ("导入章节（文件夹或长 .txt）…", self.import_prose_dialog, None),
                                ("把这个扮演对话变成长篇…", self.roleplay_to_agent_clicked, None),
                                ("设置…", self.open_settings, "Ctrl+,"),
                                ("离线演示", self.start_demo, None), ("退出", self.close, "Ctrl+Q")):
            act = QAction(text, self)
            if seq:
                act.setShortcut(QKeySequence(seq))
            act.triggered.connect(slot)
            menu.addAction(act)
        self._set_busy(False)
        try:
            library.ensure_demo_card()  # the bundled card is always there to start from
        except OSError as e:
            log.warning("could not install the demo card: %s", e)
        self.refresh_tree()
        self._restore_window()

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
            save_settings(self.settings)
        except OSError as e:
            log.warning("could not save settings: %s", e)

    def closeEvent(self, ev) -> None:  # noqa: N802 - Qt API
        if self.busy:
            # stop the beat and close once it is stored (the draft so far lands in the session file)
            self._closing = True
            self.stop_clicked()
            self.statusBar().showMessage("正在停下这一拍并保存稿件……", 5000)
            ev.ignore()
            return
        self.save_window_state()
        super().closeEvent(ev)

    def start(self) -> None:
        """After show(): reopen the last chat, or the welcome page when no model is configured / nothing open."""
        w = self.settings.window or {}
        self.view.set_theme(self.settings.theme)
        if w.get("split"):  # again now that the window has its restored size (sizes are laid out proportionally)
            try:
                self.split.setSizes([int(x) for x in w["split"]])
            except (ValueError, TypeError):
                pass
        last_card, last_chat = w.get("last_card"), w.get("last_chat")
        if last_card and last_chat and Path(last_chat, "session.jsonl").exists():
            card = library.CardRef(name=Path(last_card).name, dir=last_card)
            chat = library.ChatRef(name=Path(last_chat).name, dir=last_chat)
            if self.open_chat(card, chat, quiet=True):
                return
        if self.settings.active_provider:
            # a model is configured: straight to the card list
            self.view.show_chat()
            self.view.set_transcript([], False)
            self.view.set_banner("在左边选一张角色卡，双击对话打开，或点「新对话…」开始。")
            self.statusBar().showMessage("已配置模型：选一张卡开始", 8000)
        else:
            self.view.show_welcome()

    # -- tree -----------------------------------------------------------------------------------------------
    def refresh_tree(self) -> None:
        """Rebuild the card/chat list from the data folder."""
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

    def _tree_activated(self, item: QTreeWidgetItem, _col: int = 0) -> None:
        data = item.data(0, Qt.ItemDataRole.UserRole)
        if not data:
            return
        if data[0] == "chat":
            self.open_chat(data[1], data[2])
        elif data[0] == "card":
            self.card_ref = data[1]

    # -- models ---------------------------------------------------------------------------------------------
    def _provider_models(self) -> tuple[Optional[ChatModel], Optional[ChatModel], str]:
        from ..core.llm.providers import build_model

        name = self.settings.active_provider
        prov = next((p for p in self.settings.providers if p.name == name), None)
        if prov is None:
            return None, None, "还没有配置模型：打开「设置」添加一个服务商，或先玩离线演示。"
        key = resolve_key(prov)
        main = build_model(prov, api_key=key)
        scribe = None
        sp = next((p for p in self.settings.providers if p.name == self.settings.scribe_provider), None)
        if sp is not None:
            scribe = build_model(sp, scribe=True, api_key=resolve_key(sp))
        elif prov.scribe_model:
            scribe = build_model(prov, scribe=True, api_key=key)
        return main, scribe, ""

    def _demo_model(self, chat_dir: Path, played: int) -> ReplayModel:
        replay = Path(self.card_ref.dir if self.card_ref else "") / "replay.json"
        full = ReplayModel.from_file(replay, delay_ms=DEMO_DELAY_MS)
        beats = full.beats[played:]
        actor = [c for b in beats for c in b.actor]
        scribe = [s for b in beats for s in b.scribe]
        self.demo_lines = [b.user for b in beats]
        self._demo_answers = [a for b in beats for a in b.ask_answers]
        return ReplayModel(actor=actor, scribe=scribe, label=full.name.split(": ", 1)[-1], delay_ms=DEMO_DELAY_MS, beats=beats)

    # -- opening chats --------------------------------------------------------------------------------------
    def open_chat(self, card: library.CardRef, chat: library.ChatRef, quiet: bool = False) -> bool:
        """Open ``chat``; returns False (with a message unless ``quiet``) when it cannot be opened."""
        if self._task is not None and not self._task.done():
            return False
        editor = getattr(getattr(self, "chapter_pane", None), "editor", None)
        if editor is not None and getattr(editor, "dirty", False) and not quiet:
            if QMessageBox.question(self, "梨园", "正在编辑的章节还没保存，换对话会丢掉这些改动。继续吗？") != QMessageBox.StandardButton.Yes:
                return False
        try:
            c = card.load()
            self.card_ref = card
            tree_header = None
            from ..core.session import SessionTree

            tree_header = SessionTree.open(Path(chat.dir) / "session.jsonl").header
            is_demo = bool(getattr(tree_header, "demo", False))
            if is_demo:
                model: Optional[ChatModel] = None
                scribe = None
            else:
                model, scribe, why = self._provider_models()
                if model is None:
                    model = _NoModel(why)
            chat_obj = Chat.open(Path(chat.dir), c, model or _NoModel(""), scribe)
            if is_demo:
                chat_obj.model = _NoModel("")  # the replay is set up per beat (see send_clicked)
        except (CardError, SessionError, OSError, ValueError) as e:
            if not quiet:
                QMessageBox.warning(self, "梨园", f"打不开这个对话：{e}")
            return False
        if self.chat_ref is not None:
            self._inputs[self.chat_ref.dir] = self.input.toPlainText()
        self.chat, self.chat_ref = chat_obj, chat
        self.is_demo = is_demo
        self.input.setPlainText(self._inputs.get(chat.dir, ""))
        for w in chat_obj.load_warnings:
            self.statusBar().showMessage(w, 8000)
        self._after_open()
        return True

    def _after_open(self) -> None:
        chat = self.chat
        assert chat is not None
        self.view.show_chat()
        self.view.set_user_label(chat.persona)
        agent = chat.mode == "agent"
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), agent)
            pane.set_chat(chat if agent else None)
        demo = getattr(self, "is_demo", False)
        self.view.set_banner(tr("replay.banner") if demo or getattr(chat.model, "is_replay", False) else None)
        self.reload_transcript()
        self.refresh_state()
        self.draft_pane.reset()
        pending = chat.pending_draft()
        if pending is not None:
            self.draft_pane.show_unfinished(pending.draft, pending.draft_version, pending.outcome)
        model_name = "回放模型（离线演示，不连网）" if demo else chat.model.name
        self.status_label.setText(f"{chat.card.name} · {self.chat_ref.name if self.chat_ref else ''} · 模型：{model_name}")
        self._prefill()
        self._set_busy(False)

    def _demo_progress(self) -> int:
        """Demo beats finished on this branch (sealed or revised); a stopped beat is played again."""
        if self.chat is None:
            return 0
        return sum(1 for e in self.chat.tree.path_to() if e.type == "beat" and e.outcome in ("sealed", "revised_previous"))

    def _prefill(self) -> None:
        if getattr(self, "is_demo", False) and self.chat is not None:
            played = self._demo_progress()
            full = ReplayModel.from_file(Path(self.card_ref.dir) / "replay.json") if self.card_ref else None
            lines = [b.user for b in full.beats] if full else []
            if played < len(lines):
                self.input.setPlainText(lines[played])
                self.send_btn.setEnabled(not self.busy)
            else:
                self.input.clear()
                self.send_btn.setEnabled(False)
                self.statusBar().showMessage("演示的三拍都演完了。配置模型后，可以新建对话接着演。", 15000)

    def start_demo(self) -> None:
        """Create a new demo chat on the 青梧 card (replay model) and open it, input pre-filled."""
        try:
            card = library.ensure_demo_card()
            d = library.new_chat_dir(card, time.strftime("演示-%Y%m%d-%H%M%S"))
            c = card.load()
            self.card_ref = card
            Chat.create(d, c, _NoModel(""), demo=True)
        except (CardError, SessionError, OSError) as e:
            QMessageBox.warning(self, "梨园", f"演示打不开：{e}")
            return
        self.refresh_tree()
        self.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))

    def new_chat_dialog(self) -> None:
        """Ask for a card (the selected one), a mode (role-play default; fixed afterwards) and create the chat."""
        card = self.card_ref
        item = self.tree.currentItem()
        if item is not None:
            data = item.data(0, Qt.ItemDataRole.UserRole)
            if data:
                card = data[1]
        if card is None:
            QMessageBox.information(self, "梨园", "先在左边选一张角色卡（或导入一张）。")
            return
        modes = [tr("mode.roleplay"), tr("mode.agent")]
        mode, ok = QInputDialog.getItem(self, tr("new.chat"), "模式（建好后不能切换）：", modes, 0, False)
        if not ok:
            return
        try:
            c = card.load()
            d = library.new_chat_dir(card)
            model, scribe, why = self._provider_models()
            extra = {}
            if self.settings.persona_name.strip():  # the user's persona from the settings (name + description)
                from ..core.personas import Persona

                extra["persona_obj"] = Persona(name=self.settings.persona_name.strip(), description=self.settings.persona_description)
            Chat.create(d, c, model or _NoModel(why), mode="agent" if mode == modes[1] else "roleplay", scribe_model=scribe, **extra)
        except (CardError, SessionError, OSError) as e:
            QMessageBox.warning(self, "梨园", f"新建对话失败：{e}")
            return
        self.refresh_tree()
        self.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))

    def import_card_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("import.card"), str(Path.home()), "角色卡 (*.json *.png *.charx);;所有文件 (*)")
        if path:
            self.import_card_file(path)

    def import_card_file(self, path: str) -> Optional[library.CardRef]:
        """Import a card file into the library; a clear message when it is not a card."""
        try:
            ref = library.import_card(path)
        except (CardError, OSError) as e:
            QMessageBox.warning(self, "梨园", f"导入失败：{e}")
            return None
        self.refresh_tree()
        self.card_ref = ref
        self._ask_scripts(ref)
        self.statusBar().showMessage(f"已导入角色卡「{ref.name}」", 6000)
        return ref

    def _ask_scripts(self, ref: library.CardRef) -> None:
        """A card with regex scripts: ask once whether they may run (they change what is shown and sent)."""
        from ..core.chat import set_card_scripts_allowed
        from ..core.regex_scripts import scripts_from_card

        try:
            scripts = scripts_from_card(ref.load().raw)
        except CardError:
            return
        if not scripts:
            return
        names = "、".join(sc.scriptName or "（无名）" for sc in scripts[:6]) + ("…" if len(scripts) > 6 else "")
        answer = QMessageBox.question(
            self, "梨园", f"这张卡带了 {len(scripts)} 个正则脚本：{names}\n\n它们会改变对话的显示和发给模型的文字"
            "（只在显示和发送时生效，存下的原文不变）。允许这张卡运行它们吗？以后可以在卡的 liyuan.json 里改。")
        set_card_scripts_allowed(Path(ref.dir), answer == QMessageBox.StandardButton.Yes)

    def import_prose_dialog(self) -> None:
        """Agent chats: import a folder of .md/.txt chapters or one long .txt split at chapter headings."""
        from ..core.prose_import import ProseImportError, import_folder, import_long_text

        if self.chat is None or self.chat.mode != "agent":
            QMessageBox.information(self, "梨园", "先打开一个写长篇（agent）模式的对话。")
            return
        path, _ = QFileDialog.getOpenFileName(self, "导入长篇 .txt（取消则选文件夹）", str(Path.home()), "文本 (*.txt *.md)")
        try:
            if path:
                cp = import_long_text(self.chat, path)
            else:
                folder = QFileDialog.getExistingDirectory(self, "选一个放章节的文件夹", str(Path.home()))
                if not folder:
                    return
                cp = import_folder(self.chat, folder)
        except (ProseImportError, OSError, ValueError) as e:
            QMessageBox.warning(self, "梨园", f"导入失败：{e}")
            return
        self.statusBar().showMessage(cp.message if cp else "没有可导入的章节", 8000)
        self._story_changed()

    def roleplay_to_agent_clicked(self) -> None:
        """The open role-play chat becomes a new agent chat: opening and finals as chapters, the ledger carried."""
        from ..core.prose_import import roleplay_to_agent

        if self.chat is None or self.chat.mode != "roleplay" or self.card_ref is None:
            QMessageBox.information(self, "梨园", "先打开一个扮演对话。")
            return
        d = library.new_chat_dir(self.card_ref, f"{self.chat_ref.name if self.chat_ref else '对话'}-长篇")
        try:
            model, scribe, why = self._provider_models()
            roleplay_to_agent(self.chat, d, model or _NoModel(why), scribe_model=scribe)
        except (OSError, ValueError, SessionError) as e:
            QMessageBox.warning(self, "梨园", f"转换失败：{e}")
            return
        self.refresh_tree()
        self.open_chat(self.card_ref, library.ChatRef(name=d.name, dir=str(d)))

    def _after_restore(self) -> None:
        self.chapter_pane.refresh()
        self.reload_transcript()
        self.refresh_state()

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
                self.import_card_file(url.toLocalFile())

    def open_settings(self) -> None:
        from .settings import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        dlg.settingsSaved.connect(self._settings_saved)
        dlg.languageChanged.connect(lambda lang: self.statusBar().showMessage(
            "界面语言已切换；窗口里已有的文字在重启后全部换成新语言。" if lang == "zh" else "Language switched; restart to apply it everywhere.", 10000))
        dlg.open()
        self._settings_dialog = dlg

    def _settings_saved(self, s: AppSettings) -> None:
        self.settings = s
        self.view.set_theme(s.theme)
        if self.chat is not None and not getattr(self, "is_demo", False):
            model, scribe, _why = self._provider_models()
            if model is not None:
                self.chat.model, self.chat.scribe_model = model, scribe
                self.status_label.setText(f"{self.chat.card.name} · 模型：{model.name}")

    # -- transcript -----------------------------------------------------------------------------------------
    def reload_transcript(self) -> None:
        """Hand the newest page of the active branch's transcript to the view."""
        if self.chat is None:
            return
        self._items = self.chat.transcript()
        self._shown_from = max(0, len(self._items) - PAGE)
        self.view.set_transcript(self._display(self._shown_from, len(self._items)), self._shown_from > 0)

    def _display(self, start: int, end: int) -> list[dict[str, Any]]:
        """Items start..end as shown: the card's display regex scripts applied at each item's depth, and the item's
        place in the transcript as its id (SillyTavern's message index: 0 = the opening), which is what status-bar
        scripts expect from getCurrentMessageId(); the session entry id stays in ``entry_id``."""
        n = len(self._items)
        chat = self.chat
        return [dict(it, id=str(i), entry_id=it["id"], text=chat.display_text(it, n - 1 - i) if chat is not None else it["text"])
                for i, it in enumerate(self._items[start:end], start)]

    def _older(self, _oldest_id: str) -> None:
        if self._shown_from <= 0:
            return
        start = max(0, self._shown_from - PAGE)
        chunk = self._display(start, self._shown_from)
        self._shown_from = start
        self.view.prepend(chunk, start > 0)

    def refresh_state(self) -> None:
        if self.chat is None:
            return
        e = self.chat.tree.latest("rp-state")
        state = WorldState.model_validate(e.state) if e else WorldState()
        self.state_pane.show_state(state, list(e.applied) if e else [], list(e.warnings) if e else [], e.source if e else "")

    # -- commands -------------------------------------------------------------------------------------------
    def _set_busy(self, busy: bool) -> None:
        has_chat = self.chat is not None
        self.send_btn.setEnabled(has_chat and not busy)
        self.regen_btn.setEnabled(has_chat and not busy and not getattr(self, "is_demo", False))
        self.stop_btn.setEnabled(busy)
        self.input.setReadOnly(busy)
        self.draft_pane.seal_btn.setEnabled(not busy)
        self.draft_pane.continue_btn.setEnabled(not busy)
        for pane in (getattr(self, "chapter_pane", None), getattr(self, "timeline_pane", None)):
            if pane is not None:
                pane.set_busy(busy)
        self.busyChanged.emit(busy)

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def _on_event(self, ev: Any) -> None:
        self.draft_pane.on_event(ev)
        k = getattr(ev, "kind", "")
        if k == "beat_started":
            if ev.how == "send":
                self.view.append_item({"id": f"pending-user-{ev.beat}", "role": "user", "text": ev.user, "beat": ev.beat})
            elif self._items:  # regenerate / continue: the old reply or draft makes way for the new one
                last = self._items[-1]
                if last["role"] in ("assistant", "draft"):
                    self.view.remove_item(str(len(self._items) - 1))
            self.view.scroll_to_bottom()
            self.view.set_pending("", tr("conv.writing", name=self.chat.card.name if self.chat else ""))
            self.tabs.setCurrentWidget(self.draft_pane)
        elif k == "draft_changed":
            self.view.set_pending(ev.text, "稿纸 · 版本 %d" % ev.version)
        elif k == "scribe_finished":
            self.refresh_state()

    def _run(self, make: Callable[[], Awaitable[BeatResult]]) -> Optional[asyncio.Task[Any]]:
        if self.chat is None or self.busy:
            return None

        async def go() -> None:
            self._set_busy(True)
            res: Optional[BeatResult] = None
            try:
                res = await make()
                self.last_result = res
                self.results.append(res)
                if res.outcome == "error" and res.error:
                    self.statusBar().showMessage(f"本拍出错：{res.error}", 15000)
            except ValueError as e:
                self.statusBar().showMessage(str(e), 8000)
            except OSError as e:
                QMessageBox.critical(self, "梨园", f"写入磁盘失败：{e}\n已写好的内容都还在；腾出空间后再试。")
            except Exception as e:  # never let a beat take the window down
                log.exception("beat failed")
                QMessageBox.critical(self, "梨园", f"本拍意外出错：{type(e).__name__}: {e}")
            finally:
                self.view.set_pending(None)
                self.reload_transcript()
                self.refresh_state()
                if self.chat is not None and self.chat.mode == "agent":
                    self._story_changed()
                self._set_busy(False)
                self._prefill() if getattr(self, "is_demo", False) else None
                self.beatFinished.emit(res)
                if self._closing:
                    QTimer.singleShot(0, self.close)

        self._task = asyncio.ensure_future(go())
        return self._task

    async def _ask(self, req):
        note = ""
        if getattr(self, "is_demo", False) and getattr(self, "_demo_answers", None):
            note = f"演示：回放模型只会按录制的选择演下去（「{self._demo_answers[0]}」）；接真模型时才按你的选择走。"
        self.ask_dialog.set_note(note)
        return await self.ask_dialog.ask(req)

    def send_clicked(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.chat is None or self.busy:
            return
        if getattr(self, "is_demo", False):
            # each demo beat replays its own recording, so a stopped beat is simply played again
            self.chat.model = self._demo_model(Path(self.chat.dir), self._demo_progress())
        if isinstance(self.chat.model, _NoModel):
            QMessageBox.information(self, "梨园", self.chat.model.why or "还没有配置模型。")
            self.open_settings()
            return
        self.input.clear()
        chat = self.chat
        self._run(lambda: chat.send(text, ask=self._ask, on_event=self._on_event))

    def stop_clicked(self) -> None:
        if self.chat is not None:
            self.chat.stop()
        if self.ask_dialog.isVisible():
            self.ask_dialog.stop()

    def regenerate_clicked(self) -> None:
        if self.chat is None:
            return
        if getattr(self, "is_demo", False):
            self.statusBar().showMessage("回放模型只能按录制的剧情演，不能重来；接真模型的对话可以。", 8000)
            return
        if self.chat.tree.latest("user") is None:
            self.statusBar().showMessage("还没有可以重来的一拍。", 6000)
            return
        chat = self.chat
        self._run(lambda: chat.regenerate(ask=self._ask, on_event=self._on_event))

    def seal_as_is(self) -> None:
        chat = self.chat
        if chat is not None:
            self._run(lambda: chat.seal_as_is(on_event=self._on_event))

    def continue_beat(self) -> None:
        chat = self.chat
        if chat is not None:
            self._run(lambda: chat.continue_beat(ask=self._ask, on_event=self._on_event))

    def ledger_edited(self, state: WorldState) -> None:
        """Append the user's ledger as a new snapshot; the next beat uses it."""
        if self.chat is None:
            return
        try:
            self.chat.edit_state(state)
        except OSError as e:
            QMessageBox.critical(self, "梨园", f"账本没存上：{e}")
            return
        self.refresh_state()
        self.statusBar().showMessage("账本已更新（追加了一份你写的快照，下一拍起生效）", 6000)


class _NoModel:
    """Stands in when no model is configured: any call explains what to do."""

    is_replay = False

    def __init__(self, why: str):
        self.why = why
        self.name = "未配置模型"

    async def complete(self, request, on_delta=None):
        from ..core.llm.types import ModelError

        raise ModelError("no_model", self.why or "还没有配置模型：打开「设置」添加一个服务商。")
