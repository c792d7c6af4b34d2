"""Issue 14 §3: a preset's sampling, a connection profile's and a chat's own overrides reach the request body of a
real loopback HTTP server, as each provider takes them; switching the preset mid-chat is kept and announced."""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.profiles import ConnectionProfile
from liyuan_desktop.core.llm.providers import ProviderSettings, build_model
from liyuan_desktop.core.llm.sampling import Sampling, apply_sampling, provider_kind
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.store import install_preset
from liyuan_desktop.core.settings import AppSettings

DRAFT = "雨还在下。她抬眼看你：「客官要住店？」"


def tool_calls(call_id: str, name: str, args: dict) -> list[dict]:
    return [chunk(tool_calls=[{"index": 0, "id": call_id, "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]),
            chunk(finish="tool_calls")]


#: each beat's prose differs: a local model's reply that copies an earlier one is not sealed (issue 30)
_BEATS = [DRAFT, "她把钥匙推过柜台：「楼上靠河那间。」", "更夫敲过二更，楼下的灯一盏盏熄了。", "天亮时雨停了，河上起了雾。"]
_played = [0]


def script_beat(server: ScriptedServer) -> None:
    """One sealed beat (write, seal) and the scribe's answer."""
    text = _BEATS[_played[0] % len(_BEATS)]
    _played[0] += 1
    server.script(sse_reply(*tool_calls("c1", "draft_write", {"version": 0, "content": text})),
                  sse_reply(*tool_calls("c2", "draft_seal", {"version": 1})),
                  sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")))


def write_preset(name: str, **sampling) -> str:
    src = home() / f"{name}.json"
    body = {"prompts": [{"identifier": "main", "name": "Main Prompt", "content": f"预设{name}的主提示"}],
            "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True},
                                                                {"identifier": "chatHistory", "enabled": True}]}],
            **sampling}
    src.write_text(json.dumps(body, ensure_ascii=False), "utf-8")
    return install_preset(src).name


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


async def test_preset_sampling_and_chat_overrides_reach_the_request_body(tmp_path, server):
    name = write_preset("采样", temperature=1.15, top_p=0.92, top_k=40, min_p=0.05, frequency_penalty=0.3,
                        presence_penalty=0.2, repetition_penalty=1.1, openai_max_tokens=300, stream_openai=True,
                        reasoning_effort="max")
    # "other": an unknown OpenAI-compatible server gets every field under its OpenAI/OpenRouter name
    model = OpenAIChatModel(server.base_url, "m", "sk-x", retry_base_wait=0.0, read_timeout=5.0, provider="other")
    try:
        from liyuan_desktop.core.prompt.presets.store import load_installed_preset

        chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model, preset=load_installed_preset(name))
        script_beat(server)
        res = await chat.send("我推门进去。")
        assert res.outcome == "sealed"
        actor = server.requests[0].json
        for key, value in {"temperature": 1.15, "top_p": 0.92, "top_k": 40, "min_p": 0.05, "frequency_penalty": 0.3,
                           "presence_penalty": 0.2, "repetition_penalty": 1.1, "reasoning_effort": "high",
                           "stream": True}.items():
            assert actor[key] == value, key
        assert "max_tokens" not in actor  # the preset's 300-token cap would cut draft_write (reported, not sent)
        scribe = server.requests[2].json
        assert scribe["temperature"] == 0.2 and "top_k" not in scribe  # the scribe keeps its own settings
        # the chat's own overrides win, and survive reopening
        chat.set_sampling(Sampling(temperature=0.6, max_tokens=4096, stop=["<END>"]))
        again = Chat.open(tmp_path / "c", load_card(DEMO_CARD), model)
        assert again.sampling_overrides() == Sampling(temperature=0.6, max_tokens=4096, stop=["<END>"])
        script_beat(server)
        await again.send("我坐下。")
        actor2 = server.requests[3].json
        assert actor2["temperature"] == 0.6 and actor2["max_tokens"] == 4096 and actor2["stop"] == ["<END>"]
        assert actor2["top_k"] == 40  # the rest still from the preset
    finally:
        await model.aclose()


async def test_provider_kinds_take_what_they_accept(server):
    s = Sampling(temperature=0.8, top_k=30, min_p=0.1, repetition_penalty=1.2, reasoning_effort="min",
                 stop=["a", "b", "c", "d", "e"], seed=7)
    body: dict = {}
    dropped = apply_sampling(body, s, "deepseek")
    assert body == {"temperature": 0.8, "stop": ["a", "b", "c", "d", "e"]}
    assert any("top_k" in d for d in dropped) and any("reasoning_effort" in d for d in dropped)
    body = {}
    apply_sampling(body, s, "openai")
    assert body["stop"] == ["a", "b", "c", "d"] and body["reasoning_effort"] == "low" and "top_k" not in body
    body = {}
    apply_sampling(body, s, "openrouter")
    assert body["reasoning"] == {"effort": "low"} and body["top_k"] == 30 and body["repetition_penalty"] == 1.2
    body = {}
    apply_sampling(body, s, "llamacpp")
    assert body["repeat_penalty"] == 1.2 and body["min_p"] == 0.1 and "repetition_penalty" not in body
    body = {}
    apply_sampling(body, s, "ollama")
    assert "top_k" not in body and body["seed"] == 7 and body["reasoning_effort"] == "low"
    assert provider_kind("x", "https://api.deepseek.com") == "deepseek"
    assert provider_kind("ollama", "http://127.0.0.1:11434/v1") == "ollama"
    assert provider_kind("mine", "http://127.0.0.1:8080/v1") == "llamacpp"
    # over the wire: a DeepSeek-kind client (a loopback server standing in for it) sends no top_k
    prov = ProviderSettings(name="deepseek", base_url=server.base_url, model="deepseek-chat")
    m = build_model(prov, api_key="k", retry_base_wait=0.0)
    try:
        server.script(sse_reply(chunk("好"), chunk(finish="stop")))
        await m.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")], sampling=s))
        sent = server.requests[0].json
        assert sent["temperature"] == 0.8 and "top_k" not in sent and "min_p" not in sent
        assert any("top_k" in d for d in m.sampling_dropped)
    finally:
        await m.aclose()


async def test_stream_off_sends_a_plain_request(server):
    m = OpenAIChatModel(server.base_url, "m", retry_base_wait=0.0)
    try:
        body = m.build_body(ChatRequest(messages=[ChatMessage(role="user", content="x")], sampling=Sampling(stream=False)))
        assert body["stream"] is False and "stream_options" not in body
    finally:
        await m.aclose()


async def test_changing_the_preset_mid_chat_is_kept_and_announced_once(tmp_path, server):
    a = write_preset("甲", temperature=0.5)
    b = write_preset("乙", temperature=1.3)
    model = OpenAIChatModel(server.base_url, "m", retry_base_wait=0.0, read_timeout=5.0, provider="other")
    try:
        from liyuan_desktop.core.prompt.presets.store import load_installed_preset

        chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model, preset=load_installed_preset(a))
        script_beat(server)
        await chat.send("第一拍。")
        first_system = server.requests[0].json["messages"][0]["content"]
        assert "预设甲的主提示" in first_system and server.requests[0].json["temperature"] == 0.5
        notice = chat.set_preset(b)
        assert "乙" in notice and chat.preset_name() == b
        events: list = []
        script_beat(server)
        await chat.send("第二拍。", on_event=events.append)
        assert [e.text for e in events if getattr(e, "kind", "") == "activity" and e.text == notice] == [notice]
        sent = server.requests[3].json
        assert "预设乙的主提示" in sent["messages"][0]["content"] and sent["temperature"] == 1.3
        events.clear()
        script_beat(server)
        await chat.send("第三拍。", on_event=events.append)
        assert not [e for e in events if getattr(e, "kind", "") == "activity" and "预设" in e.text]  # told once
        assert server.requests[6].json["messages"][0]["content"] == sent["messages"][0]["content"]  # stable again
        reopened = Chat.open(tmp_path / "c", load_card(DEMO_CARD), model)
        assert reopened.preset_name() == b and "预设乙的主提示" in reopened.system
        reopened.set_preset(None)
        assert Chat.open(tmp_path / "c", load_card(DEMO_CARD), model).preset_name() == ""
        # the settings entries sit outside every branch: the transcript and the branch tree are unchanged
        assert [n["beat"] for n in reopened.branch_tree()] == [1, 2, 3]
    finally:
        await model.aclose()


def test_profile_switch_changes_provider_model_preset_and_sampling():
    s = AppSettings(providers=[ProviderSettings(name="deepseek", base_url="https://api.deepseek.com", model="deepseek-chat"),
                               ProviderSettings(name="local", base_url="http://127.0.0.1:8080/v1", model="q")],
                    active_provider="deepseek", default_preset="默认的",
                    profiles=[ConnectionProfile(name="本地夜跑", provider="local", model="qwen3-32b", preset="乙",
                                                sampling=Sampling(temperature=0.9, min_p=0.05)),
                              ConnectionProfile(name="云端", provider="deepseek", model="deepseek-reasoner", preset="")])
    assert s.preset_for_new_chat() == "默认的" and s.profile_sampling() is None
    s.use_profile("本地夜跑")
    assert s.active_provider == "local" and s.active().model == "qwen3-32b"
    assert s.preset_for_new_chat() == "乙" and s.profile_sampling() == Sampling(temperature=0.9, min_p=0.05)
    s.use_profile("云端")
    assert s.active_provider == "deepseek" and s.active().model == "deepseek-reasoner"
    assert s.preset_for_new_chat() == "默认的"  # a profile without a preset leaves the default
    again = AppSettings.model_validate(json.loads(json.dumps(s.model_dump(mode="json"))))
    assert again.active_profile == "云端" and again.profile("本地夜跑").sampling.min_p == 0.05
    with pytest.raises(KeyError):
        s.use_profile("没有")


def test_cli_sample_overrides_are_kept_on_the_chat(tmp_path):
    import os
    import subprocess
    import sys

    from helpers import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "liyuan_desktop.cli", "chat", "--demo", "--auto", "--json", "--delay-ms", "0",
            "--chat", "采样", "--sample", "temperature=0.5", "--sample", "stop=<END>", "--sample", "stream=false"]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    d = next(p for p in (home() / "cards").glob("*/对话/采样"))
    chat = Chat.open(d, load_card(DEMO_CARD), OpenAIChatModel("http://127.0.0.1:9", "m"))
    assert chat.sampling_overrides() == Sampling(temperature=0.5, stop=["<END>"], stream=False)
    bad = subprocess.run(args[:-6] + ["--chat", "坏", "--sample", "temperature=9"], capture_output=True, text=True,
                         env=env, timeout=300, cwd=ROOT)
    assert bad.returncode == 2 and "temperature" in bad.stderr
