"""Issue 29 item 3: a reply that trickles forever is cut by a minimum output rate, not only by the total deadline.

A real loopback SSE server (tests/sse_server.py) sends one character per gap, for minutes if let: with a test-short
minimum rate (N characters in a window of M seconds, counted from the first character) the call ends with a
catalogued ``network`` error and what had arrived kept as the partial answer; a whole beat ends unsealed with the
draft on disk; ``liyuan chat`` prints the error in ``--lang en`` and ``--lang zh``. The rule's arithmetic
(:class:`MinRate`) is checked on its own, with made-up times.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DEMO_CARD
from sse_server import Reply, ScriptedServer, chunk, sse, sse_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.providers import ProviderSettings, build_model
from liyuan_desktop.core.llm.rate import MinRate
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.messages import render
from liyuan_desktop.core.session.tree import SessionTree

ROOT = Path(__file__).resolve().parents[1]
DRAFT = "雨还在下。她抬眼看你：「客官要住店？」"
#: generous bound for "it ended by itself" (the limits under test are about 1 s); no wall-clock assertion beyond it
STALL_BOUND = 30.0


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def req() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="你好")])


def trickle(n: int = 400, reasoning: bool = False) -> list[str]:
    """``n`` one-character chunks (text or reasoning)."""
    return [sse(chunk(reasoning="想") if reasoning else chunk("字")) for _ in range(n)]


def slow_model(url: str, **kw) -> OpenAIChatModel:
    """Idle and total limits far away: only the minimum rate can end a trickle within the test's bound."""
    args = dict(retry_base_wait=0.0, read_timeout=5.0, idle_timeout=60.0, total_timeout=120.0,
                min_rate_chars=10, min_rate_window=1.0)
    args.update(kw)
    return OpenAIChatModel(url, "m", "sk-x", **args)


async def test_a_trickle_is_cut_by_the_minimum_rate_with_the_text_kept(server):
    # one character every 0.2 s = 5 per second, the rule asks 10 per second: cut about a second after the first
    server.script(Reply(body=trickle(), gap=0.2))
    model = slow_model(server.base_url)
    try:
        with pytest.raises(ModelError) as info:
            await asyncio.wait_for(model.complete(req()), STALL_BOUND)
    finally:
        await model.aclose()
    err = info.value
    assert err.kind == "network" and err.message.key == "llm.deadline.rate"
    assert "输出太慢" in err.message and "最近 1 秒" in err.message and "下限 10 个" in err.message
    en = render(err.message, "en")
    assert "too slowly" in en and "at least 10" in en and "provider settings" in en
    assert err.partial is not None and err.partial.finish_reason == "cut"
    assert 0 < len(err.partial.content) < 400 and set(err.partial.content) == {"字"}


async def test_a_fast_enough_answer_is_not_cut(server):
    # 30 characters, 3 per piece every 0.1 s = 30 per second against a minimum of 10 per second: it completes
    pieces = [sse(chunk("一二三")) for _ in range(10)] + [sse(chunk(finish="stop")), "data: [DONE]\n\n"]
    server.script(Reply(body=pieces, gap=0.1))
    model = slow_model(server.base_url)
    try:
        resp = await asyncio.wait_for(model.complete(req()), STALL_BOUND)
    finally:
        await model.aclose()
    assert resp.content == "一二三" * 10 and resp.finish_reason == "stop"


async def test_the_rule_starts_at_the_first_character(server):
    # keep-alives for a while before any content (a model thinking server-side) are the idle clock's business:
    # the rate rule waits for the first character, then the answer comes fast and completes
    body = [": keep-alive\n\n"] * 6 + [sse(chunk("一二三四五六七八九十" * 2)) for _ in range(5)]
    body += [sse(chunk(finish="stop")), "data: [DONE]\n\n"]
    server.script(Reply(body=body, gap=0.25))
    model = slow_model(server.base_url, idle_timeout=5.0)
    try:
        resp = await asyncio.wait_for(model.complete(req()), STALL_BOUND)
    finally:
        await model.aclose()
    assert len(resp.content) == 100


async def test_zero_switches_the_rule_off(server):
    # the same trickle with min_rate_chars=0 runs until the total limit
    server.script(Reply(body=trickle(), gap=0.2))
    model = slow_model(server.base_url, min_rate_chars=0, total_timeout=1.5)
    try:
        with pytest.raises(ModelError) as info:
            await asyncio.wait_for(model.complete(req()), STALL_BOUND)
    finally:
        await model.aclose()
    assert info.value.message.key == "llm.deadline.total"
    assert "too slowly" not in render(info.value.message, "en")


def test_the_rate_is_per_provider_with_a_generous_default():
    p = ProviderSettings(name="x", base_url="http://127.0.0.1:9/v1", model="m")
    assert p.min_rate_chars == 60 and p.min_rate_window == 60.0  # one character a second, averaged over a minute
    model = build_model(p.model_copy(update={"min_rate_chars": 5, "min_rate_window": 7.0}), api_key="")
    assert (model.min_rate_chars, model.min_rate_window) == (5, 7.0)
    assert ProviderSettings.model_validate({**p.model_dump(), "min_rate_chars": 0}).min_rate_chars == 0


def test_min_rate_arithmetic():
    r = MinRate(10, 5.0)
    assert r.deadline() is None and not r.started
    r.seen(100.0, 3)  # the first content: the rule runs from here, the window ends no earlier than 105
    assert r.deadline() == 105.0
    for t in range(1, 5):  # 4 more pieces of 3 characters, one a second
        r.seen(100.0 + t, 3 + 3 * t)
    # total 15 at t=104; the window must keep more than 15 - 10 = 5 characters behind it: the sample at 101 (6)
    assert r.deadline() == 106.0
    assert r.rate_in_window(104.0) == 15  # every character since the first came in the last 5 s
    r.seen(120.0, 40)  # a burst after a long gap: only the burst is in the window, so 5 s after it
    assert r.deadline() == 125.0 and r.rate_in_window(120.0) == 25
    assert MinRate(0, 5.0).deadline() is None and not MinRate(10, 0).on
    big = MinRate(1, 1.0)
    for i in range(5000):  # old samples are dropped as the window moves: memory stays bounded
        big.seen(i * 0.5, i)
    assert len(big._times) - big._head <= 4 and len(big._times) < 3000


def _tool_chunks(call_id: str, name: str, args: dict) -> list[dict]:
    text = json.dumps(args, ensure_ascii=False)
    return [chunk(tool_calls=[{"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": text}}])]


async def test_a_trickling_call_ends_the_beat_unsealed_with_the_draft_kept(tmp_path, server):
    server.script(sse_reply(*_tool_chunks("c1", "draft_write", {"version": 0, "content": DRAFT}),
                            chunk(finish="tool_calls")),
                  Reply(body=trickle(reasoning=True), gap=0.2))
    model = OpenAIChatModel(server.base_url, "test-model", "sk-test", retry_base_wait=0.0, read_timeout=5.0,
                            idle_timeout=60.0, total_timeout=120.0, min_rate_chars=10, min_rate_window=1.0)
    try:
        chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
        res = await asyncio.wait_for(chat.send("我推门进去。"), STALL_BOUND)
    finally:
        await model.aclose()
    assert res.outcome == "error" and not res.sealed and "输出太慢" in (res.error or "")
    tree = SessionTree.open(chat.tree.path)
    beat = tree.latest("beat")
    assert beat.outcome == "error" and beat.draft == DRAFT and beat.draft_version == 1
    assert beat.calls[-1].finish_reason == "cut" and beat.calls[-1].reasoning.startswith("想")
    assert tree.latest("assistant") is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cli_prints_the_rate_error_in_the_chosen_language(tmp_path, server, lang):
    """``liyuan --lang LANG chat CARD --provider slow --say …`` in a fresh interpreter against the trickling server
    (the provider's rate set in settings.json, as the provider form saves it): exit 1, the error in LANG."""
    server.script(Reply(body=trickle(), gap=0.2))
    home = tmp_path / "home"
    home.mkdir()
    provider = {"name": "slow", "base_url": server.base_url, "model": "m", "api_key_env": None,
                "idle_timeout": 60.0, "total_timeout": 120.0, "min_rate_chars": 10, "min_rate_window": 1.0,
                "stream": True}
    (home / "settings.json").write_text(json.dumps({"providers": [provider], "active_provider": "slow"}), "utf-8")
    env = {**os.environ, "LIYUAN_HOME": str(home), "NO_PROXY": "*"}
    env.pop("LIYUAN_LANG", None)
    run = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", lang, "chat", str(DEMO_CARD),
                          "--provider", "slow", "--say", "我推门进去。", "--auto"],
                         cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=120)
    text = run.stdout + run.stderr
    assert run.returncode == 1, text[-2000:]
    assert "Traceback" not in text
    if lang == "en":
        assert "The model is writing too slowly" in text and "at least 10 are required" in text, text[-2000:]
        assert "输出太慢" not in text
    else:
        assert "模型输出太慢：最近 1 秒" in text, text[-2000:]
