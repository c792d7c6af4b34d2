"""Issue 30 §5 in the window: agent chats show 「回复即正文」 under the input; switched on with a chapter name, Send
plays a turn whose reply is written to that chapter; role-play chats do not show the row."""

from __future__ import annotations

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow


async def test_send_writes_the_reply_to_the_chosen_chapter(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "小模型写书")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[], scribe=[]), mode="agent")
    chat.import_chapters([("001-开场.md", "雨。")], message="导入")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: win.chat is not None)
    from liyuan_desktop.ui.writing.reply_chapter import ReplyChapterRow

    row = win.findChild(ReplyChapterRow, "replyChapterRow")
    assert row is not None and row.isVisible()
    assert [row.box.itemText(i) for i in range(row.box.count())] == ["001-开场.md"]
    assert win.session.reply_chapter is None  # off by default
    row.switch.setChecked(True)
    row.box.setEditText("002-第二章.md")
    assert win.session.reply_chapter == "002-第二章.md"
    win.chat.model = ReplayModel(actor=[{"content": "第二章的正文。", "tool_calls": []}], scribe=['{"patch": {}}'])
    win.input.setPlainText("写第二章")
    win.send_clicked()
    await wait_for(lambda: (d / "正文" / "002-第二章.md").exists() and not win.busy, timeout=20)
    assert (d / "正文" / "002-第二章.md").read_text("utf-8") == "第二章的正文。\n"
    await wait_for(lambda: row.box.findText("002-第二章.md") >= 0)  # the list follows the files notice
    win.close_chat()
    assert not row.isVisible() and win.session.reply_chapter is None
