"""Issue 29 §2: the EJS templates of one beat share one time budget (macros/ejs.py BEAT_BUDGET).

Thirty world-book entries that loop forever made one CLI beat take 93 s: each was stopped after the per-render
limit, and rendered again when the prompt asked for it a second time. Now the beat runs its templates for
BEAT_BUDGET seconds in all, names the ones it stopped in one notice, and never runs a failed one twice.
"""

from __future__ import annotations

import json

import pytest

from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.macros.ejs import BEAT_BUDGET, TIME_LIMIT, TemplateEnv

N = 30


def _looping_card(tmp_path):
    entries = [{"id": i, "comment": f"死循环{i:02d}", "keys": ["灯"], "content": f"<% while (true) {{}} %>第{i}段",
                "enabled": True, "constant": i % 2 == 0, "insertion_order": 100 + i, "extensions": {"position": 0}}
               for i in range(N)]
    entries.append({"id": N, "comment": "普通", "keys": ["灯"], "content": "灯是铜做的。", "enabled": True,
                    "constant": False, "insertion_order": 200, "extensions": {"position": 0}})
    data = {"name": "林", "first_mes": "你好。", "description": "林。", "character_book": {"entries": entries}}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))


def _model():
    return ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "她点灯。"}}]},
                              {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                       scribe=[json.dumps({"patch": {}}, ensure_ascii=False)])


@pytest.mark.timeout(300)  # a bound against a hang only: the beat itself runs about BEAT_BUDGET seconds of templates
async def test_thirty_looping_templates_share_one_budget_and_one_notice(tmp_path):
    chat = Chat.create(tmp_path / "c", _looping_card(tmp_path), _model())
    chat.pending_notices.clear()  # what opening the chat said (its own budget)
    seen: list = []
    await chat.send("我提着灯进门。", on_event=seen.append)
    assert [i["text"] for i in chat.transcript() if i["role"] == "assistant"][-1] == "她点灯。"  # the beat ended
    notes = [str(e.text) for e in seen if isinstance(e, Activity)]
    budget = [t for t in notes if "已用满" in t]
    assert len(budget) == 1, notes
    timed_out = [t for t in notes if "超时" in t]
    # at most as many templates ran to the per-render limit as the budget holds; the rest were never run
    assert len(timed_out) <= int(BEAT_BUDGET / TIME_LIMIT)
    for i in range(N):  # every looping entry is named once: in its own timeout notice or in the budget notice
        title = f"死循环{i:02d}"
        assert sum(title in t for t in timed_out + budget) == 1, (title, notes)
    # the inspector still lists each template, with why it gave nothing
    rendered = {t["label"]: t for t in chat.tree.latest("beat").templates}
    assert all("error" in rendered[f"世界书「死循环{i:02d}」"] for i in range(N) if i % 2 == 0)


def test_a_failed_template_is_not_run_again_in_the_same_beat():
    env = TemplateEnv()
    env.update(chat={"n": 1})
    assert env.render("<% while (true) {} %>", source="甲") == ""
    spent = env.spent
    env.update(chat={"n": 2})  # other values: the memo starts afresh, the beat's failure is kept
    assert env.render("<% while (true) {} %>", source="甲") == ""
    assert env.spent == spent  # not run at all
    assert len(env.take_notices()) == 1
    env.begin_beat()  # the next beat tries it again
    env.budget = 0.2
    assert env.render("<% while (true) {} %>", source="甲") == ""
    notes = env.take_notices()
    assert len(notes) == 1 and notes[0].key == "ejs.budget" and "甲" in notes[0]
