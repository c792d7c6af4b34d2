"""What the window's parts (ui/window/menus.py, ui/window/library_tree.py, ui/window/chat_flow.py, ui/window/chat_commands.py) may use of the
window they are part of — read by the type checker only, never imported at run time.

Each part is a mixin that :class:`~.main_window.MainWindow` inherits; for mypy it derives from :class:`WindowFace`
(a ``QMainWindow`` with the window's panes, session and settings declared), so ``self.session``, ``self.view`` or
``self.statusBar()`` in a part are typed as in the window. A name not declared here (another part's method) reads as
``Any`` through ``__getattr__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtWidgets import QLabel, QMainWindow, QPlainTextEdit, QPushButton, QTabWidget, QTreeWidget

if TYPE_CHECKING:  # pragma: no cover
    from ...core.cards import library
    from ...core.chat import BeatResult, Chat
    from ...core.settings import AppSettings
    from ..frames.conversation import ConversationView
    from ..frames.regex_worker import DisplayWorker
    from ..infra.session import Session, TranscriptPage
    from ..roleplay.ask_dialog import AskDialog
    from ..roleplay.branch_navigator import BranchNavigator
    from ..roleplay.draft_pane import DraftPane
    from ..roleplay.state_pane import StatePane
    from ..writing.chapter_tree import ChapterTreePane
    from ..writing.checkpoint_timeline import CheckpointTimelinePane
    from .main_window import MainWindow


class WindowFace(QMainWindow):
    """The window as its parts see it (declarations only; :class:`~.main_window.MainWindow` defines them)."""

    session: Session
    settings: AppSettings
    view: ConversationView
    tree: QTreeWidget
    input: QPlainTextEdit
    send_btn: QPushButton
    tabs: QTabWidget
    draft_pane: DraftPane
    state_pane: StatePane
    branch_nav: BranchNavigator
    chapter_pane: ChapterTreePane
    timeline_pane: CheckpointTimelinePane
    display_worker: DisplayWorker
    status_label: QLabel
    ask_dialog: AskDialog
    demo_lines: list[str]
    _panes_chat: Optional[Chat]
    unsent_inputs: dict[str, str]
    _closing: bool
    last_result: Optional[BeatResult]
    results: list[BeatResult]
    read_only_reason: str
    _notice_focus: Optional[str]

    @property
    def chat(self) -> Optional[Chat]: ...
    @chat.setter
    def chat(self, chat: Optional[Chat]) -> None: ...
    @property
    def chat_ref(self) -> Optional[library.ChatRef]: ...
    @chat_ref.setter
    def chat_ref(self, ref: Optional[library.ChatRef]) -> None: ...
    @property
    def card_ref(self) -> Optional[library.CardRef]: ...
    @card_ref.setter
    def card_ref(self, ref: Optional[library.CardRef]) -> None: ...
    @property
    def is_demo(self) -> bool:
        raise NotImplementedError  # declared only
    @is_demo.setter
    def is_demo(self, demo: bool) -> None: ...
    @property
    def transcript(self) -> TranscriptPage:
        raise NotImplementedError  # declared only
    @property
    def busy(self) -> bool:
        raise NotImplementedError  # declared only
    def set_busy(self, busy: bool) -> None: ...
    def window_(self) -> MainWindow:
        """This object as the window (it is one: the parts are mixins of :class:`~.main_window.MainWindow`)."""
        raise NotImplementedError  # declared only

    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError  # declared only
