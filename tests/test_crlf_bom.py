"""Every text file the app reads, written on Windows (issue 32 §2): CRLF line ends and a UTF-8 BOM (Notepad, many
editors) read like LF without a BOM — cards' JSON, presets, world books, chapter files, 大纲.md, session JSONL, and
prose imported as chapters."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import load_card_bytes
from liyuan_desktop.core.chat.prose_import import read_text_file
from liyuan_desktop.core.lore.lorebook import Lorebook
from liyuan_desktop.core.prompt.presets.store import load_preset
from liyuan_desktop.core.session.tree import SessionTree
from liyuan_desktop.core.story.chapters import split_text_into_chapters
from liyuan_desktop.core.story.outline import read_outline
from liyuan_desktop.core.story.workspace import StoryFolder

BOM = b"\xef\xbb\xbf"


def windows(text: str) -> bytes:
    """``text`` as Notepad saves it: CRLF line ends, UTF-8 with a BOM."""
    return BOM + text.replace("\n", "\r\n").encode("utf-8")


def test_a_card_json_from_windows_loads():
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "青梧", "description": "雨夜的客栈。", "first_mes": "你来了。", "mes_example": "",
                     "personality": "", "scenario": "", "alternate_greetings": [], "tags": []}}
    text = json.dumps(card, ensure_ascii=False, indent=2)
    plain = load_card_bytes(text.encode("utf-8"), "qingwu.json")
    crlf = load_card_bytes(windows(text), "qingwu.json")
    assert crlf.name == plain.name == "青梧"
    assert crlf.first_mes == plain.first_mes == "你来了。"


def test_a_preset_from_windows_loads(tmp_path):
    preset = {"temperature": 0.8, "prompts": [{"identifier": "main", "name": "Main", "role": "system",
                                               "content": "你是叙事者。"}],
              "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True}]}]}
    text = json.dumps(preset, ensure_ascii=False, indent=4)
    (tmp_path / "lf.json").write_bytes(text.encode("utf-8"))
    (tmp_path / "crlf.json").write_bytes(windows(text))
    a, b = load_preset(tmp_path / "lf.json"), load_preset(tmp_path / "crlf.json")
    assert b.model_dump(exclude={"name"}) == a.model_dump(exclude={"name"})


def test_a_world_book_from_windows_loads(tmp_path):
    book = {"entries": {"0": {"uid": 0, "key": ["客栈"], "keysecondary": [], "content": "雨夜里的客栈。",
                              "constant": False, "order": 100, "position": 0, "disable": False}}}
    text = json.dumps(book, ensure_ascii=False, indent=2)
    (tmp_path / "lf.json").write_bytes(text.encode("utf-8"))
    (tmp_path / "crlf.json").write_bytes(windows(text))
    a = Lorebook.from_file(tmp_path / "lf.json", "lf")
    b = Lorebook.from_file(tmp_path / "crlf.json", "crlf")
    assert [e.content for e in b.entries] == [e.content for e in a.entries] == ["雨夜里的客栈。"]


def test_an_outline_from_windows_parses_like_lf(tmp_path):
    text = "# 第一卷 雨夜\n\n## 第一章 问名 {status=done target=3000}\n- 青梧开门\n- 问名\n\n## 第二章 夜谈\n- 灯下\n"
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    (tmp_path / "lf" / "大纲.md").write_bytes(text.encode("utf-8"))
    (tmp_path / "crlf" / "大纲.md").write_bytes(windows(text))
    a, b = read_outline(tmp_path / "lf"), read_outline(tmp_path / "crlf")
    assert a is not None and b is not None
    assert b.model_dump() == a.model_dump()
    assert [v.title for v in b.volumes] == ["第一卷 雨夜"]
    assert [c.title for c in b.volumes[0].chapters] == ["第一章 问名", "第二章 夜谈"]
    assert b.volumes[0].chapters[0].beats == ["青梧开门", "问名"]


def test_prose_from_windows_splits_into_the_same_chapters(tmp_path):
    text = "第一章 雨夜\n青梧开门。\n\n第二章 问名\n她问你的名字。\n"
    (tmp_path / "lf.txt").write_bytes(text.encode("utf-8"))
    (tmp_path / "crlf.txt").write_bytes(windows(text))
    a = split_text_into_chapters(read_text_file(tmp_path / "lf.txt"))
    b = split_text_into_chapters(read_text_file(tmp_path / "crlf.txt"))
    assert [t for t, _ in b] == [t for t, _ in a] == ["第一章 雨夜", "第二章 问名"]
    assert [body.replace("\r\n", "\n") for _, body in b] == [body for _, body in a]


def test_a_chapter_file_with_crlf_is_read_and_edited_keeping_its_line_ends(tmp_path):
    story = tmp_path / "正文"
    story.mkdir()
    (story / "001-雨夜.md").write_bytes("青梧开门。\r\n雨很大。\r\n".encode("utf-8"))
    folder = StoryFolder(tmp_path, story)
    assert "雨很大。" in folder.read("001-雨夜.md")
    folder.edit("001-雨夜.md", "青梧开门。\n雨很大。", "青梧开门。\n雨停了。")
    assert (story / "001-雨夜.md").read_bytes() == "青梧开门。\r\n雨停了。\r\n".encode("utf-8")


def test_a_session_file_from_windows_opens_with_every_entry(tmp_path):
    path = tmp_path / "session.jsonl"
    tree = SessionTree.create(path, card_name="青梧")
    tree.append("message", role="user", content="你好")
    tree.append("message", role="assistant", content="你来了。")
    tree.commit()
    lf = path.read_bytes()
    crlf_path = tmp_path / "crlf.jsonl"
    crlf_path.write_bytes(BOM + lf.replace(b"\n", b"\r\n"))
    a, b = SessionTree.open(path), SessionTree.open(crlf_path)
    assert len(list(a.iter_type("message"))) == 2
    assert [e.content for e in b.iter_type("message")] == [e.content for e in a.iter_type("message")]
    assert b.header.model_dump() == a.header.model_dump()
