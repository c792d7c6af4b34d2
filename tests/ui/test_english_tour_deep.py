"""The English tour, one level deeper (issue 32 §1): what ``test_english_tour.py`` (every menu action and the dialog
it opens) does not reach. In English, with the demo chat open and a replay-model beat played (so the activity
lines, the draft pane and the ledger rows exist): every tab of the right-hand pane with its lists and trees read
(账本历史 with its chart), the inspector and the summaries; the context menus of the card list (a card row and a
chat row) and of a message in the conversation; one level of sub-dialogs (in each dialog the menus open, every
button that opens another window pressed — file pickers answer "cancelled", questions are closed, which is No);
a group chat with its members tab; the novel room (agent layout) with its docks and the binder's context menu; the
card-update bar; the status bar, window titles and tool tips. Fails on any CJK ideograph outside user content
(``test_english_everywhere.allowed_content``: the demo card's and chats' own strings, names, the data folder)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTextEdit,
    QToolButton,
    QTreeWidget,
    QWidget,
)
from test_english_everywhere import CJK, allowed_content, chrome_cjk
from test_english_tour import NOT_CHROME, widget_texts
from test_smoke_menus import _menu_actions, no_file_pickers  # noqa: F401  (a fixture)
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.paths import home
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.qt_language import apply_qt_language
from liyuan_desktop.ui.window.main_window import MainWindow

#: The buttons pressed in the sub-dialog sweep: by the desktop convention a label ending in "…" opens another window
#: (a dialog, a question, a file picker — which answers "cancelled" here); nothing else is pressed, so nothing is
#: deleted, saved or sent. "Open folder" hands the folder to the desktop (not a window of ours) and is not pressed.
OPENS_A_WINDOW = ("…", "...")


#: Views left out of the reading: none. The prompt view (what the model was sent, in the chat's language) was left out
#: while the demo was Chinese; in English the demo is the English one (cards/Qingwu), so its prompt is read too.
PROMPT_VIEWS: set[str] = set()


def deep_texts(top: QWidget) -> list[str]:
    """:func:`test_english_tour.widget_texts` plus the rows a user reads in lists, trees and tables (every column,
    every level) and read-only text views (but :data:`PROMPT_VIEWS`)."""
    out = widget_texts(top)
    for w in top.findChildren(QWidget):
        if not w.isVisibleTo(top) or w.objectName() in PROMPT_VIEWS:
            continue
        if isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count())] + [w.item(i).toolTip() for i in range(w.count())]
        elif isinstance(w, QTreeWidget):
            stack = [w.topLevelItem(i) for i in range(w.topLevelItemCount())]
            while stack:
                it = stack.pop()
                out += [it.text(c) for c in range(w.columnCount())] + [it.toolTip(c) for c in range(w.columnCount())]
                stack += [it.child(k) for k in range(it.childCount())]
        elif isinstance(w, QTableWidget):
            out += [w.item(r, c).text() for r in range(w.rowCount()) for c in range(w.columnCount()) if w.item(r, c)]
        elif isinstance(w, (QTextEdit, QPlainTextEdit)) and w.isReadOnly():
            out += w.toPlainText().splitlines()
    return [t for t in out if t]


def menu_texts(menu: QMenu) -> list[str]:
    """Every action's text and tool tip in ``menu`` and its sub-menus."""
    out = [menu.title()]
    for a in menu.actions():
        if a.isSeparator():
            continue
        out += [a.text(), a.toolTip() if a.toolTip() != a.text().replace("&", "") else ""]
        if a.menu() is not None:
            out += menu_texts(a.menu())
    return [t for t in out if t]


class Tour:
    """What the tour read, by where (``seen``), and the checks at the end."""

    def __init__(self) -> None:
        self.seen: dict[str, list[str]] = {}

    def add(self, where: str, texts: list[str]) -> None:
        self.seen.setdefault(where, []).extend(texts)

    def assert_english(self, extra_allowed: tuple[str, ...] = ()) -> None:
        """No CJK ideograph outside user content. User content here also counts the text of the card's panel
        templates (tags taken out) and a story line cut short with "…" (a row of 账本历史 or the branch tree)."""
        content = allowed_content(home()) + list(extra_allowed)
        content += [p.strip() for c in content if "<" in c for p in re.split(r"<[^>]*>", c) if p.strip()]
        allowed = sorted(set(content + NOT_CHROME), key=len, reverse=True)

        def story(piece: str) -> bool:  # from its first ideograph on, a piece of some user content
            m = CJK.search(piece)
            return m is not None and any(piece[m.start():].strip() in c for c in content)

        def uncut(text: str) -> str:
            return "".join(" " if story(p) else p for p in re.split(r"(…|\s+|→|「|：)", text))

        bad = {where: chrome_cjk([uncut(t) for t in texts], allowed) for where, texts in self.seen.items()}
        bad = {k: sorted(set(v)) for k, v in bad.items() if v}
        assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


def new_windows(before: set) -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets()
            if w not in before and w.isVisible() and not isinstance(w, QMenu)]


def close(w: QWidget) -> None:
    if isinstance(w, QDialog):
        w.reject()
    w.close()


def opener_buttons(dlg: QWidget) -> list[QAbstractButton]:
    """The buttons of ``dlg`` the sweep presses: enabled, visible, labelled as :data:`OPENS_A_WINDOW`."""
    out = []
    for b in dlg.findChildren(QAbstractButton):
        if not isinstance(b, (QPushButton, QToolButton)) or not b.isVisibleTo(dlg) or not b.isEnabled():
            continue
        label = b.text().replace("&", "").strip().lower()
        if b.isCheckable() or not label.endswith(OPENS_A_WINDOW):
            continue
        out.append(b)
    return out


def pages(dlg: QWidget):
    """Show each page of ``dlg``'s tab widgets in turn (yields the page index; once for a dialog without tabs)."""
    from PySide6.QtWidgets import QTabWidget

    tabs = [t for t in dlg.findChildren(QTabWidget) if t.isVisibleTo(dlg)]
    if not tabs:
        yield 0
        return
    for i in range(tabs[0].count()):
        tabs[0].setCurrentIndex(i)
        yield i


def select_first_rows(dlg: QWidget) -> None:
    """Select the first row of every visible list, tree and table (the buttons that act on a row come on)."""
    for w in dlg.findChildren(QWidget):
        if not w.isVisibleTo(dlg):
            continue
        if isinstance(w, QListWidget) and w.count():
            w.setCurrentRow(0)
        elif isinstance(w, QTreeWidget) and w.topLevelItemCount():
            w.setCurrentItem(w.topLevelItem(0))
        elif isinstance(w, QTableWidget) and w.rowCount():
            w.selectRow(0)


def sweep_sub_dialogs(qtbot, tour: Tour, where: str, dlg: QWidget) -> int:
    """Press each opener button of ``dlg`` (see :func:`opener_buttons`), read every window or modal it opens and
    close it; returns how many were read."""
    n = 0
    closer = QTimer()  # a modal sub-dialog (exec) blocks click(): read and close it from the loop it runs

    def read_modal() -> None:
        nonlocal n
        m = QApplication.activeModalWidget()
        if m is not None and m is not dlg:
            tour.add(f"{where} → {type(m).__name__} {m.windowTitle()}", deep_texts(m))
            n += 1
            close(m)

    closer.setInterval(100)
    closer.timeout.connect(read_modal)
    closer.start()
    try:
        for _page in pages(dlg):
            select_first_rows(dlg)
            for b in opener_buttons(dlg):
                if not dlg.isVisible():
                    break
                before = {w for w in QApplication.topLevelWidgets() if w.isVisible()}
                label = b.text()
                b.click()
                qtbot.wait(150)
                for w in new_windows(before):
                    if w is not dlg:
                        tour.add(f"{where} → [{label}] {type(w).__name__} {w.windowTitle()}", deep_texts(w))
                        n += 1
                        close(w)
    finally:
        closer.stop()
    return n


def english_window(qtbot) -> MainWindow:
    i18n.set_language("en")
    apply_qt_language("en")
    win = MainWindow(S.AppSettings(ui_language="en", theme="light"))
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    return win


async def play_demo_beat(win: MainWindow) -> None:
    """Open the demo chat and play one replayed beat (answering the ask with its first option)."""
    await wait_for(win.view.is_ready)
    win.start_demo()
    await wait_for(lambda: win.chat is not None)
    n = len(win.results)
    win.send_clicked()
    loop = asyncio.get_running_loop()
    end = loop.time() + 60
    while len(win.results) == n:
        if win.ask_dialog.isVisible() and win.ask_dialog.option_buttons:
            win.ask_dialog.choose(0)
        assert loop.time() < end, "beat timed out"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)


async def read_tabs(win: MainWindow, tour: Tour, label: str) -> None:
    """Every visible tab of the right-hand pane, each read while shown (its lists, trees and charts filled)."""
    tabs = win.tabs
    for i in range(tabs.count()):
        if not tabs.isTabVisible(i):
            continue
        tabs.setCurrentIndex(i)
        await asyncio.sleep(0.4)  # panes fill off the UI thread when shown
        pane = tabs.widget(i)
        tour.add(f"{label} tab {tabs.tabText(i)}", [tabs.tabText(i), tabs.tabToolTip(i)] + deep_texts(pane))
    chart = getattr(getattr(win, "ledger_timeline", None), "chart", None)
    if chart is not None:
        texts = [chart.chart.title(), chart.under.text()]
        texts += [ax.titleText() for ax in chart.chart.axes()]
        tour.add(f"{label} ledger chart", texts)


def read_menu(tour: Tour, where: str, menu: Any) -> None:
    assert menu is not None, where
    tour.add(where, menu_texts(menu))
    menu.close()


def tree_row(win: MainWindow, kind: str):
    """The first card row (``kind`` "card") or chat row ("chat") of the card list."""
    for i in range(win.tree.topLevelItemCount()):
        top = win.tree.topLevelItem(i)
        if kind == "card":
            return top
        if top.childCount():
            return top.child(0)
    return None


def read_context_menus(win: MainWindow, tour: Tour, kinds: tuple[str, ...] = ("card", "chat")) -> None:
    """The card list's menus (a card row, a chat row: ``kinds``) and a message's in the conversation."""
    for kind in kinds:
        it = tree_row(win, kind)
        assert it is not None, kind
        win.tree.scrollToItem(it)
        pos = win.tree.visualItemRect(it).center()
        read_menu(tour, f"context menu: {kind} row", win.manager.tree_menu(pos))
    items = win.session.transcript.items
    for role in ("user", "assistant", "opening"):
        item = next((it for it in reversed(items) if it.get("role") == role and it.get("id")), None)
        if item is None:
            continue
        menu = QMenu(win.view)
        menu.addAction(i18n.tr("conv.copy"))
        win.view._message_menu(menu, {"id": str(item["id"]), "role": role})  # the page's right-click, by hand
        read_menu(tour, f"context menu: {role} message", menu)


async def test_panes_context_menus_and_status_after_a_beat(qtbot):
    tour = Tour()
    try:
        win = english_window(qtbot)
        await play_demo_beat(win)
        tour.add("window", [win.windowTitle(), win.statusBar().currentMessage(), win.status_label.text()]
                 + [w.toolTip() for w in win.findChildren(QWidget) if w.isVisible()])
        await read_tabs(win, tour, "demo")
        insp = win.inspect_latest()
        assert insp is not None
        await asyncio.sleep(0.3)
        tour.add("inspector", deep_texts(insp))
        close(insp)
        summ = win.open_summaries()
        assert summ is not None
        await asyncio.sleep(0.3)
        tour.add("summaries", deep_texts(summ))
        close(summ)
        read_context_menus(win, tour)
        tour.add("status bar", [win.statusBar().currentMessage(), win.status_label.text()])
        assert len(tour.seen) > 8, list(tour.seen)
        tour.assert_english()
    finally:
        i18n.set_language("zh")


def test_sub_dialogs_of_every_menu_dialog(qtbot, qloop, no_file_pickers):  # noqa: F811
    """Every dialog a menu opens (with the demo chat open), and in it every button that opens another window."""
    from test_english_tour import SKIP

    from liyuan_desktop.ui.infra.i18n import tr

    tour = Tour()
    try:
        win = english_window(qtbot)
        win.start_demo()
        qtbot.waitUntil(lambda: win.chat is not None, timeout=30000)
        skip = {tr(k) for k in SKIP}
        where = [""]
        busy: set[int] = set()
        opened = [0]

        def tour_dialog(w: QWidget) -> None:
            busy.add(id(w))  # while it is read: the modal closer leaves it alone
            try:
                tour.add(f"{where[0]} → {type(w).__name__} {w.windowTitle()}", deep_texts(w))
                opened[0] += sweep_sub_dialogs(qtbot, tour, where[0], w)
                close(w)
            finally:
                busy.discard(id(w))  # ids are reused: a later modal with this id must still be read and closed

        def on_modal() -> None:
            m = QApplication.activeModalWidget()
            if m is not None and id(m) not in busy:
                closer.stop()
                try:
                    tour_dialog(m)
                finally:
                    closer.start()

        closer = QTimer()
        closer.setInterval(100)
        closer.timeout.connect(on_modal)
        closer.start()
        try:
            for label, act in _menu_actions(win):
                if act.text() in skip or not act.isEnabled():
                    continue
                where[0] = label
                before = {w for w in QApplication.topLevelWidgets() if w.isVisible()}
                act.trigger()
                qtbot.wait(150)
                for w in new_windows(before):
                    if w is not win and id(w) not in busy:
                        tour_dialog(w)
        finally:
            closer.stop()
        assert opened[0] > 5, list(tour.seen)
        tour.assert_english()
    finally:
        i18n.set_language("zh")


def _import_cards(tmp_path) -> None:
    import json

    from liyuan_desktop.core.cards.library import import_card

    for name, desc in (("Aster", "An archer."), ("Birch", "A herbalist.")):
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": desc, "first_mes": f"{name} arrives."}}
        (tmp_path / f"{name}.json").write_text(json.dumps(raw), "utf-8")
        import_card(tmp_path / f"{name}.json")


async def test_group_chat_in_english(qtbot, tmp_path):
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.ui.roleplay.group_members import new_group_clicked

    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    tour = Tour()
    _import_cards(tmp_path)
    try:
        win = english_window(qtbot)
        await wait_for(win.view.is_ready)
        dlg = new_group_clicked(win)
        tour.add("new group dialog", deep_texts(dlg))
        dlg.name.setText("Party")
        dlg.tick(["Aster", "Birch"])
        dlg._accept()
        await wait_for(lambda: win.chat is not None)
        win.chat.model = ReplayModel(actor=[x for i in range(2) for x in (
            {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"Words {i}."}}]}, seal)],
            scribe=['{"patch": {}}'] * 2)
        win.input.setPlainText("Hello all.")
        win.send_clicked()
        await wait_for(lambda: win.session.task is not None and win.session.task.done() and not win.busy
                       and not win.group_pane.auto.running(), timeout=30)
        tour.add("group window", [win.windowTitle(), win.statusBar().currentMessage(), win.status_label.text()])
        await read_tabs(win, tour, "group")
        read_context_menus(win, tour, ("card",))
        tour.assert_english()
    finally:
        i18n.set_language("zh")


async def test_novel_room_in_english(qtbot):
    from PySide6.QtWidgets import QDialogButtonBox

    tour = Tour()
    try:
        win = english_window(qtbot)
        await wait_for(win.view.is_ready)
        win.novel_action.trigger()
        dlg = win.novel_dialog
        tour.add("new novel dialog", deep_texts(dlg))
        dlg.title_edit.setText("River Lamps")
        dlg.author_edit.setText("Ari")
        dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
        await wait_for(lambda: win.chat is not None and win.novel_room.active and win.writing_panes.data is not None)
        await asyncio.sleep(0.5)
        tour.add("novel window", [win.windowTitle(), win.statusBar().currentMessage(), win.status_label.text()]
                 + [m.title() for m in win.menuBar().findChildren(QMenu)])
        for a in win.menuBar().actions():
            if a.menu() is not None:
                tour.add(f"novel menu {a.text()}", menu_texts(a.menu()))
        for name, dock in win.novel_room.docks.items():
            dock.show()
            dock.raise_()
            await asyncio.sleep(0.2)
            tour.add(f"novel dock {name}", [dock.windowTitle()] + deep_texts(dock))
        await read_tabs(win, tour, "novel")
        b = win.novel_room.binder
        read_menu(tour, "binder menu: empty area", b.context_menu(None))
        if b.tree.topLevelItemCount():
            read_menu(tour, "binder menu: a row", b.context_menu(b.tree.topLevelItem(0)))
        tour.assert_english(("River Lamps", "Ari"))
    finally:
        i18n.set_language("zh")


async def test_card_update_bar_in_english(qtbot):
    import json

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from liyuan_desktop.core.chat.changes import Changes

    tour = Tour()
    try:
        win = english_window(qtbot)
        await wait_for(win.view.is_ready)
        win.start_demo()
        await wait_for(lambda: win.chat is not None)
        path = win.chat.card.path
        doc = json.loads(open(path, encoding="utf-8").read())
        doc["data"]["description"] = "A new description."
        open(path, "w", encoding="utf-8").write(json.dumps(doc, ensure_ascii=False))
        win.session.broadcast(Changes.of("library"))
        bar = win.card_update_bar
        await wait_for(bar.isVisible)
        tour.add("card update bar", deep_texts(bar))

        def read_box() -> None:
            box = QApplication.activeModalWidget()
            if box is None:
                QTimer.singleShot(50, read_box)
                return
            tour.add("card update: changes", deep_texts(box))
            QTest.keyClick(box, Qt.Key.Key_Escape)

        QTimer.singleShot(100, read_box)
        bar.show_btn.click()
        bar.keep_btn.click()
        tour.add("card update: kept", [win.statusBar().currentMessage()])
        tour.assert_english(("A new description.",))
    finally:
        i18n.set_language("zh")


async def test_book_update_bar_in_english(qtbot, tmp_path):
    """A library world book the chat reads is replaced: the bar, its list of changes and its answer, in English."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from test_book_update_bar import book, entry, replace, settle, window_on_a_chat

    tour = Tour()
    i18n.set_language("en")
    apply_qt_language("en")
    try:
        win = await window_on_a_chat(qtbot, tmp_path)
        bar = win.card_update_bar
        settle(qtbot, bar)
        new = book(entry(1, "茶馆", "茶馆在镇南。"), entry(3, "城门", "城门寅时开。"), scan_depth=4)
        assert replace(win, tmp_path, new)
        settle(qtbot, bar)
        await wait_for(bar.isVisible)
        tour.add("book update bar", deep_texts(bar))

        def read_box() -> None:
            box = QApplication.activeModalWidget()
            if box is None:
                QTimer.singleShot(50, read_box)
                return
            tour.add("book update: changes", deep_texts(box))
            QTest.keyClick(box, Qt.Key.Key_Escape)

        QTimer.singleShot(100, read_box)
        bar.show_btn.click()
        bar.keep_btn.click()
        tour.add("book update: kept", [win.statusBar().currentMessage()])
        assert "book update: changes" in tour.seen
        # the test's own data: the card 阿棠, the book 镇子 and its entries (old and new)
        tour.assert_english(("阿棠", "镇子", "茶馆在镇北。", "渡口有船。", "茶馆在镇南。", "城门寅时开。", "茶馆", "渡口",
                             "城门", "雨夜，茶馆。", "茶馆掌柜。", "去茶馆", "一。"))
    finally:
        i18n.set_language("zh")
