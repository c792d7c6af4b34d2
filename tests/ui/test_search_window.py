"""Issue 17 "Search" in the window: Ctrl+F's find bar over the conversation (every message of the branch, other
branches on request, jumping loads that page and marks the words) and the search over every chat of every card;
the UI thread never stalls while a 10,000-beat chat is searched.

Async tests run on the qasync loop (tests/ui/conftest.py) and poll with ``await asyncio.sleep``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from uihelpers import LoopStallMeter, js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
HIT = "(function(){var m=document.querySelector('#log .msg.find-hit');return m?[m.dataset.id,Array.from(m.querySelectorAll('mark.find-mark')).map(function(x){return x.textContent})]:null})()"


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def make_window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def open_in(win: MainWindow, card: library.CardRef, d: Path, chat: Chat) -> None:
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), card, False
    win._after_open()


async def until(win, script, pred, timeout=20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        v = await js(win, script)
        if pred(v):
            return v
        assert loop.time() < end, f"last value {v!r}"
        await asyncio.sleep(0.05)


async def test_find_bar_finds_every_message_jumps_and_reaches_other_branches(qtbot):
    actor = []
    for i in range(80):
        actor += [w(f"第{i}句回答，平平无奇。" if i != 3 else "灯下那只 Black Cat 打了个哈欠。"), SEAL]
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "查找")
    chat = Chat.create(d, card.load(), ReplayModel(actor=actor, scribe=['{"patch": {}}'] * 100))
    for i in range(80):
        await chat.send(f"我说第{i}句")
    win = make_window(qtbot)
    open_in(win, card, d, chat)
    await until(win, "document.querySelectorAll('#log .msg').length", lambda n: n and n <= 70)
    bar = win.find_bar
    assert not bar.isVisible()
    win.findChild(type(win.actions()[0]), "findAction").trigger()  # Ctrl+F
    assert bar.isVisible()
    bar.edit.setText("black cat")  # any case; the message is far above the rendered page
    QTest.keyClick(bar.edit, Qt.Key.Key_Return)
    await wait_for(lambda: len(bar.hits) == 1)
    hit = bar.hits[0]
    assert hit.role == "assistant" and hit.beat == 4 and hit.index == 8
    bar.jump(0)
    found = await until(win, HIT, lambda v: v is not None)
    assert found == ["8", ["Black Cat"]]
    assert win.transcript.shown_from <= 8  # the page around the hit was loaded
    qtbot.waitExposed(win)
    # a reply that a regenerate moved to another branch: only with 「所有分支」, and jumping selects its branch
    old = chat.transcript()[-1]["id"]
    win.chat.model = ReplayModel(actor=[w("重来的回答：雨停了。"), SEAL], scribe=['{"patch": {}}'])
    win.regenerate_clicked()
    await wait_for(lambda: not win.busy and chat.transcript()[-1]["id"] != old)
    bar.edit.setText("第79句回答")
    bar.search()
    await wait_for(lambda: not bar.worker.running)
    assert bar.hits == []
    bar.all_branches.setChecked(True)
    await wait_for(lambda: len(bar.hits) == 1)
    assert not bar.hits[0].on_branch
    bar.jump(0)
    await wait_for(lambda: chat.transcript()[-1]["id"] == old)
    found = await until(win, HIT, lambda v: v is not None and v[1] == ["第79句回答"])
    assert found[0] == str(len(chat.transcript()) - 1)
    bar.close_bar()
    assert not bar.isVisible()
    assert await js(win, "document.querySelectorAll('#log mark.find-mark').length") == 0


async def test_find_in_a_10000_beat_chat_never_stalls_the_window(qtbot, tmp_path, record_property):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from long_session import write_chat
    finally:
        sys.path.remove(str(ROOT / "bench"))
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "长对话")
    write_chat(d, 10_000)
    chat = Chat.open(d, card.load(), ReplayModel(actor=[]))
    win = make_window(qtbot)
    open_in(win, card, d, chat)
    await until(win, "document.querySelectorAll('#log .msg').length", lambda n: n > 0, timeout=60)
    bar = win.find_bar
    bar.open_bar()
    with LoopStallMeter() as meter:
        bar.edit.setText("第 1234 拍")  # one user message and one reply, 10,000 beats back from the newest
        await asyncio.sleep(0.25)
        await wait_for(lambda: bar.hits and not bar.worker.running, timeout=120)
    with LoopStallMeter() as every:
        bar.edit.setText("第")  # every message matches: 20,000 hits, the list holds the first LIMIT
        await asyncio.sleep(0.25)
        await wait_for(lambda: not bar.worker.running and len(bar.hits) > 100, timeout=120)
    hits = [h for h in chat.search_messages("第 1234 拍")]
    assert len(hits) == 2 and {h.role for h in hits} == {"user", "assistant"}
    record_property("find_10000_worst_stall_ms", round(meter.worst_ms))
    record_property("find_10000_every_message_worst_stall_ms", round(every.worst_ms))
    print(f"\nfind in a 10,000-beat chat: longest UI stall {meter.worst_ms:.0f} ms "
          f"(every message matching: {every.worst_ms:.0f} ms)")
    assert meter.worst_ms < 1000 and every.worst_ms < 1000  # generous: the figure to report is far lower


async def test_search_all_chats_lists_hits_and_opens_one_at_the_message(qtbot):
    card = library.ensure_demo_card()
    chats = []
    for name, words in (("甲", "码头的灯还亮着。"), ("乙", "灯笼被风吹灭了。")):
        d = library.new_chat_dir(card, name)
        chat = Chat.create(d, card.load(), ReplayModel(actor=[w(words), SEAL], scribe=['{"patch": {}}']))
        await chat.send(f"我看向{name}处")
        chats.append((d, chat))
    win = make_window(qtbot)
    win.findChild(type(win.actions()[0]), "searchAllAction").trigger()
    dlg = win.search_dialog
    assert dlg.isVisible()
    dlg.edit.setText("灯")
    dlg.search()
    await wait_for(lambda: not dlg.worker.running and dlg.go.isEnabled())
    assert sorted(h.chat for h in dlg.hits) == ["乙", "甲"]
    assert dlg.results.topLevelItemCount() == 2
    row = dlg.results.topLevelItem(0)
    assert row.text(0) == card.name and "灯" in row.text(2) and row.text(3)
    k = [h.chat for h in dlg.hits].index("乙")
    assert dlg.open_hit(k)
    assert win.chat_ref is not None and win.chat_ref.name == "乙"
    found = await until(win, HIT, lambda v: v is not None)
    assert found[1] == ["灯"]
    # a bad pattern says so and lists nothing
    dlg.regex.setChecked(True)
    dlg.edit.setText("(")
    dlg.search()
    await wait_for(lambda: not dlg.worker.running and dlg.go.isEnabled())
    assert dlg.hits == [] and dlg.status.text()
