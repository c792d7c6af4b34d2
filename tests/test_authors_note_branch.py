"""Issue 17: the Author's Note is kept per BRANCH. A note is anchored at the newest user message of the branch shown
when it is set (``prompt.authors_note.note_anchor``); a branch's note is the newest one anchored on its path. So
switching branches shows (and sends) that branch's note, a regenerated reply keeps the note, a note set before the
first user message holds for every branch, and reopening the chat gives the same answers."""

from __future__ import annotations

from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.prompt.authors_note import AuthorsNote


def write(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def seal() -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


class Recorder:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, inner):
        self.inner, self.name, self.is_replay = inner, inner.name, inner.is_replay
        self.requests = []

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await self.inner.complete(request, on_delta)


def sent_notes(request) -> list[str]:
    """The depth-0 system injections of a request after the system prompt (where an in-chat note at depth 0 goes)."""
    return [m.content for m in request.messages[1:] if m.role == "system"]


async def test_each_branch_keeps_its_own_note(tmp_path):
    n = 5
    model = Recorder(ReplayModel(actor=[x for i in range(n) for x in (write(f"第{i}拍。"), seal())],
                                 scribe=['{"patch": {}}'] * n))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    assert chat.set_authors_note(AuthorsNote(text="全篇：慢慢写。", depth=0, role="system"))  # before any user message
    await chat.send("你好")
    await chat.send("看看月亮")  # branch A
    leaf_a = chat.tree.leaf_id
    assert chat.authors_note().text == "全篇：慢慢写。"
    assert chat.set_authors_note(AuthorsNote(text="A：写月亮。", depth=0, role="system"))
    assert chat.authors_note().text == "A：写月亮。"

    chat.undo()  # back before 「看看月亮」: branch A's note was set after it, so it is not this branch's
    assert chat.authors_note().text == "全篇：慢慢写。"
    await chat.send("去河边")  # branch B, forked before A's user message
    leaf_b = chat.tree.leaf_id
    assert sent_notes(model.requests[-2]) == ["全篇：慢慢写。"]  # the actor's request of B's beat
    assert chat.set_authors_note(AuthorsNote(text="B：写河水。", depth=0, role="system"))

    chat.select(leaf_a)
    assert chat.authors_note().text == "A：写月亮。"
    chat.select(leaf_b)
    assert chat.authors_note().text == "B：写河水。"

    again = Chat.open(chat.dir, load_card(DEMO_CARD), model)  # kept on the session: same answers after reopening
    assert again.authors_note().text == "B：写河水。"
    again.select(leaf_a)
    assert again.authors_note().text == "A：写月亮。"
    await again.regenerate()  # a new reply under the same user message: the branch's note stays and is sent
    assert again.tree.leaf_id != leaf_a
    assert again.authors_note().text == "A：写月亮。"
    assert sent_notes(model.requests[-2]) == ["A：写月亮。"]
    again.select(leaf_b)
    assert again.authors_note().text == "B：写河水。"
    assert again.set_authors_note(None) and again.authors_note().text == ""  # cleared on B only
    again.select(leaf_a)
    assert again.authors_note().text == "A：写月亮。"
