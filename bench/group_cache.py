"""Cached-prefix share of a 3-member group chat (issue 31): does the byte-stable prefix hold per speaker?

Plays a 3-member group (list order: Aster, Birch, Cedar, Aster, …) for N beats on the replay model, once per
"join character cards" mode (swap: the speaker's card alone; join: every member's fields joined), and measures
each beat's first actor request (what a provider's prefix cache sees) the way bench/prefix_cache.py does — its
``serialize`` and ``common_prefix``: the common prefix of two serialized prompts, in characters. Per mode it
prints, per speaker, the median byte-stable prefix against that speaker's previous request and its share of the
request, and the median share against the previous request of any speaker (the one just before it).

Usage: python bench/group_cache.py [--beats 30] [--modes swap,join]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prefix_cache import common_prefix, serialize  # noqa: E402

MEMBERS = {
    "Aster": "Aster is a tall archer from the northern pass; she counts every arrow and trusts no map she did not draw.",
    "Birch": "Birch is a quiet herbalist who keeps a garden of moonleaf behind the inn and hums when she lies.",
    "Cedar": "Cedar is the smith of the crossroads village, loud, generous, and in debt to half the valley.",
}


def _recording(actor: list[dict], scribe: list[str]) -> Any:
    from liyuan_desktop.core.llm.replay import ReplayModel

    class Recording(ReplayModel):
        """The replay model, keeping every request as ``(purpose, messages as OpenAI dicts, tools)``."""

        def __init__(self) -> None:
            super().__init__(actor=actor, scribe=scribe)
            self.requests: list[tuple[str, list[dict], list[dict]]] = []

        async def complete(self, request: Any, on_delta: Optional[Any] = None) -> Any:
            self.requests.append((request.purpose, [m.to_openai() for m in request.messages], request.tools))
            return await super().complete(request, on_delta)

    return Recording()


def _cards(tmp: Path) -> list[str]:
    from liyuan_desktop.core.cards.library import import_card

    names = []
    for name, desc in MEMBERS.items():
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": desc, "personality": f"{name} is steady and curious.",
                        "scenario": "The three of them share a table at the crossroads inn.",
                        "first_mes": f"{name} looks up.", "mes_example": f"<START>\n{{{{char}}}}: I am {name}."}}
        p = tmp / f"{name}.json"
        p.write_text(json.dumps(raw), "utf-8")
        names.append(import_card(p, replace=True).name)
    return names


async def play(beats: int, join: str, tmp: Path) -> list[tuple[str, str]]:
    """(speaker, serialized first actor request) of each beat."""
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.group import Group, save_group
    from liyuan_desktop.core.group.model import group_dir

    group = Group(name=f"Bench-{join}", members=_cards(tmp), strategy="list", join_cards=join)  # type: ignore[arg-type]
    save_group(group)
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    actor: list[dict] = []
    for k in range(1, beats + 1):
        text = f"Beat {k}: the rain keeps on; a lantern swings over the door and someone laughs at the bar."
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}, seal]
    model = _recording(actor, ["{}"] * beats)
    chat = Chat.create_group(group_dir(group.name) / "对话" / "bench", group, model, group_seed="bench")
    out = []
    for k in range(1, beats + 1):
        n = len(model.requests)
        await chat.send(f"The user speaks, beat {k}.")
        first = next(r for r in model.requests[n:] if r[0] == "actor")
        out.append((chat.speaker or "", serialize(first[1], first[2])))
    return out


def measure(calls: list[tuple[str, str]]) -> dict[str, Any]:
    """Per speaker: median prefix (chars) and share vs its own previous request; overall: median share vs the
    previous request of any speaker, and vs the same speaker."""
    last: dict[str, str] = {}
    per: dict[str, list[tuple[int, float]]] = {}
    same, any_ = [], []
    prev: Optional[str] = None
    for who, cur in calls:
        if who in last:
            n = common_prefix(last[who], cur)
            per.setdefault(who, []).append((n, n / len(cur)))
            same.append(n / len(cur))
        if prev is not None:
            any_.append(common_prefix(prev, cur) / len(cur))
        last[who], prev = cur, cur
    return {"per_speaker": {w: (statistics.median(n for n, _ in v), statistics.median(s for _, s in v), len(v))
                            for w, v in per.items()},
            "same_median": statistics.median(same) if same else 0.0,
            "any_median": statistics.median(any_) if any_ else 0.0,
            "size_median": statistics.median(len(c) for _, c in calls)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beats", type=int, default=30)
    ap.add_argument("--modes", default="swap,join")
    a = ap.parse_args()
    os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))
    tmp = Path(tempfile.mkdtemp(prefix="liyuan-group-cache-"))
    print(f"3-member group, list order, {a.beats} beats on the replay model; first actor request of each beat")
    for mode in a.modes.split(","):
        r = measure(asyncio.run(play(a.beats, mode, tmp)))
        print(f"join mode {mode!r}: request median {r['size_median']:.0f} chars")
        for who, (n, share, k) in sorted(r["per_speaker"].items()):
            print(f"  {who}: byte-stable prefix vs its own previous request: median {n:.0f} chars, "
                  f"share {share:.3f} ({k} pairs)")
        print(f"  share vs the same speaker's previous request: median {r['same_median']:.3f}; "
              f"vs the previous request of any speaker: median {r['any_median']:.3f} "
              f"(ratio any/same {r['any_median'] / max(r['same_median'], 1e-9):.2f})")


if __name__ == "__main__":
    main()
