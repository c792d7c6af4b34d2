"""Issue 18 §0, the client's side of the wire, against a real HTTP server on loopback: every request carries an
output cap and ``tool_choice: "auto"`` with tools; a provider may be non-streaming; an empty reply is not a network
error; configuration and context-size errors are not retried and say the fix; usage is estimated (and marked) when
the server sends none."""

from __future__ import annotations

import pytest

try:
    from sse_server import ScriptedServer, chunk, json_reply, sse_reply, usage_chunk
except ImportError:  # tests/ collected as a package
    from tests.sse_server import ScriptedServer, chunk, json_reply, sse_reply, usage_chunk

from liyuan_desktop.core.llm import ChatMessage, ChatRequest, ModelError, OpenAIChatModel, ProviderSettings, build_model
from liyuan_desktop.core.llm.errors import classify_error, server_window
from liyuan_desktop.core.llm.types import StreamDelta, Usage
from liyuan_desktop.core.llm.usage import parse_usage
from liyuan_desktop.core.messages import render

TOOL = {"type": "function", "function": {"name": "draft_write", "description": "write",
                                         "parameters": {"type": "object", "properties": {}}}}


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


_models: list[OpenAIChatModel] = []


@pytest.fixture(autouse=True)
async def _close():
    yield
    while _models:
        await _models.pop().aclose()


def provider(srv: ScriptedServer, **kw) -> ProviderSettings:
    return ProviderSettings(name="local", base_url=srv.base_url, model="m", **kw)


def model_for(p: ProviderSettings, **kw) -> OpenAIChatModel:
    kw.setdefault("retry_base_wait", 0.0)
    kw.setdefault("api_key", "")
    m = build_model(p, **kw)
    _models.append(m)
    return m


def req(purpose: str = "actor", **kw) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="system", content="你是演员。"), ChatMessage(role="user", content="你好")],
                       purpose=purpose, **kw)


async def test_every_request_carries_the_provider_cap_and_tool_choice(server):
    server.script(*(sse_reply(chunk("好", finish="stop")) for _ in range(4)))
    m = model_for(provider(server))  # defaults: actor 2048, scribe 1024
    await m.complete(req(tools=[TOOL]))
    await m.complete(req("scribe", max_tokens=2048))
    await m.complete(req("summary"))
    m2 = model_for(provider(server, max_tokens=0, scribe_max_tokens=None))  # 0 / None = send no cap
    await m2.complete(req())
    actor, scribe, summary, uncapped = [r.json for r in server.requests]
    assert actor["max_tokens"] == 2048 and actor["tool_choice"] == "auto" and actor["tools"] == [TOOL]
    assert scribe["max_tokens"] == 1024 and "tool_choice" not in scribe  # the request's 2048 lowered to the cap
    assert summary["max_tokens"] == 1024
    assert "max_tokens" not in uncapped and "tool_choice" not in uncapped


async def test_non_streaming_provider_gives_the_same_result_and_deltas(server):
    answer = {"id": "x", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
              "message": {"role": "assistant", "content": "先写。", "reasoning_content": "想一想",
                          "tool_calls": [{"id": "c1", "type": "function",
                                          "function": {"name": "draft_write", "arguments": "{\"a\": 1}"}}]}}],
              "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    server.script(json_reply(answer))
    m = model_for(provider(server, stream=False))
    seen: list[StreamDelta] = []
    resp = await m.complete(req(tools=[TOOL]), on_delta=seen.append)
    body = server.requests[0].json
    assert body["stream"] is False and "stream_options" not in body
    assert resp.content == "先写。" and resp.reasoning == "想一想" and resp.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [("c1", "draft_write", '{"a": 1}')]
    assert resp.usage.total_tokens == 15 and not resp.usage.estimated
    kinds = {d.kind for d in seen}
    assert {"content", "reasoning", "tool_name", "tool_args"} <= kinds


async def test_a_stream_with_nothing_in_it_is_an_empty_reply_not_network(server):
    server.script(sse_reply(chunk("", role="assistant"), chunk(finish="stop")))
    m = model_for(provider(server))
    with pytest.raises(ModelError) as info:
        await m.complete(req(tools=[TOOL]))
    assert info.value.kind == "empty"
    assert "空回复" in info.value.message and "empty reply" in render(info.value, "en")
    assert "网络" not in info.value.message
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("status,body,what", [
    (500, {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}, "jinja"),
    (400, {"error": {"message": "registry.ollama.ai/library/gemma:2b does not support tools"}}, "tools"),
    (500, {"error": {"message": "Unrecognized request argument supplied: tool_choice"}}, "tools"),
])
async def test_configuration_errors_are_not_retried_and_name_the_fix(server, status, body, what):
    server.script(*(json_reply(body, status=status) for _ in range(5)))
    m = model_for(provider(server), max_retries=4)
    with pytest.raises(ModelError) as info:
        await m.complete(req(tools=[TOOL]))
    assert len(server.requests) == 1  # no retries: the same body fails the same way
    err = info.value
    assert err.kind == "config" and err.config == what and err.hint and err.hint in err.message
    if what == "jinja":
        assert "--jinja" in err.hint and "请稍后再试" not in err.message


async def test_a_plain_server_error_is_still_retried(server):
    server.script(json_reply({"error": {"message": "overloaded"}}, status=503), sse_reply(chunk("好", finish="stop")))
    m = model_for(provider(server), max_retries=2)
    resp = await m.complete(req())
    assert resp.content == "好" and len(server.requests) == 2


async def test_context_errors_tell_both_windows_and_are_not_retried(server):
    llamacpp = {"error": {"code": 500, "message": "the request exceeds the available context size. try increasing "
                          "the context size or enable context shift", "type": "exceed_context_size_error",
                          "n_prompt_tokens": 9000, "n_ctx": 4096}}
    server.script(*(json_reply(llamacpp, status=500) for _ in range(5)))
    m = model_for(provider(server, context_window=32768), max_retries=4)
    with pytest.raises(ModelError) as info:
        await m.complete(req())
    err = info.value
    assert len(server.requests) == 1
    assert err.kind == "context" and err.server_window == 4096
    assert "4096" in err.message and "32768" in err.message


def test_context_window_parsed_from_the_usual_wordings():
    assert server_window("This model's maximum context length is 8,192 tokens. However, you requested 9000") == 8192
    assert server_window("Requested tokens (5000) exceed context window of 4096") == 4096
    assert server_window("the model is loaded with context length of only 2048 tokens") == 2048
    assert classify_error(400, "This model's maximum context length is 8192 tokens")[0] == "context"
    assert classify_error(503, "overloaded") is None
    assert classify_error(400, "max_tokens is too large") is None


async def test_usage_is_estimated_and_marked_when_the_server_sends_none(server):
    server.script(sse_reply(chunk("月色如水，她轻声道。"), chunk(finish="stop")),
                  sse_reply(chunk("好"), chunk(finish="stop"), usage_chunk({"prompt_tokens": 7, "completion_tokens": 1})))
    m = model_for(provider(server))
    resp = await m.complete(req())
    assert resp.usage.estimated and resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.usage.model_dump(exclude={"raw"})["estimated"] is True
    assert parse_usage(resp.usage.model_dump(exclude={"raw"})).estimated  # kept through a saved dict
    real = await m.complete(req())
    assert not real.usage.estimated and real.usage.prompt_tokens == 7
    assert "estimated" not in Usage().model_dump()  # usage saved before the flag reads the same
