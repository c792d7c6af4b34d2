"""A chapter write killed mid-way leaves a temp file in 正文/ (issue 29 §9): the next open of the chapter folder
removes it at once — the writer's pid is in our temp names, so a dead writer's file need not age first — and
touches nothing that is not ours. A chapter caught in the middle of a rename is brought back, never deleted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from liyuan_desktop.core.story.checkpoints import StoryHistory
from liyuan_desktop.core.story.workspace import StoryFolder

KILLED_WRITER = """
import os, sys, time
from liyuan_desktop.core import fsutil
def stuck(*a, **k):
    print("ready", flush=True)
    time.sleep(60)
os.replace = stuck                      # killed between the temp file's fsync and the rename
fsutil.atomic_write_text(sys.argv[1], "写了一半的章节。" * 1000)
"""


def _killed_write(target: Path) -> list[Path]:
    """Run a real atomic chapter write in another process and SIGKILL it mid-write; the temp files it left."""
    p = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    return [x for x in target.parent.iterdir() if x.name.endswith(".tmp")]


def test_a_killed_chapter_write_is_cleaned_when_the_folder_is_opened(tmp_path):
    story = tmp_path / "局" / "正文"
    story.mkdir(parents=True)
    (story / "001-雨夜.md").write_text("第一章。", encoding="utf-8")
    mine = {"notes.tmp": b"user", ".my-draft.tmp": b"user", ".liyuan-草稿.md": b"user", "002-x.md.tmp": b"user"}
    for name, data in mine.items():
        (story / name).write_bytes(data)
    left = _killed_write(story / "002-半章.md")
    ours = [x for x in left if x.name.startswith(".liyuan-")]
    assert len(ours) == 1 and len(left) == 4, left  # the killed write's own temp file, besides the user's three
    leftover = ours[0]
    folder = StoryFolder(tmp_path, story)          # opened right after the kill: no need to wait for it to age
    assert not leftover.exists()
    assert folder.cleaned == [str(leftover)]
    for name, data in mine.items():                 # nothing of the user's is touched
        assert (story / name).read_bytes() == data
    assert (story / "001-雨夜.md").read_text(encoding="utf-8") == "第一章。"
    assert not (story / "002-半章.md").exists()

    left = _killed_write(story / "003-又半章.md")   # and the checkpoint history's open does the same
    hist = StoryHistory(story, tmp_path / "局" / "历史")
    assert [Path(p).name for p in hist.cleaned] == [x.name for x in left if x.name.startswith(".liyuan-")]


def test_a_chapter_caught_mid_rename_is_brought_back_not_deleted(tmp_path):
    story = tmp_path / "正文"
    story.mkdir()
    stuck = story / ".liyuan-mv-a1b2c3-0.tmp"
    stuck.write_text("改名途中的章节。", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stuck, (old, old))
    fresh = story / ".liyuan-mv-d4e5f6-0.tmp"       # a rename in progress right now: left alone
    fresh.write_text("正在改名。", encoding="utf-8")
    StoryFolder(tmp_path, story)
    assert not stuck.exists() and fresh.exists()
    assert (story / "恢复-a1b2c3-0.md").read_text(encoding="utf-8") == "改名途中的章节。"
