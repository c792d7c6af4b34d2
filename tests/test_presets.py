"""SillyTavern chat-completion presets: import (repairs, refusals), the plan (system layers / after segments / depth
injections, in order), rendering for a chat (card overrides, byte-stable macros), depth insertion as ST does it."""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime

import pytest
from helpers import shared_path

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.personas import Persona
from liyuan_desktop.core.llm.types import ChatMessage
from liyuan_desktop.core.macros import MacroContext
from liyuan_desktop.core.prompt.presets.mapping import plan
from liyuan_desktop.core.prompt.presets.model import Preset, PresetError
from liyuan_desktop.core.prompt.presets.prompter import DepthBlock, PresetPrompter, insert_depth_injections
from liyuan_desktop.core.prompt.presets.store import install_preset, list_presets, load_installed_preset, load_preset

FORMATS = shared_path("fixtures", "cards", "formats")
DEFAULT = FORMATS / "openai-preset-Default.json"


def fixture_json() -> dict:
    if not DEFAULT.exists():
        pytest.skip(f"fixture {DEFAULT} not found (the shared/ folder is not beside this checkout)")
    return json.loads(DEFAULT.read_text("utf-8"))


def make_card(**data) -> "object":
    base = {"name": "青梧", "description": "{{char}}是栖水镇客栈的掌柜。", "personality": "沉静",
            "scenario": "雨夜的客栈", "first_mes": "「客官请进。」", "mes_example": "<START>\n{{user}}: 你好\n{{char}}: 嗯。",
            "character_book": {"entries": [
                {"keys": ["栖水镇"], "content": "江南小镇，{{char}}住在这里。", "constant": True, "comment": "栖水镇",
                 "enabled": True, "position": "before_char"},
                {"keys": ["渡口"], "content": "镇北渡口。", "constant": True, "comment": "渡口", "position": "after_char",
                 "enabled": True},
                {"keys": ["伞"], "content": "旧油纸伞。", "comment": "伞", "enabled": True, "position": "before_char"},
                {"keys": ["出口"], "content": "只经由 outlet 宏。", "constant": True, "comment": "出口", "enabled": True,
                 "extensions": {"position": 7}},
            ]}}
    base.update(data)
    return card_from_json({"spec": "chara_card_v2", "spec_version": "2.0", "data": base}, "test.json")


# -- the fixture -------------------------------------------------------------------------------------------------

def test_default_fixture_imports_and_keeps_everything():
    raw = fixture_json()
    p = load_preset(DEFAULT)
    assert p.name == "openai-preset-Default" and not p.warnings
    assert len(p.prompts) == 12 and p.prompt("main").content.startswith("Write {{char}}'s next reply")
    assert p.temperature == 1 and p.openai_max_tokens == 300 and p.openai_max_context == 4095 and p.seed == -1
    assert p.chat_completion_source == "openai" and p.human_sysprompt_message.startswith("Let's get started")  # extra
    assert p.to_json() == raw  # nothing lost, nothing added
    order, source = p.active_order()
    assert source == "100001" and [o.identifier for o in order][:3] == ["main", "worldInfoBefore", "personaDescription"]


def test_default_fixture_plan():
    pl = plan(load_preset(DEFAULT)) if DEFAULT.exists() else pytest.skip("fixture missing")
    assert [p.identifier for p in pl.system] == ["main", "worldInfoBefore", "personaDescription", "charDescription",
                                                 "charPersonality", "scenario", "worldInfoAfter", "dialogueExamples"]
    assert [p.marker for p in pl.system] == [False, True, True, True, True, True, True, True]
    assert [(p.identifier, p.role, p.placement) for p in pl.after] == [("jailbreak", "system", "after")]
    assert pl.depth == []
    assert {(d.identifier, d.reason) for d in pl.dropped} == {("enhanceDefinitions", "预设里是关闭的"),
                                                             ("nsfw", "内容为空")}
    assert pl.has_chat_history and pl.order_source == "100001" and pl.notes == []
    assert pl.sampling == {"temperature": 1.0} and pl.context_size == 4095
    assert "用户原话之后：Post-History Instructions（system）" in pl.describe()


def test_default_fixture_renders_card_layers_in_preset_order():
    pl = plan(load_preset(DEFAULT)) if DEFAULT.exists() else pytest.skip("fixture missing")
    card = make_card(post_history_instructions="保持第三人称。{{original}}")
    persona = Persona(name="旅人", description="一个寻人的外乡人，{{char}}不认识他。")
    pr = PresetPrompter(pl, card, ctx=MacroContext(char="青梧", user="旅人"), persona=persona, seed="chat-1")
    s = pr.system_layers
    heads = [line for line in s.split("\n") if line.startswith("#")]
    assert heads == ["# 角色卡：青梧", "## 预设 · Main Prompt", "## 常驻设定", "## 用户的角色", "## 角色设定", "## 性格",
                     "## 场景", "## 常驻设定（续）", "## 对话示例"]
    assert "Write 青梧's next reply in a fictional chat between 青梧 and 旅人." in s
    assert "【栖水镇】江南小镇，青梧住在这里。" in s and "【渡口】镇北渡口。" in s and "旧油纸伞" not in s
    assert "outlet" not in s
    assert s.index("【栖水镇】") < s.index("## 用户的角色") < s.index("【渡口】")  # before / after markers
    assert "用户扮演「旅人」。\n一个寻人的外乡人，青梧不认识他。" in s
    assert "青梧是栖水镇客栈的掌柜。" in s and "旅人: 你好" in s
    # jailbreak is empty in the preset; the card's post-history instructions replace it ({{original}} = "")
    msgs = pr.build_messages("SYS", [ChatMessage(role="assistant", content="开场")], "【世界状态】…", "你好")
    assert [(m.role, m.content) for m in msgs] == [("system", "SYS"), ("assistant", "开场"),
                                                    ("user", "【世界状态】…\n\n你好"), ("system", "保持第三人称。")]


# -- a richer preset ---------------------------------------------------------------------------------------------

def rich_preset() -> dict:
    d = fixture_json()
    d = copy.deepcopy(d)
    d["prompts"] += [
        {"identifier": "style", "name": "文风", "role": "system", "content": "文风：白描。{{setvar::tone::冷}}",
         "injection_position": 0},
        {"identifier": "userpre", "name": "用户前置", "role": "user", "content": "[开始演出]", "injection_position": 0},
        {"identifier": "cot", "name": "思维链", "role": "user", "content": "先想后写。语气{{getvar::tone}}。",
         "injection_position": 0},
        {"identifier": "prefill", "name": "预填", "role": "assistant", "content": "好的，", "injection_position": 0},
        {"identifier": "deep", "name": "深层提醒", "role": "system", "content": "记住伏笔。", "injection_position": 1,
         "injection_depth": 2, "injection_order": 100},
        {"identifier": "tip0", "name": "末尾提醒", "role": "system", "content": "现在是{{time}}。",
         "injection_position": 1, "injection_depth": 0, "injection_order": 100},
        {"identifier": "tipuser", "name": "用户提醒", "role": "user", "content": "（简短）", "injection_position": 1,
         "injection_depth": 0, "injection_order": 50},
        {"identifier": "onlycont", "name": "续写专用", "role": "system", "content": "接着写", "injection_trigger": ["continue"]},
        {"identifier": "ext", "name": "扩展占位", "marker": True},
        {"identifier": "orphan", "name": "不在顺序里", "role": "system", "content": "x"},
    ]
    for p in d["prompts"]:
        if p["identifier"] == "main":
            p["content"] = "主提示 {{random::甲::乙::丙}} {{date}}"
        if p["identifier"] == "jailbreak":
            p["content"] = "收尾要求"
            p["forbid_overrides"] = True
    order = [
        {"identifier": "main", "enabled": True},
        {"identifier": "style", "enabled": True},
        {"identifier": "userpre", "enabled": True},
        {"identifier": "charDescription", "enabled": True},
        {"identifier": "worldInfoBefore", "enabled": False},
        {"identifier": "ext", "enabled": True},
        {"identifier": "deep", "enabled": True},
        {"identifier": "missing-one", "enabled": True},
        {"identifier": "chatHistory", "enabled": True},
        {"identifier": "dialogueExamples", "enabled": True},
        {"identifier": "jailbreak", "enabled": True},
        {"identifier": "tip0", "enabled": True},
        {"identifier": "tipuser", "enabled": True},
        {"identifier": "cot", "enabled": True},
        {"identifier": "onlycont", "enabled": True},
        {"identifier": "prefill", "enabled": True},
    ]
    d["prompt_order"] = [po for po in d["prompt_order"] if po["character_id"] != 100001]
    d["prompt_order"].append({"character_id": 100001, "order": order})
    return d


def test_rich_plan_places_every_prompt():
    pl = plan(Preset.from_json(rich_preset(), "rich"))
    assert [p.identifier for p in pl.system] == ["main", "style", "userpre", "charDescription", "dialogueExamples"]
    assert [(p.identifier, p.role) for p in pl.after] == [("jailbreak", "system"), ("cot", "user"), ("prefill", "assistant")]
    assert [(p.identifier, p.depth, p.order, p.role) for p in pl.depth] == [
        ("deep", 2, 100, "system"), ("tip0", 0, 100, "system"), ("tipuser", 0, 50, "user")]
    reasons = {d.identifier: d.reason for d in pl.dropped}
    assert reasons["worldInfoBefore"] == "预设里是关闭的"
    assert "扩展" in reasons["ext"] and "prompts 里没有" in reasons["missing-one"]
    assert "continue" in reasons["onlycont"] and reasons["orphan"] == "不在当前使用的顺序表里"
    assert any("用户前置" in n and "user" in n for n in pl.notes)
    assert any("对话历史之后" in n and "Chat Examples" in n for n in pl.notes)
    # a continue generation takes the continue-only prompt
    assert "onlycont" in [p.identifier for p in plan(Preset.from_json(rich_preset(), "rich"), "continue").after]


def test_rich_render_overrides_macros_and_tail():
    pl = plan(Preset.from_json(rich_preset(), "rich"))
    card = make_card(system_prompt="卡的系统提示（原：{{original}}）", post_history_instructions="卡的收尾",
                     extensions={"depth_prompt": {"prompt": "角色笔记：{{char}}怕火。", "depth": 0, "role": "system"}})
    persona = Persona(name="旅人", description="外乡人", position="at_depth", depth=2, role="user")
    created = datetime(2024, 10, 18, 15, 7)
    ctx = MacroContext(char="青梧", user="旅人", clock=lambda: created)  # the chat's clock, frozen at its creation
    a = PresetPrompter(pl, card, ctx=ctx, persona=persona, seed="chat-A")
    s = a.system_layers
    assert "## 卡作者的系统提示\n卡的系统提示（原：主提示 " in s  # main replaced by the card, {{original}} = preset text
    # one engine (SillyTavern): the date is expanded — once per chat, from the chat's clock, so still byte-stable
    assert "October 18, 2024）" in s and "{{date}}" not in s and any("{{date}}" in w for w in a.warnings)
    assert any("{{random" in w for w in a.warnings)
    assert "## 预设 · 文风\n文风：白描。" in s and "## 预设 · 用户前置\n[开始演出]" in s
    assert "## 用户的角色\n用户扮演「旅人」。" in s and "外乡人" not in s  # at-depth persona is not in the system
    # byte-stable: the same chat seed renders the same bytes; {{random}} is fixed per chat
    assert PresetPrompter(pl, card, ctx=ctx, persona=persona, seed="chat-A").system_layers == s
    picks = {PresetPrompter(pl, card, ctx=ctx, persona=persona, seed=f"chat-{i}").system_layers.split("原：主提示 ")[1][0]
             for i in range(30)}
    assert picks <= {"甲", "乙", "丙"} and len(picks) > 1
    now = datetime(2024, 10, 18, 20, 52)
    history = [ChatMessage(role="assistant", content="开场"), ChatMessage(role="user", content="u1"),
               ChatMessage(role="assistant", content="a1")]
    msgs = a.build_messages("SYS", history, "INJ", "u2", now=now, rng=random.Random(1))
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "SYS"),
        ("assistant", "开场"),
        ("user", "u1"),
        ("user", "外乡人"),             # depth 2 = before the last two messages; persona (order 100, role user)
        ("system", "记住伏笔。"),       # same depth and order: roles run assistant, user, system
        ("assistant", "a1"),
        ("user", "INJ\n\nu2"),
        ("user", "（简短）"),           # depth 0, order 50 first
        ("system", "现在是8:52 PM。\n角色笔记：青梧怕火。"),  # depth 0, order 100: preset then the card's note
        ("system", "收尾要求"),          # jailbreak: forbid_overrides keeps the preset text
        ("user", "先想后写。语气冷。"),  # variable set in a system layer, read in the tail
        ("assistant", "好的，"),
    ]
    assert history[-1].content == "a1" and len(history) == 3  # not mutated


def test_disabled_main_drops_the_card_system_prompt():
    d = rich_preset()
    for po in d["prompt_order"]:
        if po["character_id"] == 100001:
            po["order"][0]["enabled"] = False
    pl = plan(Preset.from_json(d, "x"))
    s = PresetPrompter(pl, make_card(system_prompt="卡的系统提示"), ctx=MacroContext(char="青梧", user="旅人")).system_layers
    assert "卡的系统提示" not in s and "Main Prompt" not in s


def test_without_100001_list_the_default_order_is_used():
    d = fixture_json()
    d["prompt_order"] = [po for po in d["prompt_order"] if po["character_id"] == 100000]
    pl = plan(Preset.from_json(d, "old"))
    assert pl.order_source == "default"
    assert any("100000" in n for n in pl.notes)
    assert [p.identifier for p in pl.system][:3] == ["main", "worldInfoBefore", "personaDescription"]


def test_no_chat_history_marker_puts_everything_in_system():
    d = rich_preset()
    for po in d["prompt_order"]:
        if po["character_id"] == 100001:
            po["order"] = [o for o in po["order"] if o["identifier"] != "chatHistory"]
    pl = plan(Preset.from_json(d, "x"))
    assert not pl.has_chat_history and pl.after == [] and "cot" in [p.identifier for p in pl.system]
    assert any("chatHistory" in n for n in pl.notes)


# -- import repairs and refusals ---------------------------------------------------------------------------------

def test_repairs_are_reported():
    d = {"temperature": "hot", "top_p": "0.9", "prompts": [
        "not an object",
        {"name": "无 id", "content": "a", "role": "narrator"},
        {"identifier": "x", "content": "first"},
        {"identifier": "x", "content": "second"},
        {"identifier": "y", "content": {"a": 1}, "injection_depth": "deep", "injection_position": 7},
    ], "prompt_order": [{"character_id": 100001, "order": [{"identifier": "x"}, {"identifier": "y", "enabled": True}, 5]},
                        "junk"]}
    p = Preset.from_json(d, "bad")
    text = "\n".join(p.warnings)
    for needle in ("第 1 项不是对象", "没有 identifier", "narrator", "identifier 重复", "temperature", "deep",
                   "injection_position 7", "没写 enabled", "不是 {identifier, enabled}", "prompt_order 第 2 项"):
        assert needle in text, needle
    assert p.temperature is None and p.top_p == 0.9
    assert p.prompt("x").content == "first" and p.prompt("y").content == '{"a": 1}' and p.prompt("y").injection_depth == 4
    assert p.prompt("prompt-2").role == "system"
    pl = plan(p)
    assert [d.reason for d in pl.dropped if d.identifier == "x"] == ["预设里是关闭的"]  # missing flag = disabled (ST)


def test_legacy_root_prompts_are_migrated():
    p = Preset.from_json({"main_prompt": "旧主提示", "jailbreak_prompt": "旧越狱", "temperature": 0.8}, "legacy")
    assert p.prompt("main").content == "旧主提示" and p.prompt("jailbreak").content == "旧越狱"
    assert any("旧式预设" in w for w in p.warnings)
    pl = plan(p)
    assert pl.order_source == "default" and [x.identifier for x in pl.after] == ["jailbreak"]


@pytest.mark.parametrize("obj,needle", [
    ({"spec": "chara_card_v3", "data": {"name": "A", "first_mes": "hi"}}, "角色卡"),
    ({"name": "A", "description": "d", "first_mes": "hi", "personality": "", "scenario": "", "mes_example": ""}, "角色卡"),
    ({"entries": {"0": {"key": ["a"], "content": "x"}}}, "世界书"),
    ({"user_name": "u", "character_name": "c", "create_date": "x"}, "聊天记录"),
    ({"input_sequence": "<|user|>", "output_sequence": "<|assistant|>"}, "instruct"),
    ({"story_string": "{{description}}"}, "context"),
    ({"temp": 0.7, "rep_pen": 1.1, "genamt": 200}, "文本补全"),
    ({"power_user": {}}, "设置文件"),
    ({"foo": 1}, "不像"),
    ([1, 2], "不是 JSON 对象"),
])
def test_other_files_are_refused_by_name(obj, needle):
    with pytest.raises(PresetError) as ei:
        Preset.from_json(obj, "thing.json")
    assert needle in str(ei.value) and "thing.json" in str(ei.value)


def test_refused_fixture_files(tmp_path):
    if not (FORMATS / "Eldoria.json").exists():
        pytest.skip("fixtures missing")
    with pytest.raises(PresetError, match="世界书"):
        load_preset(FORMATS / "Eldoria.json")
    with pytest.raises(PresetError, match="PNG"):
        load_preset(FORMATS.parent / "default_Seraphina.png")
    with pytest.raises(PresetError, match="角色卡"):
        load_preset(FORMATS.parent / "角色卡_修女与女忍的双面日常.json")
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"user_name": "a"}\n{"mes": "b"}\n', "utf-8")
    with pytest.raises(PresetError, match="jsonl"):
        load_preset(bad)
    with pytest.raises(PresetError, match="无法读取"):
        load_preset(tmp_path / "missing.json")


def test_sampling_and_install(tmp_path):
    d = fixture_json()
    d.update({"temperature": 0.7, "top_p": 0.95, "frequency_penalty": 0.2, "top_k": 40, "min_p": 0.05, "seed": 7,
              "repetition_penalty": 1.1, "proxy_password": "secret", "custom_url": "http://x"})
    src = tmp_path / "我的预设.json"
    src.write_text(json.dumps(d, ensure_ascii=False), "utf-8")
    p = install_preset(src)
    assert p.sampling() == {"temperature": 0.7, "top_p": 0.95, "frequency_penalty": 0.2, "seed": 7, "top_k": 40,
                            "min_p": 0.05, "repetition_penalty": 1.1}
    assert p.sampling(include_max_tokens=True)["max_tokens"] == 300
    assert list_presets() == ["我的预设"]
    again = load_installed_preset("我的预设")
    assert "proxy_password" not in again.raw and "custom_url" not in again.raw and again.temperature == 0.7


# -- depth insertion and macros ----------------------------------------------------------------------------------

def test_depth_insertion_matches_sillytavern():
    # the same case as ST's populationInjectionPrompts (2025): orders high→low spliced into the reversed chat
    history = [ChatMessage(role="user", content="old"), ChatMessage(role="assistant", content="reply"),
               ChatMessage(role="user", content="new")]
    blocks = [DepthBlock(depth=0, order=100, role="system", text="A"),
              DepthBlock(depth=0, order=100, role="assistant", text="B"),
              DepthBlock(depth=0, order=50, role="user", text="C"),
              DepthBlock(depth=2, order=100, role="system", text="D"),
              DepthBlock(depth=50, order=100, role="system", text="E"),
              DepthBlock(depth=0, order=100, role="system", text="A2 "),
              DepthBlock(depth=1, order=100, role="user", text="")]
    out = insert_depth_injections(history, blocks)
    assert [m.content for m in out] == ["E", "old", "D", "reply", "new", "C", "B", "A\nA2"]
    assert [m.content for m in history] == ["old", "reply", "new"]
    assert insert_depth_injections(history, []) == history


def tiny_preset(main: str, after: str = "") -> Preset:
    """A preset with a main prompt, the chat history and (optionally) one system prompt after it."""
    prompts = [{"identifier": "main", "name": "Main Prompt", "role": "system", "content": main},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}]
    order = [{"identifier": "main", "enabled": True}, {"identifier": "chatHistory", "enabled": True}]
    if after:
        prompts.append({"identifier": "tail", "name": "尾", "role": "system", "content": after})
        order.append({"identifier": "tail", "enabled": True})
    return Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}, "tiny")


def test_preset_macros_system_layers_once_per_chat_tail_fresh():
    # preset text goes through the one engine (tests/test_macros.py covers the engine itself)
    created = datetime(2024, 10, 18, 15, 7)
    ctx = MacroContext(char="青梧", user="旅人", clock=lambda: created)
    pl = plan(tiny_preset("{{ char }}于{{date}}。{{setvar::x::{{char}}}}[{{lastMessage}}]",
                          after="{{time}} {{getvar::x}} {{lastMessage}} {{random::a::b}}"))
    pr = PresetPrompter(pl, make_card(), ctx=ctx, seed="chat-1")
    assert "## 预设 · Main Prompt\n青梧于October 18, 2024。[]" in pr.system_layers
    assert any("{{date}}" in w for w in pr.warnings) and any("{{lastmessage}}" in w for w in pr.warnings)
    assert PresetPrompter(pl, make_card(), ctx=ctx, seed="chat-1").system_layers == pr.system_layers
    now = datetime(2024, 1, 5, 9, 3, 7)
    rng = random.Random(3)
    seen = {pr.tail(user_text="你好", now=now, rng=rng).after[0].content for _ in range(40)}
    assert seen == {"9:03 AM 青梧 你好 a", "9:03 AM 青梧 你好 b"}  # evaluated now, each beat afresh
