"""Build the demo card's replay script (cards/青梧/replay.json) from the seed's recorded run.

Developer tool, run once: ``python scripts/make_demo_replay.py [../shared/golden]``. The replay keeps only what
the model said (reasoning, text, tool calls with their arguments, usage) and the scribe's raw outputs, plus the
user's words and the recorded ask answer. Everything the engine computes (tool results, injections, finals,
ledger, roster) is left out on purpose: the engine recomputes it live.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The seed shows only the first words of round 1's reasoning (「思考开头」); they are kept as the demo's reasoning.
ROUND1_REASONING = [
    "The user has given a specific input. Let me check the lorebook for the relevant entries: 听雨轩, 怀瑾, 镇北渡口.",
    "I have the key setting. Let me also check 旧油纸伞 to understand the伞 detail, and 更夫 isn't needed right now.",
    "Now I understand the setting. Key facts: - 沈怀瑾, only son of 沈家旧宅, left from 镇北渡口 ten years ago on a rainy night.",
    "",
]


def _calls(step_calls: list[dict]) -> list[dict]:
    return [{"name": c["name"], "arguments": c["args"]} for c in step_calls]


def main() -> None:
    golden = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "golden"
    r1 = json.loads((golden / "round1.json").read_text("utf-8"))
    r2 = json.loads((golden / "round2.json").read_text("utf-8"))
    r3 = json.loads((golden / "round3.json").read_text("utf-8"))
    beats = [
        {
            "user": r1["user"],
            "actor": [
                {"reasoning": ROUND1_REASONING[i], "content": "", "tool_calls": _calls(step["calls"])}
                for i, step in enumerate(r1["calls"])
            ],
            "scribe": [r1["scribe"]["raw"]],
            "ask_answers": [],
        }
    ]
    for rec in (r2, r3):
        asks = [c["result"]["answer"] for s in rec["steps"] for c in s["calls"] if c["name"] == "ask"]
        beats.append(
            {
                "user": rec["user"],
                "actor": [
                    {"reasoning": s.get("reasoning", ""), "content": s.get("content", ""),
                     "tool_calls": _calls(s["calls"]), **({"usage": s["usage"]} if s.get("usage") else {})}
                    for s in rec["steps"]
                ],
                "scribe": [rec["scribe"]["raw"]] if rec.get("scribe") else [],
                "ask_answers": asks,
            }
        )
    out = {"format": "liyuan-replay", "version": 1,
           "label": "青梧 · 种子实跑三拍（查设定、问岔口、改上一拍）", "beats": beats}
    dest = ROOT / "cards" / "青梧" / "replay.json"
    dest.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"wrote {dest} ({dest.stat().st_size} bytes, {len(beats)} beats)")
    # The agent-mode demo: the seed's agent turn (what the model said), and how the seed named the three chapters it
    # made of the opening and the first two finals. The seed records no scribe answer for that turn; the demo's
    # scribe answers "no change" ({"patch": {}}) so the replay does not run dry.
    ag = json.loads((golden / "agent.json").read_text("utf-8"))
    agent = {"format": "liyuan-replay", "version": 1, "label": "青梧 · 种子实跑的 agent 一轮（读三章、改两处）",
             "beats": [{"user": ag["user"],
                        "actor": [{"reasoning": s.get("reasoning", ""), "content": s.get("content", ""),
                                   "tool_calls": [{"name": c["name"], "arguments": c["args"]} for c in s["calls"]]}
                                  for s in ag["steps"]],
                        "scribe": ['{"patch": {}}'], "ask_answers": []}]}
    (ROOT / "cards" / "青梧" / "agent-replay.json").write_text(json.dumps(agent, ensure_ascii=False, indent=1) + "\n", "utf-8")
    plan = {"chapters": sorted(ag["checkpoint0"]["files"]), "message": ag["checkpoint0"]["message"], "chat": "局C"}
    (ROOT / "cards" / "青梧" / "agent-demo.json").write_text(json.dumps(plan, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print("wrote the agent demo (agent-replay.json, agent-demo.json)")


if __name__ == "__main__":
    main()
