"""The skeleton the two panes over an agent chat's files share (章节 :mod:`.chapter_tree`, 检查点
:mod:`.checkpoint_timeline`): a flat list of keyed rows (the key under ``Qt.ItemDataRole.UserRole``: a chapter's file
name, a checkpoint's id) refilled without losing the selection, the chat shown only when it is an agent chat (any
other chat says 「只有写长篇的对话才有」 in the status line), the busy state of a running turn, the ``confirm`` /
``inform`` dialog callables (tests replace them), the history log, and the muted status line at the bottom.

A pane subclasses :class:`StoryPane`, builds ``self.list`` with :meth:`StoryPane.make_list` and ``self.status`` with
:meth:`StoryPane.make_status`, and keeps only what differs: its rows, its buttons and its commands.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QLabel, QTreeWidget, QTreeWidgetItem, QWidget

from ..dialogs.dialogs import confirm, inform
from ..infra.i18n import tr
from .room_pane import entry_tree, role_label

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

#: The item data role holding a row's key.
KEY = Qt.ItemDataRole.UserRole


def selected_key(tree: Any) -> Optional[str]:
    """The UserRole key of a QTreeWidget's selected top-level item, or None (also when ``tree`` is None)."""
    items = tree.selectedItems() if tree is not None else []
    return items[0].data(0, KEY) if items else None


def select_key(tree: Any, key: str) -> None:
    """Select and make current the top-level item whose UserRole key is ``key`` (nothing when there is none)."""
    for i in range(tree.topLevelItemCount()):
        it = tree.topLevelItem(i)
        if it.data(0, KEY) == key:
            tree.setCurrentItem(it)
            it.setSelected(True)
            return


class StoryPane(QWidget):
    """A pane over an agent chat's files: ``set_chat(chat | None)`` (subclasses call :meth:`_show_chat`),
    ``refresh()``, ``set_busy(bool)``, ``selected()`` / ``select(key)`` / ``keys()`` over ``self.list``.
    ``confirm(title, text) -> bool`` and ``inform(title, text)`` ask and tell (dialogs; tests replace them)."""

    #: The list of keyed rows (built by :meth:`make_list`).
    list: QTreeWidget
    #: The muted status line under the pane (built by :meth:`make_status`).
    status: QLabel

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.chat: Optional[Chat] = None
        self.confirm: Callable[[str, str], bool] = self._confirm_dialog
        self.inform: Callable[[str, str], None] = self._inform_dialog
        self._busy = False

    # -- building -------------------------------------------------------------------------------------------
    @staticmethod
    def make_list(headers: builtins.list[str], stretch: int = 0) -> QTreeWidget:
        """The flat, single-selection list of keyed rows; column ``stretch`` takes the room."""
        return entry_tree(headers, flat=True, stretch=stretch)

    def make_status(self, lay: QBoxLayout) -> None:
        """Add the muted, word-wrapped status line to ``lay`` as ``self.status``."""
        self.status = role_label(lay, "muted")

    # -- dialogs (replaced in tests) ------------------------------------------------------------------------
    def _confirm_dialog(self, title: str, text: str) -> bool:
        return confirm(self, title, text)

    def _inform_dialog(self, title: str, text: str) -> None:
        inform(self, title, text)

    # -- chat -----------------------------------------------------------------------------------------------
    @property
    def shown_chat(self) -> Chat:
        """The pane's chat, for the actions that only run while one is shown (the pane is disabled without one).
        Raises RuntimeError when none is: shown to the user as the action's error, never a crash."""
        if self.chat is None:
            raise RuntimeError("no chat is shown")
        return self.chat

    @property
    def history(self) -> Any:
        """The chat's checkpoint log (``story.checkpoints.HistoryLog``)."""
        return self.shown_chat.history_log

    def _show_chat(self, chat: Optional[Chat]) -> None:
        """Keep ``chat`` when it is an agent chat (else None); the status line says when a chat was refused."""
        self.chat = chat if chat is not None and chat.mode == "agent" else None
        self.status.setText("" if self.chat is not None or chat is None else tr("story.not.agent"))

    def set_busy(self, busy: bool) -> None:
        """While a turn runs the agent changes the files: no hand edits or restores then."""
        self._busy = busy
        self._update_buttons()

    def _update_buttons(self) -> None:
        """Enable what the selection and the busy state allow (subclasses)."""

    # -- rows -----------------------------------------------------------------------------------------------
    def _fill(self, items: Iterable[QTreeWidgetItem]) -> None:
        """Replace the rows with ``items`` (each keyed under ``KEY``), keeping the selected key when it is still
        there; no ``itemChanged``/selection signals while filling."""
        keep = self.selected()
        self.list.blockSignals(True)
        self.list.clear()
        for it in items:
            self.list.addTopLevelItem(it)
            if it.data(0, KEY) == keep:
                it.setSelected(True)
                self.list.setCurrentItem(it)
        self.list.blockSignals(False)

    def keys(self) -> builtins.list[str]:
        """The rows' keys as listed (top to bottom)."""
        items = (self.list.topLevelItem(i) for i in range(self.list.topLevelItemCount()))
        return [it.data(0, KEY) for it in items if it is not None]

    def selected(self) -> Optional[str]:
        """The selected row's key (None: no selection, or the list is not built yet)."""
        return selected_key(getattr(self, "list", None))

    def select(self, key: str) -> None:
        """Select the row keyed ``key`` (nothing when there is none)."""
        select_key(self.list, key)
