"""Issue 28, the codex you can write: entries (people, places, things, lore) with description, aliases, tags,
relations and "true from chapter N" in 名录.json, one list with the ledger's roster, mentions found by aliases, and
【本章涉及的设定】 in the agent's state block (bounded; only when written entries exist, so the golden runs keep
their bytes). The CLI writes the same entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.writing_room import MENTIONED_MAX_ENTRIES
from liyuan_desktop.core.ledger.state import CharacterState, WorldState, register_roster
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.story.codex import CODEX_FILE, CodexError, CodexRecord, Relation, parse_kind


def agent_chat(name: str) -> Chat:
    card = load_card(DEMO_CARD)
    return Chat.create(chat_dir(card.name, name), card, ReplayModel(actor=[]), mode="agent")


def test_kinds_are_said_many_ways():
    assert [parse_kind(k) for k in ("people", "地点", "things", "Lore", "thread")] == \
        ["character", "place", "item", "lore", "event"]
    with pytest.raises(CodexError) as e:
        parse_kind("dragon")
    assert e.value.code == "bad_kind"


def test_roster_and_written_entries_are_one_list():
    chat = agent_chat("长篇-名录一张")
    st = WorldState(location="听雨轩", characters={"怀瑾": CharacterState(status="失踪")})
    register_roster(st)
    chat.seed_ledger(st)
    chat.import_chapters([("001.md", "瑾公子在听雨轩。"), ("002.md", "怀瑾和阿梨去了渡口。")])
    # a written entry for a roster name by one of its aliases: still one row, the written name canonical
    chat.codex_add(CodexRecord(name="沈怀瑾", aliases=["怀瑾", "瑾公子"], description="沈家二公子，三年前失踪。",
                               tags=["主角"], relations=[Relation(to="阿梨", kind="旧识")]))
    assert chat.last_changes.files
    chat.codex_add(CodexRecord(name="阿梨", description="茶馆的小丫头。", true_from=2))
    chat.codex_add(CodexRecord(name="潮信", kind="lore", description="每月十五涨潮，渡口停航。"))
    rows = {e.name: e for e in chat.codex()}
    assert list(rows) == ["沈怀瑾", "听雨轩", "阿梨", "潮信"]  # roster order first, then the written-only ones
    hj = rows["沈怀瑾"]
    assert (hj.kind, hj.written, hj.in_roster, hj.description) == ("character", True, True, "沈家二公子，三年前失踪。")
    assert hj.facts and hj.facts[0].text.startswith("状态：失踪")  # the ledger's facts stay derived
    assert hj.chapters == {"001.md": 1, "002.md": 1} and hj.mentions == 2  # by aliases, longest first
    assert (rows["潮信"].kind, rows["潮信"].in_roster) == ("lore", False)
    assert chat.codex("瑾公子")[0].name == "沈怀瑾"  # found by an alias
    assert chat.mentions_in("002.md") == {"沈怀瑾": 1, "阿梨": 1}
    with pytest.raises(CodexError) as e:
        chat.codex_add(CodexRecord(name="怀瑾"))
    assert e.value.code == "exists"
    # set: a roster-only name gets a written entry of the roster's kind
    place = chat.codex_set("听雨轩", description="城南的茶馆。", tags=["地点"])
    assert (place.kind, place.description) == ("place", "城南的茶馆。")
    chat.codex_set("阿梨", rename="梨儿", aliases=["阿梨"], true_from=0)
    assert chat.codex("阿梨")[0].name == "梨儿" and chat.codex("梨儿")[0].true_from is None
    assert chat.codex_remove("梨儿") and not chat.codex("梨儿")
    with pytest.raises(CodexError):
        chat.codex_set("无名氏", description="x")
    chat.close()


def test_aliases_move_into_the_codex_and_old_alias_lists_still_read():
    chat = agent_chat("长篇-旧别名")
    (chat.dir / "名录别名.json").write_text(json.dumps({"林青": ["青儿"], "老周": ["周伯"]}, ensure_ascii=False), "utf-8")
    st = WorldState(characters={"林青": CharacterState(), "老周": CharacterState()})
    register_roster(st)
    chat.seed_ledger(st)
    assert chat.aliases() == {"林青": ["青儿"], "老周": ["周伯"]}
    chat.set_aliases("林青", ["青儿", "小青"])
    assert chat.aliases() == {"林青": ["青儿", "小青"], "老周": ["周伯"]}
    assert "林青" not in json.loads((chat.dir / "名录别名.json").read_text("utf-8"))
    assert json.loads((chat.dir / CODEX_FILE).read_text("utf-8"))["entries"][0]["aliases"] == ["青儿", "小青"]
    chat.close()


def test_a_damaged_codex_file_is_never_overwritten():
    chat = agent_chat("长篇-坏名录")
    (chat.dir / CODEX_FILE).write_text("{这不是 JSON", "utf-8")
    assert chat.codex() == []
    with pytest.raises(CodexError) as e:
        chat.codex_add(CodexRecord(name="甲"))
    assert e.value.code == "damaged"
    assert (chat.dir / CODEX_FILE).read_text("utf-8") == "{这不是 JSON"
    chat.close()


async def test_the_agent_sees_the_entries_its_chapter_mentions_and_only_then():
    """【本章涉及的设定】: entries the chapter being written mentions (its file, or its outline beats before it
    exists), in order of first mention, bounded, an entry true only from a later chapter left out; a chat without
    written entries sends the state block it always sent."""
    model = ReplayModel(actor=[{"content": "好的。"}, {"content": "好的。"}], scribe=['{"patch": {}}'] * 2)
    card = load_card(DEMO_CARD)
    chat = Chat.create(chat_dir(card.name, "长篇-本章设定"), card, model, mode="agent")
    chat.save_outline("## 第一章 渡口\n- 阿梨在渡口等潮信\n## 第二章 回城\n")
    chat.import_chapters([("001-渡口.md", "潮信来了，阿梨还在等。玉佩在渡口。"
                           + "".join(f"路人{i:02d}" for i in range(MENTIONED_MAX_ENTRIES + 3)))])
    chat.link_chapter(1, "001-渡口.md")
    before = chat.agent.state_block(chat.current_state())
    assert "【本章涉及的设定】" not in before
    chat.codex_add(CodexRecord(name="阿梨", description="茶馆的小丫头，" + "很爱笑" * 200))
    chat.codex_add(CodexRecord(name="潮信", kind="lore", description="每月十五涨潮。"))
    chat.codex_add(CodexRecord(name="玉佩", kind="item", description="沈家的信物。", true_from=5))
    chat.codex_add(CodexRecord(name="渡口", kind="place"))  # no description: nothing to tell
    for i in range(MENTIONED_MAX_ENTRIES + 3):
        chat.codex_add(CodexRecord(name=f"路人{i:02d}", description="一个路人。"))
    block = chat.agent.state_block(chat.current_state())
    assert block.startswith(before)  # appended after what was there: the cached prefix is untouched
    part = block.split("【本章涉及的设定】\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert part[0].startswith("- 潮信（设定）：每月十五涨潮。") and part[1].startswith("- 阿梨（人物）：茶馆的小丫头")
    assert part[1].endswith("…") and len(part) == MENTIONED_MAX_ENTRIES  # cut, and bounded
    assert not any("玉佩" in x or "渡口（" in x for x in part)  # true from chapter 5; no description
    res = await chat.send("写第一章")
    sent = "\n".join(str(m.content) for m in res.sent)
    assert "【本章涉及的设定】" in sent and "每月十五涨潮" in sent  # what the model was sent
    assert sent.index("【本章涉及的设定】") > sent.index("【正文目录】")  # at the end, after the cached prefix
    chat.close()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_the_cli_writes_and_shows_codex_entries():
    chat = agent_chat("长篇-命令行名录")
    chat.import_chapters([("001.md", "青儿推门进来。")])
    chat.close()
    spec = "青梧/长篇-命令行名录"
    r = run_cli("story", "codex", spec, "add", "林青", "--kind", "people", "--description", "药铺的学徒。",
                "--alias", "青儿", "--tag", "主角", "--relation", "老周:师父", "--from", "1")
    assert r.returncode == 0, r.stderr
    assert run_cli("story", "codex", spec, "add", "林青").returncode == 2  # taken: one liyuan: line
    r = run_cli("story", "codex", spec, "set", "青儿", "--description", "药铺的学徒，会认草药。")
    assert r.returncode == 0, r.stderr
    shown = json.loads(run_cli("story", "codex", spec, "show", "林青", "--json").stdout)
    (e,) = shown
    assert (e["name"], e["kind"], e["aliases"], e["tags"], e["true_from"], e["mentions"]) == \
        ("林青", "character", ["青儿"], ["主角"], 1, 1)
    assert e["description"] == "药铺的学徒，会认草药。" and e["relations"] == [{"to": "老周", "kind": "师父"}]
    text = run_cli("story", "codex", spec, "show", "林青").stdout
    assert "药铺的学徒" in text and "老周（师父）" in text
    bad = run_cli("story", "codex", spec, "add", "甲", "--kind", "dragon")
    assert bad.returncode == 2 and bad.stderr.startswith("liyuan: ") and "Traceback" not in bad.stderr
    assert run_cli("story", "codex", spec, "show", "无名").returncode == 2
    assert run_cli("story", "codex", spec, "remove", "林青").returncode == 0
