"""The skeleton every pane of the writing room shares (大纲, 伏笔, 设定, 审稿; :mod:`.writing_panes` lays them out):
the chat shown, the data gathered off the UI thread, the busy state of a running turn, the ``inform`` callable (tests
replace it), the signals ``openChapter(file, utf16 offset, length)`` and ``changed()`` (gather again), the way a
change is refused without a chat or while a turn runs, the way a change runs on a worker (:meth:`RoomPane._apply`),
and the two widgets every pane builds alike (a wrapped label with a theme role, a tree of entries).

A pane subclasses :class:`RoomPane`, sets ``TITLE_KEY`` (its tab's catalog key: the title of its message boxes) and
``HEADERS`` (its tree's column keys), builds its widgets and keeps only what differs: its rows and its commands.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTreeWidget,
    QWidget,
)

from ...core.errors import ToolError
from ..infra.i18n import show, tr
from ..infra.tasks import run_in_worker
from ..infra.theme import set_role

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

#: The item data role holding a row's entry (each pane says what it stores there).
KEY = Qt.ItemDataRole.UserRole


def role_label(lay: Optional[QBoxLayout], role: str, text: str = "", *, wrap: bool = True,
               plain: bool = False) -> QLabel:
    """A label with the theme ``role`` (``"title"``, ``"muted"``, ``"ok"``, ``"warn"``…; :func:`.theme.set_role`),
    word-wrapped unless ``wrap`` is False, plain text (never rich) when ``plain``; added to ``lay`` when given."""
    label = QLabel(text)
    label.setWordWrap(wrap)
    if plain:
        label.setTextFormat(Qt.TextFormat.PlainText)
    set_role(label, role)
    if lay is not None:
        lay.addWidget(label)
    return label


def entry_tree(headers: list[str], *, flat: bool = False, stretch: int = 0) -> QTreeWidget:
    """A single-selection tree of entries with ``headers`` as its columns: column ``stretch`` takes the room, the
    others fit their contents; ``flat`` hides the root decoration (a list of rows, no groups)."""
    tree = QTreeWidget()
    tree.setColumnCount(len(headers))
    tree.setHeaderLabels(headers)
    if flat:
        tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    hdr = tree.header()
    hdr.setStretchLastSection(False)
    for c in range(len(headers)):
        hdr.setSectionResizeMode(c, QHeaderView.ResizeMode.Stretch if c == stretch
                                 else QHeaderView.ResizeMode.ResizeToContents)
    return tree


class RoomPane(QWidget):
    """A writing-room pane: ``set_chat(chat | None)``, ``show_data(data)`` (a ``writing_panes.RoomData``),
    ``set_busy(bool)``. Signals: ``openChapter(file, utf16 offset, length)``, ``changed()`` (what
    the pane shows changed: gather again). Subclasses set ``TITLE_KEY`` and ``HEADERS``, keep their tree in
    ``self.tree`` and override ``show_data`` and ``_update_buttons``."""

    openChapter = Signal(str, int, int)
    changed = Signal()

    #: The catalog key of the pane's tab: the title of its message boxes.
    TITLE_KEY = ""
    #: The catalog keys of the tree's columns.
    HEADERS: tuple[str, ...] = ()
    #: The pane's tree of entries (every pane builds one, with :func:`entry_tree` or its own).
    tree: QTreeWidget

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.chat: Optional[Chat] = None
        self.data: Any = None
        self._busy = False
        self._apply_task: Optional[asyncio.Future[None]] = None  # the change running on a worker thread
        self.inform: Callable[[str], None] = self._warn

    @property
    def shown_chat(self) -> Chat:
        """The pane's chat, for the actions that only run while one is shown (the pane is disabled without one).
        Raises RuntimeError when none is: shown to the user as the action's error, never a crash."""
        if self.chat is None:
            raise RuntimeError("no chat is shown")
        return self.chat

    def _warn(self, text: str) -> None:
        QMessageBox.warning(self, tr(self.TITLE_KEY), text)

    def headers(self) -> list[str]:
        """The tree's column titles in the current language."""
        return [tr(k) for k in self.HEADERS]

    def rows(self) -> list[Any]:
        """What the tree's top-level rows hold under ``KEY``, in row order."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [it.data(0, KEY) for it in items if it is not None]

    def selected(self) -> Optional[Any]:
        """What the selected row holds under ``KEY`` (None: no selection)."""
        items = self.tree.selectedItems()
        return items[0].data(0, KEY) if items else None

    def set_busy(self, busy: bool) -> None:
        """While a turn runs the agent may change what the pane shows: no edits then."""
        self._busy = busy
        self._update_buttons()

    def show_data(self, data: Any) -> None:
        """Render ``data`` (a ``writing_panes.RoomData``; None empties). Subclasses draw their rows."""
        self.data = data

    def _update_buttons(self) -> None:
        """Enable what the selection and the busy state allow (subclasses)."""

    def _editable(self) -> bool:
        """True when a change may start: a chat is shown and no turn runs (else says why, and False)."""
        if self.chat is None:
            return False
        if self._busy:
            self.inform(tr("wr.busy"))
            return False
        return True

    def _saved(self) -> None:
        """A change made through :meth:`_apply` landed (subclasses say so; ``changed`` follows)."""

    def _apply(self, fn: Callable[[], Any]) -> bool:
        """Run ``fn`` (a change through the chat that may take long: the engine parses a whole file, issue 29 §1) on
        a worker thread (:func:`.tasks.run_in_worker`), then call :meth:`_saved` and emit ``changed`` (gather again), or
        show the error (a :class:`ToolError` by its key, ``OSError``/``RuntimeError``/``ValueError`` as they
        read). Refused (False) without a chat or while a turn runs; True when the change was started. Changes asked
        quickly one after another run in order, each after the one before. Without an event loop (a synchronous
        caller) ``fn`` runs right here."""
        if not self._editable():
            return False
        chat, before = self.chat, self._apply_task

        def done(error: Optional[BaseException]) -> None:
            if error is not None:
                self.inform(show(getattr(error, "message", None) or error))
            elif self.chat is chat:  # another chat shown meanwhile: its pane gathers anew anyway
                self._saved()
                self.changed.emit()

        async def run() -> None:
            if before is not None and not before.done():
                await asyncio.wait([before])
            try:
                await run_in_worker(self.window(), lambda _w: fn(), cancellable=False)
            except (ToolError, OSError, RuntimeError, ValueError) as e:
                done(e)
            else:
                done(None)

        coro = run()
        try:
            self._apply_task = asyncio.ensure_future(coro)
        except RuntimeError:  # no event loop: apply right here
            coro.close()
            try:
                fn()
            except (ToolError, OSError, RuntimeError, ValueError) as e:
                done(e)
                return False
            done(None)
        return True
