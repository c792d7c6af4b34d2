"""Issue 28: the context record of the agent turn that wrote a chapter is one click from the chapter (章节 → 这一章的
上下文记录…): the inspector shows that turn's calls as sent, the state block included; a renamed chapter still finds
its turn; an imported chapter says it has none."""

from __future__ import annotations

import json

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow
from liyuan_desktop.ui.writing.chapter_context import open_record


def _turn(i: int) -> list[dict]:
    return [{"content": "", "tool_calls": [{"name": "write", "arguments": json.dumps(
        {"path": f"00{i}-第{i}章.md", "content": f"第{i}章的正文。"}, ensure_ascii=False)}]},
        {"content": f"第{i}章好了。", "tool_calls": []}]


async def test_a_chapter_opens_the_turn_that_wrote_it(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "上下文")
    chat = Chat.create(d, card.load(), ReplayModel(actor=_turn(1) + _turn(2), scribe=['{"patch": {}}'] * 2),
                       mode="agent")
    await chat.send("写第一章")
    await chat.send("写第二章")
    chat.import_chapters([("003-导入.md", "导入的。")], message="导入")
    assert chat.chapter_turn("001-第1章.md") == chat.tree.path_to()[[e.type for e in chat.tree.path_to()].index("user")].id
    chat.rename_chapters({"002-第2章.md": "002-天明.md"})
    assert chat.chapter_turn("002-天明.md") is not None and chat.chapter_turn("003-导入.md") is None
    chat.close()

    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    wp = win.writing_panes
    await wait_for(lambda: wp.data is not None)
    assert any(a.objectName() == "chapterContextAction" for a in win.chapter_pane.list.actions())
    dlg = open_record(win, win.chat, "002-天明.md")
    assert dlg is not None
    qtbot.addWidget(dlg)
    text = json.dumps(dlg.calls, ensure_ascii=False) if hasattr(dlg, "calls") else ""
    assert "写第二章" in text and "【正文目录】" in text
    assert open_record(win, win.chat, "003-导入.md") is None
    assert "没有上下文记录" in win.statusBar().currentMessage()
