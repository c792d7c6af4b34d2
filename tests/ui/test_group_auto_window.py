"""Issue 31 in the window: a message naming two members makes both reply, each a message of its own with its name
and avatar; the strategy switched and a member muted in the 成员 tab; auto-mode (check box, delay, limit) plays
exactly its limit and stops, Stop ends a run, typing in the input ends a run. Screenshots in both languages go to
/tmp/z31auto-*.png; the English window shows no CJK outside the user's own content."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_english_everywhere import chrome_cjk
from test_english_tour import NOT_CHROME, widget_texts
from test_group_chat_window import cards, w
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.group import load_group
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import home
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.group_members import new_group_clicked
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


async def settled(win) -> None:
    """Every beat played: no command running, no reply waiting, no auto-mode run going on."""
    await wait_for(lambda: win.session.task is not None and win.session.task.done() and not win.busy
                   and not win.group_pane.auto.running(), timeout=60)


async def names(win) -> list[str]:
    return await js(win, "Array.from(document.querySelectorAll('#log .speaker')).map(e => e.textContent)")


async def open_group(qtbot, tmp_path) -> MainWindow:
    cards(tmp_path)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1280, 820)
    win.show()
    dlg = new_group_clicked(win)
    dlg.name.setText("Party")
    dlg.tick(["Aster", "Birch", "Cedar"])  # natural order (the default)
    dlg._accept()
    await wait_for(lambda: win.chat is not None)
    win.chat.model = ReplayModel(actor=[x for i in range(20) for x in (w(f"Line {i}."), SEAL)], scribe=["{}"] * 20)
    return win


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_several_replies_strategies_mute_auto_mode_and_stop(qtbot, tmp_path, lang):
    i18n.set_language(lang)
    try:
        win = await open_group(qtbot, tmp_path)
        pane, auto = win.group_pane, win.group_pane.auto
        assert win.tabs.isTabVisible(win.tabs.indexOf(pane)) and not pane.auto_row.stop.isVisible()
        # natural order: both members named reply, in the order named, each a message of its own
        win.input.setPlainText("Cedar and Aster, sit down.")
        win.send_clicked()
        await settled(win)
        got = await names(win)
        assert got[:2] == ["Cedar", "Aster"]
        users = await js(win, "Array.from(document.querySelectorAll('#log .msg.user, #log [data-role=user]'))"
                              ".map(e => e.textContent)")
        assert not any("轮到" in u for u in users)  # the follow-up beats' nudges are not shown
        pics = await js(win, "Array.from(document.querySelectorAll('#log img.avatar[data-speaker]')).map(e => e.src)")
        assert len(pics) == len(got) and len(set(pics[:2])) == 2  # each reply with its speaker's avatar
        # list order: every unmuted member answers; Birch muted
        pane.strategy.setCurrentIndex(1)
        pane.strategy.activated.emit(1)
        assert load_group("Party").strategy == "list"
        pane.list.setCurrentRow(1)
        pane.toggle_mute()
        assert load_group("Party").muted == ["Birch"]
        before = len(await names(win))
        win.input.setPlainText("Next, everyone.")
        win.send_clicked()
        await settled(win)
        after = await names(win)
        last = after[before - 1]  # list order goes on after the last speaker, every unmuted member once
        assert after[before:] == (["Aster", "Cedar"] if last == "Cedar" else ["Cedar", "Aster"])
        pane.auto_row.self_box.setChecked(True)  # allow self responses: saved in the group
        assert load_group("Party").allow_self_responses
        pane.auto_row.self_box.setChecked(False)
        assert not load_group("Party").allow_self_responses
        # auto-mode: no delay, limit 3 → exactly three turns, then it stops by itself
        pane.auto_row.delay.setValue(0)
        pane.auto_row.delay.editingFinished.emit()
        pane.auto_row.limit.setValue(3)
        pane.auto_row.limit.editingFinished.emit()
        before = len(await names(win))
        pane.auto_row.box.setChecked(True)  # ticked while idle: a run starts at once
        g = load_group("Party")
        assert g.auto_mode and g.auto_delay == 0 and g.auto_limit == 3
        assert pane.auto_row.stop.isVisibleTo(pane)
        await settled(win)
        assert len(await names(win)) - before == 3 and auto.last_end.key == "group.auto.done"
        assert not pane.auto_row.stop.isVisibleTo(pane)
        # a message with auto-mode on: the replies, then a run; Stop ends it before the limit
        pane.auto_row.delay.setValue(2)
        pane.auto_row.delay.editingFinished.emit()
        before = len(await names(win))
        win.input.setPlainText("Talk among yourselves.")
        win.send_clicked()
        await wait_for(lambda: auto.run is not None and auto.run.played >= 1, timeout=30)
        win.tabs.setCurrentWidget(pane)
        await wait_for(lambda: not win.busy)
        qtbot.wait(200)
        shot_path = f"/tmp/z31auto-running-{lang}.png"
        win.grab().save(shot_path)
        if lang == "en":
            bad = chrome_cjk(widget_texts(win), [str(home()), "群聊", *NOT_CHROME])  # the chat's folder name is content
            assert not bad, bad
        pane.auto_row.stop.click()
        await settled(win)
        played = len(await names(win)) - before
        assert 2 <= played < 2 + 3 and auto.last_end.key == "group.auto.stopped"
        # typing in the input box ends a run too
        pane.auto_row.delay.setValue(30)
        pane.auto_row.delay.editingFinished.emit()
        auto.start_run()
        await wait_for(lambda: auto.run is not None and auto.run.played >= 1, timeout=30)
        await wait_for(lambda: not win.busy)
        win.input.setPlainText("Wait —")
        assert auto.run is None and not auto.running() and auto.last_end.key == "group.auto.stopped"
        win.input.clear()
        await settled(win)
        # 让TA发言 with an empty input (auto-mode off): the member speaks, no bubble of the user's
        pane.auto_row.box.setChecked(False)
        assert not load_group("Party").auto_mode
        user_bubbles = "document.querySelectorAll('#log [data-role=user]').length"
        bubbles, before = await js(win, user_bubbles), len(await names(win))
        pane.list.setCurrentRow(1)
        pane.make_speak()
        await settled(win)
        assert (await names(win))[before:] == ["Birch"] and await js(win, user_bubbles) == bubbles
        win.tabs.setCurrentWidget(pane)
        qtbot.wait(200)
        win.grab().save(f"/tmp/z31auto-members-{lang}.png")
        assert Path(shot_path).is_file()
    finally:
        i18n.set_language("zh")
