"""Issue 28, the plan view: the outline as cards — a row per volume, a card per chapter with status, 字数 against the
target and its first beats — following the writing room's data; a double-click opens the chapter."""

from __future__ import annotations

import json
import os
from pathlib import Path

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow

OUTLINE = ("# 第一卷 雨夜\n## 第1章 渡口 {target=20}\n- 林青到渡口\n- 阿檀撑船\n- 雨停\n- 月出\n## 第2章 夜谈\n- 说起旧信\n"
           "# 第二卷 回声\n## 第3章 回声\n")


async def test_the_plan_shows_volumes_and_chapter_cards(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "提纲")
    step = [{"content": "", "tool_calls": [
        {"name": "write", "arguments": json.dumps({"path": "001-渡口.md", "content": "林青到了渡口。"}, ensure_ascii=False)},
        {"name": "outline_edit", "arguments": json.dumps({"chapter": "1", "status": "drafted", "file": "001-渡口.md"},
                                                         ensure_ascii=False)}]}, {"content": "好了。", "tool_calls": []}]
    chat = Chat.create(d, card.load(), ReplayModel(actor=step, scribe=['{"patch": {}}']), mode="agent")
    chat.save_outline(OUTLINE)
    await chat.send("写第一章")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    wp = win.writing_panes
    await wait_for(lambda: wp.data is not None)
    act = next(a for a in win.novel_room.menu.actions() if a.objectName() == "planViewAction")
    act.trigger()
    view = win.novel_room.plan_view["view"]
    qtbot.addWidget(view)
    titles = [c.chapter.title for c in view.cards]
    assert titles == ["第1章 渡口", "第2章 夜谈", "第3章 回声"]
    first = view.cards[0]
    texts = [w.text() for w in first.findChildren(type(view.empty))]
    assert any("初稿 · 6/20 字" in t for t in texts) and any("……还有 1 个情节点" in t for t in texts)
    assert any("未写" in w.text() for w in view.cards[1].findChildren(type(view.empty)))
    if os.environ.get("LIYUAN_SHOTS_DIR"):
        view.grab().save(str(Path(os.environ["LIYUAN_SHOTS_DIR"]) / "plan_view.png"))
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent

    ev = QMouseEvent(QEvent.Type.MouseButtonDblClick, QPointF(5, 5), QPointF(5, 5), Qt.MouseButton.LeftButton,
                     Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    first.mouseDoubleClickEvent(ev)
    assert win.chapter_pane.editor.name == "001-渡口.md"
