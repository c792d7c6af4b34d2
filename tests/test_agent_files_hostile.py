"""Agent-mode files that try to trick the folder (issue 15 item 9): symlinks in 正文/ (to /etc/passwd-like files
outside, to a folder, dangling), hidden ``.liyuan-*`` names, bidi-override names, and temp files a killed write
left behind. Checkpoints, restore, the index and export never follow a link, never show a hidden name, and a turn
after such a link appears still works."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.story.checkpoint_model import scan_chapters
from liyuan_desktop.core.story.checkpoints import StoryHistory
from liyuan_desktop.core.story.export import export_markdown
from liyuan_desktop.core.story.workspace import StoryFolder, format_story_index

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks need POSIX")

SECRET = "root:x:0:0:SECRET-LINE-FROM-OUTSIDE\n"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A story folder with one real chapter and every hostile entry; returns (story_dir, history_dir, outside)."""
    story = tmp_path / "局" / "正文"
    story.mkdir(parents=True)
    (story / "001-真章.md").write_text("真正的一章。\n", "utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(SECRET, "utf-8")
    (outside / "dir.md").mkdir()
    os.symlink(outside / "passwd", story / "002-链接.md")                 # a link to a file outside
    os.symlink(story / "001-真章.md", story / "003-内链.md")              # a link to a chapter inside
    os.symlink(outside / "dir.md", story / "004-目录链接.md")             # a link to a folder
    os.symlink(outside / "gone", story / "005-断链.md")                   # a dangling link
    (story / ".liyuan-隐藏.md").write_text("看不见的内容\n", "utf-8")      # hidden name
    (story / "006-\u202egnp.md").write_text("方向反转的名字\n", "utf-8")  # bidi override
    return story, tmp_path / "局" / "历史", outside


def test_scan_lists_only_the_real_chapter_and_names_the_rest_once(hostile):
    story, _, _ = hostile
    chapters, ignored = scan_chapters(story)
    assert [e.name for e in chapters] == ["001-真章.md"]
    assert dict(ignored) == {"002-链接.md": "symlink", "003-内链.md": "symlink", "004-目录链接.md": "symlink",
                             "005-断链.md": "symlink", "006-\u202egnp.md": "bidi_name"}


def test_checkpoint_never_copies_a_link_target(hostile):
    story, hist_dir, _ = hostile
    hist = StoryHistory(story, hist_dir)
    cp = hist.commit("user", "first")
    assert cp is not None and list(cp.files) == ["001-真章.md"]
    for h in hist.objects():
        assert SECRET.encode() not in hist.object_bytes(h)
        assert "看不见".encode() not in hist.object_bytes(h)
    assert {n for n, _ in hist.ignored} >= {"002-链接.md", "003-内链.md"}


def test_restore_replaces_a_link_and_never_writes_through_it(hostile):
    story, hist_dir, outside = hostile
    hist = StoryHistory(story, hist_dir)
    first = hist.commit("user", "first")
    # the chapter is later swapped for a link to the outside file: restore rewrites the name, not the target
    (story / "001-真章.md").unlink()
    os.symlink(outside / "passwd", story / "001-真章.md")
    hist.restore(first.id)
    assert not (story / "001-真章.md").is_symlink()
    assert (story / "001-真章.md").read_text("utf-8") == "真正的一章。\n"
    assert (outside / "passwd").read_text("utf-8") == SECRET


def test_export_leaves_out_links_hidden_and_bidi_names(hostile, tmp_path):
    story, _, _ = hostile
    out = export_markdown(story, tmp_path / "book.md", "书")
    text = out.read_text("utf-8")
    assert "真正的一章" in text
    assert "SECRET-LINE" not in text and "看不见" not in text and "方向反转" not in text


def test_index_and_tools_hide_and_refuse(hostile):
    story, _, _ = hostile
    folder = StoryFolder(story.parent.parent, story)
    index = format_story_index(folder)
    assert "001-真章.md" in index
    for bad in ("002-链接", "003-内链", ".liyuan-", "\u202e"):
        assert bad not in index
    with pytest.raises(ToolError):
        folder.write(".liyuan-偷偷.md", "x")
    with pytest.raises(ToolError):
        folder.write("007-\u202eevil.md", "x")
    with pytest.raises(ToolError):
        folder.read("002-链接.md")


def test_leftover_temp_files_are_removed_on_open(hostile):
    story, hist_dir, _ = hostile
    objects = hist_dir / "对象"
    objects.mkdir(parents=True)
    old = time.time() - 3600
    leftovers = [story / ".liyuan-abc123.tmp", story / ".001-真章.md.999999.0123abcd.tmp",
                 objects / ".deadbeef.999999.89abcdef.tmp"]
    for p in leftovers:
        p.write_bytes(b"half")
        os.utime(p, (old, old))
    fresh = story / ".liyuan-live.tmp"  # a write in progress right now (young, no pid): kept
    fresh.write_bytes(b"live")
    hist = StoryHistory(story, hist_dir)
    assert sorted(hist.cleaned) == sorted(str(p) for p in leftovers)
    assert not any(p.exists() for p in leftovers)
    assert fresh.exists()


async def test_a_turn_after_a_link_appears_still_works(tmp_path):
    assert os.environ["LIYUAN_HOME"]
    card = load_card(DEMO_CARD)
    d = chat_dir(card.name, "局H")
    model = ReplayModel(
        actor=[{"tool_calls": [{"name": "write", "arguments": {"path": "002-续.md", "content": "续写。\n"}}]},
               {"content": "写好了。"}],
        scribe=['{"patch": {"time": "夜"}}'])
    chat = Chat.create(d, card, model, mode="agent")
    chat.import_chapters([("001-开.md", "开头。\n")], message="导入")
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET, "utf-8")
    os.symlink(outside, d / "正文" / "009-偷看.md")
    os.symlink(tmp_path / "nowhere", d / "正文" / "010-断.md")
    await chat.send("接着写一章。")
    objs = d / "历史" / "对象"
    for p in objs.iterdir():
        assert b"SECRET-LINE" not in p.read_bytes()
    assert (d / "正文" / "002-续.md").read_text("utf-8") == "续写。\n"
