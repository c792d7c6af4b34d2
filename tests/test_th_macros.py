"""TavernHelper's variable macros in the one macro engine (issue 13 §3): ``get_*_variable`` (string as is, anything
else as JSON.stringify writes it), ``format_*_variable`` (YAML, continuation lines indented under the text before
the macro), ``$`` keys dropped, lodash paths; kept as written without a variables lookup; in the conversation view's
display text with the message's own snapshot."""

from __future__ import annotations

from heavy_regex_card import make_card, make_chat

from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.macros import MacroContext, apply_macros
from liyuan_desktop.core.macros.tavernhelper import apply_th_macros, lodash_get, yaml_stringify

VARS = {"stat_data": {"好感度": [50, "好感，0-100"], "名字": "青梧", "金钱": 12.0, "在场": True, "$meta": {"x": 1},
                      "物品": {"剑": {"耐久": 3, "$note": "隐藏"}, "a.b": "点"}, "空": None, "日记": "第一行\n第二行"}}


def ctx(**kw) -> MacroContext:
    return MacroContext(char="青梧", user="阿七", th_variables=lambda scope: VARS if scope == "message" else None, **kw)


def test_get_variable_formats_like_tavernhelper():
    c = ctx()
    get = lambda path: apply_macros("{{get_message_variable::" + path + "}}", c)
    assert get("stat_data.名字") == "青梧"  # a string as it is (not quoted)
    assert get("stat_data.好感度") == '[50,"好感，0-100"]'  # JSON.stringify: compact, non-ASCII kept
    assert get("stat_data.好感度[0]") == "50" and get("stat_data.金钱") == "12"  # JavaScript numbers
    assert get("stat_data.在场") == "true"
    assert get("stat_data.没有") == "null" and get("stat_data.空") == "null"
    assert get("stat_data.物品") == '{"剑":{"耐久":3},"a.b":"点"}'  # $ keys dropped at every depth
    assert get('stat_data.物品["a.b"]') == "点" and get("stat_data.物品[&quot;a.b&quot;]") == "点"  # HTML-unescaped
    assert apply_macros("{{GET_MESSAGE_VARIABLE::stat_data.名字}}", c) == "青梧"
    assert apply_macros("{{get_chat_variable::x}}", c) == "null"  # a scope with no table reads as empty


def test_format_variable_yaml_indented_under_its_label():
    out = apply_macros("状态：{{format_message_variable::stat_data.物品}}\n完", ctx())
    assert out == "状态：剑:\n     耐久: 3\n   a.b: 点\n完"
    assert apply_macros("{{format_message_variable::stat_data.名字}}", ctx()) == "青梧"
    assert yaml_stringify({"列表": [1, "a", {"k": None}], "空表": {}, "空列": [], "真": False}) == \
        "列表:\n  - 1\n  - a\n  - k: null\n空表: {}\n空列: []\n真: false"
    assert yaml_stringify({"s": "true", "t": "", "u": "a: b", "v": "- x"}) == 's: "true"\nt: ""\nu: "a: b"\nv: "- x"'
    assert yaml_stringify({"日记": "第一行\n第二行"}) == "日记: |-\n  第一行\n  第二行"
    assert yaml_stringify([[1, 2], 3]) == "- - 1\n  - 2\n- 3"
    # two on one line: the second is indented by everything before it, the first value included
    two = apply_macros("{{format_message_variable::stat_data.好感度}} {{format_message_variable::stat_data.好感度}}", ctx())
    assert two == "- 50\n- 好感，0-100 - 50\n" + " " * 16 + "- 好感，0-100"  # 16 = len("- 50\n- 好感，0-100 ")


def test_lodash_paths():
    data = {"a": {"b": [{"c": 1}]}, "x.y": 2}
    assert lodash_get(data, "a.b[0].c") == 1 and lodash_get(data, "a.b.0.c") == 1
    assert lodash_get(data, "x.y") == 2 and lodash_get(data, "a.z", "d") == "d"
    assert lodash_get(data, "a['b'][0]['c']") == 1


def test_without_lookup_the_macros_are_kept_and_th_only_keeps_the_rest():
    text = "{{user}}：{{get_message_variable::stat_data.名字}}"
    assert apply_macros(text, MacroContext(user="阿七")) == "阿七：{{get_message_variable::stat_data.名字}}"
    c = MacroContext(user="阿七")
    assert apply_th_macros(text + "<user>", c, lambda s: VARS) == "{{user}}：青梧<user>"
    assert c.th_variables is None  # the chat's context is not changed


def test_display_text_uses_the_messages_own_snapshot(tmp_path):
    card, _ = make_card(tmp_path, [])
    d = make_chat(tmp_path, card, beats=1, reply="好感：{{get_message_variable::stat_data.好感度}}")
    chat = Chat.open(d, card, ReplayModel(actor=[]))
    item = dict(chat.transcript()[-1], variables={"stat_data": {"好感度": 7}})
    assert chat.display_text(item, 0).startswith("好感：7")
    assert chat.display_text_if_known(item, 0).startswith("好感：7")
    bare = dict(item)
    bare.pop("variables")
    assert chat.display_text(bare, 0) == "好感：null"
    assert chat.entry_text(item["id"]) == "好感：{{get_message_variable::stat_data.好感度}}"  # stored text unchanged
