"""Issue 30, small local models, over real HTTP on loopback (tests/sse_server.py serves the canned SSE a llama.cpp
server sends): the opening is sent without our 【开场 · 名字】 label; a reply that copies the opening is not sealed
and is retried once, nudged and hotter; a second copy leaves the beat unsealed with the notice; a lore fact used in
prose survives the data-block echo filter; ``:`` keep-alives while a local server reads the prompt count as progress
for the idle timeout; a text tool call written with ``"function":`` runs; a chapter name with a leading space is
normalised and errors quote names; a ToolError after an agent turn never escapes ``Chat.send``.
"""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import Reply, ScriptedServer, chunk, sse, sse_reply

from liyuan_desktop.core.beat.echo import EchoSources, strip_echo
from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.beat.loop import ECHO_GAVE_UP_NOTICES, ECHO_RETRY_NOTICES
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.messages import Msg, render

SCRIBE = sse_reply(chunk('{"patch": {}}'), chunk(finish="stop"))
CARD = load_card(DEMO_CARD)
OPENING = CARD.first_mes
NEW_PROSE = ("她没有再多问，只把一串铜钥匙推过柜台，钥匙上拴着一块刻了「丙」字的木牌。"
             "「楼上靠河那间，夜里雨声大些。」她说完便低头去拨算盘，像是你从没进来过。")
# the 听雨轩 entry of the demo card's book, as prose-only play sends it in 【相关设定】
TINGYU = ("听雨轩是栖水镇上开了近百年的老客栈，前后两进，后院有一株老梨树。店里的规矩是祖上传下来的：不问来处，"
          "不问去处，账清即可。镇上人都说，在听雨轩说过的话，不会传到第二个人耳朵里。")


def prose(text: str, size: int = 8) -> Reply:
    return sse_reply(*[chunk(text[i:i + size]) for i in range(0, len(text), size)], chunk(finish="stop"))


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
async def model(server):
    m = OpenAIChatModel(server.base_url, "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", None, retry_base_wait=0.0,
                        read_timeout=5.0)
    yield m
    await m.aclose()


def actor_requests(server) -> list[dict]:
    return [r.json for r in server.requests if "tools" in r.json or r.json["messages"][0]["content"].startswith("#")]


# -- 1. echoes ---------------------------------------------------------------------------------------------------
async def test_an_echo_of_the_opening_is_not_sealed_but_retried_hotter(tmp_path, server, model):
    server.script(prose(OPENING), prose(NEW_PROSE), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model)
    events: list = []
    res = await chat.send("我把湿透的外衣搭在椅背上：「住三天。」", on_event=events.append)
    assert res.sealed and res.final == NEW_PROSE
    assert any(isinstance(e, Activity) and e.text == ECHO_RETRY_NOTICES["opening"] for e in events)
    first, again = server.requests[0].json, server.requests[1].json
    # the opening goes to a local model without our label (kept in the chat for display)
    assert first["messages"][1] == {"role": "assistant", "content": OPENING}
    assert chat.history().opening.startswith("【开场 · 青梧】")
    # the retry: the same prompt, the user's words followed by the nudge, a higher temperature
    assert again["messages"][-1]["content"].startswith(first["messages"][-1]["content"])
    assert "照抄了开场" in again["messages"][-1]["content"]
    assert again.get("temperature", 0) > first.get("temperature", 0.7)
    assert OPENING not in chat.history().messages[-1].content
    # the inspector rebuilds both calls exactly as sent: the bare opening, and the retry with its nudge
    calls = [c for c in chat.inspect_beat(chat.latest_beat().id) if c["purpose"] == "actor"]
    assert [c["request"]["messages"] for c in calls] == [first["messages"], again["messages"]]


async def test_a_second_echo_leaves_the_beat_unsealed_with_the_notice(tmp_path, server, model):
    server.script(prose(OPENING), prose("【开场 · 青梧】\n" + OPENING))
    chat = Chat.create(tmp_path / "c", CARD, model)
    events: list = []
    res = await chat.send("我把湿透的外衣搭在椅背上：「住三天。」", on_event=events.append)
    assert not res.sealed and res.outcome == "unsealed"
    notice = ECHO_GAVE_UP_NOTICES["opening"]
    assert notice in res.warnings and any(isinstance(e, Activity) and e.text == notice for e in events)
    assert isinstance(notice, Msg) and render(notice, "en").startswith("The reply copied the opening again")
    assert len(server.requests) == 2  # no scribe: nothing was sealed
    assert chat.latest_beat().outcome == "unsealed" and OPENING not in (chat.latest_beat().draft or "")
    # the copy never entered the history: the next beat's prompt has the opening once
    server.script(prose(NEW_PROSE), SCRIBE)
    res = await chat.send("「住三天。」")
    assert res.sealed
    sent = json.dumps(server.requests[2].json["messages"], ensure_ascii=False)
    assert sent.count("雨下到第三天") == 1


async def test_an_echo_of_an_earlier_reply_is_caught_too(tmp_path, server, model):
    server.script(prose(NEW_PROSE), SCRIBE, prose(NEW_PROSE), prose("你接过钥匙，她又低下头去拨算盘，雨声一阵紧过一阵，"
                                                                    "楼梯口的灯笼被风吹得直晃。"), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model)
    assert (await chat.send("「住三天。」")).sealed
    events: list = []
    res = await chat.send("我接过钥匙。", on_event=events.append)
    assert res.sealed and res.final.startswith("你接过钥匙")
    assert any(isinstance(e, Activity) and e.text == ECHO_RETRY_NOTICES["previous"] for e in events)


def test_the_measure_tells_a_copy_from_new_prose():
    src = EchoSources([("opening", "【开场 · 青梧】\n" + OPENING), ("data", "【相关设定】本拍命中的世界书条目原文：\n\n【听雨轩】" + TINGYU)])
    assert src.echo_of(OPENING) == "opening"
    assert src.echo_of(OPENING.replace("第三天", "第四天").replace("*", "")) == "opening"  # reworded a little
    assert src.echo_of("【听雨轩】" + TINGYU) == "data"
    assert src.echo_of(NEW_PROSE) == ""
    assert src.echo_of(NEW_PROSE + TINGYU[:32]) == ""  # one fact used in new prose is not an echo


# -- 2. lore used in prose is kept -------------------------------------------------------------------------------
async def test_a_lore_fact_used_in_prose_survives_the_echo_filter(tmp_path, server, model):
    reply = (f"*门帘一掀，雨气跟着你涌进来。*【听雨轩】{TINGYU}\n\n"
             "*青梧放下手里的布，把那把旧油纸伞挂回墙上，转身替你添了一盏热茶。*「客官是头一回来栖水镇吧？这几天河上起雾，"
             "渡船都停了，要走也得等雨停。楼上还有两间空房，一间临河，一间靠着后院那株老梨树，客官挑一间？」")
    server.script(prose(reply), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model)
    chat.set_prose_only(True)
    res = await chat.send("我走到柜台前：「掌柜的，这听雨轩开了多少年了？」")
    sent = server.requests[0].json["messages"][-1]["content"]
    assert f"【听雨轩】{TINGYU}" in sent  # the entry's text was sent
    assert res.sealed
    assert TINGYU in res.final and "【听雨轩】" not in res.final  # the fact stays, the block's label goes
    assert res.final.startswith("*门帘一掀")


def test_a_copied_block_is_still_removed():
    inj = "【相关设定】本拍命中的世界书条目原文：\n\n【听雨轩】" + TINGYU + "\n\n【语言】以中文写叙事与对白（专有名词可保留原文）。"
    assert strip_echo(f"【听雨轩】{TINGYU}\n\n{NEW_PROSE}", inj) == NEW_PROSE  # an entry as its own paragraph
    assert strip_echo(f"{inj}\n\n{NEW_PROSE}", inj) == NEW_PROSE
    fact = "听雨轩是栖水镇上开了近百年的老客栈，前后两进。"
    inj2 = f"【相关设定】本拍命中的世界书条目原文：\n\n【听雨轩】\n\n{fact}"
    assert strip_echo(f"【语言】中文\n\n*你抬头看。*{fact}\n\n{NEW_PROSE}", inj2) == f"*你抬头看。*{fact}\n\n{NEW_PROSE}"


# -- 3. keep-alives while a local server reads the prompt ------------------------------------------------------
async def test_keepalives_before_the_first_token_extend_the_idle_timeout(server):
    keepalives: list = [": keep-alive\n\n"] * 6
    server.script(Reply(body=[*keepalives, sse(chunk("雨还在下。")), sse(chunk(finish="stop")), "data: [DONE]\n\n"],
                        gap=0.25))
    m = OpenAIChatModel(server.base_url, "local", None, retry_base_wait=0.0, read_timeout=5.0, idle_timeout=0.6)
    try:
        resp = await m.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
    finally:
        await m.aclose()
    assert resp.content == "雨还在下。" and m.is_local


async def test_keepalives_alone_still_end_at_the_call_cap(server):
    server.script(Reply(body=[": keep-alive\n\n"] * 200, gap=0.1))
    m = OpenAIChatModel(server.base_url, "local", None, retry_base_wait=0.0, read_timeout=5.0, idle_timeout=0.6,
                        total_timeout=1.2)
    try:
        with pytest.raises(ModelError) as info:
            await m.complete(ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
    finally:
        await m.aclose()
    assert "总时限" in info.value.message


# -- 5. agent tools from a model that only talks ---------------------------------------------------------------
def _text_call(obj: dict) -> Reply:
    return prose("```json\n" + json.dumps(obj, ensure_ascii=False) + "\n```", size=40)


async def test_a_text_tool_call_with_function_instead_of_name_runs(tmp_path, server, model):
    server.script(_text_call({"function": "write", "arguments": {"path": "001-雨夜客栈.md", "content": "雨夜，客栈。"}}),
                  prose("写好了第一章。"), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model, mode="agent")
    res = await chat.send("写第一章。")
    assert res.final == "写好了第一章。"
    assert res.calls[0] == ["write"]
    assert (tmp_path / "c" / "正文" / "001-雨夜客栈.md").read_text("utf-8") == "雨夜，客栈。"


async def test_a_chapter_name_with_a_leading_space_is_normalised(tmp_path, server, model):
    write = {"name": "write", "arguments": {"path": "正文/ 001-雨夜客栈.md", "content": "雨夜，客栈。"}}
    edit = {"name": "edit", "arguments": {"path": "001-雨夜客栈.md", "oldText": "客栈", "newText": "老客栈"}}
    read = {"name": "read", "arguments": {"path": "002-不存在.md"}}
    server.script(_text_call(write), _text_call(edit), _text_call(read), prose("改好了。"), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model, mode="agent")
    res = await chat.send("写第一章，再改一下。")
    folder = tmp_path / "c" / "正文"
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".md") == ["001-雨夜客栈.md"]
    assert (folder / "001-雨夜客栈.md").read_text("utf-8") == "雨夜，老客栈。"
    failed = res.output.calls[2].tool_calls[0]
    assert not failed.ok
    assert failed.result["message"].startswith('"002-不存在.md" 不存在。现有章节："001-雨夜客栈.md"')


async def test_a_tool_error_after_the_turn_never_escapes_send(tmp_path, server, model):
    chat = Chat.create(tmp_path / "c", CARD, model, mode="agent")
    server.script(prose("先聊聊。"))
    await chat.send("你好。")
    folder = tmp_path / "c" / "正文"
    folder.mkdir(exist_ok=True)
    (folder / "002-手写.md").write_bytes("用户手放的一章。".encode("gb18030"))  # not UTF-8: read raises ToolError
    server.script(prose("好的。"), SCRIBE)
    events: list = []
    res = await chat.send("看看。", on_event=events.append)  # used to raise ToolError from the scribe's read
    assert res.final == "好的。"
    assert any('"002-手写.md"' in w and "UTF-8" in w for w in res.warnings)
    assert any(isinstance(e, Activity) and "002-手写.md" in e.text for e in events)


async def test_a_chapter_an_earlier_release_saved_with_a_leading_space_can_be_edited(tmp_path, server, model):
    chat = Chat.create(tmp_path / "c", CARD, model, mode="agent")
    folder = tmp_path / "c" / "正文"
    folder.mkdir(exist_ok=True)
    (folder / " 001-雨夜客栈.md").write_text("雨夜，客栈。", "utf-8")
    edit = {"name": "edit", "arguments": {"path": "001-雨夜客栈.md", "oldText": "客栈", "newText": "老客栈"}}
    server.script(_text_call(edit), prose("改好了。"), SCRIBE)
    res = await chat.send("改一下第一章。")
    assert res.output.calls[0].tool_calls[0].ok
    assert (folder / " 001-雨夜客栈.md").read_text("utf-8") == "雨夜，老客栈。"


# -- 3. the CLI after a failed beat ----------------------------------------------------------------------------
def _cli(home, base_url: str, *says: str):
    import os
    import subprocess
    import sys

    from liyuan_desktop.core.llm import ProviderSettings
    from liyuan_desktop.core.settings import AppSettings, save_settings

    save_settings(AppSettings(providers=[ProviderSettings(name="local", base_url=base_url, model="m")],
                              active_provider="local"))
    args = [sys.executable, "-m", "liyuan_desktop", "chat", str(DEMO_CARD), "--chat", "says", "--provider", "local",
            "--auto"]
    for text in says:
        args += ["--say", text]
    env = {**os.environ, "LIYUAN_HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)


def test_cli_goes_on_with_the_next_say_after_a_failed_beat(server):
    import os
    from pathlib import Path

    server.script(Reply(body=[sse(chunk("她抬"))], cut=True), prose(NEW_PROSE), SCRIBE)
    p = _cli(Path(os.environ["LIYUAN_HOME"]), server.base_url, "我推门进去。", "「住三天。」")
    assert p.returncode == 1  # a beat failed
    assert "接着发下一句 --say（还剩 1 句）" in p.stderr
    assert NEW_PROSE in p.stdout


def test_cli_says_why_it_stops_when_the_next_beat_would_fail_the_same_way(server):
    import os
    from pathlib import Path

    from sse_server import json_reply

    server.script(json_reply({"error": {"message": "invalid api key"}}, status=401))
    p = _cli(Path(os.environ["LIYUAN_HOME"]), server.base_url, "我推门进去。", "「住三天。」", "「好。」")
    assert p.returncode == 1
    assert "剩下的 2 句 --say 没有发送" in p.stderr
    assert len(server.requests) == 1


# -- 4. prose-only from the chat's own history, for a built-in preset too ------------------------------------------
async def test_a_preset_used_by_name_switches_to_prose_only_counting_beats_from_the_history(tmp_path, server):
    from liyuan_desktop.core.chat.prose_mode import IGNORED_AFTER, IGNORED_NOTICE
    from liyuan_desktop.core.llm import ProviderSettings, build_model
    from liyuan_desktop.core.settings import load_settings

    # ``--provider llamacpp``: the built-in preset with the server's URL, never saved in settings.json
    preset = ProviderSettings(name="llamacpp", base_url=server.base_url, model="qwen-0.5b")
    replies = ["雨声里，她擦着那把伞。", "她把算盘往旁边一推，抬眼看门外的河。", "更夫敲过二更，楼上的灯一盏盏熄了。"]
    notices: list[str] = []
    for i in range(IGNORED_AFTER):  # one process per beat, as `liyuan chat --say` run three times
        m = build_model(preset, api_key="", retry_base_wait=0.0, read_timeout=5.0)
        chat = (Chat.create if i == 0 else Chat.open)(tmp_path / "c", CARD, m)
        server.script(prose(replies[i]), SCRIBE)
        events: list = []
        try:
            assert (await chat.send(f"第{i + 1}句话。", on_event=events.append)).sealed
        finally:
            await m.aclose()
        notices += [e.text for e in events if isinstance(e, Activity) and e.text == IGNORED_NOTICE]
        assert server.requests[-2].json.get("tools")
    assert notices == [IGNORED_NOTICE]
    stored = load_settings().endpoint_capabilities
    assert [(c.base_url, c.model, c.tools) for c in stored] == [(server.base_url, "qwen-0.5b", "ignored")]
    m = build_model(preset, api_key="", retry_base_wait=0.0, read_timeout=5.0)
    chat = Chat.open(tmp_path / "c", CARD, m)
    assert chat.prose_only()["on"] and chat.prose_only()["why"] == "ignored"
    server.script(prose("她抬头。"), SCRIBE)
    try:
        await chat.send("第四句话。")
    finally:
        await m.aclose()
    assert "tools" not in server.requests[-2].json


async def test_tool_play_sends_the_entries_text_until_tools_are_shown_to_work(tmp_path, server, model):
    server.script(prose(NEW_PROSE), SCRIBE)
    chat = Chat.create(tmp_path / "c", CARD, model)
    await chat.send("我走到柜台前：「掌柜的，这听雨轩开了多少年了？」")
    first = server.requests[0].json
    assert first.get("tools")  # tool play
    assert f"【听雨轩】{TINGYU}" in first["messages"][-1]["content"]
    assert "【设定集索引】" in first["messages"][-1]["content"]
    # once the model called a tool, titles only again
    call = {"id": "c1", "type": "function", "function": {"name": "lorebook_search", "arguments": '{"query": "听雨轩"}'}}
    server.script(sse_reply(chunk(tool_calls=[{"index": 0, **call}]), chunk(finish="tool_calls")), prose(NEW_PROSE[:30] + "雨停了。"),
                  SCRIBE, prose("她笑了笑，把灯芯挑亮了些，说今晚的雨怕是不会停了，客官早些歇息。"), SCRIBE)
    await chat.send("「听雨轩后院那棵梨树还在吗？」")
    await chat.send("「柜台后那把伞是谁的？」")
    last = [r.json for r in server.requests if r.json.get("tools")][-1]
    assert TINGYU not in last["messages"][-1]["content"] and "【相关设定】本拍命中" in last["messages"][-1]["content"]


# -- 7. the scribe never makes a character of the user's pronoun ---------------------------------------------------
async def test_the_scribe_never_creates_a_character_called_you(tmp_path, server, model):
    patch = {"patch": {"characters": {"你": {"affinity": 5}, "You": {"status": "wet"}, "青梧": {"affinity": 3}}}}
    server.script(prose(NEW_PROSE), sse_reply(chunk(json.dumps(patch, ensure_ascii=False)), chunk(finish="stop")))
    chat = Chat.create(tmp_path / "c", CARD, model)
    res = await chat.send("「住三天。」")
    assert res.sealed
    assert list(chat.ledger.state().characters) == ["青梧"]
    assert any("characters.你 不是人名" in p for p in res.scribe.problems)


# -- 7. a persona without a name ---------------------------------------------------------------------------------
async def test_a_persona_without_a_name_sends_the_languages_default(tmp_path, server, model):
    from liyuan_desktop.core.cards.personas import Persona
    from liyuan_desktop.core.chat.context import default_user_name

    # an English card that suggests no persona name of its own
    card = CARD.model_copy(update={"extensions": {**CARD.extensions, "liyuan": {"language": "en"}}})
    assert card.language == "en" and not card.persona_name
    chat = Chat.create(tmp_path / "c", card, model, persona_obj=Persona(name="  ", description="A tired traveller."))
    assert chat.persona == default_user_name(card.language)
    again = Chat.open(tmp_path / "c", card, model)
    assert again.persona == default_user_name(card.language)
