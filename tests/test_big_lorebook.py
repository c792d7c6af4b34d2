"""A very big lorebook (issue 15 item 10): the 【设定集索引】 stays bounded (the seed's exact text below the bound),
and a big card book is parsed once per content however often the chat asks for it."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.lore import Lorebook
from liyuan_desktop.core.lore import formats as lore_formats
from liyuan_desktop.core.lore.search import INDEX_MAX_CHARS, INDEX_MAX_TITLES, bounded_index
from liyuan_desktop.core.prompt.assemble import build_injection

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import lorebook as bench_book  # noqa: E402


def _titles(n: int) -> list[str]:
    return [f"条目{i}" for i in range(n)]


def _index_block(injection: str) -> str:
    return next(b for b in injection.split("\n\n") if b.startswith("【设定集索引】"))


def test_small_index_keeps_the_seed_text():
    titles = _titles(5)
    block = _index_block(build_injection(WorldState(), ["条目3"], titles))
    assert block == "【设定集索引】共 5 条：条目0、条目1、条目2、条目3、条目4"


def test_index_of_50000_titles_is_bounded_and_puts_hits_first():
    titles = _titles(50_000)
    hits = ["条目49999", "条目777"]
    block = _index_block(build_injection(WorldState(), hits, titles))
    assert len(block) < INDEX_MAX_CHARS + 300  # was 389,015 characters for the book
    assert "共 50000 条" in block and "lorebook_search" in block and "lorebook_list" in block
    listed = block.split("：", 1)[1].split("\n", 1)[0].split("、")
    assert listed[:2] == hits and len(listed) <= INDEX_MAX_TITLES
    assert f"另有 {50_000 - len(listed)} 条" in block


def test_bounded_index_at_the_bound():
    t = _titles(INDEX_MAX_TITLES)
    assert bounded_index(t) == (t, 0) or sum(map(len, t)) + len(t) - 1 > INDEX_MAX_CHARS
    long = ["长" * 50 for _ in range(100)]  # 100 titles but 5,099 characters: over the character bound
    shown, more = bounded_index(long)
    assert more > 0 and len("、".join(shown)) <= INDEX_MAX_CHARS


def test_a_big_card_book_is_parsed_once_per_content(monkeypatch):
    captured = {}
    orig = Lorebook.from_card_book

    def grab(book, name="", source="card"):
        captured["raw"] = book
        return orig(book, name, source)

    monkeypatch.setattr(Lorebook, "from_card_book", staticmethod(grab))
    bench_book.build_book(3000, random.Random(3))
    monkeypatch.setattr(Lorebook, "from_card_book", orig)
    raw = captured["raw"]
    calls = []
    real = lore_formats.parse_card_entry
    monkeypatch.setattr("liyuan_desktop.core.lore.lorebook.parse_card_entry",
                        lambda e, uid: (calls.append(uid), real(e, uid))[1])
    books = [Lorebook.from_card_book(raw, "big") for _ in range(4)]
    assert len(calls) == 3000  # parsed once, not four times
    assert books[0].index_titles() == books[3].index_titles()
    books[0].entries[0].content = "改过"  # copies are independent: an edit to one never reaches the others
    assert books[1].entries[0].content != "改过"
    assert Lorebook.from_card_book(raw, "big").entries[0].content != "改过"


def test_lorebook_list_of_a_huge_book_is_capped_with_a_note():
    from types import SimpleNamespace

    from liyuan_desktop.core.beat.tools import roleplay

    small = Lorebook.from_card_book({"entries": [{"id": i, "keys": [f"k{i}"], "content": "c", "enabled": True,
                                                  "comment": f"t{i}"} for i in range(3)]})
    assert roleplay._lorebook_list(SimpleNamespace(book=small, language="zh"), None) == ["t0", "t1", "t2"]
    n = roleplay.LIST_MAX_TITLES + 500
    big = Lorebook.from_card_book({"entries": [{"id": i, "keys": [f"k{i}"], "content": "c", "enabled": True,
                                                "comment": f"t{i}"} for i in range(n)]})
    out = roleplay._lorebook_list(SimpleNamespace(book=big, language="zh"), None)
    assert out["total"] == n and len(out["titles"]) == roleplay.LIST_MAX_TITLES and "lorebook_search" in out["note"]


def test_a_50000_entry_book_opens_from_the_cache_without_parsing(monkeypatch):
    """Opening a chat again with an unchanged 50,000-entry book reads the cached parse (a new process: the memory memo
    is empty, the disk cache under the data folder is not) — counted in parses, not timed."""
    from liyuan_desktop.core.lore import bookcache, lorebook, merge_books

    raw = {"name": "大书", "entries": [
        {"id": i, "keys": [f"名{i}", f"name{i}"], "content": f"第{i}条", "enabled": True, "comment": f"条目{i}",
         "constant": i % 5000 == 0, "insertion_order": i % 100, "extensions": {"position": i % 5}}
        for i in range(50_000)]}
    lorebook._PARSED_MEMO.clear()
    calls = []
    real = lore_formats.parse_card_entry
    monkeypatch.setattr("liyuan_desktop.core.lore.lorebook.parse_card_entry",
                        lambda e, uid: (calls.append(uid), real(e, uid))[1])
    first = merge_books([Lorebook.from_card_book(raw, "大书")])
    fixed = [e.uid for e in first.fixed_constants("大书")]
    assert len(calls) == 50_000
    lorebook._PARSED_MEMO.clear()
    bookcache._AC_MEMO.clear()
    calls.clear()
    card = Lorebook.from_card_book(raw, "大书")
    Lorebook.from_card_book(raw, "大书")  # asked for again, as a chat open does (the MVU [InitVar] reader)
    again = merge_books([card])
    assert calls == []  # not one entry parsed
    assert [e.uid for e in again.fixed_constants("大书")] == fixed and sorted(fixed) == list(range(0, 50_000, 5000))
    assert [e.uid for e in again.activate(["用户: 说到 name49999 与 名7"])] == [7, 49999]
    lorebook._PARSED_MEMO.clear()


def _initvar_card(tmp_path, n: int):
    """A card whose 1,000+-entry book (cached path) has an [InitVar] entry, as a chat opens it."""
    import json

    from liyuan_desktop.core.cards import card_from_json

    entries = [{"id": i, "keys": [f"名{i}"], "content": f"第{i}条", "enabled": True, "comment": f"条目{i}",
                "insertion_order": i % 50, "constant": i % 400 == 0} for i in range(n)]
    entries.append({"id": n, "keys": [], "content": '{"好感": 1}', "enabled": False, "comment": "[InitVar] 初始"})
    data = {"name": "大书卡", "first_mes": "你好。", "description": "d", "character_book": {"entries": entries}}
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    d = tmp_path / "card"
    d.mkdir()
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json"))


def test_opening_a_chat_builds_the_big_card_book_once_and_initvar_reuses_it(tmp_path):
    """Issue 15 item 10 (second round): a chat open builds the card's book objects once — the MVU [InitVar] reader
    works on the book already built — and the full compile waits for the first activation (counted, not timed)."""
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.lore import bookcache, lorebook

    card = _initvar_card(tmp_path, 1500)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    lorebook._PARSED_MEMO.clear()
    bookcache.STATS.clear()
    compiled = []
    real = lorebook.compile_book
    lorebook.compile_book = lambda lb, sig: (compiled.append(len(lb.entries)), real(lb, sig))[1]
    try:
        Chat.open(chat.dir, card, ReplayModel(actor=[], scribe=[]))
    finally:
        lorebook.compile_book = real
    assert bookcache.STATS.get("built") == 1, bookcache.STATS  # not twice (the [InitVar] reader reuses it)
    assert bookcache.STATS.get("parsed", 0) == 0 and bookcache.STATS.get("disk_hit") == 1
    assert compiled == []  # the constants are placed without compiling 1,500 entries
    lorebook._PARSED_MEMO.clear()


def test_constants_without_compiling_match_the_compiled_ones():
    from liyuan_desktop.core.lore import merge_books
    from liyuan_desktop.core.lore.compile import constant_recs

    rng = random.Random(5)
    books = []
    for b, src in enumerate(("card", "chat", "global")):
        raw = {"name": f"书{b}", "entries": [
            {"id": rng.randint(0, 40), "keys": [f"k{i}"], "content": f"c{i}", "enabled": rng.random() < 0.8,
             "comment": f"t{b}-{i}", "constant": rng.random() < 0.4, "insertion_order": rng.randint(0, 4)}
            for i in range(60)]}
        books.append(Lorebook.from_card_book(raw, f"书{b}", source=src))
    book = merge_books(books)
    for strategy in (0, 1, 2):
        book.strategy = strategy
        book.invalidate()
        fast = [r.entry for r in constant_recs(book)]
        comp = book._compile()
        assert [id(e) for e in fast] == [id(comp.rec(p).entry) for p in comp.constants]
        before = [id(e) for e in book.fixed_constants("x")]
        book.invalidate()
        assert [id(e) for e in book.fixed_constants("x")] == before
