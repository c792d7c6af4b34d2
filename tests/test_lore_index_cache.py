"""Big world books (issue 15 item 10): the key index (Aho–Corasick over the literal keys) gives exactly the results of
looking at every entry, on randomised books; recursion passes scan only the added text; the parsed-book cache on
disk is used when the content is unchanged, missed when it changed, and rebuilt when damaged or of another version."""

from __future__ import annotations

import random

import pytest

from liyuan_desktop.core.lore import ActivationOptions, Lorebook, ScanMessage, activation, bookcache, lorebook
from liyuan_desktop.core.lore.compile import KeyIndex

WORDS = ["king", "King", "KING", "liking", "sword", "the blade", "Ash", "ash", "a", "x1", "日月", "手机", "青梧", "理",
         "iPhone", "长安城", "剑", "ash tree", "moon_gate", "雪", "Ré", "ÉCOLE", "école", "st", "星河"]
REGEX = ["/kin+g/i", "/^\\x01用户/", "/剑.{0,3}气/", "/(?<=a)sh/", "/[/", "/blade|moon/"]
MACRO = ["{{char}}", "<USER>", "{{user}}的剑"]


def _key(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return rng.choice(REGEX)
    if r < 0.12:
        return rng.choice(MACRO)
    if r < 0.14:
        return rng.choice(["", "  ", " king "])
    return rng.choice(WORDS)


def _text(rng: random.Random) -> str:
    parts = [rng.choice(WORDS + ["、", " ", "。", "xx", "Thing", "kinng", "剑之气", "{{char}}"]) for _ in range(rng.randint(0, 12))]
    return "".join(p if rng.random() < 0.5 else p + " " for p in parts)


def _book(rng: random.Random, n: int) -> Lorebook:
    entries = []
    for i in range(n):
        ext = {
            "position": rng.randint(0, 7), "selectiveLogic": rng.randint(0, 3),
            "group": rng.choice(["", "", "", "g1", "g2", "g1,g2"]),
            "probability": rng.choice([100, 100, 100, 50]), "useProbability": rng.random() < 0.8,
            "exclude_recursion": rng.random() < 0.1, "prevent_recursion": rng.random() < 0.1,
            "delay_until_recursion": rng.choice([0, 0, 0, 0, 1, 2]),
            "scan_depth": rng.choice([None, None, None, None, 0, 1, 3]),
            "case_sensitive": rng.choice([None, None, True, False]),
            "match_whole_words": rng.choice([None, None, True, False]),
            "match_scenario": rng.random() < 0.08, "sticky": rng.choice([0, 0, 0, 2]),
            "cooldown": rng.choice([0, 0, 0, 1]), "delay": rng.choice([0, 0, 0, 0, 3]),
            "group_override": rng.random() < 0.1, "ignore_budget": rng.random() < 0.1,
        }
        if rng.random() < 0.05:
            ext["characterFilter"] = {"names": ["青梧"], "isExclude": rng.random() < 0.5}
        content = _text(rng)
        if rng.random() < 0.05:
            content = rng.choice(["@@activate\n", "@@dont_activate\n"]) + content
        entries.append({
            "id": i, "keys": [_key(rng) for _ in range(rng.randint(0, 3))],
            "secondary_keys": [_key(rng) for _ in range(rng.randint(0, 2))],
            "content": content, "enabled": rng.random() < 0.9, "insertion_order": rng.randint(0, 5),
            "comment": f"e{i}", "selective": rng.random() < 0.6, "constant": rng.random() < 0.05,
            "extensions": ext,
        })
    book = Lorebook.from_card_book({"name": "rand", "entries": entries}, "rand")
    book.recursive = rng.random() < 0.8
    book.case_sensitive = rng.random() < 0.2
    book.match_whole_words = rng.random() < 0.7
    book.scan_depth = rng.randint(1, 4)
    book.use_group_scoring = rng.random() < 0.3
    book.min_activations = rng.choice([0, 0, 3])
    book.max_recursion_steps = rng.choice([0, 0, 2])
    return book


def _run(book: Lorebook, chat, seed: int, timed=None):
    res = book.activate_detailed(chat, ActivationOptions(timed=timed, rng=random.Random(seed), budget_tokens=random.Random(seed).choice([None, None, 40]),
                                 substitute=lambda t: t.replace("{{char}}", "青梧").replace("{{user}}", "你").replace("<USER>", "你"),
                                 character=random.Random(seed).choice([None, "青梧", "别人"]),
                                 inject=["作者注：king 与 剑"] if seed % 3 == 0 else (),
                                 global_scan={"scenario": "长安城 the blade"}))
    return ([id(e) for e in res.entries], [r.model_dump() for r in res.reasons], res.timed.model_dump(), res.steps,
            res.tokens, res.budget_overflowed, res.warnings), res


@pytest.mark.parametrize("seed", range(40))
def test_the_key_index_gives_the_results_of_looking_at_every_entry(seed, monkeypatch):
    rng = random.Random(seed)
    book = _book(rng, rng.randint(5, 120))
    chat = [ScanMessage(name=rng.choice(["用户", "青梧"]), text=_text(rng)) for _ in range(rng.randint(0, 6))]
    timed = None
    for beat in range(3):  # sticky/cooldown carried between beats
        chat = chat + [ScanMessage(name="用户", text=_text(rng))]
        monkeypatch.setattr(activation, "_USE_INDEX", True)
        fast, res = _run(book, chat, seed * 10 + beat, timed)
        monkeypatch.setattr(activation, "_USE_INDEX", False)
        ref, _ = _run(book, chat, seed * 10 + beat, timed)
        assert fast == ref
        timed = res.timed
    assert book._compile().index is not None


def test_the_index_looks_at_few_entries_of_a_big_book(monkeypatch):
    entries = [{"id": i, "keys": [f"name{i}", f"名{i}号"], "content": "c", "enabled": True, "comment": f"t{i}"}
               for i in range(20_000)]
    book = Lorebook.from_card_book({"entries": entries}, "big")
    built = []
    real = book._compile().rec.__func__

    def counting(self, p):
        built.append(p)
        return real(self, p)

    monkeypatch.setattr(type(book._compile()), "rec", counting)
    res = book.activate_detailed(["用户: 我找 name77 和 名19999号，还有 name7"], ActivationOptions(dry_run=True))
    assert sorted(e.uid for e in res.entries) == [7, 77, 19999]
    assert len(set(built)) == 3  # not 20,000


def test_recursion_passes_scan_only_the_added_text(monkeypatch):
    n = 300
    entries = [{"id": i, "keys": [f"k{i:03d}x"], "content": f"提到 k{i + 1:03d}x。" + "长" * 200, "enabled": True,
                "comment": f"t{i}"} for i in range(n)]
    book = Lorebook.from_card_book({"entries": entries}, "chain")
    book.recursive = True
    scanned = []
    real = KeyIndex.scan

    def spy(self, hay, low_from=0, raw_from=0):
        scanned.append(len(hay.low) - max(0, low_from - self.maxlen + 1))
        return real(self, hay, low_from, raw_from)

    monkeypatch.setattr(KeyIndex, "scan", spy)
    res = book.activate_detailed(["用户: 从 k000x 说起"], ActivationOptions(dry_run=True))
    assert len(res.entries) == n and res.steps == n + 1
    # each pass scans about one entry's content (~210 characters), not the whole growing buffer (~63,000 at the end)
    assert max(scanned[1:]) < 300, scanned[-3:]
    monkeypatch.setattr(activation, "_USE_INDEX", False)
    ref = book.activate_detailed(["用户: 从 k000x 说起"], ActivationOptions(dry_run=True))
    assert [id(e) for e in ref.entries] == [id(e) for e in res.entries]


def test_fixed_constants_need_no_scan(monkeypatch):
    rng = random.Random(5)
    for seed in range(20):
        rng = random.Random(seed)
        book = _book(rng, 60)
        for e in book.entries[::3]:
            e.constant = True
        expected = _fixed_by_activation(book, "青梧")
        calls = []
        monkeypatch.setattr(activation, "_candidates", lambda *a: calls.append(1) or [])
        assert [id(e) for e in book.fixed_constants("青梧")] == [id(e) for e in expected]
        assert not calls
        monkeypatch.undo()


def _fixed_by_activation(book: Lorebook, character: str):
    """The previous definition: the constants that qualify, in the order a full dry-run activation places them."""
    out = []
    comp = book._compile()
    for r in comp.active:
        if not r.constant or r.deco_dont or r.dur or r.delay or r.cooldown or r.groups:
            continue
        if r.use_prob and r.probability != 100:
            continue
        if r.char_names:
            inc = character in r.char_names or f"{character}.png" in r.char_names
            if inc if r.char_exclude else not inc:
                continue
        out.append(r.entry)
    ids = {id(e) for e in out}
    res = book.activate_detailed([], ActivationOptions(dry_run=True, character=character, rng=lambda: 0.0))
    placed = [e for e in res.entries if id(e) in ids]
    return placed + [e for e in out if id(e) not in {id(p) for p in placed}]


# -- the parsed-book cache ----------------------------------------------------------------------------------------

def _raw_book(n: int, tag: str = "") -> dict:
    return {"name": "缓存书", "scan_depth": 3, "extensions": {"x": 1}, "entries": [
        {"id": i, "keys": [f"键{i}{tag}", f"key{i}"], "secondary_keys": ["副"] if i % 5 == 0 else [],
         "content": f"内容{i}", "enabled": i % 7 != 0, "insertion_order": i % 9, "comment": f"标题{i}",
         "extensions": {"position": i % 5, "probability": 100, "useProbability": True, "unknown_ext": [i]},
         "extra_field": {"kept": i}} for i in range(n)] + ["not an entry"]}


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(lorebook, "_MEMO_MIN_ENTRIES", 5)
    monkeypatch.setattr(bookcache, "DISK_MIN_ENTRIES", 5)
    monkeypatch.setattr(bookcache, "DISK_MIN_NEEDLES", 5)
    lorebook._PARSED_MEMO.clear()
    bookcache._AC_MEMO.clear()
    yield
    lorebook._PARSED_MEMO.clear()
    bookcache._AC_MEMO.clear()


def _parses(monkeypatch) -> list:
    calls: list = []
    real = lorebook.parse_card_entry
    monkeypatch.setattr(lorebook, "parse_card_entry", lambda e, uid: (calls.append(uid), real(e, uid))[1])
    return calls


def _same(a: Lorebook, b: Lorebook) -> None:
    assert a.model_dump() == b.model_dump()
    assert a.to_card_book() == b.to_card_book()
    assert a.to_world_info() == b.to_world_info()
    assert a.warnings == b.warnings
    assert [e._parsed for e in a.entries] == [e._parsed for e in b.entries]


def test_cache_hit_miss_and_equal_books(small_threshold, monkeypatch):
    raw = _raw_book(40)
    calls = _parses(monkeypatch)
    first = Lorebook.from_card_book(raw, "缓存书")
    assert len(calls) == 40 and len(list(bookcache.folder().glob("book-*.bin"))) == 1
    lorebook._PARSED_MEMO.clear()  # a new process: only the disk cache is left
    calls.clear()
    before = dict(bookcache.STATS)
    second = Lorebook.from_card_book(raw, "缓存书")
    assert calls == [] and bookcache.STATS.get("disk_hit", 0) == before.get("disk_hit", 0) + 1
    _same(first, second)
    # edits stay in their copy
    second.entries[1].content = "改了"
    second.entries[2].keys = ["新"]
    third = Lorebook.from_card_book(raw, "缓存书")
    assert third.entries[1].content == "内容1" and third.entries[2].keys == ["键2", "key2"]
    assert second.to_card_book()["entries"][1]["content"] == "改了"
    assert third.to_card_book() == raw | {"entries": third.to_card_book()["entries"]}
    # changed content: a miss, parsed again
    calls.clear()
    changed = _raw_book(40, tag="b")
    Lorebook.from_card_book(changed, "缓存书")
    assert len(calls) == 40 and len(list(bookcache.folder().glob("book-*.bin"))) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "old_magic", "garbage"])
def test_damaged_cache_is_ignored_and_rebuilt(small_threshold, monkeypatch, damage):
    raw = _raw_book(30)
    calls = _parses(monkeypatch)
    first = Lorebook.from_card_book(raw, "缓存书")
    (path,) = bookcache.folder().glob("book-*.bin")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
    elif damage == "old_magic":
        path.write_bytes(b"LYLORE0\n" + data[8:])
    else:
        path.write_bytes(b"\x00" * 7)
    lorebook._PARSED_MEMO.clear()
    calls.clear()
    bad = bookcache.STATS.get("disk_bad", 0)
    again = Lorebook.from_card_book(raw, "缓存书")
    assert len(calls) == 30 and bookcache.STATS.get("disk_bad", 0) == bad + 1
    _same(first, again)
    # rebuilt: the next open reads it
    lorebook._PARSED_MEMO.clear()
    calls.clear()
    _same(first, Lorebook.from_card_book(raw, "缓存书"))
    assert calls == []


def test_world_info_books_are_cached_too(small_threshold, monkeypatch):
    wi = {"entries": {str(i): {"uid": i, "key": [f"键{i}"], "content": f"c{i}", "comment": f"t{i}", "order": i}
                      for i in range(20)}, "name": "wi"}
    first = Lorebook.from_world_info(wi, "wi")
    lorebook._PARSED_MEMO.clear()
    hits = bookcache.STATS.get("disk_hit", 0)
    second = Lorebook.from_world_info(wi, "wi")
    assert bookcache.STATS.get("disk_hit", 0) == hits + 1
    _same(first, second)


def test_damaged_automaton_cache_is_rebuilt(small_threshold):
    raw = _raw_book(30)
    book = Lorebook.from_card_book(raw, "缓存书")
    hits = [e.uid for e in book.activate(["用户: key3 和 键12"])]
    (ac,) = bookcache.folder().glob("ac-*.bin")
    ac.write_bytes(ac.read_bytes()[:-50] + b"\x01" * 50)
    bookcache._AC_MEMO.clear()
    bad = bookcache.STATS.get("disk_bad", 0)
    fresh = Lorebook.from_card_book(raw, "缓存书")
    assert [e.uid for e in fresh.activate(["用户: key3 和 键12"])] == hits == [3, 12]
    assert bookcache.STATS.get("disk_bad", 0) == bad + 1
    bookcache._AC_MEMO.clear()
    built = bookcache.STATS.get("ac_built", 0)
    assert [e.uid for e in Lorebook.from_card_book(raw, "缓存书").activate(["用户: key3"])] == [3]
    assert bookcache.STATS.get("ac_built", 0) == built  # read from the rewritten file


def test_a_key_straddling_two_recursion_steps_is_found(monkeypatch):
    book = Lorebook.from_card_book({"entries": [
        {"id": 1, "keys": ["甲"], "content": "提到丙 末尾", "enabled": True, "constant": True, "comment": "A"},
        {"id": 2, "keys": ["丙"], "content": "开头 内容", "enabled": True, "comment": "C"},
        {"id": 3, "keys": ["末尾\n\x01开头"], "content": "跨界", "enabled": True, "comment": "B"},
    ]}, "seam")
    book.recursive = True
    res = book.activate_detailed(["用户: 你好"], ActivationOptions(dry_run=True))
    assert {"B", "C"} <= {e.title for e in res.entries}
    monkeypatch.setattr(activation, "_USE_INDEX", False)
    ref = book.activate_detailed(["用户: 你好"], ActivationOptions(dry_run=True))
    assert [id(e) for e in ref.entries] == [id(e) for e in res.entries]


def test_the_cache_key_is_the_same_in_every_process():
    """A new process must find the files the last one wrote: the parser fingerprint once hashed marshalled code and
    set reprs, which change with the string hash seed (every start parsed again and wrote another file)."""
    import os
    import subprocess
    import sys

    code = ("from liyuan_desktop.core.lore import bookcache; "
            "print(bookcache.book_key('card', {'entries': [{'id': 1, 'keys': ['甲']}]}, '书', 'card'))")
    keys = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        keys.add(out.stdout.strip())
    assert len(keys) == 1
    assert keys == {bookcache.book_key("card", {"entries": [{"id": 1, "keys": ["甲"]}]}, "书", "card")}


def test_the_cache_folder_stays_under_its_size_least_recently_used_first(small_threshold, monkeypatch):
    """Every changed book writes a new file: without a bound the folder grows by ~24 MB per edit of a 50,000-entry
    card. After each write the least recently used files go; a hit counts as a use."""
    import os
    import time

    books = [_raw_book(40, tag=t) for t in "abc"]
    for i, raw in enumerate(books):
        Lorebook.from_card_book(raw, f"书{i}")
    files = sorted(bookcache.folder().glob("book-*.bin"))
    assert len(files) == 3
    size = files[0].stat().st_size
    old = time.time() - 100
    for k, f in enumerate(files):
        os.utime(f, (old + k, old + k))
    lorebook._PARSED_MEMO.clear()
    Lorebook.from_card_book(books[0], "书0")  # a disk hit: book a is now the most recently used
    monkeypatch.setattr(bookcache, "MAX_BYTES", int(size * 2.5))
    Lorebook.from_card_book(_raw_book(40, tag="d"), "书3")  # a write: the folder is pruned to 2 files
    left = list(bookcache.folder().glob("book-*.bin"))
    assert len(left) == 2
    lorebook._PARSED_MEMO.clear()
    calls = _parses(monkeypatch)
    Lorebook.from_card_book(books[0], "书0")
    assert calls == []  # the recently used book survived the pruning


def test_warm_up_does_the_first_activations_work_ahead(monkeypatch):
    """``Lorebook.warm_up`` (called by ``Chat.warm_up`` on the window's open worker) compiles the book, builds its key
    index and prepares the entries, so the first beat builds none of them on the UI thread."""
    from liyuan_desktop.core.lore import compile as lore_compile

    entries = [{"id": i, "keys": [f"name{i}"], "content": "c", "enabled": True, "comment": f"t{i}"} for i in range(3000)]
    book = Lorebook.from_card_book({"entries": entries}, "big")
    book.warm_up()
    built = []
    monkeypatch.setattr(lore_compile, "_index_of", lambda c: built.append("index"))
    monkeypatch.setattr(lore_compile, "_make_rec", lambda c, p: built.append(p))
    monkeypatch.setattr(lore_compile, "_compile_book", lambda lb, sig: built.append("compile"))
    res = book.activate_detailed(["用户: 我找 name77"], ActivationOptions(dry_run=True))
    assert [e.uid for e in res.entries] == [77] and built == []


def test_chat_warm_up_prepares_the_merged_book(tmp_path, monkeypatch):
    import json as _json

    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    entries = [{"id": i, "keys": [f"name{i}"], "content": "c", "enabled": True, "comment": f"t{i}"} for i in range(50)]
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "书", "first_mes": "你好。", "character_book": {"entries": entries}}}
    (tmp_path / "card.json").write_text(_json.dumps(raw, ensure_ascii=False), "utf-8")
    chat = Chat.create(tmp_path / "c", card_from_json(raw, str(tmp_path / "card.json")), ReplayModel(actor=[]))
    calls = []
    monkeypatch.setattr(type(chat.book), "warm_up", lambda self: calls.append(len(self.entries)))
    chat.warm_up()
    assert calls == [50]
