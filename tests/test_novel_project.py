"""Issue 28, a new novel without a character card: its own small card in the library (title, author, language,
cast) and one agent chat made by the one builder (core/chat/build.py), a starter outline, the cast as codex
entries, the first guidance as a message key; then the scripted project of the issue headless — a 2-volume outline
built as a tree, the replay agent writing 3 chapters that land linked to their entries, a rename keeping the link,
and the command line (``liyuan novel new``, ``story outline --json``, ``story link``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.library import card_of_chat, import_card, list_chats
from liyuan_desktop.core.chat.build import NovelSpec, build_chat, create_novel, novel_first_steps, novel_info
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.messages import render


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)  # LIYUAN_HOME is the test's own folder (conftest)
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_a_novel_is_its_own_card_with_an_agent_chat():
    import_card(DEMO_CARD)  # a library card named in the cast lends its description
    chat = create_novel(NovelSpec(title=" 雨夜  ", author="林  青", cast=["青梧", "阿梨", ""]), None,
                        ReplayModel(actor=[]))
    assert chat.mode == "agent" and chat.dir.name == "书稿"
    ref = card_of_chat(chat.dir)
    assert ref is not None and ref.name == "雨夜"
    card = ref.load()
    assert novel_info(card) == {"title": "雨夜", "author": "林 青", "language": "zh", "cast": ["青梧", "阿梨"]}
    assert card.language == "zh" and card.creator == "林 青" and card.first_mes == ""
    assert novel_info(load_card(DEMO_CARD)) is None
    assert [c.mode for c in list_chats(ref)] == ["agent"]  # the library lists it like any agent chat
    o = chat.outline()
    assert [v.title for v in o.volumes] == ["第一卷"] and o.chapters()[0].id.startswith("c")
    assert chat.agent.tool_names()[-3:] == ("outline_read", "outline_edit", "chapter_review")
    cast = {e.name: e for e in chat.codex()}
    assert cast["青梧"].written and cast["青梧"].description  # from the card
    assert cast["阿梨"].kind == "character" and not cast["阿梨"].in_roster
    chat.close()
    # a second book of the same title is kept beside it (「名字-2」), and English books start in English
    other = create_novel(NovelSpec(title="雨夜", language="en"), None, ReplayModel(actor=[]))
    assert card_of_chat(other.dir).name == "雨夜-2" and other.dir.name == "Manuscript"
    assert other.outline().chapters()[0].title == "Chapter 1"
    other.close()
    with pytest.raises(ValueError):
        NovelSpec(title="两行\n书名")
    with pytest.raises(ValueError):
        NovelSpec(title="书", language="fr")
    assert "大纲" in render(novel_first_steps(), "zh") and "outline" in render(novel_first_steps(), "en")


async def test_the_scripted_project_headless():
    """A 2-volume outline built as a tree; the replay agent writes three chapters, each landing linked to its
    outline entry (by number, by title, and the next unlinked one); a rename keeps the link; progress counts them."""
    write = lambda path, text: {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": text}}]}  # noqa: E731
    model = ReplayModel(actor=[write("001-进城.md", "林青进城。"), {"content": "第一章写好了。"},
                               write("002-夜雨.md", "雨下了一夜。"), {"content": "第二章写好了。"},
                               write("010-新章.md", "回声在巷子里。"), {"content": "第三章写好了。"}],
                        scribe=['{"patch": {}}'] * 3)
    chat = create_novel(NovelSpec(title="青石巷", author="某某"), None, model)
    o = chat.outline()
    first = o.chapters()[0].id
    chat.edit_outline_tree("rename_chapter", chapter=first, title="进城")
    v2 = chat.edit_outline_tree("add_volume", title="第二卷")[1]
    chat.edit_outline_tree("add_chapter", title="夜雨", volume=0)
    chat.edit_outline_tree("add_chapter", title="回声", volume=v2, target=3000)
    chat.edit_outline_tree("add_beat", chapter="回声", beat="巷子里的回声")
    assert [(c.title, c.volume) for c in chat.outline().chapters()] == [("进城", 0), ("夜雨", 0), ("回声", 1)]
    for words in ("写第一章", "写第二章", "写第三章"):
        await chat.send(words)
    chs = chat.outline().chapters()
    assert [(c.title, c.file, c.status) for c in chs] == [
        ("进城", "001-进城.md", "drafted"), ("夜雨", "002-夜雨.md", "drafted"), ("回声", "010-新章.md", "drafted")]
    assert chat.unlinked_chapter_files() == []
    chat.rename_chapters({"010-新章.md": "003-回声.md"})
    assert chat.outline().find(chs[2].id).file == "003-回声.md"
    prog = {c.title: (c.words, c.target) for c in chat.writing_progress().chapters}
    assert prog["回声"] == (6, 3000) and chat.chapter_reached() == 3
    chat.close()


def test_the_command_line_makes_a_novel_and_links_chapters(tmp_path):
    r = run_cli("novel", "new", "河灯", "--author", "阿梨", "--cast", "老周")
    assert r.returncode == 0, r.stderr
    d = Path(r.stdout.strip())
    assert (d / "session.jsonl").is_file() and d.parent.parent.name == "河灯"
    assert "大纲" in r.stderr  # what to do first
    en = run_cli("--lang", "en", "novel", "new", "Lanterns", "--language", "en")
    assert en.returncode == 0 and "outline" in en.stderr and Path(en.stdout.strip()).name == "Manuscript"
    assert run_cli("novel", "new", "  ").returncode == 2
    # a chapter written outside the outline, linked from the command line by the chapter's id
    card = card_of_chat(d).load()
    chat = build_chat(d, card, None, ReplayModel(actor=[]))
    chat.import_chapters([("001-放灯.md", "河上放灯。")])
    chat.close()
    outline = json.loads(run_cli("story", "outline", str(d), "--json").stdout)
    (ch,) = outline["volumes"][0]["chapters"]
    assert outline["unlinked"] == ["001-放灯.md"] and ch["file"] is None and ch["words"] == 0
    r = run_cli("story", "link", str(d), ch["id"], "001-放灯.md")
    assert r.returncode == 0, r.stderr
    outline = json.loads(run_cli("story", "outline", str(d), "--json").stdout)
    (ch2,) = outline["volumes"][0]["chapters"]
    assert (ch2["id"], ch2["file"], ch2["words"], outline["unlinked"], outline["reached"]) == \
        (ch["id"], "001-放灯.md", 4, [], 1)
    assert "001-放灯.md" in run_cli("story", "outline", str(d)).stdout
    assert run_cli("story", "link", str(d), ch["id"], "nope.md").returncode == 2
    assert run_cli("story", "link", str(d), "001-放灯.md", "--unlink").returncode == 0
    assert json.loads(run_cli("story", "outline", str(d), "--json").stdout)["unlinked"] == ["001-放灯.md"]
