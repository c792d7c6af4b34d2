"""Big world-info files (issue 29 §8): a 50,000-entry SillyTavern World Info file took 2.8 s to open warm, most of it
decoding its 98 MB of JSON. ``Lorebook.from_file`` keys the parsed rows by the SHA-256 of the file's bytes and, when
they are cached, builds the book without decoding the file; the entries' raw JSON (for export) is decoded only when
export asks. The cache is a cache: an edited file is never served stale, a deleted or damaged cache only costs time."""

from __future__ import annotations

import json
import os

import pytest

from liyuan_desktop.core.lore import Lorebook, bookcache, lorebook
from liyuan_desktop.core.lore.books import chat_card_book, load_books

N = 12


def _wi(n: int = N, tag: str = "") -> dict:
    """A World Info file: entries keyed by uid (one hand-made key that differs from its uid), unknown fields kept."""
    entries = {}
    for i in range(n):
        entries["x7" if i == 3 else str(i)] = {
            "uid": i, "key": [f"键{i}{tag}", f"key{i}"], "keysecondary": ["副"] if i % 5 == 0 else [],
            "comment": f"标题{i}", "content": f"内容{i}{tag}", "constant": i == 0, "selective": True,
            "order": i % 9, "position": i % 5, "disable": i % 7 == 6, "probability": 100, "useProbability": True,
            "unknownField": {"kept": [i]}, "extensions": {"their_ext": i},
        }
    return {"entries": entries, "originalData": {"name": "原卡"}, "name": "文件书"}


@pytest.fixture
def small(monkeypatch):
    """Cache thresholds lowered so a dozen entries count as a big book."""
    monkeypatch.setattr(lorebook, "_MEMO_MIN_ENTRIES", 5)
    monkeypatch.setattr(bookcache, "DISK_MIN_ENTRIES", 5)
    monkeypatch.setattr(bookcache, "FILE_MIN_BYTES", 0, raising=False)
    lorebook._PARSED_MEMO.clear()
    yield
    lorebook._PARSED_MEMO.clear()


@pytest.fixture
def decodes(monkeypatch):
    """Every JSON document decoded by ``json.loads`` (the real decoder, counted)."""
    seen: list = []
    real = json.loads

    def counting(s, *a, **k):
        seen.append(len(s))
        return real(s, *a, **k)

    monkeypatch.setattr(json, "loads", counting)
    return seen


def _write(path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")


def _new_process() -> None:
    lorebook._PARSED_MEMO.clear()  # only the disk cache is left


def test_warm_open_of_a_big_file_decodes_no_json(tmp_path, small, decodes):
    folder = tmp_path / "世界书"
    _write(folder / "大书.json", _wi())
    cold = load_books(folder, "global")[0]
    assert len(decodes) == 1 and len(list(bookcache.folder().glob("book-*.bin"))) == 1
    _new_process()
    decodes.clear()
    before = dict(bookcache.STATS)
    warm = load_books(folder, "global")[0]
    assert decodes == []  # before issue 29 §8 the 98 MB file was decoded on every open
    assert bookcache.STATS.get("disk_hit", 0) == before.get("disk_hit", 0) + 1
    assert warm.model_dump() == cold.model_dump()
    # JavaScript key order, as parsed: index-like keys ascending, then "x7" (uid 3)
    assert [e.uid for e in warm.entries] == [i for i in range(N) if i != 3] + [3]
    assert warm.activate(["用户: key4"])[0].uid == 4
    # export asks for the raw JSON: the file is decoded then, once for the whole book
    assert warm.to_world_info() == cold.to_world_info() == _wi()
    assert len(decodes) == 1
    from liyuan_desktop.core.lore.formats import entry_parsed

    assert [entry_parsed(e) for e in warm.entries] == [e._parsed for e in cold.entries]
    assert warm.to_card_book() == cold.to_card_book()


def test_edits_of_a_warm_book_export_only_what_changed(tmp_path, small):
    path = tmp_path / "书.json"
    _write(path, _wi())
    Lorebook.from_file(path, "书")
    _new_process()
    book = Lorebook.from_file(path, "书")
    by_uid = {e.uid: e for e in book.entries}
    by_uid[3].content = "改了"
    by_uid[4].keys = ["新键"]
    out = book.to_world_info()
    want = _wi()
    want["entries"]["x7"]["content"] = "改了"
    want["entries"]["4"]["key"] = ["新键"]
    assert out == want
    assert {e.uid: e.content for e in Lorebook.from_file(path, "书").entries}[3] == "内容3"  # edits stay in their copy


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_an_edited_file_is_never_served_stale(tmp_path, small, keep_mtime):
    path = tmp_path / "书.json"
    _write(path, _wi(tag="甲"))
    assert Lorebook.from_file(path, "书").entries[2].content == "内容2甲"
    _new_process()
    st = path.stat()
    _write(path, _wi(tag="乙"))  # same size (one CJK character for another), new content
    assert path.stat().st_size == st.st_size
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    book = Lorebook.from_file(path, "书")
    assert book.entries[2].content == "内容2乙" and book.entries[2].keys[0] == "键2乙"
    assert book.to_world_info() == _wi(tag="乙")


def test_deleted_cache_changes_nothing_but_time(tmp_path, small):
    path = tmp_path / "书.json"
    _write(path, _wi())
    first = Lorebook.from_file(path, "书")
    _new_process()
    for f in bookcache.folder().iterdir():
        f.unlink()
    second = Lorebook.from_file(path, "书")
    assert second.model_dump() == first.model_dump() and second.to_world_info() == _wi()
    # the cache goes after the book was opened from it: export reads the file itself
    _new_process()
    third = Lorebook.from_file(path, "书")
    for f in bookcache.folder().iterdir():
        f.unlink()
    assert third.to_world_info() == _wi()


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_damaged_cache_is_rebuilt_with_no_error(tmp_path, small, caplog, damage):
    path = tmp_path / "书.json"
    _write(path, _wi())
    first = Lorebook.from_file(path, "书")
    _new_process()
    (cache,) = bookcache.folder().glob("book-*.bin")
    data = cache.read_bytes()
    cache.write_bytes({"truncate": data[: len(data) // 2],
                       "flip": data[:-10] + bytes(b ^ 0xFF for b in data[-10:]),
                       "garbage": b"\x00" * 64}[damage])
    before = dict(bookcache.STATS)
    again = Lorebook.from_file(path, "书")
    assert bookcache.STATS.get("disk_bad", 0) == before.get("disk_bad", 0) + 1
    assert again.model_dump() == first.model_dump() and again.to_world_info() == _wi()
    _new_process()
    hit = dict(bookcache.STATS)
    Lorebook.from_file(path, "书")  # rebuilt: the next open is a hit again
    assert bookcache.STATS.get("disk_hit", 0) == hit.get("disk_hit", 0) + 1


def test_file_changed_after_a_warm_open_is_not_mixed_into_the_export(tmp_path, small):
    path = tmp_path / "书.json"
    _write(path, _wi(tag="甲"))
    Lorebook.from_file(path, "书")
    _new_process()
    book = Lorebook.from_file(path, "书")
    _write(path, _wi(tag="乙"))  # another program rewrites the file while the book is open
    out = book.to_world_info()
    assert sorted(e["content"] for e in out["entries"].values()) == sorted(f"内容{i}甲" for i in range(N))
    assert "乙" not in json.dumps(out, ensure_ascii=False)


def test_card_shaped_and_v3_files_and_the_chat_copy(tmp_path, small):
    card = {"name": "卡书", "entries": [{"id": i, "keys": [f"k{i}"], "content": f"c{i}", "enabled": True,
                                         "insertion_order": i, "extensions": {"position": 4, "mine": i}}
                                        for i in range(N)]}
    v3 = {"spec": "lorebook_v3", "data": _wi() | {"name": "三版"}}
    for name, obj in (("卡", card), ("三", v3)):
        path = tmp_path / f"{name}.json"
        _write(path, obj)
        cold = Lorebook.from_any(json.loads(path.read_text("utf-8")), name)
        Lorebook.from_file(path, name)
        _new_process()
        warm = Lorebook.from_file(path, name)
        assert warm.model_dump() == cold.model_dump()
        assert warm.to_card_book() == cold.to_card_book() and warm.to_world_info() == cold.to_world_info()
    _write(tmp_path / "角色卡世界书.json", _wi())
    chat_card_book(tmp_path)
    _new_process()
    copy = chat_card_book(tmp_path)
    assert copy is not None and copy.source == "card" and copy.to_world_info() == _wi()


def test_small_and_broken_files_read_as_before(tmp_path, caplog):
    folder = tmp_path / "世界书"
    _write(folder / "a.json", _wi(3))
    (folder / "b.json").write_text("{not json", "utf-8")
    (folder / "c.json").write_bytes(b"\xff\xfe{}")
    books = load_books(folder, "chat")
    assert [b.name for b in books] == ["a"] and books[0].to_world_info() == _wi(3)


def test_entries_are_independent_of_their_json_and_of_the_values_as_read(tmp_path):
    obj = _wi(3)
    obj["entries"]["1"]["extensions"] = {"deep": {"n": 1}}
    obj["entries"]["1"]["characterFilter"] = {"names": ["甲"], "isExclude": False}
    path = tmp_path / "书.json"
    _write(path, obj)
    book = Lorebook.from_file(path, "书")
    e = {x.uid: x for x in book.entries}[1]
    e.extensions["deep"]["n"] = 2  # edited in place, nested
    e.character_filter["names"].append("乙")
    e.keys.append("加")  # in place: not noticed by the matchers, but export sees it
    out = book.to_world_info()["entries"]["1"]
    assert out["extensions"] == {"deep": {"n": 2}} and out["characterFilter"]["names"] == ["甲", "乙"]
    assert out["key"] == ["键1", "key1", "加"]
    assert book._raw["entries"]["1"]["extensions"] == {"deep": {"n": 1}}  # the JSON as read is untouched
    assert book._raw["entries"]["1"]["key"] == ["键1", "key1"]
