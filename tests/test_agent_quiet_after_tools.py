"""Issue 30 §5: a small local model wrote the chapter with its tool calls, then answered with nothing at all (the
HTTP client's ModelError "empty"). The turn's work is saved, so the turn ends as a discussion with no reply and a
notice — not as a failed model call. An empty answer before any tool ran is still an error."""

from __future__ import annotations

from helpers import ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ModelError
from liyuan_desktop.core.messages import render

CARD = ROOT / "cards" / "Qingwu" / "default_Qingwu.json"


class EmptyAfter(ReplayModel):
    """A replay model whose actor answers with nothing (ModelError "empty") on its ``n``-th call."""

    def __init__(self, n: int, **kw):
        super().__init__(**kw)
        self.n, self.calls = n, 0

    async def complete(self, request, on_delta=None):
        if request.purpose in ("actor", "", None):
            self.calls += 1
            if self.calls == self.n:
                raise ModelError("empty", "the server answered with nothing")
        return await super().complete(request, on_delta)


WRITE = {"tool_calls": [{"name": "write", "arguments": {"path": "chapters/001-Dawn.md", "content": "The ferry left."}}]}


async def test_an_empty_answer_after_the_tools_ran_ends_the_turn_quietly(tmp_path):
    chat = Chat.create(tmp_path / "Book", load_card(CARD), EmptyAfter(2, actor=[WRITE], scribe=['{"patch": {}}']),
                       mode="agent")
    r = await chat.send("Write chapter one.")
    assert (chat.dir / "chapters" / "001-Dawn.md").read_text("utf-8") == "The ferry left."
    assert r.outcome == "discussed" and not r.error
    assert any("said nothing after its tool calls" in render(n, "en") for n in r.activity + r.warnings)
    assert r.checkpoint  # the turn's files were checkpointed like any agent turn
    chat.close()


async def test_an_empty_first_answer_is_still_an_error(tmp_path):
    chat = Chat.create(tmp_path / "Book", load_card(CARD), EmptyAfter(1, actor=[], scribe=[]), mode="agent")
    r = await chat.send("Write chapter one.")
    assert r.outcome == "error" and r.error
    chat.close()
