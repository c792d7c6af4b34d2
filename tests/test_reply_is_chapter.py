"""Issue 30 §5, agent play with a model that only talks: with ``chapter`` the reply *is* that chapter — no tools are
offered, the instruction follows the user's words (the system prompt unchanged), the answer is written to the file
(created or replaced) before the checkpoint, and the scribe reads it as any chapter; the CLI's ``--chapter`` too."""

from __future__ import annotations

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel


class Recorder(ReplayModel):
    def __init__(self, actor, scribe):
        super().__init__(actor=actor, scribe=scribe)
        self.requests: list = []

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await super().complete(request, on_delta)


async def test_the_reply_is_written_as_the_chapter(tmp_path):
    model = Recorder([{"content": "雨下了一夜。林青推门进去。", "tool_calls": []},
                      {"content": "第二遍：天亮了。", "tool_calls": []}], ['{"patch": {"time": "雨夜"}}', '{"patch": {}}'])
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), model, mode="agent")
    system_before = chat.agent.system()
    res = await chat.send("写第一章：雨夜", chapter=" 001-雨夜 ")
    assert res.error is None and res.outcome == "discussed"
    first = model.requests[0]
    assert not first.tools  # no tools this turn
    assert first.messages[0].content == system_before  # the cached prefix is untouched
    assert "【本轮的回复就是章节「001-雨夜.md」的完整正文】" in first.messages[-1].content
    path = chat.dir / "正文" / "001-雨夜.md"
    assert path.read_text("utf-8") == "雨下了一夜。林青推门进去。\n"
    cp = chat.history_log.latest()
    assert "001-雨夜.md" in cp.changed.added and cp.author == "agent"
    assert chat.current_state().time == "雨夜"  # the scribe read the chapter
    assert any("回复已写入 001-雨夜.md" in a for a in res.activity)
    await chat.send("重写", chapter="001-雨夜.md")
    assert path.read_text("utf-8") == "第二遍：天亮了。\n"
    with pytest.raises(ToolError):
        await chat.send("写", chapter="../逃出去.md")
    chat.close()


async def test_not_for_role_play(tmp_path):
    chat = Chat.create(tmp_path / "局", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    with pytest.raises(ValueError):
        await chat.send("你好", chapter="001.md")
    chat.close()
