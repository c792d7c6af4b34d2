"""A failed model call is told in the user's language (issue 32 §1): a real loopback HTTP server answers each way a
call can fail (401, 403, 402, 404, 429, 500, 400 with a message, a redirect, a body that is no chat completion, a
stream chunk that is no JSON, a stream cut short, an empty reply, the llama.cpp ``--jinja`` and context-size
errors); for each, the :class:`ModelError` carries a catalog message: rendered in English it has no CJK character,
rendered in Chinese it is the wording the client has always used, and an API key the server echoes in its error is
masked in both languages.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Callable

import pytest
from helpers import DEMO_CARD, ROOT
from sse_server import DONE, Reply, ScriptedServer, chunk, json_reply, sse, sse_reply

from liyuan_desktop.core.llm import ChatMessage, ChatRequest, ModelError, OpenAIChatModel
from liyuan_desktop.core.messages import Msg, message, render

KEY = "sk-test-SECRET-0123456789abcdef"
SAID = f"bad request from you, key {KEY} refused"
MASKED = "bad request from you, key *** refused"
#: Han characters, CJK punctuation and full-width forms (：（）…): none may show in an English message.
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


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


def make_model(srv: ScriptedServer, **kwargs) -> OpenAIChatModel:
    kwargs.setdefault("api_key", KEY)
    kwargs.setdefault("retry_base_wait", 0.0)
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("read_timeout", 5.0)
    model = OpenAIChatModel(srv.base_url, "test-model", **kwargs)
    _models.append(model)
    return model


def req() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="system", content="你是演员。"), ChatMessage(role="user", content="你好")])


def error(status: int, text: str = SAID, **extra) -> Reply:
    return json_reply({"error": {"message": text, **extra}}, status=status)


SAID_ZH = f" 服务器说：{MASKED}"
#: (case id, replies, model options, kind, today's Chinese text as a function of (host, host + path)).
CASES: list[tuple[str, list[Reply], dict, str, Callable[[str, str], str]]] = [
    ("401", [error(401)], {}, "auth",
     lambda h, w: f"API key 无效或无权限 (401)：请在设置里检查 {h} 的密钥是否正确、未过期、有权使用模型 “test-model”。{SAID_ZH}"),
    ("403", [error(403)], {}, "auth",
     lambda h, w: f"API key 无效或无权限 (403)：请在设置里检查 {h} 的密钥是否正确、未过期、有权使用模型 “test-model”。{SAID_ZH}"),
    ("402", [error(402)], {}, "auth", lambda h, w: f"账户余额不足或需要付费 (402)：请检查 {h} 的账户。{SAID_ZH}"),
    ("404", [error(404)], {}, "not_found",
     lambda h, w: f"找不到接口或模型 (404)：请检查 base URL 和模型名。请求地址 {w}，模型 “test-model”。{SAID_ZH}"),
    ("429", [error(429)], {}, "rate_limit",
     lambda h, w: f"请求太频繁，被限流 (429)：已重试 0 次仍不行，请稍后再试，或检查账户额度。{SAID_ZH}"),
    ("429-quota", [error(429, code="insufficient_quota")], {}, "rate_limit",
     lambda h, w: f"额度已用完 (429)：{h} 的账户没有可用额度，请充值或换一个密钥。{SAID_ZH}"),
    ("500", [error(500)], {}, "server", lambda h, w: f"模型服务器出错 (500)：请稍后再试。{SAID_ZH}"),
    ("500-retried", [error(500), error(503)], {"max_retries": 1}, "server",
     lambda h, w: f"模型服务器出错 (503)：已重试 1 次仍失败，请稍后再试。{SAID_ZH}"),
    ("400", [error(400)], {}, "bad_request", lambda h, w: f"请求被服务器拒绝 (400)：{MASKED}"),
    ("400-silent", [Reply(status=400, body=[""], content_type="text/plain", chunked=False)], {}, "bad_request",
     lambda h, w: "请求被服务器拒绝 (400)：服务器没有说明原因"),
    ("redirect", [Reply(status=302, headers={"Location": f"https://other.example/v1?key={KEY}"}, chunked=False)], {},
     "bad_response",
     lambda h, w: "服务器要求重定向 (302) 到 https://other.example/v1?key=***：请把 base URL 改成新的地址。"),
    ("html", [Reply(body=[f"<html><title>Login</title>{KEY}</html>"], content_type="text/html", chunked=False)], {},
     "bad_response",
     lambda h, w: f"服务器的回答不是聊天补全格式（不是 SSE 也不是 JSON）：{w} 可能不是 OpenAI 兼容接口（是否少了 /v1？"
                  "是否被代理或登录页拦截？）。开头是：<html><title>Login</title>***</html>"),
    ("json-not-chat", [json_reply({"hello": KEY})], {}, "bad_response",
     lambda h, w: f"服务器的回答不是聊天补全格式（是 JSON 但不是聊天补全）：{w} 可能不是 OpenAI 兼容接口（是否少了 /v1？"
                  '是否被代理或登录页拦截？）。开头是：{"hello": "***"}'),
    ("mid-stream", [sse_reply(chunk("部分"), {"error": {"code": 502, "message": SAID}}, done=False)], {}, "server",
     lambda h, w: f"模型服务器出错 (502)：请稍后再试。{SAID_ZH}"),
    ("empty", [sse_reply(chunk("", role="assistant"), chunk(finish="stop"))], {}, "empty",
     lambda h, w: "服务器返回了空回复（finish_reason: stop）：没有文字，也没有工具调用。可能是模型不支持工具调用或模板出错、"
                  "输出上限太小，可以换用纯文字演出或检查服务器日志"),
    ("jinja", [error(500, f"tools param requires --jinja flag ({KEY})")], {}, "config",
     lambda h, w: "服务器不接受这个请求 (500)：请用 --jinja 参数启动 llama.cpp 服务器（llama-server --jinja …），"
                  "或在服务商设置里关闭工具调用。服务器说：tools param requires --jinja flag (***)"),
    ("context", [error(400, f"This model's maximum context length is 4096 tokens ({KEY})")],
     {"context_window": 8192}, "context",
     lambda h, w: "提示词超出了模型的上下文 (400)：服务器的上下文窗口是 4096 tokens；梨园按 8192 tokens 计算。"
                  "把服务商设置里的上下文窗口改成 4096，或用更大的上下文启动服务器。"
                  "服务器说：This model's maximum context length is 4096 tokens (***)"),
]


@pytest.mark.parametrize("replies, options, kind, chinese", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_each_failure_is_said_in_english_and_in_todays_chinese(server, replies, options, kind, chinese):
    server.script(*replies)
    model = make_model(server, **options)
    with pytest.raises(ModelError) as info:
        await model.complete(req())
    err = info.value
    assert err.kind == kind
    assert isinstance(err.message, Msg) and err.args[0] is err.message  # carried by key, rendered from the exception
    where = f"{model.host}/v1/chat/completions" if "/v1" in model.url else f"{model.host}/chat/completions"
    zh, en = render(err, "zh"), render(err, "en")
    assert zh == str(err) == chinese(model.host, where)
    assert not CJK.search(en), en
    assert KEY not in zh and KEY not in en
    if "***" in zh:
        assert "***" in en
    # the beat's activity line for a failed call (what the window's activity list shows) nests it by key
    assert not CJK.search(render(message("beat.call_failed", error=err.message), "en"))
    if err.hint:  # the fix alone (the window's prose-mode switch and the probe show it) follows the language too
        assert isinstance(err.hint, Msg) and err.hint in zh and render(err.hint, "en") in en


async def test_no_key_at_all_is_said_in_english(server):
    server.script(error(401, "missing bearer"))
    model = make_model(server, api_key="")
    with pytest.raises(ModelError) as info:
        await model.complete(req())
    zh, en = render(info.value, "zh"), render(info.value, "en")
    assert zh == f"没有设置 API key (401)：{model.host} 需要密钥，请在设置里填写。 服务器说：missing bearer"
    assert en == f"No API key set (401): {model.host} needs a key; enter it in Settings. The server said: missing bearer"


async def test_a_stream_cut_short_is_said_in_english(server):
    server.script(Reply(body=[sse(chunk("第一句。")), sse(chunk(f"未完 {KEY}"))], cut=True))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    err = info.value
    assert err.kind == "network" and err.partial is not None
    zh, en = render(err, "zh"), render(err, "en")
    assert re.fullmatch(r"网络中断：模型输出中途断开，已收到 \d+ 个字符，本次回复不完整，可以重试。\(stream cut: .+\)", zh), zh
    assert en.startswith("Connection lost: the model's output stopped midway after ")
    assert not CJK.search(en), en
    assert KEY not in zh and KEY not in en


async def test_a_stream_chunk_that_is_not_json_is_said_in_english(server):
    server.script(sse_reply(chunk("好"), "data: {" + KEY + " not json", DONE))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    err = info.value
    zh, en = render(err, "zh"), render(err, "en")
    assert err.kind == "bad_response"
    assert zh.startswith("流式数据里有一段不是 JSON：") and en.startswith("A piece of the streamed data is not JSON: ")
    assert not CJK.search(en), en
    assert KEY not in zh and KEY not in en and "***" in en


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cli_says_a_failed_call_in_its_language(tmp_path, lang):
    """``liyuan --lang en chat … --impersonate`` against a server refusing the key: the error on stderr is English
    (no CJK) with the key masked; in Chinese it is today's text."""
    with ScriptedServer() as server:
        server.script(json_reply({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status=401))
        env = {"LIYUAN_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8", "OPENAI_API_KEY": KEY}
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", lang, "chat", str(DEMO_CARD),
                            "--provider", "openai", "--base-url", server.base_url, "--model", "m", "--impersonate"],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 1
    line = r.stderr.strip().splitlines()[-1]
    host = server.base_url.split("://", 1)[1].split("/", 1)[0]
    if lang == "en":
        assert line == (f"liyuan: The API key is invalid or not allowed (401): check in Settings that the key for {host} "
                        "is correct, not expired and allowed to use the model “m”. The server said: Incorrect API key "
                        "provided: ***")
        assert not CJK.search(line)
    else:
        assert line == (f"liyuan: API key 无效或无权限 (401)：请在设置里检查 {host} 的密钥是否正确、未过期、有权使用模型 “m”。"
                        " 服务器说：Incorrect API key provided: ***")
    assert KEY not in r.stderr


async def test_a_review_whose_model_call_failed_keeps_the_error_by_key(server):
    """A chapter review's ``model_error`` (shown by the writing pane and ``liyuan story review``) keeps the catalog
    message through the pydantic result, so it renders in English."""
    from liyuan_desktop.core.story.review import ChapterReviewResult

    server.script(error(500))
    with pytest.raises(ModelError) as info:
        await make_model(server).complete(req())
    result = ChapterReviewResult(file="ch1.md", model_error=message("llm.review.failed", error=info.value.message))
    en = render(result.model_error, "en")
    assert en == f"The review call failed: The model server failed (500): try again later. The server said: {MASKED}"
    assert render(result.model_error, "zh") == f"审稿调用失败：模型服务器出错 (500)：请稍后再试。{SAID_ZH}"


async def test_the_replay_model_running_out_is_said_in_english():
    """The offline demo's replay model out of recorded answers: English without CJK, Chinese as it always was."""
    from liyuan_desktop.core.llm.replay import ReplayModel

    model = ReplayModel([{"content": "一句"}])
    await model.complete(req())
    with pytest.raises(ModelError) as info:
        await model.complete(req())
    zh, en = render(info.value, "zh"), render(info.value, "en")
    assert zh == ("回放脚本已播完：演员（actor）的 1 条录制回复都已用完，第 2 次调用没有可回放的内容。"
                  "回放模型只能重演录好的对话。")
    assert en == ("The replay script is used up: all 1 recorded actor replies have been played, call 2 has nothing "
                  "to replay. The replay model can only replay a recorded chat.")


async def test_a_read_timeout_mid_stream_is_said_in_english(server):
    """The server stops sending mid-answer: the error that ends the wait (a read timeout or the idle clock) says so
    in English without CJK, and keeps what came as the partial answer."""
    server.script(Reply(body=[sse(chunk("开头"))], stall=True))
    with pytest.raises(ModelError) as info:
        await make_model(server, read_timeout=0.5, idle_timeout=0.5).complete(req())
    err = info.value
    assert err.kind == "network" and err.partial is not None and err.partial.content == "开头"
    zh, en = render(err, "zh"), render(err, "en")
    assert "本次回复不完整" in zh and "incomplete" in en, (zh, en)
    assert not CJK.search(en), en
