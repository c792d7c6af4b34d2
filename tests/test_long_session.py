"""Long sessions (issue 7): a 10,000-beat chat opens with its last page, older pages load lazily, and the next beat
parses no more of the file than a short chat's would. No timings here: bench/long_session.py prints them."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session import entries as session_mod
from liyuan_desktop.core.session.transcript import Transcript, TranscriptItems
from liyuan_desktop.core.session.tree import SessionTree, new_id

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


@pytest.fixture(scope="module")
def card():
    return load_card(CARD)


def _line(**d) -> str:
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def write_long_chat(directory: Path, card, n: int) -> Chat:
    """A chat with ``n`` past beats (user words, a beat log with two calls, the final, a ledger snapshot each),
    written line by line in the session format (fast enough for a test at 10,000 beats)."""
    chat = Chat.create(directory, card, ReplayModel(actor=[]))
    tree = chat.tree
    parent, ts = tree.leaf_id, tree.header.ts
    taken = set(tree.entries)
    out = []
    for i in range(n):
        u, b, a, s = (new_id(taken) for _ in range(4))
        taken.update((u, b, a, s))
        ts += 1000
        final = f"第 {i} 拍的回应：她抬眼看你。"
        out += [
            _line(id=u, parent_id=parent, ts=ts, type="user", text=f"第 {i} 拍：我推门进去。"),
            _line(id=b, parent_id=u, ts=ts + 1, type="beat", outcome="sealed", draft=final, draft_version=1,
                  injection="【世界状态】\n傍晚", activated=[], activity=["写稿"], warnings=[],
                  calls=[{"round": 1, "reasoning": "想。", "tool_calls": [
                      {"id": f"c{i}", "name": "draft_write", "arguments": json.dumps({"version": 0, "content": final}, ensure_ascii=False),
                       "result": {"ok": True, "version": 1}}]},
                         {"round": 2, "tool_calls": [{"name": "draft_seal", "arguments": "{\"version\":1}", "result": {"ok": True}}]}],
                  sent={"messages": [{"history": [0, 2 * i + 1]}], "tools": ["draft_write", "draft_seal"]},
                  lore_timed={"sticky": {}, "cooldown": {}}),
            _line(id=a, parent_id=b, ts=ts + 2, type="assistant", text=final, sealed=True, beat=b),
            _line(id=s, parent_id=a, ts=ts + 3, type="rp-state", state={"time": f"第 {i} 天"}, source="scribe",
                  applied=[f"time → 第 {i} 天"], warnings=[]),
        ]
        parent = s
    out.append(_line(id=new_id(taken), parent_id=None, ts=ts + 5, type="leaf", target=parent))
    with open(tree.path, "a", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return chat


def test_ten_thousand_beat_chat_opens_with_its_last_page(tmp_path, card):
    d = tmp_path / "长"
    write_long_chat(d, card, 10_000)
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    tree = chat.tree
    assert tree.load_warnings == []
    assert len(tree.order) == 2 + 4 * 10_000
    assert tree.lazy_count() == 20_000  # beats and snapshots kept as raw lines

    first, total, page = chat.transcript_page(None, 60)
    assert total == 1 + 2 * 10_000 and first == total - 60 and len(page) == 60
    assert page[-1]["role"] == "assistant" and page[-1]["text"] == "第 9999 拍的回应：她抬眼看你。"
    assert page[-1]["beat"] == 10_000
    assert tree.lazy_count() == 20_000  # the last screen parsed no beat log and no snapshot

    # older pages on demand, through the sequence the window keeps
    items = chat.transcript_items(60)
    assert isinstance(items, TranscriptItems) and len(items) == total
    assert items[-1] == page[-1] and items[total - 60:] == page
    older = items[total - 120:total - 60]
    assert [(it["role"], it["beat"]) for it in older[:2]] == [("user", 9_941), ("assistant", 9_941)]

    full = chat.transcript()
    assert full[-60:] == page
    assert older == full[total - 120:total - 60]
    assert items[:3] == full[:3] and items[0]["role"] == "opening"
    assert list(items) == full


def _lines_parsed_by_open_prepare_send(d: Path, card, n: int) -> tuple[Chat, int, int]:
    """A chat of ``n`` beats opened, its next beat assembled, then played: the session lines parsed (beyond the
    cheap fields read at load) by the assembly and by the beat."""
    write_long_chat(d, card, n)
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    # a model whose window holds the whole chat: this counts parsing, not compaction (tests/test_compaction.py)
    chat.context_window = 10**9
    at_open = chat.tree.lazy_count()
    chat.prepare("我看向窗外。")
    after_prepare = chat.tree.lazy_count()
    chat.model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "雨停了。"}}]},
                                    {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                             scribe=[json.dumps({"patch": {"time": "夜"}}, ensure_ascii=False)])
    res = asyncio.run(chat.send("我看向窗外。"))
    assert res.sealed and res.final == "雨停了。"
    assert chat.current_state().time == "夜"
    return chat, at_open - after_prepare, after_prepare - chat.tree.lazy_count()


def test_next_beat_after_ten_thousand_parses_what_it_would_after_a_hundred(tmp_path, card):
    """「sending the next beat costs no more than with 100 beats plus the assembly of what is actually sent」:
    counted in session lines parsed, the same at 100 and at 10,000 past beats."""
    _short, prep_100, send_100 = _lines_parsed_by_open_prepare_send(tmp_path / "短", card, 100)
    chat, prep_10k, send_10k = _lines_parsed_by_open_prepare_send(tmp_path / "长", card, 10_000)
    assert (prep_10k, send_10k) == (prep_100, send_100)
    assert prep_10k <= 2 and send_10k <= 20  # the newest beat log / snapshot; a few newest beats for the meter
    reopened = Chat.open(chat.dir, card, ReplayModel(actor=[]))
    assert reopened.transcript_page(None, 2)[2][-1]["text"] == "雨停了。"


def test_assembly_from_a_lazy_tree_equals_assembly_from_an_eager_one(tmp_path, card):
    d = tmp_path / "长"
    write_long_chat(d, card, 2_000)
    lazy_chat = Chat.open(d, card, ReplayModel(actor=[]))
    eager_chat = Chat(d, SessionTree.open(d / "session.jsonl", lazy=False), card, ReplayModel(actor=[]))
    a, b = lazy_chat.prepare("我看向窗外。"), eager_chat.prepare("我看向窗外。")
    assert [m.model_dump() for m in a[2]] == [m.model_dump() for m in b[2]]
    assert a[0] == b[0] and a[1] == b[1] and a[3] == b[3]


def _random_chat(d: Path, card, seed: int) -> tuple[Chat, list[str]]:
    """A chat whose branches hold every transcript rule: unfinished drafts (one replacing another), revisions of
    the previous reply, regenerated replies and edited user words (siblings), snapshots with variables, ledger
    edits after an unfinished beat, asks. Returns the chat and the leaves of its branches."""
    rnd = random.Random(seed)
    chat = Chat.create(d, card, ReplayModel(actor=[]))
    t = chat.tree
    leaves = []
    replies: list[str] = []
    for i in range(rnd.randint(30, 60)):
        if replies and rnd.random() < 0.1:  # another branch from an older reply
            t.set_leaf(rnd.choice(replies))
        u = t.append("user", text=f"话 {i}")
        kind = rnd.random()
        if kind < 0.25:
            for _ in range(rnd.randint(1, 3)):  # unfinished beats (continue / stop)
                t.append("beat", outcome=rnd.choice(["unsealed", "stopped", "error", "out_of_rounds"]), draft=f"稿 {i}",
                         error="断了" if rnd.random() < 0.5 else None)
            if rnd.random() < 0.5:
                t.append("rp-state", state={"time": f"t{i}"}, source="user",
                         **({"mvu": {"stat_data": {"v": i}}} if rnd.random() < 0.5 else {}))
        if kind >= 0.25 or rnd.random() < 0.4:
            b = t.append("beat", outcome="revised_previous" if (replies and rnd.random() < 0.15) else "sealed", draft="稿")
            if b.outcome == "revised_previous":
                t.append("revision", target=replies[-1], text=f"改 {i}", version=2)
            else:
                a = t.append("assistant", text=f"回 {i}", beat=b.id)
                replies.append(a.id)
                if rnd.random() < 0.2:  # a regenerate: a sibling reply under the same user entry
                    t.set_leaf(u.id)
                    b2 = t.append("beat", outcome="sealed", draft="稿二")
                    a2 = t.append("assistant", text=f"回 {i} 之二", beat=b2.id)
                    replies.append(a2.id)
                if rnd.random() < 0.2:
                    t.append("ask", question="哪边？", options=["东", "西"], answer="东")
            t.append("rp-state", state={"time": f"t{i}"}, source="scribe",
                     **({"mvu": {"stat_data": {"v": i}}} if rnd.random() < 0.6 else {}))
        if rnd.random() < 0.1:  # an edit of the user's words: a sibling user entry
            t.append("user", parent_id=u.parent_id, text=f"改口 {i}")
        leaves.append(t.leaf_id)
    t.commit()
    return chat, leaves


@pytest.mark.parametrize("seed", range(6))
def test_transcript_pages_equal_slices_of_the_full_transcript(tmp_path, card, seed):
    chat, leaves = _random_chat(tmp_path / f"c{seed}", card, seed)
    for reopen in (False, True):
        if reopen:
            chat = Chat.open(chat.dir, card, ReplayModel(actor=[]))
        for leaf in [chat.tree.leaf_id] + leaves[::7]:
            chat.tree.set_leaf(leaf)
            full = chat.transcript()
            for count in (1, 2, 3, 7, 60):
                for end in [None, *range(0, len(full) + 1)]:
                    first, total, page = chat.transcript_page(end, count)
                    stop = len(full) if end is None else end
                    assert total == len(full)
                    assert first == max(0, stop - count)
                    assert page == full[first:stop], (seed, leaf, count, end)
            items = chat.transcript_items(5)
            assert len(items) == len(full) and items[-1:] == full[-1:] and list(items) == full
            assert list(reversed(items)) == full[::-1]


def test_transcript_page_follows_new_beats_and_branch_switches(tmp_path, card):
    chat, leaves = _random_chat(tmp_path / "c", card, 11)
    t = chat.tree
    chat.transcript_page(None, 5)
    for i in range(5):  # the cached layout grows with the branch
        t.append("user", text=f"又一拍 {i}")
        if i % 2:
            t.append("beat", outcome="unsealed", draft="半截")
        else:
            b = t.append("beat", outcome="sealed", draft="稿")
            t.append("assistant", text=f"又 {i}", beat=b.id)
        assert chat.transcript_page(None, 5)[2] == chat.transcript()[-5:]
    t.set_leaf(leaves[3])  # a branch switch rebuilds it
    assert chat.transcript_page(None, 4)[2] == chat.transcript()[-4:]


def test_transcript_page_falls_back_to_the_full_transcript_when_the_layout_is_wrong(tmp_path, card, monkeypatch):
    chat, _ = _random_chat(tmp_path / "c", card, 3)
    full = chat.transcript()
    monkeypatch.setattr(Transcript, "layout", lambda self: (["nope"] * len(full), list(range(len(full)))))
    first, total, page = chat.transcript_page(None, 4)
    assert (first, total, page) == (len(full) - 4, len(full), full[-4:])


def test_current_mvu_follows_appends_and_branch_switches(tmp_path, card):
    chat, leaves = _random_chat(tmp_path / "c", card, 5)
    t = chat.tree

    def walked():  # the definition: the newest snapshot with variables on the branch, else the card's tree
        for e in reversed(t.path_to()):
            if e.type == "rp-state" and getattr(e, "mvu", None) is not None:
                return e.mvu["stat_data"]
        return chat.context.mvu_initial

    def got():
        m = chat.current_mvu()
        return None if m is None else m.stat_data

    for leaf in leaves[::5] + [leaves[-1]]:
        t.set_leaf(leaf)
        assert got() == walked()
        t.append("rp-state", state={}, source="user", mvu={"stat_data": {"新": leaf}})
        assert got() == {"新": leaf}
        t.append("user", text="再说")
        assert got() == {"新": leaf}


def test_lazy_beats_are_plain_entries_for_every_reader(tmp_path, card):
    """Readers never see the difference: pending drafts, beat numbers, the prompt inspector's fields."""
    chat, _ = _random_chat(tmp_path / "c", card, 2)
    t = chat.tree
    t.append("user", text="最后一拍")
    t.append("beat", outcome="stopped", draft="停在这里", draft_version=2,
             calls=[{"round": 1, "tool_calls": [{"name": "draft_write", "arguments": "{}", "result": {"ok": True}}]}])
    t.commit()
    lazy = Chat.open(chat.dir, card, ReplayModel(actor=[]))
    eager = Chat(chat.dir, SessionTree.open(chat.dir / "session.jsonl", lazy=False), card, ReplayModel(actor=[]))
    p = lazy.pending_draft()
    assert isinstance(p, session_mod.BeatEntry) and p.draft == "停在这里" and p.draft_version == 2
    assert p.model_dump() == eager.pending_draft().model_dump()
    assert p.calls[0].tool_calls[0].result == {"ok": True}
    assert lazy.transcript() == eager.transcript()


# -- the line index cache (issue 15 item 11) --------------------------------------------------------------------------
def _dumps(tree: SessionTree) -> list[str]:
    return [tree.entries[i].model_dump_json() for i in tree.order]


@pytest.fixture
def small_cache(monkeypatch):
    from liyuan_desktop.core.session import index_cache

    monkeypatch.setattr(index_cache, "MIN_BYTES", 1)  # small files indexed too (the real bound is a few MB)
    monkeypatch.setattr(index_cache, "CHUNK", 7)  # several row lines
    return index_cache


def test_index_cache_reopens_the_same_tree_without_parsing_a_line(tmp_path, card, small_cache):
    from liyuan_desktop.core.session.lazy import is_lazy

    d = tmp_path / "c"
    write_long_chat(d, card, 40)
    s = d / "session.jsonl"
    with open(s, "a", encoding="utf-8") as f:  # a damaged line: its warning must come back from the cache too
        f.write("{not json\n")
    full = SessionTree.open(s, lazy=False)
    first = SessionTree.open(s)  # writes the cache
    assert small_cache.cache_path(s).is_file()
    again = SessionTree.open(s)
    kinds = {again.entries[i].type for i in again.order}
    assert {"user", "assistant", "beat", "rp-state"} <= kinds
    assert all(is_lazy(again.entries[i]) for i in again.order[1:])  # every entry but the header still unparsed
    assert again.load_warnings == first.load_warnings == full.load_warnings and len(full.load_warnings) == 1
    assert again.leaf_id == full.leaf_id and again.order == full.order
    assert {k: list(v) for k, v in again.children_of.items()} == {k: list(v) for k, v in full.children_of.items()}
    assert _dumps(again) == _dumps(full)
    assert [e.id for e in again.path_to()] == [e.id for e in full.path_to()]


def test_index_cache_reads_only_lines_appended_since(tmp_path, card, small_cache):
    from liyuan_desktop.core.session.lazy import is_lazy

    d = tmp_path / "c"
    write_long_chat(d, card, 30)
    s = d / "session.jsonl"
    SessionTree.open(s)
    tree = SessionTree.open(s)
    u = tree.append("user", text="新的一句")
    a = tree.append("assistant", text="新的回应", sealed=True)
    tree.commit()
    again = SessionTree.open(s)
    assert again.leaf_id == a.id and again.get(a.id).text == "新的回应"
    assert not is_lazy(again.get(u.id))  # the tail was read the usual way
    assert is_lazy(again.get(again.order[1]))  # the indexed part was not
    assert _dumps(again) == _dumps(SessionTree.open(s, lazy=False))


def test_index_cache_is_ignored_when_the_file_changed_or_the_cache_is_damaged(tmp_path, card, small_cache):
    from liyuan_desktop.core.session.lazy import is_lazy

    d = tmp_path / "c"
    write_long_chat(d, card, 20)
    s = d / "session.jsonl"
    SessionTree.open(s)
    data = s.read_bytes()
    at = data.index("第 3 拍：我推门进去".encode())
    s.write_bytes(data[:at] + "第 3 拍：我推窗进去".encode() + data[at + len("第 3 拍：我推门进去".encode()):])  # same size
    edited = SessionTree.open(s)
    assert any(getattr(edited.entries[i], "text", "") == "第 3 拍：我推窗进去。" for i in edited.order)
    users = [i for i in edited.order if edited.entries[i].type == "user"]
    assert not is_lazy(edited.get(users[0]))  # read in full, not from the stale index
    small_cache.cache_path(s).write_text("{broken", "utf-8")
    assert _dumps(SessionTree.open(s)) == _dumps(SessionTree.open(s, lazy=False))


def test_latest_is_remembered_per_leaf_and_follows_appends_and_switches(tmp_path, card):
    d = tmp_path / "c"
    write_long_chat(d, card, 5)
    tree = SessionTree.open(d / "session.jsonl")
    old = tree.latest("assistant")
    assert tree.latest("assistant") is old and tree.latest("note") is None
    tree.append("user", text="又一句")
    new = tree.append("assistant", text="又一答", sealed=True)
    assert tree.latest("assistant") is new
    tree.set_leaf(old.id)
    assert tree.latest("assistant") is old
    assert tree.latest("user", new.id).text == "又一句"
    mark = tree.pending_mark()
    tree.append("note", text="旁白", kind="narrator")
    assert tree.latest("note") is not None
    tree.rollback(mark)
    assert tree.latest("note") is None
