"""Issue 15 item 5: a model call has an idle timeout that counts content (not bytes) and an overall cap.

A real loopback SSE server (tests/sse_server.py) plays the two servers the break-test found: one that only sends
keep-alive comments, one that trickles a character at a time. With small limits both calls end with a
``network`` ModelError carrying what arrived, and a whole beat ends unsealed with the draft kept on disk.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import DEMO_CARD
from sse_server import Reply, ScriptedServer, chunk, sse, sse_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.providers import ProviderSettings, build_model
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.session.tree import SessionTree

DRAFT = "雨还在下。她抬眼看你：「客官要住店？」"
#: generous bound for "it ended by itself" (the limits under test are 0.6-1.2 s); no wall-clock assertion beyond it
STALL_BOUND = 20.0


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def req() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="你好")])


def keepalives(n: int) -> list[str]:
    return [": keep-alive\n\n"] * n


async def _call(model: OpenAIChatModel) -> ModelError:
    try:
        with pytest.raises(ModelError) as info:
            await asyncio.wait_for(model.complete(req()), STALL_BOUND)
        return info.value
    finally:
        await model.aclose()


async def test_keepalive_comments_alone_hit_the_idle_timeout(server):
    # some content first, then only comments (and an empty delta) — bytes keep coming, content does not
    body = [sse(chunk("她抬")), sse(chunk(""))] + keepalives(200)
    server.script(Reply(body=body, gap=0.1))
    model = OpenAIChatModel(server.base_url, "m", "sk-x", retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=0.6, total_timeout=60.0)
    err = await _call(model)
    assert err.kind == "network"
    assert "没有输出新内容" in err.message and "0.6" in err.message
    assert err.partial is not None and err.partial.content == "她抬" and err.partial.finish_reason == "cut"


async def test_keepalives_before_any_content_also_count_as_idle(server):
    # a remote server (local=False: a loopback server reading a long prompt may keep-alive for minutes, issue 30 —
    # tests/test_small_models.py)
    server.script(Reply(body=keepalives(200), gap=0.1))
    model = OpenAIChatModel(server.base_url, "m", None, retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=0.6, total_timeout=60.0, local=False)
    err = await _call(model)
    assert "没有输出新内容" in err.message
    assert err.partial is not None and err.partial.content == ""


async def test_a_trickle_of_characters_hits_the_overall_cap(server):
    # one character every 0.15 s: never idle for 1 s, but the whole call is capped at 1.2 s
    server.script(Reply(body=[sse(chunk("字")) for _ in range(300)], gap=0.15))
    model = OpenAIChatModel(server.base_url, "m", "sk-x", retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=1.0, total_timeout=1.2)
    err = await _call(model)
    assert err.kind == "network"
    assert "总时限" in err.message and "1.2" in err.message
    assert err.partial is not None and err.partial.finish_reason == "cut"
    assert 0 < len(err.partial.content) < 300


async def test_content_resets_the_idle_clock(server):
    # 8 pieces 0.3 s apart with an idle limit of 0.8 s: the answer completes (the clock restarts on content)
    pieces = [sse(chunk(c)) for c in "一二三四五六七八"] + [sse(chunk(finish="stop")), "data: [DONE]\n\n"]
    server.script(Reply(body=pieces, gap=0.3))
    model = OpenAIChatModel(server.base_url, "m", "sk-x", retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=0.8, total_timeout=60.0)
    try:
        resp = await asyncio.wait_for(model.complete(req()), STALL_BOUND)
    finally:
        await model.aclose()
    assert resp.content == "一二三四五六七八" and resp.finish_reason == "stop"


def test_limits_are_per_provider_with_generous_defaults():
    p = ProviderSettings(name="x", base_url="http://127.0.0.1:9/v1", model="m")
    assert p.total_timeout == 600.0 and p.idle_timeout >= 60.0
    model = build_model(p.model_copy(update={"idle_timeout": 7.0, "total_timeout": 90.0}), api_key="")
    assert model.idle_timeout == 7.0 and model.total_timeout == 90.0
    assert build_model(p, api_key="").total_timeout == 600.0


def _tool_chunks(call_id: str, name: str, args: dict) -> list[dict]:
    text = json.dumps(args, ensure_ascii=False)
    return [chunk(tool_calls=[{"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": text}}])]


@pytest.mark.parametrize("stall", ["keepalive", "trickle"])
async def test_a_stalled_call_ends_the_beat_unsealed_with_the_draft_kept(tmp_path, server, stall):
    if stall == "keepalive":
        second = Reply(body=[sse(chunk(reasoning="再想想"))] + keepalives(200), gap=0.1)
    else:
        second = Reply(body=[sse(chunk(reasoning="想"))] * 300, gap=0.1)
    server.script(sse_reply(*_tool_chunks("c1", "draft_write", {"version": 0, "content": DRAFT}),
                            chunk(finish="tool_calls")), second)
    model = OpenAIChatModel(server.base_url, "test-model", "sk-test", retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=0.6, total_timeout=1.5)
    try:
        chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
        res = await asyncio.wait_for(chat.send("我推门进去。"), STALL_BOUND)
    finally:
        await model.aclose()
    assert res.outcome == "error" and not res.sealed
    assert ("没有输出新内容" if stall == "keepalive" else "总时限") in (res.error or "")
    tree = SessionTree.open(chat.tree.path)
    beat = tree.latest("beat")
    assert beat.outcome == "error" and beat.draft == DRAFT and beat.draft_version == 1
    assert beat.calls[-1].finish_reason == "cut" and beat.calls[-1].reasoning.startswith(("再想想", "想"))
    assert tree.latest("assistant") is None
