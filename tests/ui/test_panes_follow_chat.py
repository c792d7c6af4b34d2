"""Issue 24 §3 "what the window shows must be true": the panes follow the chat shown, never an older one — on the
real main window (a temp data folder, replay models, offscreen).

* deleting the open chat empties the draft pane (and the ledger, the find bar);
* editing a reply keeps the draft pane's beat (its activity) and shows the edited text;
* renaming a chat keeps the card list's selection on that chat;
* in agent mode 对话 → 撤销本轮 is off exactly when the button is (one source);
* the Ctrl+F bar's count is cleared when another chat is shown;
* the welcome page gives way once a model is set up;
* switching chats never shows the old chat's messages beside the new chat's panes.

Async tests run on the qasync loop (tests/ui/conftest.py) and poll with ``await asyncio.sleep``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window import manage as ui_manage
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
SCRIBE = '{"patch": {}}'
REPLIES = "Array.from(document.querySelectorAll('#log [data-role=assistant] .body')).map(e => e.textContent.trim())"


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def make_window(qtbot, settings=None) -> MainWindow:
    win = MainWindow(settings or S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


async def until(win, script, pred, timeout=20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        v = await js(win, script)
        if pred(v):
            return v
        assert loop.time() < end, f"last value {v!r}"
        await asyncio.sleep(0.05)


async def played_chat(name: str, reply: str, mode: str = "roleplay") -> tuple[library.CardRef, Path]:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, name)
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w(reply), SEAL], scribe=[SCRIBE]), mode=mode)
    await chat.send(f"{name}：你好")
    chat.close()
    return card, d


def open_in(win: MainWindow, card: library.CardRef, d: Path) -> None:
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    win.chat.model = ReplayModel(actor=[w("又一句。"), SEAL] * 3, scribe=[SCRIBE] * 3)


async def send(win: MainWindow, text: str) -> None:
    n = len(win.results)
    win.input.setPlainText(text)
    win.send_clicked()
    await wait_for(lambda: len(win.results) > n and not win.busy)


def chat_row(win: MainWindow, folder: Path):
    for i in range(win.tree.topLevelItemCount()):
        top = win.tree.topLevelItem(i)
        for k in range(top.childCount()):
            data = top.child(k).data(0, Qt.ItemDataRole.UserRole)
            if Path(data[2].dir) == Path(folder):
                return top.child(k)
    return None


async def test_deleting_the_open_chat_empties_the_draft_pane(qtbot, monkeypatch):
    card, d = await played_chat("将删", "灯下无人。")
    win = make_window(qtbot)
    open_in(win, card, d)
    await send(win, "再说一句")
    assert win.draft_pane.draft.toPlainText().strip() == "又一句。"
    assert win.draft_pane.activity.count() > 0
    win.find_bar.open_bar()
    win.find_bar.edit.setText("一句")
    win.find_bar.search()
    await wait_for(lambda: bool(win.find_bar.hits))
    monkeypatch.setattr(ui_manage, "ask_yes", lambda *a: True)
    assert win.manager.delete_chat(win.chat_ref) is not None
    assert win.chat is None
    assert win.draft_pane.draft.toPlainText() == ""
    assert win.draft_pane.activity.count() == 0 and win.draft_pane.status.text() == "—"
    assert win.find_bar.hits == [] and win.find_bar.count.text() == ""
    assert not win.send_btn.isEnabled() and not win.undo_btn.isEnabled()


async def test_editing_a_reply_keeps_the_draft_pane_and_shows_the_new_text(qtbot):
    card, d = await played_chat("改回复", "灯下无人。")
    win = make_window(qtbot)
    open_in(win, card, d)
    await send(win, "再说一句")
    lines = [win.draft_pane.activity.item(i).text() for i in range(win.draft_pane.activity.count())]
    assert lines
    reply = win.chat.transcript()[-1]["id"]
    win.reply_actions.edit_submitted(reply, "又一句，改过了。")
    await until(win, REPLIES, lambda v: v and v[-1] == "又一句，改过了。")
    assert win.draft_pane.draft.toPlainText().strip() == "又一句，改过了。"
    kept = [win.draft_pane.activity.item(i).text() for i in range(win.draft_pane.activity.count())]
    assert kept[:len(lines)] == lines  # the beat's activity is still there


async def test_renaming_a_chat_keeps_the_list_on_it(qtbot, monkeypatch):
    other = library.import_card(str(Path(library.ensure_demo_card().dir) / "card.json"))  # a second card, listed first?
    card, d = await played_chat("旧名", "灯下无人。")
    await played_chat("另一段", "风起。")
    win = make_window(qtbot)
    open_in(win, card, d)
    win.refresh_tree()
    row = chat_row(win, d)
    win.tree.setCurrentItem(row)
    monkeypatch.setattr(ui_manage, "ask_text", lambda *a: "新名")
    new = win.manager.rename_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    assert new is not None
    cur = win.tree.currentItem()
    assert cur is not None
    data = cur.data(0, Qt.ItemDataRole.UserRole)
    assert data[0] == "chat" and Path(data[2].dir) == Path(new), (cur.text(0), other.name)


async def test_agent_undo_menu_item_follows_the_button(qtbot):
    card, d = await played_chat("长篇", "第一章。", mode="agent")
    win = make_window(qtbot)
    open_in(win, card, d)
    undo = next(a for a in win.findChildren(QAction) if a.text() == win.undo_btn.text())
    assert not win.undo_btn.isEnabled()
    assert not undo.isEnabled() and undo.toolTip() == win.undo_btn.toolTip()
    card2, d2 = await played_chat("扮演", "灯下无人。")
    open_in(win, card2, d2)
    assert win.undo_btn.isEnabled() and undo.isEnabled()


async def test_find_bar_count_is_cleared_when_another_chat_is_shown(qtbot):
    card, d = await played_chat("甲处", "甲处的灯。")
    _, d2 = await played_chat("乙处", "没有那个字。")
    win = make_window(qtbot)
    open_in(win, card, d)
    bar = win.find_bar
    bar.open_bar()
    bar.edit.setText("甲处的灯")
    bar.search()
    await wait_for(lambda: len(bar.hits) == 1)
    assert bar.count.text() == "0/1"
    # another chat chosen in the card list (opened off the UI thread, as a user does it)
    win.refresh_tree()
    win._tree_activated(chat_row(win, d2), 0)
    await wait_for(lambda: win.chat_ref is not None and Path(win.chat_ref.dir) == d2)
    assert bar.count.text() != "0/1" and bar.hits == []
    await wait_for(lambda: not bar.worker.running and bar.count.text() == "没有找到")
    bar.jump(0)  # nothing to jump to
    assert bar.count.text() == "没有找到"


async def test_the_welcome_page_gives_way_once_a_model_is_set_up(qtbot):
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    win.start()
    assert await until(win, "document.body.classList.contains('mode-welcome')", lambda v: v is True)
    prov = S.ProviderSettings(name="loop", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None)
    settings = S.AppSettings(providers=[prov], active_provider="loop")
    win.apply_settings(settings)
    await until(win, "document.body.classList.contains('mode-welcome')", lambda v: v is False)
    assert win.view.mode() == "chat"


def distinct_colours(img, step: int = 7) -> int:
    seen = set()
    for y in range(0, img.height(), step):
        for x in range(0, img.width(), step):
            seen.add(img.pixel(x, y))
    return len(seen)


async def test_a_chat_switch_never_shows_the_old_messages_beside_the_new_panes(qtbot):
    card, d = await played_chat("旧对话", "旧对话的回答，很长很长的一段文字。" * 8)
    _, d2 = await played_chat("新对话", "新对话的回答。")
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    open_in(win, card, d)
    await until(win, REPLIES, lambda v: v and v[-1].startswith("旧对话的回答"))
    await asyncio.sleep(0.3)
    assert distinct_colours(win.view.grab().toImage()) > 2  # the old chat's text is on screen
    open_in(win, card, d2)
    # the new chat's panes are up now (same turn): the conversation must not show the old text meanwhile
    assert "新对话" in win.status_label.text()
    assert distinct_colours(win.view.grab().toImage()) <= 2
    await until(win, REPLIES, lambda v: v and v[-1] == "新对话的回答。")
    await wait_for(lambda: distinct_colours(win.view.grab().toImage()) > 2, timeout=10)


async def test_swiping_between_attempts_shows_each_attempts_beat_even_after_an_ask(qtbot):
    from liyuan_desktop.core.beat.events import AskAnswer

    ask = {"tool_calls": [{"name": "ask", "arguments": {"question": "走哪条路？", "options": ["左", "右"]}}]}
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "翻页")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[ask, w("第一稿。"), SEAL, w("第二稿。"), SEAL],
                                                   scribe=[SCRIBE] * 2))

    async def left(req):
        return AskAnswer(answer=req.options[0], by="user")

    await chat.send("出发", ask=left)  # the first attempt's beat hangs below its ask entry
    await chat.regenerate()
    chat.close()
    win = make_window(qtbot)
    open_in(win, card, d)
    assert win.draft_pane.draft.toPlainText().strip() == "第二稿。"
    reply = win.chat.transcript()[-1]["id"]
    win.swipe_clicked(reply, -1)
    assert win.chat.transcript()[-1]["text"] == "第一稿。"
    assert win.draft_pane.draft.toPlainText().strip() == "第一稿。"
