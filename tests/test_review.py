"""Issue 19 §4, chapter review: the local checks (core/story/review.py), the review turn through the real engine
(core/chat/review.py: the ledger before the chapter, a replayed model answer with broken JSON, accept → the agent's next
turn gets 【审稿意见】 and fixes it, intentional → never reported again, 撤销本轮 → queued again), the agent tool
``chapter_review`` (offered only with an outline), and ``liyuan story review`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.beat.tools.sets import AGENT_TOOLS, WRITING_TOOLS
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir, home
from liyuan_desktop.core.story.review import (
    ReviewInput,
    ThreadView,
    check_dead_speakers,
    check_lost_items,
    check_repetition,
    check_stock_phrases,
    fingerprint,
    is_dead,
    local_findings,
    locate,
    lost_items,
    parse_phrases,
    save_stock_phrases,
    stock_phrases,
)
from liyuan_desktop.core.text import utf16_slice


def _at(text: str, f) -> str:
    return utf16_slice(text, f.offset, f.offset + f.length)


# ------------------------------------------------------------------------------------------ the local checks


def test_dead_character_speaking_is_found_but_not_when_remembered_or_quoted():
    text = ("😀雨停了。\n"
            "「别回头。」老周低声道。\n"
            "她想起老周说过：「别回头。」\n"
            "林青说：「老周已经不在了。」\n"
            "老周：「我还在。」\n")
    found = check_dead_speakers(text, "006.md", {"老周": "第4章遇害身亡"})
    assert [_at(text, f) for f in found] == ["「别回头。」老周低声道。", "老周：「我还在。」"]
    assert all(f.kind == "dead_speaks" and "老周" in f.note for f in found)
    # the astral emoji before: offsets are UTF-16 units (2 for 😀)
    assert found[0].offset == len("😀雨停了。\n") + 1
    assert check_dead_speakers(text, "006.md", {}) == []
    assert is_dead("已身亡") and is_dead("dead") and not is_dead("假死脱身") and not is_dead("生死未卜")


def test_lost_items_from_the_inventory_history_and_their_reuse():
    lost = lost_items([["黄铜怀表（林青持有）", "玉佩（阿檀持有）"], ["玉佩（碎了）"]])
    assert lost == {"黄铜怀表": "不在物品清单里了", "玉佩": "玉佩（碎了）"}
    text = "她摸了摸口袋，怀表丢了。\n林青打开黄铜怀表看时间。\n"
    (f,) = check_lost_items(text, "005.md", {"黄铜怀表": "不在物品清单里了"})
    assert _at(text, f).startswith("黄铜怀表看时间") and f.kind == "lost_item"


def test_repetition_previous_chapter_and_overused_phrase():
    text = "雨下得又大又急又冷。她走了很久。雨下得又大又急又冷。\n" + "他轻轻地叹了口气。" * 4 + "\n林青林青林青林青林青林青林青。"
    previous = "窗外的灯一盏一盏亮了起来。"
    found = check_repetition(text + previous, "003.md", previous, "002.md", names=["林青"])
    notes = [f.note for f in found]
    assert "这句在本章出现了 2 次。" in notes
    assert any("和上一章（002.md）一字不差" in n for n in notes)
    assert not any("林青林青" in f.quote for f in found)  # names repeat by nature
    # each finding's quote is at its offset
    for f in found:
        assert _at(text + previous, f) == f.quote


def test_stock_phrases_default_list_user_list_and_english_word_boundaries():
    phrases = stock_phrases()
    assert "嘴角勾起一抹" in phrases and "a testament to" in phrases  # zh + en shipped
    text = "她嘴角勾起一抹笑。His smile was a testament to patience. atestament to nothing. A Testament to it."
    found = check_stock_phrases(text, "001.md", ["嘴角勾起一抹", "a testament to"])
    assert [f.quote for f in found] == ["嘴角勾起一抹", "a testament to"]
    assert "共 2 次" in found[1].note
    # the user's own list replaces the shipped one; clearing it brings the shipped one back
    save_stock_phrases("# mine\n心头一震\n")
    assert stock_phrases() == ["心头一震"] and (home() / "规则" / "套话.txt").is_file()
    save_stock_phrases("")
    assert "嘴角勾起一抹" in stock_phrases()
    assert parse_phrases("a\n\n# c\na\nb") == ["a", "b"]


def test_threads_length_and_intentional_fingerprints():
    inp = ReviewInput(file="005.md", text="林青走过长街。", chapter=5, target=100,
                      threads=[ThreadView(title="玉佩的来历", due_chapter=4, file="002.md", quote="玉佩的来历无人知晓。", offset=9),
                               ThreadView(title="阿檀的身世", due_chapter=5),
                               ThreadView(title="旧债", due_chapter=3, intentional=True),
                               ThreadView(title="信", due_chapter=2, open=False)])
    found, skipped = local_findings(inp)
    kinds = [(f.kind, f.file) for f in found]
    assert ("thread", "002.md") in kinds and ("outline", "005.md") in kinds
    assert any("阿檀的身世" in f.note and "应在本章" in f.note for f in found)
    assert not any("旧债" in f.note or "「信」" in f.note for f in found)
    assert skipped == 0
    again, skipped = local_findings(inp, {found[0].id: "x"})
    assert skipped == 1 and found[0].id not in [f.id for f in again]
    assert fingerprint("repetition", "a.md", "一 句") == fingerprint("repetition", "a.md", "一句")


def test_locate_forgives_punctuation_variants_and_whitespace():
    text = "他说：「走吧。」\n她没有回答。"
    assert locate(text, '他说:"走吧."') == 0
    assert locate(text, "她 没有回答") == text.index("她没有")
    assert locate(text, "不存在") is None


# ------------------------------------------------------------------------------------------ through the engine

OUTLINE = "# 第一卷\n" + "".join(f"## 第{i}章 章{i} {{target=10}}\n- 情节{i}\n" for i in range(1, 11))


def chapter_text(i: int) -> str:
    if i == 6:
        return "雨夜。\n「我回来了。」老周笑道。\n林青没有说话。\n"
    return f"林青走过第{i}条街。阿檀在桥上等她。\n"


def turn_steps(i: int) -> list[dict]:
    name = f"{i:03d}-章{i}.md"
    return [{"content": "", "tool_calls": [
        {"name": "write", "arguments": json.dumps({"path": name, "content": chapter_text(i)}, ensure_ascii=False)}]},
        {"content": f"第{i}章写好了。", "tool_calls": []}]


def scribe_patch(i: int) -> str:
    chars = {"林青": {"status": "平安"}, "老周": {"status": "第4章遇害身亡" if i >= 4 else "守渡口"}}
    inv = ["黄铜怀表（林青持有）"] if i < 3 else []
    return json.dumps({"patch": {"time": f"第{i}天", "characters": chars, "inventory": inv}}, ensure_ascii=False)


FIX = [{"content": "", "tool_calls": [
    {"name": "edit", "arguments": json.dumps({"path": "006-章6.md", "oldText": "「我回来了。」老周笑道。",
                                              "newText": "她仿佛又听见老周的笑声。"}, ensure_ascii=False)}]},
    {"content": "按审稿意见改了第6章：老周已死，不再开口。", "tool_calls": []}]

#: the model's review: prose around broken JSON (a trailing comma, a missing closing brace); one quote retyped with
#: half-width punctuation, one that is not in the chapter
MODEL_REVIEW = ('审稿如下：\n```json\n{"findings": [{"kind": "ooc", "quote": "林青没有说话.", "note": "林青向来话多，这里沉默得突兀。"},'
                ' {"kind": "timeline", "quote": "第二天清晨", "note": "时间对不上。"}, {"kind": "bogus", "note": "x"},]\n```')


async def test_review_turn_accept_fix_intentional_and_restore():
    card = load_card(DEMO_CARD)
    d = chat_dir(card.name, "长篇-审稿")
    actor = [s for i in range(1, 11) for s in turn_steps(i)] + FIX + [
        {"content": "好的。", "tool_calls": []}]
    chat = Chat.create(d, card, ReplayModel(actor=actor, scribe=[scribe_patch(i) for i in range(1, 11)] + [scribe_patch(10)]),
                       mode="agent")
    assert chat.agent.tool_names() == AGENT_TOOLS
    chat.save_outline(OUTLINE)
    assert "chapter_review" in chat.agent.tool_names() and chat.agent.tool_names() == (*AGENT_TOOLS, *WRITING_TOOLS)
    for i in range(1, 11):
        res = await chat.send(f"写第{i}章")
        assert res.error is None
        assert "【审稿意见】" not in res.injection  # nothing accepted: the block is as before
    assert chat.current_state().characters["老周"].status == "第4章遇害身亡"

    # chapter 3 is reviewed against the ledger before it: 老周 was alive then, nothing to say about him
    r3 = await chat.review_chapter("003-章3.md", use_model=False)
    assert not [f for f in r3.findings if f.kind == "dead_speaks"] and r3.chapter == 3

    # chapter 6: the local check finds 老周 speaking; the model adds an ooc finding (its quote located), and its
    # broken JSON is repaired; an unknown kind becomes a contradiction, a quote not in the chapter keeps no offset
    review_model = ReplayModel(actor=[], scribe=[MODEL_REVIEW])
    r6 = await chat.review_chapter("006-章6.md", model=review_model)
    text6 = chapter_text(6)
    dead = [f for f in r6.findings if f.kind == "dead_speaks"]
    assert len(dead) == 1 and _at(text6, dead[0]) == "「我回来了。」老周笑道。" and dead[0].source == "local"
    ooc = [f for f in r6.findings if f.kind == "ooc"]
    assert len(ooc) == 1 and _at(text6, ooc[0]) == "林青没有说话。" and ooc[0].source == "model"
    tl = [f for f in r6.findings if f.kind == "timeline"]
    assert tl and tl[0].offset is None
    assert any("修复" in p for p in r6.problems) and any("没找到" in p for p in r6.problems)
    assert r6.model_error is None
    assert chat.last_review("006-章6.md").findings == r6.findings  # kept in 审稿.json
    assert (d / "正文" / "006-章6.md").read_text("utf-8") == text6  # a review never edits

    # accept the dead-speaker finding: the next agent turn's state block carries it, the agent fixes the chapter
    chat.accept_finding(dead[0].id)
    chat.accept_finding(dead[0].id)  # twice: queued once
    assert [f.id for f in chat.pending_review()] == [dead[0].id]
    block = chat.agent.state_block(chat.current_state())
    assert block.count("〔审稿 ") == 1 and "【审稿意见】" in block and "006-章6.md" in block
    res = await chat.send("按审稿意见改")
    assert f"〔审稿 {dead[0].id}〕" in res.injection
    fixed = (d / "正文" / "006-章6.md").read_text("utf-8")
    assert "老周笑道" not in fixed
    assert chat.pending_review() == []  # delivered on this branch
    fix_cp = chat.history_log.latest()
    again = await chat.review_chapter("006-章6.md", use_model=False)
    assert not [f for f in again.findings if f.kind == "dead_speaks"]

    # the ooc finding marked intentional: not reported again (the model's answer repeats it)
    chat.mark_finding_intentional(ooc[0].id)
    r6b = await chat.review_chapter("006-章6.md", model=ReplayModel(actor=[], scribe=[MODEL_REVIEW]))
    assert not [f for f in r6b.findings if f.kind == "ooc"] and r6b.suppressed >= 1

    # 撤销本轮 of the fix: the files go back, and the accepted finding is queued again on this branch
    chat.restore_checkpoint(fix_cp.id, with_conversation=True)
    assert "老周笑道" in (d / "正文" / "006-章6.md").read_text("utf-8")
    assert [f.id for f in chat.pending_review()] == [dead[0].id]

    # a model that fails: the local findings stand, the error is said
    class Down:
        name, is_replay = "down", False

        async def complete(self, request, on_delta=None):
            from liyuan_desktop.core.llm.types import ModelError
            raise ModelError("network", "连不上")

    r = await chat.review_chapter("006-章6.md", model=Down())
    assert "连不上" in (r.model_error or "") and [f for f in r.findings if f.kind == "dead_speaks"]

    # the CLI: local review as JSON, and with a replayed model answer (a real subprocess on the chat folder)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "liyuan_desktop", "story", "review", str(d), *args], cwd=str(ROOT),
                              env=env, capture_output=True, text=True, encoding="utf-8", timeout=120)

    p = run("--chapter", "006-章6.md", "--local", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["file"] == "006-章6.md" and any(f["kind"] == "dead_speaks" for f in data["findings"])
    replay = d.parent / "review-replay.json"
    replay.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": [{"scribe": [MODEL_REVIEW]}]},
                                 ensure_ascii=False), "utf-8")
    p = run("--chapter", "006-章6.md", "--model", f"replay:{replay}")
    assert p.returncode == 0, p.stderr
    assert "[死者开口] 006-章6.md" in p.stdout and "[时间线]" in p.stdout and "有意" in p.stdout
    p = run("--chapter", "099-没有.md", "--local")
    assert p.returncode == 2 and p.stderr.startswith("liyuan: ")


async def test_agent_calls_chapter_review_on_its_own_chapter():
    card = load_card(DEMO_CARD)
    d = chat_dir(card.name, "长篇-自审")
    text = "她嘴角勾起一抹笑。\n雨下得又大又急又冷。雨下得又大又急又冷。\n"
    actor = [
        {"content": "", "tool_calls": [
            {"name": "write", "arguments": json.dumps({"path": "001-雨.md", "content": text}, ensure_ascii=False)}]},
        {"content": "", "tool_calls": [{"name": "chapter_review", "arguments": json.dumps({"path": "001-雨.md"})}]},
        {"content": "自审完：有一句重复、一处套话，要改吗？", "tool_calls": []},
    ]
    chat = Chat.create(d, card, ReplayModel(actor=actor, scribe=[json.dumps({"patch": {}})]), mode="agent")
    chat.save_outline("## 第一章 雨 {target=2000}\n- 她在雨里等人\n")
    res = await chat.send("写第一章并自审")
    assert res.error is None
    calls = res.output.calls
    result = next(t for c in calls for t in c.tool_calls if t.name == "chapter_review")
    assert result.ok
    data = json.loads(result.result) if isinstance(result.result, str) else result.result
    kinds = sorted(f["kind"] for f in data["findings"])
    assert kinds == ["outline", "repetition", "stock_phrase"]
    assert data["outline_beats"] == ["她在雨里等人"] and data["chapter"] == 1
    assert (d / "正文" / "001-雨.md").read_text("utf-8") == text  # never an edit
