"""How the scribe's patches fare (issue 33): applied, refused by the guards, reverted by the user.

    python bench/scribe_quality.py [--json]

Plays a role-play chat on the replay model whose scribe answers are real scribe replies — the two of the golden
runs (``../shared/golden/round1.json``, ``round2.json``: a large model) when present — and the bad patches a small
model wrote on a real 1.5B server (issue 33: a friendly greeting setting 阿棠's affinity to −100, ``time → 次日清晨``
from nothing, a character named 「你」, plus a patch with wrongly typed fields the guards refuse). After the replay the
user reverts what a player would (the −100, the invented time, the 「你」 character) through ``Chat.revert_ledger_change``,
and the counts come from ``Chat.patch_quality``: scribe beats, change lines applied, lines refused by the guards,
paths reverted. Offline, a second or two.

Then the same for every scribe reply recorded from a real small model (``tests/data/wire``, ``bench/record_wire.py``:
the scribe exchanges of its engine cases), in a chat of their own, printed apart ("wire" in ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GOLDEN = ROOT.parent / "shared" / "golden"

SMALL_MODEL = [
    {"patch": {"characters": {"阿棠": {"affinity": 5, "status": "招呼客人", "at": "茶馆"}}, "location": "茶馆"}},
    {"patch": {"characters": {"阿棠": {"affinity": -100}}}},           # a friendly greeting: −100
    {"patch": {"time": "次日清晨"}},                                    # time from nothing
    {"patch": {"characters": {"你": {"affinity": 10, "status": "在喝茶"}}}},  # the user's persona as a character
    {"patch": {"inventory": "一壶茶", "flags": {"门": {"开": True}}, "mood": "好"}},  # refused by the guards
]


def scribe_replies() -> list[str]:
    """The golden runs' raw scribe replies (when ../shared is there), then the small model's."""
    out = []
    for name in ("round1.json", "round2.json"):
        f = GOLDEN / name
        if f.is_file():
            raw = json.loads(f.read_text("utf-8")).get("scribe", {}).get("raw")
            if isinstance(raw, str):
                out.append(raw)
    return out + [json.dumps(p, ensure_ascii=False) for p in SMALL_MODEL]


async def play(folder: Path) -> dict:
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    replies = scribe_replies()
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    actor = [x for i in range(len(replies)) for x in (
        {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"第{i + 1}拍。"}}]}, seal)]
    card = load_card(ROOT / "cards" / "青梧" / "default_Qingwu.json")
    chat = Chat.create(folder, card, ReplayModel(actor=actor, scribe=replies))
    for i in range(len(replies)):
        await chat.send(f"第{i + 1}句")
    n = len(replies) - len(SMALL_MODEL)  # the beat numbers of the small model's patches start after the golden ones
    for beat, path in ((n + 2, "characters.阿棠.affinity"), (n + 3, "time"), (n + 4, "characters.你")):
        try:
            chat.revert_ledger_change(beat, path)
        except ValueError:  # nothing there to revert: the scribe's guard already refused it (a character 「你」)
            pass
    q = chat.patch_quality().model_dump()
    q["golden_replies"] = n
    chat.close()
    return q


WIRE = ROOT / "tests" / "data" / "wire"
#: how the scribe's system prompt starts (core/ledger/scribe.py): tells a recorded scribe exchange from the actor's
SCRIBE_HEAD = "你是一场角色扮演的场记"


def wire_scribe_replies() -> list[tuple[str, str]]:
    """``(case, reply)`` for every scribe exchange recorded from a real llama.cpp server in ``tests/data/wire``
    (``bench/record_wire.py``'s engine cases: Qwen2.5-Coder 0.5B / 1.5B), in name order: the exchanges whose
    request's system prompt is the scribe's, with the reply's streamed text."""
    sys.path.insert(0, str(ROOT / "tests"))
    from wire_replay import load, names, streamed_text

    out = []
    for name in names():
        t = load(name)
        msgs = t.request.get("body", {}).get("messages") or []
        if msgs and str(msgs[0].get("content", "")).startswith(SCRIBE_HEAD) and t.status == 200:
            out.append((name, streamed_text(t.body)))
    return out


async def play_wire(folder: Path) -> dict:
    """The recorded scribe replies, one beat each, on the replay model; the counts of ``Chat.patch_quality`` (no
    revert: whatever a player would take back of these — a time set to a sentence, time and place one phrase — the
    guards refuse now) and the cases they came from."""
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    recorded = wire_scribe_replies()
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    actor = [x for i in range(len(recorded)) for x in (
        {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"第{i + 1}拍。"}}]}, seal)]
    card = load_card(ROOT / "cards" / "青梧" / "default_Qingwu.json")
    chat = Chat.create(folder, card, ReplayModel(actor=actor, scribe=[r for _, r in recorded]))
    for i in range(len(recorded)):
        await chat.send(f"第{i + 1}句")
    q = chat.patch_quality().model_dump()
    q["cases"] = [c for c, _ in recorded]
    chat.close()
    return q


def main() -> int:
    """Run the replay and print the counts (``--json``: as JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        q = asyncio.run(play(Path(d) / "chat"))
        q["wire"] = asyncio.run(play_wire(Path(d) / "wire"))
    if args.json:
        print(json.dumps(q, ensure_ascii=False))
    else:
        wire = q.pop("wire")
        for k, v in q.items():
            print(f"{k:>15}: {v}")
        print("recorded small-model scribe replies (tests/data/wire):")
        for k, v in wire.items():
            print(f"{k:>15}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
