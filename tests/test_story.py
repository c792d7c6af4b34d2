"""Agent mode: the story is files (seed 000, 「写长篇：agent 模式，正文是文件」) — index, file tools, path safety."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest
from helpers import load_golden

from liyuan_desktop.core.beat.tools.context import ToolContext
from liyuan_desktop.core.beat.tools.registry import ToolSpec, get_tool, parse_args, schema_of
from liyuan_desktop.core.beat.tools.sets import AGENT_FILE_TOOLS
from liyuan_desktop.core.beat.tools.story_files import StoryEditArgs
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.story.chapters import chapter_filename, split_text_into_chapters
from liyuan_desktop.core.story.workspace import READ_MAX_LINES, StoryFolder, StoryPathError, format_story_index

REL = "cards/青梧/对话/局C/正文"


def _spec(name: str) -> ToolSpec:
    spec = get_tool(name)
    assert spec is not None
    return spec


def _call(folder: StoryFolder, name: str, raw_args: str) -> str:
    """Run agent file tool ``name`` on ``folder`` through the registry, as the beat loop does."""
    spec = _spec(name)
    return spec.handler(ToolContext(story=folder), parse_args(spec, raw_args))


@pytest.fixture
def ws(tmp_path) -> Path:
    w = tmp_path / "ws"
    (w / REL).mkdir(parents=True)
    return w


@pytest.fixture
def folder(ws) -> StoryFolder:
    return StoryFolder(ws, ws / REL)


def _put(folder: StoryFolder, name: str, text: str) -> Path:
    p = folder.story_dir / name
    with open(p, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return p


def _raw(p: Path) -> str:
    with open(p, encoding="utf-8", newline="") as f:
        return f.read()


def _seed_chapters() -> dict[str, str]:
    r1, r2 = load_golden("round1.json"), load_golden("round2.json")
    return {
        "000-开场.md": r1["opening"].split("\n", 1)[1],
        "001-雨夜问名.md": r1["final"],
        "002-坦言.md": r2["final"],
    }


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


# --- golden ------------------------------------------------------------------------------------------------------


def test_golden_index(folder):
    agent = load_golden("agent.json")
    ts = datetime(2026, 10, 20, 16, 14, 0).timestamp()
    for name, text in _seed_chapters().items():
        os.utime(_put(folder, name, text), (ts, ts))
    expected = agent["stateBlock"].split("\n\n")[-1]
    assert format_story_index(folder) == expected
    assert [c.size for c in folder.chapters()] == [184, 259, 282]


def test_golden_reads_and_edits(folder):
    agent = load_golden("agent.json")
    for name, text in _seed_chapters().items():
        _put(folder, name, text)
    for step in agent["steps"]:
        for call in step["calls"]:
            assert _call(folder, call["name"], json.dumps(call["args"], ensure_ascii=False)) == call["result"]
    for name, text in agent["chapters"].items():
        assert _raw(folder.story_dir / name) == text
    assert sorted(os.listdir(folder.story_dir)) == sorted(agent["chapters"])  # no temp files left


def test_empty_index(folder, tmp_path):
    assert format_story_index(folder) == "【正文目录】正文/ 共 0 个文件 0 字（按文件名排序）"
    missing = StoryFolder(tmp_path, tmp_path / "nope" / "正文")
    assert missing.chapters() == []
    assert format_story_index(missing, "正文/") == "【正文目录】正文/ 共 0 个文件 0 字（按文件名排序）"


def test_index_counts_utf16_and_orders_by_name(folder):
    _put(folder, "010-b.md", "𠀀a")  # astral char = 2 UTF-16 units
    _put(folder, "002-a.md", "甲乙\n")
    _put(folder, "notes.txt", "ignored")
    (folder.story_dir / "sub.md").mkdir()
    assert [(c.name, c.size) for c in folder.chapters()] == [("002-a.md", 3), ("010-b.md", 3)]
    assert format_story_index(folder).splitlines()[0] == "【正文目录】正文/ 共 2 个文件 6 字（按文件名排序）"


# --- path safety -------------------------------------------------------------------------------------------------


def test_resolve_accepts_forms(folder):
    target = folder.story_dir / "001-雨夜问名.md"
    assert folder.resolve(f"{REL}/001-雨夜问名.md") == target
    assert folder.resolve("001-雨夜问名.md") == target
    assert folder.resolve("正文/001-雨夜问名.md") == target
    assert folder.resolve("./001-雨夜问名.md") == target


ESCAPES = [
    "../x.md", "/etc/passwd", "/tmp/x.md", "正文/../../x.md", f"{REL}/../x.md", "cards/青梧/对话/局B/正文/001.md",
    "cards/x.md", "a\x00b.md", "a" * 297 + ".md", "CON.md", "con.md", "nul.txt.md", "COM1.md", "lpt9.md",
    "link/passwd", "link/x.md", "evil.md", "dangling.md", "C:\\x.md", "..\\x.md", "sub/a.md", "a:b.md", "",
]


def _make_traps(folder: StoryFolder, outside: Path) -> None:
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("secret", "utf-8")
    os.symlink("/etc", folder.story_dir / "link")
    os.symlink(outside / "secret.md", folder.story_dir / "evil.md")
    os.symlink(outside / "new.md", folder.story_dir / "dangling.md")


@pytest.mark.parametrize("bad", ESCAPES)
def test_every_tool_refuses_escapes(folder, ws, tmp_path, bad):
    outside = tmp_path / "outside"
    _make_traps(folder, outside)
    other = ws / "cards/青梧/对话/局B/正文"
    other.mkdir(parents=True)
    (other / "001.md").write_text("别的局", "utf-8")
    before = _snapshot(tmp_path)
    secret_before = (outside / "secret.md").read_text("utf-8")
    calls = [
        lambda: folder.read(bad),
        lambda: folder.grep("x", bad),
        lambda: folder.edit(bad, "secret", "pwned"),
        lambda: folder.edit(bad, edits=[{"oldText": "secret", "newText": "pwned"}]),
        lambda: folder.write(bad, "pwned"),
    ]
    for call in calls:
        with pytest.raises(ToolError) as ei:
            call()
        assert ei.value.code in ("bad_path", "not_found"), (bad, ei.value.code)
        assert ei.value.message
    # the resolver itself refuses (not just "not found")
    with pytest.raises(StoryPathError):
        folder.resolve(bad, write=True)
    assert _snapshot(tmp_path) == before
    assert (outside / "secret.md").read_text("utf-8") == secret_before
    assert not (outside / "new.md").exists()
    assert (other / "001.md").read_text("utf-8") == "别的局"


def test_write_refuses_non_md_and_messages_are_chinese(folder):
    with pytest.raises(StoryPathError) as ei:
        folder.write("notes.txt", "x")
    assert ".md" in ei.value.message and ei.value.code == "bad_path"
    with pytest.raises(StoryPathError) as ei:
        folder.write("a" * 300 + ".md", "x")
    assert "太长" in ei.value.message
    with pytest.raises(StoryPathError) as ei:
        folder.read("../x.md")
    assert "正文目录" in ei.value.message
    assert list(folder.story_dir.iterdir()) == []


# --- write / read ------------------------------------------------------------------------------------------------


def test_write_creates_folder_atomically_and_keeps_bytes(tmp_path):
    f = StoryFolder(tmp_path, tmp_path / "x" / "正文")
    text = "第一行\r\n「你好。」——\n𠀀\r\n"
    msg = f.write("x/正文/001-开.md", text)
    assert msg == f"已新建 001-开.md（{len(text.encode('utf-16-le')) // 2} 字）"
    assert (tmp_path / "x" / "正文" / "001-开.md").read_bytes() == text.encode("utf-8")
    assert f.write("001-开.md", "新") == "已整章替换 001-开.md（1 字）"
    assert os.listdir(tmp_path / "x" / "正文") == ["001-开.md"]
    assert f.read("001-开.md") == "新"


def test_read_whole_and_windows(folder):
    _put(folder, "a.md", "一\n二\r\n三")
    assert folder.read("a.md") == "一\n二\r\n三"
    assert folder.read("a.md", offset=2, limit=1) == "二\r\n[第 2–2 行，共 3 行；用 offset=3 继续读]"
    assert folder.read("a.md", offset=3) == "三\n[第 3–3 行，共 3 行；已到结尾]"
    with pytest.raises(ToolError) as ei:
        folder.read("a.md", offset=4)
    assert ei.value.code == "bad_args" and "共 3 行" in ei.value.message
    with pytest.raises(ToolError) as ei:
        folder.read("missing.md")
    assert ei.value.code == "not_found" and "a.md" in ei.value.message


def test_read_truncation_note(folder):
    n = READ_MAX_LINES + 500
    _put(folder, "long.md", "".join(f"第{i}行\n" for i in range(1, n + 1)))
    out = folder.read("long.md")
    body, note = out.rsplit("\n", 1)[0], out.rsplit("\n", 1)[1]
    assert note == f"[第 1–{READ_MAX_LINES} 行，共 {n} 行；用 offset={READ_MAX_LINES + 1} 继续读]"
    assert body.splitlines()[-1] == f"第{READ_MAX_LINES}行"
    rest = folder.read("long.md", offset=READ_MAX_LINES + 1)
    assert rest.endswith(f"[第 {READ_MAX_LINES + 1}–{n} 行，共 {n} 行；已到结尾]")


def test_read_char_cap(folder):
    _put(folder, "wide.md", ("字" * 1000 + "\n") * 300)  # 300,300 units > 200,000
    out = folder.read("wide.md")
    assert out.endswith("[第 1–199 行，共 300 行；用 offset=200 继续读]")


# --- edit --------------------------------------------------------------------------------------------------------


def test_edit_errors(folder):
    p = _put(folder, "a.md", "她说：「好。」\n他说：「好。」\n结尾。")
    orig = _raw(p)

    def err(**kw):
        with pytest.raises(ToolError) as ei:
            folder.edit("a.md", **kw)
        assert _raw(p) == orig
        return ei.value

    e = err(oldText="不存在的句子", newText="x")
    assert e.code == "not_found" and "a.md" in e.message
    e = err(oldText="「好。」", newText="「行。」")
    assert e.code == "not_unique" and "2 次" in e.message and e.extra["count"] == 2
    e = err(oldText="结尾。", newText="结尾。")
    assert e.code == "no_change"
    e = err(edits=[{"oldText": "她说：「好", "newText": "x"}, {"oldText": "「好。」\n他", "newText": "y"}])
    assert e.code == "bad_args" and "重叠" in e.message
    e = err(edits=[{"oldText": "她说", "newText": "她道"}, {"oldText": "没有这句", "newText": "y"}])
    assert e.code == "not_found" and e.extra["index"] == 2
    e = err(oldText="", newText="x")
    assert e.code == "bad_args"
    e = err()
    assert e.code == "bad_args"
    e = err(oldText="a", newText="b", edits=[{"oldText": "c", "newText": "d"}])
    assert e.code == "bad_args"
    with pytest.raises(ToolError) as ei:
        folder.edit("missing.md", oldText="a", newText="b")
    assert ei.value.code == "not_found"


def test_edit_keeps_full_width_punctuation(folder):
    text = "「记得。」她背对着你，声音照旧不高——像雨。\r\n（旁白）……完。"
    p = _put(folder, "a.md", text)
    assert folder.edit("a.md", "声音照旧不高", "把这两个字说得很慢") == "ok"
    assert _raw(p) == text.replace("声音照旧不高", "把这两个字说得很慢")
    # an ASCII-punctuated quote does not match loosely and nothing is normalised; the hint quotes the original
    with pytest.raises(ToolError) as ei:
        folder.edit("a.md", '"记得."她背对着你,', "x")
    assert ei.value.code == "not_found" and "「记得。」她背对着你，" in ei.value.message
    assert "「记得。」" in _raw(p) and "……" in _raw(p) and "\r\n" in _raw(p)


def test_edit_batch_against_same_original(folder):
    p = _put(folder, "a.md", "甲乙丙丁")
    assert folder.edit("a.md", edits=[{"oldText": "丁", "newText": "乙"}, {"oldText": "乙", "newText": "丁"}]) == "ok"
    assert _raw(p) == "甲丁丙乙"
    raw = json.dumps({"path": "a.md", "edits": [{"oldText": "甲", "newText": "一"}]})
    assert isinstance(parse_args(_spec("edit"), raw), StoryEditArgs)
    assert _call(folder, "edit", raw) == "ok" and _raw(p) == "一丁丙乙"


def test_edit_crlf_fallback_keeps_line_endings(folder):
    p = _put(folder, "a.md", "一\r\n二\r\n三\r\n")
    assert folder.edit("a.md", "一\n二", "壹\n贰") == "ok"
    assert _raw(p) == "壹\r\n贰\r\n三\r\n"


# --- grep --------------------------------------------------------------------------------------------------------


def test_grep_literal_and_regex(folder):
    _put(folder, "001-a.md", "雨下着。\n她说「记得。」\n雨停了.*\n")
    _put(folder, "002-b.md", "没有雨\r\n第二行\r\n")
    out = folder.grep("雨")
    assert out.splitlines() == [
        "001-a.md:1: 雨下着。", "001-a.md:3: 雨停了.*", "002-b.md:1: 没有雨", "共 3 行命中（2 个文件）"]
    assert folder.grep(".*").splitlines() == ["001-a.md:3: 雨停了.*", "共 1 行命中（1 个文件）"]
    assert folder.grep("雨", path="002-b.md").splitlines() == ["002-b.md:1: 没有雨", "共 1 行命中（1 个文件）"]
    assert folder.grep("雨", path=f"{REL}/").splitlines()[-1] == "共 3 行命中（2 个文件）"
    assert folder.grep(r"雨.了", regex=True).splitlines() == ["001-a.md:3: 雨停了.*", "共 1 行命中（1 个文件）"]
    assert folder.grep("雨", limit=1).splitlines()[-1].startswith("共 3 行命中（2 个文件），只列出前 1 行")
    assert folder.grep("晴").splitlines()[-1] == "共 0 行命中"
    with pytest.raises(ToolError) as ei:
        folder.grep("([", regex=True)
    assert ei.value.code == "bad_args"
    with pytest.raises(ToolError):
        folder.grep("")


# --- specs -------------------------------------------------------------------------------------------------------


def test_specs():
    tools = [_spec(n) for n in AGENT_FILE_TOOLS]
    assert [(t.name, t.mode) for t in tools] == [
        ("read", "read"), ("grep", "read"), ("edit", "write"), ("write", "write")]
    props = {t.name: set(schema_of(t.args)["properties"]) for t in tools}
    assert props == {"read": {"path", "offset", "limit"}, "grep": {"pattern", "path", "regex", "limit"},
                     "edit": {"path", "oldText", "newText", "edits"}, "write": {"path", "content"}}
    assert schema_of(tools[0].args)["properties"]["offset"]["minimum"] == 1
    with pytest.raises(ToolError) as ei:
        parse_args(tools[2], '{"path": "a.md", "oldText": "x"}')
    assert ei.value.code == "bad_args"
    with pytest.raises(ToolError) as ei:
        parse_args(tools[0], '{"path": "a.md", "offset": true}')
    assert ei.value.code == "bad_args"


def test_file_tool_errors_reach_the_model_as_code_and_message(folder):
    _put(folder, "a.md", "哈哈哈")
    spec = _spec("edit")
    with pytest.raises(ToolError) as ei:
        _call(folder, "edit", json.dumps({"path": "a.md", "oldText": "哈哈", "newText": "嘿"}))
    assert ei.value.to_result() == {"ok": False, "error": "not_unique", "message": ei.value.message}
    with pytest.raises(ToolError) as ei:  # a beat that offers no chapter folder
        spec.handler(ToolContext(), parse_args(spec, json.dumps({"path": "a.md", "oldText": "哈", "newText": "嘿"})))
    assert ei.value.code == "unavailable"


# --- import ------------------------------------------------------------------------------------------------------


def test_split_text_into_chapters():
    text = ("书名\n\n第一章 雨夜问名\n\n她正往账本上记什么。\n\n第2章：坦言\r\n「没有。」\r\n\r\n"
            "  第十二回 雨停\n滴水。\n第三章里她答的那句话不是标题。\nChapter 13 The End\nbody\nCHAPTER IV\nlast\n")
    got = split_text_into_chapters(text)
    assert [t for t, _ in got] == ["序", "第一章 雨夜问名", "第2章：坦言", "第十二回 雨停", "Chapter 13 The End", "CHAPTER IV"]
    assert got[0][1] == "书名\n"
    assert got[1][1] == "她正往账本上记什么。\n"
    assert got[2][1] == "「没有。」\n"
    assert got[3][1] == "滴水。\n第三章里她答的那句话不是标题。\n"
    assert split_text_into_chapters("没有标题的一段。\n") == [("", "没有标题的一段。\n")]
    assert split_text_into_chapters("  \n") == []
    assert chapter_filename(1, "第一章 雨夜问名") == "001-雨夜问名.md"
    assert chapter_filename(0, "开场") == "000-开场.md"
    assert chapter_filename(7, "第七章") == "007-第七章.md"
    assert chapter_filename(2, 'a/b:c*?"<>|\td') == "002-a_b_c______ d.md"
    assert chapter_filename(3, "") == "003.md"
    assert chapter_filename(12, "x", width=4) == "0012-x.md"
    assert len(chapter_filename(1, "长" * 500)) <= 70
