"""Issue 28, long books stay consistent: in agent mode ``memory_search`` also searches the chapter text, so the agent
writing chapter 60 finds what chapters 3 and 57 said about a name — through the real agent loop (a replayed turn
calls the tool and gets the passages back)."""

from __future__ import annotations

import json

from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.memory.chapters import merge_results, passages


def test_passages_keep_paragraphs_whole():
    text = "甲。\n\n乙。\n" + "丙" * 500 + "\n丁。"
    assert passages(text, size=10) == ["甲。\n乙。", "丙" * 500, "丁。"]
    assert passages("") == []


def test_merge_scales_each_list_by_its_own_best():
    b = [{"kind": "final", "score": 9.0}, {"kind": "user", "score": 3.0}]
    c = [{"kind": "chapter", "score": 2.0}, {"kind": "chapter", "score": 1.5}]
    got = merge_results(b, c, 3)
    assert [r["kind"] for r in got] == ["chapter", "final", "chapter"]


def _book(n: int) -> list[tuple[str, str]]:
    out = []
    for i in range(1, n + 1):
        text = f"第{i}章。林青走过长街，雨下个不停。\n阿檀在桥上等她。"
        if i == 3:
            text += "\n老周把一只青铜罗盘交给林青：罗盘的指针永远指向北邙山。"
        if i == 57:
            text += "\n林青发现青铜罗盘背面刻着母亲的名字：沈砚秋。"
        out.append((f"{i:03d}-第{i}章.md", text))
    return out


async def test_the_agent_finds_what_early_chapters_said(tmp_path):
    steps = [{"content": "", "tool_calls": [{"name": "memory_search", "arguments": json.dumps(
        {"query": "青铜罗盘", "limit": 3}, ensure_ascii=False)}]}, {"content": "查到了。", "tool_calls": []}]
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), ReplayModel(actor=steps, scribe=[]), mode="agent")
    chat.import_chapters(_book(60), message="导入六十章")
    hits = chat.memory_search("青铜罗盘 北邙山", 5)
    assert [(h["kind"], h["chapter"]) for h in hits[:2]] == [("chapter", 3), ("chapter", 57)]
    assert "北邙山" in hits[0]["snippet"] and hits[0]["file"] == "003-第3章.md"

    res = await chat.send("第六十章要写罗盘的来历，先查前文")
    assert res.error is None
    beat = chat.tree.latest("beat")
    call = next(t for c in beat.calls for t in c.tool_calls if t.name == "memory_search")
    found = json.loads(call.result) if isinstance(call.result, str) else call.result
    files = {r.get("file") for r in found["results"]}
    assert {"003-第3章.md", "057-第57章.md"} <= files

    # the index follows the folder: an edited chapter is found by its new words
    p = chat.dir / "正文" / "010-第10章.md"
    p.write_text(p.read_text("utf-8") + "\n一只青铜罗盘在当铺里出现了。", "utf-8")
    assert any(h.get("file") == "010-第10章.md" for h in chat.memory_search("青铜罗盘 当铺", 5))
    chat.close()


def test_role_play_search_is_unchanged(tmp_path):
    chat = Chat.create(tmp_path / "局", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    assert all(h["kind"] != "chapter" for h in chat.memory_search("雨", 5))
    chat.close()
