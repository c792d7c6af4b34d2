"""EJS prompt templates (ST-Prompt-Template) and TavernHelper's variable macros in prompts (issue 14 §4).

Cards of our own in the shapes real Chinese cards use: phase-gated guidance by an MVU variable in a constant entry
(with ``<%_ … _%>`` whitespace control), a status-output template, nested ``getvar`` with defaults, an @depth entry
quoting ``{{get_message_variable::stat_data}}`` and a constant ``{{format_message_variable::stat_data}}``, a keyed
entry whose template outputs nothing, and one template that throws. The prompt sent holds no ``<%`` and no
TavernHelper macro, only the phase reached, and the one that throws is named in a notice.
"""

from __future__ import annotations

import json

from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.macros import MacroContext, apply_macros
from liyuan_desktop.core.macros.ejs import TemplateEnv, check_template, has_template, merge_tables

# ---- the template language -------------------------------------------------------------------------------------

def _render(text: str, **values) -> tuple[str, list[str]]:
    env = TemplateEnv()
    env.update(**values)
    return env.render(text), env.take_notices()


def test_tags_escape_raw_comment_and_literal():
    out, notes = _render("a<%= '<b>&\"x\\'' %>b<%- '<i>' %>c<%# hidden %>d<%% e %%>f<%- undefined %><%= null %>g")
    assert out == "a&lt;b&gt;&amp;&#34;x&#39;b<i>cd<% e %>fg"
    assert notes == []


def test_whitespace_control_as_ejs():
    text = "start\n  <%_ if (true) { _%>\n  kept\n  <%_ } _%>\nend <%- 1 -%>\nnext<% if (1) { -%>\n  x\n<% } %>"
    out, _ = _render(text)
    assert out == "start\n  kept\nend 1next  x\n"


def test_print_define_await_and_lodash():
    out, notes = _render("<% print('p', 1) %>|<% define('twice', function (k) { return this.getvar(k) * 2 }) %>"
                         "<%- twice('stat_data.n') %>|<%- await Promise.resolve(7) %>|<%- _.sum([1, 2, 3]) %>",
                         message={"stat_data": {"n": 4}})
    assert (out, notes) == ("p1|8|7|6", [])


def test_getvar_paths_scopes_defaults_and_setvar_stay_in_the_beat():
    values = dict(message={"stat_data": {"角色": {"林": {"好感": 30}}}}, chat={"章节": 2, "stat_data": {"x": 1}},
                  global_={"章节": 1, "g": "全局"})
    text = ("<%- getvar('stat_data.角色.林.好感') %>|<%- getvar('stat_data.角色.周.好感', {defaults: "
            "getvar('stat_data.默认好感', {defaults: 5})}) %>|<%- getvar('章节') %>|<%- getvar('章节', {scope: 'global'}) %>"
            "|<%- getvar('g') %>|<%- variables.stat_data.x %>|<% setvar('临时', 3) %><%- getvar('临时') %>"
            "|<%- incvar('临时', 2) %>|<%- getvar('临时', {scope: 'message'}) %>")
    out, notes = _render(text, **values)
    assert notes == []
    assert out == "30|5|2|1|全局|1|3|5|5"
    assert values["message"] == {"stat_data": {"角色": {"林": {"好感": 30}}}}  # not saved into the tables


def test_merge_tables_is_lodash_merge():
    assert merge_tables({"a": {"b": 1, "c": [1, 2]}}, {"a": {"c": [9]}, "d": None}) == {"a": {"b": 1, "c": [9, 2]}, "d": None}


def test_failures_give_nothing_and_a_notice():
    for bad, why in [("<% throw new Error('坏了') %>", "坏了"), ("<% if ( %>x", "SyntaxError"),
                     ("x <% never closed", "没有闭合"), ("<% while (true) {} %>", "超时")]:
        out, notes = _render("前" + bad)
        assert out == ""
        assert len(notes) == 1 and why in notes[0], (bad, notes)
    assert check_template("<% if ( %>") and check_template("<% ok() %>") is None and "没有闭合" in check_template("<% a")
    assert has_template("a <% b %>") and not has_template("a <%% b")


def test_sandbox_has_no_host_access():
    out, notes = _render("<%- typeof require %>|<%- typeof fetch %>|<%- typeof XMLHttpRequest %>|<%- typeof os %>")
    assert out == "undefined|undefined|undefined|undefined" and notes == []


def test_apply_macros_evaluates_templates_after_macros_only_with_an_env():
    env = TemplateEnv()
    env.update(message={"stat_data": {"好感": 9}})
    text = "<%- '{{char}}' %>:<%- stat_data.好感 %> {{get_message_variable::stat_data.好感}}"
    assert apply_macros(text, MacroContext(char="林")) == "<%- '林' %>:<%- stat_data.好感 %> {{get_message_variable::stat_data.好感}}"
    ctx = MacroContext(char="林", ejs=env, th_variables=env.th_lookup)
    assert apply_macros(text, ctx) == "林:9 9"


# ---- a chat -----------------------------------------------------------------------------------------------------

PHASES = ("<%_ if (getvar('stat_data.阶段', {defaults: 1}) == 1) { _%>\n【阶段一】相识：她还不认识你。\n"
          "<%_ } else if (getvar('stat_data.阶段') == 2) { _%>\n【阶段二】心动：她开始在意你。\n"
          "<%_ } else { _%>\n【阶段三】结局：真相揭开。\n<%_ } _%>")
STATUS = "当前好感：<%- stat_data.好感 %>，称呼：<%- getvar('stat_data.称呼.' + user, {defaults: getvar('stat_data.默认称呼', {defaults: '客人'})}) %>"


def _entry(i, title, content, constant=True, keys=(), **ext):
    return {"id": i, "comment": title, "keys": list(keys), "content": content, "enabled": True, "constant": constant,
            "insertion_order": 100 + i, "extensions": {"position": 0, **ext}}


def _card(tmp_path):
    entries = [
        {"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False, "insertion_order": 1, "extensions": {},
         "content": json.dumps({"阶段": 1, "好感": 10, "默认称呼": "旅人"}, ensure_ascii=False)},
        _entry(1, "阶段指引", PHASES),
        _entry(2, "状态输出", STATUS),
        _entry(3, "变量总览", "<status>\n{{format_message_variable::stat_data}}\n</status>"),
        _entry(4, "深度变量", "变量：{{get_message_variable::stat_data}}", position=4, depth=1),
        _entry(5, "空输出", "<%_ if (getvar('stat_data.阶段') > 5) { _%>不会出现<%_ } _%>", constant=False, keys=["灯"]),
        _entry(6, "会出错", "<% null.boom() %>", constant=False, keys=["灯"]),
        _entry(7, "普通", "灯是铜做的。", constant=False, keys=["灯"]),
    ]
    data = {"name": "林", "first_mes": "你好。", "description": "林是<%- getvar('stat_data.阶段') == 1 ? '陌生人' : '熟人' %>。",
            "character_book": {"entries": entries}}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))


def _model(*patches):
    actor, scribe = [], []
    for i, p in enumerate(patches):
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"第{i}拍。"}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append(json.dumps({"patch": {}, "mvu_patch": p}, ensure_ascii=False))
    return ReplayModel(actor=actor, scribe=scribe)


def _sent(messages) -> str:
    return "\n\n".join(m.content or "" for m in messages)


async def test_chat_prompt_has_no_template_left_and_only_the_phase_reached(tmp_path):
    chat = Chat.create(tmp_path / "c", _card(tmp_path), _model({"阶段": 2, "好感": 40}, {}), persona="阿宁")
    _inj, titles, messages, _s, _p = chat.prepare("我提着灯进门。")
    text = _sent(messages)
    assert "<%" not in text and "%>" not in text
    assert "_variable::" not in text
    assert "【阶段一】相识" in text and "阶段二" not in text and "阶段三" not in text
    assert "当前好感：10，称呼：旅人" in text
    assert "林是陌生人。" in text
    assert "<status>\n阶段: 1\n好感: 10\n默认称呼: 旅人\n</status>" in text  # TavernHelper's YAML
    assert '变量：{"阶段":1,"好感":10,"默认称呼":"旅人"}' in text  # JSON.stringify, at its depth
    # keyed hits are offered by title: an entry whose template renders nothing (or fails) is not offered
    assert titles == ["普通"] and "不会出现" not in text
    assert any("世界书「会出错」" in n and "模板出错" in n for n in chat.pending_notices)
    # the beat played: the notice reaches the activity list, the templates are on the beat entry
    seen = []
    await chat.send("我提着灯进门。", on_event=seen.append)
    notes = [e.text for e in seen if isinstance(e, Activity)]
    assert any("会出错" in t and "TypeError" in t for t in notes)
    beat = chat.tree.latest("beat")
    rendered = {t["label"]: t for t in beat.templates}
    assert rendered["世界书「阶段指引」"]["output"].startswith("【阶段一】")
    assert "error" in rendered["世界书「会出错」"]
    # the prompt inspector marks the templates and what they rendered to
    from liyuan_desktop.ui.roleplay.inspector import call_text

    reply = [i for i in chat.transcript() if i["role"] == "assistant"][-1]
    shown = call_text(chat.inspect_beat(reply["id"])[0])
    assert "✓ 世界书「阶段指引」 →" in shown and "✗ 世界书「会出错」" in shown and "· 世界书「空输出」" in shown
    # the scribe moved the story to phase 2: the next prompt holds phase 2 only
    _inj, _t, messages, _s, _p = chat.prepare("再往前走。")
    text = _sent(messages)
    assert "【阶段二】心动" in text and "阶段一" not in text and "<%" not in text
    assert "当前好感：40" in text and "林是熟人。" in text


async def test_system_prefix_is_stable_while_values_do_not_change(tmp_path):
    chat = Chat.create(tmp_path / "c", _card(tmp_path), _model({}, {"阶段": 3}, {}))
    first = chat.prepare("一")[2][0].content
    await chat.send("一")
    second = chat.prepare("二")[2][0].content
    assert first == second  # nothing changed: byte-identical system prompt (prefix cache)
    await chat.send("二")
    third = chat.prepare("三")[2][0].content
    assert third != second and "【阶段三】结局" in third and "<%" not in third
    # the inspector shows each beat's system prompt as it was sent
    beats = [e for e in chat.tree.entries.values() if e.type == "beat"] if isinstance(chat.tree.entries, dict) else \
        [e for e in chat.tree.entries if e.type == "beat"]
    reply = [i for i in chat.transcript() if i["role"] == "assistant"][-1]
    calls = chat.inspect_beat(reply["id"])
    assert calls[0]["request"]["messages"][0]["content"] == second
    assert len(beats) == 2


async def test_prompt_regex_replacement_evaluates_templates_with_the_beats_values(tmp_path):
    card = _card(tmp_path)
    card.raw["data"].setdefault("extensions", {})["regex_scripts"] = [
        {"id": "r1", "scriptName": "好感标记", "findRegex": "/【好感】/g", "replaceString": "好感=<%- stat_data.好感 %>",
         "placement": [2], "promptOnly": True, "markdownOnly": False, "disabled": False}]
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "她笑了。【好感】"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=[json.dumps({"patch": {}, "mvu_patch": {"好感": 55}})])
    chat = Chat.create(tmp_path / "c", card, model)
    chat.set_scripts_allowed(True, remember=False)
    await chat.send("一")
    text = _sent(chat.prepare("二")[2])
    assert "她笑了。好感=55" in text and "<%" not in text


def test_card_inspect_lists_templates_and_the_ones_that_do_not_compile(tmp_path):
    from liyuan_desktop.core.cards.inspect import format_inspect, inspect_loaded

    card = _card(tmp_path)
    card.character_book["entries"].append(_entry(9, "写坏了", "<% if ( { %>"))
    info = inspect_loaded(card)
    t = info["templates"]
    assert t["ejs"] == 6 and t["tavernhelper_macros"] == 2 and "角色设定" in t["where"]
    assert [b["where"] for b in t["broken"]] == ["世界书「写坏了」"]
    assert "写坏了" in format_inspect(info)


async def test_display_evaluates_a_messages_templates_with_its_own_variables(tmp_path):
    card = _card(tmp_path)
    card.first_mes = "初见。好感<%- stat_data.好感 %>"
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0,
                                                 "content": "她回头。好感<%- stat_data.好感 %><% oops( %>"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=[json.dumps({"patch": {}, "mvu_patch": {"好感": 60}})])
    chat = Chat.create(tmp_path / "c", card, model)
    await chat.send("一")
    items = chat.transcript()
    opening = items[0]
    assert chat.context.display_text_if_known(opening, 2) is None  # templates never run on the UI thread
    assert chat.context.display_text(opening, 2).startswith("【开场 · 林】\n初见。好感10")  # its own snapshot
    reply = items[-1]
    assert "<% oops(" in chat.context.display_text(reply, 0)  # a failing template: shown as written
    # in the prompt the reply's templates are evaluated (the failing one sends nothing of that message)
    text = _sent(chat.prepare("二")[2])
    assert "<%" not in text and "初见" in text
    assert any("第 " in n and "条消息" in n for n in chat.pending_notices)


async def test_preset_prompts_are_templates_too(tmp_path):
    from liyuan_desktop.core.prompt.presets.model import Preset

    prompts = [{"identifier": "main", "name": "Main Prompt", "role": "system",
                "content": "主线：<%- getvar('stat_data.阶段') == 1 ? '序章' : '后章' %>｜<%- await getpreset('附注') %>"},
               {"identifier": "note", "name": "附注", "role": "system", "content": "附注<%- 1 + 1 %>"},
               {"identifier": "tail", "name": "尾", "role": "system", "content": "尾：好感<%- stat_data.好感 %>"}]
    order = [{"identifier": i, "enabled": True} for i in ("main", "charDescription", "worldInfoBefore", "chatHistory", "tail")]
    preset = Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}, "p")
    chat = Chat.create(tmp_path / "c", _card(tmp_path), _model({"阶段": 2, "好感": 70}, {}), preset=preset)
    text = _sent(chat.prepare("一")[2])
    assert "主线：序章｜附注2" in text and "尾：好感10" in text and "<%" not in text
    await chat.send("一")
    text = _sent(chat.prepare("二")[2])
    assert "主线：后章｜附注2" in text and "尾：好感70" in text and "<%" not in text
