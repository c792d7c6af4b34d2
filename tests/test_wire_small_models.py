"""Issue 30: what small local models really did, replayed through the real engine.

Every transcript here was recorded by ``bench/record_wire.py`` (its ``ENGINE_CASES``): the real engine (``Chat.send``)
played one beat against llama.cpp's server (the pinned ``xllamacpp`` wheel) running Qwen2.5-Coder 0.5B or 1.5B on
one CPU thread, and every exchange — the beat's call(s), the echo guard's retry, the scribe — was kept byte for byte
with the arrival time of each piece (``tests/data/wire/NAME*.meta.json`` says which model, which flags and how the
beat ended on the engine that recorded it). The tests play the same beat again through the real engine against
the loopback replay server (``tests/sse_server.py`` writing the recorded pieces) and assert today's behaviour; each
docstring says what the main branch before issue 30's fixes (commit 33bbe38's parent) did with the same bytes.

No model output here is made up: where a test needs a reply the server did not give in that recording, it says
which recorded reply it serves again. Three tests near the end are marked as not wire recordings: two take a reply a
model wrote in a ``bench/real_model.py`` run (copied from that run's log, said so in the docstring), one is a
scripted server in the recorded models' shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer
from wire_replay import beat_of, exchanges, replay, replay_at, streamed_text

from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.beat.loop import ECHO_GAVE_UP_NOTICES, ECHO_RETRY_NOTICES, TEXT_CALLS_NOTICE
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger.state import WorldState, apply_patch
from liyuan_desktop.core.llm import OpenAIChatModel
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ModelError
from liyuan_desktop.core.messages import message
from liyuan_desktop.core.prompt.assemble import opening_body


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def client(server, case: str, **kw) -> OpenAIChatModel:
    """A client like the recording's (same model name; a loopback URL, so ``is_local`` unless ``local=False``)."""
    first = exchanges(case)[0]
    return OpenAIChatModel(server.base_url, first.request["body"]["model"], None, retry_base_wait=0.0,
                           read_timeout=5.0, **kw)


async def play(tmp_path, server, case: str, model: OpenAIChatModel, *, prose: bool = False, **send):
    """The recorded beat of ``case`` played again by the real engine; (result, events, chat)."""
    say = exchanges(case)[0].meta["engine"]["say"]
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model,
                       mode="agent" if exchanges(case)[0].meta["engine"]["mode"] == "agent" else "roleplay")
    if prose:
        chat.set_prose_only(True)
    events: list = []
    try:
        res = await chat.send(say, on_event=events.append, **send)
    finally:
        await model.aclose()
    return res, events, chat


def notices(events: list) -> list[str]:
    return [e.text for e in events if isinstance(e, Activity)]


# -- §1: echoes of the opening are never sealed -----------------------------------------------------------------
def test_the_05b_copied_the_labelled_opening_and_not_the_bare_one():
    """The recordings themselves (issue 30 §1's claim, measured): with the opening sent as an assistant message
    behind 【开场 · 青梧】 (how main sent it to every model before issue 30) the 0.5B answered with the label and the
    opening word for word; with the same beat sent without the label it wrote something else."""
    card = load_card(DEMO_CARD)
    labelled, bare = exchanges("echo_opening_labelled")[0], exchanges("echo_opening_bare")[0]
    sent = labelled.request["body"]["messages"][1]["content"]
    assert sent.startswith("【开场") and opening_body(sent).strip() == card.first_mes.strip()
    assert bare.request["body"]["messages"][1]["content"].strip() == card.first_mes.strip()  # no label today
    copied = streamed_text(labelled.body)
    assert copied.lstrip().startswith("【开场") and card.first_mes.strip() in copied
    assert card.first_mes.strip()[:40] not in streamed_text(bare.body)
    # the recording engine played the labelled case as a remote model (no echo guard): it sealed the copy
    assert beat_of("echo_opening_labelled")["sealed"] and beat_of("echo_opening_labelled")["final"].strip() == \
        card.first_mes.strip()


async def test_a_copy_of_the_opening_is_retried_then_left_unsealed(tmp_path, server):
    """The 0.5B's recorded copy of the opening, from a local server: caught as an echo of the opening, retried once
    with the nudge and a higher temperature, and — the retry gets the same recorded copy again — the beat ends
    unsealed with the notice and nothing drafted. Old main sealed the copy (nothing compared a reply with the
    opening; its echo filter only took the label off), and every later beat copied it again."""
    copy = exchanges("echo_opening_labelled")[0]
    server.script(replay(copy), replay(copy))
    res, events, chat = await play(tmp_path, server, "echo_opening_labelled", client(server, "echo_opening_labelled"),
                                   prose=True)
    assert not res.sealed
    said = notices(events)
    assert ECHO_RETRY_NOTICES["opening"] in said and ECHO_GAVE_UP_NOTICES["opening"] in said
    assert len(server.requests) == 2  # no scribe for an unsealed beat
    first, retry = server.requests[0].json, server.requests[1].json
    assert retry["messages"][-1]["content"].startswith(first["messages"][-1]["content"])  # the nudge appended
    assert retry["messages"][-1]["content"] != first["messages"][-1]["content"]
    assert (retry.get("temperature") or 0) > (first.get("temperature") or 0)
    assert not any("【开场" in (m.get("content") or "") for m in first["messages"][1:2])  # local: no label sent


# -- §3: keep-alives while a CPU server reads a long prompt -------------------------------------------------------
def keepalives_before_content(t) -> tuple[int, float]:
    """(keep-alive pieces before the first ``data:`` piece, seconds from the request to that piece) of a recording."""
    n = 0
    for piece, at in zip(t.pieces, t.meta["arrived"]):
        if piece.lstrip().startswith(b"data:"):
            return n, at
        n += piece.lstrip().startswith(b":")
    return n, t.meta["arrived"][-1]


@pytest.mark.parametrize("case", ["keepalive_prompt", "agent_turn"])
async def test_keepalives_while_a_cpu_server_reads_the_prompt_count_as_progress(server, case):
    """On one CPU thread the 1.5B read the prose-only prompt for most of a minute and the 0.5B the agent prompt
    (~3,000 tokens) for minutes, the server sending ``:`` keep-alives before the first token (recorded with their
    arrival times). Replayed about 100 times faster (10 ms between pieces) against an idle limit shorter than that
    wait but longer than one gap: a local client goes on and gets the whole reply; a remote one (``local=False``)
    gives up at the idle limit — what old main did for every server (its idle clock ignored keep-alives), which is
    how the 180 s limit killed the first beat of a 2,868-token prompt at 11.8 tokens/s."""
    t = exchanges(case)[0]
    waited, first_at = keepalives_before_content(t)
    assert waited >= 10 and first_at >= 10  # ten seconds and more of keep-alives before any content
    body = t.request["body"]
    request = ChatRequest(messages=[ChatMessage(**m) for m in body["messages"]], tools=body.get("tools") or [],
                          max_tokens=body.get("max_tokens"))
    gap = min(0.1, 1.2 / waited)  # the keep-alive phase replayed in about a second
    idle = 0.4  # < the keep-alive phase (waited × gap), several gaps
    assert waited * gap > 2 * idle and idle > 3 * gap
    server.script(replay_at(t, gap))
    local = OpenAIChatModel(server.base_url, body["model"], None, retry_base_wait=0.0, idle_timeout=idle)
    try:
        res = await local.complete(request)
    finally:
        await local.aclose()
    assert res.content == streamed_text(t.body) and res.finish_reason == "stop"
    server.script(replay_at(t, gap))
    remote = OpenAIChatModel(server.base_url, body["model"], None, retry_base_wait=0.0, idle_timeout=idle,
                             local=False, max_retries=0)
    try:
        with pytest.raises(ModelError) as err:
            await remote.complete(request)
    finally:
        await remote.aclose()
    assert err.value.kind == "network" and message("llm.deadline.idle", s=f"{idle:g}", got=0) in str(err.value)


# -- §5: an agent turn of the 0.5B --------------------------------------------------------------------------------
async def test_the_05b_agent_turn_writes_its_chapter_through_text_calls(tmp_path, server):
    """The 0.5B's agent turn as recorded: it wrote its ``write`` call as a ```json block in the content (no
    ``tool_calls``), then repeated the call as bare JSON twice and answered the third time with nothing. The engine
    runs the text calls — the chapter file is written — says so, and the empty answer ends the turn with a notice
    instead of an exception; the scribe and the chapter summary then run on the written chapter."""
    ex = exchanges("agent_turn")
    server.script(*(replay(t) for t in ex))
    res, events, chat = await play(tmp_path, server, "agent_turn", client(server, "agent_turn"))
    chapter = Path(chat.story.story_dir) / "001-雨夜客栈.md"
    assert chapter.is_file()
    written = chapter.read_text("utf-8")
    assert written.strip() and written.strip() in streamed_text(ex[0].body)
    said = notices(events)
    assert sum(TEXT_CALLS_NOTICE.format(names="write") == n for n in said) == 3
    assert len(server.requests) == len(ex)
    assert beat_of("agent_turn")["files"] and "正文/001-雨夜客栈.md" in beat_of("agent_turn")["files"]


async def test_the_05b_scribe_setting_time_and_place_to_one_phrase_is_refused(tmp_path, server):
    """The 0.5B's scribe (recorded in the same agent turn) set ``time`` and ``location`` both to 「听雨轩柜台后擦那把
    旧油纸伞」, a phrase of the chapter. Today both are refused with a warning the scribe sees next time and the
    ledger keeps no time; old main applied them (the ledger's time was a sentence of the chapter)."""
    ex = exchanges("agent_turn")
    scribe = next(t for t in ex if '"patch"' in streamed_text(t.body))
    assert '"time": "听雨轩柜台后擦那把旧油纸伞"' in streamed_text(scribe.body)
    server.script(*(replay(t) for t in ex))
    _res, _events, chat = await play(tmp_path, server, "agent_turn", client(server, "agent_turn"))
    state = chat.ledger.state()
    assert state.time == "" and state.location == ""
    result = apply_patch(WorldState(), {"time": "听雨轩柜台后擦那把旧油纸伞", "location": "听雨轩柜台后擦那把旧油纸伞"})
    assert not result.applied and len(result.warnings) == 2
    ok = apply_patch(WorldState(), {"time": "傍晚（雨中）", "location": "青梧的客栈（檐外下雨）",
                                    "characters": {"青梧": {"at": "她放下伞，转身对你说：「客官请坐。」"}}})
    assert ok.state.time == "傍晚（雨中）" and ok.state.location == "青梧的客栈（檐外下雨）"
    assert ok.state.characters["青梧"].at is None and any("characters.青梧.at" in w for w in ok.warnings)


async def test_a_partial_copy_of_the_opening_without_the_label_is_caught_and_retried(tmp_path, server):
    """Even without the label the 0.5B answered the umbrella question with the opening's second paragraph and the
    user's question; today's engine caught it as an echo of the opening and retried once, nudged and hotter; the
    retry (recorded too) looped and the repetition stop cut it. The recording engine left the beat unsealed; since
    a small local model's looping beat is sealed with its prose before the loop (issue 30, a30loop), the retry's
    first sentences are sealed — cut before their first near repeat, no loop in them — and nothing of the copied
    opening. Since a30 a local model's loop guard counts clauses too: the loop varies a word per sentence
    (餐具／物品) but repeats the clause 「都是刚从上层传来」, so the stop fires on the clause, earlier. The scribe's reply is not in this recording: the one recorded in ``keepalive_prompt`` is served.
    Old main sealed the copy of the opening at once and booked it for the scribe."""
    ex = exchanges("lore_copy")
    card = load_card(DEMO_CARD)
    first = streamed_text(ex[0].body)
    assert "目光在你被雨水浸透的肩头停了一瞬" in first and "目光在你被雨水浸透的肩头停了一瞬" in card.first_mes
    server.script(*(replay(t) for t in ex), replay(exchanges("keepalive_prompt")[1]))
    res, events, chat = await play(tmp_path, server, "lore_copy", client(server, "lore_copy"), prose=True)
    retry = streamed_text(ex[1].body)
    assert res.sealed and res.final and retry.startswith(res.final.rstrip("*"))
    assert "目光在你被雨水浸透的肩头停了一瞬" not in res.final and "各种物品" not in res.final  # its first near repeat
    said = notices(events)
    assert ECHO_RETRY_NOTICES["opening"] in said
    assert len(server.requests) == len(ex) + 1 == 3  # the beat's call, the retry, the scribe
    recorded = beat_of("lore_copy")["notices"]  # what the recording engine said: the same up to the loop
    assert said[:2] == recorded[:2] and recorded[2].startswith("回复开始重复自己")
    assert said[2] == message("beat.cut_repeat_sealed", what=message("beat.repeat.clause"))


async def test_lore_names_used_in_prose_stay_in_the_draft(tmp_path, server):
    """The 1.5B, asked about the ferry with the 镇北渡口 entry in 【相关设定】, wrote prose around 老周 (the ferryman
    only the lorebook names) and ran on to the output cap. Nothing of the prose is taken for an echo of the data
    blocks. The recording engine (and main before a30) left the beat unsealed at the cap; since a30 a local model's
    reply cut by the output cap is sealed with its complete sentences before its first near repeat (the same rule
    as a looping reply's): the sealed final keeps the lore name, ends at a sentence end, holds the reply's
    repeated exchange once, and the notice says the unfinished tail was cut. The scribe's reply is not in this
    recording: the one recorded in ``keepalive_prompt`` is served."""
    ex = exchanges("lore_in_prose")
    assert "老周" in ex[0].request["body"]["messages"][-1]["content"]  # the entry's text was in the prompt
    server.script(*(replay(t) for t in ex), replay(exchanges("keepalive_prompt")[1]))
    res, events, chat = await play(tmp_path, server, "lore_in_prose", client(server, "lore_in_prose"), prose=True)
    streamed = streamed_text(ex[0].body)
    assert res.sealed and res.output.cut is None
    assert "老周" in res.final and streamed.startswith(res.final.rstrip("*").rstrip())
    assert res.final.count("你这个朋友的船已经到了镇北渡口") == 1 and not res.final.endswith("老周")
    assert message("beat.cut_length_sealed") in notices(events)
    assert beat_of("lore_in_prose")["notices"][1] == message("beat.cut_length")  # what the recording engine did


def test_scribe_quality_reads_the_recorded_scribe_replies():
    """bench/scribe_quality.py replays every scribe reply recorded from the real small models as well: one beat
    each, the 0.5B's time-and-place phrase refused by the guards (old main applied both)."""
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, str(root / "bench" / "scribe_quality.py"), "--json"], cwd=str(root),
                       capture_output=True, text=True, encoding="utf-8", timeout=300,
                       env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert r.returncode == 0, r.stderr
    wire = json.loads(r.stdout)["wire"]
    assert "agent_turn-5" in wire["cases"] and wire["beats"] == len(wire["cases"]) >= 4
    assert wire["rejected"] >= 2 and wire["applied"] >= 1


def test_a_retry_that_copies_the_lore_the_question_and_the_nudge_is_an_echo():
    """Not a wire recording: the text below is the retry reply the 1.5B wrote in a ``bench/real_model.py`` run
    (tool mode, beat 3, copied from that run's session log), after its first reply had copied an earlier one. It is
    the lore entries sentence by sentence, the user's question and our own nudge copied back. Counted without the
    nudge it stayed under the echo share and was sealed (nudge and all); with the nudge as a source of its own it
    is an echo (the beat ends unsealed), and captured text never keeps the nudge."""
    from liyuan_desktop.core.beat.echo import EchoSources
    from liyuan_desktop.core.beat.loop import echo_nudge

    nudge = echo_nudge("previous")
    lore = ("【相关设定】本拍命中的世界书条目原文：\n\n【听雨轩】听雨轩是栖水镇上开了近百年的老客栈，前后两进，后院有一株老梨树。"
            "店里的规矩是祖上传下来的：不问来处，不问去处，账清即可。镇上人都说，在听雨轩说过的话，不会传到第二个人耳朵里。\n\n"
            "【镇北渡口】镇北渡口每日只有清晨一班船出镇。船夫老周摆渡三十年，认得每一个离镇的人。")
    user = "「我明早要出镇，镇北渡口几时有船？摆渡的是谁？」"
    reply = ("*你指的是听雨轩？听雨轩是栖水镇上开了近百年的老客栈，前后两进，后院有一株老梨树。店里的规矩是祖上传下来的：不问来处，"
             "不问去处，账清即可。镇上人都说，在听雨轩说过的话，不会传到第二个人耳朵里。*\n\n*你指的是镇北渡口？镇北渡口每日只有清晨"
             "一班船出镇。船夫老周摆渡三十年，认得每一个离镇的人。*\n\n*你指的是更夫？更夫在镇北渡口每天出港，负责看守船只。他每天都要"
             "看护船上的货物，以确保船只的安全。*\n\n*我明早要出镇，镇北渡口几时有船？摆渡的是谁？*\n\n" + nudge)
    sources = EchoSources([("data", lore), ("user", user)])
    assert sources.echo_of(reply) == ""  # what sealed it
    sources.add("data", nudge)
    assert sources.echo_of(reply) == "data"


async def test_a_lore_phrase_the_15b_carried_into_dialogue_is_kept(tmp_path, server):
    """Tool play with the compact prompt, the 1.5B not yet seen calling a tool natively: the umbrella's entry went
    with the beat as text (issue 30 §4), and the 1.5B answered with the entry's 焦痕 and a clause of the 听雨轩 entry
    (「不问来处，不问去处，账清即可」) in 青梧's line. Today the engine sends the entries' text again and seals the
    reply with the lore phrase in it (§2: a fact used in prose is not an echo of the data blocks). Old main kept this
    one too — the clause is part of a longer sentence, not a copied block — so this guards it rather than catching
    an old failure."""
    ex = exchanges("lore_sentence_tools")
    assert "伞骨断了一根" in ex[0].request["body"]["messages"][-1]["content"]
    server.script(*(replay(t) for t in ex))
    model = client(server, "lore_sentence_tools")
    model.compact_prompt = True
    res, _events, _chat = await play(tmp_path, server, "lore_sentence_tools", model)
    assert res.sealed and "不问来处，不问去处，账清即可" in res.final and "焦痕" in res.final
    assert res.final == beat_of("lore_sentence_tools")["final"]
    assert "伞骨断了一根" in server.requests[0].json["messages"][-1]["content"]  # the entry's text went along


async def test_calls_written_as_text_do_not_end_the_inlined_lore(tmp_path, server):
    """Scripted (not recorded), in the shape the recorded 1.5B and 0.5B use: a model whose only tool calls are
    ```json blocks in its content has not shown it looks lore up, so the next beat still carries the activated
    entries' text (main before this change sent titles only once any call, text or native, was in the branch)."""
    import json as _json

    from sse_server import chunk, sse_reply

    write = [{"name": "draft_write", "arguments": {"version": 0, "content": "她把茶推过柜台，没有抬头。「近百年了。」"}},
             {"name": "draft_seal", "arguments": {"version": 1}}]
    fenced = "```json\n" + _json.dumps(write, ensure_ascii=False) + "\n```"
    scribe = sse_reply(chunk('{"patch": {}}'), chunk(finish="stop"))
    server.script(sse_reply(chunk(fenced), chunk(finish="stop")), scribe,
                  sse_reply(chunk("她笑了笑，说后院那株老梨树还在。"), chunk(finish="stop")), scribe)
    model = OpenAIChatModel(server.base_url, "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", None, retry_base_wait=0.0,
                            read_timeout=5.0)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    try:
        first = await chat.send("我走到柜台前：「掌柜的，这听雨轩开了多少年了？」")
        second = await chat.send("「听雨轩后院那棵梨树还在吗？」")
    finally:
        await model.aclose()
    assert first.sealed and second.sealed
    actor = [r.json for r in server.requests if r.json.get("tools")]
    assert len(actor) == 2
    assert "后院有一株老梨树" in actor[1]["messages"][-1]["content"]  # the entry's text, not just its title


def test_a_call_wrapped_in_tools_tags_runs():
    """Not a wire recording: the reply the 1.5B gave to the agent turn of a ``bench/real_model.py`` run (copied from
    its printed final): its ``write`` call wrapped in ``<tools>…</tools>``, the tag Qwen's chat template puts
    around the tool list. It was left as the reply (no file written, the turn "discussed"); it is a call now."""
    from liyuan_desktop.core.beat.text_calls import find_text_calls
    from liyuan_desktop.core.beat.tools.registry import get_tool
    from liyuan_desktop.core.beat.tools.sets import AGENT_TOOLS

    reply = ('<tools> {"name": "write", "arguments": {"path": "正文/001-雨夜客栈.md", "content": '
             '"青梧在听雨轩柜台后擦那把旧油纸伞。"}} </tools>')
    calls, rest = find_text_calls(reply, {n: get_tool(n) for n in AGENT_TOOLS}, tag="1")
    assert [c.name for c in calls] == ["write"] and rest.strip() == ""


async def test_the_15b_looping_on_the_users_question_with_lore_next_to_it_stays_unsealed(tmp_path, server):
    """Recorded with the lore block last, right before the user's words (a30loop): the 1.5B answered the umbrella
    question with one sentence and the user's question copied back, then looped on them; the repetition stop cut
    it. The prose before the loop is too short and mostly the user's words, so the beat stays unsealed as before
    (a looping beat is sealed only with enough new prose) — the recording engine said the same."""
    ex = exchanges("lore_near")
    sent = ex[0].request["body"]["messages"][-1]["content"]
    assert sent.index("【语言】") < sent.index("【相关设定】") < sent.index("伞骨断了一根") < sent.index("我指了指")
    server.script(*(replay(t) for t in ex))
    res, events, chat = await play(tmp_path, server, "lore_near", client(server, "lore_near"), prose=True)
    assert not res.sealed and res.output.cut == "repetition"
    said = notices(events)
    assert said == beat_of("lore_near")["notices"]
    assert message("beat.cut_repeat", what=message("beat.repeat.sentence")) in said
    assert len(server.requests) == 1  # no scribe for an unsealed beat
    draft = chat.latest_beat().draft or ""
    assert draft.count("心中暗自叹了口气") == 1


# -- §1 since a30dry: a fresh beat to a local llama.cpp server carries the DRY sampler ------------------------------
async def test_without_dry_the_15b_copied_the_opening_and_with_it_wrote_new_prose_with_a_lore_fact(tmp_path, server):
    """The same prose-only beat (the inn question, compact prompt, llama.cpp seed 2) recorded twice from the real
    1.5B: ``opening_no_dry`` by a client not told it is llama.cpp — no DRY, as every local server got before — and
    ``opening_dry`` by one that knows (``provider="llamacpp"``, as a discovered or preset llama.cpp provider is).
    Without DRY the first reply began with the opening's second paragraph word for word (the echo guard caught it
    and retried); with DRY the first reply was new prose holding a fact only the lorebook has (不问来处), sealed
    at once. Today's engine sends the recorded DRY fields itself; old main sent no DRY to any server."""
    from liyuan_desktop.core.beat.echo import EchoSources
    from liyuan_desktop.core.llm.sampling import DRY_FIELDS, LOCAL_DRY
    card = load_card(DEMO_CARD)
    copied = "目光在你被雨水浸透的肩头停了一瞬，随即移开，像是什么都没看见。她取过一只干净的粗瓷杯"
    assert copied in card.first_mes
    plain, dry = exchanges("opening_no_dry"), exchanges("opening_dry")
    assert not any(f in plain[0].request["body"] for f in DRY_FIELDS)
    assert {k: dry[0].request["body"][k] for k in LOCAL_DRY} == LOCAL_DRY
    assert copied in streamed_text(plain[0].body) and copied not in streamed_text(dry[0].body)
    # played again: a client that knows it is llama.cpp sends the recorded DRY fields, seals the first reply
    server.script(*(replay(t) for t in dry))
    res, events, chat = await play(tmp_path / "dry", server, "opening_dry",
                                   client(server, "opening_dry", provider="llamacpp"), prose=True)
    sent = server.requests[0].json
    assert {k: sent[k] for k in (*LOCAL_DRY, "dry_penalty_last_n")} == \
        {k: dry[0].request["body"][k] for k in (*LOCAL_DRY, "dry_penalty_last_n")}
    assert not any(f in server.requests[1].json for f in DRY_FIELDS)  # the scribe: none
    assert res.sealed and "不问来处" in res.final and copied not in res.final
    assert EchoSources([("opening", card.first_mes)]).echo_of(res.final) == ""
    assert not any(n in notices(events) for n in ECHO_RETRY_NOTICES.values())
    # without DRY the copy is caught and retried, never sealed
    server.requests.clear()
    server.script(*(replay(t) for t in plain))
    res, events, chat = await play(tmp_path / "plain", server, "opening_no_dry", client(server, "opening_no_dry"),
                                   prose=True)
    assert ECHO_RETRY_NOTICES["opening"] in notices(events) and copied not in (res.final or "")


# -- recorded with the engine issue 30 was filed against (a30old) -------------------------------------------------
async def test_lore_entries_copied_into_the_reply_are_not_sealed_as_debris(tmp_path, server):
    """§2 as the engine issue 30 was filed against played it (commit 1752d0e built the requests and ran the beat;
    ``engine.at`` in the meta; seed 10, temperature 1.1, found by ``bench/sweep_wire.py lore --engine-at 1752d0e``).
    Asked who the watchman is, the 0.5B answered behind an invented 【开场 · …】 label with the opening's first two
    paragraphs and then the 听雨轩 and 更夫 entries under their 【title】 inside ``**…**`` — the 更夫 entry is the
    answer. The old engine's echo filter cut the entries and sealed the opening's copy with two empty ``****`` left
    where the lore had been (``beat`` in the meta: sealed, none of 姓钱 / 跛 / 三更 in the final) — issue 30 §2's
    "beat left as *门帘一掀…* **老板娘：（继续叙述）**". Today the same bytes are taken for a copy of the prompt's data
    (it is mostly the opening and the entries word for word): retried once, nudged and hotter (the recorded reply is
    served again), then left unsealed with the notice that asks for a regenerate — nothing half-deleted is sealed.
    The scribe's recorded reply is never asked for. Replayed through 1752d0e's own ``Chat.send`` (a30old, by hand)
    the same bytes are sealed again as the opening's copy and a stray ``*``: ``not res.sealed`` fails there."""
    ex = exchanges("lore_old_entry")
    assert ex[0].meta["engine"]["at"].startswith("1752d0e")
    reply = streamed_text(ex[0].body)
    assert "【更夫】镇上的更夫姓钱" in reply and "【开场" in reply
    old = beat_of("lore_old_entry")
    assert old["sealed"] and "****" in old["final"]
    assert not any(f in old["final"] for f in ("姓钱", "跛", "三更", "老梨树"))  # the lore was cut, the debris sealed
    server.script(replay(ex[0]), replay(ex[0]), *(replay(t) for t in ex[1:]))
    res, events, chat = await play(tmp_path, server, "lore_old_entry", client(server, "lore_old_entry"), prose=True)
    assert not res.sealed and not res.final
    said = notices(events)
    assert ECHO_RETRY_NOTICES["data"] in said and ECHO_GAVE_UP_NOTICES["data"] in said
    assert len(server.requests) == 2  # the beat's call and the retry; no scribe for an unsealed beat
    assert "****" not in (chat.latest_beat().draft or "")



async def test_a_write_whose_arguments_came_as_a_list_runs_and_its_error_reaches_the_model(tmp_path, server):
    """§5 as the engine issue 30 was filed against played it (commit 1752d0e ran the beat; ``engine.at`` in the meta;
    llama.cpp seed 14, found by ``bench/sweep_wire.py beats agent_old 0.5b 1-40 none … 1752d0e``): the 0.5B answered
    the chapter request with one bare-JSON ``write`` whose ``arguments`` were a list holding the object, path
    ``/正文/001-雨夜客栈.md``. The old engine did not take it for a call: the raw JSON was the reply and the turn ended
    (``beat`` in the meta: one exchange, no chapter file) — this test's first assertions fail on that ending. Today
    the list is read as the object it holds and the call runs; the path is refused as absolute and that refusal goes
    back to the model as the call's tool result (never an exception out of ``Chat.send``). The model's next reply is
    not in this recording: the rest of the recorded ``agent_turn`` (its empty reply, scribe and summary) is served.
    Replayed through 1752d0e's own ``Chat.send`` (a30old, by hand): one request, no call, the JSON as the reply."""
    ex = exchanges("agent_old")
    assert ex[0].meta["engine"]["at"].startswith("1752d0e")
    old = beat_of("agent_old")
    assert ex[-1].meta["of"] == 1 and old["final"].lstrip().startswith("{") and '"arguments": [' in old["final"]
    assert not [f for f in old["files"] if f.startswith("正文/")]
    server.script(*(replay(t) for t in ex), *(replay(t) for t in exchanges("agent_turn")[3:]))
    res, events, _chat = await play(tmp_path, server, "agent_old", client(server, "agent_old"))
    assert TEXT_CALLS_NOTICE.format(names="write") in notices(events) and res.calls[0] == ["write"]
    assert len(server.requests) >= 2 and res.outcome != "error" and not res.final.lstrip().startswith("{")
    results = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and '"bad_path"' in results[0]["content"] and "/正文/001-雨夜客栈.md" in results[0]["content"]
