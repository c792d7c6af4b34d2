"""The scribe (场记): after a sealed beat, a separate model call that keeps the ledger.

Seed 002, 场记：收笔后另一次调用专门记账. The scribe sees only the current ledger and this beat's exchange (no card,
no opening); it outputs ``{"patch": {...}}``, which :func:`state.apply_patch` merges with the fixed rules. The
system prompt's name guide differs between the first beat (empty ledger) and later beats — both are golden
(``round1.json`` / ``round2.json`` ``scribe.systemPrompt``). Thinking off, at most 2048 output tokens.
Warnings from the previous scribe run are fed back in the next user text so the scribe learns the format.
A chat that is not in Chinese gets the prompts in English (:data:`SCRIBE_TEXTS`, issue 32: every prompt the engine
writes follows the chat's language) and a language line at the end of the system prompt
(:data:`SCRIBE_LANGUAGE_LINES`, issue 18: an English card's ledger came out in Chinese); a Chinese chat's prompt is
byte-identical to the seed's. The reply's format (``{"patch": …}``, ``mvu_patch``, ``panel_patch``) is the same in
both languages, so parsing it does not depend on the language.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..lenient_json import fenced_body, repair_loads
from ..llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from ..messages import Msg, MsgText, message
from ..text import prompt_language
from .mvu import MvuResult, MvuState, apply_mvu_patch
from .mvu.era import is_era_tree
from .mvu.paths import has_odd_keys
from .panels import Panel, apply_panel_patch, panel_data, scribe_panels
from .state import PatchResult, WorldState, apply_patch

SCRIBE_MAX_TOKENS = 2048

_SYSTEM = """你是一场角色扮演的场记。阅读【当前账本】与【本轮对话】，只做一件事：输出 JSON，更新需要记账的持久变化。

输出唯一字段：
"patch"：从本轮对话中提取需要记账的持久变化。字段语义：
- "time" / "location"：字符串，整体替换。剧内时间推移（入夜、次日清晨、数日后）必须更新 time。
- "characters"：{{ "名字": {{ "affinity"?, "status"?, "notes"?, "at"? }} }}，按字段合并。affinity 为 -100..100 的对{user}态度值，基于账本当前值小步调整（通常 ±1~10）。"at" 是该角色此刻所在地，与 location 同一写法；离开当前场景的人写他去了哪。{name_guide}；只有全新出场的人物才建新条目，键用正文中的人名——不要把作品/剧本标题（如「{char}」这类非人名）当作角色。
- "inventory"：字符串数组，整体替换——只在物品归属变化时给出变化后的完整清单，条目注明归属（如「黄铜怀表（{user}持有）」）。
- "flags"：键值对，按键合并（值为字符串）。
- "plot_threads"：字符串数组，整体替换——新增或了结剧情线时给出完整清单。
要点：否定性事件也要记账（赠礼被拒→物品仍在原主处；承诺被收回→记入 flags）；新的承诺、约定、伏笔进 plot_threads；没有变化的字段不要出现在 patch 中；完全无变化则 "patch" 为 {{}}。{mvu_section}{panel_section}

只输出 JSON 对象，例如 {{"patch":{{...}}{mvu_example}{panel_example}}} 或 {{"patch":{{}}{mvu_empty}{panel_empty}}}。不要输出 warnings、不要输出其他文字。"""

# Seed 002 scribe.ts:74-92 (mvuSystemSection), verbatim; appended only when the card has a variable tree.
MVU_SYSTEM_SECTION = """
这张卡另有一棵**状态树**（驱动卡上的状态栏面板）。多输出一个字段：
"mvu_patch"：从本轮对话提取该树需要更新的值，形如 { "路径.用点分隔": 新值 }（如 {"user.背包.金币":480,"世界.当前地点":"裂谷城"}）。
- 路径照抄下面【状态树·当前值】里出现的写法；只列**发生变化**的路径，值给变化后的完整新值（数字给数字、字符串给字符串、整段替换就给对象）。
- 判断依据是本轮剧情**真的发生了什么**，不是凭空推进；无变化则 "mvu_patch" 为 {}。
- 只填路径与新值，不要写 op/JSONPatch/UpdateVariable 之类任何指令语法。"""

# Ours (issue 13 §2): added after MVU_SYSTEM_SECTION only when the tree has a key a dotted path cannot address, so
# every other card's prompt stays byte-identical.
MVU_POINTER_NOTE = """
- 键名里本身带点或方括号的（如 "AXMC .338 LM"、"v1.2"），点号路径写不出来：这类路径改用 JSON Pointer 写法，以 / 开头、逐级用 / 分隔，键名原样照抄（键名里的 / 写成 ~1，~ 写成 ~0），如 {"/装备/AXMC .338 LM/弹药": 20}。其他路径照旧用点分隔。"""

# Ours (issue 27): added after the MVU section when the card plays the ERA variable framework (its tree carries
# ERA's "$meta" / "$template" keys, or the caller says so); every other card's prompt stays byte-identical.
ERA_NOTE = """
- 这张卡用 ERA 变量框架：树里的 "$meta"（保护规则）和 "$template"（新条目的默认结构）归框架管，不要写进 mvu_patch；"$meta" 里 updatable 为 false 的节点及其下级不要改。新增条目写在已有对象下的新键，值给完整对象（字段照同级 "$template" 写全）。"""

# The seed shows where ${mvuUserSection} goes (right after the ledger JSON) but not its text; this wording is ours.
MVU_USER_HEADING = "【状态树·当前值】"

# Seed 002 scribe.ts:74-92 (panelSystemSection), verbatim but for the count; appended only when the card has panels
# with a data tree (ledger-only panels add nothing, so such a card's prompt stays byte-identical).
PANEL_SYSTEM_SECTION = """
剧中还有 {n} 个展示面板，各自带一棵数据树（面板的外观是写死的模板，屏幕上显示的值来自这些树）。多输出一个字段：
"panel_patch"：形如 {{ "面板名": {{ "路径.用点分隔": 新值 }} }}。
- 面板名与路径都照抄下面【面板数据·当前值】里的写法；只列**发生变化**的面板与路径。
- 判断依据同上：本轮剧情真的发生了什么；无变化则 "panel_patch" 为 {{}}。"""

# The seed names 【面板数据·当前值】 in the system section; the user section itself (after the tree) is ours.
PANEL_USER_HEADING = "【面板数据·当前值】"


_SYSTEM_EN = """You are the scribe of a role-play. Read [Current ledger] and [This beat's exchange] and do one thing only: output JSON that books the lasting changes.

The one field to output:
"patch": the lasting changes of this beat's exchange that need booking. What the fields mean:
- "time" / "location": strings, replaced whole. When in-story time moves on (nightfall, the next morning, days later) time must be updated.
- "characters": {{ "name": {{ "affinity"?, "status"?, "notes"?, "at"? }} }}, merged field by field. affinity is the attitude towards {user} from -100 to 100, adjusted in small steps from the ledger's current value (usually ±1-10). "at" is where the character is now, written as location is; for someone who leaves the scene, write where they went. {name_guide}; make a new entry only for a character who appears for the first time, keyed by the name the prose uses — never make a work's or script's title (such as "{char}" when it is not a person's name) a character.
- "inventory": array of strings, replaced whole — only when an item changes hands, give the full list after the change, each item saying whose it is (such as "brass pocket watch (held by {user})").
- "flags": key-value pairs, merged by key (values are strings).
- "plot_threads": array of strings, replaced whole — give the full list when a plot thread opens or closes.
Points: negative events are booked too (a gift refused → the item stays with its owner; a promise taken back → into flags); new promises, agreements and foreshadowing go into plot_threads; fields that did not change do not appear in patch; with no change at all "patch" is {{}}.{mvu_section}{panel_section}

Output only the JSON object, for example {{"patch":{{...}}{mvu_example}{panel_example}}} or {{"patch":{{}}{mvu_empty}{panel_empty}}}. Do not output warnings or any other text."""

_MVU_SYSTEM_SECTION_EN = """
This card also has a **state tree** (it drives the card's status panel). Output one more field:
"mvu_patch": the values of that tree this beat's exchange changes, as { "path.separated.by.dots": new value } (such as {"user.backpack.gold":480,"world.current_place":"Rift City"}).
- Copy the paths as they appear in [State tree · current values] below; list only the paths that **changed**, each with its full new value (a number for a number, a string for a string, an object to replace a whole part).
- Judge by what **really happened** in this beat, never advance anything on your own; with no change "mvu_patch" is {}.
- Give only paths and new values; write no instruction syntax such as op / JSONPatch / UpdateVariable."""

_MVU_POINTER_NOTE_EN = """
- A key that itself has a dot or square brackets in it (such as "AXMC .338 LM" or "v1.2") cannot be reached by a dotted path: write such paths as JSON Pointers instead — starting with /, each level separated by /, the key copied as it is (a / in a key written ~1, a ~ written ~0), such as {"/gear/AXMC .338 LM/ammo": 20}. Every other path stays dotted."""

_ERA_NOTE_EN = """
- This card uses the ERA variable framework: "$meta" (protection rules) and "$template" (the default shape of new entries) in the tree belong to the framework; never write them into mvu_patch, and do not change a node whose "$meta" says updatable is false, nor anything under it. A new entry is a new key under an existing object, its value a complete object (every field as the sibling "$template" has it)."""

_PANEL_SYSTEM_SECTION_EN = """
The story also has {n} display panels, each with a data tree (a panel's look is a fixed template; the values on screen come from these trees). Output one more field:
"panel_patch": as {{ "panel name": {{ "path.separated.by.dots": new value }} }}.
- Copy panel names and paths as they appear in [Panel data · current values] below; list only the panels and paths that **changed**.
- Judge as above: by what really happened in this beat; with no change "panel_patch" is {{}}."""

#: The scribe's prompt texts per language: the system prompt and its sections, the user text's headings, the name
#: guide; the Chinese ones are seed 002's, byte for byte.
SCRIBE_TEXTS: dict[str, dict[str, str]] = {
    "zh": {"system": _SYSTEM, "mvu": MVU_SYSTEM_SECTION, "pointer": MVU_POINTER_NOTE, "era": ERA_NOTE,
           "panels": PANEL_SYSTEM_SECTION, "mvu_heading": MVU_USER_HEADING, "panel_heading": PANEL_USER_HEADING,
           "first_guide": "用户角色写作「{user}」", "guide": "名字必须使用账本中已有的写法（当前已有：{names}；用户角色「{user}」）",
           "list": "、", "said": "{name}：{text}", "ledger": "【当前账本】", "exchange": "【本轮对话】",
           "warnings": "【上次记账的告警】以下是上一次 patch 被拒收或丢弃的部分，这次请按要求写：",
           "pronoun": "characters.{key} 不是人名（是对用户的称呼），已忽略——用户角色写作「{user}」，不必建条目。"},
    "en": {"system": _SYSTEM_EN, "mvu": _MVU_SYSTEM_SECTION_EN, "pointer": _MVU_POINTER_NOTE_EN, "era": _ERA_NOTE_EN,
           "panels": _PANEL_SYSTEM_SECTION_EN, "mvu_heading": "[State tree · current values]",
           "panel_heading": "[Panel data · current values]",
           "rules_heading": ("[The card author's variable rules] These are the card's rules for \"writing variable "
                             "updates with each reply\"; now you judge mvu_patch by their values and conditions "
                             "(ignore the output format they ask for; write only the JSON format above):"),
           "first_guide": "the user's character is written \"{user}\"",
           "guide": "names must be written as the ledger already has them (now: {names}; the user's character "
                    "\"{user}\")",
           "list": ", ", "said": "{name}: {text}", "ledger": "[Current ledger]", "exchange": "[This beat's exchange]",
           "warnings": ("[Warnings from the last booking] These parts of the last patch were refused or dropped; "
                        "write them as required this time:"),
           "pronoun": "characters.{key} is not a name (it addresses the user) and was ignored — the user's character "
                      "is written \"{user}\" and needs no entry."},
}


def _texts(language: str) -> dict[str, str]:
    return SCRIBE_TEXTS[prompt_language(language)]


#: The line added to the scribe's system prompt for a chat in another language than Chinese (the chat's language is
#: the one the role-play prompt's 【语言】 block names: ``ChatContext.language`` / ``Card.language``).
SCRIBE_LANGUAGE_LINES = {
    "en": ("[Language] This chat is in English. Write every text value of the patch (time, location, status, notes, at, "
           "inventory, flags, plot_threads) in English; keep names as the story spells them."),
    "ja": "【語言】この対話は日本語です。patch の文字列の値（time、location、status、notes、at、inventory、flags、plot_threads）はすべて日本語で書き、名前は本文の表記のままにする。",
}


def scribe_language_line(language: str) -> str:
    """The scribe's language line for ``language`` ("" for Chinese; English for any language without its own line)."""
    if not language or language == "zh":
        return ""
    return SCRIBE_LANGUAGE_LINES.get(language, SCRIBE_LANGUAGE_LINES["en"])


def name_guide(state: WorldState, user_name: str, language: str = "zh") -> str:
    """First beat (no characters yet): 「用户角色写作「X」」; later: the names already in the ledger (in the chat's
    ``language``)."""
    w = _texts(language)
    if not state.characters:
        return w["first_guide"].format(user=user_name)
    return w["guide"].format(names=w["list"].join(state.characters), user=user_name)


def _mvu_tree(mvu: Any) -> Optional[dict[str, Any]]:
    """The ``stat_data`` of ``mvu`` (an MvuState, a snapshot dict or a bare tree); None = the card has no tree."""
    if mvu is None:
        return None
    return MvuState.from_any(mvu).stat_data


def _data_panels(panels: Any) -> list[Panel]:
    """The panels (Panel objects or their dicts) that carry a data tree; [] for None."""
    return scribe_panels(p if isinstance(p, Panel) else Panel.model_validate(p) for p in (panels or []))


def scribe_system_prompt(state: WorldState, user_name: str, char_name: str, mvu: Any = None,
                         panels: Any = None, language: str = "zh", era: Optional[bool] = None) -> str:
    """The scribe's system prompt (seed 002 scribe.ts 94-105). With ``mvu`` (the card's variable tree) the
    mvu_patch section is added (and, when the tree has keys with dots, how to address them: MVU_POINTER_NOTE);
    with ``panels`` that carry data (Panel list, :mod:`panels`) the panel_patch section is added after it. Without either the prompt is byte-identical to the ledger-only one (golden tests).
    ``language``: the chat's language; other than "zh" adds :func:`scribe_language_line` at the end. ``era``: the
    card plays the ERA variable framework (adds :data:`ERA_NOTE` after the MVU section); None = judged from the
    tree (:func:`.mvu.era.is_era_tree`)."""
    w = _texts(language)
    has = mvu is not None
    if has and (era if era is not None else is_era_tree(_mvu_tree(mvu))):
        era_note = w["era"]
    else:
        era_note = ""
    n = len(_data_panels(panels))
    line = scribe_language_line(language)
    return w["system"].format(user=user_name, char=char_name, name_guide=name_guide(state, user_name, language),
                          mvu_section=(w["mvu"] + (w["pointer"] if has_odd_keys(_mvu_tree(mvu)) else "")
                                       + era_note) if has else "",
                          mvu_example=',"mvu_patch":{...}' if has else "",
                          mvu_empty=',"mvu_patch":{}' if has else "",
                          panel_section=w["panels"].format(n=n) if n else "",
                          panel_example=',"panel_patch":{...}' if n else "",
                          panel_empty=',"panel_patch":{}' if n else "") + (f"\n\n{line}" if line else "")


def panel_user_section(panels: Any, language: str = "zh") -> str:
    """``\n\n【面板数据·当前值】\n`` + ``{panel id: data}`` of the data panels as ``JSON.stringify(x, null, 2)``;
    "" when no panel carries data (the heading in the chat's ``language``)."""
    data = panel_data(_data_panels(panels))
    if not data:
        return ""
    return f"\n\n{_texts(language)['panel_heading']}\n{json.dumps(data, ensure_ascii=False, indent=2)}"


def mvu_user_section(mvu: Any, language: str = "zh") -> str:
    """``\n\n【状态树·当前值】\n`` + the tree's stat_data as ``JSON.stringify(tree, null, 2)``; "" without a tree
    (the heading in the chat's ``language``)."""
    tree = _mvu_tree(mvu)
    if tree is None:
        return ""
    return f"\n\n{_texts(language)['mvu_heading']}\n{json.dumps(tree, ensure_ascii=False, indent=2)}"


MVU_RULES_HEADING = "【卡作者的变量规则】以下是角色卡里写给「随回复输出变量更新」的规则；现在由你按其中的数值与条件判断 mvu_patch（其中要求的输出格式不用管，只按上面的 JSON 格式写）："


def mvu_rules_section(rules: str, language: str = "zh") -> str:
    """The card's ``[mvu_update]`` lorebook rules, routed to the scribe (issue 5: the actor no longer writes variable
    updates); "" when the card has none (the heading in the chat's ``language``)."""
    heading = _texts(language).get("rules_heading", MVU_RULES_HEADING)  # the Chinese one: MVU_RULES_HEADING
    return f"\n\n{heading}\n{rules.strip()}" if rules and rules.strip() else ""


def scribe_user_text(state: WorldState, user_name: str, char_name: str, user_text: str, assistant_text: str,
                     previous_warnings: Optional[list[str]] = None, mvu: Any = None, panels: Any = None,
                     mvu_rules: str = "", language: str = "zh") -> str:
    """【当前账本】 (the ledger as ``JSON.stringify(state, null, 2)``), then the variable tree and the panel data when
    given (seed: ``${mvuUserSection}${panelUserSection}``), and 【本轮对话】 (``名字：话`` pairs; in agent mode, where
    there are no user words, the chapter text alone). Previous warnings, when any, are appended to the ledger
    section so the scribe corrects its format. Headings in the chat's ``language`` (:data:`SCRIBE_TEXTS`)."""
    t = _texts(language)
    said = t["said"]
    exchange = (f"{said.format(name=user_name, text=user_text)}\n\n{said.format(name=char_name, text=assistant_text)}"
                if user_text.strip() else assistant_text)
    feedback = ""
    if previous_warnings:
        lang = prompt_language(language)  # a warning is a message: the scribe reads it in the chat's language
        feedback = f"\n\n{t['warnings']}\n" + "\n".join(
            f"- {w.render(lang) if isinstance(w, Msg) else w}" for w in previous_warnings)
    rules = mvu_rules_section(mvu_rules, language) if mvu is not None else ""
    return (f"{t['ledger']}\n{state.to_json(2)}{mvu_user_section(mvu, language)}{rules}"
            f"{panel_user_section(panels, language)}{feedback}\n\n{t['exchange']}\n{exchange}")


def _scribe_object(raw: str) -> tuple[Any, list[str]]:
    """The JSON object in the scribe's text (None when there is none) and the repair problems."""
    problems: list[str] = []
    text = (raw or "").strip()
    fence = fenced_body(text)
    if fence is not None:
        text = fence
    obj: Any = None
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested thousands deep
        start = text.find("{")
        candidate = text[start:] if start >= 0 else text
        try:
            obj = repair_loads(candidate)
        except Exception:  # json_repair raises on some inputs, repair_loads on texts too big to mend: unusable
            obj = None
        if isinstance(obj, dict) and obj:
            problems.append(message("scribe.repaired"))
    return obj, problems


def parse_scribe_output(raw: str) -> tuple[Any, list[str]]:
    """Pull the patch out of the scribe's text: tolerant of code fences, prose around the JSON and broken JSON
    (repaired with the json-repair library). Returns (patch, problems); patch is ``{}`` when nothing usable."""
    obj, problems = _scribe_object(raw)
    return _patch_of(obj, problems)


def _patch_of(obj: Any, problems: list[str], mvu: bool = False, panels: bool = False) -> tuple[Any, list[str]]:
    if not isinstance(obj, dict):
        problems.append(message("scribe.no_object"))
        return {}, problems
    if "patch" in obj:
        return obj["patch"], problems
    if any(k in obj for k in ("time", "location", "characters", "inventory", "flags", "plot_threads")):
        problems.append(message("scribe.no_wrapper"))
        return obj, problems
    if (mvu and "mvu_patch" in obj) or (panels and "panel_patch" in obj):
        return {}, problems  # only the tree / the panels changed: an absent ledger patch is no problem
    problems.append(message("scribe.no_patch"))
    return {}, problems


def parse_scribe_mvu(raw: str) -> tuple[Any, list[str]]:
    """The ``mvu_patch`` of the scribe's text (``{}`` when absent) and problems about it (not the repair notes,
    which :func:`parse_scribe_output` already reports)."""
    obj, _ = _scribe_object(raw)
    return _mvu_patch_of(obj)


def _mvu_patch_of(obj: Any) -> tuple[Any, list[str]]:
    if not isinstance(obj, dict) or obj.get("mvu_patch") is None:
        return {}, []
    # a non-object is passed on: apply_mvu_patch refuses it with a warning the scribe sees next beat
    return obj["mvu_patch"], []


def scribe_reasons(raw: str) -> Any:
    """The reason the scribe's reply gave for its patch (issue 33, the ledger timeline shows it): its top-level
    ``"reason"`` (or ``"reasons"``) — a string for the whole patch or ``{path: text}`` — else None. Never raises."""
    obj, _ = _scribe_object(raw)
    if not isinstance(obj, dict):
        return None
    found = obj.get("reason", obj.get("reasons"))
    return found if isinstance(found, (str, dict)) else None


def parse_scribe_panels(raw: str) -> Any:
    """The ``panel_patch`` of the scribe's text; ``{}`` when absent (a non-object is passed on as is, so
    :func:`panels.apply_panel_patch` refuses it with a warning the scribe sees next beat)."""
    obj, _ = _scribe_object(raw)
    return _panel_patch_of(obj)


def _panel_patch_of(obj: Any) -> Any:
    if not isinstance(obj, dict) or obj.get("panel_patch") is None:
        return {}
    return obj["panel_patch"]


class ScribeOutcome(BaseModel):
    """What one scribe run did: prompts, raw output, the merge result; ``error`` when the call itself failed
    (the beat is kept; the ledger stays as it was)."""

    system: str
    user: str
    raw: str = ""
    patch: Any = None
    result: Optional[PatchResult] = None
    problems: list[MsgText] = Field(default_factory=list)  # catalog messages (their Chinese is the scribe's feedback)
    error: Optional[MsgText] = None
    usage: dict[str, Any] = Field(default_factory=dict)
    #: the model that answered (the server's name for it, else the client's), "" before the call
    model: MsgText = ""  # the model's name (the replay model's a catalog message, its key kept)
    # MVU (card variable tree): set only when run_scribe got a tree
    mvu_patch: Any = None
    mvu_result: Optional[MvuResult] = None
    # Liyuan panels: set only when run_scribe got panels with data; ``panels`` None after a failed call
    panel_patch: Any = None
    panels: Optional[list[Panel]] = None
    panel_applied: list[str] = Field(default_factory=list)
    panel_warnings: list[str] = Field(default_factory=list)


#: Words that address or stand for the user rather than name a character (issue 30 §7: a 0.5B scribe made a
#: character called 「你」); compared case-insensitively, spaces trimmed.
PRONOUN_NAMES = frozenset({"你", "您", "我", "用户", "玩家", "you", "user", "i", "me", "player"})


def drop_pronoun_characters(patch: Any, user_name: str, problems: list[str], language: str = "zh") -> Any:
    """``patch`` without ``characters`` entries keyed by a pronoun (:data:`PRONOUN_NAMES`): the scribe never
    creates a character 「你」 / "You". Each one dropped adds a line to ``problems`` (fed back to the scribe)."""
    chars = patch.get("characters") if isinstance(patch, dict) else None
    if not isinstance(chars, dict):
        return patch
    bad = [k for k in chars if isinstance(k, str) and k.strip().casefold() in PRONOUN_NAMES]
    if not bad:
        return patch
    for k in bad:
        problems.append(message("scribe.pronoun", name=k, user=user_name))
    return {**patch, "characters": {k: v for k, v in chars.items() if k not in bad}}


async def run_scribe(model: ChatModel, state: WorldState, *, user_name: str, char_name: str, user_text: str,
                     assistant_text: str, previous_warnings: Optional[list[str]] = None,
                     mvu: Any = None, panels: Any = None, mvu_rules: str = "", language: str = "zh") -> ScribeOutcome:
    """Call the scribe and merge its patch. Never raises for model or parse failures: they come back in
    ``error``/``problems`` (CancelledError still propagates). ``mvu``: the card's variable tree (MvuState,
    snapshot dict or bare stat_data) — adds the mvu sections to the prompts and fills ``mvu_patch``/``mvu_result``
    (the new tree with this beat's display/delta data; on a failed call ``mvu_result`` stays None). ``panels``:
    the card's panels (:class:`panels.Panel` or dicts) — when some carry data, adds the panel sections and fills
    ``panel_patch``/``panels`` (all panels, data patched)/``panel_applied``/``panel_warnings``. ``mvu_rules``: the
    card's ``[mvu_update]`` lorebook rules (see :func:`mvu_rules_section`). ``language``: the chat's language
    (:func:`scribe_language_line`). ``usage``/``model`` of the outcome: the call's token usage and the model that
    answered (kept with the ledger snapshot, shown by the inspector)."""
    data_panels = _data_panels(panels)
    system = scribe_system_prompt(state, user_name, char_name, mvu, data_panels, language)
    user = scribe_user_text(state, user_name, char_name, user_text, assistant_text, previous_warnings, mvu, data_panels,
                            mvu_rules, language)
    out = ScribeOutcome(system=system, user=user)
    req = ChatRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        max_tokens=SCRIBE_MAX_TOKENS, thinking=False, purpose="scribe", temperature=0.2,
    )
    try:
        resp = await model.complete(req)
    except ModelError as e:
        out.error = message("scribe.call_failed", error=e.message)
        return out
    out.raw = resp.content
    out.usage = resp.usage.raw or resp.usage.model_dump(exclude={"raw"})
    out.model = resp.model or getattr(model, "name", "")
    obj, problems = _scribe_object(resp.content)
    patch, problems = _patch_of(obj, problems, mvu is not None, bool(data_panels))
    patch = drop_pronoun_characters(patch, user_name, problems, language)
    out.patch = patch
    out.problems = problems
    out.result = apply_patch(state, patch, language)
    if mvu is not None:
        mvu_patch, _ = _mvu_patch_of(obj)
        out.mvu_patch = mvu_patch
        out.mvu_result = apply_mvu_patch(mvu, mvu_patch)
    if data_panels:
        all_panels = [p if isinstance(p, Panel) else Panel.model_validate(p) for p in panels]
        out.panel_patch = _panel_patch_of(obj)
        out.panels, out.panel_applied, out.panel_warnings = apply_panel_patch(all_panels, out.panel_patch, language)
    return out
