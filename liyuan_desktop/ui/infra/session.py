"""The window's session: what is open and what is running, without a widget (issue 25, "a widget-free session").

One :class:`Session` per main window. It owns the open :class:`~liyuan_desktop.core.chat.Chat` (typed as ``Chat``,
never ``Any``) with its :class:`~liyuan_desktop.core.cards.library.ChatRef` and the card selected
(:class:`~liyuan_desktop.core.cards.library.CardRef`), whether that chat is the bundled demo (and its recorded
answers), the beat command running (an ``asyncio.Task``) and the busy state the controls show, whether one of the
window's slow chat commands (ui/window/chat_work.py) is in flight, and the transcript's paging state (:class:`TranscriptPage`). It says what changed
through signals, so panes follow the session rather than reaching into the window:

- ``chatShown(chat)``: another chat is shown (the ``Chat``), or none (None) — every pane that lists something of the
  chat resets;
- ``busyChanged(bool)``: a command started (True) or ended (False);
- ``cardSelected(card_ref)``: the card that 新对话 / 导入聊天记录 act on changed (a ``CardRef`` or None);
- ``changed(changes)``: a command changed what the notice names (a ``core.chat.changes.Changes``); each pane
  repaints only the areas it shows (:meth:`Session.broadcast`, docs/architecture.md "Change notices").

The session holds state only; laying out panes and running commands stay with ``MainWindow``
(ui/window/main_window.py), which creates one session and reads and writes through it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

from PySide6.QtCore import QObject, Signal

from ...core.cards import library

if TYPE_CHECKING:  # pragma: no cover
    # the engine's chat is imported when the first chat opens, not before the window can show (issue 15)
    from ...core.chat import Chat


@dataclass
class TranscriptPage:
    """Which part of the shown branch the conversation view holds.

    ``items``: the branch's transcript items (a ``core.chat.TranscriptItems``, built page by page; a list when empty);
    ``shown_from``: the index of the first item handed to the view (0 = the opening; the view holds
    ``items[shown_from:]`` or, while ``browsing``, a window of older items); ``browsing``: the find bar moved the view
    to a window of older items that does not reach the newest (ui/frames/find_bar.py; reset by a beat or another chat)."""

    items: Sequence[dict[str, Any]] = field(default_factory=list)
    shown_from: int = 0
    browsing: bool = False

    def clear(self) -> None:
        """Nothing shown (no chat)."""
        self.items, self.shown_from, self.browsing = [], 0, False


class Session(QObject):
    """The open chat, the selection and the running work of one main window (module doc). Widget-free: it can be
    made and driven in a test without a window."""

    chatShown = Signal(object)
    """Another chat is shown (the ``Chat``), or none (None): every pane that lists something of the chat resets."""
    busyChanged = Signal(bool)
    """A command started (True) or ended (False); emitted after the window's controls were updated."""
    cardSelected = Signal(object)
    """The selected card (a ``CardRef``, or None) changed."""
    changed = Signal(object)
    """A command's notice (a ``core.chat.changes.Changes``): panes repaint only the areas it names."""

    def __init__(self, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.chat: Optional[Chat] = None
        self.chat_ref: Optional[library.ChatRef] = None
        self._card_ref: Optional[library.CardRef] = None
        self.is_demo = False  # the open chat is the bundled demo (its replay is set up per beat)
        self.demo_answers: list[str] = []  # the demo's recorded answers to the engine's questions, first first
        self.task: Optional[asyncio.Task[Any]] = None  # the beat command running, if any
        self.marked_busy = False  # what the controls show (set_busy), which may differ from `busy` while a task ends
        self.work_busy = False  # one of ui/window/chat_work.py's slow commands is in flight (only one at a time)
        self.transcript = TranscriptPage()
        #: agent mode, "reply is the chapter" (issue 30 §5): the chapter file the next reply is written to, or None
        self.reply_chapter: Optional[str] = None

    # -- the selection --------------------------------------------------------------------------------------
    @property
    def card_ref(self) -> Optional[library.CardRef]:
        """The selected card: the open chat's card, or the one last picked or imported; None when none."""
        return self._card_ref

    @card_ref.setter
    def card_ref(self, ref: Optional[library.CardRef]) -> None:
        changed = ref != self._card_ref
        self._card_ref = ref
        if changed:
            self.cardSelected.emit(ref)

    # -- the open chat --------------------------------------------------------------------------------------
    def set_chat(self, card: library.CardRef, ref: library.ChatRef, chat: Chat, is_demo: bool) -> Optional[Chat]:
        """Make ``chat`` (of ``card``, stored at ``ref``) the open chat; returns the chat it replaces (None when
        none), which the caller releases once the panes have switched. Does not emit :attr:`chatShown` — the window
        does, after its panes follow (:meth:`announce_shown`)."""
        old = self.chat
        self.card_ref = card
        self.chat, self.chat_ref, self.is_demo = chat, ref, is_demo
        self.transcript.browsing = False
        return old

    def drop(self) -> Optional[Chat]:
        """No chat open any more: forget it (and its transcript page); returns the chat dropped (None when none)."""
        old = self.chat
        self.chat, self.chat_ref = None, None
        self.transcript.clear()
        return old

    def announce_shown(self) -> None:
        """Tell the panes which chat is shown now (:attr:`chatShown` with the chat, or None)."""
        self.chatShown.emit(self.chat)

    # -- running work ---------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether a beat command is running (its task not done)."""
        return self.task is not None and not self.task.done()

    def set_busy(self, busy: bool) -> None:
        """Record what the controls show and tell the panes (:attr:`busyChanged`)."""
        self.marked_busy = busy
        self.busyChanged.emit(busy)

    # -- change notices -------------------------------------------------------------------------------------
    def broadcast(self, changes: Any) -> None:
        """Tell the panes what one command changed (:attr:`changed`); a notice naming nothing is not sent. The one
        place that runs chat commands calls this with the command's ``Chat.last_changes``."""
        if changes is not None and changes.names():
            self.changed.emit(changes)


def session_or_own(session: Optional[Session], owner: QObject) -> Session:
    """The session a dialog follows: the window's (``session``), or, for a dialog made on its own (a test, a
    standalone tool), a fresh one owned by ``owner`` — so the dialog always broadcasts its commands' notices and
    repaints from them, the same way in both cases."""
    return session if session is not None else Session(owner)
