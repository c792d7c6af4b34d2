"""What a beat costs must not grow with the chat's length (issue 15, bench/beat_overhead.py: the 10,000-beat chat
took twice the time of a 100-beat one). The causes found with cProfile were O(chat length) copies on every beat —
the branch path copied on each append, the whole prompt re-validated by pydantic for each model call and again for
the beat's result. These tests pin the structure (no timings): the path is extended in place, and a model call
gets the engine's own message list."""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


def test_append_extends_the_cached_branch_path_in_place(tmp_path):
    tree = SessionTree.create(tmp_path / "session.jsonl", title="t")
    for i in range(5):
        tree.append("user", text=f"u{i}")
    path = tree.path_to()
    n = len(path)
    u = tree.append("user", text="next")
    now = tree.path_to()
    assert now._items is path._items  # one list extended in place, not a copy of the whole branch per entry
    assert len(path) == n and path[-1] is not u and list(path) == list(now)[:n]  # the earlier view is unchanged
    assert now[-1] is u and list(reversed(now))[0] is u and now[-2:] == [path[-1], u] and now.index(u) == n
    # a branch switch and an append below an older entry give the right path; views taken before keep theirs
    old = path[2]
    tree.set_leaf(old.id)
    side = tree.append("user", text="side")
    assert [e.id for e in tree.path_to()] == [e.id for e in path[:3]] + [side.id]
    assert now[-1] is u and len(now) == n + 1
    # a rollback starts a new list: a view of the rolled-back entries keeps them, the next append does not clash
    mark = tree.pending_mark()
    gone = tree.append("user", text="gone")
    seen = tree.path_to()
    tree.rollback(mark)
    again = tree.append("user", text="again")
    assert seen[-1] is gone and tree.path_to()[-1] is again and tree.path_to()[-2] is side
    tree.commit()
    reopened = SessionTree.open(tmp_path / "session.jsonl")
    assert [e.id for e in reopened.path_to()] == [e.id for e in tree.path_to()]
    assert reopened.path_to() == reopened.path_to() and reopened.path_to() != path


def _chat_with(tmp: Path, n: int, runs: int) -> Chat:
    """A chat with ``n`` past beats (user words, a two-call beat log, a reply, a ledger snapshot each), reopened
    from disk with a replay model for ``runs`` more beats; the window holds the whole chat (nothing compacted)."""
    card = load_card(CARD)
    final = "她正往账本上记什么，闻言笔尖一顿。" * 10
    chat = Chat.create(tmp, card, ReplayModel(actor=[]))
    tree = chat.tree
    for i in range(n):
        tree.append("user", text=f"我进门。（第 {i} 拍）")
        b = tree.append("beat", calls=[], outcome="sealed", draft=final, draft_version=1)
        tree.append("assistant", text=final, beat=b.id)
        tree.append("rp-state", state={"time": f"第 {i} 天"}, source="scribe", applied=[f"time → 第 {i} 天"])
    tree.persist_leaf()
    actor, scribe = [], []
    for i in range(runs):
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": final + str(i)}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append('{"patch": {}}')
    chat = Chat.open(tmp, card, ReplayModel(actor=actor, scribe=scribe))
    chat.context_window = 10**9
    return chat


def _peak_bytes_of_a_beat(tmp: Path, n: int) -> int:
    chat = _chat_with(tmp, n, 3)

    async def go() -> int:  # one event loop: asyncio.run's own teardown reprs the finished task's result
        for i in range(2):  # the first beats after opening read the branch once (history cache, index)
            assert (await chat.send(f"热身 {i}")).sealed
        tracemalloc.start()
        try:
            assert (await chat.send("我坐下。")).sealed
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    return asyncio.run(go())


def test_a_beat_copies_nothing_per_past_beat_but_the_prompt_itself(tmp_path):
    """Peak memory a beat allocates (tracemalloc: deterministic, not a timing), 200 vs 2,000 past beats. What may
    grow is the prompt list itself (two messages, i.e. two pointers = 16 bytes, per past beat, and a copy for the
    request); before the fix the path copies and pydantic's re-validated lists made it ~66 bytes per past beat."""
    small = _peak_bytes_of_a_beat(tmp_path / "small", 200)
    big = _peak_bytes_of_a_beat(tmp_path / "big", 2000)
    per_beat = (big - small) / 1800
    assert per_beat < 40, (small, big, per_beat)
