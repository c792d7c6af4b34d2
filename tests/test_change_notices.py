"""Issue 25, change notices: every mutating ``Chat`` command declares what it changes (core/chat/changes.py), the
facade records it in ``last_changes``, and the notice names every area that a fresh reload of the chat shows
differently. A new public method of ``Chat`` that is neither a command with a notice nor a listed query fails."""

from __future__ import annotations

import inspect

from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.changes import COMMAND_CHANGES, NOTHING, Changes
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.view import ChatView
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.llm.replay import ReplayModel

#: Chat's public methods that change nothing a pane shows (opening, closing, stopping, reading)
QUERIES = {"create", "open", "close", "stop", "needs_scribe", "prose_only", "beat_running", "agent_system",
           "checkpoint_turn_text", "last_review", "pending_review", "declared_changes", "chapter_summaries",
           "chapter_turn", "create_group", "card_update", "book_updates"}


def test_every_command_declares_a_notice():
    own = {n for n, v in vars(Chat).items() if not n.startswith("_") and (callable(v) or isinstance(v, classmethod))}
    missing = own - QUERIES - set(COMMAND_CHANGES)
    assert not missing, f"Chat commands without a change notice (core/chat/changes.py notices): {sorted(missing)}"
    assert not (set(COMMAND_CHANGES) & QUERIES)


def test_notice_union_and_frozen():
    a, b = Changes.of("ledger"), Changes(versions=("x",), messages=True)
    assert (a | b).names() == {"ledger", "messages", "versions"}
    try:
        a.ledger = False  # type: ignore[misc]
    except Exception:
        pass
    assert a.ledger


def snapshot(directory) -> dict:
    """Every cheap query area of the chat at ``directory``, read from disk afresh."""
    chat = Chat.open(directory, load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    try:
        e = chat.ledger_entry()
        return {
            "messages": [(i.get("role"), i.get("text")) for i in chat.transcript()],
            "ledger": e.state if e else None,
            "branches": repr(chat.branch_tree()),
            "settings": (repr(chat.authors_note()),),
        }
    finally:
        chat.close()


def write(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def seal() -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


async def test_notices_name_what_a_reload_shows_differently(tmp_path):
    from liyuan_desktop.core.prompt.authors_note import AuthorsNote

    model = ReplayModel(actor=[x for i in range(3) for x in (write(f"第{i}拍。"), seal())], scribe=['{"patch": {}}'] * 3)
    d = tmp_path / "c"
    chat = Chat.create(d, load_card(DEMO_CARD), model)
    assert chat.last_changes == NOTHING

    async def check(name, run):
        before = snapshot(d)
        r = run()
        if inspect.isawaitable(r):
            await r
        after = snapshot(d)
        differ = {k for k in before if before[k] != after[k]}
        notice = chat.last_changes
        assert COMMAND_CHANGES[name].names() <= notice.names()
        assert differ <= notice.names(), f"{name}: reload differs in {differ - notice.names()}, notice {notice}"
        return differ

    await check("send", lambda: chat.send("你好"))
    await check("send", lambda: chat.send("看看月亮"))
    differ = await check("edit_state", lambda: chat.edit_state(WorldState(location="河边")))
    assert chat.last_changes.names() == {"ledger"} and "messages" not in differ  # cheap: names only the ledger
    await check("set_authors_note", lambda: chat.set_authors_note(AuthorsNote(text="慢慢写。", depth=0, role="system")))
    reply = chat.tree.latest("assistant").id
    differ = await check("edit_reply", lambda: chat.edit_reply(reply, "改过的回复。"))
    assert "messages" in differ
    await check("select", lambda: chat.select(reply))
    differ = await check("write_frame_variables", lambda: chat.write_frame_variables(None, {"hp": 3}, scope="chat"))
    assert "messages" not in differ
    await check("set_sampling", lambda: chat.set_sampling(None))
    await check("undo", chat.undo)
    chat.close()


def test_view_has_no_commands():
    """Queries live on ChatView; nothing there is a command (a command belongs on the facade with a notice)."""
    assert not (set(vars(ChatView)) & set(COMMAND_CHANGES))
