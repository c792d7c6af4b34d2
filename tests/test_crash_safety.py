"""Nothing lost when the app dies mid-beat (issue 15 items 1, 2 and 4): the draft on disk as it changes (also while
a draft_write streams), offered back on reopening; ledger gaps repaired in order; words a crash left unanswered
shown, never sent along silently; a lone UTF-16 surrogate from the model never loses the beat."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Optional

import pytest

DRAFT_LOG_NAME = "session.draft.jsonl"  # core.beat.draft.DRAFT_LOG_NAME (kept literal: the file name is the contract)
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.openai_client import OpenAIChatModel
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ChatRequest, ChatResponse, StreamDelta

try:
    from sse_server import Reply, ScriptedServer
except ImportError:  # pragma: no cover
    from tests.sse_server import Reply, ScriptedServer


def _card(tmp_path):
    data = {"name": "青梧", "description": "{{char}}是客栈掌柜。", "first_mes": "「客官请进。」"}
    folder = tmp_path / "cards" / "青梧"
    folder.mkdir(parents=True)
    obj = {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}
    (folder / "card.json").write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return card_from_json(obj, str(folder / "card.json"))


def write(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


class Hanging:
    """A model that answers its scripted responses, then streams ``stream`` (tool-argument pieces of a
    draft_write, ``gap`` s apart) and hangs: the state the app is in when it is killed mid-call."""

    is_replay = False
    name = "hanging"

    def __init__(self, answers: list[dict], stream: Optional[list[str]] = None, gap: float = 0.0):
        self.replay = ReplayModel(actor=answers)
        self.left = len(answers)
        self.stream, self.gap = stream or [], gap
        self.reached = asyncio.Event()

    async def complete(self, request: ChatRequest, on_delta: Any = None) -> ChatResponse:
        if request.purpose != "actor":
            return ChatResponse(content='{"patch": {}}')
        if self.left:
            self.left -= 1
            return await self.replay.complete(request, on_delta)
        if self.stream:
            on_delta(StreamDelta(kind="tool_name", text="draft_write", index=0))
            for piece in self.stream:
                on_delta(StreamDelta(kind="tool_args", text=piece, index=0))
                await asyncio.sleep(self.gap)
        self.reached.set()
        await asyncio.Event().wait()  # never answers
        raise AssertionError


async def _kill_when_hanging(chat: Chat, model: Hanging, text: str) -> None:
    """Send ``text`` and abandon the beat once the model hangs (no clean-up runs: like kill -9)."""
    task = asyncio.ensure_future(chat.send(text))
    await asyncio.wait_for(model.reached.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_draft_written_before_a_crash_is_offered_back(tmp_path):
    card = _card(tmp_path)
    model = Hanging([write("灯下，她把账本合上。")])
    chat = Chat.create(tmp_path / "chat", card, model)
    await _kill_when_hanging(chat, model, "你好")
    assert (tmp_path / "chat" / DRAFT_LOG_NAME).is_file()

    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[], scribe=['{"patch": {}}']))
    pending = again.pending_draft()
    assert pending is not None and pending.draft == "灯下，她把账本合上。" and pending.draft_version == 1
    assert any("草稿记录恢复" in w for w in again.load_warnings)
    assert not (tmp_path / "chat" / DRAFT_LOG_NAME).exists()
    res = await again.seal_as_is()  # --seal-as-is / the window's 按现稿收笔
    assert res.sealed and res.final == "灯下，她把账本合上。"
    third = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert third.pending_draft() is None and third.load_warnings == []


async def test_a_draft_still_streaming_is_on_disk_within_a_second(tmp_path):
    card = _card(tmp_path)
    pieces = ['{"version": 0, "content": "', "夜雨", "敲窗，", "她抬头", "看了一眼", "门外", "。\\n", "灯"]
    model = Hanging([], stream=pieces, gap=0.2)
    chat = Chat.create(tmp_path / "chat", card, model)
    await _kill_when_hanging(chat, model, "你好")
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    pending = again.pending_draft()
    assert pending is not None
    # everything streamed more than 0.5 s (STREAM_PERSIST_S) before the kill is on disk
    assert pending.draft.startswith("夜雨敲窗，她抬头看了一眼"), pending.draft


async def test_a_finished_beat_leaves_no_draft_log(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[write("好。"), seal()], scribe=['{"patch": {}}']))
    res = await chat.send("你好")
    assert res.sealed and not (tmp_path / "chat" / DRAFT_LOG_NAME).exists()


async def test_a_stale_draft_log_is_dropped(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "chat", card, Hanging([write("半句")]))
    model = chat.model
    log_path = tmp_path / "chat" / DRAFT_LOG_NAME
    await _kill_when_hanging(chat, model, "你好")
    kept = log_path.read_bytes()
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[], scribe=['{"patch": {}}']))
    await again.seal_as_is()
    log_path.write_bytes(kept)  # as if killed after the beat entry was written, before the log was removed
    third = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert third.pending_draft() is None and not log_path.exists() and third.load_warnings == []


async def test_ledger_gaps_are_repaired_in_order(tmp_path):
    card = _card(tmp_path)
    scribe = ['{"patch": {"time": "一"}}', '{"patch": {"time": "二"}}', '{"patch": {"time": "三"}}']
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[write("甲。"), seal(), write("乙。"), seal(),
                                                                   write("丙。"), seal()], scribe=scribe))
    for t in ("一", "二", "三"):
        await chat.send(t)
    path = tmp_path / "chat" / "session.jsonl"
    lines = path.read_text("utf-8").splitlines()
    states = [i for i, ln in enumerate(lines) if '"type":"rp-state"' in ln]
    kept = [ln for i, ln in enumerate(lines) if i not in states[-2:]]  # the kill came before beats 2 and 3's snapshots
    path.write_text("\n".join(kept) + "\n", "utf-8")
    again = Chat.open(tmp_path / "chat", card,
                      ReplayModel(actor=[], scribe=['{"patch": {"time": "二"}}', '{"patch": {"time": "三"}}']))
    gaps = again.ledger_gaps()
    assert len(gaps) == 2 and [again.entry_text(g) for g in gaps] == ["乙。", "丙。"]
    done = await again.repair_ledger()
    assert [r.final for r in done] == ["乙。", "丙。"] and [r.user for r in done] == ["二", "三"]
    assert again.current_state().time == "三" and again.ledger_gaps() == []
    assert Chat.open(tmp_path / "chat", card, ReplayModel(actor=[])).ledger_gaps() == []


async def test_a_repair_killed_half_way_leaves_the_rest_to_repair(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[write("甲。"), seal(), write("乙。"), seal()],
                                                            scribe=['{"patch": {}}', '{"patch": {}}']))
    await chat.send("一")
    await chat.send("二")
    path = tmp_path / "chat" / "session.jsonl"
    lines = path.read_text("utf-8").splitlines()
    states = [i for i, ln in enumerate(lines) if '"type":"rp-state"' in ln]
    path.write_text("\n".join(ln for i, ln in enumerate(lines) if i not in states) + "\n", "utf-8")
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[], scribe=['{"patch": {}}']))
    assert len(again.ledger_gaps()) == 2
    gaps = again.ledger_gaps()
    # repair only the first (as if killed after its snapshot): the second is still a gap, though it comes before
    from liyuan_desktop.core.chat.pipeline import run_scribe_step
    from liyuan_desktop.core.chat.results import BeatResult

    await run_scribe_step(again, BeatResult(user="一", injection=""), again.current_state(), "一", "甲。", None, covers=gaps[0])
    third = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert third.ledger_gaps() == [gaps[1]]


async def test_unanswered_words_are_shown_not_sent_silently(tmp_path):
    card = _card(tmp_path)
    model = Hanging([])
    chat = Chat.create(tmp_path / "chat", card, model)
    await _kill_when_hanging(chat, model, "我先问一句")  # killed before any reply or draft
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[write("好。"), seal()], scribe=['{"patch": {}}']))
    left = again.unanswered()
    assert left is not None and left.text == "我先问一句" and again.pending_draft() is None
    res = await again.send("换一句话")
    assert res.sealed
    assert not any("我先问一句" in (m.content or "") for m in res.sent)  # not in the prompt
    assert again.unanswered() is None and again.last_user_text() == "换一句话"


async def test_unanswered_words_can_be_resent_or_dropped(tmp_path):
    card = _card(tmp_path)
    model = Hanging([])
    chat = Chat.create(tmp_path / "chat", card, model)
    await _kill_when_hanging(chat, model, "我先问一句")
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[write("好。"), seal()], scribe=['{"patch": {}}']))
    before = again.unanswered().parent_id
    assert again.drop_unanswered() == before and again.unanswered() is None
    again.select(again.find_entry(again.tree.children(before)[-1].id))
    assert again.unanswered() is not None
    res = await again.regenerate()  # resend as is
    assert res.sealed and res.user == "我先问一句" and again.unanswered() is None


# -- item 4: lone surrogates ----------------------------------------------------------------------------------
def _raw_chunk(delta_json: str) -> str:
    return 'data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":' + delta_json + ',"finish_reason":null}]}\n\n'


async def test_an_emoji_split_across_chunks_joins_and_a_lone_surrogate_is_replaced():
    body = [_raw_chunk('{"content":"笑\\ud83d"}'), _raw_chunk('{"content":"\\ude00了"}'),
            _raw_chunk('{"content":"坏\\ud800字"}'), "data: [DONE]\n\n"]
    seen: list[StreamDelta] = []
    with ScriptedServer() as srv:
        srv.script(Reply(body=body))
        model = OpenAIChatModel(srv.base_url, "m", api_key="k", retry_base_wait=0.0)
        try:
            resp = await model.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}]), seen.append)
        finally:
            await model.aclose()
    assert resp.content == "笑😀了坏\ufffd字"
    resp.content.encode("utf-8")
    shown = "".join(d.text for d in seen if d.kind == "content")
    assert shown == "笑😀了坏\ufffd字"
    assert any(d.kind == "notice" for d in seen)


async def test_a_lone_surrogate_in_tool_arguments_never_loses_the_beat(tmp_path):
    card = _card(tmp_path)
    bad = {"tool_calls": [{"name": "draft_write", "arguments": '{"version": 0, "content": "半个\\ud800表情"}'}]}
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[bad, seal()], scribe=['{"patch": {}}']))
    res = await chat.send("你好")
    assert res.sealed and res.final == "半个\ufffd表情"
    assert any("代理字符" in a for a in res.activity)
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert again.load_warnings == [] and again.transcript()[-1]["text"] == "半个\ufffd表情"


def test_a_session_line_with_a_lone_surrogate_is_still_saved(tmp_path):
    from liyuan_desktop.core.session.tree import SessionTree

    t = SessionTree.create(tmp_path / "s.jsonl", title="t")
    t.append("user", text="坏\ud800字")
    t.commit()
    assert SessionTree.open(tmp_path / "s.jsonl").latest("user").text == "坏\ufffd字"
