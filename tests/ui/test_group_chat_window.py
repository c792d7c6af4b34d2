"""Issue 31 in the window: 对话 → 群聊 → 新建群组… makes a group from library cards and opens its chat; replies
show their speaker's name; the 成员 tab mutes a member, switches the strategy and makes a member speak. Screenshots
(both languages) go to LIYUAN_SHOTS when it is set."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards.library import import_card
from liyuan_desktop.core.group import load_group
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.group_members import new_group_clicked
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def cards(tmp_path: Path) -> None:
    for name, desc in (("Aster", "An archer."), ("Birch", "A herbalist."), ("Cedar", "A smith.")):
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": desc, "first_mes": f"{name} arrives."}}
        (tmp_path / f"{name}.json").write_text(json.dumps(raw), "utf-8")
        import_card(tmp_path / f"{name}.json")


async def beat_done(win) -> None:
    """The beat and every reply it activated (list order: each unmuted member) played."""
    await wait_for(lambda: win.session.task is not None and win.session.task.done() and not win.busy
                   and not win.group_pane.auto.running(), timeout=30)


def shot(win, name: str) -> None:
    folder = os.environ.get("LIYUAN_SHOTS")
    if folder:
        win.grab().save(str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_create_play_mute_and_switch_strategy(qtbot, tmp_path, lang):
    cards(tmp_path)
    i18n.set_language(lang)
    try:
        win = MainWindow(S.AppSettings())
        qtbot.addWidget(win)
        win.resize(1200, 800)
        win.show()
        dlg = new_group_clicked(win)
        dlg.name.setText("Party")
        dlg.tick(["Birch", "Aster", "Cedar"])
        dlg.strategy.setCurrentIndex(1)  # list order
        shot(dlg, f"group-new-{lang}")
        dlg._accept()
        await wait_for(lambda: win.chat is not None)
        assert load_group("Party").members == ["Birch", "Aster", "Cedar"]
        pane = win.group_pane
        assert win.tabs.isTabVisible(win.tabs.indexOf(pane)) and pane.list.count() == 3
        win.chat.model = ReplayModel(actor=[x for i in range(6) for x in (w(f"Words {i}."), SEAL)], scribe=["{}"] * 6)
        win.input.setPlainText("Hello all.")
        win.send_clicked()
        await beat_done(win)
        pane.list.setCurrentRow(1)  # Aster muted: list order is Birch, Cedar
        pane.toggle_mute()
        assert load_group("Party").muted == ["Aster"]
        win.input.setPlainText("Next?")
        win.send_clicked()
        await beat_done(win)
        pane.list.setCurrentRow(1)
        pane.make_speak()  # a muted member can still be made to speak
        await beat_done(win)
        names = await js(win, "Array.from(document.querySelectorAll('#log .speaker')).map(e => e.textContent)")
        assert names == ["Birch", "Aster", "Cedar", "Birch", "Cedar", "Aster"]  # every unmuted member answers
        pics = await js(win, "Array.from(document.querySelectorAll('#log img.avatar[data-speaker]')).map(e => e.src)")
        assert len(set(pics)) == 3 and len(pics) == 6 and all(p.startswith("data:image/png") for p in pics)  # each member's own
        pane.set_strategy("pooled")
        assert load_group("Party").strategy == "pooled" and pane.strategy.currentData() == "pooled"
        label = "静音" if lang == "zh" else "muted"
        assert label in pane.list.item(1).text()
        win.tabs.setCurrentWidget(pane)
        await js(win, "1")
        qtbot.wait(300)
        shot(win, f"group-window-{lang}")
    finally:
        i18n.set_language("zh")
