"""How often a small local model's first reply uses a lore fact it was given (issue 30: "an invented lore fact in
most beats that ask about one").

    python bench/lore_uptake.py [--model 1.5b] [--seeds 1-6] [--modes prose,roleplay] [--max-tokens 200]
                                [--json out.json]

For each of ``real_model.ROLEPLAY_TURNS[:3]`` (each asks about something only the demo card's lorebook says) and
each mode, the real engine builds the beat's first request once (``sweep_wire.first_body``: a fresh chat of the
demo card 青梧, the compact prompt on as a user of a small model sets it, a local provider). That body is streamed
from the real llama.cpp server (the client told it is one: ``provider="llamacpp"``, as a discovered or preset
llama.cpp provider is) (``real_model.llama_server``, one thread) once per llama.cpp ``seed`` at the
temperature the engine sends (none: the server's own), stopping early once a fact of ``real_model.LORE_FACTS``
that the user's words do not hold has appeared. Prints per question and mode the share of seeds whose reply used a
fact, the seconds per try and the whole share; the body is the engine's own, so running this on two commits
compares their prompts (the figure quoted in issue 30's note).

Not part of the test run: minutes per question on 2 CPU cores; the model comes from ``real_model.ensure_model``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import real_model  # noqa: E402
import sweep_wire  # noqa: E402


def facts_in(text: str, say: str) -> list[str]:
    """The lorebook-only facts (``real_model.LORE_FACTS``) in ``text`` that ``say`` (the user's words) lacks."""
    return [f for fs in real_model.LORE_FACTS.values() for f in fs if f in text and f not in say]


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(real_model.MODELS), default="1.5b")
    ap.add_argument("--seeds", default="1-6")
    ap.add_argument("--modes", default="prose,roleplay", help="comma list of prose / roleplay (tool play)")
    ap.add_argument("--turns", default="0,1,2", help="indexes into real_model.ROLEPLAY_TURNS")
    ap.add_argument("--max-tokens", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    name = real_model.MODELS[args.model].name
    model_file = real_model.ensure_model(args.model)
    seeds = sweep_wire.parse_seeds(args.seeds)
    rows: list[dict[str, Any]] = []
    with real_model.llama_server(model_file, threads=args.threads, ctx=8192, parallel=1, jinja=True, ping=1,
                                 reasoning=3) as base_url:
        for mode in args.modes.split(","):
            for ti in (int(t) for t in args.turns.split(",")):
                say = real_model.ROLEPLAY_TURNS[ti]
                body = asyncio.run(sweep_wire.first_body(name, mode, True, say, provider="llamacpp"))
                for seed in seeds:
                    t0 = time.monotonic()
                    text, finish = asyncio.run(sweep_wire.try_once(
                        base_url, body, seed, body.get("temperature"), args.max_tokens,
                        lambda t, s=say: bool(facts_in(t, s))))
                    row = {"mode": mode, "turn": ti, "seed": seed, "facts": facts_in(text, say), "finish": finish,
                           "seconds": round(time.monotonic() - t0, 1), "text": text}
                    rows.append(row)
                    print(f"{mode} turn {ti} seed {seed}: {'FACT ' + ','.join(row['facts']) if row['facts'] else 'no fact'}"
                          f" ({row['seconds']} s, {finish}) | {text[:90]!r}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    print("· share of first replies using a lore fact:")
    for mode in args.modes.split(","):
        for ti in (int(t) for t in args.turns.split(",")):
            mine = [r for r in rows if r["mode"] == mode and r["turn"] == ti]
            print(f"  {mode} turn {ti}: {sum(bool(r['facts']) for r in mine)} of {len(mine)}")
    print(f"  all: {sum(bool(r['facts']) for r in rows)} of {len(rows)}; median {statistics.median(r['seconds'] for r in rows):.0f} s per try")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
