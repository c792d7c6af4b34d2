"""The window in English: with ``ui_language`` "en" the menu bar (titles and every action), the draft pane's static
labels and what it shows for a demo beat, the status-bar model label and the ledger pane carry no Chinese of ours.

The app's name is romanised in English ("Liyuan", as in "About Liyuan"), so 梨园 is not allowed either. Text that
comes from the card, the recording or the engine (the demo's story, lore names, tool summaries) stays as written and
is not looked at here."""

from __future__ import annotations

import asyncio
import re

import pytest
from PySide6.QtWidgets import QLabel, QMenu, QToolButton
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.i18n import set_language
from liyuan_desktop.ui.window.main_window import MainWindow

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@pytest.fixture
def english():
    set_language("en")
    try:
        yield
    finally:
        set_language("zh")


def _window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings(ui_language="en"))
    qtbot.addWidget(win)
    win.show()
    return win


def _menu_texts(win: MainWindow) -> list[str]:
    out = []
    for top in win.menuBar().actions():
        out.append(top.text())
        menu = top.menu()
        if isinstance(menu, QMenu):
            out.extend(a.text() for a in menu.actions() if not a.isSeparator())
    return out


def test_every_string_has_english():
    missing = [k for k, v in i18n.STRINGS.items() if "en" not in v]
    assert missing == []
    # a translation keeps the placeholders of the Chinese (tr() formats both the same way)
    fields = re.compile(r"(?<!\{)\{(\w+)[^{}]*\}(?!\})")
    differ = [k for k, v in i18n.STRINGS.items() if v["en"] and set(fields.findall(v["zh"])) != set(fields.findall(v["en"]))]
    assert differ == []


def test_menus_and_draft_pane_are_english(qtbot, english):
    win = _window(qtbot)
    texts = _menu_texts(win)
    assert [a.text() for a in win.menuBar().actions()] == ["Liyuan", "Chat", "Help"]
    assert {"Import card…", "Import chapters (folder or long .txt)…", "Offline demo", "Quit", "Settings…"} <= set(texts)
    bad = [t for t in texts if CJK.search(t)]
    assert bad == [], bad
    pane = win.draft_pane
    static = [pane.draft.placeholderText(), pane.reasoning_toggle.text(), pane.inspect_btn.text(), pane.seal_btn.text(),
              pane.continue_btn.text(), pane.banner_label.text(), pane.context_label.text()]
    static += [lab.text() for lab in pane.findChildren(QLabel)] + [b.text() for b in pane.findChildren(QToolButton)]
    bad = [t for t in static if CJK.search(t)]
    assert bad == [], bad
    assert "Model output" in static and pane.reasoning_toggle.text().startswith("Reasoning")
    tabs = [win.tabs.tabText(i) for i in range(win.tabs.count())]
    assert [t for t in tabs if CJK.search(t)] == [], tabs


async def test_demo_beat_in_english(qtbot, english):
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    win.start_demo()
    assert win.chat is not None
    assert not CJK.search(win.status_label.text().split(" · ")[-1])  # "Model: replay model (…)"
    assert "Model: replay model" in win.status_label.text()
    n = len(win.results)
    win.send_clicked()
    loop = asyncio.get_running_loop()
    end = loop.time() + 30
    while len(win.results) == n:
        assert loop.time() < end, "beat timed out"
        await asyncio.sleep(0.02)
    assert win.results[-1].sealed
    pane = win.draft_pane
    assert pane.status.text().startswith("Sealed · version ") and pane.status.text().endswith(" chars")
    assert pane.calls_label.text().startswith("Model calls ")
    for text in (pane.status.text(), pane.calls_label.text(), pane.meta.text(), pane.reasoning_toggle.text()):
        assert not CJK.search(text), text
    lines = [pane.activity.item(i).text() for i in range(pane.activity.count())]
    assert "Replay model: the model's words are recorded (offline demo)" in lines
    assert any(t.startswith("Scribe's ledger: ") for t in lines), lines
    html = win.state_pane.view.toPlainText()
    assert "The scribe's last entries" in html and "Characters" in html


def test_page_and_about_in_english(english):
    from liyuan_desktop.ui.dialogs.about import about_html
    from liyuan_desktop.ui.frames.conversation import page_strings

    strings = page_strings()
    assert strings["welcome.sub"] == ""  # empty on purpose in English: not the Chinese entry's English line again
    assert [k for k, v in strings.items() if CJK.search(v)] == []
    html = about_html()
    assert "Liyuan Liyuan" not in html and "Liyuan Desktop" in html and not CJK.search(html.split("</h3>")[0])
