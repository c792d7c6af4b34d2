"""The beat loop under bad model output and failures, through ``Chat`` with the demo card and a scripted model
(no network): tool errors the model can act on, the 20-call limit, stray text, previous-beat edits, Stop, model
errors, result order of concurrent reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from liyuan_desktop.core.beat.events import AskAnswer, AskRequest, ToolFinished
from liyuan_desktop.core.beat.loop import CAPTURED_APPEND_NOTICE, CAPTURED_NOTICE, MAX_ROUNDS, UNSEALED_NOTICE
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ChatRequest, ChatResponse, ModelError, ToolCall
from liyuan_desktop.core.session.tree import SessionTree

ROOT = Path(__file__).resolve().parent.parent
CARD = load_card(ROOT / "cards" / "青梧" / "default_Qingwu.json")
EMPTY_PATCH = '{"patch":{}}'


class RecordingReplay(ReplayModel):
    """The replay model, keeping a deep copy of every actor request it answered (or refused)."""

    def __init__(self, actor, scribe=(EMPTY_PATCH,) * 4, **kw):
        super().__init__(actor, list(scribe), **kw)
        self.requests: list[ChatRequest] = []
        self.scribe_requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta=None) -> ChatResponse:
        (self.requests if request.purpose == "actor" else self.scribe_requests).append(request.model_copy(deep=True))
        return await super().complete(request, on_delta)


class FailingModel:
    """One good call (scripted), then a network error with a partial answer."""

    name = "fake-failing"
    is_replay = False

    def __init__(self, first: ChatResponse):
        self.first = first
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta=None) -> ChatResponse:
        self.requests.append(request.model_copy(deep=True))
        if request.purpose != "actor":
            raise AssertionError("the scribe must not run after a failed beat")
        if len(self.requests) == 1:
            return self.first.model_copy(deep=True)
        raise ModelError("network", "断了", partial=ChatResponse(content="半截"))


def tc(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


def resp(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    return {"content": content, "tool_calls": list(calls)}


def new_chat(tmp_path: Path, model) -> Chat:
    return Chat.create(tmp_path / "chat", CARD, model)


def reopen(chat: Chat) -> SessionTree:
    t = SessionTree.open(chat.dir / "session.jsonl")
    assert t.load_warnings == []
    return t


def last_beat(tree: SessionTree):
    beats = [tree.get(i) for i in tree.order if tree.get(i).type == "beat"]
    assert beats, "no beat entry on disk"
    return beats[-1]


def tool_results(req: ChatRequest) -> list[tuple[str, Any]]:
    """The tool messages at the end of a request (after the last assistant message), parsed."""
    msgs = req.messages
    i = max(k for k, m in enumerate(msgs) if m.role == "assistant")
    return [(m.tool_call_id, json.loads(m.content)) for m in msgs[i + 1 :] if m.role == "tool"]


def types_after(tree: SessionTree, entry_id: str) -> list[str]:
    seen = False
    out = []
    for i in tree.order:
        if seen:
            out.append(tree.get(i).type)
        if i == entry_id:
            seen = True
    return out


# -- tool errors the model can act on -------------------------------------------------------------------------


async def test_malformed_json_arguments_become_bad_json_and_loop_continues(tmp_path):
    bad = '{"version": 0, "content": "abc'
    model = RecordingReplay([
        {"tool_calls": [{"name": "draft_write", "arguments": bad}]},
        resp(tc("draft_write", version=0, content="正文")),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "sealed" and res.sealed and res.final == "正文"
    assert res.calls == [["draft_write"], ["draft_write"], ["draft_seal"]]
    assert len(model.requests) == 3
    # the model got the error as the tool result of that exact call, and the loop went on
    assistant_msg = model.requests[1].messages[-2]
    assert assistant_msg.role == "assistant" and assistant_msg.tool_calls[0].arguments == bad
    (call_id, result), = tool_results(model.requests[1])
    assert call_id == assistant_msg.tool_calls[0].id
    assert result["ok"] is False and result["error"] == "bad_json"
    assert "draft_write" in result["message"]
    # the second write was based on version 0: the bad call changed nothing
    (_, r2), = tool_results(model.requests[2])
    assert r2 == {"ok": True, "version": 1, "chars": 2}
    beat = last_beat(reopen(chat))
    log = beat.calls[0].tool_calls[0]
    assert log.ok is False and log.arguments == bad and log.result["error"] == "bad_json"


async def test_unknown_tool_name(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_delete", version=0)),
        resp(tc("draft_write", version=0, content="正文"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "sealed" and res.final == "正文"
    (_, r), = tool_results(model.requests[1])
    assert r["ok"] is False and r["error"] == "unknown_tool"
    assert "draft_delete" in r["message"] and "draft_write" in r["message"]
    beat = last_beat(reopen(chat))
    assert beat.calls[0].tool_calls[0].name == "draft_delete" and beat.calls[0].tool_calls[0].ok is False


async def test_bad_args_schema_error(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_write", version=0)),  # content missing
        resp(tc("draft_write", version=-1, content="x")),  # version < 0
        resp(tc("draft_write", version=0, content="正文"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.final == "正文"
    for k in (1, 2):
        (_, r), = tool_results(model.requests[k])
        assert r["ok"] is False and r["error"] == "bad_args"


async def test_stale_version_in_draft_write(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="甲")),
        resp(tc("draft_write", version=0, content="乙")),
        resp(tc("draft_read")),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    (_, r), = tool_results(model.requests[2])
    assert r["ok"] is False and r["error"] == "stale_version" and r["version"] == 1
    (_, rd), = tool_results(model.requests[3])
    assert rd == {"version": 1, "content": "甲"}
    assert res.outcome == "sealed" and res.final == "甲"


async def test_draft_edit_bad_references_leave_draft_unchanged(tmp_path):
    text = "甲乙，乙丙。她说：“记得。”"
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content=text)),
        resp(
            tc("draft_edit", version=1, edits=[{"old": "丁", "new": "x"}]),
            tc("draft_edit", version=1, edits=[{"old": "乙", "new": "x"}]),
            tc("draft_edit", version=1, edits=[{"old": "甲乙", "new": "x"}, {"old": "乙，", "new": "y"}]),
            tc("draft_edit", version=1, edits=[{"old": "丙", "new": "3"}, {"old": "丙", "new": "4"}]),
            tc("draft_edit", version=1, edits=[{"old": "甲", "new": "1"}, {"old": "不存在", "new": "2"}]),
            tc("draft_edit", version=1, edits=[]),
        ),
        resp(tc("draft_read")),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    results = [r for _, r in tool_results(model.requests[2])]
    assert [r.get("error") for r in results] == ["not_found", "not_unique", "overlap", "overlap", "not_found", "bad_args"]
    assert all(r["ok"] is False for r in results)
    (_, rd), = tool_results(model.requests[3])
    assert rd == {"version": 1, "content": text}
    assert res.final == text
    beat = last_beat(reopen(chat))
    assert beat.draft == text and beat.draft_version == 1


async def test_draft_edit_limited_match_reported_to_model(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="她说：“记得。”然后走了。")),
        resp(tc("draft_edit", version=1, edits=[{"old": ':"记得."', "new": "：“忘了。”"}])),
        resp(tc("draft_seal", version=2)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    (_, r), = tool_results(model.requests[2])
    assert r["ok"] is True and r["version"] == 2 and r["matches"] == ["punct"]
    assert res.final == "她说：“忘了。”然后走了。"


async def test_seal_before_any_write_is_empty_draft(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_seal", version=0)),
        resp(tc("draft_write", version=0, content="正文")),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    (_, r), = tool_results(model.requests[1])
    assert r["ok"] is False and r["error"] == "empty_draft"
    assert len(model.requests) == 3  # the failed seal did not end the beat
    assert res.outcome == "sealed" and res.final == "正文"


async def test_write_after_seal_in_same_response_is_refused(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="正文"), tc("draft_seal", version=1),
             tc("draft_append", version=1, content="多写")),
        resp(content="不该被调用"),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.final == "正文"
    assert model.remaining()["actor"] == 1
    beat = last_beat(reopen(chat))
    logs = beat.calls[0].tool_calls
    assert [t.ok for t in logs] == [True, True, False]
    assert logs[2].result["error"] == "beat_ended"  # after a seal the rest of the response is not run


# -- out of rounds --------------------------------------------------------------------------------------------


async def test_never_sealing_model_stops_after_20_calls(tmp_path):
    actor = []
    for i in range(MAX_ROUNDS + 3):
        if i % 2 == 0:
            actor.append(resp(tc("draft_append", version=i // 2, content=f"第{i // 2}段")))
        else:
            actor.append(resp(tc("draft_read")))
    model = RecordingReplay(actor)
    scribe_before = model.remaining()["scribe"]
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert MAX_ROUNDS == 20
    assert len(model.requests) == 20
    assert model.remaining()["actor"] == 3
    assert model.remaining()["scribe"] == scribe_before  # no scribe
    assert res.outcome == "out_of_rounds"
    assert not res.sealed and res.final == ""
    assert len(res.calls) == 20
    assert any(UNSEALED_NOTICE in a for a in res.activity)
    expected = "\n\n".join(f"第{k}段" for k in range(10))
    tree = reopen(chat)
    beat = last_beat(tree)
    assert beat.outcome == "out_of_rounds"
    assert beat.draft == expected and beat.draft_version == 10
    assert len(beat.calls) == 20
    user = next(tree.get(i) for i in tree.order if tree.get(i).type == "user")
    after = types_after(tree, user.id)
    assert "assistant" not in after
    assert all(tree.get(i).type != "rp-state" for i in tree.order)
    assert tree.leaf_id == beat.id


# -- stray text -----------------------------------------------------------------------------------------------


async def test_stray_text_on_empty_draft_becomes_draft_write_and_seals(tmp_path):
    model = RecordingReplay([{"content": "正文"}])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "sealed" and res.sealed
    assert res.final == "正文"
    assert any(CAPTURED_NOTICE in a for a in res.activity)
    assert CAPTURED_NOTICE == "直出正文已代收为 draft_write"
    tree = reopen(chat)
    beat = last_beat(tree)
    assert beat.draft == "正文" and beat.draft_version == 1 and beat.outcome == "sealed"
    a = tree.latest("assistant")
    assert a is not None and a.text == "正文" and a.sealed and a.beat == beat.id
    assert tree.latest("rp-state") is not None  # the scribe ran after the sealed beat


async def test_text_after_draft_write_is_appended_and_sealed(tmp_path):
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="开头。")),
        {"content": "接着的一段。"},
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "sealed"
    assert res.final == "开头。\n\n接着的一段。"
    assert any(CAPTURED_APPEND_NOTICE in a for a in res.activity)
    beat = last_beat(reopen(chat))
    assert beat.draft == "开头。\n\n接着的一段。" and beat.draft_version == 2


async def test_format_block_from_an_earlier_call_survives_stray_capture(tmp_path):
    """A status block the model put in the text channel next to draft_write is format content of the final
    (merge.py); a later plain-text response taken in as draft_append must not drop it."""
    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="正文。"), content="<status>雨</status>"),
        {"content": "续写。"},
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "sealed"
    assert res.final.startswith("正文。\n\n续写。")
    assert "<status>雨</status>" in res.final


async def test_empty_response_on_empty_draft_is_unsealed_without_assistant(tmp_path):
    model = RecordingReplay([{"content": ""}])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert res.outcome == "unsealed" and not res.sealed
    assert res.warnings
    tree = reopen(chat)
    assert tree.latest("assistant") is None


# -- previous-beat edits ----------------------------------------------------------------------------------------


async def test_previous_draft_edit_on_first_beat_is_an_error(tmp_path):
    model = RecordingReplay([
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "雨", "new": "雪"}])),
        resp(tc("previous_draft_read")),
        resp(tc("draft_write", version=0, content="正文"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    (_, r), = tool_results(model.requests[1])
    assert r["ok"] is False and r["error"] == "no_previous"
    (_, r2), = tool_results(model.requests[2])
    assert r2["ok"] is False and r2["error"] == "no_previous"
    assert res.outcome == "sealed" and not res.revised_previous
    tree = reopen(chat)
    assert all(tree.get(i).type != "revision" for i in tree.order)


async def test_previous_draft_edit_after_writing_this_beat_is_an_error(tmp_path):
    model = RecordingReplay([
        {"content": "上一拍的回复。"},
        resp(tc("draft_write", version=0, content="本拍正文。")),
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "回复", "new": "答复"}])),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    first = await chat.send("第一句")
    assert first.final == "上一拍的回复。"
    res = await chat.send("第二句")
    # requests: [0] beat 1; [1] beat 2 first call; [2] after draft_write; [3] after previous_draft_edit
    (_, r), = tool_results(model.requests[3])
    assert r["ok"] is False and r["error"] == "draft_in_use"
    assert res.outcome == "sealed" and res.final == "本拍正文。" and not res.revised_previous
    tree = reopen(chat)
    assert all(tree.get(i).type != "revision" for i in tree.order)
    finals = [e.text for e in tree.iter_type("assistant")]
    assert finals == ["上一拍的回复。", "本拍正文。"]


async def test_previous_draft_edit_success_ends_beat(tmp_path):
    model = RecordingReplay([
        {"content": "上一拍的回复。"},
        resp(tc("previous_draft_read")),
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "回复", "new": "答复"}])),
        resp(content="不该被调用"),
    ])
    chat = new_chat(tmp_path, model)
    await chat.send("第一句")
    res = await chat.send("改一下上一句")
    (_, rd), = tool_results(model.requests[2])
    assert rd == {"version": 0, "content": "上一拍的回复。"}
    assert res.outcome == "revised_previous" and res.revised_previous and res.revised_text == "上一拍的答复。"
    assert model.remaining()["actor"] == 1
    tree = reopen(chat)
    rev = tree.latest("revision")
    assert rev is not None and rev.text == "上一拍的答复。" and rev.version == 1


async def test_next_beat_sees_revised_previous_with_new_version(tmp_path):
    model = RecordingReplay([
        {"content": "上一拍的回复。"},
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "回复", "new": "答复"}])),
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "答复", "new": "回话"}])),
        resp(tc("previous_draft_read")),
        resp(tc("draft_write", version=0, content="本拍。"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    await chat.send("第一句")
    r2 = await chat.send("改一下")
    assert r2.outcome == "revised_previous"
    r3 = await chat.send("再改")
    # the revision is version 1 now: an edit based on version 0 is stale
    (_, stale), = tool_results(model.requests[3])
    assert stale["ok"] is False and stale["error"] == "stale_version" and stale["version"] == 1
    (_, rd), = tool_results(model.requests[4])
    assert rd == {"version": 1, "content": "上一拍的答复。"}
    assert r3.outcome == "sealed"
    # the revised text is what the model sees as the past final in later prompts
    past = [m.content for m in model.requests[4].messages if m.role == "assistant" and not m.tool_calls]
    assert "上一拍的答复。" in past and "上一拍的回复。" not in past


async def test_previous_draft_edit_stale_version_and_bad_reference_change_nothing(tmp_path):
    model = RecordingReplay([
        {"content": "上一拍的回复。"},
        resp(tc("previous_draft_edit", version=3, edits=[{"old": "回复", "new": "答复"}])),
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "不存在", "new": "x"}])),
        resp(tc("previous_draft_edit", version=0, edits=[{"old": "上一拍", "new": "前一拍"}, {"old": "没有", "new": "x"}])),
        resp(tc("previous_draft_read")),
        resp(tc("draft_write", version=0, content="本拍。"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    await chat.send("第一句")
    res = await chat.send("第二句")
    (_, r1), = tool_results(model.requests[2])
    assert r1["ok"] is False and r1["error"] == "stale_version" and r1["version"] == 0
    (_, r2), = tool_results(model.requests[3])
    assert r2["ok"] is False and r2["error"] == "not_found"
    (_, r3), = tool_results(model.requests[4])
    assert r3["ok"] is False and r3["error"] == "not_found"
    (_, rd), = tool_results(model.requests[5])
    assert rd == {"version": 0, "content": "上一拍的回复。"}
    assert res.outcome == "sealed" and not res.revised_previous
    tree = reopen(chat)
    assert all(tree.get(i).type != "revision" for i in tree.order)


# -- ask / Stop -----------------------------------------------------------------------------------------------


async def test_ask_stop_ends_beat_without_another_model_call(tmp_path):
    asked: list[AskRequest] = []

    async def ask(req: AskRequest) -> AskAnswer:
        asked.append(req)
        return AskAnswer(by="stop")

    model = RecordingReplay([
        resp(tc("ask", question="往哪走？", options=["渡口", "回家"])),
        resp(tc("draft_write", version=0, content="不该写")),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("接下来怎么办", ask=ask)
    assert len(asked) == 1 and asked[0].options == ["渡口", "回家"]
    assert res.outcome == "stopped" and not res.sealed
    assert len(model.requests) == 1
    assert model.remaining()["actor"] == 1
    tree = reopen(chat)
    a = tree.latest("ask")
    assert a is not None and a.by == "stop" and a.answer is None and a.question == "往哪走？"
    assert tree.latest("assistant") is None
    assert last_beat(tree).outcome == "stopped"


async def test_ask_stop_skips_the_rest_of_the_same_response(tmp_path):
    """Stop hands the pen back: a write that came in the same response after the ask must not touch the draft."""

    async def ask(req: AskRequest) -> AskAnswer:
        return AskAnswer(by="stop")

    model = RecordingReplay([
        resp(tc("ask", question="往哪走？", options=["渡口", "回家"]),
             tc("draft_write", version=0, content="用户停了还在写")),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("接下来怎么办", ask=ask)
    assert res.outcome == "stopped"
    beat = last_beat(reopen(chat))
    assert beat.draft == "" and beat.draft_version == 0


async def test_ask_answer_goes_back_to_model(tmp_path):
    async def ask(req: AskRequest) -> AskAnswer:
        return AskAnswer(answer="渡口", by="user")

    model = RecordingReplay([
        resp(tc("ask", question="往哪走？", options=["渡口", "回家"])),
        resp(tc("draft_write", version=0, content="去渡口。"), tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("接下来怎么办", ask=ask)
    (_, r), = tool_results(model.requests[1])
    assert r == {"answer": "渡口", "by": "user"}
    assert res.final == "去渡口。"
    assert reopen(chat).latest("ask").answer == "渡口"


# -- model errors ---------------------------------------------------------------------------------------------


async def test_model_error_after_a_write_keeps_draft_and_user_entry(tmp_path):
    first = ChatResponse(content="", tool_calls=[ToolCall(id="c1", name="draft_write",
                                                           arguments=json.dumps({"version": 0, "content": "写了一半的稿"}, ensure_ascii=False))],
                         finish_reason="tool_calls")
    model = FailingModel(first)
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好")
    assert len(model.requests) == 2
    assert res.outcome == "error" and not res.sealed
    assert res.error == "断了"
    tree = reopen(chat)
    users = [tree.get(i) for i in tree.order if tree.get(i).type == "user"]
    assert [u.text for u in users] == ["你好"]
    beat = last_beat(tree)
    assert beat.outcome == "error"
    assert beat.draft == "写了一半的稿" and beat.draft_version == 1
    assert len(beat.calls) == 2
    assert beat.calls[1].content == "半截" and "network" in (beat.calls[1].error or "")
    assert beat.error == "断了"
    assert tree.latest("assistant") is None
    assert all(tree.get(i).type != "rp-state" for i in tree.order)
    assert beat.id in [e.id for e in tree.path_to()]
    assert users[0].id in [e.id for e in tree.path_to()]


# -- concurrent reads -----------------------------------------------------------------------------------------


async def test_concurrent_read_results_come_back_in_call_order(tmp_path):
    finished: list[str] = []

    def on_event(ev):
        if isinstance(ev, ToolFinished):
            finished.append(ev.name)

    async def slow_ask(req: AskRequest) -> AskAnswer:
        await asyncio.sleep(0.05)
        return AskAnswer(answer="渡口", by="user")

    model = RecordingReplay([
        resp(tc("draft_write", version=0, content="雨夜，记得。")),
        resp(
            tc("ask", question="往哪走？", options=["渡口", "回家"]),
            tc("draft_read", start=0, end=2),
            tc("draft_search", query="记得"),
            tc("lorebook_list"),
            tc("world_state_get"),
        ),
        resp(tc("draft_seal", version=1)),
    ])
    chat = new_chat(tmp_path, model)
    res = await chat.send("你好", ask=slow_ask, on_event=on_event)
    assert res.outcome == "sealed"
    names = ["ask", "draft_read", "draft_search", "lorebook_list", "world_state_get"]
    # the ask runs alone (one question at a time, the user's answer first); the reads after it run together
    assert finished == ["draft_write", "ask", "draft_read", "draft_search", "lorebook_list", "world_state_get", "draft_seal"]
    # … yet the results are in the calls' order, in the log and in what the model got
    beat = last_beat(reopen(chat))
    logs = beat.calls[1].tool_calls
    assert [t.name for t in logs] == names
    assert all(t.ok for t in logs)
    assert [t.mode for t in logs] == ["ask", "read", "read", "read", "read"]
    assistant_msg = model.requests[2].messages[-len(names) - 1]
    assert assistant_msg.role == "assistant"
    got = tool_results(model.requests[2])
    assert [cid for cid, _ in got] == [c.id for c in assistant_msg.tool_calls]
    assert [t.id for t in logs] == [c.id for c in assistant_msg.tool_calls]
    assert got[0][1] == {"answer": "渡口", "by": "user"}
    assert got[1][1] == {"version": 1, "content": "雨夜", "start": 0, "end": 2, "total": 6}
    assert got[2][1]["total"] == 1 and got[2][1]["hits"][0]["text"] == "记得"
    assert "听雨轩" in got[3][1] or any("听雨轩" in x for x in got[3][1])
    assert "state" in got[4][1]
    for (_, r), t in zip(got, logs):
        assert r == t.result
