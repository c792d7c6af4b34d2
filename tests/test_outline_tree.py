"""Issue 28, the outline as structure: volumes → chapters → beats edited as a tree with 大纲.md as storage (hand
edits and unknown attributes kept byte for byte), stable chapter ids in the Markdown, links from chapters to files
by id in 大纲链接.json (renames of the chapter or the file keep them), the agent's ``write`` / ``outline_edit``
creating the links, progress counting linked files, and 现在写到 = the furthest chapter written on the branch."""

from __future__ import annotations

import json
import os
import re

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.beat.tools.context import ToolContext
from liyuan_desktop.core.beat.tools.registry import get_tool, parse_args, schema_of
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story import outline_tree as ot
from liyuan_desktop.core.story.links import LINKS_FILE, load_links
from liyuan_desktop.core.story.outline import parse_outline
from liyuan_desktop.core.story.workspace import StoryFolder

HAND = ("写在最前面的话。\r\n"
        "\r\n"
        "# 第一卷 风起\r\n"
        "## 第一章 开端 {status=done target=3000 mood=冷}\r\n"
        "- 林青进城\r\n"
        "笔记：这一章要短。\r\n"
        "\r\n"
        "## 第二章 雨夜\r\n"
        "- 捡到玉佩\r\n"
        "```\r\n"
        "## 这不是一章\r\n"
        "```\r\n"
        "# 第二卷 {序}\r\n"
        "## 第三章 回声 {target=2000字}\r\n")


def ids(text: str) -> list[str]:
    return re.findall(r"\{id=(\w+)", text)


def test_ids_are_added_once_and_everything_else_is_kept():
    text = ot.ensure_ids(HAND)
    o = parse_outline(text)
    assert [v.title for v in o.volumes] == ["第一卷 风起", "第二卷 {序}"]  # a {…} without key=value is title
    assert [c.title for c in o.chapters()] == ["第一章 开端", "第二章 雨夜", "第三章 回声"]
    assert all(c.id.startswith("c") and len(c.id) == 7 for c in o.chapters())
    assert len(set(ids(text))) == 5  # two volumes, three chapters
    assert ot.ensure_ids(text) is text  # stable: nothing added a second time
    one = o.chapters()[0]
    assert one.attrs == {"id": one.id, "status": "done", "target": "3000", "mood": "冷"}
    # only heading lines changed; CRLF, notes, the fence and its fake heading are as they were
    old, new = HAND.split("\n"), text.split("\n")
    assert len(old) == len(new)
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [2, 3, 7, 12, 13]
    assert all(line.endswith("\r") for line in new[:-1])


def test_tree_operations_rewrite_only_what_they_touch():
    text = ot.ensure_ids(HAND)
    o = parse_outline(text)
    c1, c2, c3 = o.chapters()
    v1, v2 = o.volumes
    text, new = ot.add_chapter(text, "第四章 余波", v2.id, status="计划", target=2500)
    assert parse_outline(text).find(new).attrs == {"id": new, "status": "planned", "target": "2500"}
    text = ot.move_chapter(text, c3.id, v1.id, 0)  # to the front of volume 1
    o = parse_outline(text)
    assert [(c.title, c.volume) for c in o.chapters()] == [("第三章 回声", 0), ("第一章 开端", 0),
                                                           ("第二章 雨夜", 0), ("第四章 余波", 1)]
    assert "笔记：这一章要短。\r" in text.split("\n")  # the note moved with nothing, kept under its chapter
    text = ot.rename_chapter(text, c1.id, "第一章 进城")
    assert parse_outline(text).find(c1.id).attrs["mood"] == "冷"  # unknown attributes survive a rename
    text = ot.add_beat(text, c2.id, "她把玉佩藏起来")
    text = ot.rename_beat(text, c2.id, 0, "捡到一块玉佩")
    text = ot.move_beat(text, c2.id, 1, c2.id, 0)
    assert parse_outline(text).find(c2.id).beats == ["她把玉佩藏起来", "捡到一块玉佩"]
    text = ot.set_attrs(text, c2.id, status="drafted", target=0)
    assert parse_outline(text).find(c2.id).status == "drafted" and parse_outline(text).find(c2.id).target is None
    text, v3 = ot.add_volume(text, "第三卷 归途", 0)
    assert [v.title for v in parse_outline(text).volumes][:2] == ["写在最前面的话。", "第三卷 归途"] or \
        parse_outline(text).volumes[0].title == "第三卷 归途"
    text = ot.move_volume(text, v3, 99)
    assert parse_outline(text).volumes[-1].title == "第三卷 归途"
    assert text.startswith("写在最前面的话。\r\n")
    with pytest.raises(ToolError) as e:
        ot.rename_chapter(text, "c000000", "x")
    assert e.value.code == "not_found"
    with pytest.raises(ToolError):
        ot.add_chapter(text, "两行\n标题")


def test_deletion_is_previewed_before_anything_is_lost():
    text = ot.ensure_ids(HAND)
    o = parse_outline(text)
    v1 = o.volumes[0]
    p = ot.deletion_preview(text, "volume", v1.id, links={o.chapters()[1].id: "002-雨夜.md"})
    assert p.chapters == ["第一章 开端", "第二章 雨夜"] and p.beats == 2 and p.files == ["002-雨夜.md"]
    assert p.notes >= 1  # the note line is counted: the dialog says free text goes too
    assert ot.delete_node(text, "beat", o.chapters()[0].id, 0).count("林青进城") == 0
    gone = ot.delete_node(text, "volume", v1.id)
    assert [c.title for c in parse_outline(gone).chapters()] == ["第三章 回声"]
    assert gone.startswith("写在最前面的话。")


def room(tmp_path, name="长篇-大纲树"):
    card = load_card(DEMO_CARD)
    from liyuan_desktop.core.paths import chat_dir
    return Chat.create(chat_dir(card.name, name), card, ReplayModel(actor=[]), mode="agent")


def test_links_survive_renaming_the_chapter_and_the_file(tmp_path):
    chat = room(tmp_path)
    chat.save_outline("# 第一卷\n## 第一章 雨夜\n- 捡到玉佩\n## 第二章 回声\n")
    o, _ = chat.edit_outline_tree("add_chapter", title="第三章 归途")
    c1 = o.chapters()[0]
    chat.import_chapters([("001-雨夜.md", "雨下了三天。"), ("a.md", "回声。")])
    assert chat.last_changes.files
    chat.link_chapter(c1.id, "001-雨夜.md")
    assert chat.last_changes.names() >= {"outline", "files"}
    assert json.loads((chat.dir / LINKS_FILE).read_text("utf-8"))["links"][c1.id]["file"] == "001-雨夜.md"
    chat.edit_outline_tree("rename_chapter", chapter=c1.id, title="第一章 夜雨")  # the chapter's title
    assert chat.outline().find(c1.id).file == "001-雨夜.md"
    chat.rename_chapters({"001-雨夜.md": "001-夜雨.md"})  # through the engine (the window's 改名)
    assert chat.outline().find(c1.id).file == "001-夜雨.md"
    os.rename(chat.dir / "正文" / "001-夜雨.md", chat.dir / "正文" / "001-别名.md")  # a file manager
    assert chat.outline().find(c1.id).file == "001-别名.md"  # followed by content hash, sidecar rewritten
    assert load_links(chat.dir).links[c1.id].file == "001-别名.md"
    assert chat.unlinked_chapter_files() == ["a.md"]
    p = chat.writing_progress()
    assert (p.chapters[0].id, p.chapters[0].file, p.chapters[0].words) == (c1.id, "001-别名.md", 5)  # not 0/未写
    assert chat.outline_deletion_preview("chapter", c1.id).files == ["001-别名.md"]
    chat.edit_outline_tree("delete", kind="chapter", ref=c1.id)
    assert c1.id not in load_links(chat.dir).links and (chat.dir / "正文" / "001-别名.md").exists()
    chat.close()


def test_hand_written_file_links_still_read_and_move_to_the_sidecar(tmp_path):
    chat = room(tmp_path, "长篇-手写链接")
    chat.import_chapters([("x.md", "一二三")])
    (chat.dir / "大纲.md").write_text("## 第一章 {file=正文/x.md status=drafted}\n", "utf-8")
    assert chat.outline().chapters()[0].file == "x.md"
    chat.link_chapter(1, "x.md")
    text = (chat.dir / "大纲.md").read_text("utf-8")
    assert "file=" not in text and "status=drafted" in text  # one link, in the sidecar
    cid = parse_outline(text).chapters()[0].id
    assert chat.outline().find(cid).file == "x.md"
    assert chat.unlink_chapter_file("x.md") == cid and chat.outline().find(cid).file is None
    chat.close()


def test_outline_edit_tool_links_by_id_with_a_byte_stable_schema(tmp_path):
    d = tmp_path / "chat"
    (d / "正文").mkdir(parents=True)
    (d / "大纲.md").write_text("## 第一章 开端\n## 第二章 雨夜\n", "utf-8")
    ctx = ToolContext(story=StoryFolder(tmp_path, d / "正文"))
    edit = get_tool("outline_edit")
    assert list(schema_of(edit.args)["properties"]) == ["oldText", "newText", "chapter", "status", "target", "file"]
    args = parse_args(edit, json.dumps({"chapter": "2", "status": "drafted", "file": "002-雨夜.md"}, ensure_ascii=False))
    assert edit.handler(ctx, args) == "ok"
    o = parse_outline((d / "大纲.md").read_text("utf-8"))
    assert o.find(2).status == "drafted" and "file" not in o.find(2).attrs
    assert load_links(d).links[o.find(2).id].file == "002-雨夜.md"


async def test_the_agent_write_links_the_chapter_it_wrote_for_the_outline(tmp_path):
    """The replay agent writes chapters 1 and 2 (by number and by title) and a prologue (000: linked to nothing);
    each outline chapter then shows its file and words, and 现在写到 is chapter 2, also in the threads' marks."""
    from liyuan_desktop.core.ledger.threads import ThreadEvent
    card = load_card(DEMO_CARD)
    from liyuan_desktop.core.paths import chat_dir
    model = ReplayModel(actor=[
        {"tool_calls": [{"name": "write", "arguments": {"path": "000-楔子.md", "content": "楔子。"}},
                        {"name": "write", "arguments": {"path": "001-x.md", "content": "第一章的正文。"}}]},
        {"content": "写好了第一章。"},
        {"tool_calls": [{"name": "write", "arguments": {"path": "007-雨夜.md", "content": "雨夜的正文很长。"}}]},
        {"content": "写好了第二章。"}], scribe=['{"patch": {}}'] * 2)
    chat = Chat.create(chat_dir(card.name, "长篇-写了就挂"), card, model, mode="agent")
    chat.save_outline("# 第一卷\n## 第一章 进城\n# 第二卷\n## 第二章 雨夜\n## 第三章 回声\n")
    assert chat.chapter_reached() is None
    await chat.send("按大纲写第一章")
    chs = chat.outline().chapters()
    assert [(c.file, c.status) for c in chs] == [("001-x.md", "drafted"), (None, "planned"), (None, "planned")]
    chat.thread_event(ThreadEvent(op="add", title="玉佩的来历"))
    await chat.send("写第二章")
    chs = chat.outline().chapters()
    assert chs[1].file == "007-雨夜.md"  # by title, not by its number
    assert chat.unlinked_chapter_files() == ["000-楔子.md"]
    words = {c.title: (c.file, c.words) for c in chat.writing_progress().chapters}
    assert words["第二章 雨夜"] == ("007-雨夜.md", 7)
    assert chat.chapter_reached() == 2
    (t,) = chat.threads()
    assert t.planted.chapter == 1  # a position in chapters once a chapter exists (not 「第 2 轮」)
    chat.close()


def test_reached_counts_files_on_a_chat_without_an_outline(tmp_path):
    chat = room(tmp_path, "长篇-无大纲")
    chat.import_chapters([("001-a.md", "一"), ("002-b.md", "二")])
    assert chat.chapter_reached() == 2  # 「现在写到第 1 章」 with 2 chapters written was the bug
    assert not (chat.dir / LINKS_FILE).exists() and not (chat.dir / "大纲.md").exists()
    chat.close()


def test_a_copy_without_ids_saved_back_keeps_the_links(tmp_path):
    """The raw-text editor (or the agent's outline_edit text replace) saving a heading without its id: the id of
    the chapter with that title comes back, so the link to its file holds."""
    chat = room(tmp_path, "长篇-无id副本")
    chat.import_chapters([("001.md", "正文。")])
    chat.save_outline("## 第一章 雨夜\n## 第二章 回声\n")
    cid = chat.outline().chapters()[0].id
    chat.link_chapter(cid, "001.md")
    chat.save_outline("# 卷一\n## 第一章 雨夜 {status=drafted}\n## 第二章 回声\n## 第三章 新\n")  # ids gone
    o = chat.outline()
    assert o.chapters()[0].id == cid and o.chapters()[0].file == "001.md" and o.chapters()[0].status == "drafted"
    assert len({c.id for c in o.chapters()}) == 3
    d = chat.dir
    ctx = ToolContext(story=StoryFolder(d.parent, d / "正文"))
    edit = get_tool("outline_edit")
    head = next(line for line in (d / "大纲.md").read_text("utf-8").split("\n") if "第一章" in line)
    args = parse_args(edit, json.dumps({"oldText": head, "newText": "## 第一章 雨夜"}, ensure_ascii=False))
    assert edit.handler(ctx, args) == "ok"
    assert chat.outline().find(cid).file == "001.md"
    chat.close()
