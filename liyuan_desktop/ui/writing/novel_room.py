"""The novelist's room (issue 28): the manuscript layout an agent-mode chat (写长篇, a novel) opens in.

* left, as docks: the **binder** (:class:`~.binder.Binder`: the outline's volumes → chapters with status and 字数,
  unlinked chapter files to link) and, tabbed behind it, the **library** (the window's card and chat list, so another
  book or chat is one click away);
* centre: the **chapter editor**, wide (its focus mode hides every dock and brings them back);
* right, as docks: the **agent** conversation with its input, and the inspectors — **checkpoints**, **threads**,
  **codex**, **review** — tabbed below it; **more** (the window's other tabs: draft, ledger, branches, the chapter
  list, panels) starts hidden.

Every dock can be moved, floated, tabbed or closed; 书稿 → 面板 brings a closed one back and 重置布局 returns to the
default arrangement. The arrangement is remembered (``QMainWindow.saveState``, base64 in the settings' ``window``
part under ``"manuscript"``). A role-play chat keeps the window's usual layout: showing one leaves the manuscript
layout (the widgets go back where they were, at the sizes they had); showing an agent chat enters it.

The room also puts the codex on the editor: names and aliases highlighted, a hover card with the entry
(:mod:`.codex_highlight`), from the codex the writing room gathered. The window's part is :func:`install_novel_room`.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from ..infra import theme
from ..infra.i18n import register, tr
from .binder import Binder
from .codex_highlight import CodexHighlighter, MentionTips

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "room.menu": {"zh": "书稿", "en": "Manuscript"},
    "room.menu.docks": {"zh": "面板", "en": "Panels"},
    "room.menu.reset": {"zh": "重置书稿布局", "en": "Reset manuscript layout"},
    "room.menu.layout": {"zh": "写长篇时用书稿布局", "en": "Manuscript layout for long-form chats"},
    "room.dock.binder": {"zh": "大纲与章节", "en": "Binder"},
    "room.dock.library": {"zh": "书库", "en": "Library"},
    "room.dock.agent": {"zh": "写作助手", "en": "Agent"},
    "room.dock.checkpoints": {"zh": "检查点", "en": "Checkpoints"},
    "room.dock.threads": {"zh": "伏笔", "en": "Threads"},
    "room.dock.codex": {"zh": "设定", "en": "Codex"},
    "room.dock.review": {"zh": "审稿", "en": "Review"},
    "room.dock.more": {"zh": "更多面板", "en": "More panels"},
})

#: The settings' ``window`` key the manuscript arrangement is kept under.
STATE_KEY = "manuscript"
#: The settings' ``window`` key saying whether agent chats open in the manuscript layout (default on).
ENABLED_KEY = "manuscript_on"
#: Bumped when the docks change, so an arrangement saved by an older layout is not applied to a newer one.
STATE_VERSION = 1


class RoomDock(QDockWidget):
    """A dock of the manuscript layout, titled by catalog key ``key`` (a language switch builds the window again:
    ui/window/language_switch.py)."""

    def __init__(self, key: str, parent: QWidget):
        super().__init__(tr(key), parent)
        self.key = key


class NovelRoom(QObject):
    """The manuscript layout of one main window (module doc). ``active``: the layout is shown. ``enter()`` /
    ``leave(agent)`` switch; ``follow(chat)`` picks by the chat's mode; ``docks`` by name."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.window = window
        self.active = False
        self._sizes: list[int] = []
        self._tabs: list[tuple[int, QWidget, str]] = []
        self._hidden_in_focus: list[QDockWidget] = []
        wp = window.writing_panes
        self.binder = Binder()
        self.binder.openChapter.connect(wp.open_at)
        self.binder.changed.connect(wp.schedule)
        wp.dataShown.connect(self._data)
        editor = window.chapter_pane.editor
        self.highlighter = CodexHighlighter(editor.text.document())
        self.highlighter.set_dark(theme.mode() == "dark")
        self.tips = MentionTips(editor.text, self.highlighter)
        theme.notifier.changed.connect(self._theme)  # a bound slot: dropped with the room (the notifier is global)
        self.docks: dict[str, QDockWidget] = {}
        for name in ("binder", "library", "agent", "checkpoints", "threads", "codex", "review", "more"):
            dock = RoomDock(f"room.dock.{name}", window)
            dock.setObjectName(f"novel_{name}_dock")
            dock.setAllowedAreas(Qt.DockWidgetArea.AllDockWidgetAreas)
            dock.hide()
            self.docks[name] = dock
        self.docks["binder"].setWidget(self.binder)
        self.menu = self._build_menu()
        window.chatShown.connect(self.follow)
        window.busyChanged.connect(self.binder.set_busy)
        window.installEventFilter(self)

    def _theme(self, which: str) -> None:
        self.highlighter.set_dark(which == "dark")

    # -- what the writing room gathered ---------------------------------------------------------------------
    def _data(self, data: Any) -> None:
        self.binder.show_data(data)
        self.highlighter.set_entries(list(data.codex or []))

    # -- switching --------------------------------------------------------------------------------------------
    def follow(self, chat: Optional[Chat]) -> None:
        """Another chat is shown: an agent chat gets the manuscript layout, anything else the usual one."""
        agent = chat is not None and chat.mode == "agent"
        self.binder.set_chat(chat if agent else None)
        if not agent:
            self.highlighter.set_entries([])
        if agent and self.enabled():
            self.enter()
        else:
            self.leave(agent)
        bar = self.window.menuBar()
        if agent and self.menu.menuAction() not in bar.actions():
            bar.addAction(self.menu.menuAction())  # 书稿 is in the menu bar only while a book is shown
        elif not agent:
            bar.removeAction(self.menu.menuAction())
        self.layout_action.setChecked(self.enabled())
        self.export_action.setEnabled(agent)
        self.docks_menu.setEnabled(self.active)

    def enabled(self) -> bool:
        """Whether agent chats open in the manuscript layout (书稿 → 书稿布局; on unless switched off)."""
        return bool((self.window.settings.window or {}).get(ENABLED_KEY, True))

    def set_enabled(self, on: bool) -> None:
        """Switch the manuscript layout for agent chats on or off (remembered); the open chat follows now."""
        w = dict(self.window.settings.window or {})
        w[ENABLED_KEY] = bool(on)
        self.window.settings.window = w
        self.follow(self.window.chat)

    def _moved(self) -> list[tuple[str, QWidget]]:
        wp, win = self.window.writing_panes, self.window
        return [("checkpoints", win.timeline_pane), ("threads", wp.threads), ("codex", wp.codex),
                ("review", wp.review)]

    def enter(self) -> None:
        """Show the manuscript layout (nothing when it is shown)."""
        if self.active:
            return
        win, split, tabs = self.window, self.window.split, self.window.tabs
        self._sizes = split.sizes()
        self._tabs = []
        for name, pane in self._moved():
            i = tabs.indexOf(pane)
            self._tabs.append((i, pane, tabs.tabText(i)))
        for i, pane, _t in sorted(self._tabs, key=lambda t: -t[0]):
            tabs.removeTab(i)
        for name, pane in self._moved():
            self.docks[name].setWidget(pane)
            pane.show()
        left, centre = split.widget(0), split.widget(1)
        self.docks["library"].setWidget(left)
        self.docks["agent"].setWidget(centre)
        self.docks["more"].setWidget(tabs)
        split.insertWidget(0, win.chapter_pane.editor)
        win.chapter_pane.editor.show()
        self.active = True
        if not self._restore_state():
            self.default_layout()

    def leave(self, agent: bool) -> None:
        """Back to the usual layout (nothing when it is shown); ``agent``: the moved tabs stay visible (the chat
        shown is an agent chat — the window is closing on it)."""
        if not self.active:
            return
        win, split, tabs = self.window, self.window.split, self.window.tabs
        if win.chapter_pane.editor.focus_mode:
            win.chapter_pane.editor.set_focus_mode(False)
        self.save_state()
        for dock in self.docks.values():
            dock.hide()
        win.chapter_pane.split.addWidget(win.chapter_pane.editor)
        left, centre = self.docks["library"].widget(), self.docks["agent"].widget()
        for w in (left, centre, tabs):
            split.addWidget(w)
            w.show()
        for i, pane, title in sorted(self._tabs, key=lambda t: t[0]):
            at = tabs.insertTab(i, pane, title)
            tabs.setTabVisible(at, agent)
        self.active = False
        if self._sizes:
            split.setSizes(self._sizes)

    def default_layout(self) -> None:
        """The arrangement a first manuscript opens with: binder (library behind it) on the left, the agent on the
        right with the inspectors tabbed below it, more panels closed."""
        win, d = self.window, self.docks
        for dock in d.values():
            dock.setFloating(False)
        win.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, d["binder"])
        win.tabifyDockWidget(d["binder"], d["library"])
        win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, d["agent"])
        win.splitDockWidget(d["agent"], d["checkpoints"], Qt.Orientation.Vertical)
        for name in ("threads", "codex", "review", "more"):
            win.tabifyDockWidget(d["checkpoints"], d[name])
        for name, dock in d.items():
            dock.setVisible(name != "more")
        d["binder"].raise_()
        d["checkpoints"].raise_()
        width = max(win.width(), 900)
        win.resizeDocks([d["binder"], d["agent"]], [max(250, width // 5), max(360, width * 3 // 10)],
                        Qt.Orientation.Horizontal)
        win.resizeDocks([d["agent"], d["checkpoints"]], [3, 2], Qt.Orientation.Vertical)

    # -- remembering the arrangement --------------------------------------------------------------------------
    def save_state(self) -> None:
        """Keep the arrangement in the settings' ``window`` part (written with the window's state on exit)."""
        if not self.active:
            return
        w = dict(self.window.settings.window or {})
        w[STATE_KEY] = base64.b64encode(bytes(self.window.saveState(STATE_VERSION))).decode("ascii")
        self.window.settings.window = w

    def _restore_state(self) -> bool:
        raw = (self.window.settings.window or {}).get(STATE_KEY)
        if not raw:
            return False
        try:
            ok = self.window.restoreState(QByteArray(base64.b64decode(raw)), STATE_VERSION)
        except (ValueError, TypeError):
            return False
        if ok and not any(d.isVisible() for n, d in self.docks.items() if n in ("binder", "agent")):
            return False  # an arrangement with neither binder nor agent is no way to start
        return bool(ok)

    def reset_layout(self) -> None:
        """Back to :meth:`default_layout` (and forget the saved arrangement)."""
        w = dict(self.window.settings.window or {})
        w.pop(STATE_KEY, None)
        self.window.settings.window = w
        if self.active:
            self.default_layout()

    # -- focus mode, closing ------------------------------------------------------------------------------------
    def focus(self, on: bool) -> None:
        """The editor's distraction-free mode in the manuscript layout: every dock hides, and comes back after."""
        if on:
            self._hidden_in_focus = [d for d in self.docks.values() if d.isVisible()]
            for d in self._hidden_in_focus:
                d.hide()
        else:
            for d in self._hidden_in_focus:
                d.show()
            self._hidden_in_focus = []

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt API
        win: Any = self.window
        closing = ev.type() == QEvent.Type.Close and obj is win
        if closing and self.active and not self.window.busy:
            self.leave(True)  # the window then saves the usual layout's sizes; this one is kept in STATE_KEY
        return False

    def export_book(self) -> None:
        """书稿 → 导出成书…: the export dialog (ui/dialogs/book_export.py) for the open book."""
        from ..dialogs.book_export import open_book_export

        if self.window.chat is None:
            return
        coro = open_book_export(self.window)
        try:
            self.export_task = asyncio.ensure_future(coro)
        except RuntimeError:  # no event loop (a synchronous caller): nothing to show the dialog on
            coro.close()

    def _build_menu(self) -> QMenu:
        menu = QMenu(tr("room.menu"), self.window)
        self.docks_menu = menu.addMenu(tr("room.menu.docks"))
        self.docks_menu.setEnabled(False)  # until the manuscript layout is shown
        for dock in self.docks.values():
            self.docks_menu.addAction(dock.toggleViewAction())
        self.export_action = menu.addAction(tr("bookx.menu"), self.export_book)
        menu.addSeparator()
        self.layout_action = menu.addAction(tr("room.menu.layout"))
        self.layout_action.setCheckable(True)
        self.layout_action.setChecked(True)
        self.layout_action.triggered.connect(lambda on: self.set_enabled(bool(on)))
        menu.addAction(tr("room.menu.reset"), self.reset_layout)
        return menu


def install_novel_room(window: Any) -> NovelRoom:
    """Give ``window`` the manuscript layout (after its writing panes exist); returns it (``window.novel_room``)."""
    room = NovelRoom(window)
    window.novel_room = room
    from . import plan_view  # issue 28: the outline as cards (书稿 → 提纲视图…)

    plan_view.install(room, window.writing_panes)
    return room


__all__ = ["NovelRoom", "STATE_KEY", "install_novel_room"]
