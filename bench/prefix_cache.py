"""Cached-prefix share over a long compacted game (issue 7 acceptance).

Plays a synthetic 300-beat game (bench/synthetic_game.py) on the demo card with a small context window, so
compaction into 【前情提要】 happens many times, and measures for every actor call of beats 100–300 the share of its
prompt that equals the previous actor call's prompt prefix (what a provider's prefix cache can reuse): the common
prefix of the two serialized prompts (tool specs, then each message's role, content and tool calls), divided by the
length of the call's prompt, in characters. Prints the mean, the spread, and the compactions.

Usage: python bench/prefix_cache.py [--beats 300] [--window 12000] [--share 0.6] [--from 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthetic_game import SyntheticModel, demo_card_path, user_words  # noqa: E402


def serialize(messages: list[dict], tools: list[dict]) -> str:
    """One prompt as the bytes a server would hash for its prefix cache (tools first, as most servers render them)."""
    parts = [json.dumps(tools, ensure_ascii=False, sort_keys=True)]
    for m in messages:
        parts.append(json.dumps(m, ensure_ascii=False, sort_keys=True))
    return "\n".join(parts)


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (binary search on slices, C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


async def run(beats: int, window: int, share: float, first: int) -> dict:
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat

    os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))
    model = SyntheticModel(context_window=window)
    chat = Chat.create(Path(tempfile.mkdtemp(prefix="liyuan-prefix-")) / "c", load_card(demo_card_path()), model)
    chat.compaction_share = share
    compactions = []
    beat_of_call: list[int] = []
    t0 = time.perf_counter()
    for k in range(1, beats + 1):
        n_before = len(model.requests)
        await chat.send(user_words(k), on_event=lambda e, k=k: compactions.append((k, e)) if getattr(e, "kind", "") == "compacted" else None)
        beat_of_call += [k] * (len(model.requests) - n_before)
    elapsed = time.perf_counter() - t0
    actor = [(k, serialize(msgs, tools)) for k, (p, msgs, tools) in zip(beat_of_call, model.requests) if p == "actor"]
    shares, between = [], []
    for (k0, prev), (k, cur) in zip(actor, actor[1:]):
        if k < first:
            continue
        s = common_prefix(prev, cur) / len(cur)
        shares.append(s)
        if k != k0:
            between.append(s)
    max_tokens = max(chat.tokens.messages(msgs) for p, msgs, _ in model.requests if p == "actor")
    return {"beats": beats, "window": window, "share_setting": share, "calls": len(shares),
            "mean": statistics.fmean(shares), "median": statistics.median(shares), "min": min(shares),
            "between_beats_mean": statistics.fmean(between) if between else 0.0,
            "compactions": [(k, e.beats, e.layer, e.before, e.after) for k, e in compactions],
            "summaries": [(s["layer"], s["beats"]) for s in chat.summaries()],
            "max_prompt_tokens": max_tokens, "seconds": elapsed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beats", type=int, default=300)
    ap.add_argument("--window", type=int, default=12000)
    ap.add_argument("--share", type=float, default=0.6)
    ap.add_argument("--from", dest="first", type=int, default=100)
    a = ap.parse_args()
    r = asyncio.run(run(a.beats, a.window, a.share, a.first))
    print(f"synthetic game: {r['beats']} beats, context window {r['window']} tokens, compaction at {r['share_setting']:.0%}")
    print(f"played in {r['seconds']:.1f} s; largest actor prompt {r['max_prompt_tokens']} tokens (estimated)")
    print(f"compactions: {len(r['compactions'])}")
    for k, beats, layer, before, after in r["compactions"]:
        print(f"  after beat {k:>3}: beats {beats[0]}–{beats[1]} → layer-{layer} summary, next prompt {before} → {after} tokens")
    print(f"summaries at the end: {r['summaries']}")
    print(f"cached-prefix share, actor calls of beats {a.first}–{r['beats']} ({r['calls']} calls): "
          f"mean {r['mean']:.3f}, median {r['median']:.3f}, min {r['min']:.3f}; "
          f"first call of a beat vs the previous beat's last call: mean {r['between_beats_mean']:.3f}")


if __name__ == "__main__":
    main()
