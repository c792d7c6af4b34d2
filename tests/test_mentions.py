"""Issue 19 §3: the mentions index — longest name wins, Latin names on word boundaries, aliases, UTF-16 offsets,
incremental by content hash (counted, not timed)."""

from __future__ import annotations

import os

from liyuan_desktop.core.story.mentions import MentionIndex


def test_longest_match_aliases_boundaries_and_utf16_offsets():
    idx = MentionIndex()
    idx.set_names({"林黛玉": ["颦儿"], "林": [], "Ann": [], "宝玉": []})
    idx.update_texts({"002.md": "Anne 和 Ann 说：林黛玉，颦儿。", "001.md": "😀宝玉见林。"})
    assert [(m.file, m.offset, m.matched) for m in idx.mentions("林黛玉")] == [("002.md", 13, "林黛玉"),
                                                                             ("002.md", 17, "颦儿")]
    assert [(m.file, m.offset) for m in idx.mentions("林")] == [("001.md", 5)]  # 😀 is two UTF-16 units
    assert [(m.file, m.offset) for m in idx.mentions("宝玉")] == [("001.md", 2)]
    assert [m.offset for m in idx.mentions("Ann")] == [7]  # not inside "Anne"
    assert idx.chapters_of("林黛玉") == ["002.md"] and idx.counts("林黛玉") == {"002.md": 2}
    assert idx.first("宝玉").file == "001.md"


def test_folder_updates_rescan_only_changed_files(tmp_path):
    d = tmp_path / "正文"
    d.mkdir()
    for i in range(20):
        (d / f"{i:03d}.md").write_text(f"第{i}章 林青和阿檀。", "utf-8")
    idx = MentionIndex()
    idx.set_names({"林青": [], "阿檀": ["檀哥"]})
    assert len(idx.update_folder(d)) == 20
    assert idx.update_folder(d) == [] and idx.last_scanned == 0
    (d / "003.md").write_text("檀哥来了。", "utf-8")
    (d / "007.md").write_text("没有人。", "utf-8")
    os.utime(d / "011.md", None)  # touched, same content: read but not re-scanned
    assert sorted(idx.update_folder(d)) == ["003.md", "007.md"]
    assert len(idx.chapters_of("林青")) == 18 and "003.md" in idx.chapters_of("阿檀")
    (d / "019.md").unlink()
    idx.update_folder(d)
    assert "019.md" not in idx.files()
    assert idx.set_names({"林青": ["青儿"]}) and len(idx.update_folder(d)) == 19  # new names: everything again
