"""Issue 18 §2 in the window: 对话 → 纯文字演出（不用工具） switches the open chat between tool play and prose-only
play (kept on the chat), is disabled without a chat, says what prose-only play cannot do, and the prompt inspector's
list of calls names a prose-only beat."""

from __future__ import annotations

import os

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library as library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.roleplay.inspector import call_title
from liyuan_desktop.ui.window.main_window import MainWindow


def test_prose_only_switch_in_the_chat_menu(qtbot):
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    act = win.prose_action
    menu = next(a.menu() for a in win.menuBar().actions() if a.menu() is not None and act in a.menu().actions())
    menu.aboutToShow.emit()
    assert not act.isEnabled()  # no chat yet
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "纯文字")
    chat = Chat.create(d, ref.load(), ReplayModel(actor=[{"content": "她抬头。"}], scribe=['{"patch": {}}']))
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    menu.aboutToShow.emit()
    assert act.isEnabled() and not act.isChecked()
    assert "不能原位修改上一拍" in act.toolTip()
    act.trigger()  # on
    assert act.isChecked() and chat.prose_only() == {**chat.prose_only(), "on": True, "switch": True}
    assert "不能原位修改上一拍" in win.statusBar().currentMessage()
    if os.environ.get("LIYUAN_SHOTS"):
        menu.popup(win.mapToGlobal(win.rect().center()))
        qtbot.wait(300)
        menu.grab().save("/tmp/shots/w2_beat/chat_menu_prose_toggle.png")
        menu.hide()
    # reopening keeps it
    again = Chat.open(d, ref.load(), ReplayModel(actor=[]))
    assert again.prose_only()["switch"] is True
    act.trigger()  # off: back to following the provider (a replay has none: tool play)
    assert not chat.prose_only()["on"] and chat.prose_only()["switch"] is None
    assert "工具演出" in win.statusBar().currentMessage()


def test_inspector_call_title_names_prose_only_and_cut_beats():
    call = {"round": 1, "reply": {"tool_calls": []}, "usage": {"prompt_tokens": 900}, "play_mode": "prose"}
    assert "纯文字演出" in call_title(call)
    assert "纯文字演出" not in call_title({**call, "play_mode": "tools"})
    assert "截断" in call_title({**call, "cut": "length"})
    assert "纯文字演出" not in call_title({**call, "purpose": "scribe"})
