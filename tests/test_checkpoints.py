"""Story checkpoints (seed 000, 「检查点：改坏了能回去」): golden agent turn, restore/undo, crash safety, torn log."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from helpers import shared_path

from liyuan_desktop.core.story import checkpoints as cpmod
from liyuan_desktop.core.story.checkpoint_model import (
    Changed,
    Checkpoint,
    CheckpointNotFound,
    MissingObjectError,
    diff_manifests,
    sha256_hex,
)
from liyuan_desktop.core.story.checkpoints import StoryHistory

GOLDEN = shared_path("golden")


def _golden(name: str) -> dict:
    p = GOLDEN / name
    if not p.exists():
        pytest.skip(f"golden file {p} not found (the shared/ folder is not beside this checkout)")
    return json.loads(p.read_text("utf-8"))


def _before_chapters() -> dict[str, str]:
    r1, r2 = _golden("round1.json"), _golden("round2.json")
    first, rest = r1["opening"].split("\n", 1)
    assert first == "【开场 · 青梧】"
    return {"000-开场.md": rest, "001-雨夜问名.md": r1["final"], "002-坦言.md": r2["final"]}


def _write(folder: Path, chapters: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in chapters.items():
        (folder / name).write_bytes(text.encode("utf-8"))


def _folder(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def story(tmp_path):
    s = tmp_path / "局C" / "正文"
    s.mkdir(parents=True)
    return s, StoryHistory(s, tmp_path / "局C" / "历史")


def _age(folder: Path, seconds: float = 3600) -> None:
    """Back-date chapter mtimes so cached hashes are not 'racy' (as for a book written earlier)."""
    for p in folder.iterdir():
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


# ------------------------------------------------------------------------------------------------ golden


def test_golden_agent_turn(story):
    g = _golden("agent.json")
    folder, h = story
    _write(folder, _before_chapters())
    c0 = h.commit(author="user", message="导入三章")
    assert c0 is not None
    gc0, gc1 = g["checkpoint0"], g["checkpoint1"]
    assert c0.files == gc0["files"]
    assert c0.changed.to_dict() == gc0["changed"]
    assert list(c0.files) == list(gc0["files"])  # sorted like the golden

    _write(folder, g["chapters"])
    c1 = h.commit(author="agent", message=g["user"])
    assert c1 is not None
    assert c1.files == gc1["files"] and c1.changed.to_dict() == gc1["changed"]
    assert c1.message == gc1["message"] and c1.author == gc1["author"] == "agent"

    assert h.objects() == sorted(g["objects"]) and len(h.objects()) == 5
    assert sorted(os.listdir(h.objects_dir)) == sorted(g["objects"])

    golden_lines = g["log"].splitlines()
    ours = h.log_file.read_text("utf-8").splitlines()
    assert len(ours) == len(golden_lines) == 2
    for mine, theirs in zip(ours, golden_lines):
        gd = json.loads(theirs)
        d = json.loads(mine)
        d["id"], d["ts"] = gd["id"], gd["ts"]
        assert json.dumps(d, ensure_ascii=False, separators=(",", ":")) == theirs
        assert list(d) == list(gd)
    # the model round-trips the golden lines byte for byte
    for theirs in golden_lines:
        assert Checkpoint.model_validate_json(theirs).to_line() == theirs
    # full file: our log with ids/ts swapped equals the golden log exactly
    swapped = h.log_file.read_text("utf-8")
    for c, gc in ((c0, gc0), (c1, gc1)):
        swapped = swapped.replace(f'"id":"{c.id}","ts":{c.ts}', f'"id":"{gc["id"]}","ts":{gc["ts"]}')
    assert swapped == g["log"]

    # reopening reads the same history
    h2 = StoryHistory(folder, h.history_dir)
    assert [c.id for c in h2.checkpoints()] == [c0.id, c1.id]
    assert h2.latest().files == gc1["files"]

    diffs = h2.diff_text(c1.id)
    assert [(d.name, d.status) for d in diffs] == [("001-雨夜问名.md", "modified"), ("002-坦言.md", "modified")]
    assert diffs[0].new_text == g["chapters"]["001-雨夜问名.md"]
    assert diffs[0].old_text == _before_chapters()["001-雨夜问名.md"]
    assert h2.object_text(gc0["files"]["000-开场.md"]) == _before_chapters()["000-开场.md"]


def test_id_shape(story):
    folder, h = story
    _write(folder, {"a.md": "x"})
    c = h.commit("user", "m")
    left, right = c.id.split("-")
    assert int(left, 36) == c.ts and len(right) == 6 and int(right, 16) >= 0


# ------------------------------------------------------------------------------------------------ commit


def test_unchanged_commit_returns_none_and_force(story):
    folder, h = story
    _write(folder, {"001-a.md": "一"})
    c0 = h.commit("user", "first")
    assert h.commit("user", "again") is None
    assert len(h.checkpoints()) == 1
    c1 = h.commit("agent", "forced", turn_id="t-7", aborted=True, force=True)
    assert c1 is not None and c1.changed.is_empty() and c1.files == c0.files
    line = h.log_file.read_text("utf-8").splitlines()[-1]
    assert list(json.loads(line)) == ["id", "ts", "author", "turnId", "message", "aborted", "files", "changed"]
    assert c1.ts > c0.ts


def test_non_chapters_ignored(story):
    folder, h = story
    _write(folder, {"001-a.md": "一", "notes.txt": "not a chapter", ".002-hidden.md": "tmp"})
    (folder / "sub.md").mkdir()
    c = h.commit("user", "m")
    assert list(c.files) == ["001-a.md"]


def test_cjk_and_spaces_in_names(story):
    folder, h = story
    name = "003 第三章 雨 停了 (上).md"
    _write(folder, {name: "雨停了。\n", "001-a.md": "a"})
    c0 = h.commit("user", "导入")
    assert name in c0.files and c0.files[name] == sha256_hex("雨停了。\n".encode())
    assert name in h.log_file.read_text("utf-8")  # non-ASCII kept, not \u-escaped
    (folder / name).rename(folder / "003 第三章　改名.md")
    c1 = h.commit("user", "改名")
    assert c1.changed.renamed == [{"from": name, "to": "003 第三章　改名.md"}]
    h.restore(c0.id)
    assert _folder(folder) == {name: "雨停了。\n", "001-a.md": "a"}


def test_diff_manifests_renames_deterministic():
    old = {"a.md": "h1", "b.md": "h1", "c.md": "h2", "d.md": "h3", "e.md": "h4"}
    new = {"x.md": "h1", "y.md": "h1", "z.md": "h1", "c.md": "h9", "e.md": "h4", "w.md": "h3"}
    ch = diff_manifests(old, new)
    assert ch == Changed(added=["z.md"], modified=["c.md"],
                         renamed=[{"from": "a.md", "to": "x.md"}, {"from": "b.md", "to": "y.md"},
                                  {"from": "d.md", "to": "w.md"}],
                         removed=[])
    assert diff_manifests(new, new).is_empty()


def test_only_changed_files_reread(story):
    folder, h = story
    _write(folder, {f"{i:03d}.md": f"第{i}章" * 10 for i in range(20)})
    _age(folder)
    h.commit("user", "m")
    assert h.last_read_count == 20
    h.snapshot()
    assert h.last_read_count == 0
    _write(folder, {"005.md": "改了", "011.md": "也改了"})
    c = h.commit("agent", "two")
    assert h.last_read_count == 2 and c.changed.modified == ["005.md", "011.md"]
    # the on-disk cache serves a fresh instance too
    h2 = StoryHistory(folder, h.history_dir)
    _age(folder)
    h2.snapshot()
    h2.snapshot()
    assert h2.last_read_count == 0


def test_same_size_rewrite_is_seen(story):
    """A rewrite with the same size in the same mtime tick must not be hidden by the cache (racy entries)."""
    folder, h = story
    p = folder / "a.md"
    p.write_text("AAAA", "utf-8")
    h.commit("user", "1")
    st = p.stat()
    p.write_text("BBBB", "utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
    c = h.commit("user", "2")
    assert c is not None and c.changed.modified == ["a.md"]


# ------------------------------------------------------------------------------------------------ restore


def test_restore_files_renamed_removed_and_undo(story):
    folder, h = story
    v0 = {"001-起.md": "起\n", "002-承.md": "承\n", "003-转.md": "转\n"}
    _write(folder, v0)
    (folder / "笔记.txt").write_text("keep me", "utf-8")
    c0 = h.commit("user", "v0")

    (folder / "002-承.md").rename(folder / "002-承（改名）.md")  # renamed
    (folder / "003-转.md").unlink()  # removed
    _write(folder, {"001-起.md": "起，改过\n", "004-合.md": "合\n"})  # modified + added
    c1 = h.commit("agent", "v1")
    assert c1.changed.to_dict() == {"added": ["004-合.md"], "modified": ["001-起.md"],
                                    "renamed": [{"from": "002-承.md", "to": "002-承（改名）.md"}],
                                    "removed": ["003-转.md"]}
    v1 = {k: v for k, v in _folder(folder).items() if k.endswith(".md")}

    r = h.restore(c0.id)
    assert r.restoredFrom == c0.id and r.author == "user" and r.files == c0.files
    assert _folder(folder) == {**v0, "笔记.txt": "keep me"}  # non-chapter untouched
    assert r.changed.to_dict() == {"added": ["003-转.md"], "modified": ["001-起.md"],
                                   "renamed": [{"from": "002-承（改名）.md", "to": "002-承.md"}],
                                   "removed": ["004-合.md"]}
    assert '"restoredFrom":"%s"' % c0.id in h.log_file.read_text("utf-8").splitlines()[-1]

    # undo the restore = restore the checkpoint just before it
    cps = h.checkpoints()
    assert cps[-1].id == r.id and cps[-2].id == c1.id
    u = h.restore(cps[-2].id)
    assert {k: v for k, v in _folder(folder).items() if k.endswith(".md")} == v1
    assert u.restoredFrom == c1.id

    # restoring to the current state still records a (forced) checkpoint
    again = h.restore(c1.id)
    assert again.changed.is_empty() and again.restoredFrom == c1.id


def test_restore_keeps_uncommitted_work(story):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    _write(folder, {"a.md": "unsaved edit", "b.md": "unsaved new chapter"})  # never committed
    r = h.restore(c0.id)
    assert _folder(folder) == {"a.md": "v0"}
    cps = h.checkpoints()
    before = cps[-2]
    assert before.message == "恢复前自动保存" and set(before.files) == {"a.md", "b.md"}
    assert h.object_text(before.files["b.md"]) == "unsaved new chapter"
    h.restore(before.id)  # undo
    assert _folder(folder) == {"a.md": "unsaved edit", "b.md": "unsaved new chapter"}
    assert r.id in [c.id for c in h.checkpoints()]


def test_restore_without_save_current_still_stores_blobs(story):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    _write(folder, {"extra.md": "only here"})
    h.restore(c0.id, save_current=False)
    assert not (folder / "extra.md").exists()
    assert sha256_hex("only here".encode()) in h.objects()


def test_restore_errors_touch_nothing(story):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    _write(folder, {"a.md": "v1"})
    h.commit("user", "v1")
    with pytest.raises(CheckpointNotFound):
        h.restore("nope")
    (h.objects_dir / c0.files["a.md"]).unlink()
    h._objects = None
    with pytest.raises(MissingObjectError):
        h.restore(c0.id)
    assert _folder(folder) == {"a.md": "v1"}
    with pytest.raises(ValueError):
        h.object_text("../../etc/passwd")


# ------------------------------------------------------------------------------------------------ crash safety


def test_crash_between_objects_and_log(story, monkeypatch):
    folder, h = story
    _write(folder, {"001.md": "一", "002.md": "二"})
    c0 = h.commit("user", "v0")
    _write(folder, {"002.md": "二，改", "003.md": "三"})

    def boom(c):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(cpmod, "_before_log_append", boom)
    with pytest.raises(RuntimeError):
        h.commit("agent", "lost turn")
    monkeypatch.setattr(cpmod, "_before_log_append", None)

    # objects written, log not appended
    assert sha256_hex("三".encode()) in h.objects() and sha256_hex("二，改".encode()) in h.objects()
    h2 = StoryHistory(folder, h.history_dir)  # "reopen after the crash"
    assert [c.id for c in h2.checkpoints()] == [c0.id]
    assert h2.latest().id == c0.id
    for hh in h2.latest().files.values():  # every referenced blob is there
        assert h2.object_text(hh)
    assert _folder(folder) == {"001.md": "一", "002.md": "二，改", "003.md": "三"}  # no chapter lost
    c1 = h2.commit("agent", "after the crash")
    assert c1 is not None and c1.changed.added == ["003.md"] and c1.changed.modified == ["002.md"]
    assert len(h2.log_file.read_text("utf-8").splitlines()) == 2


def test_torn_last_line(story, caplog):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    _write(folder, {"a.md": "v1"})
    c1 = h.commit("user", "v1")
    raw = h.log_file.read_bytes()
    last = raw.rstrip(b"\n").rsplit(b"\n", 1)[1]
    h.log_file.write_bytes(raw[: len(raw) - len(last) // 2 - 1])  # cut the last line in half (mid UTF-8 maybe)

    h2 = StoryHistory(folder, h.history_dir)
    with caplog.at_level(logging.WARNING, logger=cpmod.__name__):
        cps = h2.checkpoints()
    assert [c.id for c in cps] == [c0.id]
    assert any("torn" in r.getMessage() for r in caplog.records)
    assert h2.latest().id == c0.id

    c2 = h2.commit("user", "after torn")  # folder is v1 again vs c0 → a change
    assert c2 is not None and c2.changed.modified == ["a.md"]
    lines = h2.log_file.read_text("utf-8").splitlines()
    assert len(lines) == 2 and all(json.loads(x) for x in lines)
    assert c1.id not in h2.log_file.read_text("utf-8")


def test_log_tail_without_newline_is_kept(story):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    h.log_file.write_bytes(h.log_file.read_bytes().rstrip(b"\n"))
    h2 = StoryHistory(folder, h.history_dir)
    _write(folder, {"a.md": "v1"})
    c1 = h2.commit("user", "v1")
    assert [c.id for c in StoryHistory(folder, h.history_dir).checkpoints()] == [c0.id, c1.id]


def test_corrupt_hashcache_is_rebuilt(story):
    folder, h = story
    _write(folder, {"a.md": "v0"})
    c0 = h.commit("user", "v0")
    h.cache_file.write_text("{not json", "utf-8")
    h2 = StoryHistory(folder, h.history_dir)
    assert h2.snapshot() == c0.files


def test_empty_history(tmp_path):
    h = StoryHistory(tmp_path / "nope" / "正文", tmp_path / "nope" / "历史")
    assert h.checkpoints() == [] and h.latest() is None and h.objects() == [] and h.snapshot() == {}
    assert h.commit("user", "nothing") is None
