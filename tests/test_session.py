"""The session tree: append-only JSONL, branches, the persisted active leaf, damaged files."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from liyuan_desktop.core import session as session_mod
from liyuan_desktop.core.session import (
    AssistantEntry, HeaderEntry, OtherEntry, SessionError, SessionTree, UserEntry,
)


def _lines(path: Path) -> list[str]:
    """The tree's lines (``leaf`` pointer lines, written by every commit that moved the leaf, left out)."""
    return [ln for ln in path.read_text("utf-8").split("\n") if ln.strip() and '"type":"leaf"' not in ln]


def _basic(tmp_path: Path) -> tuple[SessionTree, dict[str, str]]:
    p = tmp_path / "s" / "session.jsonl"
    t = SessionTree.create(p, mode="roleplay", card="cards/x.json", card_name="青梧", persona="你", title="测试")
    o = t.append("opening", text="【开场 · 青梧】雨下到第三天。")
    u = t.append("user", text="我推门进去。😀")
    a = t.append("assistant", text="她抬起头，“来了。”", sealed=True)
    t.commit()
    return t, {"header": t.header.id, "opening": o.id, "user": u.id, "assistant": a.id}


# -- create / open ------------------------------------------------------------------------------------------


def test_create_open_round_trip(tmp_path):
    t, ids = _basic(tmp_path)
    # every line is one JSON object with id / parent_id / type / ts
    lines = _lines(t.path)
    assert len(lines) == 4
    objs = [json.loads(ln) for ln in lines]
    for o in objs:
        assert {"id", "type", "ts"} <= set(o)
        assert isinstance(o["ts"], int) and o["ts"] > 1_600_000_000_000
    assert objs[0]["type"] == "header" and objs[0].get("parent_id") is None
    assert [o["type"] for o in objs] == ["header", "opening", "user", "assistant"]
    assert [o.get("parent_id") for o in objs[1:]] == [ids["header"], ids["opening"], ids["user"]]
    assert "我推门进去。😀" in t.path.read_text("utf-8")  # stored as UTF-8, not \u escapes

    r = SessionTree.open(t.path)
    assert r.load_warnings == []
    assert r.order == t.order
    assert isinstance(r.header, HeaderEntry)
    h = r.header
    assert (h.mode, h.card, h.card_name, h.persona, h.title, h.format, h.version) == (
        "roleplay", "cards/x.json", "青梧", "你", "测试", "liyuan-session", 1)
    assert r.leaf_id == ids["assistant"]
    path = r.path_to()
    assert [e.type for e in path] == ["header", "opening", "user", "assistant"]
    assert isinstance(path[2], UserEntry) and path[2].text == "我推门进去。😀"
    assert isinstance(path[3], AssistantEntry) and path[3].text == "她抬起头，“来了。”" and path[3].sealed
    for i in t.order:
        assert r.get(i).model_dump() == t.get(i).model_dump()


def test_every_line_carries_id_parent_id_type_ts(tmp_path):
    """The file format: one entry per line, each with id, parent_id, type and ts (the root and leaf entries have
    parent_id null)."""
    t, ids = _basic(tmp_path)
    t.set_leaf(ids["user"])
    t.commit()
    for ln in _lines(t.path):
        o = json.loads(ln)
        assert {"id", "parent_id", "type", "ts"} <= set(o), ln


def test_create_refuses_existing_file(tmp_path):
    t, _ = _basic(tmp_path)
    with pytest.raises(SessionError):
        SessionTree.create(t.path, title="again")


def test_create_accepts_existing_empty_file(tmp_path):
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"")
    t = SessionTree.create(p, title="x")
    assert SessionTree.open(p).header.id == t.header.id


def test_open_missing_file_is_session_error(tmp_path):
    with pytest.raises(SessionError):
        SessionTree.open(tmp_path / "nope.jsonl")


def test_append_to_unknown_parent_raises_and_writes_nothing(tmp_path):
    t, _ = _basic(tmp_path)
    before = t.path.read_bytes()
    with pytest.raises(KeyError):
        t.append("user", parent_id="doesnotexist", text="x")
    t.commit()
    assert t.path.read_bytes() == before


def test_latest_and_iter_type(tmp_path):
    t, ids = _basic(tmp_path)
    s1 = t.append("rp-state", state={"time": "夜"}, source="init")
    u2 = t.append("user", text="第二句")
    assert t.latest("rp-state").id == s1.id
    assert [e.id for e in t.iter_type("user")] == [ids["user"], u2.id]
    assert t.latest("ask") is None


# -- branches -----------------------------------------------------------------------------------------------


def test_two_children_of_one_user_entry(tmp_path):
    t, ids = _basic(tmp_path)
    a1 = ids["assistant"]
    a2 = t.append("assistant", parent_id=ids["user"], text="另一种回答。").id
    assert t.leaf_id == a2
    t.commit()
    for tree in (t, SessionTree.open(t.path)):
        assert [c.id for c in tree.children(ids["user"])] == [a1, a2]
        p1 = [e.id for e in tree.path_to(a1)]
        p2 = [e.id for e in tree.path_to(a2)]
        assert p1 == [ids["header"], ids["opening"], ids["user"], a1]
        assert p2 == [ids["header"], ids["opening"], ids["user"], a2]
        # asking for the other leaf again is not confused by the cache
        assert [e.id for e in tree.path_to(a1)] == p1
        assert tree.path_to(a2)[-1].text == "另一种回答。"


def test_branch_grows_from_each_leaf(tmp_path):
    t, ids = _basic(tmp_path)
    a1 = ids["assistant"]
    a2 = t.append("assistant", parent_id=ids["user"], text="B").id
    u3 = t.append("user", text="接着 B").id  # under a2 (the active leaf)
    t.set_leaf(a1)
    u4 = t.append("user", text="接着 A").id  # under a1
    assert [e.id for e in t.path_to()][-2:] == [a1, u4]
    assert [e.id for e in t.path_to(u3)][-2:] == [a2, u3]
    assert t.get(u4).parent_id == a1


def test_path_cache_follows_appends(tmp_path):
    t, ids = _basic(tmp_path)
    first = t.path_to()
    n = len(first)
    u = t.append("user", text="新")
    path = t.path_to()
    assert [e.id for e in path][-1] == u.id and len(path) == n + 1
    assert len(first) == n  # the earlier result was not mutated
    t.append("assistant", parent_id=ids["user"], text="旁支", move_leaf=False)
    assert t.leaf_id == u.id
    assert t.path_to()[-1].id == u.id


# -- active leaf ----------------------------------------------------------------------------------------------


def test_set_leaf_persisted_across_reopen(tmp_path):
    t, ids = _basic(tmp_path)
    a1 = ids["assistant"]
    a2 = t.append("assistant", parent_id=ids["user"], text="另一种回答。").id
    t.commit()
    assert SessionTree.open(t.path).leaf_id == a2  # the commit recorded the leaf the append moved to
    t.set_leaf(a1)
    assert t.leaf_id == a1
    t.commit()
    # the last line of the file is a leaf entry; the last *tree* line is a2, yet the leaf is a1
    last = json.loads(t.path.read_text("utf-8").rstrip("\n").split("\n")[-1])
    assert last["type"] == "leaf" and last["target"] == a1
    r = SessionTree.open(t.path)
    assert r.leaf_id == a1
    assert [e.id for e in r.path_to()][-1] == a1
    assert r.load_warnings == []
    # leaf entries are not part of the tree
    assert all(e.type != "leaf" for e in r.path_to(a2))
    assert all(r.get(i).type != "leaf" for i in r.order)


def test_set_leaf_back_and_forth_last_one_wins(tmp_path):
    t, ids = _basic(tmp_path)
    a1 = ids["assistant"]
    a2 = t.append("assistant", parent_id=ids["user"], text="B").id
    t.set_leaf(a1)
    t.set_leaf(a2)
    t.set_leaf(ids["opening"])
    t.commit()
    assert SessionTree.open(t.path).leaf_id == ids["opening"]


def test_set_leaf_unknown_or_leaf_entry_refused(tmp_path):
    t, ids = _basic(tmp_path)
    with pytest.raises(KeyError):
        t.set_leaf("nope")
    t.set_leaf(ids["user"])
    leaf_entry_id = next(i for i, e in t.entries.items() if e.type == "leaf")
    with pytest.raises(KeyError):
        t.set_leaf(leaf_entry_id)
    assert t.leaf_id == ids["user"]


def test_persist_leaf_writes_leaf_entry_and_commits(tmp_path):
    t, ids = _basic(tmp_path)
    u = t.append("user", text="新的话")
    t.persist_leaf()
    r = SessionTree.open(t.path)
    assert r.leaf_id == u.id
    assert r.get(u.id).text == "新的话"


def test_reopen_after_commit_restores_in_memory_leaf_even_after_set_leaf(tmp_path):
    """After a commit, reopening must give the active leaf the tree had in memory. Here a branch switch
    (set_leaf) is followed by an append that moves the leaf; the file's last leaf entry still names the old
    target."""
    t, ids = _basic(tmp_path)
    a1 = ids["assistant"]
    a2 = t.append("assistant", parent_id=ids["user"], text="B").id
    t.set_leaf(a1)
    u = t.append("user", text="接着 A 说")  # the active leaf is now u (under a1)
    t.commit()
    assert t.leaf_id == u.id
    r = SessionTree.open(t.path)
    assert r.leaf_id == u.id, f"reopened leaf {r.leaf_id!r} (a1={a1!r}, a2={a2!r}), in memory {u.id!r}"


# -- damaged files --------------------------------------------------------------------------------------------


def test_torn_last_line_skipped_then_append_commit_opens_cleanly(tmp_path):
    t, ids = _basic(tmp_path)
    good = list(t.order)
    torn = '{"id":"torn01","parent_id":"' + ids["assistant"] + '","type":"user","text":"写到一半'
    with open(t.path, "ab") as f:
        f.write(torn.encode("utf-8"))  # no newline: a crash mid-write

    r = SessionTree.open(t.path)
    assert r.load_warnings, "a torn last line must be reported"
    assert any("最后一行" in w for w in r.load_warnings)
    assert r.order == good
    assert "torn01" not in r.entries
    assert r.leaf_id == ids["assistant"]

    new = r.append("user", text="重新说一遍")
    r.commit()
    raw = r.path.read_text("utf-8")
    # the new entry starts on its own line (not glued to the torn fragment)
    assert any(json.loads(ln).get("id") == new.id for ln in raw.split("\n") if ln.startswith('{"id":"' + new.id))
    assert raw.endswith("\n")

    r2 = SessionTree.open(t.path)
    assert r2.order == good + [new.id]
    assert r2.get(new.id).text == "重新说一遍"
    assert r2.get(new.id).parent_id == ids["assistant"]
    assert r2.leaf_id == new.id
    assert len(r2.load_warnings) <= 1  # only the old torn fragment, still in the append-only file
    # a second round of append + commit keeps working
    n2 = r2.append("assistant", text="好。")
    r2.commit()
    r3 = SessionTree.open(t.path)
    assert r3.order == good + [new.id, n2.id]
    assert len(r3.load_warnings) == len(r2.load_warnings)


def test_torn_last_line_cut_inside_a_multibyte_character(tmp_path):
    t, ids = _basic(tmp_path)
    line = json.dumps({"id": "torn02", "parent_id": ids["assistant"], "type": "user", "text": "中文中文"},
                      ensure_ascii=False).encode("utf-8")
    cut = line[: line.index("文".encode("utf-8")) + 1]  # half of a 3-byte character
    with open(t.path, "ab") as f:
        f.write(cut)
    r = SessionTree.open(t.path)
    assert r.load_warnings
    assert r.order == t.order
    x = r.append("user", text="再来")
    r.commit()
    r2 = SessionTree.open(t.path)
    assert x.id in r2.entries and r2.leaf_id == x.id


def test_corrupt_middle_line_skipped(tmp_path):
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    lines.insert(2, '{"id": "bad", "type": "user", "text": 不是JSON')
    t.path.write_text("\n".join(lines) + "\n", "utf-8")
    r = SessionTree.open(t.path)
    assert len(r.load_warnings) == 1
    assert "第 3 行" in r.load_warnings[0]
    assert "最后一行" not in r.load_warnings[0]
    assert r.order == t.order
    assert r.leaf_id == ids["assistant"]
    assert [e.type for e in r.path_to()] == ["header", "opening", "user", "assistant"]


def test_non_object_and_invalid_lines_skipped(tmp_path):
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    lines[2:2] = ["[1, 2, 3]", '"just a string"', '{"id": "u9", "type": "user"}', "42"]
    t.path.write_text("\n".join(lines) + "\n", "utf-8")
    r = SessionTree.open(t.path)
    assert len(r.load_warnings) == 4
    assert r.order == t.order


def test_duplicate_id_line_skipped(tmp_path):
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    dup = json.loads(lines[2])
    dup["text"] = "冒名"
    lines.append(json.dumps(dup, ensure_ascii=False))
    t.path.write_text("\n".join(lines) + "\n", "utf-8")
    r = SessionTree.open(t.path)
    assert len(r.load_warnings) == 1
    assert r.get(ids["user"]).text == "我推门进去。😀"


def test_corrupt_parent_line_does_not_crash_the_branch(tmp_path):
    """Loading never crashes on a damaged file: when a middle line that is the parent of later entries is
    corrupt, the tree still opens and its active branch can be walked."""
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    assert json.loads(lines[2])["id"] == ids["user"]
    lines[2] = lines[2][: len(lines[2]) // 2]  # damage the user entry (parent of the assistant)
    t.path.write_text("\n".join(lines) + "\n", "utf-8")
    r = SessionTree.open(t.path)
    assert r.load_warnings
    path = r.path_to()  # must not raise KeyError
    assert path[0].type == "header"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n\n",
        b'{"id":"u1","parent_id":null,"type":"user","text":"hi","ts":1}\n',
        b"not json at all\n",
    ],
)
def test_file_without_header_is_session_error(tmp_path, content):
    p = tmp_path / "session.jsonl"
    p.write_bytes(content)
    with pytest.raises(SessionError):
        SessionTree.open(p)


def test_header_not_first_is_session_error(tmp_path):
    p = tmp_path / "session.jsonl"
    p.write_text(
        '{"id":"u1","parent_id":null,"type":"user","text":"hi","ts":1}\n'
        '{"id":"h1","parent_id":null,"type":"header","ts":1}\n', "utf-8")
    with pytest.raises(SessionError):
        SessionTree.open(p)


def test_torn_header_is_session_error(tmp_path):
    p = tmp_path / "session.jsonl"
    p.write_text('{"id":"h1","parent_id":null,"type":"hea', "utf-8")
    with pytest.raises(SessionError):
        SessionTree.open(p)


def test_unknown_entry_type_kept_as_other_entry(tmp_path):
    t, ids = _basic(tmp_path)
    line = {"id": "bm01", "parent_id": ids["assistant"], "type": "bookmark", "ts": 123, "note": "书签",
            "nested": {"a": [1, 2]}}
    with open(t.path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
    r = SessionTree.open(t.path)
    assert r.load_warnings == []
    # a line appended after the last leaf pointer (as when that pointer line was torn) becomes the leaf
    assert r.leaf_id == "bm01"
    e = r.get("bm01")
    assert isinstance(e, OtherEntry)
    assert e.type == "bookmark" and e.parent_id == ids["assistant"] and e.ts == 123
    assert e.model_dump()["note"] == "书签" and e.model_dump()["nested"] == {"a": [1, 2]}
    assert r.leaf_id == "bm01"
    assert [x.id for x in r.path_to()][-1] == "bm01"
    # children of an unknown entry still hang in the tree
    u = r.append("user", text="书签之后")
    r.commit()
    r2 = SessionTree.open(t.path)
    assert r2.get(u.id).parent_id == "bm01"
    assert r2.get("bm01").model_dump()["note"] == "书签"


def test_append_unknown_type_round_trips(tmp_path):
    t, ids = _basic(tmp_path)
    e = t.append("chapter-note", text="附注", extra_field=3)
    assert isinstance(e, OtherEntry)
    t.commit()
    r = SessionTree.open(t.path)
    got = r.get(e.id)
    assert isinstance(got, OtherEntry) and got.type == "chapter-note"
    assert got.model_dump()["text"] == "附注" and got.model_dump()["extra_field"] == 3


# -- commit ----------------------------------------------------------------------------------------------------


def test_commit_writes_pending_and_fsyncs(tmp_path, monkeypatch):
    t, ids = _basic(tmp_path)
    synced: list[int] = []
    real_fsync = session_mod.os.fsync

    def spy(fd):
        synced.append(fd)
        return real_fsync(fd)

    monkeypatch.setattr(session_mod.os, "fsync", spy)
    size = t.path.stat().st_size
    u = t.append("user", text="待写入")
    assert t.path.stat().st_size == size  # buffered until commit
    t.commit()
    assert len(synced) == 1
    data = t.path.read_bytes()
    assert data.endswith(b"\n")
    last = json.loads(_lines(t.path)[-1])
    assert last["id"] == u.id and last["text"] == "待写入"
    assert json.loads(data.decode("utf-8").rstrip("\n").split("\n")[-1]) == {**json.loads(data.decode("utf-8").rstrip("\n").split("\n")[-1]), "type": "leaf", "target": u.id}
    # nothing pending: no write, no fsync
    t.commit()
    assert len(synced) == 1
    assert t.path.read_bytes() == data


def test_lines_on_disk_never_rewritten(tmp_path):
    t, ids = _basic(tmp_path)
    before = t.path.read_bytes()
    t.append("revision", target=ids["assistant"], text="改过的回答", version=1)
    t.set_leaf(ids["user"])
    t.persist_leaf()
    after = t.path.read_bytes()
    assert after.startswith(before)


class _FlakyFile:
    """A file whose write puts only half the bytes on disk, then fails (disk full)."""

    def __init__(self, real):
        self.real = real

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.real.close()
        return False

    def write(self, b):
        self.real.write(b[: len(b) // 2])
        self.real.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self):
        self.real.flush()

    def fileno(self):
        return self.real.fileno()


def test_failed_commit_keeps_pending_and_retry_loses_nothing(tmp_path, monkeypatch):
    """commit(): "Raises OSError (disk full…) with the pending lines kept, so a later commit can retry". A write
    that failed half way leaves a torn line; the retry must still produce a file where every entry loads."""
    t, ids = _basic(tmp_path)
    long_text = "第一句" + "很长" * 100
    u = t.append("user", text=long_text)  # most of the blob: the failed write tears this line
    a = t.append("assistant", text="短")
    real_open = open
    calls = {"n": 0}

    def flaky_open(path, mode="r", *args, **kw):
        if calls["n"] == 0 and "a" in mode:
            calls["n"] += 1
            return _FlakyFile(real_open(path, mode, *args, **kw))
        return real_open(path, mode, *args, **kw)

    monkeypatch.setattr(session_mod, "open", flaky_open, raising=False)
    with pytest.raises(OSError):
        t.commit()
    monkeypatch.undo()
    t.commit()  # retry
    r = SessionTree.open(t.path)
    assert u.id in r.entries and a.id in r.entries, r.load_warnings
    assert r.get(u.id).text == long_text
    assert r.leaf_id == a.id


def test_torn_leaf_line_keeps_the_last_beat_on_the_branch(tmp_path):
    """Every commit ends with a leaf line; when only that line is torn, the entries of the commit stay on the
    active branch (they are not dropped back to the previous pointer)."""
    t, ids = _basic(tmp_path)
    u = t.append("user", text="第二拍")
    a = t.append("assistant", text="回应")
    t.commit()
    raw = t.path.read_text("utf-8").rstrip("\n").split("\n")
    assert '"type":"leaf"' in raw[-1]
    t.path.write_text("\n".join(raw[:-1]) + "\n" + raw[-1][: len(raw[-1]) // 2], "utf-8")
    r = SessionTree.open(t.path)
    assert r.load_warnings
    assert r.leaf_id == a.id
    assert [e.id for e in r.path_to()][-2:] == [u.id, a.id]
