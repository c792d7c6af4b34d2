"""Issue 19, the writing room end to end: a scripted 10-chapter project through the real engine (replayed model
responses, the real agent loop, file tools, checkpoints and scribe step). The user writes the outline; each turn the
agent writes a chapter and marks it drafted in the outline; the scribe plants a thread in chapter 2 and pays it off in
chapter 8; a restore (撤销本轮) takes the outline, the thread and the files back together. After every turn the test
checks the ledger, the outline and the codex."""

from __future__ import annotations

import json

from helpers import DEMO_CARD

from liyuan_desktop.core.beat.tools.sets import AGENT_TOOLS, WRITING_TOOLS
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.ledger.threads import ThreadEvent
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.text import count_words

OUTLINE = "\n".join([
    "# 第一卷 雨夜",
    *[f"## 第{i}章 章{i} {{target=20}}\n- 情节{i}" for i in range(1, 6)],
    "# 第二卷 回声",
    *[f"## 第{i}章 章{i} {{target=20}}\n- 情节{i}" + ("\n- 回收：玉佩的来历" if i == 8 else "") for i in range(6, 11)],
]) + "\n"
THREAD = "玉佩的来历"


def chapter_text(i: int) -> str:
    if i == 2:
        return "林青在雨里捡到一块玉佩。玉佩的来历无人知晓。阿檀看着她。"
    if i == 8:
        return "阿檀终于说出玉佩的来历：那是林青母亲的遗物。"
    return f"林青走过第{i}条街。阿檀在桥上等她。"


def turn_steps(i: int) -> list[dict]:
    name = f"{i:03d}-章{i}.md"
    return [
        {"content": "", "tool_calls": [
            {"name": "write", "arguments": json.dumps({"path": name, "content": chapter_text(i)}, ensure_ascii=False)},
            {"name": "outline_edit", "arguments": json.dumps({"chapter": str(i), "status": "drafted", "file": name},
                                                             ensure_ascii=False)},
        ]},
        {"content": f"第{i}章写好了。", "tool_calls": []},
    ]


def scribe_patch(i: int) -> str:
    threads = [THREAD] if 2 <= i < 8 else []
    return json.dumps({"patch": {"time": f"第{i}天", "characters": {"林青": {"status": f"第{i}章的林青"}},
                                 "plot_threads": threads}}, ensure_ascii=False)


async def test_ten_chapter_project_outline_threads_codex_and_restore():
    card = load_card(DEMO_CARD)
    actor = [s for i in range(1, 11) for s in turn_steps(i)]
    scribe = [scribe_patch(i) for i in range(1, 11)]
    d = chat_dir(card.name, "长篇-写作间")
    chat = Chat.create(d, card, ReplayModel(actor=actor, scribe=scribe), mode="agent")
    assert chat.outline() is None and chat.agent.tool_names() == AGENT_TOOLS  # nothing used: the old tool block
    chat.save_outline(OUTLINE)
    assert chat.agent.tool_names() == (*AGENT_TOOLS, *WRITING_TOOLS)
    assert [c.title for c in chat.outline().chapters()] == [f"第{i}章 章{i}" for i in range(1, 11)]
    cps = {}
    for i in range(1, 11):
        res = await chat.send(f"写第{i}章")
        assert res.error is None and res.final == f"第{i}章写好了。"
        cps[i] = chat.history_log.latest()
        assert "../大纲.md" in cps[i].files  # the outline is versioned with the chapters
        # the outline: chapters 1..i drafted and linked
        o = chat.outline()
        chs = o.chapters()
        assert [c.status for c in chs] == ["drafted"] * i + ["planned"] * (10 - i)
        assert chs[i - 1].file == f"{i:03d}-章{i}.md"
        # the state block showed the outline's branch and the law
        assert "【大纲】大纲即法律" in res.injection
        # the ledger
        st = chat.current_state()
        assert st.time == f"第{i}天" and st.characters["林青"].status == f"第{i}章的林青"
        # threads: planted in chapter 2 (quote, file, UTF-16 offset), paid off in chapter 8
        ths = chat.threads()
        if i < 2:
            assert ths == []
        else:
            (t,) = ths
            assert t.title == THREAD and t.planted.chapter == 2 and t.planted.file == "002-章2.md"
            assert t.planted.quote == "玉佩的来历无人知晓。"
            assert chapter_text(2)[t.planted.offset:t.planted.offset + len(t.planted.quote)] == t.planted.quote
            assert t.state == ("planted" if i < 8 else "paid_off")
            assert t.due_chapter == 8  # the outline's 「回收：…」 beat in chapter 8
            if i >= 8:
                assert t.closed.chapter == 8 and t.closed.file == "008-章8.md"
        # the codex: 林青 is mentioned in every chapter written so far
        (lin,) = chat.codex("林青")
        assert lin.kind == "character" and list(lin.chapters) == [f"{k:03d}-章{k}.md" for k in range(1, i + 1)]
        assert lin.first_mention.file == "001-章1.md" and lin.first_mention.offset == 0
        assert lin.facts[-1].text == f"状态：第{i}章的林青" and lin.facts[-1].from_chapter == i
        assert [f.from_chapter for f in lin.facts_at(3)] == [min(i, 3)]
    # progress: 10 chapters, targets from the outline, today's count
    p = chat.writing_progress()
    assert [c.words for c in p.chapters] == [count_words(chapter_text(i)) for i in range(1, 11)]
    assert p.chapters[0].words == 15  # 14 CJK characters and the number 1 (one word)
    assert p.target == 200 and [v.title for v in p.volumes] == ["第一卷 雨夜", "第二卷 回声"]
    assert p.today == p.words
    cache = json.loads((d / ".liyuan-words.json").read_text("utf-8"))  # counted once per content, kept on disk
    assert sorted(cache.values()) == sorted(count_words(chapter_text(i)) for i in range(1, 11))
    # 撤销本轮 of chapter 8: files, outline and thread go back together
    res = chat.restore_checkpoint(cps[8].id, with_conversation=True)
    o = chat.outline()
    assert [c.status for c in o.chapters()][:8] == ["drafted"] * 7 + ["planned"]
    assert not (d / "正文" / "008-章8.md").exists()
    (t,) = chat.threads()
    assert t.state == "planted" and t.closed is None
    # the user marks the reopened thread intentional and sets its due chapter: per branch, on the ledger
    t2 = chat.thread_event(ThreadEvent(op="edit", id=t.id, due_chapter=5))
    assert t2.due_chapter == 5
    block = chat.agent.state_block(chat.current_state())
    assert "【伏笔】" in block and "⚠已过期 玉佩的来历" in block
    t3 = chat.thread_event(ThreadEvent(op="intentional", id=t.id, value=True))
    assert t3.intentional and not t3.past_due(8)
    # restoring the later checkpoint (files only) brings chapter 8 and its outline status back
    chat.restore_checkpoint(cps[10].id)
    assert chat.outline().chapters()[7].status == "drafted"
    assert (d / "正文" / "008-章8.md").read_text("utf-8") == chapter_text(8)

    # the CLI prints the same (a real subprocess on the chat folder)
    import os
    import subprocess
    import sys

    from helpers import ROOT

    def run(*args: str) -> str:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop", "story", *args, str(d)], cwd=str(ROOT), env=env,
                           capture_output=True, text=True, encoding="utf-8", timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert "# 第二卷 回声" in run("outline") and "8. 第8章 章8〔初稿｜目标 20 字｜008-章8.md〕" in run("outline")
    (jt,) = json.loads(run("threads", "--json"))
    assert jt["title"] == THREAD and jt["intentional"] is True and jt["due_chapter"] == 5
    codex = {e["name"]: e for e in json.loads(run("codex", "--json"))}
    assert len(codex["林青"]["chapters"]) == 10
    assert json.loads(run("progress", "--json"))["target"] == 200 and "全书" in run("progress")


def test_roleplay_plot_threads_become_threads_with_history_and_user_events():
    """Role-play: plot_threads (replaced whole by the scribe) give planted / paid-off threads; the user's events add,
    advance, close as dropped and reopen — all from the branch's snapshots."""
    from types import SimpleNamespace as NS

    from liyuan_desktop.core.ledger.threads import build_threads, format_threads_block, thread_id

    snaps = [
        (NS(id="s1", state={"plot_threads": ["A"]}), 1),
        (NS(id="s2", state={"plot_threads": ["A", "B"]}), 2),
        (NS(id="s3", state={"plot_threads": ["B"]}, thread_events=[
            {"op": "add", "title": "C", "due_chapter": 3},
            {"op": "advance", "id": thread_id("B"), "mark": {"note": "又提了一次"}}]), 3),
        (NS(id="s4", state={"plot_threads": ["B"]}, thread_events=[
            {"op": "close", "id": thread_id("B"), "state": "dropped"},
            {"op": "bogus"}]), 4),
        (NS(id="s5", state={"plot_threads": ["B", "A"]}), 5),
    ]
    a, b, c = build_threads(snaps)
    assert (a.title, a.state, a.planted.beat, a.closed, [m.beat for m in a.advanced]) == ("A", "advancing", 1, None, [5])
    assert (b.state, b.closed.beat, b.advanced[0].note) == ("dropped", 4, "又提了一次")
    assert (c.source, c.due_chapter, c.state) == ("user", 3, "planted")
    block = format_threads_block([a, b, c], chapter=4)
    assert block.splitlines()[0].startswith("- ⚠已过期 C") and "B" not in block
    assert format_threads_block([b], chapter=4) == ""


async def test_roleplay_chat_threads_quote_the_reply_and_follow_the_branch():
    """A role-play chat through the real engine: the scribe's plot_threads plant a thread quoted in that beat's reply
    (UTF-16 offset in the reply), pay it off later; going back to the first beat's branch reopens it."""
    card = load_card(DEMO_CARD)
    story = ["雨夜，她把一枚旧铜钱塞进你手里。铜钱背面刻着一个「沈」字。", "沈家的人来了，铜钱的秘密终于说开。"]
    actor = [{"content": "", "tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}},
                                            {"name": "draft_seal", "arguments": {"version": 1}}]} for t in story]
    scribe = [json.dumps({"patch": {"plot_threads": ["铜钱背面的沈字"]}}, ensure_ascii=False),
              json.dumps({"patch": {"plot_threads": []}}, ensure_ascii=False)]
    chat = Chat.create(chat_dir(card.name, "扮演-伏笔"), card, ReplayModel(actor=actor, scribe=scribe))
    r1 = await chat.send("她给了我什么？")
    (t,) = chat.threads()
    assert t.state == "planted" and t.planted.beat == 1 and t.planted.file == ""
    assert t.planted.quote == "铜钱背面刻着一个「沈」字。"
    assert r1.final[t.planted.offset:t.planted.offset + len(t.planted.quote)] == t.planted.quote
    assert "【伏笔】" not in (r1.injection or "")  # role-play injection unchanged
    await chat.send("问她沈家是谁")
    (t,) = chat.threads()
    assert t.state == "paid_off" and t.closed.beat == 2
    first_reply = chat.last_reply_id()
    chat.undo()  # back before beat 2: the thread is open again on this branch
    (t,) = chat.threads()
    assert t.state == "planted", first_reply


def test_codex_links_lore_counts_aliases_and_first_sight():
    """The codex: roster names of every kind, the card book's entry matched by title or key, aliases counted as
    mentions (longest name first: 「怀瑾」 is not also 「瑾」), first sight from the roster."""
    from liyuan_desktop.core.ledger.state import CharacterState, WorldState, register_roster

    card = load_card(DEMO_CARD)
    chat = Chat.create(chat_dir(card.name, "长篇-设定集"), card, ReplayModel(actor=[]), mode="agent")
    st = WorldState(time="第一夜", location="听雨轩", characters={"怀瑾": CharacterState(status="失踪", at="镇北渡口")},
                    inventory=["油纸伞"], plot_threads=["怀瑾的下落"])
    register_roster(st)
    chat.seed_ledger(st)
    chat.import_chapters([("001.md", "听雨轩里，有人提起怀瑾。"), ("002.md", "瑾公子的油纸伞还在。老周说怀瑾去了镇北渡口。")])
    codex = {e.name: e for e in chat.codex()}
    assert {n: e.kind for n, e in codex.items()} == {"怀瑾": "character", "听雨轩": "place", "镇北渡口": "place",
                                                     "油纸伞": "item", "怀瑾的下落": "event"}
    assert codex["怀瑾"].lore.title == "怀瑾" and codex["油纸伞"].lore.title == "旧油纸伞"  # by key
    assert codex["怀瑾"].chapters == {"001.md": 1, "002.md": 1} and codex["怀瑾"].first_seen == "第一夜"
    assert codex["怀瑾"].facts[0].text == "状态：失踪；在：镇北渡口"
    chat.set_aliases("怀瑾", ["瑾公子"])
    (hj,) = chat.codex("怀瑾")
    assert hj.aliases == ["瑾公子"] and hj.chapters == {"001.md": 1, "002.md": 2} and hj.mentions == 3
    assert [(m.file, m.offset, m.matched) for m in chat.mentions("怀瑾")][1] == ("002.md", 0, "瑾公子")
    assert chat.aliases() == {"怀瑾": ["瑾公子"]}
    # 怀瑾的下落 is an event (plot thread) and also a thread of this branch
    assert [t.title for t in chat.threads()] == ["怀瑾的下落"]
