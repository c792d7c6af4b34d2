"""Issue 24 §3: the answered ask is kept in the conversation view — the model's question, its options with the one
the user clicked marked, above the reply of that beat — not only in the draft pane's activity list, and it is
shown again when the chat is reopened.

Async tests run on the qasync loop (tests/ui/conftest.py) and poll with ``await asyncio.sleep``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from test_panes_follow_chat import SCRIBE, SEAL, until, w
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow

ASK = {"tool_calls": [{"name": "ask", "arguments": {"question": "走哪条路？", "options": ["左边的小巷", "右边的石桥"]}}]}
RECORD = ("(function(){var r=document.querySelector('#log [data-role=assistant] .ask-record');if(!r)return null;"
          "var c=r.querySelector('.ask-option.chosen');return [r.querySelector('.ask-text').textContent,"
          "c?c.textContent:null,r.querySelectorAll('.ask-option').length,"
          "!!r.closest('.msg').querySelector('.asks + .body')]})()")


async def test_the_answered_ask_shows_in_the_conversation_and_after_reopening(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "岔路")
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1200, 760)
    win.show()
    await wait_for(win.view.is_ready)
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    win.chat.model = ReplayModel(actor=[ASK, w("你踏上了右边的石桥，桥下的水声很急。"), SEAL], scribe=[SCRIBE])
    win.input.setPlainText("我往前走")
    win.send_clicked()
    await wait_for(lambda: win.ask_dialog.isVisible() and len(win.ask_dialog.option_buttons) == 2)
    win.ask_dialog.option_buttons[1].click()  # 右边的石桥
    await wait_for(lambda: bool(win.results) and not win.busy)
    found = await until(win, RECORD, lambda v: v is not None)
    assert found == ["走哪条路？", "✓ 右边的石桥", 2, True]  # above the reply's text
    shots = os.environ.get("LIYUAN_SHOTS")
    if shots:
        await wait_for(lambda: not win.view.covered())
        await asyncio.sleep(1.0)  # the offscreen compositor's frame catches up
        win.grab().save(str(Path(shots) / "ask-window.png"))
        win.view.grab().save(str(Path(shots) / "ask-in-conversation.png"))  # the page (a window grab leaves it out)
        win.view.set_theme("dark")
        await asyncio.sleep(1.0)
        win.view.grab().save(str(Path(shots) / "ask-in-conversation-dark.png"))
        win.view.set_theme("light")
    # reopened from its file: still there
    win.close_chat()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    assert await until(win, RECORD, lambda v: v is not None) == found
