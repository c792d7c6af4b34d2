"""Issue 28, rewrite a selection: the model gets the passage with its surroundings and the author's instruction, in
the chat's language; the proposal replaces exactly that passage when accepted (a user checkpoint, undone like any
edit), the rest of the chapter byte-identical; a chapter edited meanwhile is not overwritten."""

from __future__ import annotations

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.rewrite import clean_answer
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.text import utf16_len

CHAPTER = "第一段：雨下了一夜。\r\n林青推门进去，看见😀阿檀坐在灯下。\r\n第三段：天亮了。\r\n"


class Recorder(ReplayModel):
    """The replay model, keeping each request (the test reads what was sent)."""

    def __init__(self, answers: list[str]):
        super().__init__(actor=[], scribe=answers)
        self.requests: list = []

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await super().complete(request, on_delta)


def _chat(tmp_path, answers):
    model = Recorder(answers)
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), model, mode="agent")
    chat.import_chapters([("001-雨夜.md", CHAPTER)], message="导入")
    return chat, model


def _span(text: str, part: str) -> tuple[int, int]:
    i = text.index(part)
    return utf16_len(text[:i]), utf16_len(text[:i + len(part)])


async def test_a_passage_is_rewritten_and_only_it(tmp_path):
    chat, model = _chat(tmp_path, ["```\n林青推开门。灯下，阿檀抬起头。\n```"])
    start, end = _span(CHAPTER, "林青推门进去，看见😀阿檀坐在灯下。")
    p = await chat.propose_rewrite("001-雨夜.md", start, end, "condense", instruction="更冷一点")
    assert p.old == "林青推门进去，看见😀阿檀坐在灯下。" and p.new == "林青推开门。灯下，阿檀抬起头。"
    sys_msg, user = model.requests[0].messages
    assert "缩写" in sys_msg.content and "【要处理的一段】\n林青推门进去" in user.content
    assert "第一段：雨下了一夜。" in user.content and "第三段" in user.content and "更冷一点" in user.content
    assert chat.last_changes.names() == set()  # a proposal changes nothing
    before = len(chat.history_log.checkpoints())
    cid = chat.apply_rewrite(p)
    text = (chat.dir / "正文" / "001-雨夜.md").read_bytes().decode("utf-8")
    assert text == CHAPTER.replace(p.old, p.new)  # CRLF and the rest untouched
    assert len(chat.history_log.checkpoints()) == before + 1 and cid
    assert chat.history_log.latest().message == "改写 001-雨夜.md"
    assert {"files", "checkpoints"} <= chat.last_changes.names()
    chat.close()


async def test_a_changed_chapter_is_not_overwritten_and_bad_input_is_refused(tmp_path):
    chat, _ = _chat(tmp_path, ["新的一段：改好了。", ""])
    start, end = _span(CHAPTER, "第三段：天亮了。")
    p = await chat.propose_rewrite("001-雨夜.md", start, end)
    assert p.new == "改好了。"  # the label the model added is taken off
    path = chat.dir / "正文" / "001-雨夜.md"
    path.write_text("作者刚改过。\n" + CHAPTER, "utf-8")
    with pytest.raises(ToolError) as e:
        chat.apply_rewrite(p)
    assert e.value.code == "conflict" and path.read_text("utf-8").startswith("作者刚改过。")
    with pytest.raises(ToolError) as e:
        await chat.propose_rewrite("001-雨夜.md", 3, 3)
    assert e.value.code == "bad_args"
    with pytest.raises(ToolError):
        await chat.propose_rewrite("001-雨夜.md", 0, 10, "poem")
    with pytest.raises(ToolError) as e:
        await chat.propose_rewrite("001-雨夜.md", 0, 5)  # the model answers nothing
    assert e.value.code == "model_error"
    with pytest.raises(ToolError):
        await chat.propose_rewrite("没有.md", 0, 5)
    chat.close()


def test_clean_answer():
    assert clean_answer("```text\n甲\n乙\n```") == "甲\n乙"
    assert clean_answer("Rewritten: He left.") == "He left."
    assert clean_answer("  正文  ") == "正文"
