"""MVU variable trees (core/ledger/mvu/) and the scribe's mvu_patch section (core/ledger/scribe.py)."""

from __future__ import annotations

import json
import re

import pytest
from helpers import shared_path

from liyuan_desktop.core.ledger.mvu import (
    MvuState,
    apply_mvu_patch,
    apply_ops,
    initial_tree,
    initvar_entries,
    load_initvars,
    merge_initial,
    parse_update_blocks,
    strip_update_blocks,
)
from liyuan_desktop.core.ledger.mvu import initvar as mvu_initvar
from liyuan_desktop.core.ledger.scribe import (
    MVU_SYSTEM_SECTION,
    parse_scribe_mvu,
    run_scribe,
    scribe_system_prompt,
    scribe_user_text,
)
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.llm.replay import ReplayModel

FIXTURES = shared_path("fixtures")
CARDS = FIXTURES / "cards"
CLASSIC_BAR = FIXTURES / "statusbars" / "mvu-example-lili-classic.html"


def _card(name: str):
    p = CARDS / name
    if not p.exists():
        pytest.skip(f"fixture {p} absent")
    from liyuan_desktop.core.cards import load_card
    return load_card(p)


def _classic_data() -> dict:
    if not CLASSIC_BAR.exists():
        pytest.skip("classic status bar fixture absent")
    html = CLASSIC_BAR.read_text(encoding="utf-8")
    m = re.search(r"var defaultData = (\{[\s\S]*?\n    \});", html)
    assert m, "defaultData not found in the classic bar"
    return json.loads(m.group(1))


def _book(*entries: tuple[str, str, bool]) -> dict:
    return {"entries": [{"comment": t, "content": c, "enabled": en, "keys": []} for t, c, en in entries]}


# --------------------------------------------------------------------------------------------------------- InitVar


def test_initvar_from_png_card_disabled_entry():
    card = _card("青空 理.png")
    entries = initvar_entries(card)
    assert [e.title for e in entries] == ["[InitVar]1st"]
    assert entries[0].enabled is False  # read even when disabled
    tree = initial_tree(card)
    assert tree is not None
    assert tree["日期"] == ["03月15日", "今天的日期，格式为 mm月dd日"]
    assert tree["user"]["身份"][0] == "新来的牧师"
    assert "教堂" in tree["地点"]


def test_initvar_from_json_card_lowercase_title():
    card = _card("角色卡_修女与女忍的双面日常.json")
    assert [e.title for e in initvar_entries(card)] == ["[initvar]初始变量"]
    tree = initial_tree(card)
    assert tree["教堂"]["持有资金"] == 30
    assert tree["近期事件"] == [] and tree["任务"] == {}


def test_card_without_initvar_has_no_tree():
    card = _card("default_Seraphina.png")
    assert initvar_entries(card) == []
    assert initial_tree(card) is None


def test_initvar_matches_classic_bar_tree_shape():
    """The PNG card's InitVar and the classic bar's defaultData describe the same tree (the bar's is a later turn)."""
    card = _card("青空 理.png")
    tree = initial_tree(card)
    bar = _classic_data()["stat_data"]
    assert set(bar) <= set(tree) | {"理"}
    assert tree["user"]["当前位置"] == bar["user"]["当前位置"]


def test_yaml_initvar_with_wrappers_and_meta():
    body = "<initvar>\n```yaml\n世界:\n  地点: 裂谷城\n  天数: 1\n$meta:\n  extensible: true\n背包: [剑, $__META_EXTENSIBLE__$]\n```\n</initvar>"
    tree, warnings = load_initvars(_book(("[InitVar] 变量初始化勿开", body, False)))
    assert warnings == []
    assert tree == {"世界": {"地点": "裂谷城", "天数": 1}, "背包": ["剑"]}


def test_yaml_merge_keys_and_dates_are_jsonable():
    body = "base: &b\n  hp: 10\n甲:\n  <<: *b\n  名: 甲\n日期: 2024-01-02\n"
    tree = initial_tree(_book(("[initvar]", body, True)))
    assert tree["甲"] == {"hp": 10, "名": "甲"}
    assert tree["日期"] == "2024-01-02"
    json.dumps(tree)


def test_several_initvar_entries_merge_in_book_order():
    book = _book(
        ("[InitVar] a", '{"人物": {"甲": {"hp": 10, "mp": 5}}, "列表": [1, 2, 3]}', False),
        ("普通条目", '{"不": "读"}', True),
        ("[INITVAR] b", "人物:\n  甲:\n    hp: 20\n  乙:\n    hp: 1\n列表: [9]\n", False),
    )
    assert [mvu_initvar._title(e) for e in initvar_entries(book)] == ["[InitVar] a", "[INITVAR] b"]
    tree = initial_tree(book)
    assert tree == {"人物": {"甲": {"hp": 20, "mp": 5}, "乙": {"hp": 1}}, "列表": [9]}


def test_bad_initvar_entry_is_skipped_with_warning():
    book = _book(("[initvar] bad", "a: [1, 2\nb: }", False), ("[initvar] ok", '{"a": 1}', False))
    tree, warnings = load_initvars(book)
    assert tree == {"a": 1}
    assert len(warnings) == 1 and "[initvar] bad" in warnings[0]


def test_substitute_runs_before_parsing():
    tree = initial_tree(_book(("[initvar]", '{"名字": "{{user}}"}', False)), substitute=lambda s: s.replace("{{user}}", "远野"))
    assert tree == {"名字": "远野"}


def test_existing_progress_wins():
    assert merge_initial({"a": 5}, {"a": 1, "b": 2}, {"c": 3}) == {"a": 5, "b": 2, "c": 3}


# ----------------------------------------------------------------------------------------------- apply_mvu_patch


TREE = {
    "理": {"好感度": [15, "[-30,100]之间"], "当前所想": ["今天吃什么好呢？", "随互动更新"], "性行为次数": [0, "递增"],
          "情绪": {"pleasure": [0.1, "[-1,1]"]}, "_id": 7, "$阶段": "陌生"},
    "user": {"背包": {"金币": 500}, "名字": "远野", "标签": ["a"]},
    "世界": {"当前地点": "教堂", "夜晚": False},
}


def test_pairs_keep_description_and_numbers_coerce():
    r = apply_mvu_patch(TREE, {"理.好感度": "19", "理.当前所想": "散步", "理.情绪.pleasure": 0.3})
    sd = r.state.stat_data
    assert sd["理"]["好感度"] == [19, "[-30,100]之间"]
    assert sd["理"]["当前所想"] == ["散步", "随互动更新"]
    assert sd["理"]["情绪"]["pleasure"] == [0.3, "[-1,1]"]
    assert r.warnings == []
    assert TREE["理"]["好感度"] == [15, "[-30,100]之间"]  # input untouched


def test_display_and_delta_data():
    r = apply_mvu_patch(TREE, {"理.好感度": 19, "理.情绪.pleasure": 0.3, "user.背包.金币": 480})
    assert r.state.display_data["理"]["好感度"] == "15->19"
    assert r.state.display_data["理"]["情绪"]["pleasure"] == "0.1->0.3"
    assert r.state.display_data["理"]["性行为次数"] == [0, "递增"]  # unchanged leaves stay as they are
    assert r.state.delta_data == {"理": {"好感度": "15->19", "情绪": {"pleasure": "0.1->0.3"}},
                                  "user": {"背包": {"金币": "500->480"}}}
    assert r.applied == ["理.好感度：15 → 19", "理.情绪.pleasure：0.1 → 0.3", "user.背包.金币：500 → 480"]


def test_empty_old_value_shows_arrow_only():
    tree = {"user": {"与理的关系": ["", "阶段改变时更新"]}}
    r = apply_mvu_patch(tree, {"user.与理的关系": "建立初步情感纽带"})
    assert r.state.delta_data == {"user": {"与理的关系": "->建立初步情感纽带"}}


def test_number_refuses_non_numeric_string():
    r = apply_mvu_patch(TREE, {"理.好感度": "很高", "user.背包.金币": True})
    assert r.state.stat_data == TREE
    assert len(r.warnings) == 2 and "不是数字" in r.warnings[0]
    assert r.applied == [] and r.state.delta_data == {}


def test_string_and_object_rules():
    r = apply_mvu_patch(TREE, {"user.名字": 3, "世界": "裂谷城", "user.背包": {"金币": 1, "剑": 1},
                               "user.标签": "b", "世界.夜晚": "true"})
    sd = r.state.stat_data
    assert sd["user"]["名字"] == "3"
    assert sd["世界"]["当前地点"] == "教堂" and sd["世界"]["夜晚"] is True
    assert sd["user"]["背包"] == {"金币": 1, "剑": 1}
    assert sd["user"]["标签"] == ["a"]
    assert len(r.warnings) == 2


def test_readonly_and_derived_keys_refused():
    r = apply_mvu_patch(TREE, {"理._id": 8, "理.$阶段": "熟识", "_x.y": 1})
    assert r.state.stat_data == TREE
    assert len(r.warnings) == 3
    assert "只读" in r.warnings[0] and "派生" in r.warnings[1] and "只读" in r.warnings[2]


def test_unknown_paths():
    r = apply_mvu_patch(TREE, {"user.背包.药水": 2, "无此人.好感度": 3, "user.名字.姓": "远", "理.好感度.x": 1})
    assert r.state.stat_data["user"]["背包"]["药水"] == 2
    assert r.state.delta_data == {"user": {"背包": {"药水": "->2"}}}
    assert "无此人" not in r.state.stat_data
    assert len(r.warnings) == 3


def test_patch_not_object_and_empty():
    assert apply_mvu_patch(TREE, {}).warnings == []
    r = apply_mvu_patch(TREE, ["x"])
    assert r.state.stat_data == TREE and len(r.warnings) == 1


def test_accepts_snapshot_and_state():
    snap = MvuState(stat_data={"a": 1}, initialized_lorebooks={"书": []}).to_dict()
    r = apply_mvu_patch(snap, {"a": 2})
    assert r.state.stat_data == {"a": 2} and r.state.initialized_lorebooks == {"书": []}
    new, applied, warnings = apply_mvu_patch(MvuState(stat_data={"a": 1}), {"a": 3})
    assert new.to_dict()["stat_data"] == {"a": 3} and applied and not warnings


def test_classic_bar_tree_patch():
    data = _classic_data()
    r = apply_mvu_patch(data, {"理.好感度": 23, "时间": "09:30", "理.情绪状态.arousal": 0.2})
    assert r.state.stat_data["理"]["好感度"][0] == 23
    assert r.state.display_data["时间"] == "09:10->09:30"
    assert r.state.delta_data["理"]["情绪状态"]["arousal"] == "0.15->0.2"


# --------------------------------------------------------------------------------------------- <UpdateVariable>


CLASSIC_TEXT = """她笑了。

<UpdateVariable>
<Analysis>好感上升</Analysis>
_.set('理.好感度', 15, 19);//理感到被需要
_.set('日期[0]', '03月16日');//次日
_.add('理.性行为次数', 1);
_.add('user.背包.金币', '10 + 2');
_.insert('user.标签', '新');
_.insert('user.背包', '药水', 2);
_.remove('user.标签', 0);
_.set('世界.当前地点', "裂谷城, 北门");
_.set('世界.夜晚', true)
_.set('理._id', 9);
</UpdateVariable>"""


def test_parse_classic_commands():
    ops = parse_update_blocks(CLASSIC_TEXT)
    assert [(o.op, o.path) for o in ops] == [
        ("set", ["理", "好感度"]), ("set", ["日期", 0]), ("add", ["理", "性行为次数"]), ("add", ["user", "背包", "金币"]),
        ("insert", ["user", "标签"]), ("insert", ["user", "背包"]), ("remove", ["user", "标签"]),
        ("set", ["世界", "当前地点"]), ("set", ["理", "_id"])]  # `_.set(...)` without ';' is ignored, as in MVU
    assert ops[0].value == 19 and ops[0].reason == "理感到被需要"
    assert ops[5].key == "药水" and ops[5].value == 2
    assert ops[7].value == "裂谷城, 北门"


def test_apply_classic_commands():
    tree = dict(TREE, 日期=["03月15日", "mm月dd日"])
    r = apply_ops(tree, parse_update_blocks(CLASSIC_TEXT))
    sd = r.state.stat_data
    assert sd["理"]["好感度"] == [19, "[-30,100]之间"]
    assert sd["日期"] == ["03月16日", "mm月dd日"]
    assert sd["理"]["性行为次数"] == [1, "递增"]
    assert sd["user"]["背包"] == {"金币": 512, "药水": 2}
    assert sd["user"]["标签"] == ["新"]
    assert sd["世界"]["当前地点"] == "裂谷城, 北门"
    assert sd["理"]["_id"] == 7 and any("只读" in w for w in r.warnings)
    assert r.state.delta_data["日期"] == "03月15日->03月16日"
    assert r.state.delta_data["理"]["好感度"] == "15->19"


def test_set_on_missing_path_is_error():
    r = apply_ops({"a": 1}, parse_update_blocks("_.set('b', 2);"))
    assert r.state.stat_data == {"a": 1} and r.warnings


def test_json_patch_dialect():
    text = """<UpdateVariable><Analysis>…</Analysis>
<JSONPatch>
```json
[ {"op":"replace","path":"/白娅/依存度","value":40},
  {"op":"delta","path":"/白娅/依存度","value":3},
  {"op":"insert","path":"/主角/物品栏/薄荷糖","value":{"数量":1}},
  {"op":"insert","path":"/世界/列表/-","value":"x"},
  {"op":"remove","path":"/世界/近期事务/座位调整"},
  {"op":"move","from":"/世界/旧","to":"/世界/新"} ]
```
</JSONPatch>
</UpdateVariable>"""
    ops = parse_update_blocks(text)
    assert [o.op for o in ops] == ["set", "add", "insert", "insert", "remove", "move"]
    tree = {"白娅": {"依存度": 30}, "主角": {"物品栏": {}}, "世界": {"列表": [], "近期事务": {"座位调整": "x"}, "旧": 1}}
    r = apply_ops(tree, ops)
    assert r.warnings == []
    assert r.state.stat_data == {"白娅": {"依存度": 43}, "主角": {"物品栏": {"薄荷糖": {"数量": 1}}},
                                 "世界": {"列表": ["x"], "近期事务": {}, "新": 1}}


def test_whole_text_scanned_without_block():
    ops = parse_update_blocks("正文 _.add('a', 2);//x")
    assert len(ops) == 1 and ops[0].op == "add"


def test_strip_update_blocks():
    assert strip_update_blocks(CLASSIC_TEXT) == "她笑了。"
    assert strip_update_blocks("正文\n<UpdateVariable>\n_.set('a', 1);") == "正文"  # unclosed (streaming)
    assert strip_update_blocks("没有块") == "没有块"


# ---------------------------------------------------------------------------------------------------- scribe


def test_scribe_prompts_unchanged_without_tree():
    s = WorldState()
    assert scribe_system_prompt(s, "旅人", "青梧") == scribe_system_prompt(s, "旅人", "青梧", None)
    assert "mvu_patch" not in scribe_system_prompt(s, "旅人", "青梧")
    u = scribe_user_text(s, "旅人", "青梧", "你好", "嗯")
    assert u == scribe_user_text(s, "旅人", "青梧", "你好", "嗯", None, None)
    assert "状态树" not in u


def test_scribe_prompts_with_tree():
    s = WorldState()
    base = scribe_system_prompt(s, "旅人", "青梧")
    sp = scribe_system_prompt(s, "旅人", "青梧", {"user": {"背包": {"金币": 500}}})
    anchor = '完全无变化则 "patch" 为 {}。'
    assert sp == base.replace(anchor, anchor + MVU_SYSTEM_SECTION).replace(
        '{"patch":{...}}', '{"patch":{...},"mvu_patch":{...}}').replace('{"patch":{}}', '{"patch":{},"mvu_patch":{}}')
    assert "这张卡另有一棵**状态树**" in sp and sp.endswith("不要输出 warnings、不要输出其他文字。")
    assert '例如 {"patch":{...},"mvu_patch":{...}} 或 {"patch":{},"mvu_patch":{}}。' in sp
    tree = {"user": {"背包": {"金币": 500}}}
    u = scribe_user_text(s, "旅人", "青梧", "你好", "嗯", ["旧告警"], MvuState(stat_data=tree))
    ledger = s.to_json(2)
    assert u.startswith(f"【当前账本】\n{ledger}\n\n【状态树·当前值】\n{json.dumps(tree, ensure_ascii=False, indent=2)}\n\n【上次记账的告警】")
    assert u.endswith("\n\n【本轮对话】\n旅人：你好\n\n青梧：嗯")


def test_parse_scribe_mvu():
    assert parse_scribe_mvu('{"patch":{},"mvu_patch":{"a.b":1}}') == ({"a.b": 1}, [])
    assert parse_scribe_mvu('{"patch":{}}') == ({}, [])
    assert parse_scribe_mvu("不是 JSON") == ({}, [])


async def test_run_scribe_with_tree():
    raw = '```json\n{"patch":{"time":"夜"},"mvu_patch":{"理.好感度":19,"理._id":1}}\n```'
    model = ReplayModel(actor=[], scribe=[raw])
    out = await run_scribe(model, WorldState(), user_name="远野", char_name="理", user_text="你好", assistant_text="嗯",
                           mvu=TREE)
    assert "mvu_patch" in out.system and "【状态树·当前值】" in out.user
    assert out.result.state.time == "夜"
    assert out.mvu_patch == {"理.好感度": 19, "理._id": 1}
    assert out.mvu_result.state.stat_data["理"]["好感度"] == [19, "[-30,100]之间"]
    assert out.mvu_result.applied == ["理.好感度：15 → 19"] and len(out.mvu_result.warnings) == 1
    assert out.problems == []


async def test_run_scribe_mvu_only_output_is_not_a_problem():
    model = ReplayModel(actor=[], scribe=['{"mvu_patch":{"世界.当前地点":"裂谷城"}}'])
    out = await run_scribe(model, WorldState(), user_name="远野", char_name="理", user_text="", assistant_text="章",
                           mvu=TREE)
    assert out.problems == [] and out.result.applied == []
    assert out.mvu_result.state.stat_data["世界"]["当前地点"] == "裂谷城"


async def test_run_scribe_without_tree_has_no_mvu_result():
    model = ReplayModel(actor=[], scribe=['{"patch":{},"mvu_patch":{"a":1}}'])
    out = await run_scribe(model, WorldState(), user_name="远野", char_name="理", user_text="x", assistant_text="y")
    assert out.mvu_patch is None and out.mvu_result is None
    assert "mvu" not in out.system


async def test_chat_keeps_the_variable_tree_in_the_snapshot(tmp_path):
    """Through a real chat: the card's [InitVar] tree reaches the scribe, its mvu_patch lands in the rp-state
    snapshot beside the ledger, and the next beat's scribe sees the new values (seed 002)."""
    import json as _json

    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.session.tree import SessionTree

    book = {"entries": [{"id": 0, "comment": "[InitVar]初始变量", "keys": [], "content": _json.dumps({"角色": {"好感": [10, "对用户的好感"]}}, ensure_ascii=False),
                         "enabled": False, "constant": False, "insertion_order": 100, "extensions": {}}]}
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "测", "first_mes": "你好。", "character_book": book}}
    card = card_from_json(raw, str(tmp_path / "card.json"))
    w = lambda t: {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w("一。"), seal, w("二。"), seal],
                        scribe=['{"patch": {}, "mvu_patch": {"角色.好感": 15}}', '{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    r1 = await chat.send("一")
    assert "mvu_patch" in r1.scribe.system and '"好感"' in r1.scribe.user
    snap = SessionTree.open(chat.tree.path).latest("rp-state")
    assert snap.model_dump()["mvu"]["stat_data"]["角色"]["好感"] == [15, "对用户的好感"]
    r2 = await chat.send("二")
    assert "15" in r2.scribe.user


async def test_bar_values_follow_the_branch(tmp_path):
    """Values after beat 2, then beat 2 regenerated with a different patch, then back to the first branch: the
    transcript (what the bars are built from) carries each branch's own values."""
    import json as _json

    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "content": _json.dumps({"好感": 10}),
                         "enabled": False, "insertion_order": 100, "extensions": {}}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "测", "first_mes": "你好。", "character_book": book}},
                          str(tmp_path / "card.json"))
    w = lambda t: {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w("一。"), seal, w("二。"), seal, w("二（重来）。"), seal],
                        scribe=['{"patch": {}, "mvu_patch": {"好感": 15}}', '{"patch": {}, "mvu_patch": {"好感": 20}}',
                                '{"patch": {}, "mvu_patch": {"好感": 30}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    await chat.send("一")
    await chat.send("二")
    first_leaf = chat.tree.leaf_id
    bar = lambda: [i["variables"]["stat_data"]["好感"] for i in chat.transcript() if "variables" in i]
    assert bar() == [10, 15, 20]
    await chat.regenerate()
    assert bar() == [10, 15, 30]
    chat.tree.set_leaf(first_leaf)
    chat.tree.commit()
    assert bar() == [10, 15, 20]
    assert chat.current_mvu().stat_data["好感"] == 20


async def test_mvu_update_rules_go_to_the_scribe_and_actor_blocks_are_applied_and_hidden(tmp_path):
    """Issue 5: [mvu_update] world-info rules leave the actor's prompt and reach the scribe; an <UpdateVariable>
    block the actor writes anyway is applied (before the scribe's patch) and hidden from the reply and the history;
    the prompt inspector rebuilds that scribe call exactly."""
    import json as _json

    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    book = {"entries": [
        {"id": 0, "comment": "[InitVar]", "keys": [], "content": _json.dumps({"好感": 10, "金币": 5}), "enabled": False,
         "insertion_order": 100, "extensions": {}},
        {"id": 1, "comment": "[mvu_update]变量更新规则", "keys": [], "constant": True, "enabled": True,
         "content": "每次回复末尾输出<UpdateVariable>；好感每轮最多变化 3。", "insertion_order": 100, "extensions": {}},
        {"id": 2, "comment": "茶馆", "keys": [], "constant": True, "enabled": True, "content": "听雨轩。",
         "insertion_order": 100, "extensions": {}}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0",
                           "data": {"name": "测", "first_mes": "你好。", "character_book": book}}, str(tmp_path / "card.json"))
    reply = "她笑了。\n<UpdateVariable>\n_.add('金币', 2);//赏钱\n</UpdateVariable>"
    w = {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": reply}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w, seal, {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "二。"}}]}, seal],
                        scribe=['{"patch": {}, "mvu_patch": {"好感": 12}}', '{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    assert "每次回复末尾" not in chat.system and "听雨轩" in chat.system
    r = await chat.send("打赏")
    assert r.final == "她笑了。"
    assert "【卡作者的变量规则】" in r.scribe.user and "好感每轮最多变化 3" in r.scribe.user
    assert r.scribe.user.endswith("测：她笑了。")  # the exchange the scribe reads has no block
    mvu = chat.current_mvu().stat_data
    assert mvu["金币"] == 7 and mvu["好感"] == 12
    assert [i["text"] for i in chat.transcript() if i["role"] == "assistant"] == ["她笑了。"]
    r2 = await chat.send("再来")
    assert all("UpdateVariable" not in (m.content or "") for m in r2.sent)
    sc = chat.inspect_beat([i for i in chat.transcript() if i["role"] == "assistant"][0]["id"])[-1]
    assert sc["request"]["messages"][1]["content"] == r.scribe.user
    assert sc["request"]["messages"][0]["content"] == r.scribe.system


def test_broken_initvar_is_reported_by_inspect_and_on_opening(tmp_path):
    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.cards.inspect import inspect_loaded
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    book = {"entries": [{"id": 0, "comment": "[InitVar]初始化", "keys": [], "content": "a: [1, 2\nb: {c: ",
                         "enabled": False, "insertion_order": 100, "extensions": {}}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0",
                           "data": {"name": "坏", "first_mes": "你好。", "character_book": book}}, str(tmp_path / "c.json"))
    warn = [w for w in inspect_loaded(card)["warnings"] if "InitVar" in w]
    assert len(warn) == 1 and "\n" not in warn[0] and "初始变量没有读到" in warn[0]
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[]))
    assert any("初始变量没有读到" in w for w in chat.load_warnings)


async def test_first_snapshot_shows_values_and_variable_changes_are_reported(tmp_path):
    """MVU's first snapshot has display_data = stat_data (classic bars read display_data first); the scribe's event
    lists variable changes, so 「场记记账」 never says 无变化 when only variables moved."""
    import json as _json

    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel

    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "content": _json.dumps({"理": {"好感度": [10, "对你"]}}),
                         "enabled": False, "insertion_order": 100, "extensions": {}}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0",
                           "data": {"name": "测", "first_mes": "你好。", "character_book": book}}, str(tmp_path / "c.json"))
    w = {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "一。"}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[w, seal], scribe=['{"patch": {}, "mvu_patch": {"理.好感度": 12}}']))
    opening = chat.transcript()[0]["variables"]
    assert opening["display_data"] == opening["stat_data"] == {"理": {"好感度": [10, "对你"]}}
    assert opening["delta_data"] == {}
    events = []
    await chat.send("一", on_event=events.append)
    sf = next(e for e in events if getattr(e, "kind", "") == "scribe_finished")
    assert any(a.startswith("变量 ") and "好感度" in a for a in sf.applied)


def test_demo_card_is_repaired_when_a_full_disk_left_it_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    from liyuan_desktop.core.cards import library as library
    from liyuan_desktop.core.cards import load_card

    ref = library.ensure_demo_card()
    card_file = tmp_path / "home" / "cards" / "青梧" / "card.json"
    card_file.write_bytes(b"")  # what a full disk left behind
    (tmp_path / "home" / "cards" / "青梧" / "replay.json").write_bytes(b"{")
    ref = library.ensure_demo_card()
    assert load_card(card_file).name == "青梧"
    assert json.loads((tmp_path / "home" / "cards" / "青梧" / "replay.json").read_text("utf-8"))["beats"]
    assert ref.load().name == "青梧"


# --------------------------------------------------------------------------------------- keys with dots (issue 13)
def test_keys_with_dots_are_addressed_by_json_pointer_or_brackets():
    tree = {"装备": {"AXMC .338 LM": {"弹药": 10}, "v1.2": "旧"}, "a/b": {"c~d": 1}, "金币": 5}
    r = apply_mvu_patch(tree, {"/装备/AXMC .338 LM/弹药": 20, '装备["v1.2"]': "新", "/a~1b/c~0d": 2, "金币": 6})
    assert r.warnings == []
    assert r.state.stat_data == {"装备": {"AXMC .338 LM": {"弹药": 20}, "v1.2": "新"}, "a/b": {"c~d": 2}, "金币": 6}
    assert r.state.delta_data["装备"]["AXMC .338 LM"]["弹药"] == "10->20"
    assert any(line.startswith('装备["AXMC .338 LM"].弹药') for line in r.applied)
    # the dotted form cannot reach such a key: it is refused, never written somewhere else
    r2 = apply_mvu_patch(tree, {"装备.AXMC .338 LM.弹药": 30})
    assert r2.state.stat_data == tree and r2.warnings


def test_scribe_hears_about_pointers_only_when_the_tree_needs_them():
    from liyuan_desktop.core.ledger.scribe import MVU_POINTER_NOTE
    plain = scribe_system_prompt(WorldState(), "远野", "测", mvu={"装备": {"剑": 1}})
    odd = scribe_system_prompt(WorldState(), "远野", "测", mvu={"装备": {"AXMC .338 LM": 1}})
    assert MVU_POINTER_NOTE not in plain and MVU_SYSTEM_SECTION in plain
    assert MVU_POINTER_NOTE in odd
    assert odd.replace(MVU_POINTER_NOTE, "") == plain


async def test_a_dotted_key_is_patched_by_the_scribe_in_a_chat(tmp_path):
    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.chat.facade import Chat

    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False, "insertion_order": 100,
                         "extensions": {}, "content": json.dumps({"装备": {"AXMC .338 LM": {"弹药": 10}}})}]}
    card = card_from_json({"spec": "chara_card_v3", "spec_version": "3.0",
                           "data": {"name": "测", "first_mes": "你好。", "character_book": book}}, str(tmp_path / "card.json"))
    w = {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "开了三枪。"}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w, seal], scribe=['{"patch": {}, "mvu_patch": {"/装备/AXMC .338 LM/弹药": 7}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    r = await chat.send("开枪")
    assert "JSON Pointer" in r.scribe.system
    assert chat.current_mvu().stat_data["装备"]["AXMC .338 LM"]["弹药"] == 7
