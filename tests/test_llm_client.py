"""Tests of the model clients: the streaming HTTP client against a real local server, the replay model,
provider settings."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from types import SimpleNamespace

import pytest

try:
    from sse_server import Reply, ScriptedServer, chunk, json_reply, sse, sse_reply, usage_chunk
except ImportError:  # tests/ collected as a package
    from tests.sse_server import Reply, ScriptedServer, chunk, json_reply, sse, sse_reply, usage_chunk

from liyuan_desktop.core.llm import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    ModelError,
    OpenAIChatModel,
    ProviderSettings,
    ReplayModel,
    StreamDelta,
    build_model,
    preset,
    resolve_api_key,
    store_api_key,
)
from liyuan_desktop.core.llm import errors as llm_errors

KEY = "sk-test-SECRET-0123456789abcdef"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_draft",
            "description": "Write to the draft.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        },
    }
]


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


_open_models: list[OpenAIChatModel] = []


@pytest.fixture(autouse=True)
async def _close_models():
    """Close the connection pools of the models a test made (no unclosed-socket warnings)."""
    yield
    while _open_models:
        await _open_models.pop().aclose()


def make_model(srv: ScriptedServer, **kwargs) -> OpenAIChatModel:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("retry_base_wait", 0.0)
    kwargs.setdefault("connect_timeout", 2.0)
    kwargs.setdefault("read_timeout", 5.0)
    model = OpenAIChatModel(srv.base_url, "test-model", **kwargs)
    _open_models.append(model)
    return model


def req(text: str = "你好", **kwargs) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="system", content="你是演员。"), ChatMessage(role="user", content=text)],
                       **kwargs)


class Deltas:
    def __init__(self) -> None:
        self.items: list[StreamDelta] = []

    def __call__(self, delta: StreamDelta) -> None:
        self.items.append(delta)

    def text(self, kind: str) -> str:
        return "".join(d.text for d in self.items if d.kind == kind)

    def kinds(self) -> list[str]:
        return [d.kind for d in self.items]


# ---------------------------------------------------------------------------------------------------------------
# streaming


async def test_plain_content_stream(server):
    server.script(sse_reply(
        chunk("", role="assistant"), chunk("月色"), chunk("如水，"), chunk("她轻声道。"), chunk(finish="stop"),
    ))
    deltas = Deltas()
    model = make_model(server)
    resp = await model.complete(req(), on_delta=deltas)
    assert resp.content == "月色如水，她轻声道。"
    assert resp.finish_reason == "stop"
    assert resp.model == "test-model"
    assert resp.tool_calls == []
    assert deltas.text("content") == resp.content
    assert [d.text for d in deltas.items] == ["月色", "如水，", "她轻声道。"]
    assert model.name == f"test-model @ 127.0.0.1:{server.port}"
    assert model.is_replay is False


async def test_reasoning_pieces_and_async_on_delta(server):
    server.script(sse_reply(
        ": keep-alive comment",
        "event: message\n",
        chunk(reasoning="先想"),
        chunk(reasoning="一想。"),
        chunk(reasoning="再想", reasoning_key="reasoning"),  # OpenRouter / Ollama spelling
        chunk("答案"),
        chunk(finish="stop"),
    ))
    seen: list[tuple[str, str]] = []

    async def on_delta(delta: StreamDelta) -> None:
        await asyncio.sleep(0)
        seen.append((delta.kind, delta.text))

    resp = await make_model(server).complete(req(), on_delta=on_delta)
    assert resp.reasoning == "先想一想。再想"
    assert resp.content == "答案"
    assert seen == [("reasoning", "先想"), ("reasoning", "一想。"), ("reasoning", "再想"), ("content", "答案")]


async def test_tool_call_arguments_split_across_chunks(server):
    args = json.dumps({"text": "她推开门，雨声涌进来。", "mode": "append"}, ensure_ascii=False)
    parts = [args[i:i + 7] for i in range(0, len(args), 7)]
    assert len(parts) >= 4
    events = [chunk(tool_calls=[{"index": 0, "id": "call_abc", "type": "function",
                                 "function": {"name": "write_draft", "arguments": ""}}])]
    events += [chunk(tool_calls=[{"index": 0, "function": {"arguments": p}}]) for p in parts]
    events.append(chunk(finish="tool_calls"))
    server.script(sse_reply(*events))
    deltas = Deltas()
    resp = await make_model(server).complete(req(tools=TOOLS), on_delta=deltas)
    assert resp.finish_reason == "tool_calls"
    assert len(resp.tool_calls) == 1
    call = resp.tool_calls[0]
    assert (call.id, call.name) == ("call_abc", "write_draft")
    assert call.arguments == args
    assert json.loads(call.arguments)["mode"] == "append"
    assert deltas.text("tool_name") == "write_draft"
    assert [d.text for d in deltas.items if d.kind == "tool_args"] == parts


async def test_two_tool_calls_interleaved_by_index(server):
    a = json.dumps({"text": "甲"}, ensure_ascii=False)
    b = json.dumps({"query": "乙丙"}, ensure_ascii=False)
    server.script(sse_reply(
        chunk("先说一句。"),
        chunk(tool_calls=[{"index": 1, "id": "call_b", "type": "function", "function": {"name": "lookup", "arguments": ""}}]),
        chunk(tool_calls=[{"index": 0, "id": "call_a", "type": "function", "function": {"name": "write_draft", "arguments": a[:4]}}]),
        chunk(tool_calls=[{"index": 1, "function": {"arguments": b[:5]}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": a[4:]}}]),
        chunk(tool_calls=[{"index": 1, "function": {"arguments": b[5:]}}]),
        chunk(finish="tool_calls"),
    ))
    deltas = Deltas()
    resp = await make_model(server).complete(req(tools=TOOLS), on_delta=deltas)
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("call_a", "write_draft", a),
        ("call_b", "lookup", b),
    ]
    assert resp.content == "先说一句。"
    assert {d.index for d in deltas.items if d.kind == "tool_args"} == {0, 1}


async def test_usage_with_openai_cached_tokens(server):
    usage = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
             "prompt_tokens_details": {"cached_tokens": 1024},
             "completion_tokens_details": {"reasoning_tokens": 30}}
    server.script(sse_reply(chunk("好"), chunk(finish="stop"), usage_chunk(usage)))
    resp = await make_model(server).complete(req())
    u = resp.usage
    assert (u.prompt_tokens, u.completion_tokens, u.total_tokens) == (1200, 80, 1280)
    assert u.cached_tokens == 1024
    assert u.reasoning_tokens == 30
    assert u.raw == usage


async def test_usage_with_deepseek_cache_hit_tokens(server):
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920,
             "prompt_cache_hit_tokens": 640, "prompt_cache_miss_tokens": 260}
    server.script(sse_reply(chunk("好"), chunk(finish="stop"), usage_chunk(usage)))
    resp = await make_model(server).complete(req())
    assert resp.usage.cached_tokens == 640
    assert resp.usage.prompt_tokens == 900
    assert resp.usage.raw["prompt_cache_miss_tokens"] == 260


async def test_finish_reason_without_done_is_fine(server):
    server.script(sse_reply(chunk("完"), chunk(finish="length"), done=False))
    resp = await make_model(server).complete(req())
    assert resp.content == "完"
    assert resp.finish_reason == "length"


async def test_non_stream_json_completion_is_accepted(server):
    server.script(json_reply({
        "id": "chatcmpl-x", "object": "chat.completion", "model": "served-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "整段回答", "reasoning_content": "想过了",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "write_draft", "arguments": "{\"text\": \"x\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }))
    deltas = Deltas()
    resp = await make_model(server).complete(req(), on_delta=deltas)
    assert resp.content == "整段回答"
    assert resp.reasoning == "想过了"
    assert resp.tool_calls[0].name == "write_draft"
    assert resp.tool_calls[0].arguments == '{"text": "x"}'
    assert resp.finish_reason == "tool_calls"
    assert resp.model == "served-model"
    assert resp.usage.total_tokens == 15
    assert deltas.text("content") == "整段回答"


# ---------------------------------------------------------------------------------------------------------------
# request shape


async def test_request_body_and_headers(server):
    server.script(sse_reply(chunk("ok", finish="stop")))
    model = make_model(server, extra_body={"top_p": 0.9})
    await model.complete(req(tools=TOOLS, max_tokens=512, temperature=0.7))
    assert len(server.requests) == 1
    sent = server.requests[0]
    assert sent.method == "POST"
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = sent.json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "test-model"
    assert body["tools"] == TOOLS
    assert body["tool_choice"] == "auto"  # issue 18: llama-cpp-python drops tools without it
    assert body["max_tokens"] == 512
    assert body["temperature"] == 0.7
    assert body["top_p"] == 0.9
    assert body["messages"] == [{"role": "system", "content": "你是演员。"}, {"role": "user", "content": "你好"}]


async def test_no_key_no_auth_header_and_thinking_off_body(server):
    server.script(sse_reply(chunk("a", finish="stop")), sse_reply(chunk("b", finish="stop")))
    model = make_model(server, api_key=None,
                       thinking_off_body={"chat_template_kwargs": {"enable_thinking": False}})
    await model.complete(req())
    await model.complete(req(thinking=False))
    first, second = server.requests
    assert "authorization" not in first.headers
    assert "tools" not in first.json and "max_tokens" not in first.json and "temperature" not in first.json
    assert "chat_template_kwargs" not in first.json
    assert second.json["chat_template_kwargs"] == {"enable_thinking": False}


# ---------------------------------------------------------------------------------------------------------------
# retries


async def test_429_with_retry_after_then_success(server):
    server.script(
        json_reply({"error": {"message": "Rate limit reached"}}, status=429, headers={"Retry-After": "0"}),
        sse_reply(chunk("终于"), chunk(finish="stop")),
    )
    # A large base wait proves Retry-After: 0 was honoured instead of the backoff.
    model = make_model(server, retry_base_wait=5.0)
    t0 = time.monotonic()
    resp = await model.complete(req())
    assert time.monotonic() - t0 < 2.0
    assert resp.content == "终于"
    assert len(server.requests) == 2


async def test_503_twice_then_success(server):
    server.script(
        json_reply({"error": {"message": "overloaded"}}, status=503),
        Reply(status=503, body=["<html>Service Unavailable</html>"], content_type="text/html"),
        sse_reply(chunk("好了"), chunk(finish="stop")),
    )
    resp = await make_model(server, retry_base_wait=0.01).complete(req())
    assert resp.content == "好了"
    assert len(server.requests) == 3


async def test_429_exhausted_gives_rate_limit(server):
    server.script(*[json_reply({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0"})
                    for _ in range(3)])
    with pytest.raises(ModelError) as info:
        await make_model(server, max_retries=2).complete(req())
    assert info.value.kind == "rate_limit"
    assert info.value.status == 429
    assert "429" in info.value.message and "slow down" in info.value.message
    assert len(server.requests) == 3


async def test_500_exhausted_gives_server_error(server):
    server.script(*[json_reply({"error": {"message": "boom"}}, status=500) for _ in range(2)])
    with pytest.raises(ModelError) as info:
        await make_model(server, max_retries=1).complete(req())
    assert info.value.kind == "server"
    assert info.value.status == 500
    assert len(server.requests) == 2


async def test_connection_refused_is_network_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", KEY, max_retries=2, retry_base_wait=0.0,
                            connect_timeout=1.0)
    _open_models.append(model)
    with pytest.raises(ModelError) as info:
        await model.complete(req())
    assert info.value.kind == "network"
    assert "127.0.0.1" in info.value.message
    assert KEY not in info.value.message


def test_backoff_caps_retry_after_and_grows():
    wait = llm_errors.BackoffWait(base=1.0)

    def state(exc, attempt):
        return SimpleNamespace(outcome=SimpleNamespace(exception=lambda: exc), attempt_number=attempt)

    assert wait(state(llm_errors.Retryable(status=429, retry_after=100.0), 1)) == 30.0
    assert wait(state(llm_errors.Retryable(status=429, retry_after=2.5), 1)) == 2.5
    w1 = wait(state(llm_errors.Retryable(status=503), 1))
    w3 = wait(state(llm_errors.Retryable(status=503), 3))
    assert 1.0 <= w1 <= 2.0 and 4.0 <= w3 <= 5.0


# ---------------------------------------------------------------------------------------------------------------
# cuts, timeouts, cancellation


async def test_stream_cut_midway_keeps_partial(server):
    server.script(Reply(body=[sse(chunk("第一句。")), sse(chunk("第二句")), sse(chunk("，未完"))], cut=True))
    deltas = Deltas()
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req(), on_delta=deltas)
    err = info.value
    assert err.kind == "network"
    assert "中途断开" in err.message
    assert err.partial is not None
    assert err.partial.content == "第一句。第二句，未完"
    assert err.partial.finish_reason == "cut"
    assert deltas.text("content") == "第一句。第二句，未完"
    assert len(server.requests) == 1  # never retried once data was shown


async def test_clean_eof_without_done_or_finish_is_a_cut(server):
    server.script(sse_reply(chunk("半句"), done=False))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    assert info.value.kind == "network"
    assert info.value.partial.content == "半句"
    assert info.value.partial.finish_reason == "cut"


async def test_read_timeout_midstream_is_a_cut(server):
    server.script(Reply(body=[sse(chunk("开头"))], stall=True))
    t0 = time.monotonic()
    with pytest.raises(ModelError) as info:
        await make_model(server, read_timeout=0.3).complete(req())
    assert time.monotonic() - t0 < 3.0
    assert info.value.kind == "network"
    assert info.value.partial.content == "开头"
    assert info.value.partial.finish_reason == "cut"


async def test_cancel_midstream_propagates_promptly(server):
    server.script(Reply(body=[sse(chunk("正在"))], stall=True))
    got_first = asyncio.Event()

    def on_delta(delta: StreamDelta) -> None:
        got_first.set()

    task = asyncio.create_task(make_model(server).complete(req(), on_delta=on_delta))
    await asyncio.wait_for(got_first.wait(), timeout=5)
    t0 = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - t0 < 1.0


# ---------------------------------------------------------------------------------------------------------------
# error mapping


async def test_401_is_auth_and_hides_the_key(server):
    server.script(json_reply({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status=401))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    err = info.value
    assert err.kind == "auth"
    assert err.status == 401
    assert "401" in err.message
    assert KEY not in err.message and KEY not in str(err)
    assert len(server.requests) == 1
    assert KEY not in repr(make_model(server))


async def test_404_is_not_found_with_path_and_model(server):
    server.script(json_reply({"error": {"message": "model not found"}}, status=404))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    err = info.value
    assert err.kind == "not_found"
    assert "/v1/chat/completions" in err.message
    assert "test-model" in err.message


async def test_400_is_bad_request_with_server_message(server):
    server.script(json_reply({"error": {"message": "max_tokens is too large"}}, status=400))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    assert info.value.kind == "bad_request"
    assert "max_tokens is too large" in info.value.message
    assert len(server.requests) == 1


async def test_html_body_is_bad_response(server):
    server.script(Reply(body=["<!DOCTYPE html>\n<html><head><title>Login</title></head><body>hi</body></html>\n"],
                        content_type="text/html", chunked=False))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    assert info.value.kind == "bad_response"
    assert "Login" in info.value.message


async def test_in_stream_error_event(server):
    server.script(sse_reply(chunk("部分"), {"error": {"code": 502, "message": "upstream died"}}, done=False))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    assert info.value.kind == "server"
    assert "upstream died" in info.value.message
    assert info.value.partial.content == "部分"


# ---------------------------------------------------------------------------------------------------------------
# replay model


def _actor(content: str, **extra) -> dict:
    return {"content": content, **extra}


async def test_replay_plays_in_order_and_streams_pieces():
    model = ReplayModel(
        [
            {"reasoning": "她会怎么回答？", "content": "月亮升起来了，河面一片银白。",
             "tool_calls": [{"name": "write_draft", "arguments": {"text": "月亮"}}],
             "usage": {"prompt_tokens": 10, "completion_tokens": 4, "prompt_cache_hit_tokens": 8}},
            ChatResponse(content="第二条"),
        ],
        label="演示",
    )
    assert model.is_replay is True
    assert "回放模型" in model.name and "演示" in model.name
    deltas = Deltas()
    first = await model.complete(req(), on_delta=deltas)
    assert first.content == "月亮升起来了，河面一片银白。"
    assert first.tool_calls[0].id == "replay_1"
    assert json.loads(first.tool_calls[0].arguments) == {"text": "月亮"}
    assert first.usage.cached_tokens == 8 and first.usage.total_tokens == 14
    assert first.finish_reason == "tool_calls"
    kinds = deltas.kinds()
    assert kinds.index("reasoning") < kinds.index("content") < kinds.index("tool_name") < kinds.index("tool_args")
    assert kinds.count("content") > 1
    assert deltas.text("content") == first.content
    assert deltas.text("tool_args") == first.tool_calls[0].arguments
    second = await model.complete(req())
    assert second.content == "第二条"


async def test_replay_purposes_kept_apart_and_exhausted():
    model = ReplayModel([_actor("演员一"), _actor("演员二")], scribe=["记录一", {"content": "摘要一"}])
    assert (await model.complete(req(purpose="scribe"))).content == "记录一"
    assert (await model.complete(req())).content == "演员一"
    assert (await model.complete(req(purpose="summary"))).content == "摘要一"
    assert (await model.complete(req())).content == "演员二"
    with pytest.raises(ModelError) as info:
        await model.complete(req())
    assert info.value.kind == "replay_exhausted"
    assert info.value.message.startswith("回放脚本已播完")
    with pytest.raises(ModelError) as info:
        await model.complete(req(purpose="scribe"))
    assert info.value.kind == "replay_exhausted"


async def test_replay_delay_ms():
    model = ReplayModel([_actor("一二三四五六七八九十" * 4)], delay_ms=20)
    t0 = time.monotonic()
    await model.complete(req())
    assert time.monotonic() - t0 >= 0.06


async def test_replay_from_file(tmp_path):
    path = tmp_path / "demo.liyuan-replay.json"
    path.write_text(json.dumps({
        "format": "liyuan-replay", "version": 1, "label": "雨夜",
        "beats": [
            {"user": "敲门", "actor": [
                {"reasoning": "想", "content": "门开了。",
                 "tool_calls": [{"name": "ask", "arguments": "{\"question\": \"谁？\"}"}]},
                {"content": "她笑了。", "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
             ], "scribe": ["<ledger>一</ledger>"], "ask_answers": ["是我"]},
            {"user": "进屋", "actor": [{"content": "屋里很暖。"}], "scribe": ["<ledger>二</ledger>"]},
        ],
    }, ensure_ascii=False), encoding="utf-8")
    model = ReplayModel.from_file(path)
    assert "雨夜" in model.name
    assert [b.user for b in model.beats] == ["敲门", "进屋"]
    assert model.beats[0].ask_answers == ["是我"]
    r1 = await model.complete(req())
    assert r1.tool_calls[0].id == "replay_1" and r1.tool_calls[0].name == "ask"
    assert (await model.complete(req())).usage.total_tokens == 8
    assert (await model.complete(req())).content == "屋里很暖。"
    assert (await model.complete(req(purpose="scribe"))).content == "<ledger>一</ledger>"
    assert (await model.complete(req(purpose="scribe"))).content == "<ledger>二</ledger>"


@pytest.mark.parametrize("text", [
    "{not json",
    json.dumps({"format": "something-else", "version": 1, "beats": []}),
    json.dumps({"format": "liyuan-replay", "version": 2, "beats": []}),
    json.dumps({"format": "liyuan-replay", "version": 1, "beats": [{"user": "x", "actor": [{"tool_calls": [{}]}]}]}),
    json.dumps({"format": "liyuan-replay", "version": 1, "beats": [{"user": "x", "scribe": [42]}]}),
])
def test_replay_broken_file_names_the_file(tmp_path, text):
    path = tmp_path / "broken-demo.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        ReplayModel.from_file(path)
    assert "broken-demo.json" in str(info.value)


def test_replay_missing_file_is_value_error(tmp_path):
    with pytest.raises(ValueError) as info:
        ReplayModel.from_file(tmp_path / "nope.json")
    assert "nope.json" in str(info.value)


# ---------------------------------------------------------------------------------------------------------------
# providers


def test_presets_and_build_model(monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    settings = preset("deepseek")
    assert settings.base_url == "https://api.deepseek.com"
    assert resolve_api_key(settings) == KEY
    model = build_model(settings)
    assert model.name == "deepseek-chat @ api.deepseek.com"
    assert model.url == "https://api.deepseek.com/chat/completions"
    for text in (repr(settings), settings.model_dump_json(), repr(model)):
        assert KEY not in text
    with pytest.raises(Exception):
        ProviderSettings(name="x", base_url="http://h", model="m", api_key=KEY)
    assert preset("ollama").api_key_env is None
    assert build_model(preset("lmstudio"), scribe=True).url == "http://127.0.0.1:1234/v1/chat/completions"


def test_keyring_errors_mean_no_key(monkeypatch):
    import keyring

    def broken(*args, **kwargs):
        raise RuntimeError("no backend")

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(keyring, "get_password", broken)
    monkeypatch.setattr(keyring, "set_password", broken)
    assert resolve_api_key(preset("openai")) is None
    with pytest.raises(RuntimeError) as info:
        store_api_key("openai", KEY)
    assert KEY not in str(info.value)


def test_keyring_used_when_env_empty(monkeypatch):
    import keyring

    store: dict = {}
    monkeypatch.setattr(keyring, "set_password", lambda s, u, p: store.__setitem__((s, u), p))
    monkeypatch.setattr(keyring, "get_password", lambda s, u: store.get((s, u)))
    monkeypatch.setenv("OPENROUTER_API_KEY", "")
    store_api_key("openrouter", KEY)
    assert resolve_api_key(preset("openrouter")) == KEY
