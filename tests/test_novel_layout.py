"""Issue 32: a novel's own folders by the chat's language (core/story/layout.py). A new novel in an English chat has
``chapters/``, ``outline.md`` and ``history/`` (``objects/``, ``checkpoints.jsonl``); a Chinese chat, and every chat
folder that already has ``正文/`` (or ``大纲.md``, ``历史/``), keeps the Chinese names whatever its language. The
story tools take a path under either folder name as the same file. Checkpoints and restore, the outline links, the
exports (Markdown, EPUB, DOCX, the command line's book export) work on an English-layout novel."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT

from liyuan_desktop import cli
from liyuan_desktop.cli import common
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.build import NovelSpec, create_novel
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story.checkpoints import StoryHistory
from liyuan_desktop.core.story.codex import CodexRecord
from liyuan_desktop.core.story.layout import (
    EN_LAYOUT,
    ZH_LAYOUT,
    history_dir,
    novel_layout,
    outline_file,
    story_dir,
    strip_story_prefix,
)
from liyuan_desktop.core.story.workspace import StoryFolder, format_story_index

EN_CARD = ROOT / "cards" / "Qingwu" / "default_Qingwu.json"
ZH_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def _cjk_names_under(d: Path) -> list[str]:
    """Every name under ``d`` (folders and files) holding a CJK character."""
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if CJK.search(p.name))


def _write(path: str, text: str) -> dict:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": text}}]}


# --- the rule -------------------------------------------------------------------------------------------------------


def test_what_is_on_disk_wins_else_the_language(tmp_path):
    d = tmp_path / "chat"
    d.mkdir()
    assert novel_layout(d, "en") is EN_LAYOUT and novel_layout(d, "fr") is EN_LAYOUT
    assert novel_layout(d, "zh") is ZH_LAYOUT and novel_layout(d) is ZH_LAYOUT and novel_layout(d, "") is ZH_LAYOUT
    assert (story_dir(d, "en"), outline_file(d, "en"), history_dir(d, "en")) == \
        (d / "chapters", d / "outline.md", d / "history")
    (d / "outline.md").write_text("# V\n", "utf-8")  # an English novel stays English in a Chinese window
    assert novel_layout(d, "zh") is EN_LAYOUT and story_dir(d) == d / "chapters"
    (d / "正文").mkdir()  # any Chinese name: the folder is (or was) a Chinese novel, whatever the language
    assert novel_layout(d, "en") is ZH_LAYOUT and outline_file(d, "en") == d / "大纲.md"
    assert novel_layout(tmp_path / "missing", "en") is EN_LAYOUT
    assert [strip_story_prefix(x) for x in ("正文/a.md", "chapters/a.md", "a.md", "notes/a.md")] == \
        ["a.md", "a.md", "a.md", "notes/a.md"]


# --- a new novel in English -----------------------------------------------------------------------------------------


async def test_a_new_english_novel_uses_chapters_outline_and_history():
    """The agent writes with either folder name in front; both land in ``chapters/``; the files link to the outline;
    the checkpoints are kept in ``history/`` with ``../outline.md``; no Chinese name is made on disk and none reaches
    the model."""
    model = ReplayModel(actor=[_write("chapters/001-Dawn.md", "The ferry left at dawn."), {"content": "Done."},
                               _write("正文/002-Rain.md", "It rained all night."), {"content": "Done."}],
                        scribe=['{"patch": {}}'] * 2)
    chat = create_novel(NovelSpec(title="Ferry", author="T", language="en", cast=["Ferryman"]), None, model)
    d = chat.dir
    assert chat.novel_layout() is EN_LAYOUT
    assert (d / "outline.md").is_file() and not (d / "大纲.md").exists()
    chat.edit_outline_tree("add_chapter", title="Rain", volume=0)
    r1 = await chat.send("Write chapter one.")
    await chat.send("Write chapter two.")
    assert sorted(p.name for p in (d / "chapters").iterdir()) == ["001-Dawn.md", "002-Rain.md"]
    assert (d / "history" / "checkpoints.jsonl").is_file() and any((d / "history" / "objects").iterdir())
    assert [c.file for c in chat.outline().chapters()] == ["001-Dawn.md", "002-Rain.md"]
    assert (d / "outline-links.json").is_file() and (d / "codex.json").is_file()  # the cast, the links
    assert _cjk_names_under(d) == []
    latest = chat.history_log.latest()
    assert "../outline.md" in latest.files and "../大纲.md" not in latest.files
    assert chat.agent.tool_names()[-3:] == ("outline_read", "outline_edit", "chapter_review")
    for text in (chat.agent_system(), r1.injection):
        assert "正文" not in text and "大纲" not in text
    chat.close()


def test_restore_brings_back_chapters_and_outline_in_the_english_layout(tmp_path):
    chat = Chat.create(tmp_path / "Book", load_card(EN_CARD), ReplayModel(actor=[]), mode="agent")
    assert chat.novel_layout() is EN_LAYOUT
    chat.save_outline("# Volume One\n\n## Dawn\n")
    first = chat.import_chapters([("001-Dawn.md", "Dawn.\n")], message="one")
    chat.save_outline("# Volume One\n\n## Dawn\n\n## Dusk\n")
    chat.story.edit("chapters/001-Dawn.md", "Dawn.", "Dawn, again.")
    chat.import_chapters([("002-Dusk.md", "Dusk.\n")], message="two")
    assert first is not None and [c.title for c in chat.outline().chapters()] == ["Dawn", "Dusk"]
    chat.restore_checkpoint(first.id)
    d = chat.dir
    assert sorted(p.name for p in (d / "chapters").glob("*.md")) == ["001-Dawn.md"]
    assert (d / "chapters" / "001-Dawn.md").read_text("utf-8") == "Dawn.\n"
    assert [c.title for c in chat.outline().chapters()] == ["Dawn"]
    assert _cjk_names_under(d) == []
    # the command line reads the same history
    hist = StoryHistory(story_dir(d), history_dir(d))
    assert [c.message for c in hist.checkpoints()][:2] == ["one", "two"]
    chat.close()


# --- an existing Chinese-layout folder ------------------------------------------------------------------------------


def test_an_existing_正文_folder_keeps_working_in_an_english_chat(tmp_path):
    d = tmp_path / "Old"
    (d / "正文").mkdir(parents=True)
    (d / "正文" / "001-Old.md").write_text("Old text.\n", "utf-8")
    (d / "大纲.md").write_text("# Volume\n\n## Old {file=正文/001-Old.md}\n", "utf-8")
    chat = Chat.create(d, load_card(EN_CARD), ReplayModel(actor=[]), mode="agent")
    assert chat.novel_layout() is ZH_LAYOUT and chat.story.story_dir == d / "正文"
    assert chat.outline().chapters()[0].file == "001-Old.md"
    chat.import_chapters([("002-New.md", "New text.\n")])
    assert (d / "正文" / "002-New.md").is_file() and (d / "历史" / "检查点.jsonl").is_file()
    assert not any((d / n).exists() for n in EN_LAYOUT.names)
    assert "Old text." in chat.story.read("chapters/001-Old.md")  # the English name reaches 正文/ too
    chat.link_chapter(1, "002-New.md")
    assert chat.outline().chapters()[0].file == "002-New.md"
    chat.close()


def test_a_chinese_chat_still_gets_the_chinese_names(tmp_path):
    chat = Chat.create(tmp_path / "局C", load_card(ZH_CARD), ReplayModel(actor=[]), mode="agent")
    chat.import_chapters([("001-雨.md", "雨。\n")])
    assert chat.novel_layout() is ZH_LAYOUT
    assert (chat.dir / "正文" / "001-雨.md").is_file() and (chat.dir / "历史" / "对象").is_dir()
    assert not any((chat.dir / n).exists() for n in EN_LAYOUT.names)
    chat.close()


# --- the model's paths ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder_name", ["chapters", "正文"])
def test_either_folder_name_reaches_the_same_file(tmp_path, folder_name):
    rel = f"cards/Qingwu/对话/Chat-C/{folder_name}"
    (tmp_path / rel).mkdir(parents=True)
    folder = StoryFolder(tmp_path, tmp_path / rel)
    target = tmp_path / rel / "001-x.md"
    same = ["001-x.md", "chapters/001-x.md", "正文/001-x.md", "cards/Qingwu/对话/Chat-C/chapters/001-x.md",
            "cards/Qingwu/对话/Chat-C/正文/001-x.md", f"{rel}/001-x.md"]
    assert {folder.resolve(p, write=True) for p in same} == {target}
    folder.write("chapters/001-x.md", "one\n")
    folder.edit("正文/001-x.md", "one", "two")
    assert target.read_text("utf-8") == "two\n"
    assert "001-x.md" in folder.grep("two", path="chapters") and "001-x.md" in folder.grep("two", path="正文")
    for bad in ("cards/Qingwu/对话/Chat-B/chapters/001-x.md", "cards/Qingwu/对话/Chat-B/正文/001-x.md",
                "chapters/../001-x.md", "history/001-x.md", "chapters/sub/001-x.md", "outline.md/001-x.md"):
        with pytest.raises(ToolError):
            folder.resolve(bad, write=True)
    index = format_story_index(folder, f"{folder_name}/")
    assert index.startswith(f"【正文目录】{folder_name}/ 共 1 个文件")


# --- exports --------------------------------------------------------------------------------------------------------


@pytest.fixture
def english_book(tmp_path):
    chat = Chat.create(tmp_path / "Book", load_card(EN_CARD), ReplayModel(actor=[]), mode="agent")
    chat.save_outline("# Volume One\n\n## The Crossing\n\n## Night Rain\n")
    chat.import_chapters([("001-a.md", "The ferry left at dawn.\n"), ("002-b.md", "It rained all night.\n")])
    chat.link_chapter(1, "001-a.md")
    chat.link_chapter(2, "002-b.md")
    yield chat
    chat.close()
    common._LANG.clear()


def test_exports_read_the_english_layout(english_book, tmp_path):
    chat = english_book
    md = chat.export("md", tmp_path / "book.md")
    assert "The ferry left at dawn." in md.read_text("utf-8") and "It rained all night." in md.read_text("utf-8")
    with zipfile.ZipFile(chat.export("epub", tmp_path / "book.epub")) as z:
        body = "".join(z.read(n).decode("utf-8", "replace") for n in z.namelist() if n.endswith((".xhtml", ".html")))
    assert "It rained all night." in body
    with zipfile.ZipFile(chat.export("docx", tmp_path / "book.docx")) as z:
        assert "The ferry left at dawn." in z.read("word/document.xml").decode("utf-8")
    # the command line's book export titles the chapters from outline.md through the links
    out = tmp_path / "cli.md"
    assert cli.main(["--lang", "en", "story", "export", str(chat.dir), "--format", "md", "-o", str(out)]) == 0
    text = out.read_text("utf-8")
    assert "The Crossing" in text and "Night Rain" in text and "It rained all night." in text
    assert cli.main(["--lang", "en", "story", "checkpoints", str(chat.dir), "--json"]) == 0


def test_the_command_lines_outline_names_the_english_file(english_book, tmp_path, capsys):
    capsys.readouterr()
    assert cli.main(["--lang", "en", "story", "outline", str(english_book.dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["file"] for c in data["volumes"][0]["chapters"]] == ["001-a.md", "002-b.md"]
    bare = Chat.create(tmp_path / "Bare", load_card(EN_CARD), ReplayModel(actor=[]), mode="agent")
    assert cli.main(["--lang", "en", "story", "outline", str(bare.dir)]) in (0, 1)
    said = capsys.readouterr()
    assert "outline.md" in said.out + said.err and "大纲" not in said.out + said.err
    bare.close()


def test_the_novels_other_files_follow_the_layout_and_an_existing_one_is_kept(tmp_path):
    """Summaries, review notes, web-novel settings, the word list: English names in an English-layout novel (the
    summaries kept by its checkpoints as ``../chapter-summaries.json``); a codex written under its Chinese name
    before the first chapter is still the one read and written."""
    d = tmp_path / "Book"
    d.mkdir()
    (d / "名录.json").write_text('{"entries": [{"name": "Ferryman", "kind": "character"}]}', "utf-8")
    chat = Chat.create(d, load_card(EN_CARD), ReplayModel(actor=[]), mode="agent")
    chat.import_chapters([("001-a.md", "The ferry left at dawn.\n")])
    assert chat.novel_layout() is EN_LAYOUT
    chat.set_chapter_summary("001-a.md", "They cross.")
    chat.set_webnovel(publish=["001-a.md"])
    (d / "flagged-words.txt").write_text("ferry\n", "utf-8")
    from liyuan_desktop.core.story.export import book_word_list

    assert book_word_list(d) == ["ferry"]
    assert (d / "chapter-summaries.json").is_file() and (d / "webnovel.json").is_file()
    cp = chat.history_log.commit(author="user", message="summary")
    assert cp is not None and "../chapter-summaries.json" in cp.files
    assert [e.name for e in chat.codex()] == ["Ferryman"]  # the old file is read
    chat.codex_add(CodexRecord(name="Lantern", kind="item"))
    assert json.loads((d / "名录.json").read_text("utf-8"))["entries"][-1]["name"] == "Lantern"
    assert _cjk_names_under(d) == ["名录.json"] and not (d / "codex.json").exists()
    chat.close()
