"""Issue 18 §4: the client and the beat loop against what a real server sent.

The transcripts in ``tests/data/wire/`` were recorded from llama.cpp's server (Qwen2.5-Coder-1.5B-Instruct Q4_K_M)
by ``bench/record_wire.py``; the loopback server replays them byte for byte. Covered: SSE keep-alive comments
before the first token, usage in the last chunk (an empty ``choices`` chunk), finish reasons ``stop`` and
``length``, a non-streamed reply, a small model that answers a tool request with a ```json block instead of a tool
call, ``<think>`` in the content channel, and a server without ``--jinja`` that rejects ``tools`` (→ a configuration
error, never retried; the chat falls back to prose-only play with a notice).
"""

from __future__ import annotations

import json

import httpx
import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply
from wire_replay import load, names, replay, sse_payloads, streamed_text

from liyuan_desktop.core.beat.events import Activity, ModelDelta
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.prose_mode import REJECTED_NOTICE
from liyuan_desktop.core.llm import OpenAIChatModel, ProviderSettings, build_model
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.settings import AppSettings, load_settings, save_settings

RECORDED = ["prose_length", "prose_stream", "think_content", "tools_nonstream", "tools_rejected", "tools_stream"]
SCRIBE = sse_reply(chunk('{"patch": {}}'), chunk(finish="stop"))  # scripted: the scribe is not under test here


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def request_of(body: dict) -> ChatRequest:
    """The ChatRequest that produced a recorded body (messages, tools, cap, temperature)."""
    return ChatRequest(messages=[ChatMessage(**m) for m in body["messages"]], tools=body.get("tools") or [],
                       max_tokens=body.get("max_tokens"), temperature=body.get("temperature"))


def client(server, body: dict, **kw) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, body["model"], None, stream=body["stream"], retry_base_wait=0.0,
                           read_timeout=5.0, **kw)


async def complete_recorded(server, name: str, **kw):
    t = load(name)
    server.script(replay(t))
    m = client(server, t.request, **kw)
    try:
        return t, await m.complete(request_of(t.request))
    finally:
        await m.aclose()


def test_every_recorded_case_is_present_and_scrubbed():
    assert set(RECORDED) <= set(names())  # plus the engine cases of tests/test_wire_small_models.py
    for name in names():
        t = load(name)
        text = t.body.decode("utf-8") + repr(t.request) + repr(t.meta)
        assert "/root" not in text and "/home/" not in text and ".cache" not in text  # no local paths
        assert "Bearer" not in text and "sk-" not in text  # no key


async def test_the_loopback_server_replays_byte_for_byte(server):
    for name in RECORDED:
        t = load(name)
        server.script(replay(t))
        async with httpx.AsyncClient() as http:
            async with http.stream("POST", server.base_url + "/chat/completions", json=t.request["body"]) as r:
                got = b"".join([piece async for piece in r.aiter_raw()])
                assert r.status_code == t.status
                assert r.headers["content-type"] == t.headers["content-type"]
        assert got == t.body, name


async def test_our_request_still_has_the_recorded_shape(server):
    """What the client sends now for the recorded request is what the real server accepted then."""
    for name in ("tools_stream", "prose_stream", "tools_nonstream"):
        t = load(name)
        server.script(replay(t))
        m = client(server, t.request["body"])
        await m.complete(request_of(t.request["body"]))
        await m.aclose()
        sent, recorded = server.requests[-1].json, t.request["body"]
        for key in ("model", "messages", "stream", "stream_options", "tools", "tool_choice", "max_tokens",
                    "temperature"):
            assert sent.get(key) == recorded.get(key), (name, key)


async def test_streamed_prose_with_keepalives_and_usage_in_the_last_chunk(server):
    t = load("prose_stream")
    payloads, comments, done = sse_payloads(t.body)
    assert comments >= 1 and done  # llama.cpp sent ":" keep-alives while the prompt was processed
    last = payloads[-1]
    assert last["choices"] == [] and last["usage"]["prompt_tokens"] > 0  # usage rides an empty-choices chunk
    t.request = t.request["body"]
    server.script(replay(t))
    m = client(server, t.request)
    deltas = []
    res = await m.complete(request_of(t.request), on_delta=deltas.append)
    await m.aclose()
    assert res.content == streamed_text(t.body) and res.content
    assert res.finish_reason == "stop" and not res.tool_calls and res.reasoning == ""
    assert res.usage.prompt_tokens == last["usage"]["prompt_tokens"]
    assert res.usage.completion_tokens == last["usage"]["completion_tokens"]
    assert res.usage.cached_tokens == last["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert not res.usage.estimated
    assert "".join(d.text for d in deltas if d.kind == "content") == res.content
    assert not any(":" == d.text for d in deltas)  # keep-alive comments never reach the text


async def test_cut_at_the_output_cap_says_length(server):
    t = load("prose_length")
    assert t.request["body"]["max_tokens"] == 12
    t.request = t.request["body"]
    server.script(replay(t))
    m = client(server, t.request)
    res = await m.complete(request_of(t.request))
    await m.aclose()
    assert res.finish_reason == "length" and res.content == streamed_text(t.body)
    assert res.usage.completion_tokens == sse_payloads(t.body)[0][-1]["usage"]["completion_tokens"] == 12


async def test_a_model_that_answers_a_tool_request_with_a_json_block(server):
    """Tools offered with tool_choice auto: this small model wrote the call as ```json in the content instead (a
    real failure mode: "ignored by the model"); the client reports plain content and no tool call."""
    t = load("tools_stream")
    body = t.request["body"]
    assert body["tools"] and body["tool_choice"] == "auto" and body["stream_options"] == {"include_usage": True}
    _, comments, _ = sse_payloads(t.body)
    assert comments >= 1
    server.script(replay(load("tools_stream")))
    m = client(server, body)
    res = await m.complete(request_of(body))
    await m.aclose()
    assert res.tool_calls == [] and res.finish_reason == "stop"
    assert res.content.startswith("```json") and '"get_weather"' in res.content
    assert res.usage.prompt_tokens > 0 and not res.usage.estimated


async def test_non_streamed_reply(server):
    t = load("tools_nonstream")
    assert t.request["body"]["stream"] is False and "content-length" in t.headers
    server.script(replay(t))
    m = client(server, t.request["body"])
    res = await m.complete(request_of(t.request["body"]))
    await m.aclose()
    assert res.finish_reason == "stop" and res.content.startswith("```json") and not res.tool_calls
    usage = json.loads(t.body)["usage"]
    assert res.usage.prompt_tokens == usage["prompt_tokens"] > 0 and not res.usage.estimated
    assert res.usage.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]


async def test_server_without_jinja_rejects_tools_as_a_config_error_without_retries(server):
    t = load("tools_rejected")
    assert t.status == 500 and b"tools param requires --jinja flag" in t.body
    server.script(replay(t), replay(t), replay(t))
    m = client(server, t.request["body"])
    with pytest.raises(ModelError) as err:
        await m.complete(request_of(t.request["body"]))
    await m.aclose()
    assert err.value.kind == "config" and err.value.config == "jinja" and err.value.status == 500
    assert "--jinja" in err.value.hint
    assert len(server.requests) == 1  # a configuration error is never retried


async def test_rejected_tools_fall_back_to_prose_only_with_a_notice(tmp_path, server):
    save_settings(AppSettings(providers=[ProviderSettings(name="local", base_url=server.base_url,
                                                          model="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")],
                              active_provider="local"))
    model = build_model(load_settings().provider("local"), api_key="", retry_base_wait=0.0, read_timeout=5.0)
    server.script(replay(load("tools_rejected")), replay(load("prose_stream")), SCRIBE)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events: list = []
    try:
        res = await chat.send("我推门进去，走到柜台前。", on_event=events.append)
    finally:
        await model.aclose()
    assert any(isinstance(e, Activity) and e.text == REJECTED_NOTICE for e in events)
    assert server.requests[0].json.get("tools") and "tools" not in server.requests[1].json
    assert res.sealed and res.final == streamed_text(load("prose_stream").body)
    assert chat.prose_only()["on"] and chat.prose_only()["why"] == "rejected"


async def test_think_block_in_the_content_is_reasoning_only(tmp_path, server):
    t = load("think_content")
    recorded = streamed_text(t.body)
    assert recorded.startswith("<think>") and "</think>" in recorded
    thought, answer = recorded[len("<think>"):].split("</think>", 1)
    model = OpenAIChatModel(server.base_url, t.request["body"]["model"], None, retry_base_wait=0.0, read_timeout=5.0)
    server.script(replay(t), SCRIBE)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    chat.set_prose_only(True)
    events: list = []
    try:
        res = await chat.send("我推门进去。", on_event=events.append)
    finally:
        await model.aclose()
    assert res.sealed and res.final == answer.strip()
    assert "<think>" not in res.final and "think>" not in res.final
    reasoning = "".join(e.text for e in events if isinstance(e, ModelDelta) and e.channel == "reasoning")
    assert reasoning == thought
    assert not any(isinstance(e, ModelDelta) and e.channel == "content" and "think>" in e.text for e in events)
