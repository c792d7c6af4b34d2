"""Issue 30 (a30): what the last closing note left open for small local models.

* The bench's per-beat detectors (issue 30 §8): "speaks for the user" and "restates the user's question", on fixed
  strings in Chinese and English; the call the repetition stop cut is counted.
* A local model's reply that repeats one clause 3 times is cut before the third copy and sealed by the loop rule.
* A local model's reply whose spoken words mostly restate the user's question is an echo: retried once with the
  nudge, never sealed.
* A local model's reply cut by the output cap (a draft call written as text, or a native one) is sealed with its
  complete sentences; a hosted model's stays unsealed as before.
* Tool play of a local model that has not looked lore up itself sends the activated entries' text last, right
  before the user's words, under the use-in-your-own-words header — also after it wrote its draft with native
  calls (before a30 such a beat got titles only); a native ``lorebook_search`` ends that.

Model replies here are scripted in the shape llama.cpp streams them (``tests/sse_server.py``), not recordings.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from helpers import DEMO_CARD, play_scripted
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.beat.echo import (
    ECHO_RESTATE_SHARE,
    ECHO_SHARE,
    EchoSources,
    restated_share,
    speaks_for_user,
    spoken,
)
from liyuan_desktop.core.beat.loop import ECHO_RETRY_NOTICES
from liyuan_desktop.core.beat.repetition import RepetitionGuard
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import ProviderSettings, build_model
from liyuan_desktop.core.messages import message
from liyuan_desktop.core.session import CallLog

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
ASK = "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」"
SCRIBE = sse_reply(chunk('{"patch": {}}', model=MODEL), chunk(finish="stop", model=MODEL))
NAMES = ("阿遥", "你", "旅人", "客官", "you")


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def streamed(text: str, finish: str = "stop", step: int = 10):
    return sse_reply(*(chunk(text[i:i + step], model=MODEL) for i in range(0, len(text), step)),
                     chunk(finish=finish, model=MODEL))


def native(*calls: tuple[str, dict], finish: str = "tool_calls", raw: str = ""):
    """A streamed reply with native tool calls (``raw``: the first call's arguments as given, possibly cut)."""
    pieces = []
    for i, (name, args) in enumerate(calls):
        text = raw if (raw and i == 0) else json.dumps(args, ensure_ascii=False)
        pieces.append(chunk(tool_calls=[{"index": i, "id": f"call{i}", "type": "function",
                                         "function": {"name": name, "arguments": ""}}], model=MODEL))
        pieces += [chunk(tool_calls=[{"index": i, "function": {"arguments": text[k:k + 16]}}], model=MODEL)
                   for k in range(0, len(text), 16)]
    return sse_reply(*pieces, chunk(finish=finish, model=MODEL))


async def play(tmp_path, server, *replies, local: bool = True, prose: bool = True, says=(ASK,)):
    return await play_scripted(tmp_path, server, *replies, says=says, model=MODEL, local=local, prose=prose)


# -- the detectors (bench columns, issue 30 §8) --------------------------------------------------------------------
@pytest.mark.parametrize("text, hit", [
    ("你道：「我要住店。」", "你道"),
    ("*旅人问：*「几时有船？」", "旅人问"),
    ("她看了你一眼，你笑着说：「多谢。」", "你笑"),
    ("*你推门走进来，把伞靠在门边。*", "你推门"),
    ("阿遥点了点头。", "阿遥点了点头"),
    ("**旅人：**「我明早走。」", "**旅人：**"),
    ("‘今天要出镇。’\n\n*你回答道：‘我已经问过了。’*", "你回答"),
    ("*你指着柜台后墙上那把旧油纸伞，语气中带着一丝不悦。*", "你指"),  # the 1.5B, bench run a30-2, prose beat 3
    ("You nod and sit down.", "You nod"),
    ('She pours the tea. You reply, "Thanks."', "You reply"),
])
def test_speaking_for_the_user_is_found_in_the_narration(text, hit):
    assert speaks_for_user(text, NAMES) == hit


@pytest.mark.parametrize("text", [
    "她看着你道：「请坐。」",  # 你 is the object; 她 speaks
    "「好，你说吧。」她笑了。",  # the character says 你说, inside quotes
    "*青梧擦着伞。*「客官请坐，你的伞湿了。」",
    "你的伞湿了。",
    '"You said so yourself," she says.',
    "She looks at you and smiles.",
])
def test_the_character_speaking_to_the_user_is_not_speaking_for_them(text):
    assert speaks_for_user(text, NAMES) == ""


def test_the_bench_counts_the_first_person_of_its_user_as_the_user():
    """The bench's user writes as 我 and the demo card narrates in the third person: the 1.5B's 「*听雨轩内，我微笑着
    问道：…*」 (bench run a30-2, tool beat 1) speaks for the user there; the engine's default names leave 我 out (a card
    may narrate as 我)."""
    text = "*听雨轩内，我微笑着问道：“掌柜的，这客栈开了多少年了？”*"
    assert speaks_for_user(text) == "" and speaks_for_user(text, ("我", *NAMES)) == "我微笑"


def test_restating_the_users_question_is_measured_on_the_spoken_words():
    """The 1.5B's shape: narration around the user's question put in 青梧's mouth — the whole reply is under the
    echo share, its speech is all the question; an answer that only quotes the question in passing stays under."""
    restated = ("*青梧放下手里的干布，抬头看了你一眼，迟疑片刻。窗外的雨还在下个不停，檐下的铜铃叮当作响，"
                "灯芯噼啪一声。*「掌柜的，这客栈开了多少年了？」她轻声重复了一遍。")
    assert spoken(restated) == "掌柜的，这客栈开了多少年了？"
    assert EchoSources([("user", ASK)]).echo_of(restated) == ""  # under ECHO_SHARE of the whole reply
    assert restated_share(restated, ASK) == 1.0 >= ECHO_RESTATE_SHARE
    answer = "*她笑了。*「这客栈开了多少年了？快一百年了，客官。后院那株梨树比客栈还老些，是我太爷爷种的。」"
    assert 0 < restated_share(answer, ASK) < ECHO_RESTATE_SHARE
    assert restated_share("*她放下布。*「快一百年了。」", ASK) == 0.0
    en = 'She looks up. "How long has this inn been open?" she repeats, wiping the counter slowly and carefully.'
    assert restated_share(en, 'I walk to the counter: "How long has this inn been open?"') >= ECHO_RESTATE_SHARE
    assert ECHO_RESTATE_SHARE < ECHO_SHARE or ECHO_RESTATE_SHARE <= 1



def test_a_question_recut_or_respelled_in_the_characters_mouth_still_counts_as_restated():
    """Two tool-play replies of the real 1.5B (``bench/real_model.py`` with the DRY sampler, tool beats 2 and 3,
    copied from that run's log): the user's question put back in the character's mouth, re-cut at another comma
    (「我明早要出镇。」), one word changed (船只) or one character in its traditional form (撑開). The sentence
    measure saw 26 % and 47 % — both sealed as answers; the run measure (``copied_run_share``) sees the whole speech.
    An answer that reuses some of the question's words (镇北渡口; 这客栈开了 → 百年了) is no restatement."""
    from liyuan_desktop.core.beat.echo import copied_run_share
    ferry_q = "「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」"
    ferry = "*柜外的人指了指柜台前墙上的旧油纸伞。*  「我明早要出镇。镇北渡口几时有船只？摆渡的是谁？」"
    umbrella_q = "我指了指柜台后墙上那把旧油纸伞：「这把伞怎么不撑开？伞上是什么痕迹？」"
    umbrella = ("*柜台里的女子抬起头来，眼睛停在你的肩头。她取过一只干布，轻轻擦去你的额头的雨水。*  "
                "「这把伞怎么不撑開？伞上是什么痕迹？」")
    assert restated_share(ferry, ferry_q) >= 0.9 and restated_share(umbrella, umbrella_q) >= 0.9
    assert restated_share("*她擦着杯子。*「镇北渡口的船，清晨一班，是老周撑的。」", ferry_q) < ECHO_RESTATE_SHARE
    assert copied_run_share("这客栈开了近百年了，后院那株老梨树比客栈还老。", ASK) < ECHO_RESTATE_SHARE
    assert restated_share("*她抬起头。*「这客栈开了百年了。」", ASK) == 0.0  # the real 1.5B's answer (opening_dry)
    assert copied_run_share("", ASK) == 0.0 and copied_run_share("abc", "") == 0.0

def _bench():
    path = Path(__file__).resolve().parent.parent / "bench" / "real_model.py"
    spec = importlib.util.spec_from_file_location("bench_real_model_a30", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_the_bench_counts_the_call_the_repetition_stop_cut_and_fills_the_new_columns():
    """The cancelled call emits no CallFinished; the beat's call log has it (finish "repetition"), and the bench
    counted "0 call(s)" before a30."""
    bench = _bench()
    output = type("Out", (), {"calls": [CallLog(round=1, content="…", finish_reason="repetition",
                                                 error="repetition: sentence")],
                              "draft": type("D", (), {"text": "*你点头。*「多谢。」"})()})()
    res = type("Res", (), {"sealed": False, "outcome": "unsealed", "final": "", "output": output})()
    row = bench.beat_row("tools beat 1", ASK, res, [], 12.0, ("阿遥",))
    assert row["calls"] == 1 and row["finish"] == ["repetition"]
    assert row["speaks_for_user"] == "你点头" and row["restates"] == 0.0
    bench.print_row({**row, "asked": 0})


# -- a clause repeated 3 times (local models) ----------------------------------------------------------------------
CLAUSE_REPLY = ("*青梧笑了笑，把茶盏推到你面前。*「听雨轩的老规矩是不问来处不问去处，客官只管放心住下。」\n\n"
                "她顿了顿，又说：「后院那株老梨树比这客栈还老些，开了快一百年了。听雨轩的老规矩是不问来处不问去处。」\n\n"
                "*窗外雨声渐大，檐下的铜铃响了一声。*听雨轩的老规矩是不问来处不问去处，这是祖上传下来的。"
                "她擦着柜台，再没有说话。")


def test_the_clause_guard_is_for_local_models_only():
    for clauses, reason in ((False, None), (True, "clause")):
        g = RepetitionGuard(clauses=clauses)
        for i in range(0, len(CLAUSE_REPLY), 7):
            g.feed(CLAUSE_REPLY[i:i + 7])
        assert g.reason == reason
    assert g.text[:g.keep].count("不问来处不问去处") == 2


async def test_a_local_reply_repeating_one_clause_three_times_is_cut_before_the_third_and_sealed(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed(CLAUSE_REPLY), SCRIBE)
    assert res.sealed and res.output.cut is None
    assert res.final.count("不问来处不问去处") == 2 and res.final.rstrip().endswith("*")
    assert "祖上传下来" not in res.final and "一百年" in res.final
    assert message("beat.cut_repeat_sealed", what=message("beat.repeat.clause")) in said


async def test_a_hosted_reply_repeating_a_clause_is_sealed_whole_as_before(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed(CLAUSE_REPLY), SCRIBE, local=False)
    assert res.sealed and res.final.count("不问来处不问去处") == 3
    assert not any("重复" in s for s in said)


# -- the user's question in the character's mouth ------------------------------------------------------------------
RESTATED = ("*青梧放下手里的干布，抬头看了你一眼，迟疑片刻。窗外的雨还在下个不停，檐下的铜铃叮当作响，灯芯噼啪一声。*"
            "「掌柜的，这客栈开了多少年了？」她轻声重复了一遍。")
ANSWER = "*青梧放下干布。*「快一百年了，客官。后院那株老梨树，比这客栈还老些。」"


async def test_a_local_reply_restating_the_question_is_retried_with_the_nudge(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed(RESTATED), streamed(ANSWER), SCRIBE)
    assert res.sealed and res.final.strip() == ANSWER
    assert ECHO_RETRY_NOTICES["user"] in said
    retry = server.requests[1].json["messages"][-1]["content"]
    assert retry.startswith(server.requests[0].json["messages"][-1]["content"]) and "系统提示" in retry
    assert (server.requests[1].json.get("temperature") or 0) > (server.requests[0].json.get("temperature") or 0)


async def test_a_hosted_reply_restating_the_question_is_sealed_as_before(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed(RESTATED), SCRIBE, local=False)
    assert res.sealed and "重复了一遍" in res.final and ECHO_RETRY_NOTICES["user"] not in said


# -- a tool beat cut by the output cap -----------------------------------------------------------------------------
PROSE = ("*青梧放下手里的干布，抬眼看了看你肩头的雨水，没有急着答话。*\n\n「听雨轩啊，开了快一百年了。」"
         "她把茶盏往你面前推了推，「后院那株老梨树，比这客栈还老些。」\n\n*灯芯噼啪一声，她又低头擦起了那把旧伞。*"
         "\n\n*檐下的铜铃又响了一声，雨势")


async def test_a_local_draft_call_written_as_text_and_cut_by_the_cap_is_sealed_at_a_sentence_end(tmp_path, server):
    """The 1.5B's tool beats hit the 384-token cap inside a ```json draft_write (run 1 of the last closing note):
    before a30 the raw JSON went into the unsealed draft; now its prose's complete sentences are sealed."""
    cut = "```json\n" + json.dumps({"name": "draft_write", "arguments": {"version": 0, "content": PROSE}},
                                   ensure_ascii=False)[:-3]
    res, said, _chat = await play(tmp_path, server, streamed(cut, finish="length"), SCRIBE, prose=False)
    assert res.sealed and res.final.startswith("*青梧放下") and res.final.rstrip().endswith("旧伞。*")
    assert "雨势" not in res.final and "draft_write" not in res.final
    assert message("beat.cut_length_sealed") in said


async def test_a_local_native_draft_call_cut_by_the_cap_is_sealed_at_a_sentence_end(tmp_path, server):
    raw = json.dumps({"version": 0, "content": PROSE}, ensure_ascii=False)[:-3]
    res, said, _chat = await play(tmp_path, server, native(("draft_write", {}), raw=raw, finish="length"), SCRIBE,
                                  prose=False)
    assert res.sealed and res.final.rstrip().endswith("旧伞。*") and "雨势" not in res.final
    assert message("beat.cut_length_sealed") in said


async def test_a_hosted_reply_cut_by_the_cap_stays_unsealed(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed(PROSE, finish="length"), local=False, prose=False)
    assert not res.sealed and res.output.cut == "length" and message("beat.cut_length") in said


async def test_too_little_prose_cut_by_the_cap_stays_unsealed(tmp_path, server):
    res, said, _chat = await play(tmp_path, server, streamed("*青梧抬眼看你。*「客官", finish="length"), prose=False)
    assert not res.sealed and res.output.cut == "length"


# -- lore in tool play until a local model looks lore up itself ---------------------------------------------------
async def test_local_tool_play_inlines_the_entries_last_until_the_model_looks_lore_up(tmp_path, server):
    """Beat 1: native draft_write + draft_seal (no lookup). Beat 2 (the ferry): still the entries' text, this beat's
    match first, last before the user's words under the use-in-your-own-words header (before a30: titles only once
    any native call was on the branch). Beat 2 looks 镇北渡口 up natively; beat 3 gets titles only. The system
    prompt is the same bytes throughout."""
    def written(text: str):
        return native(("draft_write", {"version": 0, "content": text}), ("draft_seal", {"version": 1}))

    lookup = native(("lorebook_search", {"query": "镇北渡口"}))
    server.script(written("*她把茶推过柜台。*「快一百年了。」"), SCRIBE,
                  lookup, written("*她想了想。*「清晨一班船，老周摆渡。」"), SCRIBE,
                  written("*她侧耳听了听。*「是老钱。」"), SCRIBE)
    model = build_model(ProviderSettings(name="local", base_url=server.base_url, model=MODEL), api_key="")
    assert model.is_local
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    try:
        for say in (ASK, "「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」", "夜深了，外面传来梆子声。「这打更的是什么人？」"):
            assert (await chat.send(say)).sealed
    finally:
        await model.aclose()
    firsts = [r.json for r in server.requests if r.json.get("tools") and r.json["messages"][-1]["role"] == "user"]
    assert len(firsts) == 3
    assert len({f["messages"][0]["content"] for f in firsts}) == 1  # byte-stable system prompt
    second = firsts[1]["messages"][-1]["content"]
    blocks = second.split("\n\n")
    at = next(i for i, b in enumerate(blocks) if b.startswith("【相关设定】"))
    assert "用你自己的话" in blocks[at] and any(b.startswith("【语言】") for b in blocks[:at])
    assert blocks[at + 1].startswith("【镇北渡口】") and "船夫老周摆渡三十年" in blocks[at + 1]
    assert second.endswith("「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」")
    third = firsts[2]["messages"][-1]["content"]
    assert "镇上的更夫姓钱" not in third and "【相关设定】本拍命中" in third  # it looks lore up: titles only


def test_a_header_copied_inside_emphasis_is_still_an_echo():
    """Seen on the real server (a30rec sweep, 0.5B, lore_copy seed 11): the reply began with our state block's header
    wrapped in narration stars, and it was sealed. The header's paragraph is ours whatever emphasis wraps it."""
    from liyuan_desktop.core.beat.echo import strip_echo

    text = "*【世界状态】（尚无记录）*\n\n*她把伞挂回墙上。*"
    assert strip_echo(text) == "*她把伞挂回墙上。*"
