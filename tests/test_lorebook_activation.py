"""World-info activation against SillyTavern's rules (../shared/design/cards.md §2.3, world-info.js checkWorldInfo).

Every expected result below was worked out by hand from those rules; the comments give the reasoning. Defaults in
force unless a test says otherwise: scan depth 2, recursion on (new-install ST), case-insensitive, whole words on,
messages scanned newest first as "Name: text".
"""

from __future__ import annotations

import copy
import json
import math
import random
import re

import pytest
from helpers import need_shared, shared_path

from liyuan_desktop.core.lore import (
    ActivationOptions,
    JsRegexUnsupported,
    Lorebook,
    LoreEntry,
    ScanMessage,
    TimedEffects,
    approx_tokens,
    budget_from_context,
    key_matches,
    merge_books,
    translate_js_regex,
)
from liyuan_desktop.core.lore import keys as lore_keys
from liyuan_desktop.core.macros import MacroContext, apply_macros

ELDORIA = shared_path("fixtures", "cards", "formats", "Eldoria.json")


def M(name: str, text: str) -> ScanMessage:
    return ScanMessage(name=name, text=text)


def titles(book: Lorebook, msgs, **kw) -> list[str]:
    return [e.title for e in book.activate(msgs)] if not kw else [e.title for e in book.activate_detailed(msgs, ActivationOptions(**kw)).keyed(book.entries)]


def card_entry(uid: int, title: str, keys, content: str = "", order: int = 100, **ext) -> dict:
    """A V2 card-book entry; SillyTavern extras go to ``extensions`` (snake_case, except selectiveLogic and
    useProbability which ST keeps camelCase). Top-level overrides via a ``top`` dict in ext."""
    top = ext.pop("top", {})
    e = {"id": uid, "keys": list(keys), "content": content or f"{title}。", "enabled": True, "insertion_order": order,
         "comment": title, "selective": True, "constant": False, "secondary_keys": [], "position": "before_char",
         "extensions": dict(ext)}
    e.update(top)
    return e


def book_of(entries, recursive: bool = False, scan_depth: int = 2, name: str = "测试书") -> Lorebook:
    return Lorebook.from_card_book({"name": name, "scan_depth": scan_depth, "recursive_scanning": recursive,
                                    "entries": entries}, name)


# ---------------------------------------------------------------------------------------------------------------
# Eldoria (a SillyTavern World Info file)
# ---------------------------------------------------------------------------------------------------------------
# Entries (all order 100, position 0, selective, no secondary keys):
#   0 eldoria: eldoria, wood, forest, "magical forest"      1 shadowfang: shadowfang, beast, monster, monsters, beasts
#   2 glade: glade, "safe haven", refuge                     3 power: power, magic, ability
# Keys each content contains (whole words): eldoria→eldoria,forest,beasts,glade,safe haven,refuge,magic;
# shadowfang→forest,beast,monsters,beasts,glade,power,magic; glade→eldoria,forest,beast,glade,power,magic;
# power→glade,power,magic.  ("woods" in eldoria's content does not match the whole word "wood".)

def eldoria() -> Lorebook:
    return Lorebook.from_world_info(json.loads(need_shared("fixtures", "cards", "formats", "Eldoria.json").read_text(encoding="utf-8")), "Eldoria")


ELDORIA_CASES = [
    # nothing in the window names a key
    ("no keys", [M("User", "Hello there"), M("Seraphina", "How are you feeling?")], True, 2, []),
    # "power." — boundary "." after the key → power (step 1). Recursion: power's content has "glade" → glade
    # (step 2); glade's content has "Eldoria"/"forest" and "beast" → eldoria, shadowfang (step 3). Book order out.
    ("recursion chain", [M("User", "Tell me about your power.")], True, 2, ["eldoria", "shadowfang", "glade", "power"]),
    # recursion off: "woods" is not the whole word "wood"; "monsters" is a key → shadowfang only
    ("whole words, no recursion", [M("User", "The woods are dark and full of monsters")], False, 2, ["shadowfang"]),
    # same chat with recursion: shadowfang's content has "forest" (eldoria), "glade", "power" → all four
    ("whole words, recursion", [M("User", "The woods are dark and full of monsters")], True, 2,
     ["eldoria", "shadowfang", "glade", "power"]),
    # "beast" is in the 3rd newest message: outside depth 2 …
    ("depth 2 misses", [M("User", "I saw a beast"), M("Seraphina", "Rest now."), M("User", "Thank you.")], False, 2, []),
    # … inside depth 3
    ("depth 3 hits", [M("User", "I saw a beast"), M("Seraphina", "Rest now."), M("User", "Thank you.")], False, 3,
     ["shadowfang"]),
    # case-insensitive by default
    ("case", [M("User", "ELDORIA!")], False, 2, ["eldoria"]),
    # "forests" fails the whole word "forest", "magical" fails "magic", but the multi-word key "magical forest"
    # matches as a substring (ST: keys with whitespace skip the boundary test)
    ("multi-word key is a substring", [M("User", "Tales of magical forests")], False, 2, ["eldoria"]),
    ("multi-word key inside words", [M("User", "an unsafe havens list")], False, 2, ["glade"]),
    # the speaker's name is scanned: "Forest Spirit: Hi"
    ("names are scanned", [M("Forest Spirit", "Hi")], False, 2, ["eldoria"]),
]


@pytest.mark.parametrize("label,msgs,recursive,depth,expected", ELDORIA_CASES, ids=[c[0] for c in ELDORIA_CASES])
def test_eldoria_parity(label, msgs, recursive, depth, expected):
    book = eldoria()
    book.recursive = recursive
    book.scan_depth = depth
    assert titles(book, msgs) == expected


def test_eldoria_reasons_follow_the_recursion_chain():
    res = eldoria().activate_detailed([M("User", "Tell me about your power.")])
    why = {e.title: r for e, r in zip(res.entries, res.reasons)}
    assert why["power"].kind == "key" and why["power"].key == "power" and why["power"].message_index == 0
    assert why["power"].step == 1 and why["power"].scan == "initial"
    assert why["glade"].matched_in == "recursion" and why["glade"].via_title == "power" and why["glade"].step == 2
    assert why["eldoria"].via_title == "glade" and why["eldoria"].step == 3 and why["eldoria"].recursion_level == 2
    assert why["shadowfang"].key == "beast" and why["shadowfang"].via_uid == 2
    # insertion order: all order 100 → reverse activation order (ST unshifts): step 3 entries first
    assert [e.title for e in res.entries] == ["shadowfang", "eldoria", "glade", "power"]


def test_book_settings_case_and_min_activations():
    book = eldoria()
    book.recursive = False
    book.case_sensitive = True  # book default; no Eldoria entry overrides it
    assert titles(book, [M("User", "ELDORIA!")]) == [] and titles(book, [M("User", "eldoria!")]) == ["eldoria"]
    book.case_sensitive = False
    # min activations 1: the initial scan (depth 2) finds nothing, so ST widens the window one message at a time
    # (while depth ≤ chat length): depth 3 reaches "beast"
    book.min_activations = 1
    res = book.activate_detailed([M("User", "I saw a beast"), M("Seraphina", "Rest now."), M("User", "Thank you.")])
    assert [(e.title, r.scan, r.message_index) for e, r in zip(res.entries, res.reasons)] == \
        [("shadowfang", "min_activations", 0)]


def test_eldoria_round_trip_and_mapping():
    raw = json.loads(need_shared("fixtures", "cards", "formats", "Eldoria.json").read_text(encoding="utf-8"))
    book = Lorebook.from_world_info(raw, "Eldoria")
    assert book.to_world_info() == raw
    e = book.entries[0]
    assert (e.uid, e.title, e.keys[-1], e.selective, e.position, e.role, e.depth, e.use_probability) == \
        (0, "eldoria", "magical forest", True, "before_char", 0, 4, True)  # role null reads as system (0)
    # WI → card → WI keeps every modelled field (ST's conversion functions both ways)
    card = book.to_card_book()
    assert card["entries"][1]["extensions"]["useProbability"] is True and card["entries"][1]["use_regex"] is True
    back = Lorebook.from_card_book(card, "Eldoria")
    fields = [f for f in LoreEntry.model_fields if f not in ("extensions", "source")]
    for a, b in zip(book.entries, back.entries):
        assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}


# ---------------------------------------------------------------------------------------------------------------
# A card book with every option
# ---------------------------------------------------------------------------------------------------------------

def full_book() -> Lorebook:
    sec = ["火", "冰"]
    return book_of([
        card_entry(0, "序章", [], "故事开始。", order=50, top={"constant": True}),
        card_entry(1, "龙胆", ["龙胆"], "龙胆是一种花。"),
        card_entry(2, "国王", ["king"], "The ruler."),
        card_entry(3, "标签", ["#hello"], "A greeting tag."),
        card_entry(4, "AND_ANY", ["剑"], top={"secondary_keys": sec}, selectiveLogic=0),
        card_entry(5, "NOT_ALL", ["剑"], top={"secondary_keys": sec}, selectiveLogic=1),
        card_entry(6, "NOT_ANY", ["剑"], top={"secondary_keys": sec}, selectiveLogic=2),
        card_entry(7, "AND_ALL", ["剑"], top={"secondary_keys": sec}, selectiveLogic=3),
        card_entry(8, "不挑", ["剑"], top={"secondary_keys": ["火"], "selective": False}, selectiveLogic=0),
        card_entry(9, "禁用", ["剑"], top={"enabled": False}),
        card_entry(10, "法师", ["Mage"], case_sensitive=True),
        card_entry(11, "猫", ["cat"], match_whole_words=False),
        card_entry(12, "龙", ["/dra(g|k)on/i"]),
        card_entry(13, "古井", ["古井"], scan_depth=4),
        card_entry(14, "下雨", ["雨"], position=4, depth=2, role=1),
        card_entry(15, "无键", []),
    ])


FULL_CASES = [
    # CJK key inside running Chinese text (no word boundaries needed next to CJK)
    ("cjk", [M("甲", "我和龙胆一起去集市")], ["龙胆"]),
    # "liking": the char before "king" is "i", an ASCII word char → no whole word
    ("liking", [M("甲", "I was liking it")], []),
    ("the king.", [M("甲", "Long live the king.")], ["国王"]),
    # a key starting with punctuation needs no boundary on that side
    ("#hello", [M("甲", "He said #hello twice")], ["标签"]),
    # 剑 + 火, no 冰: AND_ANY (火 found) ✓, NOT_ALL (冰 missing) ✓, NOT_ANY ✗, AND_ALL ✗; 不挑 ignores its
    # secondary keys (selective false); 禁用 is disabled
    ("secondary: one", [M("甲", "拔出剑，火光四起")], ["AND_ANY", "NOT_ALL", "不挑"]),
    # both secondary keys: AND_ANY ✓, NOT_ALL ✗, NOT_ANY ✗, AND_ALL ✓
    ("secondary: both", [M("甲", "剑上结了冰，又燃起火")], ["AND_ANY", "AND_ALL", "不挑"]),
    # none: AND_ANY ✗, NOT_ALL ✓, NOT_ANY ✓, AND_ALL ✗
    ("secondary: none", [M("甲", "只有一把剑")], ["NOT_ALL", "NOT_ANY", "不挑"]),
    # entry-level case sensitivity
    ("case-sensitive miss", [M("甲", "the mage is here")], []),
    ("case-sensitive hit", [M("甲", "the Mage is here")], ["法师"]),
    # entry-level whole words off → substring
    ("whole words off", [M("甲", "concatenate")], ["猫"]),
    # regex key with the i flag
    ("regex", [M("甲", "A DRAKON appears")], ["龙"]),
    # 古井 is 4 messages back: outside the book's depth 2, inside the entry's scan_depth 4
    ("entry scan depth", [M("甲", "院里有口古井"), M("乙", "嗯"), M("甲", "然后呢"), M("乙", "走吧")], ["古井"]),
    # the key only in the 3rd newest message: outside depth 2
    ("book depth", [M("甲", "龙胆"), M("乙", "好"), M("甲", "走")], []),
    # the speaker name is part of the scanned text
    ("name scanned", [M("龙胆", "你好")], ["龙胆"]),
    ("at depth entry", [M("甲", "外面下雨了")], ["下雨"]),
]


@pytest.mark.parametrize("label,msgs,expected", FULL_CASES, ids=[c[0] for c in FULL_CASES])
def test_full_book_parity(label, msgs, expected):
    # activate() never returns constants (序章) and never the disabled / key-less entries
    assert titles(full_book(), msgs) == expected


def test_full_book_constant_reason_and_round_trip():
    book = full_book()
    res = book.activate_detailed([M("甲", "你好")])
    assert [(e.title, r.kind) for e, r in zip(res.entries, res.reasons)] == [("序章", "constant")]
    raw = book._raw
    assert book.to_card_book() == raw  # unedited → equal, unknown keys kept
    assert book.entries[14].position == "at_depth" and book.entries[14].depth == 2 and book.entries[14].role_name == "user"


# ---------------------------------------------------------------------------------------------------------------
# whole words, CJK, punctuation
# ---------------------------------------------------------------------------------------------------------------

def test_whole_words_cjk_and_ascii():
    assert key_matches("我和龙胆一起", "龙胆")
    assert not key_matches("liking", "king")
    assert key_matches("the king.", "king")
    assert key_matches("king", "king") and key_matches("(king)", "king")
    assert not key_matches("kingdom", "king")
    # Liyuan differs from ST here on purpose: a CJK key glued to ASCII letters still matches
    assert key_matches("用iPhone手机拍照", "手机") and key_matches("ri理", "理")
    # an ASCII key next to CJK: CJK counts as a boundary (as in ST)
    assert key_matches("国王king的宝座", "king")
    # case-insensitive by default, case-sensitive on request
    assert key_matches("The KING", "king") and not key_matches("The KING", "king", case_sensitive=True)


def test_keys_with_punctuation():
    assert key_matches("say #hello there", "#hello")
    assert key_matches("x#hello", "#hello")  # no boundary needed before "#" (ST would need one)
    assert not key_matches("#helloworld", "#hello")  # "o" ends the key → boundary after it
    assert key_matches("I use .net daily", ".net") and key_matches("—「龙胆」—", "「龙胆」")
    assert key_matches("that's it!", "it!")
    book = book_of([card_entry(0, "标签", ["#hello"])])
    assert titles(book, [M("甲", "「#hello」")]) == ["标签"]


# ---------------------------------------------------------------------------------------------------------------
# recursion flags, both spellings
# ---------------------------------------------------------------------------------------------------------------

def recursion_card_entries() -> list[dict]:
    return [
        card_entry(0, "起点", ["钥匙"], "钥匙能打开密室。"),
        card_entry(1, "密室", ["密室"], "密室里有一封信。"),
        card_entry(2, "信", ["信"], "信上写着宝藏。", exclude_recursion=True),
        card_entry(3, "宝藏", ["密室"], "宝藏在灯塔。", prevent_recursion=True),
        card_entry(4, "灯塔", ["灯塔"], "灯塔很高。"),
        card_entry(5, "回声", ["密室"], "回声阵阵。", delay_until_recursion=True),
        card_entry(6, "深渊", ["钥匙"], "深不见底。", delay_until_recursion=2),
        card_entry(7, "守门人", ["钥匙"], "看门的老人。", top={"secondary_keys": ["密室"]}, selectiveLogic=2),
    ]


def recursion_wi() -> dict:
    def wi(uid, title, keys, content, **kw):
        e = {"uid": uid, "key": keys, "keysecondary": [], "comment": title, "content": content, "constant": False,
             "selective": True, "selectiveLogic": 0, "order": 100, "position": 0, "disable": False,
             "excludeRecursion": False, "preventRecursion": False, "delayUntilRecursion": False}
        e.update(kw)
        return e
    es = [
        wi(0, "起点", ["钥匙"], "钥匙能打开密室。"),
        wi(1, "密室", ["密室"], "密室里有一封信。"),
        wi(2, "信", ["信"], "信上写着宝藏。", excludeRecursion=True),
        wi(3, "宝藏", ["密室"], "宝藏在灯塔。", preventRecursion=True),
        wi(4, "灯塔", ["灯塔"], "灯塔很高。"),
        wi(5, "回声", ["密室"], "回声阵阵。", delayUntilRecursion=True),
        wi(6, "深渊", ["钥匙"], "深不见底。", delayUntilRecursion=2),
        wi(7, "守门人", ["钥匙"], "看门的老人。", keysecondary=["密室"], selectiveLogic=2),
    ]
    return {"entries": {str(e["uid"]): e for e in es}}


RECURSION_BOOKS = {
    "card snake_case": lambda: book_of(recursion_card_entries(), recursive=True),
    "WI camelCase": lambda: Lorebook.from_world_info(recursion_wi(), "测试书"),
}


@pytest.mark.parametrize("spelling", list(RECURSION_BOOKS))
def test_recursion_flags(spelling):
    book = RECURSION_BOOKS[spelling]()
    # Delay levels present: {1, 2}; ST presets the current level to the lowest (1).
    # Step 1 (initial): 钥匙 → 起点; 守门人 (钥匙, NOT_ANY 密室: 密室 absent) ✓; 回声/深渊 are delayed until recursion.
    # Step 2 (recursion, level 1; buffer + "钥匙能打开密室。…"): 密室 → 密室, 宝藏, 回声 (level 1 ≤ 1); 深渊 level 2 waits.
    # Step 3: buffer + 密室's and 回声's content (宝藏 prevents recursion, so "灯塔" never enters the buffer): "信" is
    #   there but 信 excludes recursion; nothing new → the pending level 2 opens.
    # Step 4 (level 2): 深渊 (钥匙 in the chat) ✓.  Step 5: nothing new, no levels left → stop.
    # 守门人 stays although 密室 appears in later steps (an activated entry is never removed, ST #2213).
    res = book.activate_detailed([M("甲", "我找到了钥匙")])
    assert [e.title for e in res.keyed(book.entries)] == ["起点", "密室", "宝藏", "回声", "深渊", "守门人"]
    why = {e.title: r for e, r in zip(res.entries, res.reasons)}
    assert why["回声"].step == 2 and why["回声"].delay_level == 1 and why["回声"].via_title == "起点"
    assert why["深渊"].step == 4 and why["深渊"].delay_level == 2 and why["深渊"].message_index == 0
    assert why["守门人"].logic == "NOT_ANY" and why["守门人"].step == 1
    assert res.steps == 5
    # excludeRecursion only blocks recursion: named in the chat, 信 activates; its content names no key
    assert titles(book, [M("甲", "信在哪")]) == ["信"]
    assert titles(book, [M("甲", "去灯塔")]) == ["灯塔"]
    # max_recursion_steps 1: only the initial scan
    book.max_recursion_steps = 1
    assert titles(book, [M("甲", "我找到了钥匙")]) == ["起点", "守门人"]


def test_recursion_flags_same_in_both_spellings_and_export():
    a = RECURSION_BOOKS["card snake_case"]()
    b = RECURSION_BOOKS["WI camelCase"]()
    for f in ("exclude_recursion", "prevent_recursion", "delay_until_recursion", "selective_logic", "secondary_keys"):
        assert [getattr(e, f) for e in a.entries] == [getattr(e, f) for e in b.entries], f
    wi = a.to_world_info()  # card → WI: ST's camelCase field names, originalData = the card book
    assert wi["entries"]["2"]["excludeRecursion"] is True and wi["entries"]["3"]["preventRecursion"] is True
    assert wi["entries"]["5"]["delayUntilRecursion"] is True and wi["entries"]["6"]["delayUntilRecursion"] == 2
    assert wi["originalData"] == a._raw
    card = b.to_card_book()  # WI → card: snake_case under extensions
    ext = card["entries"][6]["extensions"]
    assert ext["delay_until_recursion"] == 2 and ext["selectiveLogic"] == 0 and ext["exclude_recursion"] is False


def test_recursion_off_by_book_flag():
    # Without delayed entries, recursion off means the initial scan only: 起点 and 守门人.
    entries = [e for e in recursion_card_entries() if "delay_until_recursion" not in e["extensions"]]
    assert titles(book_of(entries, recursive=False), [M("甲", "我找到了钥匙")]) == ["起点", "守门人"]
    # With them, ST still opens the pending delay levels (that branch of checkWorldInfo does not look at the
    # recursive setting) and, entering that step, adds the previous step's content to the buffer:
    # step 1: 起点, 守门人 (levels {1,2}, level 1 preset); no recursion → the pending level 2 opens, buffer +
    # "钥匙能打开密室。…"; step 2 (level 2): 密室, 宝藏, 回声 (level 1 ≤ 2), 深渊 — 信 would only need "信" (absent).
    # Then recursion is off and no level is left → stop.
    book = book_of(recursion_card_entries(), recursive=False)
    assert titles(book, [M("甲", "我找到了钥匙")]) == ["起点", "密室", "宝藏", "回声", "深渊", "守门人"]


# ---------------------------------------------------------------------------------------------------------------
# sticky / cooldown / delay
# ---------------------------------------------------------------------------------------------------------------

def timed_book() -> Lorebook:
    return book_of([
        card_entry(0, "烟火", ["烟花"], sticky=3),
        card_entry(1, "冷却", ["钟"], cooldown=3),
        card_entry(2, "潮汐", ["潮"], sticky=3, cooldown=4),
        card_entry(3, "迷雾", ["雾"], delay=4),
    ])


def turn(book, text, length, timed):
    res = book.activate_detailed([M("甲", text)], ActivationOptions(timed=timed, chat_length=length))
    # the state goes through JSON like it will in the session tree
    stored = TimedEffects.model_validate_json(res.timed.model_dump_json())
    kinds = {e.title: r.kind for e, r in zip(res.entries, res.reasons)}
    return kinds, stored


def test_sticky_cooldown_delay_over_turns():
    book = timed_book()
    t = TimedEffects()
    # Turn 0, chat length 1 (the user's message). 烟火/冷却/潮汐 by key; 迷雾 delayed (1 < 4).
    # Effects set: 烟火 sticky end 1+3=4; 冷却 cooldown end 4; 潮汐 sticky end 4, cooldown end 5.
    kinds, t = turn(book, "烟花 钟 潮 雾", 1, t)
    assert kinds == {"烟火": "key", "冷却": "key", "潮汐": "key"}
    assert (t.sticky["测试书.0"].end, t.cooldown["测试书.1"].end, t.cooldown["测试书.2"].end) == (4, 4, 5)
    # Turn 1, length 3. Sticky 烟火/潮汐: 3 < 4 → active without keys (潮汐 is also on cooldown, sticky wins).
    # 冷却: cooldown 3 < 4 → blocked although "钟" is there. 迷雾: 3 < 4 still delayed.
    kinds, t = turn(book, "钟 潮 雾", 3, t)
    assert kinds == {"烟火": "sticky", "潮汐": "sticky"}
    # Turn 2, length 5. 烟火 sticky ended (5 ≥ 4). 潮汐 sticky ended → its cooldown starts now (protected, end 9)
    # → blocked. 冷却's cooldown ended (5 ≥ 4) → "钟" activates it again (new cooldown end 8). 迷雾: 5 ≥ 4 → free.
    kinds, t = turn(book, "钟 潮 雾", 5, t)
    assert kinds == {"冷却": "key", "迷雾": "key"}
    assert t.cooldown["测试书.2"].protected and t.cooldown["测试书.2"].end == 9 and t.cooldown["测试书.1"].end == 8
    # Turn 3, length 7: 冷却 (7 < 8) and 潮汐 (7 < 9) blocked; 烟火 by key again (sticky end 10).
    kinds, t = turn(book, "钟 潮 雾 烟花", 7, t)
    assert kinds == {"烟火": "key", "迷雾": "key"}
    before_turn4 = t
    # Turn 4, length 9: 烟火 sticky (9 < 10); both cooldowns over → 冷却 and 潮汐 by key.
    kinds, t = turn(book, "钟 潮", 9, t)
    assert kinds == {"烟火": "sticky", "冷却": "key", "潮汐": "key"}
    # Regenerate turn 4 (length still 9) with other words: effects that started at 9 are dropped (chat did not
    # advance), 烟火's sticky (start 7) holds.
    kinds, _ = turn(book, "什么都没有", 9, t)
    assert kinds == {"烟火": "sticky"}
    # An edited entry loses its effects (ST keys them to a hash of the entry).
    book.entries[0].content = "改过的内容"
    kinds, _ = turn(book, "钟 潮", 9, before_turn4)
    assert kinds == {"冷却": "key", "潮汐": "key"}


def test_dry_run_and_activate_ignore_sticky_state():
    book = timed_book()
    _, t = turn(book, "烟花", 1, TimedEffects())
    res = book.activate_detailed([M("甲", "无")], ActivationOptions(timed=t, chat_length=3, dry_run=True))
    assert res.entries == [] and res.timed == t
    # delay is checked even in a dry run (ST)
    assert titles(book, [M("甲", "雾")]) == []


# ---------------------------------------------------------------------------------------------------------------
# probability
# ---------------------------------------------------------------------------------------------------------------

class Rolls:
    """A scripted rng: returns the given values in turn and counts calls."""

    def __init__(self, *values):
        self.values, self.calls = list(values), 0

    def random(self):
        self.calls += 1
        return self.values.pop(0)


def prob_book(recursive=False) -> Lorebook:
    return book_of([
        card_entry(0, "半数", ["骰子"], "又掷骰子。", probability=50, useProbability=True),
        card_entry(1, "不掷", ["骰子"], probability=0, useProbability=False),
        card_entry(2, "从不", ["骰子"], probability=0, useProbability=True),
    ], recursive=recursive)


def test_probability_rolls():
    # ST: pass when rng()*100 <= probability; useProbability false never rolls; processing order uid 0, 1, 2
    rng = Rolls(0.3, 0.3)  # 半数: 30 ≤ 50 ✓; 从不: 30 > 0 ✗
    assert titles(prob_book(), [M("甲", "掷骰子")], rng=rng) == ["半数", "不掷"] and rng.calls == 2
    rng = Rolls(0.7, 0.0)  # 半数: 70 > 50 ✗; 从不: 0 ≤ 0 ✓
    assert titles(prob_book(), [M("甲", "掷骰子")], rng=rng) == ["不掷", "从不"]
    # a failed roll holds for the whole run. Step 1: 半数 rolls 90 > 50 ✗, 不掷 ✓ (no roll), 从不 rolls 90 > 0 ✗.
    # Step 2 (recursion; 不掷's content puts "骰子" in the buffer again): 半数 and 从不 are not offered again → 2 rolls
    rng = Rolls(0.9, 0.9)
    book = prob_book(recursive=True)
    book.entries[1].content = "再掷一次骰子。"  # 不掷 activates and puts 骰子 into the recursion buffer
    assert titles(book, [M("甲", "掷骰子")], rng=rng) == ["不掷"] and rng.calls == 2


def test_probability_with_seeded_rng():
    outcomes = []
    for _ in range(2):  # the same seed twice → the same 200 outcomes
        rng = random.Random(11)
        outcomes.append(["半数" in titles(prob_book(), [M("甲", "骰子")], rng=rng) for _ in range(200)])
    assert outcomes[0] == outcomes[1]
    expected_rng = random.Random(11)
    expected = []
    for _ in range(200):  # two rolls per run: 半数 then 从不
        a, _b = expected_rng.random(), expected_rng.random()
        expected.append(a * 100 <= 50)
    assert outcomes[0] == expected
    assert 70 < sum(expected) < 130


# ---------------------------------------------------------------------------------------------------------------
# inclusion groups
# ---------------------------------------------------------------------------------------------------------------

def weather(override=False) -> Lorebook:
    return book_of([
        card_entry(0, "晴", ["天"], order=100, group="天气", group_weight=100),
        card_entry(1, "雨", ["天"], order=90, group="天气", group_weight=300, group_override=override),
        card_entry(2, "雪", ["天"], order=80, group="天气", group_weight=100, group_override=override),
    ])


@pytest.mark.parametrize("roll,winner", [(0.1, "晴"), (0.5, "雨"), (0.9, "雪")])
def test_group_weighted_roll(roll, winner):
    # total weight 500; value = roll × 500 against running sums 100 / 400 / 500 in processing order (order desc)
    assert titles(weather(), [M("甲", "今天")], rng=Rolls(roll)) == [winner]


def test_group_override_and_scoring_and_multi_groups():
    # groupOverride: the member with the highest order wins, no roll (雨 90 > 雪 80)
    rng = Rolls()
    assert titles(weather(override=True), [M("甲", "天")], rng=rng) == ["雨"] and rng.calls == 0
    # group scoring: 甲 matches 天 and 晴 (score 2), 乙 only 天 (1) → 乙 dropped; one left → no roll
    book = book_of([
        card_entry(0, "甲", ["天", "晴"], group="x", use_group_scoring=True),
        card_entry(1, "乙", ["天"], group="x", use_group_scoring=True),
    ])
    rng = Rolls()
    assert titles(book, [M("人", "今天晴")], rng=rng) == ["甲"] and rng.calls == 0
    # an entry in two groups ("a, b" splits on ",\s*"): it wins both by override, its rivals in each go
    book = book_of([
        card_entry(0, "双", ["门"], group="a, b", group_override=True),
        card_entry(1, "甲组", ["门"], group="a"),
        card_entry(2, "乙组", ["门"], group="b"),
    ])
    assert titles(book, [M("人", "开门")], rng=Rolls()) == ["双"]


def test_group_already_won_in_an_earlier_step():
    # step 1: 门卫 alone in group g → wins; its content names 钥匙 → step 2 offers 钥匙串 (also group g) → dropped,
    # because the group already has an active member
    book = book_of([
        card_entry(0, "门卫", ["门"], "他手里有钥匙。", group="g"),
        card_entry(1, "钥匙串", ["钥匙"], group="g"),
    ], recursive=True)
    assert titles(book, [M("人", "敲门")]) == ["门卫"]


def test_group_sticky_member_wins():
    book = weather()
    book.entries[1].sticky = 5
    res = book.activate_detailed([M("甲", "天")], ActivationOptions(rng=Rolls(0.5), chat_length=1))  # 雨 wins the roll, sticky until 6
    assert [e.title for e in res.entries] == ["雨"]
    # next turn: a roll of 0.1 would pick 晴, but the sticky member wins and the others are dropped (no roll)
    rng = Rolls()
    res = book.activate_detailed([M("甲", "天")], ActivationOptions(rng=rng, chat_length=3, timed=res.timed))
    assert [(e.title, r.kind) for e, r in zip(res.entries, res.reasons)] == [("雨", "sticky")] and rng.calls == 0


# ---------------------------------------------------------------------------------------------------------------
# token budget
# ---------------------------------------------------------------------------------------------------------------

def budget_book() -> Lorebook:
    return book_of([
        card_entry(0, "常驻高", [], "甲" * 10, order=400, top={"constant": True}),
        card_entry(1, "B1", ["预算"], "乙" * 10, order=300),
        card_entry(2, "B2", ["预算"], "丙" * 10, order=200),
        card_entry(3, "B3", ["预算"], "丁" * 10, order=100),
        card_entry(4, "常驻低", [], "戊" * 10, order=1, top={"constant": True}),
        card_entry(5, "豁免", ["预算"], "己" * 10, order=0, ignore_budget=True),
    ])


def test_budget_drops_by_ascending_order():
    assert approx_tokens("甲" * 10) == 10 and approx_tokens("abcd" * 3) == 3 and approx_tokens("") == 0
    assert budget_from_context(8192) == 2048 and budget_from_context(8192, cap=1000) == 1000
    # Processing order = order descending (constants are ordinary here: not exempt, they sort by their order).
    # Each content is 10 tokens + the "\n" ST appends: 常驻高 → 11 < 25 ✓; B1 → 21 < 25 ✓; B2 → 31 ≥ 25 → dropped,
    # budget overflowed; B3 and 常驻低 skipped; 豁免 ignores the budget ✓.
    res = budget_book().activate_detailed([M("甲", "预算")], ActivationOptions(budget_tokens=25))
    assert [e.title for e in res.entries] == ["豁免", "B1", "常驻高"]  # insertion order: order ascending
    assert res.budget_overflowed and res.tokens == 30
    # no budget: everything
    assert len(budget_book().activate_detailed([M("甲", "预算")]).entries) == 6


# ---------------------------------------------------------------------------------------------------------------
# regex keys
# ---------------------------------------------------------------------------------------------------------------

def test_regex_keys_flags():
    assert not key_matches("the King", r"/\bking\b/")  # no i flag: case matters, settings do not apply
    assert key_matches("the King", r"/\bking\b/i") and not key_matches("the kingdom", r"/\bking\b/i")
    assert key_matches("a\nc", "/a.c/s") and not key_matches("a\nc", "/a.c/")
    assert key_matches("xxababyy", r"/(?<w>ab)\k<w>/")
    assert not key_matches("the end\n", "/end$/") and key_matches("the end\nx", "/end$/m")  # JS $, not Python's
    assert key_matches("x{,3}", "/x{,3}/")  # not a quantifier in JS
    assert not key_matches("٣", r"/\d/")  # JS \d is ASCII
    assert key_matches("b", r"/(a)?\1b/")  # a reference to a group that did not match matches empty (JS)
    # not regex keys by ST's rules → plain text: unescaped "/" inside, unknown flag
    assert key_matches("see a/b/c", "/a/b/") is False and key_matches("x /a/b/ y", "/a/b/")
    assert key_matches("x /abc/q y", "/abc/q")


def test_regex_keys_see_the_scan_buffer():
    # the buffer is "\x01Name: text" per message, newest first, joined by "\n\x01"
    book = book_of([
        card_entry(0, "最新是她", [r"/^\x01Seraphina:/"]),
        card_entry(1, "窗口里有她", [r"/^\x01Seraphina:/m"]),
        card_entry(2, "粘连", [r"/\x01User/y"]),  # sticky: only at the start of the buffer
    ])
    assert titles(book, [M("User", "hi"), M("Seraphina", "hello")]) == ["最新是她", "窗口里有她"]
    assert titles(book, [M("Seraphina", "hello"), M("User", "hi")]) == ["窗口里有她", "粘连"]


def test_regex_js_only_constructs_run_in_javascript():
    # the translator does not cover these …
    with pytest.raises(JsRegexUnsupported):
        translate_js_regex(r"\p{Script=Han}", "u")
    with pytest.raises(JsRegexUnsupported):
        translate_js_regex("(?<=a+)b", "")
    with pytest.raises(ValueError):
        translate_js_regex("(unclosed", "")  # invalid JavaScript
    # … so they run in QuickJS with JavaScript's own RegExp
    book = book_of([card_entry(0, "汉字", [r"/\p{Script=Han}{2}/u"]), card_entry(1, "后顾", ["/(?<=a+)b/"])])
    res = book.activate_detailed([M("甲", "汉字 aab")])
    assert [e.title for e in res.keyed(book.entries)] == ["汉字", "后顾"]
    assert res.reasons[0].message_index == 0 and book.warnings == []
    assert not key_matches("x b", "/(?<=a+)b/")
    # a pattern JavaScript rejects: ST's new RegExp throws and the key is plain text
    assert key_matches("see /(unclosed/ here", "/(unclosed/") and not key_matches("unclosed", "/(unclosed/")


def test_regex_js_only_constructs_refused_clearly_without_quickjs(monkeypatch):
    monkeypatch.setattr(lore_keys, "_js_engine", lambda: None)
    lore_keys.compile_key.cache_clear()
    try:
        book = book_of([card_entry(0, "汉字", [r"/\p{Script=Han}+/u"]), card_entry(1, "后顾", ["/(?<=a+)b/"])])
        res = book.activate_detailed([M("甲", "汉字 aab")])
        assert res.entries == []  # never matches rather than matching wrongly
        assert any("\\p{" in w for w in book.warnings) and any("lookbehind" in w for w in res.warnings)
    finally:
        lore_keys.compile_key.cache_clear()


# pattern, flags, texts — the Python translation must agree with JavaScript (QuickJS) on every text
DIFFERENTIAL = [
    (r"\bking\b", "", ["king", "liking", "the king.", "King", "king_x", "国王king的"]),
    (r"\bking\b", "i", ["KING!", "kingdom"]),
    (r"^a.c$", "", ["abc", "a\nc", "a\rc", "a\u2028c", "abc\n"]),
    (r"^a.c$", "s", ["a\nc", "a\u2029c"]),
    (r"^b$", "m", ["a\nb\nc", "a\rb", "ab", "a\u2028b"]),
    (r"end$", "", ["the end", "the end\n", "ending"]),
    (r"\d+", "", ["abc", "x12", "٣", "１２"]),
    (r"\w+", "", ["é", "a", "_", "中"]),
    (r"\s", "", [" ", "\u3000", "\u00a0", "\ufeff", "\u200b", "x"]),
    (r"[^]", "", ["", "\n"]),
    (r"[]", "", ["", "a"]),
    (r"[\w-]+x", "", ["a-b-x", "-x", "x"]),
    (r"[^\W\d]", "", ["1", "a", "_", "中"]),
    (r"[\s\S]{3}", "", ["ab", "a\nb"]),
    (r"a{2}", "", ["a", "aa"]),
    (r"a{,2}", "", ["a{,2}", "aa"]),
    (r"x{a}", "", ["x{a}", "xa"]),
    (r"]", "", ["]", "a"]),
    (r"(a)?\1b", "", ["b", "aab", "ab"]),
    (r"\1(a)", "", ["a", "b"]),
    (r"(?<n>ab)\k<n>", "", ["abab", "ab"]),
    (r"\k<n>", "", ["k<n>", "k"]),
    (r"(?=ab)a", "", ["ab", "ac"]),
    (r"(?<=a)b", "", ["ab", "cb"]),
    (r"(?<!a)b", "", ["ab", "cb"]),
    (r"\x41\u0042", "", ["AB", "ab"]),
    (r"\x4", "", ["x4", "\x04"]),
    (r"\u{41}", "u", ["A", "u{41}"]),
    (r"\u{41}", "", ["A", "u" * 41]),
    (r"\cJ", "", ["\n", "cJ"]),
    (r"\c1", "", ["\\c1", "\x11"]),
    (r"[\c1]", "", ["\x11", "c"]),
    (r"\101", "", ["A", "101"]),
    (r"\8", "", ["8", "\x08"]),
    (r"\0", "", ["\x00", "0"]),
    (r"[\b]", "", ["\x08", "b"]),
    (r"\/x", "", ["/x"]),
    (r"\uD83D\uDE00", "", ["\U0001F600", "x"]),
    (r"a+?b", "", ["aaab"]),
    (r"colou?r", "i", ["COLOR", "Colour", "colr"]),
    (r"\x01Seraphina:", "", ["\x01Seraphina: hi", "Seraphina: hi"]),
    (r"[a-z]+\.", "i", ["Mr. X", "x"]),
    (r"\Bing\b", "", ["sing", "ing"]),
    (r"猫|狗", "", ["一只狗", "鸟"]),
    (r"\p", "", ["p", "\\p"]),
    (r"a|", "", ["", "b"]),
    (r"(?:ab)*c", "y", ["ababc", "xc"]),
    (r"\\", "", ["\\", "x"]),
    (r"[.]", "", [".", "a"]),
    (r"[a\-z]", "", ["-", "b"]),
    (r"[\d-z]", "", ["-", "5", "z", "b"]),
]
# Known difference, documented: under "i" Python folds ſ/K (U+017F, U+212A) to s/k, JavaScript (no "u") does not.


@pytest.mark.parametrize("pattern,flags,texts", DIFFERENTIAL, ids=[f"/{p}/{f}" for p, f, _ in DIFFERENTIAL])
def test_translation_agrees_with_javascript(pattern, flags, texts):
    eng = lore_keys._js_engine()
    if eng is None:
        pytest.skip("quickjs-ng not available")
    py, fl, sticky = translate_js_regex(pattern, flags)
    rx = re.compile(py, fl)
    for text in texts:
        ours = (rx.match(text) if sticky else rx.search(text)) is not None
        assert ours == (eng.find(pattern, flags, text) >= 0), (pattern, flags, text)


# ---------------------------------------------------------------------------------------------------------------
# placement, sources, decorators, macros, character filter, export
# ---------------------------------------------------------------------------------------------------------------

def test_insertion_order_positions_and_depth_groups():
    book = book_of([
        card_entry(0, "A", ["灯"], order=100),
        card_entry(1, "B", ["灯"], order=100),
        card_entry(2, "C", ["灯"], order=50, top={"position": "after_char"}),
        card_entry(3, "D", ["灯"], order=200, position=4, depth=2, role=1),
        card_entry(4, "E", ["灯"], order=150, position=4, depth=2, role=1),
        card_entry(5, "F", ["灯"], order=120, position=4, depth=0, role=0),
        card_entry(6, "G", ["灯"], order=10, position=2),
        card_entry(7, "H", ["灯"], order=10, position=6),
        card_entry(8, "空", ["灯"], order=5, top={"content": ""}),
    ])
    res = book.activate_detailed([M("甲", "点灯")])
    # ST: sort by order desc (D E F A B C G H 空, ties in activation order), unshift → reversed
    assert [e.title for e in res.entries] == ["空", "H", "G", "C", "B", "A", "F", "E", "D"]
    pos = {k: [e.title for e in v] for k, v in res.positions().items()}
    assert pos == {"em_bottom": ["H"], "an_top": ["G"], "after_char": ["C"], "before_char": ["B", "A"],
                   "at_depth": ["F", "E", "D"]}  # empty content is not placed
    assert [(g.depth, g.role, [e.title for e in g.entries]) for g in res.depth_groups()] == \
        [(2, 1, ["E", "D"]), (0, 0, ["F"])]


def test_sources_order_and_where_entries_came_from():
    card = book_of([card_entry(0, "卡", ["门"], "甲" * 10, order=100)], name="卡书")
    chat = book_of([card_entry(0, "聊", ["门"], "乙" * 10, order=1)], name="聊天书").with_source("chat")
    glob = Lorebook.from_world_info({"entries": {"0": {"uid": 0, "key": ["门"], "comment": "全", "content": "丙" * 10,
                                                        "order": 300}}}, "全局书")
    merged = merge_books([card, chat, glob])
    assert [e.title for e in merged.activate([M("人", "门")])] == ["卡", "聊", "全"]  # book order
    # budget 12 keeps only the first entry processed: chat lore always first (even with order 1)
    res = merged.activate_detailed([M("人", "门")], ActivationOptions(budget_tokens=12))
    assert [(e.title, r.book, r.source) for e, r in zip(res.entries, res.reasons)] == [("聊", "聊天书", "chat")]
    two = merge_books([card, glob])
    for strategy, first in ((1, "卡"), (2, "全"), (0, "全")):  # character first / global first / evenly by order
        two.strategy = strategy
        assert [e.title for e in two.activate_detailed([M("人", "门")], ActivationOptions(budget_tokens=12)).entries] == [first]


def test_decorators_macros_and_character_filter():
    book = book_of([
        card_entry(0, "总在", ["不会出现的词"], "@@activate\n总是出现。"),
        card_entry(1, "从不", ["门"], "@@dont_activate\n不会出现。"),
        card_entry(2, "角色名", ["{{char}}"], "她的故事。"),
        card_entry(3, "只给青梧", ["门"], character_filter={"names": ["青梧.png"], "isExclude": False}),
    ])
    assert book.entries[0].body == "总是出现。"
    sub = lambda s: apply_macros(s, MacroContext(char="青梧", user="旅人"))  # noqa: E731
    res = book.activate_detailed([M("旅人", "青梧，开门")], ActivationOptions(substitute=sub, character="青梧"))
    assert {e.title: r.kind for e, r in zip(res.entries, res.reasons)} == \
        {"总在": "decorator", "角色名": "key", "只给青梧": "key"}
    res = book.activate_detailed([M("旅人", "青梧，开门")], ActivationOptions(character="别人"))  # no substitute: "{{char}}" literal
    assert [e.title for e in res.entries] == ["总在"]


def test_card_book_edit_writes_only_the_change():
    book = full_book()
    original = copy.deepcopy(book._raw)
    book.entries[1].order = 7
    book.entries[2].sticky = 2
    out = book.to_card_book()
    assert out["entries"][1]["insertion_order"] == 7 and out["entries"][2]["extensions"]["sticky"] == 2
    out["entries"][1]["insertion_order"] = original["entries"][1]["insertion_order"]
    del out["entries"][2]["extensions"]["sticky"]
    assert out == original
    assert book._raw == original  # the card's JSON is never modified


def test_card_book_mapping_defaults_follow_sillytavern():
    book = Lorebook.from_card_book({"entries": [
        {"keys": ["a"], "content": "x"},                                     # no enabled, no selective, no position
        {"id": 0, "keys": ["b"], "content": "y", "enabled": True, "position": "before_char",
         "extensions": {"position": 4, "useProbability": False, "selectiveLogic": 3}},
    ]}, "书")
    first, second = book.entries
    assert (first.enabled, first.selective, first.position, first.uid) == (False, False, "after_char", 1)
    assert any("enabled" in w for w in book.warnings)
    assert (second.position, second.use_probability, second.selective_logic) == ("at_depth", False, 3)


def test_activate_keeps_its_contract():
    book = full_book()
    hits = book.activate([M("甲", "龙胆和king")])
    assert [e.title for e in hits] == ["龙胆", "国王"]  # book order, no constant
    assert [e.title for e in book.constants()] == ["序章"]
    assert "序章" not in book.index_titles() and "禁用" not in book.index_titles()


# ---------------------------------------------------------------------------------------------------------------
# bounded recursion (issue 15 item 10): the budget stops a cascade where SillyTavern's loop stops; regex keys test
# only the text a pass added; a hard bound on one run's work
# ---------------------------------------------------------------------------------------------------------------

def _cjk_key(i: int) -> str:
    return chr(0x4E00 + 200 + 2 * i) + chr(0x4E00 + 201 + 2 * i)


def chain_book(n: int, filler: int = 8, fan: int = 1, regex: bool = False) -> Lorebook:
    """Entry i is keyed by a 2-character CJK word and its content names the next ``fan`` entries' keys, then
    ``filler`` CJK characters — so every content is a whole number of tokens and each pass activates the next
    link(s). ``regex``: the keys are written as /regex/ keys."""
    es = []
    for i in range(n):
        nxt = "".join(_cjk_key(j) for j in range(fan * i + 1, fan * i + 1 + fan) if j < n)
        key = f"/{_cjk_key(i)}/" if regex else _cjk_key(i)
        es.append(card_entry(i, f"链{i}", [key], nxt + "字" * filler, order=500 - i % 500))
    return book_of(es, recursive=True)


def _st_budget_cut(weights: list[float], budget: int) -> int:
    """How many links of a chain SillyTavern activates (one per pass): a pass adds an entry while
    ceil(tokens of the recursion text so far) + ceil(tokens of the new content + "\\n") < budget; the first that
    reaches the budget is dropped, "budget overflowed", and no further pass runs."""
    spent, n = 0.0, 0
    for w in weights:
        if math.ceil(spent) + math.ceil(w + 0.25) >= budget:
            return n
        n += 1
        spent += w + 0.25
    return n


@pytest.mark.parametrize("budget", [11, 12, 50, 137, 400])
def test_recursion_stops_where_the_budget_overflows_like_sillytavern(budget):
    book = chain_book(60)
    res = book.activate_detailed([M("甲", f"说起{_cjk_key(0)}")], ActivationOptions(budget_tokens=budget))
    weights = [approx_tokens(e.content) for e in book.entries]  # 10 tokens each (2 + 8 CJK characters)
    want = _st_budget_cut(weights, budget)
    assert [e.uid for e in res.entries] == sorted(range(want), key=lambda u: book.entries[u].order)
    assert res.budget_overflowed and not res.safety_stopped
    assert res.steps == want + 1  # the pass that overflowed ran, no pass after it
    # no budget: the whole chain, one pass per link (and one that finds nothing new)
    full = book.activate_detailed([M("甲", f"说起{_cjk_key(0)}")])
    assert len(full.entries) == 60 and not full.budget_overflowed and full.steps == 61


def test_max_recursion_steps_stops_the_chain():
    book = chain_book(30)
    book.max_recursion_steps = 4  # ST: checked before each pass, `max <= count` → 4 passes run
    res = book.activate_detailed([M("甲", f"说起{_cjk_key(0)}")])
    assert sorted(e.uid for e in res.entries) == [0, 1, 2, 3] and res.steps == 4


def test_the_safety_bound_stops_a_run_without_budget(monkeypatch, caplog):
    from liyuan_desktop.core.lore import activation

    book = chain_book(400, fan=3)  # each link names three more: a cascade through the whole book
    msgs = [M("甲", f"说起{_cjk_key(0)}")]
    assert len(book.activate_detailed(msgs).entries) == 400  # under the bound: SillyTavern's result
    monkeypatch.setattr(activation, "SAFETY_MAX_ENTRIES", 100)
    with caplog.at_level("WARNING", logger="liyuan_desktop.core.lore.activation"):
        res = book.activate_detailed(msgs)
    assert len(res.entries) == 100 and res.safety_stopped and not res.budget_overflowed
    assert any("停止扫描" in w for w in res.warnings) and "safety bound" in caplog.text
    monkeypatch.setattr(activation, "SAFETY_MAX_ENTRIES", 10_000)
    monkeypatch.setattr(activation, "SAFETY_MAX_CHARS", 14 * 50)  # 14 characters per content: 50 entries fit
    res = book.activate_detailed(msgs)
    assert len(res.entries) == 50 and res.safety_stopped
    # what made it: every entry of the earlier passes, then the last pass's entries in processing order
    monkeypatch.setattr(activation, "SAFETY_MAX_CHARS", 10**9)
    ref = book.activate_detailed(msgs)
    kept = {id(e) for e in res.entries}
    earlier = [e for e, r in zip(ref.entries, ref.reasons) if r.step < res.steps]
    assert all(id(e) in kept for e in earlier)
    last = sorted((e for e, r in zip(ref.entries, ref.reasons) if r.step == res.steps), key=lambda e: -e.order)
    assert {id(e) for e in last[:50 - len(earlier)]} == kept - {id(e) for e in earlier}


def test_the_default_safety_bound_holds_a_big_cascade():
    from liyuan_desktop.core.lore import activation

    book = chain_book(activation.SAFETY_MAX_ENTRIES + 500, filler=2, fan=3)
    res = book.activate_detailed([M("甲", f"说起{_cjk_key(0)}")])
    assert len(res.entries) == activation.SAFETY_MAX_ENTRIES and res.safety_stopped


def test_regex_keys_in_recursion_test_only_the_added_text(monkeypatch):
    from liyuan_desktop.core.lore.keys import _Regex

    full, part = [], []
    real_find, real_from = _Regex.find, _Regex.find_from
    monkeypatch.setattr(_Regex, "find", lambda self, hay: (full.append(len(hay.raw)), real_find(self, hay))[1])
    monkeypatch.setattr(_Regex, "find_from", lambda self, hay, start: (part.append(len(hay.raw) - start),
                                                                        real_from(self, hay, start))[1])
    book = chain_book(40, filler=200, regex=True)
    res = book.activate_detailed([M("甲", f"说起{_cjk_key(0)}")])
    assert len(res.entries) == 40  # the whole chain, as a full re-test finds it
    # a whole text is tested only while it is shorter than the margin (+ one content); later passes test the margin
    # and the added content (+ the joiner) — the buffer grows to ~8,000 characters
    assert part and all(n <= 1000 + 202 + 20 for n in full) and max(part) <= 1000 + 202 + 2


def test_a_regex_key_across_the_seam_of_two_passes_is_found():
    # ST tests the joined buffer: 甲's content ends with 尾, 乙's (next pass) begins with 头, joined by "\n\x01"
    # (WorldInfoBuffer's joiner) → /尾[\s\S]{0,3}头/ matches across the seam
    book = book_of([
        card_entry(0, "起", ["开始"], "引出甲乙"),
        card_entry(1, "甲", ["甲乙"], "一段话的尾", order=90),
        card_entry(2, "乙", ["一段话"], "头上有字", order=80),
        card_entry(3, "跨", [r"/尾[\s\S]{0,3}头/"], "跨接", order=70),
    ], recursive=True)
    res = book.activate_detailed([M("用户", "开始")])
    assert {e.title for e in res.entries} == {"起", "甲", "乙", "跨"}
    assert res.reason_for(next(e for e in res.entries if e.title == "跨")).matched_in == "recursion"
