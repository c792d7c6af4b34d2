"""Engine commands the window uses: regenerate (a sibling reply), seal as is, continue, ledger edit, transcript."""

from __future__ import annotations

from helpers import DEMO_CARD, shared_path

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger.state import WorldState, apply_patch
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree


def write(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


def read() -> dict:
    return {"tool_calls": [{"name": "draft_read", "arguments": {}}]}


def fail_commit(chat: Chat, n: int):
    """Make the chat's ``n``-th session write from now fail as a full disk would; returns the real commit."""
    import errno

    real = chat.tree.commit
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] == n:
            raise OSError(errno.ENOSPC, "No space left on device")
        real()

    chat.tree.commit = flaky
    return real


async def test_regenerate_makes_a_sibling_reply(tmp_path):
    model = ReplayModel(actor=[write("第一种。"), seal(), write("第二种。"), seal()],
                        scribe=['{"patch": {"flags": {"版本": "一"}}}', '{"patch": {"flags": {"版本": "二"}}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    r1 = await chat.send("你好")
    r2 = await chat.regenerate()
    assert r1.final == "第一种。" and r2.final == "第二种。"
    tree = SessionTree.open(chat.tree.path)
    users = [e for e in tree.entries.values() if e.type == "user"]
    assert len(users) == 1  # the same user message
    assert len([e for e in tree.children(users[0].id) if e.type == "beat"]) == 2
    assert [i["text"] for i in chat.transcript() if i["role"] == "assistant"] == ["第二种。"]
    assert chat.current_state().flags == {"版本": "二"}  # the ledger follows the branch
    assert tree.leaf_id == chat.tree.leaf_id


async def test_out_of_rounds_then_seal_as_is(tmp_path):
    model = ReplayModel(actor=[write("写了一半")] + [read()] * 3, scribe=['{"patch": {"time": "夜里"}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    r = await chat.send("讲下去", max_rounds=3)
    assert r.outcome == "out_of_rounds" and not r.sealed
    assert chat.pending_draft().draft == "写了一半"
    items = chat.transcript()
    assert items[-1]["role"] == "draft" and items[-1]["outcome"] == "out_of_rounds"
    s = await chat.seal_as_is()
    assert s.sealed and s.final == "写了一半" and "时间：夜里" in s.state
    assert chat.pending_draft() is None
    assert [i["role"] for i in chat.transcript()][-2:] == ["user", "assistant"]


async def test_continue_finishes_the_draft(tmp_path):
    model = ReplayModel(actor=[write("开头。")] + [read()],
                        scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    r = await chat.send("讲下去", max_rounds=2)
    assert r.outcome == "out_of_rounds"
    model2 = ReplayModel(actor=[{"tool_calls": [{"name": "draft_append", "arguments": {"version": 1, "content": "结尾。"}}]}, seal(2)],
                         scribe=['{"patch": {}}'])
    chat.model = model2
    c = await chat.continue_beat()
    assert c.sealed and c.final == "开头。\n\n结尾。"
    assert "尚未收笔" in c.sent[-1].content
    assert [i["role"] for i in chat.transcript()][-2:] == ["user", "assistant"]


async def test_ledger_edit_reaches_next_injection(tmp_path):
    model = ReplayModel(actor=[write("好。"), seal()], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    st = apply_patch(WorldState(), {"time": "三更", "characters": {"更夫": {"affinity": 3}}}).state
    chat.edit_state(st)
    r = await chat.send("听见梆子声")
    assert "时间：三更" in r.injection and "更夫：好感 3" in r.injection
    tree = SessionTree.open(chat.tree.path)
    assert [e.source for e in tree.path_to() if e.type == "rp-state"][0] == "user"


async def test_calls_after_a_previous_edit_are_not_run(tmp_path):
    from liyuan_desktop.core.llm.replay import ReplayModel as R

    model = R(actor=[write("原句。"), seal(),
                     {"tool_calls": [{"name": "previous_draft_edit", "arguments": {"version": 0, "edits": [{"old": "原句", "new": "新句"}]}},
                                     {"name": "draft_write", "arguments": {"version": 0, "content": "不该写"}},
                                     {"name": "draft_seal", "arguments": {"version": 1}}]}],
              scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    await chat.send("一")
    r = await chat.send("把上一拍的原句改成新句")
    assert r.outcome == "revised_previous" and r.revised_text == "新句。" and not r.sealed
    logs = r.output.calls[0].tool_calls
    assert [t.ok for t in logs] == [True, False, False]
    assert r.output.draft.text == ""


async def test_two_asks_in_one_response_are_asked_one_after_the_other(tmp_path):
    import asyncio

    open_now = []
    seen = []

    async def ask(req):
        open_now.append(req.question)
        assert len(open_now) == 1, "two questions on screen at once"
        await asyncio.sleep(0.02)
        seen.append(req.question)
        open_now.pop()
        from liyuan_desktop.core.beat.events import AskAnswer
        return AskAnswer(answer=req.options[0], by="user")

    ask_call = lambda q: {"name": "ask", "arguments": {"question": q, "options": ["甲", "乙"]}}
    model = ReplayModel(actor=[{"tool_calls": [ask_call("一？"), ask_call("二？")]}, write("好。"), seal()], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    r = await chat.send("你问吧", ask=ask)
    assert seen == ["一？", "二？"] and r.sealed


async def test_imported_shapes_reach_the_prompt(tmp_path):
    """A reply straight after the opening and two user messages in a row (SillyTavern chats have both) are sent;
    the user message of a beat that produced no reply is not."""
    model = ReplayModel(actor=[write("嗯。"), seal()], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    t = chat.tree
    t.append("assistant", text="（又补了一句）")
    t.append("user", text="甲")
    t.append("user", text="乙")
    t.append("assistant", text="丙")
    t.append("user", text="没写完的一拍")
    t.append("beat", outcome="unsealed", draft="半截")
    t.commit()
    r = await chat.send("丁")
    roles = [(m["role"], m["content"]) for m in r.messages_sent[1:-1]]
    assert roles[1:] == [("assistant", "（又补了一句）"), ("user", "甲"), ("user", "乙"), ("assistant", "丙")]


async def test_preset_layers_and_after_segments(tmp_path):

    import pytest

    from liyuan_desktop.core.prompt.presets.store import load_preset

    p = shared_path("fixtures", "cards", "formats", "openai-preset-Default.json")
    if not p.exists():
        pytest.skip("fixture preset not found")
    preset = load_preset(p)
    model = ReplayModel(actor=[write("嗯。"), seal(), write("好。"), seal()], scribe=['{"patch": {}}', '{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model, preset=preset)
    r1 = await chat.send("一")
    r2 = await chat.send("二")
    assert r1.messages_sent[0] == r2.messages_sent[0]  # the system prompt stays byte-stable with a preset
    assert SessionTree.open(chat.tree.path).header.model_dump().get("preset") == preset.name
    user_msgs = [m for m in r2.messages_sent if m["role"] == "user"]
    assert user_msgs[-1]["content"].endswith("二") or any(m["content"].endswith("\n\n二") for m in r2.messages_sent)


async def test_disk_refuses_the_users_words_nothing_is_played_and_memory_matches_disk(tmp_path):
    import errno

    import pytest

    from liyuan_desktop.core.chat.results import SessionWriteError

    model = ReplayModel(actor=[write("一。"), seal()], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    before = chat.tree.path.read_bytes()
    real = chat.tree.commit
    chat.tree.commit = lambda: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(SessionWriteError) as ei:
        await chat.send("你好")
    assert "这一拍没有开始" in str(ei.value)
    assert chat.tree.path.read_bytes() == before
    assert chat.tree.latest("user") is None and [i["role"] for i in chat.transcript()] == ["opening"]
    chat.tree.commit = real  # space again: the same words play normally, once
    r = await chat.send("你好")
    assert r.sealed and [e.type for e in SessionTree.open(chat.tree.path).path_to()].count("user") == 1


async def test_disk_refuses_the_ledger_the_reply_is_saved_and_retry_writes_the_rest(tmp_path):
    import pytest

    from liyuan_desktop.core.chat.results import BeatSaveError

    model = ReplayModel(actor=[write("一。"), seal()], scribe=['{"patch": {"time": "夜"}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    real = fail_commit(chat, 3)  # 1: the words, 2: the beat and reply, 3: the scribe's snapshot
    with pytest.raises(BeatSaveError) as ei:
        await chat.send("你好")
    assert ei.value.stage == "ledger" and "本拍的正文已经保存" in str(ei.value)
    on_disk = SessionTree.open(chat.tree.path)
    assert on_disk.latest("assistant").text == "一。" and on_disk.latest("rp-state") is None
    chat.tree.commit = real
    chat.retry_save()
    assert SessionTree.open(chat.tree.path).latest("rp-state").state["time"] == "夜"


async def test_beat_saved_late_gets_its_ledger_after_the_retry(tmp_path):
    import pytest

    from liyuan_desktop.core.chat.results import BeatSaveError

    model = ReplayModel(actor=[write("一。"), seal()], scribe=['{"patch": {"time": "夜"}}'])
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    fail_commit(chat, 2)  # 1: the words, 2: the beat and its reply
    with pytest.raises(BeatSaveError) as ei:
        await chat.send("你好")
    assert ei.value.stage == "beat" and chat.needs_scribe
    assert SessionTree.open(chat.tree.path).latest("assistant") is None
    chat.retry_save()
    r = await chat.finish_pending()
    assert not chat.needs_scribe and r.final == "一。" and "时间：夜" in r.state
    on_disk = SessionTree.open(chat.tree.path)
    assert on_disk.latest("assistant").text == "一。" and on_disk.latest("rp-state").state["time"] == "夜"


async def test_agent_turn_saved_late_still_gets_its_checkpoint(tmp_path, monkeypatch):
    import pytest

    from liyuan_desktop.core.chat.results import BeatSaveError

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    edit = {"tool_calls": [{"name": "write", "arguments": {"path": "001-雨夜.md", "content": "雨夜。\n"}}]}
    done = {"content": "写好了第一章。"}
    model = ReplayModel(actor=[edit, done], scribe=['{"patch": {"time": "雨夜"}}'])
    chat = Chat.create(tmp_path / "home" / "c", load_card(DEMO_CARD), model, mode="agent")
    real = fail_commit(chat, 2)  # 1: the words, 2: the turn
    with pytest.raises(BeatSaveError):
        await chat.send("写第一章")
    assert chat.needs_scribe and chat.history_log.checkpoints() == []
    chat.tree.commit = real
    r = await chat.finish_pending()
    assert r.checkpoint is not None and chat.history_log.checkpoints()
    assert chat.current_state().time == "雨夜" and not chat.needs_scribe


def test_scripts_for_this_chat_only_and_folder_queries(tmp_path):
    """``set_scripts_allowed(True, remember=False)`` (the CLI's --allow-card-scripts, card preview) runs the scripts
    and says so through ``scripts_allowed()`` without writing ``liyuan.json``; ``chat_info`` reads a chat's header
    without opening it and ``export_story`` is the export Chat.export and ``liyuan story export`` share."""
    from liyuan_desktop.core.chat.folder import chat_info, export_story

    card = load_card(DEMO_CARD)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]), header_extra={"title": "雨夜"})
    assert not chat.scripts_allowed()
    chat.set_scripts_allowed(True, remember=False)
    assert chat.scripts_allowed()
    assert not (DEMO_CARD.parent / "liyuan.json").exists() or "scripts" not in (DEMO_CARD.parent / "liyuan.json").read_text("utf-8")
    info = chat_info(tmp_path / "c")
    assert (info.mode, info.card_name, info.demo) == ("roleplay", card.name, False)
    (tmp_path / "c" / "正文").mkdir()
    (tmp_path / "c" / "正文" / "001-开端.md").write_text("第一章的正文。", "utf-8")
    out = export_story(tmp_path / "c", "md", tmp_path / "book.md")
    assert "第一章的正文。" in out.read_text("utf-8")
