"""The English tour of the window (issue 32 §1): the main window in English with the demo chat open, then every
action of every menu triggered in turn (with the chat open, then with the card selected), and every dialog or
window it opens read before it is closed — titles, labels, buttons (with Qt's own standard buttons), tool tips,
group boxes, tabs, placeholders, combo items, table headers — failing on any CJK ideograph outside user content
(the demo card's and the chat's own strings, the data folder's path; ``test_english_everywhere.allowed_content``) —
the folder names the app chose in it are English (``chats/`` …: a data folder first written in English,
``core/paths.py``), so they are not allowed content.
File pickers answer "cancelled"; destructive questions are closed, which is No."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QDialog,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QTreeWidget,
    QWidget,
)
from test_english_everywhere import allowed_content, chrome_cjk
from test_smoke_menus import _menu_actions, no_file_pickers  # noqa: F401  (a fixture)

from liyuan_desktop.core.paths import home
from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.qt_language import apply_qt_language

SKIP = ("menu.quit", "menu.demo")
#: Not chrome: the language picker names each language in itself (中文, as every language menu does). A novel's own
#: file names are not carved out: an English novel's are English (chapters/, outline.md; core/story/layout.py).
NOT_CHROME = ["中文"]


def widget_texts(top: QWidget) -> list[str]:
    """What a user reads in ``top`` and its visible children (see the module doc), every tab of its tab widgets."""
    out = _visible_texts(top)
    for tabs in top.findChildren(QTabWidget):
        if tabs.isVisibleTo(top):
            current = tabs.currentIndex()
            for i in range(tabs.count()):
                tabs.setCurrentIndex(i)
                out += _visible_texts(top)
            tabs.setCurrentIndex(current)
    return out


def _visible_texts(top: QWidget) -> list[str]:
    out = [top.windowTitle(), top.toolTip()]
    if isinstance(top, QMessageBox):
        out += [top.text(), top.informativeText()]
    for w in top.findChildren(QWidget):
        if not w.isVisibleTo(top):
            continue
        out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QGroupBox):
            out.append(w.title())
        elif isinstance(w, QTabWidget):
            out += [w.tabText(i) for i in range(w.count())] + [w.tabToolTip(i) for i in range(w.count())]
        elif isinstance(w, (QLineEdit, QPlainTextEdit, QTextEdit)):
            out.append(w.placeholderText())
        elif isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
        elif isinstance(w, QTableWidget):
            out += [w.horizontalHeaderItem(i).text() for i in range(w.columnCount()) if w.horizontalHeaderItem(i)]
        elif isinstance(w, QTreeWidget):
            head = w.headerItem()
            out += [head.text(i) for i in range(w.columnCount())] if head is not None else []
    return [t for t in out if t]


def _menu_texts(win) -> list[str]:
    return [label.split("/")[-1] for label, _a in _menu_actions(win)] + [a.text() for a in win.menuBar().actions()]


def test_english_tour_of_every_menu_and_dialog(qtbot, no_file_pickers):  # noqa: F811
    from liyuan_desktop.ui.infra.i18n import tr
    from liyuan_desktop.ui.window.main_window import MainWindow

    i18n.set_language("en")
    apply_qt_language("en")
    seen: dict[str, list[str]] = {}
    try:
        win = MainWindow(AppSettings(ui_language="en", theme="light"))
        qtbot.addWidget(win)
        win.show()
        win.start_demo()
        qtbot.waitUntil(lambda: win.chat is not None, timeout=30000)
        assert win.chat.dir.parent == home() / "cards" / "Qingwu" / "chats"  # English folder names (core/paths)
        seen["main window"] = widget_texts(win) + _menu_texts(win)
        skip = {tr(k) for k in SKIP}
        where = [""]

        def read_and_close(w: QWidget) -> None:
            seen.setdefault(f"{where[0]} → {type(w).__name__} {w.windowTitle()}", []).extend(widget_texts(w))
            if isinstance(w, QDialog):
                w.reject()
            w.close()

        closer = QTimer()  # a modal dialog (exec) blocks trigger(): read and close it from the loop it runs
        closer.setInterval(100)
        closer.timeout.connect(lambda: (m := QApplication.activeModalWidget()) is not None and read_and_close(m))
        closer.start()
        tried = []
        try:
            for selected in ("chat", "card"):
                if selected == "card":
                    top = win.tree.topLevelItem(0)
                    assert top is not None
                    win.tree.setCurrentItem(top)
                for label, act in _menu_actions(win):
                    if act.text() in skip or not act.isEnabled():
                        continue
                    where[0] = f"{selected}: {label}"
                    before = {w for w in QApplication.topLevelWidgets() if w.isVisible()}
                    act.trigger()
                    tried.append(label)
                    qtbot.wait(150)
                    for w in QApplication.topLevelWidgets():
                        if w is not win and w not in before and w.isVisible() and not isinstance(w, QMenu):
                            read_and_close(w)
        finally:
            closer.stop()
        assert len(tried) > 20, tried
        assert len(seen) > 10, list(seen)
        allowed = allowed_content(home()) + NOT_CHROME
        bad = {where: chrome_cjk(texts, allowed) for where, texts in seen.items()}
        bad = {k: v for k, v in bad.items() if v}
        assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())
    finally:
        i18n.set_language("zh")
