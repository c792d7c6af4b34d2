"""Issue 17 "Messages and chats": edit a reply (a new version, ledger carried, next prompt uses it), Continue the
last sealed reply (its final is the draft of a continuation beat; the scribe reads only the addition), Impersonate
(one completion into the input box, nothing saved) and the Author's Note (kept on the tree, placed at depth or in
the beat's data blocks, never in the system prompt) — engine and CLI."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ChatRequest
from liyuan_desktop.core.prompt.authors_note import AuthorsNote, note_due
from liyuan_desktop.core.session.tree import SessionTree


def write(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def append(text: str, version: int) -> dict:
    return {"tool_calls": [{"name": "draft_append", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


class Recorder:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, inner):
        self.inner, self.name, self.is_replay = inner, inner.name, inner.is_replay
        self.requests: list[ChatRequest] = []

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await self.inner.complete(request, on_delta)


async def two_beats(tmp_path, more_actor=(), more_scribe=()):
    model = Recorder(ReplayModel(actor=[write("第一拍。"), seal(), write("月色很好。"), seal(), *more_actor],
                                 scribe=['{"patch": {"flags": {"拍": "一"}}}', '{"patch": {"flags": {"拍": "二"}}}',
                                         *more_scribe]))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    await chat.send("你好")
    await chat.send("看看月亮")
    return chat, model


# -- edit a reply -------------------------------------------------------------------------------------------------
async def test_edit_reply_is_a_new_version_with_the_ledger_kept(tmp_path):
    chat, model = await two_beats(tmp_path, more_actor=[write("好。"), seal()], more_scribe=['{"patch": {}}'])
    old = chat.last_reply_id()
    new = chat.edit_reply(old, "月色很好，风也很轻。")
    assert new != old and chat.tree.get(new).text == "月色很好，风也很轻。"
    items = chat.transcript()
    assert items[-1]["id"] == new and items[-1]["text"] == "月色很好，风也很轻。" and items[-1]["swipe"] == [2, 2]
    assert chat.current_state().flags == {"拍": "二"}  # not recomputed: carried over as it was
    assert chat.ledger_gaps() == []  # the carried snapshot covers the edited reply
    chat.swipe(new, -1)  # the old text is one swipe away
    assert chat.transcript()[-1]["text"] == "月色很好。"
    chat.swipe(old, +1)
    r = await chat.send("走吧")  # the next prompt sends the edited text
    sent = [m.content for m in model.requests[-2].messages if m.role == "assistant"]
    assert "月色很好，风也很轻。" in sent and "月色很好。" not in sent
    assert r.final == "好。"
    reopened = SessionTree.open(chat.tree.path)
    assert [e.text for e in reopened.path_to() if e.type == "assistant"] == ["第一拍。", "月色很好，风也很轻。", "好。"]


async def test_edit_reply_refuses_user_messages_and_empty_text(tmp_path):
    chat, _ = await two_beats(tmp_path)
    user = chat.tree.latest("user")
    import pytest

    with pytest.raises(ValueError):
        chat.edit_reply(user.id, "改")
    with pytest.raises(ValueError):
        chat.edit_reply(chat.last_reply_id(), "   ")


# -- continue -----------------------------------------------------------------------------------------------------
async def test_continue_reply_appends_and_the_scribe_reads_only_the_addition(tmp_path):
    chat, model = await two_beats(tmp_path, more_actor=[append("云散开了。", 1), seal(2)],
                                  more_scribe=['{"patch": {"flags": {"续": "有"}}}'])
    old = chat.last_reply_id()
    r = await chat.continue_reply()
    assert r.sealed and r.final == "月色很好。\n\n云散开了。"
    items = chat.transcript()
    assert items[-1]["text"] == "月色很好。\n\n云散开了。" and items[-1]["swipe"] == [2, 2]
    assert [i["role"] for i in items].count("user") == 2  # no new user message
    actor = [q for q in model.requests if q.purpose == "actor"][-2]
    assert "续写" in actor.messages[-1].content  # the nudge
    assert all("月色很好。" != m.content for m in actor.messages if m.role == "assistant")  # it is the draft now
    scribe = [q for q in model.requests if q.purpose == "scribe"][-1]
    text = "\n".join(m.content for m in scribe.messages)
    assert "云散开了。" in text and "月色很好。" not in text
    assert chat.current_state().flags == {"拍": "二", "续": "有"}  # carried ledger + the addition's patch
    chat.swipe(chat.last_reply_id(), -1)
    assert chat.transcript()[-1]["id"] == old


async def test_continue_after_an_edit_and_edit_after_a_continue(tmp_path):
    chat, _ = await two_beats(tmp_path, more_actor=[append("又一句。", 1), seal(2)], more_scribe=['{"patch": {}}'])
    chat.edit_reply(chat.last_reply_id(), "改过的。")
    r = await chat.continue_reply()  # the carried snapshot is carried again
    assert r.final == "改过的。\n\n又一句。"
    chat.edit_reply(chat.last_reply_id(), "再改。")
    assert chat.transcript()[-1]["text"] == "再改。" and chat.transcript()[-1]["swipe"] == [4, 4]
    assert chat.current_state().flags == {"拍": "二"} and chat.ledger_gaps() == []


async def test_continue_reply_needs_a_sealed_last_reply(tmp_path):
    import pytest

    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    with pytest.raises(ValueError):
        await chat.continue_reply()


# -- impersonate ----------------------------------------------------------------------------------------------------
async def test_impersonate_writes_nothing_and_uses_no_tools(tmp_path):
    chat, model = await two_beats(tmp_path, more_actor=[{"content": "  我抬头看了看天。\n"}])
    before = chat.tree.path.read_bytes()
    text = await chat.impersonate()
    assert text == "我抬头看了看天。"
    assert chat.tree.path.read_bytes() == before
    q = model.requests[-1]
    assert q.tools == [] and q.messages[0].role == "system"
    assert chat.persona in q.messages[-1].content and "{{user}}" not in q.messages[-1].content


# -- Author's Note ------------------------------------------------------------------------------------------------
def test_note_interval_follows_user_messages():
    n = AuthorsNote(text="x", interval=3)
    assert [note_due(n, k) for k in range(1, 7)] == [False, False, True, False, False, True]
    assert not note_due(AuthorsNote(text="x", interval=0), 4)
    assert not note_due(AuthorsNote(text="  ", interval=1), 1)


async def test_authors_note_goes_in_at_depth_and_is_kept(tmp_path):
    model = Recorder(ReplayModel(actor=[write("一。"), seal(), write("二。"), seal()],
                                 scribe=['{"patch": {}}', '{"patch": {}}']))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    system = chat.system
    assert chat.set_authors_note(AuthorsNote(text="{{char}}说话要短。", depth=0, role="system"))
    assert not chat.set_authors_note(AuthorsNote(text="{{char}}说话要短。", depth=0, role="system"))
    await chat.send("你好")
    msgs = model.requests[0].messages
    assert msgs[0].content == system  # the system prompt never holds the note
    assert msgs[-1].role == "system" and msgs[-1].content == f"{chat.card.name}说话要短。"  # depth 0: after the last
    again = Chat.open(chat.dir, load_card(DEMO_CARD), model)
    assert again.authors_note().text == "{{char}}说话要短。" and again.authors_note().depth == 0
    again.set_authors_note(AuthorsNote(text="写景。", position="after", interval=2))
    await again.send("再说")  # the second user message: due
    last_user = [m for m in model.requests[-2].messages if m.role == "user"][-1].content
    assert "【作者注】写景。" in last_user and last_user.endswith("再说")
    assert model.requests[-2].messages[0].content == system
    assert again.set_authors_note(None) and again.authors_note().text == ""


async def test_no_note_changes_nothing(tmp_path):
    a = Recorder(ReplayModel(actor=[write("一。"), seal()], scribe=['{"patch": {}}']))
    b = Recorder(ReplayModel(actor=[write("一。"), seal()], scribe=['{"patch": {}}']))
    c1 = Chat.create(tmp_path / "a", load_card(DEMO_CARD), a)
    c2 = Chat.create(tmp_path / "b", load_card(DEMO_CARD), b)
    c2.set_authors_note(AuthorsNote(text="不会插入", interval=0))  # interval 0 = off
    await c1.send("你好")
    await c2.send("你好")
    assert [m.model_dump() for m in a.requests[0].messages] == [m.model_dump() for m in b.requests[0].messages]


def test_character_note_is_read_from_the_card(tmp_path):
    card = load_card(DEMO_CARD)
    card.extensions = {**(card.extensions or {}), "depth_prompt": {"prompt": "保持冷静。", "depth": 2, "role": "user"}}
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    note = chat.character_note()
    assert note is not None and (note.prompt, note.depth, note.role) == ("保持冷静。", 2, "user")


# -- CLI ------------------------------------------------------------------------------------------------------------
def _cli(home, *args):
    env = {"LIYUAN_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


def _replay(path, *beats):
    path.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": list(beats)}, ensure_ascii=False),
                    "utf-8")
    return f"replay:{path}"


def test_cli_continue_reply_impersonate_and_note(tmp_path):
    home = tmp_path / "home"
    first = _replay(tmp_path / "1.json", {"user": "你好", "actor": [write("第一拍。"), seal()], "scribe": ['{"patch": {}}']})
    r = _cli(home, "chat", str(DEMO_CARD), "--model", first, "--json")
    assert r.returncode == 0, r.stderr
    r = _cli(home, "chat", str(DEMO_CARD), "--model", first, "--authors-note", "多写景", "--an-depth", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["authors_note"] == {"text": "多写景", "position": "chat", "depth": 2, "role": "system",
                                                    "interval": 1}
    more = _replay(tmp_path / "2.json", {"actor": [append("接着写。", 1), seal(2)], "scribe": ['{"patch": {}}']})
    r = _cli(home, "chat", str(DEMO_CARD), "--model", more, "--continue-reply", "--json")
    assert r.returncode == 0, r.stderr
    beats = json.loads(r.stdout)["beats"]
    assert beats[-1]["final"] == "第一拍。\n\n接着写。" and beats[-1]["sealed"]
    line = _replay(tmp_path / "3.json", {"actor": [{"content": "我笑了笑。"}]})
    r = _cli(home, "chat", str(DEMO_CARD), "--model", line, "--impersonate", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["impersonation"] == "我笑了笑。"
    r = _cli(home, "chat", str(DEMO_CARD), "--model", line, "--impersonate")
    assert r.returncode == 0 and "我笑了笑。" in r.stdout
    r = _cli(home, "chat", str(DEMO_CARD), "--model", more, "--authors-note", "", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["authors_note"] is None


def test_demo_chat_names_are_unique_within_a_second(tmp_path, monkeypatch):
    from liyuan_desktop.cli.chat import unique_chat_name
    from liyuan_desktop.core.paths import chat_dir

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path))
    assert unique_chat_name("青梧", "演示-1") == "演示-1"
    chat_dir("青梧", "演示-1").mkdir(parents=True)
    assert unique_chat_name("青梧", "演示-1") == "演示-1-2"
    chat_dir("青梧", "演示-1-2").mkdir(parents=True)
    assert unique_chat_name("青梧", "演示-1") == "演示-1-3"
