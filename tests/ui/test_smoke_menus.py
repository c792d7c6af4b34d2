"""Smoke test of the window as a user drives it (issue 15, start-up work): every action of every menu, triggered in
turn on a window with a chat open and with a card selected in the list, in Chinese and in English — the lazy
imports moved names into the functions that use them, and a name (or a window method) used by a menu command that
no other test walks fails only when a user picks that command. Each dialog is closed as it opens; file pickers
answer "cancelled". Any exception escaping a slot fails the test (pytest-qt captures them)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMenu, QWidget

from liyuan_desktop.core.settings import AppSettings

SKIP = ("menu.quit", "menu.demo")  # quitting ends the test; a second demo chat adds nothing


def _menu_actions(win) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []

    def walk(menu: QMenu, path: str) -> None:
        menu.aboutToShow.emit()  # menus sync their checkable items as they open
        for a in menu.actions():
            if a.isSeparator():
                continue
            if a.menu():
                walk(a.menu(), f"{path}/{a.text()}")
            else:
                out.append((f"{path}/{a.text()}", a))

    for a in win.menuBar().actions():
        if a.menu():
            walk(a.menu(), a.text())
    return out


def _close_new_windows(win, before: set) -> None:
    for w in QApplication.topLevelWidgets():
        if w is win or w in before or not w.isVisible() or isinstance(w, QMenu):
            continue
        if isinstance(w, QDialog):
            w.reject()
        w.close()


@pytest.fixture
def no_file_pickers(monkeypatch):
    """A file picker answers as if the user pressed Cancel (the native dialog would wait for a person)."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([], "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_menu_action_runs_without_an_error(qtbot, no_file_pickers, lang):
    from liyuan_desktop.ui.infra import i18n
    from liyuan_desktop.ui.infra.i18n import tr
    from liyuan_desktop.ui.window.main_window import MainWindow

    i18n.set_language(lang)
    try:
        win = MainWindow(AppSettings(ui_language=lang, theme="light"))
        qtbot.addWidget(win)
        win.show()
        win.start_demo()
        qtbot.waitUntil(lambda: win.chat is not None, timeout=30000)
        skip = {tr(k) for k in SKIP}
        modal_closer = QTimer()  # a modal dialog (exec) blocks trigger(): close it from the event loop it runs
        modal_closer.setInterval(100)

        def close_modal() -> None:
            w = QApplication.activeModalWidget()
            if isinstance(w, QDialog):
                w.reject()
            elif w is not None:
                w.close()

        modal_closer.timeout.connect(close_modal)
        modal_closer.start()
        tried = []
        try:
            for selected in ("chat", "card"):
                if selected == "card":  # the card row selected in the list (what the import commands act on)
                    top = win.tree.topLevelItem(0)
                    assert top is not None
                    win.tree.setCurrentItem(top)
                for label, act in _menu_actions(win):
                    if act.text() in skip or not act.isEnabled():
                        continue
                    before: set[QWidget] = set(w for w in QApplication.topLevelWidgets() if w.isVisible())
                    act.trigger()
                    tried.append(label)
                    qtbot.wait(150)
                    _close_new_windows(win, before)
        finally:
            modal_closer.stop()
        assert len(tried) > 20, tried
    finally:
        i18n.set_language("zh")
