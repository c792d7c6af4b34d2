"""Issue 18, the beat side, over real HTTP on loopback (tests/sse_server.py): what real local models did to the beat.

A cut-off reply (``finish_reason: "length"``) and a looping reply end NOT sealed and the scribe books nothing; Stop
keeps a tool-less reply's streamed prose as the draft; captured prose never seals our injection echoed back or an
imitated opening label; an English chat's scribe writes in English and its user is "User"; an agent reply that
claims edits with no file changed is flagged; the scribe's usage and real model are kept; the agent prompt never
carries the absolute data-folder path.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import DEMO_CARD, load_golden, need_shared
from sse_server import Reply, ScriptedServer, chunk, sse, sse_reply, usage_chunk

from liyuan_desktop.core.beat.echo import strip_echo
from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.beat.repetition import RepetitionGuard
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.agent import NO_EDITS_NOTICE, claims_edits
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger.scribe import SCRIBE_LANGUAGE_LINES
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.prompt.assemble import build_injection

PROSE = "雨还在下。她抬眼看你：「客官要住店？」"
SCRIBE_OK = sse_reply(chunk('{"patch": {"time": "傍晚"}}'), chunk(finish="stop"))


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
async def model(server):
    m = OpenAIChatModel(server.base_url, "test-model", "sk-test", retry_base_wait=0.0, read_timeout=5.0)
    yield m
    await m.aclose()


def pieces(text: str, size: int = 5) -> list[dict]:
    return [chunk(text[i:i + size]) for i in range(0, len(text), size)]


def collect() -> tuple[list, object]:
    events: list = []
    return events, events.append


# -- 1. cut off / looping ------------------------------------------------------------------------------------------
async def test_cut_off_reply_is_kept_unsealed_and_not_booked(tmp_path, server, model):
    server.script(sse_reply(*pieces(PROSE + "她转身去取钥匙，"), chunk(finish="length")))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events, sink = collect()
    res = await chat.send("我推门进去。", on_event=sink)
    assert res.outcome == "unsealed" and not res.sealed and res.final == ""
    assert len(server.requests) == 1  # no scribe call: a cut-off reply is never booked
    pending = chat.pending_draft()
    assert pending is not None and pending.draft == PROSE + "她转身去取钥匙，"
    assert getattr(chat.latest_beat(), "cut", None) == "length"
    assert any(isinstance(e, Activity) and "输出上限" in e.text for e in events)
    fin = [e for e in events if getattr(e, "kind", "") == "beat_finished"][-1]
    assert not fin.sealed and "截断" in fin.message
    # 按现稿收笔 is offered and works: then (only then) the scribe books it
    server.script(SCRIBE_OK)
    sealed = await chat.seal_as_is()
    assert sealed.sealed and len(server.requests) == 2


LOOP_PARA = "他说他会回来的，她一直在等这一天的到来，等到檐下的雨停。\n\n"


async def test_looping_reply_is_stopped_early_flagged_and_not_sealed(tmp_path, server, model):
    body = pieces("她沉默了一会儿。\n\n" + LOOP_PARA * 40, size=6)
    server.script(Reply(body=[sse(c) for c in body] + [sse(chunk(finish="stop")), "data: [DONE]\n\n"], gap=0.002))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events, sink = collect()
    res = await chat.send("你还在等他吗？", on_event=sink)
    assert res.outcome == "unsealed" and not res.sealed
    assert len(server.requests) == 1  # no scribe
    beat = chat.latest_beat()
    assert getattr(beat, "cut", None) == "repetition"
    assert beat.draft.count("他说他会回来的") == 1  # the loop is not kept, its first copy is
    assert beat.draft.startswith("她沉默了一会儿。")
    streamed = "".join(e.text for e in events if getattr(e, "kind", "") == "delta" and e.channel == "content")
    assert streamed.count("他说他会回来的") < 10  # stopped early, not after all 40 copies
    assert any(isinstance(e, Activity) and "重复" in e.text for e in events)
    assert chat.pending_draft() is not None


async def test_looping_draft_write_keeps_its_prose_up_to_the_loop(tmp_path, server, model):
    content = "她沉默了一会儿。\n\n" + LOOP_PARA * 40
    args = json.dumps({"version": 0, "content": content}, ensure_ascii=False)
    body = [chunk(tool_calls=[{"index": 0, "id": "w1", "type": "function", "function": {"name": "draft_write", "arguments": ""}}])]
    body += [chunk(tool_calls=[{"index": 0, "function": {"arguments": args[i:i + 8]}}]) for i in range(0, len(args), 8)]
    server.script(Reply(body=[sse(c) for c in body] + [sse(chunk(finish="tool_calls")), "data: [DONE]\n\n"], gap=0.002))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("你还在等他吗？")
    assert res.outcome == "unsealed" and len(server.requests) == 1
    beat = chat.latest_beat()
    assert getattr(beat, "cut", None) == "repetition"
    assert beat.draft.startswith("她沉默了一会儿。") and beat.draft.count("他说他会回来的") == 1


def test_repetition_guard_kinds_and_no_false_alarm_on_real_prose():
    g = RepetitionGuard()
    text = "Once upon a time. " + "ha" * 1000
    for i in range(0, len(text), 5):
        if g.feed(text[i:i + 5]):
            break
    assert g.reason == "periodic" and g.text[:g.keep].startswith("Once upon a time.")
    assert len(g.text) < 1200 and len(g.text[:g.keep]) < 80  # stopped early; the loop not kept
    g = RepetitionGuard()
    for _ in range(3):
        g.feed("She said she would wait for him at the ferry.\n")
    assert g.reason in ("paragraph", "sentence")
    # real finals (golden runs) and a long varied text never trip it
    need_shared("golden", "round1.json")
    finals = [load_golden(n)["final"] for n in ("round1.json", "round2.json", "round3.json") if "final" in load_golden(n)]
    card = load_card(DEMO_CARD)
    texts = finals + [card.first_mes, card.description, "\n".join(e.content for e in card.lorebook.entries)]
    for t in texts:
        g = RepetitionGuard()
        for i in range(0, len(t), 3):
            g.feed(t[i:i + 3])
        assert g.reason is None, t[:40]
    g = RepetitionGuard()
    for i in range(20000):  # 20,000 distinct sentences: no alarm, and it keeps up (incremental)
        g.feed(f"第{i}句话写的是第{i * 7}号客人。")
    assert g.reason is None


# -- 2. Stop keeps the streamed prose -----------------------------------------------------------------------------
async def test_stop_keeps_streamed_prose_of_a_tool_less_reply(tmp_path, server, model):
    server.script(Reply(body=[sse(c) for c in pieces(PROSE, 4)], stall=True))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    got: list[str] = []
    seen = asyncio.Event()

    def sink(e):
        if getattr(e, "kind", "") == "delta" and e.channel == "content":
            got.append(e.text)
            if "".join(got) == PROSE:
                seen.set()

    task = asyncio.ensure_future(chat.send("我推门进去。", on_event=sink))
    await asyncio.wait_for(seen.wait(), 10)
    chat.stop()
    res = await asyncio.wait_for(task, 10)
    assert res.outcome == "stopped" and not res.sealed
    pending = chat.pending_draft()
    assert pending is not None and pending.draft == PROSE and pending.outcome == "stopped"
    assert len(server.requests) == 1  # nothing booked


# -- 3. echoes --------------------------------------------------------------------------------------------------------
async def test_echo_of_our_injection_and_opening_label_is_not_sealed(tmp_path, server, model):
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    injection, *_ = chat_prepare(chat, "我推门进去。")
    echo = f"【开场 · 青梧】\n{injection}\n\n{PROSE}"
    server.script(sse_reply(*pieces(echo, 9), chunk(finish="stop")), SCRIBE_OK)
    res = await chat.send("我推门进去。")
    assert res.sealed and res.final == PROSE
    # an echo and nothing else: not sealed, nothing booked
    injection2, *_ = chat_prepare(chat, "再说一遍。")
    server.script(sse_reply(*pieces(injection2, 11), chunk(finish="stop")))
    res2 = await chat.send("再说一遍。")
    assert not res2.sealed and res2.final == ""
    assert len(server.requests) == 3


def chat_prepare(chat, text):
    from liyuan_desktop.core.chat import turn
    return turn.prepare(chat, text)


def test_strip_echo_covers_every_injection_block():
    st = WorldState.model_validate({"time": "傍晚", "location": "客栈", "characters": {"青梧": {"affinity": 3}}})
    inj = build_injection(st, ["听雨轩"], ["听雨轩", "怀瑾"], "zh", summaries=["前情一段。"], constants="【栖水镇】小镇。")
    assert strip_echo(inj, inj) == ""
    no_summary = build_injection(st, ["听雨轩"], ["听雨轩", "怀瑾"], "zh", constants="【栖水镇】小镇。")
    assert strip_echo(no_summary, "") == ""  # reworded/cut echoes go by their headers
    assert strip_echo(no_summary.replace("\n\n", "\n\n\n") + "\n\n" + PROSE, "") == PROSE
    assert strip_echo("【开场・青梧】\n正文。") == "正文。"
    assert strip_echo(PROSE, inj) == PROSE  # nothing to strip: the same string back


# -- 4. the chat's language -----------------------------------------------------------------------------------------
def english_card(tmp_path: Path) -> Path:
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Mira", "description": "Mira keeps the lighthouse on a windy northern island and talks to gulls.",
        "personality": "dry, kind", "scenario": "A storm night at the lighthouse.",
        "first_mes": "*The door bangs open in the wind.* Well, you picked a fine night to visit the lighthouse, stranger.",
        "mes_example": "<START>\n{{user}}: Hello?\n{{char}}: *She squints.* Who's asking?", "tags": [],
        "extensions": {}}}
    p = tmp_path / "mira.json"
    p.write_text(json.dumps(card), "utf-8")
    return p


async def test_english_card_scribe_writes_english_and_user_is_User(tmp_path, server, model):
    server.script(sse_reply(*pieces("She hands you a towel. \"Sit by the fire.\""), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(english_card(tmp_path)), model)
    assert chat.persona == "User"
    res = await chat.send("I shake off the rain.")
    assert res.sealed
    actor, scribe = server.requests[0].json, server.requests[1].json
    assert "User: Hello?" in actor["messages"][0]["content"] and "你:" not in actor["messages"][0]["content"]
    assert scribe["messages"][0]["content"].endswith(SCRIBE_LANGUAGE_LINES["en"])
    assert "User: I shake off the rain." in scribe["messages"][1]["content"]  # the exchange in English (issue 32)


async def test_chinese_scribe_prompt_has_no_language_line(tmp_path, server, model):
    server.script(sse_reply(*pieces(PROSE), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    assert chat.persona == "旅人"  # the card's own persona name
    await chat.send("我推门进去。")
    assert "【语言】" not in server.requests[1].json["messages"][0]["content"]


# -- 5. agent claims ---------------------------------------------------------------------------------------------------
async def test_agent_reply_claiming_edits_without_a_write_is_flagged(tmp_path, server, model):
    server.script(sse_reply(chunk("改好了第三章，节奏更紧了。"), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model, mode="agent")
    events, sink = collect()
    res = await chat.send("把第三章改紧凑一点。", on_event=sink)
    assert res.final == "改好了第三章，节奏更紧了。"
    assert NO_EDITS_NOTICE in res.activity
    assert any(isinstance(e, Activity) and "没有改动任何文件" in e.text for e in events)
    shown = [e.text for e in events if isinstance(e, Activity) and e.text == NO_EDITS_NOTICE]
    assert shown and getattr(shown[0], "key", None) == "agent.no_edits"  # the key reaches the front end (issue 32)
    assert "没有改动任何文件" in " ".join(chat.latest_beat().activity)
    # an honest answer is not flagged
    server.script(sse_reply(chunk("我先看看第三章再说。"), chunk(finish="stop")))
    res2 = await chat.send("你觉得第三章怎么样？")
    assert NO_EDITS_NOTICE not in res2.activity


def test_claims_edits_words():
    for t in ("改好了第三章", "我已修改了结尾", "已经润色过了", "I've updated chapter 3.", "The chapter has been rewritten."):
        assert claims_edits(t), t
    for t in ("我来改一下？", "要不要改第三章", "I will update it.", "Shall I rewrite it?"):
        assert not claims_edits(t), t


# -- 6. smaller ----------------------------------------------------------------------------------------------------------
async def test_scribe_usage_and_model_are_kept_and_inspected(tmp_path, server, model):
    usage = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
    server.script(sse_reply(*pieces(PROSE), chunk(finish="stop")),
                  sse_reply(chunk('{"patch": {}}', model="qwen2.5-3b-instruct"), chunk(finish="stop", model="qwen2.5-3b-instruct"),
                            usage_chunk(usage, model="qwen2.5-3b-instruct")))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("我推门进去。")
    snap = chat.tree.latest("rp-state")
    assert snap.scribe_model == "qwen2.5-3b-instruct"
    assert snap.scribe_usage.get("prompt_tokens") == 321
    reply = chat.tree.latest("assistant")
    calls = chat.inspect_beat(reply.id)
    sc = calls[-1]
    assert sc["purpose"] == "scribe" and sc["model"] == "qwen2.5-3b-instruct" and sc["usage"]["prompt_tokens"] == 321
    assert res.scribe is not None and res.scribe.model == "qwen2.5-3b-instruct"


def test_agent_prompt_never_sends_the_absolute_data_folder(tmp_path, monkeypatch):
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.paths import chat_dir, home

    card = load_card(DEMO_CARD)
    # the data folder outside the home folder: only its name
    chat = Chat.create(chat_dir(card.name, "局A"), card, ReplayModel(actor=[]), mode="agent")
    system = chat.agent_system()
    assert str(home().resolve()) not in system and str(tmp_path) not in system
    assert f"工作目录：…/{home().name}" in system
    # under the home folder: ~/…
    monkeypatch.setenv("HOME", str(tmp_path))
    system = chat.agent_system()
    rel = home().resolve().relative_to(tmp_path.resolve()).as_posix()
    assert f"工作目录：~/{rel}" in system and str(tmp_path) not in system


def test_cli_ctrl_c_keeps_the_streamed_prose_as_an_unsealed_draft(tmp_path):
    """A real SIGINT to ``liyuan chat`` while a reply streams: the beat stops, the streamed prose is the unsealed
    draft in the session (Ctrl-C used to lose it), and the command ends normally."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from liyuan_desktop.core.llm import ProviderSettings
    from liyuan_desktop.core.settings import AppSettings, save_settings

    with ScriptedServer() as srv:
        srv.script(Reply(body=[sse(c) for c in pieces(PROSE, 4)], stall=True))
        home = tmp_path / "home"
        env = {**os.environ, "LIYUAN_HOME": str(home), "LANG": "C.UTF-8"}
        assert os.environ["LIYUAN_HOME"] == str(home)  # (conftest: every test's own data folder)
        save_settings(AppSettings(providers=[ProviderSettings(name="local", base_url=srv.base_url, model="m")],
                                  active_provider="local"))
        p = subprocess.Popen([sys.executable, "-m", "liyuan_desktop", "chat", str(DEMO_CARD), "--chat", "ctrlc",
                              "--provider", "local", "--say", "我推门进去。", "--auto"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 60
        while not srv.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.requests, "the chat never called the model"
        time.sleep(1.0)  # the pieces are out (the server wrote them all before stalling)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    found = list(home.rglob("ctrlc/session.jsonl"))
    assert found
    lines = [json.loads(x) for x in found[0].read_text("utf-8").splitlines()]
    beat = [e for e in lines if e.get("type") == "beat"][-1]
    assert beat["outcome"] == "stopped" and beat["draft"] == PROSE
    assert not any(e.get("type") == "assistant" for e in lines)
