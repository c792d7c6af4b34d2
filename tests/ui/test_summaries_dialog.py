"""Issue 28 in the window: 章节 → 章节摘要… lists every chapter with its summary (missing and stale ones marked),
saves the author's own and has the model redo the stale ones."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import DEMO_CARD
from uihelpers import wait_for

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.writing.summaries_dialog import SummariesDialog


async def test_summaries_are_listed_edited_and_made(qtbot, tmp_path):
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=["天亮，林青藏起玉佩。"]),
                       mode="agent")
    chat.import_chapters([("001-雨夜.md", "雨。"), ("002-天明.md", "晴。")], message="导入")
    dlg = SummariesDialog(chat)
    qtbot.addWidget(dlg)
    assert [dlg.list.item(i).text() for i in range(2)] == ["001-雨夜.md（无）", "002-天明.md（无）"]
    dlg.text.setPlainText("雨夜里林青捡到玉佩。")
    assert dlg.save_current()
    assert dlg.list.item(0).text() == "001-雨夜.md" and dlg.current() == "001-雨夜.md"
    dlg.make()
    await wait_for(lambda: dlg.task is not None and dlg.task.done())
    assert "做好了 1 章" in dlg.status.text() and dlg.list.item(1).text() == "002-天明.md"
    dlg.list.setCurrentRow(1)
    assert dlg.text.toPlainText() == "天亮，林青藏起玉佩。"
    (chat.dir / "正文" / "001-雨夜.md").write_text("雨停了。", "utf-8")
    dlg.fill()
    assert dlg.list.item(0).text() == "001-雨夜.md（过时）"
    if os.environ.get("LIYUAN_SHOTS_DIR"):
        dlg.grab().save(str(Path(os.environ["LIYUAN_SHOTS_DIR"]) / "summaries_dialog.png"))
    chat.close()
