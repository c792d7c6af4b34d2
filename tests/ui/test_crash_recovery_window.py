"""What a crash left, in the window (issue 15 items 1-3): an unfinished draft offered back, ledger gaps with a
「补记账」 button, unanswered words with resend / edit / drop, and a 0-byte session that opens."""

from __future__ import annotations

import asyncio

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library as library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow


def write(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


def _window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def _open(win: MainWindow, card, d, model) -> Chat:
    chat = Chat.open(d, card.load(), model)
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), card, False
    win._after_open()
    return chat


async def test_ledger_gap_notice_and_repair_button(qtbot):
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "补记账")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[write("甲。"), seal()], scribe=['{"patch": {}}']))
    await chat.send("一")
    path = d / "session.jsonl"
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join(ln for ln in lines if '"type":"rp-state"' not in ln or '"source":"init"' in ln) + "\n",
                    "utf-8")  # killed before the scribe's snapshot
    _open(win, card, d, ReplayModel(actor=[], scribe=['{"patch": {"time": "夜里"}}']))
    assert win.draft_pane.gaps_banner.isVisibleTo(win.draft_pane)
    n = len(win.results)
    win.draft_pane.repair_btn.click()
    await wait_for(lambda: len(win.results) > n)
    assert win.chat.ledger_gaps() == [] and not win.draft_pane.gaps_banner.isVisibleTo(win.draft_pane)
    assert win.chat.current_state().time == "夜里"


async def test_unanswered_words_can_be_dropped_or_edited(qtbot):
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "没回应")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]))
    chat.tree.append("user", text="我先问一句")  # on disk, then killed before the model answered
    chat.tree.commit()
    _open(win, card, d, ReplayModel(actor=[]))
    pane = win.draft_pane
    assert pane.unanswered_banner.isVisibleTo(pane) and "我先问一句" in pane.unanswered_label.text()
    pane.edit_unanswered_btn.click()
    assert win.input.toPlainText() == "我先问一句"
    pane.drop_btn.click()
    assert win.chat.unanswered() is None and not pane.unanswered_banner.isVisibleTo(pane)


async def test_a_zero_byte_session_and_a_crashed_draft_open_in_the_window(qtbot):
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "空文件")
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    (d / "session.jsonl").write_bytes(b"")
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)), quiet=True)
    assert win.chat is not None and any("重建" in w for w in win.chat.load_warnings)

    d2 = library.new_chat_dir(card, "写到一半")
    chat = Chat.create(d2, card.load(), ReplayModel(actor=[]))
    user = chat.tree.append("user", text="你好")
    chat.tree.commit()
    from liyuan_desktop.core.beat.draft import DRAFT_LOG_NAME, Draft, DraftLog

    DraftLog(d2 / DRAFT_LOG_NAME, user.id).record(Draft("灯下半句", 1))  # what the beat had written when killed
    assert win.open_chat(card, library.ChatRef(name=d2.name, dir=str(d2)), quiet=True)
    assert win.draft_pane.banner.isVisibleTo(win.draft_pane)  # 按现稿收笔 / 继续
    assert win.draft_pane.draft.toPlainText() == "灯下半句"
    await asyncio.sleep(0)
