"""Engine overhead per beat with N prior beats on the branch (replay model: no network, no model time).

    python bench/beat_overhead.py [--beats 100 1000 10000] [--runs 30]

For each N it writes a chat with N past beats (user words, a beat log of two calls, a ~300-character final and a
ledger snapshot each, like a real game), reopens it from disk (load time printed), then plays ``--runs`` beats
(draft_write + draft_seal + scribe, each an engine round trip with fsync) and prints the median, p90 and max
wall time of ``Chat.send`` — i.e. everything the engine does per beat except waiting for the model — and the median
CPU time of this process per beat (``time.process_time``: what the engine computes, without the wait for fsync,
which on a disk shared with other work varies far more than the computing). The last line gives the ratios of the
largest N to the smallest (target, issue 15: ≤ 1.5 for 10,000 vs 100 beats).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from liyuan_desktop.core.cards import load_card  # noqa: E402
from liyuan_desktop.core.chat.facade import Chat  # noqa: E402
from liyuan_desktop.core.ledger.state import WorldState, apply_patch  # noqa: E402
from liyuan_desktop.core.llm.replay import ReplayModel  # noqa: E402
from liyuan_desktop.core.session import CallLog, SessionTree, ToolCallLog  # noqa: E402

CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"
FINAL = ("她正往账本上记什么，闻言笔尖一顿，墨在纸上洇开一点。\n\n" * 6)[:300]
USER = "我把湿透的外衣搭在椅背上，接过茶喝了一口：「住三天。顺便打听个人。」"
PATCH = {"time": "傍晚（雨中）", "location": "青梧的客栈", "characters": {"青梧": {"affinity": 5, "status": "客栈掌柜", "at": "青梧的客栈"}},
         "plot_threads": ["旅人查访怀瑾公子"]}


def build(path: Path, n: int) -> None:
    card = load_card(CARD)
    chat = Chat.create(path, card, ReplayModel(actor=[]))
    tree = chat.tree
    state = apply_patch(WorldState(), PATCH).state.to_dict()
    for i in range(n):
        tree.append("user", text=f"{USER}（第 {i} 拍）")
        calls = [CallLog(round=1, reasoning="想一想。" * 40, tool_calls=[ToolCallLog(name="draft_write", arguments=json.dumps({"version": 0, "content": FINAL}, ensure_ascii=False), result={"ok": True, "version": 1, "chars": 300})]),
                 CallLog(round=2, tool_calls=[ToolCallLog(name="draft_seal", arguments='{"version": 1}', result={"ok": True, "sealed": True, "version": 1})])]
        b = tree.append("beat", calls=calls, outcome="sealed", draft=FINAL, draft_version=1)
        tree.append("assistant", text=FINAL, beat=b.id)
        tree.append("rp-state", state=state, source="scribe", applied=["time → 傍晚（雨中）"])
        if i % 500 == 0:
            tree.commit()
    tree.persist_leaf()


def script(runs: int) -> ReplayModel:
    actor, scribe = [], []
    for i in range(runs):
        actor.append({"reasoning": "写。", "tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": FINAL + str(i)}}]})
        actor.append({"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]})
        scribe.append(json.dumps({"patch": {"flags": {"拍": str(i)}}}, ensure_ascii=False))
    return ReplayModel(actor=actor, scribe=scribe, label="bench")


async def measure(n: int, runs: int, tmp: Path) -> tuple[float, float]:
    path = tmp / f"chat-{n}"
    t0 = time.perf_counter()
    build(path, n)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    tree = SessionTree.open(path / "session.jsonl")
    t_load = time.perf_counter() - t0
    size = (path / "session.jsonl").stat().st_size
    chat = Chat.open(path, load_card(CARD), script(runs))
    # a model whose window holds the whole chat: this measures the beat's own overhead; compaction of a chat
    # bigger than the window is measured by bench/prefix_cache.py
    chat.context_window = 10**9
    times, cpu = [], []
    for i in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        res = await chat.send(f"{USER}（测 {i}）")
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        assert res.sealed, res.outcome
    times.sort()
    p90 = times[int(0.9 * (len(times) - 1))]
    print(f"{n:>6} prior beats | file {size / 1e6:6.1f} MB, {len(tree.order):>6} entries | load {t_load * 1000:7.1f} ms | "
          f"per beat: median {statistics.median(times):6.2f} ms, p90 {p90:6.2f} ms, max {times[-1]:6.2f} ms, "
          f"CPU median {statistics.median(cpu):6.2f} ms  (build {t_build:.1f} s)")
    return statistics.median(times), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--beats", type=int, nargs="*", default=[100, 1000, 10000])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    print(f"beat_overhead: replay model, {args.runs} beats each (draft_write + draft_seal + scribe, fsync per beat)")
    got = {}
    with tempfile.TemporaryDirectory() as d:
        for n in args.beats:
            got[n] = asyncio.run(measure(n, args.runs, Path(d)))
    lo, hi = min(got), max(got)
    if lo != hi:
        print(f"ratio {hi} / {lo} beats: wall {got[hi][0] / got[lo][0]:.2f}, CPU {got[hi][1] / got[lo][1]:.2f}")


if __name__ == "__main__":
    main()
