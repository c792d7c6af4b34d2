"""Issue 24 §3: the answered ask (the model's question, its options and what the user chose) is part of the
conversation — the transcript item of the reply of that beat carries it, and it is still there when the chat is
reopened from its file."""

from __future__ import annotations

from test_search import SEAL, make_card, w

from liyuan_desktop.core.beat.events import AskAnswer
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

ASK = {"tool_calls": [{"name": "ask", "arguments": {"question": "走哪条路？", "options": ["左边", "右边"]}}]}


async def test_the_answered_ask_is_kept_with_its_reply_and_after_reopening(tmp_path):
    card, d = make_card()
    folder = d / "对话" / "岔路"
    chat = Chat.create(folder, card, ReplayModel(actor=[ASK, w("你走了右边。"), SEAL, w("雨停了。"), SEAL],
                                                 scribe=["{}"] * 4))

    async def choose(req):
        return AskAnswer(answer=req.options[1], by="user")

    await chat.send("出发", ask=choose)
    await chat.send("继续走")
    items = chat.transcript()
    assert [i["role"] for i in items] == ["opening", "user", "assistant", "user", "assistant"]
    assert items[2]["asks"] == [{"question": "走哪条路？", "options": ["左边", "右边"], "answer": "右边", "by": "user"}]
    assert "asks" not in items[4] and "asks" not in items[1]
    chat.close()
    again = Chat.open(folder, card, ReplayModel(actor=[]))
    assert again.transcript()[2]["asks"][0]["answer"] == "右边"
    assert again.transcript_items(60)[2]["asks"][0]["question"] == "走哪条路？"


async def test_a_stopped_ask_is_kept_with_the_draft(tmp_path):
    card, d = make_card()
    chat = Chat.create(d / "对话" / "停下", card, ReplayModel(actor=[w("半句"), ASK], scribe=["{}"]))

    async def stop(req):
        return AskAnswer(answer=None, by="stop")

    await chat.send("出发", ask=stop)
    last = chat.transcript()[-1]
    assert last["role"] == "draft"
    assert last["asks"] == [{"question": "走哪条路？", "options": ["左边", "右边"], "answer": None, "by": "stop"}]
