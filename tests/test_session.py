"""The session tree: append-only JSONL, branches, the persisted active leaf, damaged files."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from liyuan_desktop.core.session import tree as session_mod
from liyuan_desktop.core.session.entries import AssistantEntry, BeatEntry, HeaderEntry, OtherEntry, UserEntry
from liyuan_desktop.core.session.lazy import is_lazy
from liyuan_desktop.core.session.tree import SessionError, SessionTree


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


# -- lazily parsed beat / rp-state lines (issue 7, long sessions) ----------------------------------------------


def _varied(tmp_path: Path, n: int = 30) -> SessionTree:
    """A tree with every entry kind and every beat/snapshot field in use: sealed and unsealed beats with calls,
    tool results of any JSON shape, ``sent``, extra keys (``lore_timed``), errors; snapshots with and without
    ``mvu``; revisions, asks, a branch."""
    from liyuan_desktop.core.session.entries import CallLog, ToolCallLog

    t, _ids = _basic(tmp_path)
    for i in range(n):
        t.append("user", text=f"第 {i} 拍：我推门。")
        calls = [CallLog(round=1, reasoning="想。" * (i % 4), content="" if i % 3 else "直出",
                         usage={"prompt_tokens": 100 + i, "nested": {"a": [1, 2.5, None, True]}}, finish_reason="tool_calls",
                         tool_calls=[ToolCallLog(id=f"c{i}", name="draft_write", arguments=json.dumps({"version": 0, "content": "稿"}),
                                                 result=[{"ok": True}, "字符串", 3, None] if i % 2 else {"ok": False, "error": "版本不对"},
                                                 ok=bool(i % 2), mode="write", ms=1.5)])]
        outcome = ("sealed", "unsealed", "stopped", "error", "revised_previous")[i % 5]
        b = t.append("beat", calls=calls, outcome=outcome, draft=f"稿纸 {i}", draft_version=i % 3, injection="【世界状态】",
                     activated=["客栈"], activity=["写稿"], warnings=["警告"] if i % 4 == 0 else [],
                     error="超时" if outcome == "error" else None, sent={"messages": [{"history": [0, i]}], "tools": ["draft_seal"]},
                     lore_timed={"sticky": {"客栈": i}} if i % 2 else None)
        if outcome == "sealed":
            a = t.append("assistant", text=f"回应 {i}", beat=b.id)
            if i % 7 == 0:
                t.append("revision", target=a.id, text=f"改过的回应 {i}", version=2)
        if i % 6 == 0:
            t.append("ask", question="去哪？", options=["东", "西"], answer="东")
        extra = {"mvu": {"stat_data": {"好感": i}}, "mvu_warnings": []} if i % 3 == 0 else {}
        t.append("rp-state", state={"time": f"第 {i} 天", "characters": {"青梧": {"affinity": i}}}, source="scribe",
                 applied=[f"time → 第 {i} 天"], raw='{"patch": {}}', **extra)
        if i == n // 2:
            t.commit()
            fork = t.leaf_id
    t.commit()
    keep = t.leaf_id
    t.set_leaf(fork)
    t.append("user", text="另一条路")
    t.append("beat", outcome="stopped", draft="半截")
    t.set_leaf(keep)
    t.commit()
    return t


def test_lazy_open_equals_eager_open_field_by_field(tmp_path):
    t = _varied(tmp_path)
    lazy = SessionTree.open(t.path)
    eager = SessionTree.open(t.path, lazy=False)
    assert lazy.load_warnings == eager.load_warnings == []
    assert lazy.order == eager.order and lazy.leaf_id == eager.leaf_id
    assert lazy.children_of == eager.children_of
    kinds = {lazy.entries[i].type for i in lazy.order if is_lazy(lazy.entries[i])}
    assert kinds == {"beat", "rp-state"}
    assert eager.lazy_count() == 0
    for i in lazy.order:
        a, b = lazy.entries[i], eager.entries[i]
        assert isinstance(a, type(b))
        # the cheap fields answer without parsing
        assert (a.id, a.parent_id, a.ts, a.type) == (b.id, b.parent_id, b.ts, b.type)
        if a.type == "beat":
            assert a.outcome == b.outcome
        for extra in ("mvu", "lore_timed", "mvu_warnings", "no_such_key"):
            assert getattr(a, extra, "absent") == getattr(b, extra, "absent")
        assert a.model_dump() == b.model_dump()
        assert a.model_dump_json() == b.model_dump_json()
        assert session_mod._dump(a) == session_mod._dump(b)
        assert type(a) is type(b) and a == b and repr(a) == repr(b)
        assert a.model_fields_set == b.model_fields_set and a.model_extra == b.model_extra
    assert lazy.lazy_count() == 0
    assert [e.id for e in lazy.path_to()] == [e.id for e in eager.path_to()]


def test_lazy_entries_parse_on_first_use_only(tmp_path):
    t = _varied(tmp_path, 12)
    r = SessionTree.open(t.path)
    beats = [e for e in r.path_to() if e.type == "beat"]
    snaps = [e for e in r.path_to() if e.type == "rp-state"]
    n_lazy = sum(1 for e in r.entries.values() if e.type in ("beat", "rp-state"))
    assert r.lazy_count() == n_lazy > 0
    # what walks over a long branch reads stays cheap: type, ids, a beat's outcome, a snapshot's source, absent extras
    assert [b.outcome for b in beats] and [s.source for s in snaps]
    assert all(getattr(s, "panels", None) is None for s in snaps)
    assert not hasattr(beats[0], "__html__")
    assert r.lazy_count() == n_lazy
    # a snapshot is parsed to answer ``mvu`` only when its line has that key
    with_mvu = [s for s in snaps if getattr(s, "mvu", None) is not None]
    assert 0 < len(with_mvu) < len(snaps)
    assert r.lazy_count() == n_lazy - len(with_mvu)
    n_lazy -= len(with_mvu)
    # a field beyond them parses that entry only, in place: same object, now a plain BeatEntry
    b = beats[-1]
    assert b.calls and b.calls[0].tool_calls[0].name == "draft_write"
    assert type(b) is BeatEntry and isinstance(b, BeatEntry)
    assert r.entries[b.id] is b and r.path_to()[r.path_to().index(b)] is b
    assert r.lazy_count() == n_lazy - 1
    assert with_mvu[-1].mvu["stat_data"]["好感"] >= 0
    assert r.latest("rp-state").state["time"].startswith("第")


def test_lazy_entry_assignment_and_copies(tmp_path):
    import copy

    t = _varied(tmp_path, 6)
    r = SessionTree.open(t.path)
    b = r.latest("beat")
    assert is_lazy(b)
    c = copy.deepcopy(b)
    assert not is_lazy(b) and c == b and c is not b
    b2 = SessionTree.open(t.path).latest("beat")
    b2.draft = "改了"  # assignment parses first, then sets
    assert b2.draft == "改了" and b2.calls == b.calls and "draft" in b2.model_fields_set
    b3 = SessionTree.open(t.path).latest("beat")
    assert dict(b3)["outcome"] == b.outcome and b3.model_copy(update={"draft": "x"}).draft == "x"


def _beat_line(parent: str, **over) -> str:
    d = {"id": "beat01", "parent_id": parent, "ts": 5, "type": "beat", "calls": [], "outcome": "unsealed",
         "draft": "半截稿", "draft_version": 1}
    d.update(over)
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def test_corrupt_beat_lines_skipped_like_any_line(tmp_path):
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    good = _beat_line(ids["assistant"])
    bad = [good[: len(good) // 2],  # torn in the middle
           good.replace('"calls":[]', '"calls":[1,,]'),  # JSON broken past the cheap fields
           _beat_line(ids["assistant"], id=7),  # an id that is no string
           _beat_line(ids["assistant"], outcome=5),  # a cheap field of the wrong type
           _beat_line(ids["assistant"], ts="昨天"),
           _beat_line(ids["assistant"], id=ids["user"])]  # duplicate id
    lines[4:4] = bad
    t.path.write_text("\n".join(lines) + "\n", "utf-8")
    lazy = SessionTree.open(t.path)
    eager = SessionTree.open(t.path, lazy=False)
    assert len(lazy.load_warnings) == len(bad)
    assert lazy.load_warnings == eager.load_warnings
    assert any("第 5 行损坏" in w for w in lazy.load_warnings)
    assert any("id 重复" in w for w in lazy.load_warnings)
    assert lazy.order == eager.order == t.order


def test_torn_last_beat_line_and_orphan_under_a_corrupt_beat(tmp_path):
    t, ids = _basic(tmp_path)
    lines = _lines(t.path)
    beat = _beat_line(ids["assistant"])
    reply = json.dumps({"id": "rep01", "parent_id": "beat01", "ts": 6, "type": "assistant", "text": "后来的回应"},
                       ensure_ascii=False)
    beat2 = _beat_line("rep01", id="beat02")
    t.path.write_text("\n".join(lines + [beat[:-10], reply]) + "\n" + beat2[:-3], "utf-8")
    r = SessionTree.open(t.path)
    assert len(r.load_warnings) == 3  # the damaged beat, the torn last line, the orphan note
    assert any("最后一行" in w for w in r.load_warnings)
    assert "beat01" not in r.entries and "beat02" not in r.entries
    assert r.get("rep01").parent_id == ids["assistant"]  # re-hung under the line before it
    # a lazy beat that lost its parent keeps the new parent when it is finally parsed
    t2, ids2 = _basic(tmp_path / "b")
    lines = _lines(t2.path)
    user = json.dumps({"id": "u77", "parent_id": ids2["assistant"], "ts": 6, "type": "user", "text": "话"})
    t2.path.write_text("\n".join(lines + [user[:-5], _beat_line("u77")]) + "\n", "utf-8")
    r2 = SessionTree.open(t2.path)
    b = r2.get("beat01")
    assert is_lazy(b) and b.parent_id == ids2["assistant"]
    assert b.draft == "半截稿" and b.parent_id == ids2["assistant"] and not is_lazy(b)
    assert r2.children_of[ids2["assistant"]] == ["beat01"]


def test_beat_line_with_fields_that_do_not_fit_never_crashes_a_reader(tmp_path, caplog):
    """A beat line is checked for JSON syntax and its cheap fields at load; its other fields are validated when
    first read. A hand-edited line whose other fields do not fit loses just those (defaults), with a log line."""
    t, ids = _basic(tmp_path)
    line = _beat_line(ids["assistant"], calls="不是列表", draft_version="二", injection="【世界状态】", lore_timed={"a": 1})
    with open(t.path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
    r = SessionTree.open(t.path)
    assert r.load_warnings == [] and r.leaf_id == "beat01"
    b = r.get("beat01")
    assert b.outcome == "unsealed"
    with caplog.at_level("WARNING"):
        assert b.calls == [] and b.draft_version == 0
    assert b.draft == "半截稿" and b.injection == "【世界状态】" and b.lore_timed == {"a": 1}
    assert type(b) is BeatEntry and b.parent_id == ids["assistant"]
    assert any("beat" in m.lower() or "BeatEntry" in m for m in caplog.messages)


def test_lazy_tree_appends_and_commits_like_an_eager_one(tmp_path):
    t = _varied(tmp_path, 8)
    r = SessionTree.open(t.path)
    leaf = r.leaf_id
    u = r.append("user", text="新的一拍")
    b = r.append("beat", outcome="sealed", draft="稿")
    r.commit()
    assert [e.id for e in r.path_to()][-3:] == [leaf, u.id, b.id]
    r2 = SessionTree.open(t.path)
    assert r2.leaf_id == b.id and r2.get(b.id).draft == "稿" and r2.get(u.id).text == "新的一拍"


def test_read_header_reads_only_the_first_entry(tmp_path):
    t, ids = _basic(tmp_path)
    h = SessionTree.read_header(t.path)
    assert h == SessionTree.open(t.path).header and h.id == ids["header"]
    with open(t.path, "ab") as f:
        f.write(b'{"id":"torn","parent_id":null,"type":"us')  # the rest of the file does not matter
    assert SessionTree.read_header(t.path).id == ids["header"]
    for content in (b"", b"\n\n", b"not json\n", b'{"id":"u1","parent_id":null,"type":"user","text":"hi","ts":1}\n'):
        p = tmp_path / "bad.jsonl"
        p.write_bytes(content)
        with pytest.raises(SessionError):
            SessionTree.read_header(p)
    with pytest.raises(SessionError):
        SessionTree.read_header(tmp_path / "missing.jsonl")


def test_lazy_entry_pickles_as_the_plain_entry(tmp_path):
    import pickle

    t = _varied(tmp_path, 4)
    b = SessionTree.open(t.path).latest("beat")
    assert is_lazy(b)
    c = pickle.loads(pickle.dumps(b))
    assert type(c) is BeatEntry and c == b and c.calls == b.calls
