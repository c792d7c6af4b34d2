"""Issue 30 §1: a small model on a local llama.cpp server writes a fresh beat with the DRY sampler on.

The real 1.5B (llama.cpp, one thread; the first prose-only reply to each of the bench's three lore questions,
llama.cpp seeds 1–4, the server's temperature): without DRY 4 of 12 replies copied the opening's second paragraph
and 6 of 12 used a lorebook-only fact; with DRY none copied it and 10 of 12 used one (``bench/lore_uptake.py``
measures the engine's own first requests). So a role-play call with nothing of its own to quote yet (``ChatRequest.fresh``: the
draft is empty) gets ``sampling.LOCAL_DRY`` from a local llama.cpp client unless the user's sampling sets DRY; a call
that may quote verbatim (the draft has text: draft_edit; agent mode; the scribe) never does, nor a hosted server.
The loopback server is a real HTTP server; the replies are scripted, not recordings.
"""

from __future__ import annotations

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.sampling import DRY_FIELDS, LOCAL_DRY, Sampling, apply_sampling, local_dry
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
ASK = "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」"
PROSE = ("*青梧放下手里的干布，抬眼看了看你肩头的雨水，没有急着答话。*\n\n「听雨轩啊，开了快一百年了。」她把茶盏往你面前推了"
         "推，「后院那株老梨树，比这客栈还老些。」\n\n*檐下的铜铃又响了一声，雨势没有要停的意思。*")
SCRIBE = sse_reply(chunk('{"patch": {}}', model=MODEL), chunk(finish="stop", model=MODEL))


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def request(fresh: bool, sampling: Sampling | None = None) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="hi")], fresh=fresh, sampling=sampling)


def test_a_fresh_call_to_a_local_llamacpp_server_gets_dry_with_the_window_as_its_range():
    m = OpenAIChatModel("http://127.0.0.1:8080/v1", MODEL, None, context_window=16384)
    body = m.build_body(request(True))
    assert {k: body[k] for k in LOCAL_DRY} == LOCAL_DRY and body["dry_penalty_last_n"] == 16384
    assert not any(f in m.build_body(request(False)) for f in DRY_FIELDS)  # a call that may quote: none
    assert local_dry(None)["dry_penalty_last_n"] == 8192 and local_dry(10**9)["dry_penalty_last_n"] == 131072


def test_the_users_dry_setting_wins_and_hosted_or_other_servers_get_none():
    m = OpenAIChatModel("http://127.0.0.1:8080/v1", MODEL, None)
    body = m.build_body(request(True, Sampling(dry_multiplier=0)))  # the user turned DRY off
    assert body["dry_multiplier"] == 0 and "dry_base" not in body
    ollama = OpenAIChatModel("http://127.0.0.1:11434/v1", MODEL, None)  # no DRY in Ollama's OpenAI layer
    assert not any(f in ollama.build_body(request(True)) for f in DRY_FIELDS)
    hosted = OpenAIChatModel("https://api.openai.com/v1", "gpt-4o", "k", provider="openai")
    assert not any(f in hosted.build_body(request(True)) for f in DRY_FIELDS)
    body: dict = {}
    dropped = apply_sampling(body, Sampling(dry_multiplier=0.8, dry_allowed_length=3), "openai")
    assert body == {} and len(dropped) == 2  # said, not sent
    apply_sampling(body, Sampling(dry_multiplier=0.8, dry_penalty_last_n=4096), "llamacpp")
    assert body == {"dry_multiplier": 0.8, "dry_penalty_last_n": 4096}


def test_sampling_pairs_read_the_dry_fields_and_refuse_minus_one():
    s = Sampling.from_pairs(["dry_multiplier=0.8", "dry_allowed_length=2"])
    assert s.dry_multiplier == 0.8 and s.dry_allowed_length == 2
    with pytest.raises(ValueError):
        Sampling.from_pairs(["dry_penalty_last_n=-1"])  # llama.cpp's server answers 400 for -1


async def play(tmp_path, server, *replies, local: bool = True, prose_only: bool = True, mode: str = "roleplay"):
    server.script(*replies)
    model = OpenAIChatModel(server.base_url.replace("127.0.0.1", "localhost"), MODEL, None, retry_base_wait=0.0,
                            read_timeout=5.0, local=local, provider="llamacpp")
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model, mode=mode)
    if prose_only:
        chat.set_prose_only(True)
    try:
        res = await chat.send(ASK)
    finally:
        await model.aclose()
    return res, [r.json for r in server.requests]


async def test_a_local_prose_only_beat_is_written_with_dry_and_the_scribe_without(tmp_path, server):
    reply = sse_reply(*(chunk(PROSE[i:i + 20], model=MODEL) for i in range(0, len(PROSE), 20)),
                      chunk(finish="stop", model=MODEL))
    res, bodies = await play(tmp_path, server, reply, SCRIBE)
    assert res.sealed
    assert bodies[0]["dry_multiplier"] == 0.8 and bodies[0]["dry_allowed_length"] == 2
    assert all(not any(f in b for f in DRY_FIELDS) for b in bodies[1:])  # the scribe quotes the ledger's keys


async def test_a_hosted_models_beat_and_a_call_after_the_draft_has_text_get_no_dry(tmp_path, server):
    reply = sse_reply(*(chunk(PROSE[i:i + 20], model=MODEL) for i in range(0, len(PROSE), 20)),
                      chunk(finish="stop", model=MODEL))
    _res, bodies = await play(tmp_path / "hosted", server, reply, SCRIBE, local=False)
    assert not any(f in b for b in bodies for f in DRY_FIELDS)
    server.requests.clear()
    write = sse_reply(chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {
        "name": "draft_write", "arguments": '{"content": "' + PROSE.replace("\n", "\\n") + '", "version": 0}'}}],
        model=MODEL), chunk(finish="tool_calls", model=MODEL))
    seal = sse_reply(chunk(tool_calls=[{"index": 0, "id": "c2", "type": "function", "function": {
        "name": "draft_seal", "arguments": '{"version": 1}'}}], model=MODEL), chunk(finish="tool_calls", model=MODEL))
    _res, bodies = await play(tmp_path / "tools", server, write, seal, SCRIBE, SCRIBE, prose_only=False)
    actor = [b for b in bodies if b.get("tools")]
    assert "dry_multiplier" in actor[0]  # nothing of its own to quote yet
    assert len(actor) >= 2 and not any(f in actor[1] for f in DRY_FIELDS)  # the draft has text: edits quote it
