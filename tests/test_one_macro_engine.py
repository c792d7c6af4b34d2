"""One macro engine (issue 12): the same macro text gives the same result wherever SillyTavern would expand it — a
card field, a greeting, a world-info entry (constant in the system prompt, @depth placed in the chat), a preset
prompt (system layer and after segment), a regex script's replace string and the agent rules. Spaces inside the
braces, nesting (inner first), variables, unknown macros kept verbatim, comments and ``{{trim}}`` included."""

from __future__ import annotations

import json
from datetime import datetime

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.regex_scripts import RegexScript, run_script
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.macros import MacroContext, apply_macros
from liyuan_desktop.core.prompt.assemble import agent_system_prompt
from liyuan_desktop.core.prompt.presets.mapping import plan
from liyuan_desktop.core.prompt.presets.model import Preset
from liyuan_desktop.core.prompt.presets.prompter import PresetPrompter

#: spaces inside the braces, a nested setvar read back, an unknown macro, a comment, a name in another case
TEXT = "{{ char }}|{{setvar::x::{{char}}}}{{getvar::x}}|{{get_message_variable::stat.hp}}|{{// note {{char}} }}|{{ User }}"
EXPECTED = "Alice|Alice|{{get_message_variable::stat.hp}}||Bob"
#: In a chat's prompt TavernHelper's variable macros resolve too (issue 14 §4: no TavernHelper macro reaches the
#: model): a path the message's variables lack is ``null``, as TavernHelper's JSON.stringify writes it.
IN_PROMPT = EXPECTED.replace("{{get_message_variable::stat.hp}}", "null")
TRIM = "甲\n\n{{trim}}\n乙"
TRIMMED = "甲乙"


def _card(tmp_path, **data):
    entries = [
        {"id": 0, "comment": "常驻", "keys": [], "content": TEXT, "enabled": True, "constant": True,
         "insertion_order": 100, "extensions": {"position": 0}},
        {"id": 1, "comment": "伞", "keys": ["伞"], "content": TEXT, "enabled": True, "constant": False,
         "insertion_order": 100, "extensions": {"position": 4, "depth": 0, "role": 0}},
    ]
    # a Chinese chat (the card's text is macros, which alone would read as English: issue 32 gives an English
    # chat English section titles)
    base = {"name": "Alice", "first_mes": TEXT, "description": TEXT, "scenario": TRIM,
            "character_book": {"entries": entries, "recursive_scanning": False},
            "extensions": {"liyuan": {"language": "zh"}}}
    base.update(data)
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": base}
    d = tmp_path / "card"
    d.mkdir(exist_ok=True)
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json"))


def _model(beats: int = 1) -> ReplayModel:
    actor, scribe = [], []
    for i in range(beats):
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"回{i}"}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append('{"patch": {}}')
    return ReplayModel(actor=actor, scribe=scribe)


def _preset(main: str, after: str = "") -> Preset:
    prompts = [{"identifier": "main", "name": "Main Prompt", "role": "system", "content": main},
               {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
               {"identifier": "scenario", "name": "Scenario", "system_prompt": True, "marker": True},
               {"identifier": "worldInfoBefore", "name": "World Info (before)", "system_prompt": True, "marker": True},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}]
    order = [{"identifier": i, "enabled": True} for i in ("main", "charDescription", "scenario", "worldInfoBefore",
                                                          "chatHistory")]
    if after:
        prompts.append({"identifier": "tail", "name": "尾", "role": "system", "content": after})
        order.append({"identifier": "tail", "enabled": True})
    return Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}, "one")


def test_the_engine_itself():
    ctx = MacroContext(char="Alice", user="Bob")
    assert apply_macros(TEXT, ctx) == EXPECTED
    assert apply_macros(TRIM, ctx) == TRIMMED
    assert apply_macros("{{ random :: {{char}} }}", ctx) == "Alice"  # spaces around :: ignored, nested value whole


async def test_card_field_greeting_and_world_info_through_a_chat(tmp_path):
    chat = Chat.create(tmp_path / "c", _card(tmp_path), _model(), persona="Bob")
    assert f"## 角色设定\n{IN_PROMPT}" in chat.system  # card field
    assert f"## 场景\n{TRIMMED}" in chat.system
    assert f"【常驻】{IN_PROMPT}" in chat.system  # constant world info
    assert chat.transcript()[0]["text"].endswith(EXPECTED)  # greeting (stored; the view resolves TavernHelper's)
    r = await chat.send("撑伞")
    assert r.messages_sent[-1] == {"role": "system", "content": IN_PROMPT}  # keyed @depth world info, in the chat


async def test_preset_prompt_through_a_chat_gives_the_same(tmp_path):
    preset = _preset(TEXT + "\n" + TRIM, after=TEXT)
    chat = Chat.create(tmp_path / "c", _card(tmp_path), _model(), persona="Bob", preset=preset)
    assert f"## 预设 · Main Prompt\n{IN_PROMPT}\n{TRIMMED}" in chat.system  # a preset system layer
    assert f"## 角色设定\n{IN_PROMPT}" in chat.system and f"【常驻】{IN_PROMPT}" in chat.system  # markers filled
    r = await chat.send("你好")
    assert r.messages_sent[-1] == {"role": "system", "content": IN_PROMPT}  # an after segment, rendered per beat


def test_preset_prompter_directly():
    pl = plan(_preset(TEXT))
    card = card_from_json({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Alice"}}, "a.json")
    pr = PresetPrompter(pl, card, ctx=MacroContext(char="Alice", user="Bob", clock=lambda: datetime(2024, 1, 1)))
    assert f"## 预设 · Main Prompt\n{EXPECTED}" in pr.system_layers


def test_regex_replace_string_and_agent_rules():
    ctx = MacroContext(char="Alice", user="Bob")
    script = RegexScript(findRegex="/X/", replaceString=TEXT)
    assert run_script(script, "[X]", macros_ctx=ctx) == f"[{EXPECTED}]"
    rules = agent_system_prompt(cwd="/w", card_path="c.json", story_dir="s", card_agents=TEXT + "\n" + TRIM,
                                ctx=MacroContext(char="Alice", user="Bob"))
    assert f"{EXPECTED}\n{TRIMMED}" in rules
