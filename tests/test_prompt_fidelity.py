"""The app puts into the prompt the lore SillyTavern would (issue 14 §2): one small book of our own per wiring fix.

SillyTavern facts checked against ``world-info.js`` (``checkWorldInfo``: keys and recursion through
``substituteParams``, character filters, constants in the first pass, placement by ``order``) and ``openai.js``
(``parseExampleIntoIndividual``: example text with no ``Name:`` line yields no example turn).
"""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat import turn
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore import Lorebook
from liyuan_desktop.core.prompt.presets.model import Preset

POS = {"before_char": 0, "after_char": 1, "at_depth": 4, "em_top": 5, "em_bottom": 6}


def entry(i, title, keys, content, *, pos="before_char", order=100, constant=False, **ext):
    """A card-book entry (SillyTavern extras under ``extensions``)."""
    extensions = {"position": POS[pos], "depth": ext.pop("depth", 4), "role": ext.pop("role", 0), **ext}
    return {"id": i, "comment": title, "keys": keys, "content": content, "enabled": True, "constant": constant,
            "insertion_order": order, "extensions": extensions}


def make_card(tmp_path, entries, **data):
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "阿青", "first_mes": "你好。", "description": "阿青是渡口的船夫。", "personality": "沉默",
                    "scenario": "雨夜渡口", "character_book": {"entries": entries}, **data}}
    d = tmp_path / "card"
    d.mkdir(exist_ok=True)
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json"))


def beats(n):
    actor, scribe = [], []
    for i in range(n):
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"回{i}"}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append('{"patch": {}}')
    return ReplayModel(actor=actor, scribe=scribe)


def small_preset():
    """A preset of our own: main, the world-info markers around the description, examples, chat history."""
    prompts = [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system", "content": "主提示"},
               {"identifier": "worldInfoBefore", "name": "World Info (before)", "system_prompt": True, "marker": True},
               {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
               {"identifier": "worldInfoAfter", "name": "World Info (after)", "system_prompt": True, "marker": True},
               {"identifier": "dialogueExamples", "name": "Chat Examples", "system_prompt": True, "marker": True},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    return Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}, "小预设")


def everything(messages):
    return "\n".join(m["content"] for m in messages)


# 1 ------------------------------------------------------------------------------------------------------------
async def test_char_and_user_macros_in_keys_fire_and_recursion_scans_expanded_text(tmp_path):
    names = make_card(tmp_path, [entry(0, "名字条目", ["{{char}}"], "阿青的来历。"),
                                 entry(1, "用户条目", ["{{user}}"], "旅人的来历。")])
    r = await Chat.create(tmp_path / "n", names, beats(1), persona="旅人").send("走吧")
    # include-names on: every scanned message starts "阿青: " or "旅人: ", so keys {{char}}/{{user}} fire every turn
    assert r.activated == ["名字条目", "用户条目"]
    card = make_card(tmp_path, [
        entry(1, "灯", ["钥匙"], "{{char}}提着灯。"),
        entry(2, "提灯人", ["阿青提着灯"], "提灯的人从不说话。"),
    ])
    chat = Chat.create(tmp_path / "c", card, beats(1), persona="旅人")
    r = await chat.send("我把钥匙递过去")
    # recursion scans the expanded content of 「灯」 ("阿青提着灯"), not "{{char}}提着灯"
    assert "提灯人" in r.activated


# 2 ------------------------------------------------------------------------------------------------------------
async def test_constant_depth_entry_is_sent_once_with_a_preset(tmp_path):
    card = make_card(tmp_path, [entry(0, "格式", [], "结尾写状态栏。", pos="at_depth", depth=0, constant=True)])
    chat = Chat.create(tmp_path / "c", card, beats(1), preset=small_preset())
    assert "结尾写状态栏。" not in chat.system
    r = await chat.send("出发")
    assert everything(r.messages_sent).count("结尾写状态栏。") == 1
    assert r.messages_sent[-1] == {"role": "system", "content": "结尾写状态栏。"}


# 3 ------------------------------------------------------------------------------------------------------------
async def test_system_constants_go_through_activation(tmp_path):
    card = make_card(tmp_path, [
        entry(0, "从不", [], "概率为零的常驻。", constant=True, probability=0, useProbability=True),
        entry(1, "甲组一", [], "甲组第一条。", constant=True, group="甲组"),
        entry(2, "甲组二", [], "甲组第二条。", constant=True, group="甲组"),
        entry(3, "停用", [], "@@dont_activate\n不该出现的常驻。", constant=True),
        entry(4, "别的角色", [], "只给别的角色。", constant=True, character_filter={"names": ["别人"], "isExclude": False}),
        entry(5, "排除本卡", [], "排除阿青。", constant=True, character_filter={"names": ["阿青"], "isExclude": True}),
        entry(6, "本卡专属", [], "只给阿青。", constant=True, character_filter={"names": ["阿青"], "isExclude": False}),
        entry(7, "普通常驻", [], "雨一直下。", constant=True),
    ])
    for preset in (None, small_preset()):
        d = tmp_path / ("p" if preset else "n")
        chat = Chat.create(d, card, beats(1), preset=preset)
        assert "雨一直下。" in chat.system and "只给阿青。" in chat.system
        r = await chat.send("出发")
        sent = everything(r.messages_sent)
        for text in ("概率为零的常驻。", "不该出现的常驻。", "只给别的角色。", "排除阿青。"):
            assert text not in sent
        # an inclusion group keeps one member; a rolled member cannot sit in the byte-stable system prompt
        assert (sent.count("甲组第一条。") + sent.count("甲组第二条。")) == 1
        assert "甲组" not in chat.system
        assert "【本拍常驻设定】" in r.injection


# 4 ------------------------------------------------------------------------------------------------------------
async def test_last_message_macros_in_entry_text(tmp_path):
    card = make_card(tmp_path, [
        entry(0, "回声", [], "上一句：{{lastMessage}}", constant=True),
        entry(1, "回话", [], "她刚说：{{lastCharMessage}}", pos="at_depth", depth=0, constant=True),
    ])
    chat = Chat.create(tmp_path / "c", card, beats(2))
    assert "上一句" not in chat.system  # quotes the newest message: per beat, never in the stable prefix
    r = await chat.send("今晚过河")
    assert "上一句：今晚过河" in r.injection
    assert {"role": "system", "content": "她刚说：你好。"} in r.messages_sent  # the greeting, without our header
    r2 = await chat.send("再来")
    assert "上一句：再来" in r2.injection
    assert {"role": "system", "content": "她刚说：回0"} in r2.messages_sent


# 5 ------------------------------------------------------------------------------------------------------------
async def test_constants_follow_order(tmp_path):
    card = make_card(tmp_path, [
        entry(0, "三", [], "第三。", constant=True, order=30),
        entry(1, "一", [], "第一。", constant=True, order=10),
        entry(2, "二", [], "第二。", constant=True, order=20),
    ])
    for preset in (None, small_preset()):
        chat = Chat.create(tmp_path / ("p" if preset else "n"), card, beats(0), preset=preset)
        s = chat.system
        assert s.index("第一。") < s.index("第二。") < s.index("第三。")


# 6 ------------------------------------------------------------------------------------------------------------
async def test_before_and_after_character_lore_without_a_preset(tmp_path):
    card = make_card(tmp_path, [entry(0, "世界", [], "世界在前。", constant=True),
                                entry(1, "补充", [], "补充在后。", constant=True, pos="after_char")])
    s = Chat.create(tmp_path / "c", card, beats(0)).system
    assert s.index("世界在前。") < s.index("阿青是渡口的船夫。") < s.index("雨夜渡口") < s.index("补充在后。")


# 7 ------------------------------------------------------------------------------------------------------------
async def test_regenerate_rolls_again_but_stays_reproducible(tmp_path):
    card = make_card(tmp_path, [entry(i, f"雨{i}", ["下雨"], f"雨的第{i}种样子。", probability=50, useProbability=True)
                                for i in range(12)])
    chat = Chat.create(tmp_path / "c", card, beats(3))
    first = await chat.send("下雨了")
    again = await chat.regenerate()
    assert first.activated != again.activated  # SillyTavern re-rolls on regenerate
    # the same chat, position and attempt roll the same (tests stay deterministic)
    h = chat.history()
    a1 = [e.uid for e in turn.activate(chat, h, "下雨了", attempt=1).entries]
    a1b = [e.uid for e in turn.activate(chat, h, "下雨了", attempt=1).entries]
    assert a1 == a1b


# 8 ------------------------------------------------------------------------------------------------------------
def test_lorebook_search_returns_content_without_decorators():
    book = Lorebook.from_card_book({"entries": [entry(0, "渡口", ["渡口"], "@@activate\n渡口在河东。")]})
    hits = book.search("渡口")
    assert hits and hits[0].content == "渡口在河东。"


async def test_greeting_is_scanned_without_our_header(tmp_path):
    card = make_card(tmp_path, [entry(0, "开场词", ["开场"], "不该命中。"), entry(1, "问候", ["你好"], "问候的规矩。")],
                     first_mes="你好。")
    chat = Chat.create(tmp_path / "c", card, beats(1))
    r = await chat.send("走吧")
    assert "开场词" not in r.activated  # 【开场 · 阿青】 is Liyuan's header, not the greeting
    assert "问候" in r.activated  # the greeting itself is still scanned


async def test_no_orphan_wrapper_when_mvu_rules_leave(tmp_path):
    card = make_card(tmp_path, [
        {**entry(0, "[InitVar]初始", [], json.dumps({"好感": [0, "好感度"]}, ensure_ascii=False)), "enabled": False},
        entry(1, "格式开", [], "<Format>", pos="at_depth", depth=0, constant=True, order=1),
        entry(2, "[mvu_update]规则", [], "用 _.set 更新变量。", pos="at_depth", depth=0, constant=True, order=2),
        entry(3, "格式关", [], "</Format>", pos="at_depth", depth=0, constant=True, order=3),
        entry(4, "提醒", [], "保持第三人称。", pos="at_depth", depth=0, constant=True, order=4),
    ])
    chat = Chat.create(tmp_path / "c", card, beats(1))
    r = await chat.send("出发")
    sent = everything(r.messages_sent)
    assert "_.set" not in sent and "<Format>" not in sent and "</Format>" not in sent
    assert r.messages_sent[-1] == {"role": "system", "content": "保持第三人称。"}


async def test_example_message_lore_st_drops_stays_out(tmp_path):
    card = make_card(tmp_path, [
        entry(0, "无说话人", [], "一段没有说话人的示例。", constant=True, pos="em_top"),
        entry(1, "有说话人", [], "<START>\n{{user}}: 船开吗？\n{{char}}: 开。", constant=True, pos="em_bottom"),
    ], mes_example="<START>\n{{user}}: 你好\n{{char}}: 嗯。")
    for preset in (None, small_preset()):
        s = Chat.create(tmp_path / ("p" if preset else "n"), card, beats(0), persona="旅人", preset=preset).system
        assert "一段没有说话人的示例。" not in s
        examples = s.split("## 对话示例\n", 1)[1]
        assert examples.index("旅人: 你好") < examples.index("旅人: 船开吗？")  # em_bottom: after the card's examples
