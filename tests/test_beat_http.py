"""Whole beats over real HTTP: the engine drives the OpenAI-compatible client against a loopback SSE server.

Covers the beat loop with streamed, split tool-call arguments and the failure the issue names: a stream cut
mid-beat keeps the draft written so far, ends the beat in a defined state and loses nothing on disk.
"""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import Reply, ScriptedServer, chunk, sse, sse_reply, usage_chunk

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.session.tree import SessionTree

DRAFT = "雨还在下。她抬眼看你：「客官要住店？」"


def tool_call_chunks(index: int, call_id: str, name: str, args: dict, pieces: int = 4) -> list[dict]:
    text = json.dumps(args, ensure_ascii=False)
    size = max(1, len(text) // pieces)
    parts = [text[i:i + size] for i in range(0, len(text), size)]
    out = [chunk(tool_calls=[{"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}])]
    out += [chunk(tool_calls=[{"index": index, "function": {"arguments": p}}]) for p in parts]
    return out


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
async def model(server):
    m = OpenAIChatModel(server.base_url, "test-model", "sk-test-secret", retry_base_wait=0.0, read_timeout=5.0)
    yield m
    await m.aclose()


async def test_beat_over_http_seals_and_scribes(tmp_path, server, model):
    usage = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240, "prompt_cache_hit_tokens": 1024}
    server.script(
        sse_reply(chunk(reasoning="先查设定。"), *tool_call_chunks(0, "c1", "lorebook_search", {"query": "听雨轩"}),
                  *tool_call_chunks(1, "c2", "lorebook_list", {}), chunk(finish="tool_calls"), usage_chunk(usage)),
        sse_reply(*tool_call_chunks(0, "c3", "draft_write", {"version": 0, "content": DRAFT}, pieces=7), chunk(finish="tool_calls")),
        sse_reply(*tool_call_chunks(0, "c4", "draft_seal", {"version": 1}), chunk(finish="tool_calls")),
        sse_reply(chunk('{"patch": {"time": "傍晚", "characters": {"青梧": {"affinity": 3}}}}'), chunk(finish="stop")),
    )
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("我推门进去。")
    assert res.outcome == "sealed" and res.final == DRAFT
    assert res.calls == [["lorebook_search", "lorebook_list"], ["draft_write"], ["draft_seal"]]
    assert "青梧：好感 3" in res.state
    assert len(server.requests) == 4  # no call after the seal but the scribe's
    second = server.requests[1].json
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2"]
    assert json.loads(tool_msgs[0]["content"])[0]["title"] == "听雨轩"
    scribe_req = server.requests[3].json
    assert "tools" not in scribe_req and scribe_req["max_tokens"] == 2048
    beat = SessionTree.open(chat.tree.path).latest("beat")
    assert beat.calls[0].usage["prompt_cache_hit_tokens"] == 1024
    assert "sk-test-secret" not in chat.tree.path.read_text("utf-8")


async def test_stream_cut_mid_beat_keeps_the_draft(tmp_path, server, model):
    server.script(
        sse_reply(*tool_call_chunks(0, "c1", "draft_write", {"version": 0, "content": DRAFT}), chunk(finish="tool_calls")),
        Reply(body=[sse(chunk(reasoning="再补一句")), sse(chunk("她转身"))], cut=True),
    )
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("我推门进去。")
    assert res.outcome == "error" and not res.sealed
    assert "中途断开" in (res.error or "")
    tree = SessionTree.open(chat.tree.path)
    assert tree.latest("user").text == "我推门进去。"
    beat = tree.latest("beat")
    assert beat.outcome == "error" and beat.draft == DRAFT and beat.draft_version == 1
    assert beat.calls[-1].content == "她转身" and beat.calls[-1].finish_reason == "cut"
    assert tree.latest("assistant") is None and tree.latest("rp-state") is None
    # the chat goes on: the next beat works on the same branch
    server.script(
        sse_reply(*tool_call_chunks(0, "c2", "draft_write", {"version": 0, "content": "好。"}), chunk(finish="tool_calls")),
        sse_reply(*tool_call_chunks(0, "c3", "draft_seal", {"version": 1}), chunk(finish="tool_calls")),
        sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")),
    )
    res2 = await chat.send("再说一遍。")
    assert res2.outcome == "sealed" and res2.final == "好。"


async def test_auth_error_ends_beat_with_clear_message(tmp_path, server, model):
    server.script(Reply(status=401, body=['{"error": {"message": "invalid key sk-test-secret"}}'], content_type="application/json", chunked=False))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("你好")
    assert res.outcome == "error"
    assert "401" in res.error and "sk-test-secret" not in res.error
    assert "sk-test-secret" not in chat.tree.path.read_text("utf-8")
