"""What hostile text costs (issue 29 §1, §2): the outline parse of 1 MB and a beat with 30 looping templates.

    python bench/hostile_text.py [--runs 3]

* ``outline``: ``parse_outline`` on 1 MB outlines — a heading followed by a million spaces then a character (the
  line that froze the window for minutes before the parser was a linear scan), a million-character list item,
  and an ordinary outline of 1 MB (4,000 chapters with beats). Median of ``--runs``.
* ``beat``: one role-play beat on the replay model of a card whose 30 world-book entries loop forever in EJS
  (``<% while (true) {} %>``; half constant, half keyed), wall time of ``Chat.send`` (median of ``--runs``), and
  how many templates ran to the per-render limit. Before the per-beat budget (``macros.ejs.BEAT_BUDGET``) this
  beat took 93 s in the CLI; target: about the budget.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def outline_lines(runs: int) -> None:
    from liyuan_desktop.core.story.outline import parse_outline

    n = 1_000_000
    ordinary = "".join(f"## 第{i}章 雨夜 {{file={i:04d}.md status=drafted target=3000}}\n- 她在雨里捡到玉佩\n"
                       f"- 回收：玉佩的来历\n" for i in range(n // 60))[:n]
    texts = {"heading + 1,000,000 spaces": "## " + " " * n + "x", "list item of 1,000,000 characters": "## 章\n- " + "雨 " * (n // 2),
             f"ordinary outline ({len(parse_outline(ordinary).chapters())} chapters)": ordinary}
    for label, text in texts.items():
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            parse_outline(text)
            times.append(time.perf_counter() - t)
        print(f"outline parse, {label} ({len(text) / 1e6:.1f} MB): median {statistics.median(times) * 1000:.0f} ms")


def beat_line(runs: int) -> None:
    from liyuan_desktop.core.beat.events import Activity
    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.macros.ejs import BEAT_BUDGET

    entries = [{"id": i, "comment": f"死循环{i:02d}", "keys": ["灯"], "content": f"<% while (true) {{}} %>第{i}段",
                "enabled": True, "constant": i % 2 == 0, "insertion_order": 100 + i, "extensions": {"position": 0}}
               for i in range(30)]
    data = {"name": "林", "first_mes": "你好。", "description": "林。", "character_book": {"entries": entries}}
    times, opens, timed_out = [], [], []
    for r in range(runs):
        d = Path(tempfile.mkdtemp(prefix="liyuan-bench-ejs-"))
        card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(d / "card.json"))
        model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "她点灯。"}}]},
                                   {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                            scribe=[json.dumps({"patch": {}})])
        t = time.perf_counter()
        chat = Chat.create(d / "c", card, model)
        opens.append(time.perf_counter() - t)
        seen: list = []
        t = time.perf_counter()
        asyncio.run(chat.send("我提着灯进门。", on_event=seen.append))
        times.append(time.perf_counter() - t)
        timed_out.append(sum("超时" in str(e.text) for e in seen if isinstance(e, Activity)))
    print(f"beat with 30 looping templates (budget {BEAT_BUDGET:g} s; medians of {runs}): open {statistics.median(opens):.2f} s, "
          f"beat {statistics.median(times):.2f} s, templates run to the 1 s limit per beat: {statistics.median(timed_out):g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-bench-")
    outline_lines(a.runs)
    beat_line(a.runs)


if __name__ == "__main__":
    main()
