"""Tool calls written as text, and the user's own words echoed back (issue 18 follow-up), over real HTTP on loopback
(tests/sse_server.py) and the recorded llama.cpp transcript ``tests/data/wire/tools_stream`` (tests/wire_replay.py).

A real Qwen2.5-Coder-1.5B wrote its calls as a ```json block in the content: such a block (or ``<tool_call>…``, or a
bare JSON reply) naming an OFFERED tool with VALID arguments runs like a native call; anything else stays prose;
prose-only play parses nothing. A reply that only repeats the user's question is not sealed. In agent mode a
```json write call really writes the file (checkpoint made), and an edit call in text that could not run is flagged.
"""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply
from wire_replay import load, replay

from liyuan_desktop.core.beat.echo import strip_echo
from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.beat.text_calls import find_text_calls, is_text_call, text_call_candidates
from liyuan_desktop.core.beat.tools.registry import get_tool
from liyuan_desktop.core.beat.tools.sets import AGENT_TOOLS, ROLEPLAY_TOOLS
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.agent import NO_EDITS_NOTICE
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.story.checkpoints import StoryHistory

PROSE = "雨还在下。她抬眼看你：「客官要住店？」"
SCRIBE_OK = sse_reply(chunk('{"patch": {"time": "傍晚"}}'), chunk(finish="stop"))
ROLEPLAY = {n: get_tool(n) for n in ROLEPLAY_TOOLS}


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
async def model(server):
    m = OpenAIChatModel(server.base_url, "test-model", "sk-test", retry_base_wait=0.0, read_timeout=5.0)
    yield m
    await m.aclose()


def pieces(text: str, size: int = 7) -> list[dict]:
    return [chunk(text[i:i + size]) for i in range(0, len(text), size)]


def fenced(*calls: dict) -> str:
    body = calls[0] if len(calls) == 1 else list(calls)
    return "```json\n" + json.dumps(body, ensure_ascii=False, indent=2) + "\n```"


def call_logs(chat):
    return [t for c in chat.latest_beat().calls for t in c.tool_calls]


# -- the parser ------------------------------------------------------------------------------------------------------
def test_parser_forms_and_validation():
    write = {"name": "draft_write", "arguments": {"version": 0, "content": PROSE}}
    calls, rest = find_text_calls("好的。\n\n" + fenced(write), ROLEPLAY, tag="1")
    assert [c.name for c in calls] == ["draft_write"] and rest == "好的。"
    assert json.loads(calls[0].arguments) == write["arguments"] and is_text_call(calls[0].id)
    # Hermes/Qwen tags, arguments as a JSON string, two calls
    tagged = ("<tool_call>\n" + json.dumps(write, ensure_ascii=False) + "\n</tool_call>\n<tool_call>"
              + json.dumps({"name": "draft_seal", "arguments": json.dumps({"version": 1})}) + "</tool_call>")
    calls, rest = find_text_calls(tagged, ROLEPLAY)
    assert [c.name for c in calls] == ["draft_write", "draft_seal"] and rest == ""
    # a bare JSON reply; slightly broken JSON (trailing comma) is mended
    calls, _ = find_text_calls(json.dumps(write, ensure_ascii=False), ROLEPLAY)
    assert [c.name for c in calls] == ["draft_write"]
    calls, _ = find_text_calls('```json\n{"name": "draft_seal", "arguments": {"version": 1,}}\n```', ROLEPLAY)
    assert [c.name for c in calls] == ["draft_seal"]
    # not offered / invalid arguments / not a call / nothing offered: stays prose, text untouched
    for text in (fenced({"name": "get_weather", "arguments": {"city": "杭州"}}),
                 fenced({"name": "draft_write", "arguments": {"content": PROSE}}),  # no version
                 fenced({"name": "draft_write", "arguments": {"version": -1, "content": PROSE}}),
                 '她递来一张单子：{"name": "draft_seal", "arguments": {"version": 1}} 上面写着价钱。',  # JSON inside prose
                 "```json\n{\"酒\": 3, \"茶\": 2}\n```"):
        assert find_text_calls(text, ROLEPLAY) == ([], text)
    assert find_text_calls(fenced(write), {}) == ([], fenced(write))
    # the candidates list sees invalid ones too (agent mode flags them)
    assert [c.name for c in text_call_candidates(fenced({"name": "edit", "arguments": {"path": 3}}))] == ["edit"]


# -- role-play beats over HTTP --------------------------------------------------------------------------------------
async def test_fenced_json_draft_write_and_seal_become_real_calls(tmp_path, server, model):
    reply = fenced({"name": "draft_write", "arguments": {"version": 0, "content": PROSE}},
                   {"name": "draft_seal", "arguments": {"version": 1}})
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events: list = []
    res = await chat.send("我推门进去。", on_event=events.append)
    assert res.sealed and res.final == PROSE
    assert len(server.requests) == 2  # the seal ended the beat: no second actor call, then the scribe
    logs = call_logs(chat)
    assert [(t.name, t.ok) for t in logs] == [("draft_write", True), ("draft_seal", True)]
    assert all(is_text_call(t.id) for t in logs)
    assert chat.latest_beat().calls[0].content == reply  # the model's own words are logged as it wrote them
    assert any(isinstance(e, Activity) and "写成了文字" in e.text for e in events)


async def test_tool_call_tag_form_then_plain_seal(tmp_path, server, model):
    reply = "我先写下这一段。\n<tool_call>\n" + json.dumps(
        {"name": "draft_write", "arguments": {"version": 0, "content": PROSE}}, ensure_ascii=False) + "\n</tool_call>"
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")),
                  sse_reply(chunk('<tool_call>{"name": "draft_seal", "arguments": {"version": 1}}</tool_call>'),
                            chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events: list = []
    res = await chat.send("我推门进去。", on_event=events.append)
    assert res.sealed and res.final == PROSE
    second = server.requests[1].json["messages"]
    # the recovered call went back to the model as a call with its result, the rest of the text as content
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["function"]["name"] == "draft_write"
    assert second[-2]["content"] == "我先写下这一段。" and second[-1]["role"] == "tool"
    started = [e for e in events if getattr(e, "kind", "") == "tool_started"]
    assert [(e.name, e.from_text) for e in started] == [("draft_write", True), ("draft_seal", True)]
    # the inspector says so, and rebuilds the second request exactly as sent
    shown = chat.inspect_beat(chat.transcript()[-1]["id"])
    assert [t.get("from_text") for t in shown[0]["reply"]["tool_calls"]] == [True]
    assert shown[0]["reply"]["content"] == reply  # what the model wrote
    assert shown[1]["request"]["messages"][-2]["content"] == "我先写下这一段。"


async def test_recorded_json_block_naming_a_tool_not_offered_stays_prose(tmp_path, server, model):
    t = load("tools_stream")  # the real 1.5B model: a ```json get_weather block in the content
    server.script(replay(t), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("我推门进去。")
    assert res.sealed and "get_weather" in res.final and call_logs(chat) == []


async def test_invalid_arguments_stay_prose(tmp_path, server, model):
    reply = fenced({"name": "draft_write", "arguments": {"text": PROSE}})
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    res = await chat.send("我推门进去。")
    assert call_logs(chat) == [] and res.final == reply


async def test_prose_only_parses_nothing(tmp_path, server, model):
    reply = fenced({"name": "draft_write", "arguments": {"version": 0, "content": PROSE}})
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")), SCRIBE_OK)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    chat.set_prose_only(True)
    res = await chat.send("我推门进去。")
    assert "tools" not in server.requests[0].json or not server.requests[0].json["tools"]
    assert call_logs(chat) == [] and res.final == reply


# -- the user's words echoed back ------------------------------------------------------------------------------------
QUESTION = "掌柜的，这客栈开了多少年了？"


def test_strip_echo_user_words():
    assert strip_echo(f"「{QUESTION}」", "", QUESTION) == ""
    assert strip_echo(f" {QUESTION} \n", "", QUESTION) == ""
    assert strip_echo(f"{QUESTION}\n\n{PROSE}", "", QUESTION) == PROSE
    assert strip_echo(PROSE, "", QUESTION) == PROSE
    assert strip_echo(f"她听你问：{QUESTION}", "", QUESTION) == f"她听你问：{QUESTION}"  # quoted inside prose stays


async def test_reply_repeating_the_users_question_is_not_sealed(tmp_path, server, model):
    server.script(sse_reply(*pieces(QUESTION), chunk(finish="stop")))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    events: list = []
    res = await chat.send(QUESTION, on_event=events.append)
    assert not res.sealed and res.final == ""
    assert len(server.requests) == 1  # nothing booked
    assert any("没有正文" in w for w in chat.latest_beat().warnings)
    # a leading echo paragraph is dropped, the prose after it sealed
    server.script(sse_reply(*pieces(f"{QUESTION}\n\n{PROSE}"), chunk(finish="stop")), SCRIBE_OK)
    res2 = await chat.send(QUESTION)
    assert res2.sealed and res2.final == PROSE


# -- agent mode ------------------------------------------------------------------------------------------------------
async def test_agent_json_write_call_writes_the_file(tmp_path, server, model):
    reply = "好的，我来写第二章。\n\n" + fenced({"name": "write", "arguments": {"path": "002-续.md", "content": "续写。\n"}})
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")),
                  sse_reply(chunk("写好了第二章。"), chunk(finish="stop")), SCRIBE_OK)
    d = tmp_path / "c"
    chat = Chat.create(d, load_card(DEMO_CARD), model, mode="agent")
    chat.import_chapters([("001-开.md", "开头。\n")], message="导入")
    before = len(StoryHistory(d / "正文", d / "历史").checkpoints())
    res = await chat.send("接着写一章。")
    assert (d / "正文" / "002-续.md").read_text("utf-8") == "续写。\n"
    assert res.final == "写好了第二章。" and NO_EDITS_NOTICE not in res.activity
    assert [(t.name, t.ok, t.mode) for t in call_logs(chat)] == [("write", True, "write")]
    assert len(StoryHistory(d / "正文", d / "历史").checkpoints()) == before + 1


async def test_agent_edit_call_in_text_that_could_not_run_is_flagged(tmp_path, server, model):
    assert "edit" in AGENT_TOOLS
    reply = fenced({"name": "edit", "arguments": {"file": "001-开.md", "new": "开篇。"}})  # wrong argument names
    server.script(sse_reply(*pieces(reply), chunk(finish="stop")), SCRIBE_OK)
    d = tmp_path / "c"
    chat = Chat.create(d, load_card(DEMO_CARD), model, mode="agent")
    chat.import_chapters([("001-开.md", "开头。\n")], message="导入")
    res = await chat.send("把开头改一下。")
    assert (d / "正文" / "001-开.md").read_text("utf-8") == "开头。\n"
    assert NO_EDITS_NOTICE in res.activity


@pytest.mark.parametrize("args", [
    '[{"path": "正文/001-雨夜客栈.md", "content": "雨下了一夜。"}]',  # one object in a list
    '["正文/001-雨夜客栈.md", "雨下了一夜。"]',  # values only, in the tool's field order
])
def test_arguments_written_as_a_list_are_read_as_the_object_meant(args):
    """Seen from the 0.5B on llama.cpp (a30rec sweep): ``"arguments": [ … ]``. A list of one object is that object;
    values only fill the tool's fields in their declared order; either way the call validates like any other."""
    offered = {n: get_tool(n) for n in AGENT_TOOLS}
    text = '```json\n{"name": "write", "arguments": ' + args + '}\n```'
    calls, rest = find_text_calls(text, offered)
    assert [c.name for c in calls] == ["write"] and rest.strip() == ""
    assert json.loads(calls[0].arguments) == {"path": "正文/001-雨夜客栈.md", "content": "雨下了一夜。"}


def test_a_list_that_does_not_fit_the_tool_stays_prose():
    offered = {n: get_tool(n) for n in AGENT_TOOLS}
    text = '```json\n{"name": "write", "arguments": ["a.md", "b", "c", "d", "e"]}\n```'
    assert find_text_calls(text, offered)[0] == []


def test_an_agent_reply_that_only_pastes_a_tool_result_back_is_flagged():
    """The real 1.5B (``bench/real_model.py``, issue 30 §5) called ``read`` on a chapter that did not exist and
    answered with the ``not_found`` result, fenced, word for word: no file changed, and nothing said so."""
    from liyuan_desktop.core.chat.agent import pasted_result, unbacked_claim
    from liyuan_desktop.core.session.entries import CallLog, ToolCallLog
    result = {"ok": False, "error": "not_found", "message": "\"001-雨夜客栈.md\" 不存在。正文目录还是空的。新建章节请用 write。"}
    calls = [CallLog(round=1, tool_calls=[ToolCallLog(name="read", result=result, ok=False, mode="read")])]
    pasted = "```json\n" + json.dumps(result, ensure_ascii=False, indent=2) + "\n```\n"
    assert pasted_result(pasted, calls) and unbacked_claim(pasted, calls)
    assert pasted_result(json.dumps(result, ensure_ascii=False), calls)
    assert not pasted_result("第一章还没有写，要我现在写吗？", calls)  # an answer in words is not flagged
    assert not pasted_result('```json\n{"ok": true}\n```', calls)  # a JSON that is no result of this turn
    wrote = calls + [CallLog(round=2, tool_calls=[ToolCallLog(name="write", result={"ok": True}, ok=True, mode="write")])]
    assert not unbacked_claim(pasted, wrote)  # a file was written: no notice


def test_a_junk_agent_reply_never_breaks_the_pasted_result_check():
    """1 MB of brackets or spaces, or JSON nested past the parser's depth, is simply not a pasted result (a
    RecursionError used to escape ``Chat.send`` after the turn was saved)."""
    from liyuan_desktop.core.chat.agent import pasted_result
    from liyuan_desktop.core.session.entries import CallLog, ToolCallLog
    calls = [CallLog(round=1, tool_calls=[ToolCallLog(name="read", result={"ok": False}, ok=False, mode="read")])]
    for junk in ('{"a":' + "[" * 100_000, "{" * 1_000_000, " " * 1_000_000, "```json\n" + "}" * 1000):
        assert not pasted_result(junk, calls)
