"""Issue 31 in the window: a 3-member group chat renders each reply's status bar from its speaker's card — the real
conversation page, QtWebEngine offscreen: each reply's status-bar frame holds its member's bar, and the pixels
inside it are that member's colour; the new-group dialog's 「共用变量」 box sets whether the bars show one shared
variable tree or each card's own. The page's screenshot goes to LIYUAN_SHOTS when it is set."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from group_bars_cards import BARS, make_group, replay
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.group import load_group
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.group_members import create_group, new_group_clicked
from liyuan_desktop.ui.window.main_window import MainWindow

FRAMES = """Array.from(document.querySelectorAll('#log .msg.role-assistant')).map(m => {
  const f = m.querySelector('iframe.th-frame'); const r = f ? f.getBoundingClientRect() : null;
  const s = m.querySelector('.speaker');
  return {speaker: s ? s.textContent : '', src: f ? f.srcdoc : '', x: r ? r.x : -1, y: r ? r.y : -1,
          w: r ? r.width : 0, h: r ? r.height : 0};
})"""


def colour(hex_: str) -> tuple[int, int, int]:
    return int(hex_[1:3], 16), int(hex_[3:5], 16), int(hex_[5:7], 16)


def pixel(win, box: dict) -> tuple[int, int, int]:
    """The colour QtWebEngine painted near the frame's bottom-right corner (away from the bar's white text)."""
    img = win.view.grab().toImage()
    ratio = img.width() / max(1, win.view.width())
    px = img.pixelColor(int((box["x"] + box["w"] - 10) * ratio), int((box["y"] + box["h"] - 8) * ratio))
    return px.red(), px.green(), px.blue()


def close(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return max(abs(x - y) for x, y in zip(a, b)) < 24


async def test_each_reply_renders_its_speakers_status_bar(qtbot, tmp_path):
    group = make_group(tmp_path / "cards")
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1100, 1400)
    win.show()
    assert create_group(win, group)
    await wait_for(lambda: win.chat is not None)
    win.chat.model = replay(3)
    for text in ("Hello.", "And you?", "Last one."):
        win.input.setPlainText(text)
        win.send_clicked()
        await wait_for(lambda: win.session.task is not None and win.session.task.done(), timeout=30)
    await wait_for(lambda: win.view.page() is not None)

    async def frames_ready() -> list[dict]:
        got: list[dict] = []

        async def ready() -> bool:
            got[:] = await js(win, FRAMES)
            return len(got) == 3 and all(g["src"] and g["h"] > 20 for g in got)

        for _ in range(300):
            if await ready():
                return got
            await js(win, "1")
        raise AssertionError(f"frames not rendered: {got}")

    got = await frames_ready()
    assert [g["speaker"] for g in got] == ["Aster", "Birch", "Cedar"]
    for g in got:
        who = g["speaker"]
        body = g["src"].rsplit("</head><body>", 1)[-1]  # the card's HTML (the head carries the whole chat)
        assert f'id="bar-{who}"' in body and f"{who}'s bar · {who}" in body
        assert not any(f'id="bar-{o}"' in body for o in BARS.keys() - {who})
        assert f'"names":{{"user":"你","char":"{who}"}}' in g["src"]  # the bar's SillyTavern.name2 and {{char}}
    await js(win, "(window.scrollTo(0, 0), 1)")
    for i, g in enumerate(got):  # the pixels QtWebEngine painted inside each frame are its speaker's bar colour
        want = colour(BARS[g["speaker"]][0])
        await js(win, f"(document.querySelectorAll('#log .msg.role-assistant')[{i}].scrollIntoView(), 1)")
        seen = (0, 0, 0)
        for _ in range(60):  # a frame is built when it scrolls into view: poll until it is painted
            await asyncio.sleep(0.1)
            seen = pixel(win, (await js(win, FRAMES))[i])
            if close(seen, want):
                break
        assert close(seen, want), (g["speaker"], seen)
    await js(win, "(window.scrollTo(0, document.body.scrollHeight), 1)")
    await asyncio.sleep(0.3)
    if os.environ.get("LIYUAN_SHOTS"):
        win.view.grab().save(str(Path(os.environ["LIYUAN_SHOTS"]) / "z31bars-bars-window.png"))


@pytest.mark.parametrize(("lang", "shared"), [("zh", True), ("en", False)])
async def test_group_dialog_sets_shared_variables_and_the_bars_follow(qtbot, tmp_path, lang, shared):
    make_group(tmp_path / "cards", name="Library")  # the three cards in the library
    i18n.set_language(lang)
    try:
        win = MainWindow(S.AppSettings())
        qtbot.addWidget(win)
        win.resize(1100, 1000)
        win.show()
        dlg = new_group_clicked(win)
        dlg.name.setText("Party")
        dlg.tick(["Aster", "Birch"])
        dlg.strategy.setCurrentIndex(1)  # list order
        assert not dlg.shared.isChecked()  # per card unless ticked (SillyTavern-like default off)
        dlg.shared.setChecked(shared)
        if os.environ.get("LIYUAN_SHOTS"):
            dlg.grab().save(str(Path(os.environ["LIYUAN_SHOTS"]) / f"z31bars-dialog-{lang}.png"))
        dlg._accept()
        await wait_for(lambda: win.chat is not None)
        assert load_group("Party").shared_variables is shared
        win.chat.model = replay(2, ['{"patch": {}, "mvu_patch": {"hp": 5}}', '{"patch": {}, "mvu_patch": {}}'])
        for text in ("Hello.", "And you?"):
            win.input.setPlainText(text)
            win.send_clicked()
            await wait_for(lambda: win.session.task is not None and win.session.task.done(), timeout=30)
        bodies: list[str] = []

        async def rendered() -> bool:
            bodies[:] = [g["src"].rsplit("</head><body>", 1)[-1] for g in await js(win, FRAMES)]
            return len(bodies) == 2 and all(bodies)

        for _ in range(300):
            if await rendered():
                break
            await asyncio.sleep(0.05)
        assert "Aster's bar" in bodies[0] and "HP 5" in bodies[0]  # Aster's update, in Aster's bar
        # Birch's bar: the shared tree (Aster's hp) or Birch's own card's hp
        assert "Birch's bar" in bodies[1] and ("HP 5" if shared else "HP 7") in bodies[1]
        for i, who in enumerate(["Aster", "Birch"]):  # painted in each member's own colour
            await js(win, f"(document.querySelectorAll('#log .msg.role-assistant')[{i}].scrollIntoView(), 1)")
            seen = (0, 0, 0)
            for _ in range(60):
                await asyncio.sleep(0.1)
                seen = pixel(win, (await js(win, FRAMES))[i])
                if close(seen, colour(BARS[who][0])):
                    break
            assert close(seen, colour(BARS[who][0])), (who, seen)
        box = win.group_pane.shared_box  # the 成员 tab shows the group's setting and changes it
        assert box.isChecked() is shared and box.text() == i18n.tr("groupui.shared_vars")
        win.tabs.setCurrentWidget(win.group_pane)
        await asyncio.sleep(0.3)
        if os.environ.get("LIYUAN_SHOTS"):
            win.view.grab().save(str(Path(os.environ["LIYUAN_SHOTS"]) / f"z31bars-vars-{lang}.png"))
            win.grab().save(str(Path(os.environ["LIYUAN_SHOTS"]) / f"z31bars-members-{lang}.png"))
        box.click()
        assert load_group("Party").shared_variables is (not shared)
    finally:
        i18n.set_language("zh")
