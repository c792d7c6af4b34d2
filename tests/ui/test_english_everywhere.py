"""Issue 17 "English throughout": with English chosen, the whole offline demo (three beats on the replay model:
lore look-ups, an ask, a revision of the previous reply) played through the window and through ``liyuan --lang en
chat --demo`` shows no Chinese of ours — only the story and the card's data.

The detector looks for CJK ideographs in what the user reads (window: menus, the status bar, every visible label
and button, the draft pane's activity list and status, the ledger pane, the tabs, the conversation page; CLI: every
line of output) after removing the allowed content: every string of the demo card (names, lore titles and keys,
the opening) and of its recording (the user's lines, the model's drafts and tool arguments, the scribe's patches —
i.e. the story and the ledger values) and the data folder path (folder names are data). CJK punctuation
(「」（）：；、) is not an ideograph and is allowed as a separator. In English the demo is the English one
(cards/Qingwu, ``core.paths.demo_set``): its content holds no CJK, so only the data folder's names are allowed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QMenu
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.paths import demo_card_path, demo_replay_path, home
from liyuan_desktop.ui.infra.i18n import set_language
from liyuan_desktop.ui.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _strings(value, out: set[str]) -> None:
    if isinstance(value, str):
        try:  # tool arguments and scribe patches are JSON inside strings
            inner = json.loads(value)
        except ValueError:
            inner = None
        if isinstance(inner, (dict, list)):
            _strings(inner, out)
        for line in [value, *value.splitlines()]:  # also as the page shows it: Markdown marks and 【】 gone
            out.update({line.strip(), re.sub(r"[*【】]", "", line).strip()})
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out)
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


#: The story fields of a session's entries (never its notices: ``activity``, ``warnings`` are what we check).
_STORY_FIELDS = ("text", "draft", "state", "question", "options", "answer", "title", "card_name", "persona")


def allowed_content(data: Path, demo: str = "en") -> list[str]:
    """The story and card data of the ``demo`` language's demo (module doc; in English the English demo, which holds
    no CJK at all, so only the folder names below are left) and of the chats the run saved under ``data`` (their
    story fields, card and chat names), longest first. The folder names the app chose are allowed only in a data
    folder of the Chinese layout (first written in Chinese: core/paths.py), which keeps them in English too;
    a data folder first written in English has English ones, so they are checked."""
    from liyuan_desktop.core.paths import ZH_HOME, layout_of_home

    out: set[str] = {str(data)}
    for f in (demo_card_path(demo), demo_replay_path(demo)):
        _strings(json.loads(Path(f).read_text("utf-8")), out)
    chinese_layout = layout_of_home(data) is ZH_HOME
    for session in Path(data).glob("cards/*/*/*/session.jsonl"):
        for line in session.read_text("utf-8").splitlines():
            entry = json.loads(line)
            _strings([entry.get(k) for k in _STORY_FIELDS if entry.get(k)], out)
        out |= {session.parent.name, session.parent.parent.parent.name}
        if chinese_layout:
            out.add(str(session.parent))
    return sorted((s for s in out if s and CJK.search(s)), key=len, reverse=True)


def chrome_cjk(texts, allowed: list[str]) -> list[str]:
    """The texts that still hold a CJK ideograph once the allowed content is taken out."""
    bad = []
    for t in texts:
        rest = t
        for a in allowed:
            if a in rest:
                rest = rest.replace(a, " ")
        if CJK.search(rest):
            bad.append(t)
    return bad


@pytest.fixture
def english():
    set_language("en")
    try:
        yield
    finally:
        set_language("zh")


def test_cli_demo_in_english(tmp_path):
    data = tmp_path / "home"
    env = {**os.environ, "LIYUAN_HOME": str(data), "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", "en", "chat", "--demo", "--delay-ms", "0"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = (p.stdout + p.stderr).splitlines()
    assert any(line.startswith("━━ Beat 3 ━━") for line in lines) and "The demo is over." in p.stdout
    assert any("looked up “" in line for line in lines) and any(line.startswith("[World state]") for line in lines)
    assert "— Opening · Qingwu —" in lines  # the English demo's opening, under its title in English
    allowed = allowed_content(data)
    assert all(a.startswith(str(data)) for a in allowed), allowed  # the English demo allows no CJK but folder names
    bad = chrome_cjk(lines, allowed)
    assert bad == [], "\n".join(bad)


def _menus(menu: QMenu) -> list[str]:
    out = []
    for a in menu.actions():
        if a.isSeparator():
            continue
        out.append(a.text())
        if a.menu() is not None:
            out += _menus(a.menu())
    return out


async def test_window_demo_in_english(qtbot, english):
    win = MainWindow(S.AppSettings(ui_language="en"))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    await wait_for(win.view.is_ready)
    win.start_demo()
    loop = asyncio.get_running_loop()
    pane = win.draft_pane
    activity: list[str] = []  # the draft pane's activity list of every beat (each beat starts a new one)
    for _ in range(3):
        n = len(win.results)
        win.send_clicked()
        end = loop.time() + 60
        while len(win.results) == n:
            if win.ask_dialog.isVisible() and win.ask_dialog.option_buttons:
                win.ask_dialog.choose(0)
            assert loop.time() < end, "beat timed out"
            await asyncio.sleep(0.02)
        activity += [pane.activity.item(i).text() for i in range(pane.activity.count())]
    assert win.results[-1].revised_previous
    await asyncio.sleep(0.3)

    texts = [win.windowTitle(), win.statusBar().currentMessage()]
    for top in win.menuBar().actions():
        texts.append(top.text())
        if top.menu() is not None:
            texts += _menus(top.menu())
    texts += [w.text() for w in win.findChildren(QLabel) if w.isVisible()]
    texts += [w.text() for w in win.findChildren(QAbstractButton) if w.isVisible()]
    texts += [w.toolTip() for w in win.findChildren(QAbstractButton) if w.isVisible()]
    texts += [win.tabs.tabText(i) for i in range(win.tabs.count())]
    texts += activity + [pane.status.text(), pane.meta.text(), pane.calls_label.text()]
    texts += win.state_pane.view.toPlainText().splitlines()
    page = await js(win, "document.body.innerText")
    texts += page.splitlines()
    assert any("looked up “" in t for t in activity), activity
    assert any(t.startswith("Scribe's ledger: ") and "state updated" in t for t in activity), activity
    shots = os.environ.get("LIYUAN_SHOTS_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        win.grab().save(str(Path(shots) / "demo-english.png"))
    assert await js(win, "document.querySelector('.opening-title').textContent") == "Opening · Qingwu"
    allowed = allowed_content(home())
    assert all(a.startswith(str(home())) for a in allowed), allowed  # no CJK but the data folder's names
    bad = chrome_cjk([t for t in texts if t], allowed)
    assert bad == [], "\n".join(bad)


async def test_live_switch_rerenders_texts_built_with_values(qtbot):
    """Issue 17 item: the switch re-translates texts built with values — the status bar's chat line, the draft
    pane's status and counters, its activity lines (tool summaries, lore reasons, ledger changes) — and back."""
    set_language("zh")
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    try:
        await wait_for(win.view.is_ready)
        win.start_demo()
        n = len(win.results)
        win.send_clicked()
        await wait_for(lambda: len(win.results) > n, 60)
        pane = win.draft_pane

        def shown() -> list[str]:
            return [win.status_label.text(), pane.status.text(), pane.calls_label.text(), pane.meta.text(),
                    *[pane.activity.item(i).text() for i in range(pane.activity.count())]]

        chinese = shown()
        assert any("查「" in t for t in chinese) and any(t.startswith("场记记账：") for t in chinese)
        set_language("en")
        win = win.language_changed("en")  # the window is built again in English (ui/window/language_switch.py)
        qtbot.addWidget(win)
        pane = win.draft_pane
        english = shown()
        assert any("looked up “" in t for t in english) and any(t.startswith("Scribe's ledger: ") for t in english)
        assert any("is in your words this beat" in t for t in english)
        assert "Model: replay model" in english[0] and english[1].startswith("Sealed · version ")
        bad = chrome_cjk([t for t in english if t], allowed_content(home(), "zh"))  # a Chinese chat, in English
        assert bad == [], "\n".join(bad)
        set_language("zh")
        win = win.language_changed("zh")
        qtbot.addWidget(win)
        pane = win.draft_pane
        assert shown() == chinese  # and back, as it was
    finally:
        set_language("zh")
