"""Issue 19 §1: the 大纲.md convention — volumes, chapters with {file status target}, beats; edits keep the rest of
the file byte for byte; the bounded branch the agent sees; the outline tools; checkpoints keep the outline."""

from __future__ import annotations

import json

import pytest

from liyuan_desktop.core.beat.tools.context import ToolContext
from liyuan_desktop.core.beat.tools.registry import get_tool, parse_args
from liyuan_desktop.core.beat.tools.sets import WRITING_TOOLS  # noqa: F401  (declares the tools)
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.story.checkpoints import StoryHistory
from liyuan_desktop.core.story.outline import OUTLINE_KEY, parse_outline, replace_text, set_chapter
from liyuan_desktop.core.story.workspace import StoryFolder

TEXT = """前言随便写。

# 第一卷 风起
## 第一章 开端 {file=正文/001-开端.md status=done target=3000}
- 林青进城
* 遇见阿檀
闲笔一行
## 第二章 雨夜 {status=初稿 foo=bar}
1. 捡到玉佩
# 第二卷 云涌
## 第三章 回声
```
## 不是章节
```
"""


def test_parse_volumes_chapters_beats_and_attributes():
    o = parse_outline(TEXT)
    assert [v.title for v in o.volumes] == ["第一卷 风起", "第二卷 云涌"]
    c1, c2, c3 = o.chapters()
    assert (c1.title, c1.file, c1.status, c1.target, c1.beats) == ("第一章 开端", "001-开端.md", "done", 3000,
                                                                  ["林青进城", "遇见阿檀"])
    assert (c2.status, c2.target, c2.attrs["foo"], c2.beats) == ("drafted", None, "bar", ["捡到玉佩"])
    assert (c3.title, c3.status, c3.file, c3.volume, c3.index) == ("第三章 回声", "planned", None, 1, 2)
    assert o.chapter_for_file("001-开端.md") is c1 and o.find(2) is c2 and o.find("雨夜") is c2


def test_set_chapter_changes_only_its_heading_line():
    new = set_chapter(TEXT, "回声", status="revised", target=2500, file="003-回声.md")
    old_lines, new_lines = TEXT.split("\n"), new.split("\n")
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    assert changed == [10] and new_lines[10] == "## 第三章 回声 {status=revised target=2500 file=003-回声.md}"
    again = set_chapter(new, 3, target=0, file="")
    assert again.split("\n")[10] == "## 第三章 回声 {status=revised}"
    with pytest.raises(ToolError) as e:
        set_chapter(TEXT, 1, status="finished")
    assert e.value.code == "bad_args"
    with pytest.raises(ToolError):
        set_chapter(TEXT, 9, status="done")


def test_replace_text_is_exact_and_unique():
    assert "捡到一块玉佩" in replace_text(TEXT, "捡到玉佩", "捡到一块玉佩")
    for old in ("不存在", "章"):
        with pytest.raises(ToolError):
            replace_text(TEXT, old, "x")


def test_branch_is_bounded_and_marks_focus():
    text = "# 卷一\n" + "\n".join(f"## 章{i}\n- " + "长" * 200 for i in range(1, 41)) + "\n# 卷二\n## 章41\n"
    o = parse_outline(text)
    b = o.branch(o.find(20))
    assert "卷：▶卷一 / 卷二" in b and "▶ 20. 章20" in b and "…（前面还有 17 章）" in b and "…（后面还有 19 章）" in b
    assert b.count("\n") < 12 and len(b) < 600  # five chapters, one with its beats cut to 80 characters


def test_outline_tools_edit_the_file(tmp_path):
    chat = tmp_path / "chat"
    (chat / "正文").mkdir(parents=True)
    (chat / "大纲.md").write_text(TEXT, "utf-8")
    ctx = ToolContext(story=StoryFolder(tmp_path, chat / "正文"))
    read, edit = get_tool("outline_read"), get_tool("outline_edit")
    assert read.handler(ctx, parse_args(read, "{}")) == TEXT
    args = parse_args(edit, json.dumps({"chapter": "2", "status": "done", "file": "002-雨夜.md"}, ensure_ascii=False))
    assert edit.handler(ctx, args) == "ok"
    assert parse_outline((chat / "大纲.md").read_text("utf-8")).find(2).status == "done"
    with pytest.raises(ToolError):
        parse_args(edit, json.dumps({"chapter": "2"}))
    args = parse_args(edit, json.dumps({"oldText": "林青进城", "newText": "林青出城"}, ensure_ascii=False))
    edit.handler(ctx, args)
    assert "林青出城" in (chat / "大纲.md").read_text("utf-8")


def test_checkpoints_keep_and_restore_the_outline(tmp_path):
    chat = tmp_path / "chat"
    (chat / "正文").mkdir(parents=True)
    (chat / "正文" / "001.md").write_text("一", "utf-8")
    h = StoryHistory(chat / "正文", chat / "历史")
    c0 = h.commit("user", "没有大纲")
    assert OUTLINE_KEY not in c0.files  # no outline: manifests as before
    (chat / "大纲.md").write_text("## 一\n", "utf-8")
    c1 = h.commit("user", "大纲")
    assert c1.files[OUTLINE_KEY] and c1.changed.added == [OUTLINE_KEY]
    (chat / "大纲.md").write_text("## 一 {status=done}\n", "utf-8")
    h.commit("agent", "改")
    h.restore(c1.id)
    assert (chat / "大纲.md").read_text("utf-8") == "## 一\n"
    h.restore(c0.id)
    assert not (chat / "大纲.md").exists() and (chat / "正文" / "001.md").read_text("utf-8") == "一"


def test_due_beats_name_the_chapter_a_thread_is_due():
    o = parse_outline("## 一\n- 回收：「玉佩的来历」\n## 二\n- 回收伏笔：铜钱\n- 回收：玉佩的来历\n")
    assert o.due_chapters() == {"玉佩的来历": 1, "铜钱": 2}


def test_tool_arguments_and_outline_lines_have_size_limits(tmp_path):
    """Issue 29 §1: the model wrote a heading followed by 100,000 spaces through outline_edit (no length or shape
    check). A call's raw arguments are bounded for every tool (the schemas stay byte-stable: checked in
    parse_args) and an outline line the agent writes is bounded too; nothing is written when refused."""
    from liyuan_desktop.core.beat.tools.registry import MAX_ARGS_CHARS
    from liyuan_desktop.core.story.outline import OUTLINE_LINE_MAX

    chat = tmp_path / "chat"
    (chat / "正文").mkdir(parents=True)
    (chat / "大纲.md").write_text(TEXT, "utf-8")
    ctx = ToolContext(story=StoryFolder(tmp_path, chat / "正文"))
    edit = get_tool("outline_edit")
    for name in ("outline_edit", "write", "edit", "draft_write"):
        huge = json.dumps({"newText": "字" * (MAX_ARGS_CHARS + 1), "content": "x"}, ensure_ascii=False)
        with pytest.raises(ToolError) as exc:
            parse_args(get_tool(name), huge)
        assert exc.value.code == "bad_args" and str(MAX_ARGS_CHARS) in str(exc.value)
    long_line = "## 第九章" + " " * OUTLINE_LINE_MAX + "x"
    args = parse_args(edit, json.dumps({"oldText": "林青进城", "newText": long_line}, ensure_ascii=False))
    with pytest.raises(ToolError) as exc:
        edit.handler(ctx, args)
    assert exc.value.code == "bad_args" and (chat / "大纲.md").read_text("utf-8") == TEXT
