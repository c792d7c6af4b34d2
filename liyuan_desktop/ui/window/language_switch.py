"""The live language switch (issues 17 and 32): the main window is built again in the new language.

Every text of the window comes from ``tr(key)`` when its widget is made, so the one way to show them all in another
language without matching any shown text back to a key is to make the widgets again. When the language changes in
Settings (``MainWindow.language_changed``) :func:`request` makes Qt's own texts follow
(``ui/infra/qt_language.apply_qt_language``) and :func:`rebuild` replaces the window:

1. what the user sees is taken from the old window (:func:`_capture`): geometry (maximized included, via
   ``saveGeometry``), the splitter's sizes, the right-hand tab, the open card, chat and branch (the very ``Chat``
   object, so the branch shown and everything in memory stay), the unsent text of the input box (its cursor too) and
   of every other chat, the card list's search, sort and favourites filter, the status line's results;
2. the novel room's arrangement and the window's state are saved as on close, a new ``MainWindow`` is made with the
   same settings object and the chat is installed in it (``install_chat``), scrolled to where the reader was if
   they had scrolled up from the end (``ConversationView.reading_position``: the message at the top of the view
   and its offset; a message older than what the new window loads leaves it at the end); the draft pane takes
   over the old pane's beat — activity lines, streamed output, status — rendered again from the message keys it kept
   (``DraftPane.adopt``), the chapter editor its open chapter with unsaved edits (``ChapterEditor.adopt``);
   The new window does not copy its language's demo card into the library (``MainWindow(install_demo=False)``):
   an English user who looks at the Chinese window once keeps a library without 青梧, and a Chinese user one
   without Qingwu. The demo stays one click away (the welcome page's demo copies its card in when it is played,
   and the next start in that language puts it there as every start does); nothing the switch made has to be
   removed again (no deleting of cards on the user's behalf);
3. the new window is shown where the old one was, the Settings dialog (which re-sets its own texts by key,
   ``SettingsDialog._tx``) moves over to it and stays open, and the old window closes and is deleted. The old window
   says which window replaced it (``replaced_by``, :func:`current`) and emits ``windowReplaced(new)`` (``app.py``
   keeps the window on screen with it).

**Never while something runs.** A beat, one of the window's slow chat commands, an asyncio task the window holds
(an export, a new novel) or another dialog of the window that is open would be cut or orphaned: the switch waits
(the status bar says the language changes when it is over) and happens as soon as the window is idle
(:func:`_when_idle`, checked every :data:`POLL_MS`). Nothing typed is lost either way.

The rebuild is one synchronous step on the UI thread (the window's construction; the conversation page of the new
window loads asynchronously like at start-up); ``bench/language_switch.py`` measures it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Optional

from PySide6.QtCore import QByteArray, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDockWidget, QMenu, QWidget

from ..infra import i18n
from ..infra.i18n import tr

log = logging.getLogger(__name__)

i18n.register({
    # a32switch: the live language switch by rebuilding the window
    "lang.switched": {"zh": "界面语言已切换为中文。", "en": "The window is in English now."},
    "lang.deferred": {"zh": "当前操作结束后切换界面语言。", "en": "The language changes when the current operation ends."},
    "lang.deferred.dialog": {"zh": "关闭其他打开的窗口后切换界面语言。",
                             "en": "The language changes once the other open dialogs are closed."},
})

#: how often a deferred switch looks whether the window is idle, ms
POLL_MS = 100

_waiting: set[int] = set()  # id() of the windows whose switch waits (one poll each)


def current(win: Any) -> Any:
    """The window on screen now for ``win``: ``win`` itself, or the window that replaced it (after one or more
    switches)."""
    while getattr(win, "replaced_by", None) is not None:
        win = win.replaced_by
    return win


def _running(win: Any) -> Optional[str]:
    """Why the window cannot be rebuilt now: "busy" (a beat, a slow chat command or a task the window holds runs),
    "dialog" (another dialog of the window is open), or None."""
    session = win.session
    if win.busy or session.work_busy or session.marked_busy:
        return "busy"
    if _tasks_running(win):
        return "busy"
    if _open_dialogs(win):
        return "dialog"
    return None


def _tasks_running(win: Any) -> list[str]:
    """The asyncio tasks the window or one of its parts holds that are not done (an export, a review, a new
    novel, a pane gathering on a worker), as "Owner.attribute" names."""
    out = []
    for obj in (win, *win.findChildren(QObject)):
        for name, value in vars(obj).items():
            if isinstance(value, asyncio.Future) and not value.done():
                out.append(f"{type(obj).__name__}.{name}")
    return out


def _open_dialogs(win: Any) -> list[QWidget]:
    """The windows of ``win`` shown now, other than the Settings dialog, its docks and menus."""
    settings = win.settings_dialog
    out = []
    for w in QApplication.topLevelWidgets():
        if w is win or w is settings or not w.isVisible() or isinstance(w, (QDockWidget, QMenu)):
            continue
        p = w.parentWidget()
        while p is not None and p is not win:
            p = p.parentWidget()
        if p is win:
            out.append(w)
    return out


def request(win: Any, lang: str) -> Any:
    """The language is ``lang`` now (``i18n.set_language`` done by the caller): Qt's texts follow, and the window is
    rebuilt now, or as soon as it is idle (module doc). Returns the window on screen after the call (the new one, or
    ``win`` while the switch waits)."""
    from ..infra.qt_language import apply_qt_language

    apply_qt_language(lang)  # Qt's standard buttons and file dialog follow (issue 32)
    why = _running(win)
    if why is None:
        return rebuild(win)
    win.statusBar().showMessage(_waiting_text(why))
    if id(win) not in _waiting:
        _waiting.add(id(win))
        QTimer.singleShot(POLL_MS, lambda: _when_idle(win))
    return win


def _waiting_text(why: str) -> str:
    """The status bar's note while the switch waits (``why`` from :func:`_running`)."""
    return tr("lang.deferred" if why == "busy" else "lang.deferred.dialog")


def _when_idle(win: Any) -> None:
    """A deferred switch: rebuild once nothing runs (checked again every :data:`POLL_MS`; the note stays in the
    status bar meanwhile — a beat starting clears it)."""
    try:
        if getattr(win, "replaced_by", None) is not None or not win.isVisible():
            _waiting.discard(id(win))
            return
    except RuntimeError:  # the window was deleted meanwhile
        _waiting.discard(id(win))
        return
    why = _running(win)
    if why is not None:
        if not win.statusBar().currentMessage():
            win.statusBar().showMessage(_waiting_text(why))
        QTimer.singleShot(POLL_MS, lambda: _when_idle(win))
        return
    _waiting.discard(id(win))
    rebuild(win)


def rebuild(win: Any) -> Any:
    """Replace ``win`` with a new window built in the current language, showing the same (module doc); returns the
    new window. Nothing is rebuilt (and ``win`` returned) when ``win`` is already in the current language."""
    if getattr(win, "built_language", None) == i18n.language():
        win.statusBar().showMessage(tr("lang.switched"), 6000)
        return win
    state = _capture(win)
    room = getattr(win, "novel_room", None)
    if room is not None and room.active:
        room.leave(True)  # its arrangement is saved as on close; the new window enters it again for the chat
    win.save_window_state()
    new = type(win)(win.settings, install_demo=False)  # a switch adds no card: not the other language's demo
    new.restoreGeometry(state["geometry"])
    if not (win.isMaximized() or win.isFullScreen()):
        new.setGeometry(win.geometry())  # restoreGeometry fits a window to the screen: the same size, exactly
    new.show()  # before the chat is installed, as at start-up (the docks' arrangement is restored on a shown window);
    _restore(new, state, win)  # nothing is painted before this returns
    _move_settings_dialog(win, new)
    win.replaced_by = new
    win.windowReplaced.emit(new)
    win.close()
    win.deleteLater()
    new.statusBar().showMessage(tr("lang.switched"), 6000)
    return new


def _capture(win: Any) -> dict[str, Any]:
    """What the new window shows again (module doc), read from ``win``."""
    cursor = win.input.textCursor()
    bar = getattr(win, "card_bar", None)
    return {
        "geometry": QByteArray(win.saveGeometry()),
        "split": win.split.sizes(),
        "tab_index": win.tabs.currentIndex(),
        "chat": (win.card_ref, win.chat_ref, win.chat, win.is_demo) if win.chat is not None else None,
        "reading": win.view.reading_position() if win.chat is not None else None,
        "card": win.card_ref,
        "welcome": win.view.mode() == "welcome",
        "input": win.input.toPlainText(),
        "cursor": (cursor.anchor(), cursor.position()),
        "inputs": dict(win.unsent_inputs),
        "search": (bar.search.text(), bar.sort.currentIndex(), bar.fav_only.isChecked()) if bar is not None else None,
        "results": (list(win.results), win.last_result),
        "read_only": win.read_only_reason,
    }


def _restore(new: Any, state: dict[str, Any], old: Any) -> None:
    """Show in ``new`` what ``state`` holds (:func:`_capture`); the panes take over ``old``'s."""
    new.read_only_reason = state["read_only"]
    new.results, new.last_result = state["results"]
    if state["search"] is not None and getattr(new, "card_bar", None) is not None:
        text, sort, fav = state["search"]
        new.card_bar.sort.setCurrentIndex(sort)
        new.card_bar.fav_only.setChecked(fav)
        new.card_bar.search.setText(text)
    new.unsent_inputs = dict(state["inputs"])
    if state["chat"] is not None:
        card, ref, chat, demo = state["chat"]
        new.install_chat(card, ref, chat, demo)
        if state["reading"] is not None:  # scrolled up: the same message at the same height (the end otherwise)
            new.view.restore_reading(state["reading"])
    else:
        new.card_ref = state["card"]
        new.view.show_welcome() if state["welcome"] else new.show_home()
    new.input.setPlainText(state["input"])  # after install_chat, which pre-fills the demo's next line
    cursor = new.input.textCursor()
    anchor, pos = state["cursor"]
    cursor.setPosition(min(anchor, len(state["input"])))
    cursor.setPosition(min(pos, len(state["input"])), cursor.MoveMode.KeepAnchor)
    new.input.setTextCursor(cursor)
    new.draft_pane.adopt(old.draft_pane)
    chapter = old.chapter_pane.selected()
    if chapter is not None:
        new.chapter_pane.select(chapter)  # the writing room follows the chapter selected (the review panel's)
    new.chapter_pane.editor.adopt(old.chapter_pane.editor)
    new.ledger_timeline.adopt(old.ledger_timeline)
    new.writing_panes.review.adopt(old.writing_panes.review)
    new.layout().activate()  # the splitter has its final width now: the sizes are kept as they are, not rescaled
    new.split.setSizes(state["split"])
    index = state["tab_index"]
    if 0 <= index < new.tabs.count() and new.tabs.isTabVisible(index):
        new.tabs.setCurrentIndex(index)
    new.set_busy(False)


def _move_settings_dialog(old: Any, new: Any) -> None:
    """The Settings dialog open on ``old`` moves to ``new``: same place, still open, its signals to ``new``."""
    dlg = old.settings_dialog
    if dlg is None:
        return
    try:
        visible, pos = dlg.isVisible(), dlg.pos()
    except RuntimeError:  # deleted (closed long ago)
        return
    for signal, slot in ((dlg.settingsSaved, old.apply_settings), (dlg.languageChanged, old.language_changed)):
        try:
            signal.disconnect(slot)
        except (RuntimeError, TypeError):
            pass
    dlg.settingsSaved.connect(new.apply_settings)
    dlg.languageChanged.connect(new.language_changed)
    dlg.setParent(new, dlg.windowFlags())
    new.settings_dialog = dlg
    old.settings_dialog = None
    if visible:
        dlg.setWindowModality(Qt.WindowModality.WindowModal)
        dlg.move(pos)
        dlg.show()
        dlg.raise_()
        dlg.activateWindow()
