"""Template time of a beat with 20 EJS entries (issue 14 §4 acceptance: target < 20 ms of template time).

A card of our own with an MVU tree and 20 world-info entries that are EJS templates in the shapes real cards use —
phase-gated guidance (``<%_ if … _%>``), status lines, nested ``getvar`` with defaults, a loop over the tree, a
``getwi`` — 12 constants and 8 keyed on words the user says, plus a ``{{format_message_variable::stat_data}}``.
For each beat it builds the prompt (``Chat.prepare``, what a beat sends first) and measures the time spent inside the
template engine (every ``TemplateEnv.render``, the system prompt rendered again included), then the whole prepare.
The chat's opening (the system prompt is rendered there, so the engine — a QuickJS context with lodash — starts
there) and the first beat are reported apart.

Usage: python bench/ejs.py [--beats 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from liyuan_desktop.core.cards import card_from_json  # noqa: E402
from liyuan_desktop.core.chat.facade import Chat  # noqa: E402
from liyuan_desktop.core.llm.replay import ReplayModel  # noqa: E402
from liyuan_desktop.core.macros import ejs  # noqa: E402

SHAPES = [
    "<%_ if (getvar('stat_data.阶段', {defaults: 1}) == {n}) { _%>\n第{n}阶段的剧情指引：……（省略二百字）\n<%_ } _%>",
    "【{n}号状态】好感 <%- stat_data.角色.林.好感 %>，信任 <%- getvar('stat_data.角色.林.信任', {defaults: 0}) %>",
    "<%_ const who = getvar('stat_data.角色.周.好感', {defaults: getvar('stat_data.默认好感', {defaults: 5})}); _%>"
    "周的好感（{n}）：<%= who %>",
    "<%_ for (const [k, v] of Object.entries(stat_data.物品)) { _%>\n- <%- k %>：<%- v %>\n<%_ } _%>",
    "<%- await getwi('设定{m}') %>（引用 {n}）",
]


def card(path: Path):
    tree = {"阶段": 2, "默认好感": 5, "角色": {"林": {"好感": 30, "信任": 12}},
            "物品": {f"物品{i}": i for i in range(10)}}
    entries = [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False, "insertion_order": 1,
                "extensions": {}, "content": json.dumps(tree, ensure_ascii=False)}]
    for n in range(20):
        shape = SHAPES[n % len(SHAPES)].replace("{n}", str(n)).replace("{m}", str((n + 1) % 20))
        constant = n < 12
        entries.append({"id": n + 1, "comment": f"设定{n}", "keys": [] if constant else [f"钥匙{n}"], "content": shape,
                        "enabled": True, "constant": constant, "insertion_order": 100 + n,
                        "extensions": {"position": 0}})
    entries.append({"id": 30, "comment": "变量", "keys": [], "content": "{{format_message_variable::stat_data}}",
                    "enabled": True, "constant": True, "insertion_order": 200, "extensions": {"position": 4, "depth": 2}})
    data = {"name": "林", "first_mes": "你好。", "description": "林。", "character_book": {"entries": entries}}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(path))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--beats", type=int, default=30)
    args = ap.parse_args()
    spent = [0.0]
    calls = [0]
    real = ejs.TemplateEnv.render

    def timed(self, text, source=None):
        t = time.perf_counter()
        try:
            return real(self, text, source)
        finally:
            spent[0] += time.perf_counter() - t
            calls[0] += 1

    ejs.TemplateEnv.render = timed  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        chat = Chat.create(Path(tmp) / "c", card(Path(tmp) / "card.json"), ReplayModel(actor=[], scribe=[]))
        opened = (spent[0], time.perf_counter() - t)  # the system prompt is rendered at open: the engine starts here
        per_beat, whole, counts = [], [], []
        first = None
        for b in range(args.beats + 1):
            spent[0], calls[0] = 0.0, 0
            t = time.perf_counter()
            _inj, titles, messages, _s, _p = chat.prepare(f"我拿出钥匙{b % 8 + 12}和钥匙{(b + 3) % 8 + 12}。")
            total = time.perf_counter() - t
            text = "".join(m.content or "" for m in messages)
            assert "<%" not in text and "_variable::" not in text, "a template reached the prompt"
            if b == 0:
                first = (spent[0], total)
                continue
            per_beat.append(spent[0] * 1000)
            whole.append(total * 1000)
            counts.append(calls[0])
    ejs.TemplateEnv.render = real  # type: ignore[method-assign]
    print(f"EJS beat (20 template entries, {args.beats} beats): template time per beat "
          f"median {statistics.median(per_beat):.2f} ms, max {max(per_beat):.2f} ms "
          f"({statistics.median(counts):.0f} renders); whole prepare median {statistics.median(whole):.1f} ms; "
          f"first beat {first[0] * 1000:.1f} ms of {first[1] * 1000:.1f} ms; chat open (engine start) "
          f"{opened[0] * 1000:.1f} ms of {opened[1] * 1000:.1f} ms; target < 20 ms")


if __name__ == "__main__":
    main()
