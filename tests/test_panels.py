"""Liyuan panels (seed 002): card declaration, panel_patch rules, template rendering, the scribe's panel sections
(only with data panels; prompts unchanged otherwise) and the chat keeping panel data in the rp-state snapshot."""

from __future__ import annotations

import json

from helpers import DEMO_CARD

from liyuan_desktop.core.cards import card_from_json, load_card
from liyuan_desktop.core.ledger.panels import (
    Panel,
    apply_panel_patch,
    ledger_context,
    panels_from_card,
    panels_with_data,
    render_panel,
    render_template,
    scribe_panels,
)
from liyuan_desktop.core.ledger.scribe import (
    PANEL_SYSTEM_SECTION,
    parse_scribe_panels,
    run_scribe,
    scribe_system_prompt,
    scribe_user_text,
)
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.llm.replay import ReplayModel

BAG = {"id": "行囊", "title": "旅人的行囊", "template": "<p>铜钱 <b>{{data.铜钱}}</b>，{{data.物品}}</p>",
       "data": {"铜钱": 30, "物品": ["油纸伞"], "伤势": {"轻重": "无", "天数": 0}, "已婚": False}}
CLOCK = {"id": "时辰", "title": "此刻", "template": "<p>{{state.time}} · {{state.location}} · {{state.here}}</p>"}


def test_panels_from_card_forms_and_bad_entries():
    raw = {"spec": "chara_card_v3", "data": {"name": "测", "extensions": {"liyuan": {"panels": [BAG, CLOCK, {"title": "无 id"}, BAG]}}}}
    panels, warnings = panels_from_card(raw)
    assert [p.id for p in panels] == ["行囊", "时辰"]
    assert len(warnings) == 2
    card = card_from_json(raw, "/tmp/x/card.json")
    assert [p.id for p in panels_from_card(card)[0]] == ["行囊", "时辰"]
    assert panels_from_card({"name": "x"}) == ([], [])
    assert panels_from_card({"extensions": {"liyuan": {"panels": "nope"}}})[0] == []
    assert [p.id for p in scribe_panels(panels)] == ["行囊"]   # ledger-only panels are not the scribe's


def test_apply_panel_patch_types_paths_and_unknown_panels():
    panels = [Panel.model_validate(BAG), Panel.model_validate(CLOCK)]
    out, applied, warnings = apply_panel_patch(panels, {
        "行囊": {"铜钱": "25", "伤势.轻重": "擦伤", "伤势.天数": 2.0, "物品": ["油纸伞", "铜钥匙"], "新.路径": 1,
                "已婚": "true", "伤势.部位": "左臂"},
        "旅人的行囊": {"铜钱": "很多"},          # by title; refused: not a number
        "时辰": {"x": 1},                      # ledger-only panel
        "不存在": {"a": 1},
    })
    bag = out[0].data
    assert bag["铜钱"] == 25 and isinstance(bag["铜钱"], int)            # numbers stay numbers
    assert bag["伤势"] == {"轻重": "擦伤", "天数": 2.0, "部位": "左臂"}
    assert bag["物品"] == ["油纸伞", "铜钥匙"] and bag["已婚"] is True
    assert applied == ["行囊.铜钱", "行囊.伤势.轻重", "行囊.伤势.天数", "行囊.物品", "行囊.已婚", "行囊.伤势.部位"]
    assert any("新.路径" in w for w in warnings)
    assert any("应为数字" in w and "很多" in w for w in warnings)
    assert any("只显示账本" in w for w in warnings)
    assert any("「不存在」不存在" in w for w in warnings)
    assert panels[0].data["铜钱"] == 30                                 # the input is not changed
    assert apply_panel_patch(panels, {})[1:] == ([], [])
    assert apply_panel_patch(panels, ["x"])[2] and apply_panel_patch(panels, ["x"])[1] == []
    _, _, w = apply_panel_patch(panels, {"行囊": {"铜钱": True, "物品": "一串"}})
    assert len(w) == 2


def test_render_escapes_values_and_reads_the_ledger():
    state = WorldState.model_validate({"time": "夜", "location": "客栈", "characters": {
        "青梧": {"affinity": 5, "at": "客栈"}, "更夫": {"affinity": 0, "at": "街上"}, "旅人": {"affinity": 0, "at": "客栈"}}})
    ctx = ledger_context(state)
    assert ctx["present"] == ["青梧", "旅人"] and ctx["here"] == "青梧、旅人"
    html = render_panel(Panel.model_validate(CLOCK), state)
    assert html == "<p>夜 · 客栈 · 青梧、旅人</p>"
    evil = Panel(id="x", template="<i>{{data.a}}</i>{{ data.missing }}{{data.n}}{{data.b}}",
                 data={"a": "<script>alert(1)</script>\"'", "n": 3.0, "b": {"k": "<v>"}})
    out = render_panel(evil, None)
    assert out == '<i>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;</i>3{&quot;k&quot;: &quot;&lt;v&gt;&quot;}'
    assert render_template("{{state.characters.青梧.affinity}}", {"state": ctx}) == "5"


def test_scribe_prompt_unchanged_without_data_panels():
    s = WorldState()
    base = scribe_system_prompt(s, "旅人", "青梧")
    assert scribe_system_prompt(s, "旅人", "青梧", None, [Panel.model_validate(CLOCK)]) == base
    assert scribe_system_prompt(s, "旅人", "青梧", None, []) == base
    u = scribe_user_text(s, "旅人", "青梧", "你好", "嗯")
    assert scribe_user_text(s, "旅人", "青梧", "你好", "嗯", None, None, [CLOCK]) == u


def test_scribe_prompt_with_data_panels():
    s = WorldState()
    base = scribe_system_prompt(s, "旅人", "青梧")
    sp = scribe_system_prompt(s, "旅人", "青梧", None, [BAG, CLOCK])
    anchor = '完全无变化则 "patch" 为 {}。'
    assert sp == base.replace(anchor, anchor + PANEL_SYSTEM_SECTION.format(n=1)).replace(
        '{"patch":{...}}', '{"patch":{...},"panel_patch":{...}}').replace('{"patch":{}}', '{"patch":{},"panel_patch":{}}')
    assert "剧中还有 1 个展示面板" in sp and '"panel_patch"：形如 { "面板名": { "路径.用点分隔": 新值 } }。' in sp
    both = scribe_system_prompt(s, "旅人", "青梧", {"a": 1}, [BAG])
    assert both.index("mvu_patch") < both.index("panel_patch")
    assert '{"patch":{...},"mvu_patch":{...},"panel_patch":{...}}' in both
    u = scribe_user_text(s, "旅人", "青梧", "你好", "嗯", None, None, [BAG, CLOCK])
    assert f"\n\n【面板数据·当前值】\n{json.dumps({'行囊': BAG['data']}, ensure_ascii=False, indent=2)}\n\n【本轮对话】" in u
    assert "template" not in u and "铜钱 <b>" not in u                     # the model never sees the look


def test_parse_scribe_panels():
    assert parse_scribe_panels('{"patch":{},"panel_patch":{"行囊":{"铜钱":1}}}') == {"行囊": {"铜钱": 1}}
    assert parse_scribe_panels('{"patch":{}}') == {}


async def test_run_scribe_with_panels():
    model = ReplayModel(actor=[], scribe=['{"panel_patch": {"行囊": {"铜钱": 12, "伤势.轻重": 3}}}'])
    out = await run_scribe(model, WorldState(), user_name="旅人", char_name="青梧", user_text="买伞", assistant_text="好",
                           panels=[BAG, CLOCK])
    assert out.problems == []                                   # a panel-only answer is not a problem
    assert out.panel_patch == {"行囊": {"铜钱": 12, "伤势.轻重": 3}}
    assert [p.id for p in out.panels] == ["行囊", "时辰"]
    assert out.panels[0].data["铜钱"] == 12 and out.panels[0].data["伤势"]["轻重"] == "3"
    assert out.panel_applied == ["行囊.铜钱", "行囊.伤势.轻重"] and out.panel_warnings == []


async def test_run_scribe_without_data_panels_ignores_panel_patch():
    model = ReplayModel(actor=[], scribe=['{"patch":{},"panel_patch":{"时辰":{"a":1}}}'])
    out = await run_scribe(model, WorldState(), user_name="旅人", char_name="青梧", user_text="x", assistant_text="y",
                           panels=[CLOCK])
    assert out.panels is None and out.panel_patch is None and "panel" not in out.system


async def test_chat_keeps_panel_data_in_the_snapshot(tmp_path):
    """Through a real chat with a test card: the data panel reaches the scribe, its panel_patch lands in the rp-state
    beside the ledger, the next beat's scribe sees the new value, a bad patch is fed back as a warning, and
    current_panels() follows the branch."""
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.session.tree import SessionTree

    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "测", "first_mes": "你好。", "extensions": {"liyuan": {"panels": [BAG, CLOCK]}}}}
    card = card_from_json(raw, str(tmp_path / "card.json"))
    w = lambda t: {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    model = ReplayModel(actor=[w("一。"), seal, w("二。"), seal, w("三。"), seal],
                        scribe=['{"patch": {"time": "夜"}, "panel_patch": {"行囊": {"铜钱": 18}}}',
                                '{"patch": {}, "panel_patch": {"行囊": {"铜钱": "一半"}}}',
                                '{"patch": {}, "panel_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    assert [p.data.get("铜钱") for p in chat.current_panels()] == [30, None]
    r1 = await chat.send("一")
    assert "panel_patch" in r1.scribe.system and '"铜钱": 30' in r1.scribe.user
    snap = SessionTree.open(chat.tree.path).latest("rp-state").model_dump()
    assert snap["panels"] == {"行囊": {**BAG["data"], "铜钱": 18}} and snap["panel_applied"] == ["行囊.铜钱"]
    assert snap["state"]["time"] == "夜"
    first_leaf = chat.tree.leaf_id
    r2 = await chat.send("二")
    assert '"铜钱": 18' in r2.scribe.user
    assert any("应为数字" in x for x in r2.warnings)
    r3 = await chat.send("三")
    assert "【上次记账的告警】" in r3.scribe.user and "应为数字" in r3.scribe.user
    assert chat.current_panels()[0].data["铜钱"] == 18
    assert chat.current_panels()[1].template == CLOCK["template"]
    chat.tree.set_leaf(chat.tree.path_to()[1].id)   # back to before the first beat: the card's initial data
    assert chat.current_panels()[0].data["铜钱"] == 30
    chat.tree.set_leaf(first_leaf)
    assert chat.current_panels()[0].data["铜钱"] == 18


def test_demo_card_panel_is_ledger_only():
    """The demo card ships one panel that reads only the ledger, so the golden scribe prompts stay byte-identical."""
    card = load_card(DEMO_CARD)
    panels, warnings = panels_from_card(card)
    assert warnings == [] and len(panels) >= 1
    assert scribe_panels(panels) == []
    assert all("{{data." not in p.template for p in panels)
    html = render_panel(panels[0], WorldState.model_validate({"time": "傍晚", "location": "客栈",
                                                             "characters": {"青梧": {"affinity": 5, "at": "客栈"}}}))
    assert "傍晚" in html and "客栈" in html and "青梧" in html


def test_panels_with_data_drops_unknown_and_keeps_templates():
    panels = [Panel.model_validate(BAG), Panel.model_validate(CLOCK)]
    out = panels_with_data(panels, {"行囊": {"铜钱": 1}, "旧面板": {"x": 1}})
    assert [p.id for p in out] == ["行囊", "时辰"] and out[0].data == {"铜钱": 1} and out[0].template == BAG["template"]
    assert panels_with_data(panels, None)[0].data == BAG["data"]
