"""SillyTavern chat-completion presets (预设): import, and the mapping onto Liyuan's layered prompt.

A preset file (``default/content/presets/openai/*.json`` in SillyTavern, "Export preset" in its UI) holds
``prompts[]``, ``prompt_order[]``, samplers and model settings (../shared/design/cards.md §5). :func:`load_preset`
reads one into a :class:`Preset` (every unknown key kept), :func:`plan` decides where each enabled prompt goes in
*our* prompt, and :class:`PresetPrompter` renders that plan for one chat.

Where things go (:func:`plan`)
------------------------------
SillyTavern builds a flat message list in ``prompt_order`` order around the ``chatHistory`` marker. Liyuan keeps a
byte-stable system prompt (prefix caching) and puts per-beat data at the tail, so:

* **Relative prompts before ``chatHistory``** (``injection_position`` 0) → **system layers**, in preset order, inside
  the card part of the system prompt (after our skeleton + role-play definition, which the preset never replaces).
  Text prompts become ``## 预设 · <name>`` sections (the agent-mode definition already calls these "「预设」段落":
  writing requirements, not identity). Macros are evaluated deterministically there (see *Macros*).
* **Markers** are filled by Liyuan's own card layers, at the marker's place: ``charDescription`` → 角色设定,
  ``charPersonality`` → 性格, ``scenario`` → 场景, ``dialogueExamples`` → 对话示例, ``personaDescription`` →
  用户的角色 (+ the persona description when its position is in-prompt), ``worldInfoBefore`` → constant (常驻)
  lore entries that are not ``after_char``, ``worldInfoAfter`` → constant ``after_char`` entries. Keyword-activated
  lore is *not* placed there: Liyuan lists hit titles in the tail injection (【相关设定】) and the model pulls text with
  ``lorebook_search``. A disabled marker leaves its card layer out, as in SillyTavern.
  Markers that SillyTavern would place after the history or in-chat stay in the system prompt (card data never
  moves into the tail) — recorded in ``PresetPlan.notes``.
* ``main`` → the **card-author layer**, not our role-play definition: the card's ``system_prompt`` replaces it
  (``{{original}}`` = the preset text) unless ``forbid_overrides`` — section ``## 卡作者的系统提示`` — otherwise
  the preset text as ``## 预设 · Main Prompt``. A disabled ``main`` drops the card's system prompt too (ST).
* ``jailbreak`` (Post-History Instructions) → usually after the history, hence an **after segment**; the card's
  ``post_history_instructions`` replaces it the same way.
* **Relative prompts after ``chatHistory``** → **after segments**: separate messages, each with its own role, placed
  after the user's words (seed 002: "末端消息 = 梨园数据块 + 本拍用户原话 + 预设 after 段（各按自己的 role）").
* **In-chat prompts** (``injection_position`` 1) → **depth injections** (depth, role, order), inserted into the
  history exactly as SillyTavern's ``populationInjectionPrompts`` (see :func:`insert_depth_injections`).

Dropped (listed in ``PresetPlan.dropped`` with the reason): disabled prompts; prompts not in the active order list;
empty prompts; prompts whose ``injection_trigger`` excludes the generation type; references to ids missing from
``prompts[]`` (ST removes them too); runtime-only ids ST fills itself (``newMainChat``, ``groupNudge``,
``continueNudge``, ``impersonate``, ``authorsNote``, ``summary``, ``vectorsMemory``, ``vectorsDataBank``,
``smartContext``, ``bias``, ``quietPrompt``; Liyuan's 前情提要/ledger cover summary and memory) and markers of
extensions we do not have. Root-level texts are kept in :class:`Preset` but not used: ``new_chat_prompt`` (our
history starts with the opening), ``new_example_chat_prompt``, ``impersonation_prompt``, ``continue_nudge_prompt``,
``group_nudge_prompt``, ``send_if_empty``, ``assistant_prefill`` (Claude-only in ST); ``wi_format``,
``personality_format`` and ``scenario_format`` are replaced by our section headings; ``squash_system_messages`` and
``names_behavior`` are not applied.

Which order list (ST ``PromptManager`` with strategy "global", ``dummyId`` 100001): the ``prompt_order`` entry
whose ``character_id`` is 100001; when it is missing or empty SillyTavern falls back to its built-in default order
(``promptManagerDefaultPromptOrder``), *not* to the 100000 list — we do the same and say so in the notes. An order
entry counts as enabled only when ``enabled`` is true (ST tests ``entry.enabled``); a missing flag is disabled.

Macros
------
:func:`expand_macros` implements SillyTavern's legacy macro passes in order (legacy tags, ``{{roll}}``, variables
line by line, ``{{newline}}``/``{{trim}}``/``{{noop}}``, card fields before ``{{user}}``/``{{char}}``, chat refs,
``{{// comments}}``, time, ``{{random}}``/``{{pick}}``). In the system prompt (``volatile=False``) it must stay
byte-stable: ``{{random}}`` and ``{{roll}}`` are rolled once per chat from a seed (the chat's id) and stay fixed;
``{{pick}}`` is seeded as in ST; time/date and chat-reference macros are left verbatim — each case is reported in
``PresetPrompter.warnings``. In the tail (after segments, depth injections) everything is evaluated fresh.
Variables (``{{setvar}}``/``{{getvar}}`` …) live in one dict per chat, seeded from the caller (e.g. an imported ST
chat's ``chat_metadata.variables``); values set while rendering the system layers are visible in the tail; they are
not persisted.
"""

from __future__ import annotations

import hashlib
import json
import math
import random as _random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..cards import Card
from ..llm.types import ChatMessage
from ..lore.lorebook import LoreEntry, Lorebook
from .macros import MacroContext
from ..cards.personas import Persona

Role = Literal["system", "user", "assistant"]
ROLES = ("system", "user", "assistant")

#: ST ``INJECTION_POSITION``: RELATIVE = position in ``prompt_order``; ABSOLUTE = "in-chat" at a depth.
RELATIVE, IN_CHAT = 0, 1
#: The character id of the order list SillyTavern's chat-completion prompt manager uses (strategy "global").
GLOBAL_ORDER_ID = 100001
#: The older default list shipped in ``Default.json``; ST never reads it for chat completion.
LEGACY_ORDER_ID = 100000

MARKERS = ("worldInfoBefore", "worldInfoAfter", "charDescription", "charPersonality", "scenario",
           "personaDescription", "dialogueExamples", "chatHistory")
RUNTIME_IDS = ("newMainChat", "groupNudge", "continueNudge", "impersonate", "authorsNote", "summary",
               "vectorsMemory", "vectorsDataBank", "smartContext", "bias", "quietPrompt")

DEFAULT_MAIN = "Write {{char}}'s next reply in a fictional chat between {{charIfNotGroup}} and {{user}}."
DEFAULT_ENHANCE = ("If you have more knowledge of {{char}}, add to the character's lore and personality to enhance "
                   "them but keep the Character Sheet's definitions absolute.")

#: ST ``chatCompletionDefaultPrompts`` (added back by ``checkForMissingPrompts`` when a preset lacks them).
DEFAULT_PROMPTS: dict[str, dict[str, Any]] = {
    "main": {"name": "Main Prompt", "system_prompt": True, "role": "system", "content": DEFAULT_MAIN},
    "nsfw": {"name": "Auxiliary Prompt", "system_prompt": True, "role": "system", "content": ""},
    "dialogueExamples": {"name": "Chat Examples", "system_prompt": True, "marker": True},
    "jailbreak": {"name": "Post-History Instructions", "system_prompt": True, "role": "system", "content": ""},
    "chatHistory": {"name": "Chat History", "system_prompt": True, "marker": True},
    "worldInfoAfter": {"name": "World Info (after)", "system_prompt": True, "marker": True},
    "worldInfoBefore": {"name": "World Info (before)", "system_prompt": True, "marker": True},
    "enhanceDefinitions": {"name": "Enhance Definitions", "system_prompt": True, "role": "system",
                           "content": DEFAULT_ENHANCE},
    "charDescription": {"name": "Char Description", "system_prompt": True, "marker": True},
    "charPersonality": {"name": "Char Personality", "system_prompt": True, "marker": True},
    "scenario": {"name": "Scenario", "system_prompt": True, "marker": True},
    "personaDescription": {"name": "Persona Description", "system_prompt": True, "marker": True},
}
#: ST ``promptManagerDefaultPromptOrder``: used when the preset has no (non-empty) 100001 list.
DEFAULT_ORDER: tuple[tuple[str, bool], ...] = (
    ("main", True), ("worldInfoBefore", True), ("personaDescription", True), ("charDescription", True),
    ("charPersonality", True), ("scenario", True), ("enhanceDefinitions", False), ("nsfw", True),
    ("worldInfoAfter", True), ("dialogueExamples", True), ("chatHistory", True), ("jailbreak", True),
)

#: Keys ST strips when it exports a preset (they can hold secrets); :func:`install_preset` strips them too.
SENSITIVE_KEYS = ("reverse_proxy", "proxy_password", "custom_url", "custom_include_body", "custom_exclude_body",
                  "custom_include_headers", "vertexai_region", "vertexai_express_project_id")

_FLOAT_KEYS = ("temperature", "frequency_penalty", "presence_penalty", "top_p", "top_a", "min_p",
               "repetition_penalty")
_INT_KEYS = ("top_k", "openai_max_context", "openai_max_tokens", "seed", "n")


class PresetError(Exception):
    """A preset file cannot be used; the message names the file and says why (fit for the UI and CLI)."""


# ---------------------------------------------------------------------------------------------------------------
# the preset model


class PresetPrompt(BaseModel):
    """One ``prompts[]`` entry (cards.md §5.1). ``marker`` prompts have no content: ST fills them at build time.
    ``injection_position`` 0 = relative (its place in ``prompt_order``), 1 = in-chat at ``injection_depth``
    (0 = after the last message) with ``injection_order`` (same depth: lower first). ``injection_trigger`` lists
    the generation types it is sent for (empty = all). ``forbid_overrides`` (main/jailbreak): ignore the card's
    ``system_prompt`` / ``post_history_instructions``. Unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    identifier: str
    name: str = ""
    role: Role = "system"
    content: str = ""
    system_prompt: bool = False
    marker: bool = False
    injection_position: int = RELATIVE
    injection_depth: int = 4
    injection_order: int = 100
    injection_trigger: list[str] = Field(default_factory=list)
    forbid_overrides: bool = False


class OrderItem(BaseModel):
    """``{identifier, enabled}`` in a ``prompt_order`` list (the list's order is the prompt order)."""

    model_config = ConfigDict(extra="allow")

    identifier: str
    enabled: bool = False


class PromptOrder(BaseModel):
    """One ``prompt_order`` entry: the order list of ``character_id`` (100001 = the one ST uses)."""

    model_config = ConfigDict(extra="allow")

    character_id: int | str
    order: list[OrderItem] = Field(default_factory=list)


class Preset(BaseModel):
    """A SillyTavern chat-completion preset.

    ``prompts``/``prompt_order`` and the sampler/format fields below are typed; everything else in the file
    (model/source keys, ``extensions`` with preset-scoped ``regex_scripts``, …) is kept as extra fields, and
    ``raw`` holds the file's JSON exactly as read. ``name`` is the file name without ``.json`` (ST presets are
    named by their file). ``warnings`` lists what was repaired on import (not saved).

    Samplers (None = not in the file): ``temperature``, ``top_p``, ``top_k``, ``top_a``, ``min_p``,
    ``frequency_penalty``, ``presence_penalty``, ``repetition_penalty``, ``openai_max_context`` (context size in
    tokens), ``openai_max_tokens`` (reply budget in tokens), ``seed`` (-1 = random), ``n``. See :meth:`sampling`.
    """

    model_config = ConfigDict(extra="allow")

    name: str = ""
    prompts: list[PresetPrompt] = Field(default_factory=list)
    prompt_order: list[PromptOrder] = Field(default_factory=list)
    temperature: Optional[float] = None
    frequency_penalty: Optional[float] = None
    presence_penalty: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None
    top_a: Optional[float] = None
    min_p: Optional[float] = None
    repetition_penalty: Optional[float] = None
    openai_max_context: Optional[int] = None
    openai_max_tokens: Optional[int] = None
    seed: Optional[int] = None
    n: Optional[int] = None
    stream_openai: Optional[bool] = None
    wi_format: Optional[str] = None
    scenario_format: Optional[str] = None
    personality_format: Optional[str] = None
    new_chat_prompt: Optional[str] = None
    new_example_chat_prompt: Optional[str] = None
    impersonation_prompt: Optional[str] = None
    continue_nudge_prompt: Optional[str] = None
    group_nudge_prompt: Optional[str] = None
    send_if_empty: Optional[str] = None
    assistant_prefill: Optional[str] = None
    squash_system_messages: Optional[bool] = None
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)
    _loaded: dict[str, Any] = PrivateAttr(default_factory=dict)

    # -- reading --------------------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, obj: Any, name: str = "") -> "Preset":
        """Build a preset from parsed JSON. ``name`` labels error messages and becomes :attr:`name`.

        Repairs what SillyTavern would tolerate (recorded in :attr:`warnings`): prompts that are not objects are
        skipped, a missing identifier gets a generated one, an unknown role becomes system, non-text content is
        stringified, duplicate identifiers keep the first, bad numbers fall back to ST's defaults, bad sampler
        values are dropped. Very old presets (``main_prompt``/``nsfw_prompt``/``jailbreak_prompt`` at the root, no
        ``prompts``) are migrated into ``prompts[]`` as ST does.

        Raises :class:`PresetError` when ``obj`` is not a chat-completion preset — a character card, world info,
        a chat, an instruct/context template, a text-completion preset or ST settings are refused by name.
        """
        label = name or "预设"
        _refuse_other_kinds(obj, label)
        assert isinstance(obj, dict)
        warnings: list[str] = []
        data: dict[str, Any] = dict(obj)
        prompts_raw = data.get("prompts")
        if prompts_raw is None:
            legacy = {k: data.get(f"{k}_prompt") for k in ("main", "nsfw", "jailbreak")}
            prompts_raw = [{"identifier": k, **DEFAULT_PROMPTS[k]} for k in DEFAULT_PROMPTS]
            for p in prompts_raw:
                if isinstance(legacy.get(p["identifier"]), str):
                    p["content"] = legacy[p["identifier"]]
            if any(isinstance(v, str) for v in legacy.values()):
                warnings.append("旧式预设（main_prompt/nsfw_prompt/jailbreak_prompt 在顶层）：已按 SillyTavern 的方式转成 prompts")
            else:
                warnings.append("预设里没有 prompts：用 SillyTavern 的默认提示词")
        if not isinstance(prompts_raw, list):
            raise PresetError(f"{label}：prompts 不是数组（是 {type(prompts_raw).__name__}），无法导入")
        data["prompts"] = _clean_prompts(prompts_raw, warnings)
        data["prompt_order"] = _clean_orders(data.get("prompt_order"), warnings)
        for key in _FLOAT_KEYS + _INT_KEYS:
            if key in data and data[key] is not None:
                v = _number(data[key], integer=key in _INT_KEYS)
                if v is None:
                    warnings.append(f"采样参数 {key} 的值 {data[key]!r} 不是数字，已忽略")
                data[key] = v
        for key in ("wi_format", "scenario_format", "personality_format", "new_chat_prompt",
                    "new_example_chat_prompt", "impersonation_prompt", "continue_nudge_prompt",
                    "group_nudge_prompt", "send_if_empty", "assistant_prefill"):
            if key in data and data[key] is not None and not isinstance(data[key], str):
                data[key] = str(data[key])
        for key in ("stream_openai", "squash_system_messages"):
            if key in data and not isinstance(data[key], bool):
                data[key] = None
        if not isinstance(data.get("name"), str) or not data.get("name"):
            data["name"] = name
        try:
            preset = cls.model_validate(data)
        except ValidationError as e:  # pragma: no cover - the cleaning above covers the typed fields
            err = e.errors(include_input=False, include_url=False)[0]
            loc = ".".join(str(x) for x in err.get("loc", ()))
            raise PresetError(f"{label}：字段 {loc} 不对（{err.get('msg', '')}）") from e
        preset.raw = obj
        preset.warnings = warnings
        preset._loaded = preset.model_dump(mode="json", exclude={"name"})
        return preset

    # -- queries --------------------------------------------------------------------------------------------
    def prompt(self, identifier: str) -> Optional[PresetPrompt]:
        """The first prompt with ``identifier``, or None."""
        for p in self.prompts:
            if p.identifier == identifier:
                return p
        return None

    def order_list(self, character_id: int | str) -> Optional[list[OrderItem]]:
        """The order list stored for ``character_id`` (compared as strings, like ST), or None."""
        for po in self.prompt_order:
            if str(po.character_id) == str(character_id):
                return po.order
        return None

    def active_order(self) -> tuple[list[OrderItem], str]:
        """The order SillyTavern's chat-completion prompt manager uses, and where it came from: the 100001 list
        when present and non-empty ("100001"), else ST's built-in default order ("default")."""
        lst = self.order_list(GLOBAL_ORDER_ID)
        if lst:
            return list(lst), str(GLOBAL_ORDER_ID)
        return [OrderItem(identifier=i, enabled=e) for i, e in DEFAULT_ORDER], "default"

    def sampling(self, include_max_tokens: bool = False) -> dict[str, Any]:
        """Request parameters for an OpenAI-compatible call, only those the file sets to a non-neutral value:
        ``temperature``, ``top_p`` (< 1), ``frequency_penalty``/``presence_penalty`` (≠ 0), ``seed`` (≥ 0), and the
        non-OpenAI ``top_k`` (> 0), ``top_a``/``min_p`` (> 0), ``repetition_penalty`` (≠ 1). ``max_tokens`` (from
        ``openai_max_tokens``) only with ``include_max_tokens``: presets are tuned for plain replies (Default.json
        says 300) and such a cap would cut Liyuan's tool calls (a draft_write carries the whole text)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None and self.top_p < 1:
            out["top_p"] = self.top_p
        for key in ("frequency_penalty", "presence_penalty"):
            v = getattr(self, key)
            if v:
                out[key] = v
        if self.seed is not None and self.seed >= 0:
            out["seed"] = self.seed
        if self.top_k:
            out["top_k"] = self.top_k
        for key in ("top_a", "min_p"):
            v = getattr(self, key)
            if v:
                out[key] = v
        if self.repetition_penalty is not None and self.repetition_penalty != 1:
            out["repetition_penalty"] = self.repetition_penalty
        if include_max_tokens and self.openai_max_tokens:
            out["max_tokens"] = self.openai_max_tokens
        return out

    def to_json(self) -> dict[str, Any]:
        """The preset as SillyTavern JSON: the file exactly as read (``raw``), except the fields changed since
        (written in full, with the defaults filled in). Unchanged → the same JSON value as the file.
        (``name`` is not written: ST names presets by file.)"""
        out = dict(self.raw)
        dumped = self.model_dump(mode="json", exclude={"name"})
        for key, value in dumped.items():
            if key in self._loaded and self._loaded[key] == value and key in self.raw:
                continue  # unchanged: keep the file's own spelling
            if value is None and key not in self.raw:
                continue
            out[key] = value
        return out


def _number(v: Any, integer: bool) -> Optional[float | int]:
    if isinstance(v, bool):
        return int(v) if integer else float(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or math.isinf(f):
        return None
    return int(f) if integer else f


def _clean_prompts(raw: list[Any], warnings: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, p in enumerate(raw):
        if not isinstance(p, dict):
            warnings.append(f"prompts 第 {i + 1} 项不是对象，已跳过")
            continue
        p = dict(p)
        ident = p.get("identifier")
        if not isinstance(ident, str) or not ident:
            ident = f"prompt-{i + 1}"
            warnings.append(f"prompts 第 {i + 1} 项（{p.get('name') or '无名'}）没有 identifier，记作 {ident}")
        p["identifier"] = ident
        if ident in seen:
            warnings.append(f"identifier 重复：{ident}（第 {i + 1} 项），按 SillyTavern 只用第一个")
            continue
        seen.add(ident)
        if p.get("role") not in ROLES:
            if p.get("role") not in (None, ""):
                warnings.append(f"提示词「{p.get('name') or ident}」的 role {p.get('role')!r} 不认识，按 system 处理")
            p["role"] = "system"
        content = p.get("content")
        p["content"] = "" if content is None else content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        p["name"] = str(p.get("name") or "")
        for key, default in (("injection_position", RELATIVE), ("injection_depth", 4), ("injection_order", 100)):
            v = _number(p.get(key, default), integer=True) if p.get(key) is not None else default
            if v is None:
                warnings.append(f"提示词「{p['name'] or ident}」的 {key} {p.get(key)!r} 不是数字，用默认值 {default}")
                v = default
            p[key] = v
        if p["injection_position"] not in (RELATIVE, IN_CHAT):
            warnings.append(f"提示词「{p['name'] or ident}」的 injection_position {p['injection_position']} 不认识，按相对位置处理")
            p["injection_position"] = RELATIVE
        p["injection_depth"] = max(0, p["injection_depth"])
        trig = p.get("injection_trigger")
        p["injection_trigger"] = [str(t) for t in trig] if isinstance(trig, list) else []
        for key in ("system_prompt", "marker", "forbid_overrides"):
            p[key] = bool(p.get(key, False))
        out.append(p)
    return out


def _clean_orders(raw: Any, warnings: list[str]) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(f"prompt_order 不是数组（是 {type(raw).__name__}），已忽略")
        return []
    out = []
    for i, po in enumerate(raw):
        if not isinstance(po, dict) or not isinstance(po.get("order"), list):
            warnings.append(f"prompt_order 第 {i + 1} 项不是 {{character_id, order[]}}，已跳过")
            continue
        cid = po.get("character_id")
        if not isinstance(cid, (int, str)) or isinstance(cid, bool):
            warnings.append(f"prompt_order 第 {i + 1} 项的 character_id {cid!r} 不对，已跳过")
            continue
        items = []
        missing_flag = 0
        for item in po["order"]:
            if not isinstance(item, dict) or not isinstance(item.get("identifier"), str):
                warnings.append(f"prompt_order（character_id {cid}）里有一项不是 {{identifier, enabled}}，已跳过")
                continue
            item = dict(item)
            if "enabled" not in item:
                missing_flag += 1
            item["enabled"] = item.get("enabled") is True
            items.append(item)
        if missing_flag:
            warnings.append(f"prompt_order（character_id {cid}）有 {missing_flag} 项没写 enabled，按 SillyTavern 视为关闭")
        out.append({**po, "character_id": cid, "order": items})
    return out


def _refuse_other_kinds(obj: Any, label: str) -> None:
    """Raise PresetError naming what ``obj`` is when it is something other than a chat-completion preset."""
    if not isinstance(obj, dict):
        raise PresetError(f"{label}：不是 JSON 对象（是 {type(obj).__name__}），不是 SillyTavern 预设")
    keys = set(obj)
    data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
    if str(obj.get("spec") or "").startswith("chara_card") or "first_mes" in data or (
            "first_mes" in keys and ("name" in keys or "char_name" in keys)) or "char_persona" in keys:
        raise PresetError(f"{label}：这是角色卡，不是预设（请用「导入角色卡」）")
    if "prompts" not in keys and "entries" in keys:
        raise PresetError(f"{label}：这是世界书（World Info），不是预设（请作为世界书导入）")
    if "user_name" in keys and "character_name" in keys:
        raise PresetError(f"{label}：这是 SillyTavern 聊天记录的开头，不是预设（请用「导入聊天记录」）")
    if "prompts" in keys or "prompt_order" in keys:
        return
    if "input_sequence" in keys or "output_sequence" in keys:
        raise PresetError(f"{label}：这是 instruct 模板（文本补全用），不是对话补全（chat completion）预设")
    if "story_string" in keys:
        raise PresetError(f"{label}：这是 context 模板（文本补全用），不是对话补全（chat completion）预设")
    if "power_user" in keys or "oai_settings" in keys or "textgenerationwebui_settings" in keys:
        raise PresetError(f"{label}：这是 SillyTavern 的设置文件，不是单个预设（请在 SillyTavern 里导出预设）")
    if "main_prompt" in keys or "nsfw_prompt" in keys or "jailbreak_prompt" in keys:
        return
    if keys & {"temp", "rep_pen", "genamt", "max_length", "rep_pen_range", "typical_p", "tfs"}:
        raise PresetError(f"{label}：这是文本补全（Text Completion）的采样预设，不是对话补全（chat completion）预设")
    raise PresetError(f"{label}：没有 prompts / prompt_order，不像 SillyTavern 的对话补全（chat completion）预设")


def load_preset(path: str | Path) -> Preset:
    """Read a preset file (UTF-8, BOM tolerated). Its name is the file name without extension.
    Raises :class:`PresetError` for unreadable files, bad JSON and files that are not chat-completion presets."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise PresetError(f"无法读取预设 {p}：{e.strerror or e}") from e
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        raise PresetError(f"{p.name}：这是 PNG 图片（多半是角色卡），不是预设")
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise PresetError(f"{p.name}：不是 UTF-8 文本，不是预设") from e
    except json.JSONDecodeError as e:
        hint = "（看起来是 .jsonl 聊天记录）" if p.suffix.lower() == ".jsonl" else ""
        raise PresetError(f"{p.name}：不是有效的 JSON{hint}（第 {e.lineno} 行：{e.msg}）") from e
    return Preset.from_json(obj, name=p.stem)


def presets_dir() -> Path:
    """``<home>/presets`` (created on demand)."""
    from ..paths import home

    d = home() / "presets"
    d.mkdir(parents=True, exist_ok=True)
    return d


def install_preset(path: str | Path) -> Preset:
    """Validate a preset file and copy it into :func:`presets_dir` as ``<name>.json`` (an existing one with that
    name is replaced). The copy drops :data:`SENSITIVE_KEYS` (proxy passwords, custom URLs/headers), as ST's own
    export does. Returns the loaded preset. Raises PresetError / OSError."""
    from ..paths import safe_name

    preset = load_preset(path)
    clean = {k: v for k, v in preset.raw.items() if k not in SENSITIVE_KEYS}
    dest = presets_dir() / f"{safe_name(preset.name, 'preset')}.json"
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(json.dumps(clean, ensure_ascii=False, indent=4), encoding="utf-8")
    tmp.replace(dest)
    return preset


def list_presets() -> list[str]:
    """Names of the installed presets (file stems in :func:`presets_dir`), sorted."""
    return sorted(p.stem for p in presets_dir().glob("*.json"))


def load_installed_preset(name: str) -> Preset:
    """An installed preset by name (PresetError when missing or broken)."""
    from ..paths import safe_name

    return load_preset(presets_dir() / f"{safe_name(name, 'preset')}.json")


# ---------------------------------------------------------------------------------------------------------------
# the plan


Placement = Literal["system", "after", "depth"]


class PlannedPrompt(BaseModel):
    """One preset prompt with its place in our prompt.

    ``placement``: "system" (a system layer), "after" (a message after the user's words) or "depth" (an in-chat
    injection at ``depth`` with ``order``). ``marker`` prompts carry no text: Liyuan fills them from the card /
    persona / lorebook. ``content`` is the raw preset text (macros not yet expanded). ``main``/``jailbreak`` may
    be replaced by the card's own text at render time unless ``forbid_overrides``."""

    identifier: str
    name: str = ""
    role: Role = "system"
    content: str = ""
    marker: bool = False
    placement: Placement = "system"
    depth: int = 4
    order: int = 100
    forbid_overrides: bool = False


class DroppedPrompt(BaseModel):
    """A prompt of the order list that does not reach our prompt, and why (Chinese, for the UI)."""

    identifier: str
    name: str = ""
    reason: str


class PresetPlan(BaseModel):
    """Where a preset's prompts go in Liyuan's prompt (see the module doc).

    ``system``: system layers in preset order (text prompts and markers); ``after``: after segments in order;
    ``depth``: in-chat injections in order-list order; ``dropped``: what is left out and why; ``notes``: how the
    mapping differs from SillyTavern for this preset; ``order_source``: "100001" or "default";
    ``has_chat_history``: whether the order list has an enabled ``chatHistory`` marker (without it every relative
    prompt is a system layer — Liyuan still sends the history); ``sampling``: :meth:`Preset.sampling`;
    ``context_size``: ``openai_max_context`` (tokens) or None; ``generation``: the generation type planned for."""

    preset_name: str = ""
    order_source: str = str(GLOBAL_ORDER_ID)
    system: list[PlannedPrompt] = Field(default_factory=list)
    after: list[PlannedPrompt] = Field(default_factory=list)
    depth: list[PlannedPrompt] = Field(default_factory=list)
    dropped: list[DroppedPrompt] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    has_chat_history: bool = True
    sampling: dict[str, Any] = Field(default_factory=dict)
    context_size: Optional[int] = None
    generation: str = "normal"

    def describe(self) -> list[str]:
        """A readable summary, one line each (for the CLI and a settings dialog)."""
        lines = [f"预设「{self.preset_name}」（顺序表 {self.order_source}）"]
        lines.append("系统提示层：" + ("、".join(p.name or p.identifier for p in self.system) or "（无）"))
        lines.append("用户原话之后：" + ("、".join(f"{p.name or p.identifier}（{p.role}）" for p in self.after) or "（无）"))
        lines.append("按深度插入：" + ("、".join(f"{p.name or p.identifier}（深度 {p.depth}，{p.role}）" for p in self.depth) or "（无）"))
        for d in self.dropped:
            lines.append(f"不用：{d.name or d.identifier}——{d.reason}")
        lines.extend(self.notes)
        return lines


def plan(preset: Preset, generation: str = "normal") -> PresetPlan:
    """Map ``preset`` onto Liyuan's layered prompt for a generation of type ``generation`` (ST names: normal,
    continue, impersonate, swipe, regenerate, quiet; a Liyuan beat is "normal", a regenerate "regenerate").
    Pure: no card, persona or chat needed. See the module doc for the rules; the result lists every enabled
    prompt exactly once, in ``system``, ``after``, ``depth`` or ``dropped``."""
    order, source = preset.active_order()
    out = PresetPlan(preset_name=preset.name, order_source=source, sampling=preset.sampling(),
                     context_size=preset.openai_max_context, generation=generation)
    if source == "default":
        has_legacy = preset.order_list(LEGACY_ORDER_ID) is not None
        out.notes.append("预设里没有 character_id 100001 的顺序表" + ("（只有 100000 的旧表，SillyTavern 不读它）" if has_legacy else "")
                         + "，按 SillyTavern 的做法用默认顺序")
    by_id: dict[str, PresetPrompt] = {p.identifier: p for p in reversed(preset.prompts)}
    enabled: list[PresetPrompt] = []
    seen: set[str] = set()
    for item in order:
        ident = item.identifier
        p = by_id.get(ident)
        if p is None and ident in DEFAULT_PROMPTS:
            p = PresetPrompt(identifier=ident, **DEFAULT_PROMPTS[ident])
        name = p.name if p is not None else ""
        if ident in seen:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name, reason="顺序表里重复出现，只用第一次"))
            continue
        seen.add(ident)
        if p is None:
            out.dropped.append(DroppedPrompt(identifier=ident, reason="prompts 里没有这个提示词（SillyTavern 也会丢掉这条引用）"))
            continue
        if not item.enabled:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name, reason="预设里是关闭的"))
            continue
        if p.injection_trigger and generation not in p.injection_trigger:
            out.dropped.append(DroppedPrompt(identifier=ident, name=name,
                                             reason=f"只在 {', '.join(p.injection_trigger)} 生成时发送"))
            continue
        enabled.append(p)
    not_in_order = [p for p in preset.prompts if p.identifier not in seen and p.identifier not in RUNTIME_IDS]
    for p in not_in_order:
        out.dropped.append(DroppedPrompt(identifier=p.identifier, name=p.name, reason="不在当前使用的顺序表里"))
    ids = [p.identifier for p in enabled]
    history_at = ids.index("chatHistory") if "chatHistory" in ids else None
    out.has_chat_history = history_at is not None
    if history_at is None:
        out.notes.append("顺序表里没有启用的 chatHistory：梨园照常发送对话历史，所有相对位置的提示词都放进系统提示")
    for idx, p in enumerate(enabled):
        ident = p.identifier
        if ident == "chatHistory":
            continue
        label = p.name or ident
        after_history = history_at is not None and idx > history_at
        if ident in RUNTIME_IDS:
            out.dropped.append(DroppedPrompt(identifier=ident, name=p.name,
                                             reason="由 SillyTavern 运行时填写（梨园用自己的前情提要与账本）"))
            continue
        if p.marker or ident in MARKERS:
            if ident not in MARKERS:
                out.dropped.append(DroppedPrompt(identifier=ident, name=p.name, reason="扩展的占位符，梨园没有这个扩展"))
                continue
            if p.injection_position == IN_CHAT:
                out.notes.append(f"「{label}」在预设里是按深度插入，梨园把角色卡数据固定放在系统提示里")
            elif after_history:
                out.notes.append(f"「{label}」在预设里排在对话历史之后，梨园把角色卡数据固定放在系统提示里")
            out.system.append(PlannedPrompt(identifier=ident, name=p.name, role=p.role, marker=True, placement="system"))
            continue
        overridable = ident in ("main", "jailbreak") and not p.forbid_overrides
        if not p.content.strip() and not overridable:
            out.dropped.append(DroppedPrompt(identifier=ident, name=p.name, reason="内容为空"))
            continue
        planned = PlannedPrompt(identifier=ident, name=p.name, role=p.role, content=p.content,
                                forbid_overrides=p.forbid_overrides, depth=p.injection_depth, order=p.injection_order)
        if p.injection_position == IN_CHAT:
            planned.placement = "depth"
            out.depth.append(planned)
        elif after_history:
            planned.placement = "after"
            out.after.append(planned)
        else:
            if p.role != "system":
                out.notes.append(f"「{label}」在预设里是 {p.role} 消息，梨园把它并进系统提示（系统提示要逐字节稳定）")
            out.system.append(planned)
    return out


# ---------------------------------------------------------------------------------------------------------------
# macros


@dataclass
class MacroEnv:
    """Values for :func:`expand_macros`. Card fields are raw (their own macros are expanded where they land);
    ``persona`` is the persona description; ``variables``/``global_variables`` are the ``{{getvar}}`` stores
    (mutated by ``{{setvar}}`` …); ``last_*`` feed ``{{lastMessage}}`` & co. (tail only)."""

    char: str = ""
    user: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    persona: str = ""
    mes_examples: str = ""
    char_prompt: str = ""
    char_jailbreak: str = ""
    char_version: str = ""
    model: str = ""
    last_message: str = ""
    last_user_message: str = ""
    last_char_message: str = ""
    variables: dict[str, Any] = field(default_factory=dict)
    global_variables: dict[str, Any] = field(default_factory=dict)


_LEGACY = re.compile(r"<(USER|BOT|CHAR|CHARIFNOTGROUP|GROUP)>", re.IGNORECASE)
_ROLL = re.compile(r"\{\{roll[ :]([^}]+)\}\}", re.IGNORECASE)
_VAR = re.compile(
    r"\{\{(setvar|addvar|setglobalvar|addglobalvar)::([^:}]+)::([^}]*)\}\}"
    r"|\{\{(getvar|getglobalvar|incvar|decvar|incglobalvar|decglobalvar)::([^}]+)\}\}",
    re.IGNORECASE,
)
_TRIM = re.compile(r"(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*", re.IGNORECASE)
_SIMPLE = re.compile(r"\{\{(newline|noop|input)\}\}", re.IGNORECASE)
_ORIGINAL = re.compile(r"\{\{original\}\}", re.IGNORECASE)
_FIELDS = re.compile(r"\{\{(description|personality|scenario|persona|mesExamples|mesExamplesRaw|charPrompt|"
                     r"charJailbreak|charInstruction|charVersion|char_version|charDescription|charPersonality|"
                     r"model)\}\}", re.IGNORECASE)
_NAMES = re.compile(r"\{\{(user|char|group|charIfNotGroup|groupNotMuted|notChar)\}\}", re.IGNORECASE)
_CHATREF = re.compile(r"\{\{(lastMessage|lastUserMessage|lastCharMessage|lastMessageId|firstIncludedMessageId|"
                      r"lastSwipeId|currentSwipeId|maxPrompt|idle_duration|lastGenerationType)\}\}", re.IGNORECASE)
_COMMENT = re.compile(r"\{\{//[\s\S]*?\}\}")
_TIME = re.compile(r"\{\{(time|date|weekday|isotime|isodate)\}\}|\{\{datetimeformat +([^}]*)\}\}"
                   r"|\{\{time_UTC([-+]\d+)\}\}|\{\{timeDiff::[^}]*\}\}", re.IGNORECASE)
_RANDOM = re.compile(r"\{\{(random|pick)\s?::?([^}]+)\}\}", re.IGNORECASE)
_BANNED = re.compile(r'\{\{banned "[^"]*"\}\}', re.IGNORECASE)

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _fmt_value(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return "" if v is None else str(v)


def _as_number(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip()) if str(v).strip() else None
    except ValueError:
        return None


def _seeded_index(n: int, *parts: str) -> int:
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") % n


def _split_choices(body: str) -> list[str]:
    if "::" in body:
        return body.split("::")
    marker = "\x00COMMA\x00"
    return [x.strip().replace(marker, ",") for x in body.replace("\\,", marker).split(",")]


def _roll(spec: str, rnd: Callable[[int], int]) -> Optional[str]:
    m = re.fullmatch(r"\s*(\d*)\s*(?:d\s*(\d+))?\s*([-+]\s*\d+)?\s*", spec, re.IGNORECASE)
    if not m or not (m.group(1) or m.group(2)):
        return None
    if m.group(2) is None:  # a bare number N means 1dN
        count, sides = 1, int(m.group(1))
    else:
        count, sides = int(m.group(1) or 1), int(m.group(2))
    if sides <= 0 or count <= 0 or count > 1000:
        return None
    total = sum(rnd(sides) + 1 for _ in range(count))
    if m.group(3):
        total += int(m.group(3).replace(" ", ""))
    return str(total)


def _moment(fmt: str, t: datetime) -> str:
    """A subset of moment.js formatting (ST's {{datetimeformat}}): YYYY YY MMMM MMM MM M DD D dddd ddd HH H hh h
    mm m ss s A a; ``[text]`` is literal."""
    tokens = {
        "YYYY": f"{t.year:04d}", "YY": f"{t.year % 100:02d}", "MMMM": _MONTHS[t.month - 1],
        "MMM": _MONTHS[t.month - 1][:3], "MM": f"{t.month:02d}", "M": str(t.month), "DD": f"{t.day:02d}",
        "D": str(t.day), "dddd": _WEEKDAYS[t.weekday()], "ddd": _WEEKDAYS[t.weekday()][:3],
        "HH": f"{t.hour:02d}", "H": str(t.hour), "hh": f"{(t.hour % 12) or 12:02d}", "h": str((t.hour % 12) or 12),
        "mm": f"{t.minute:02d}", "m": str(t.minute), "ss": f"{t.second:02d}", "s": str(t.second),
        "A": "AM" if t.hour < 12 else "PM", "a": "am" if t.hour < 12 else "pm",
    }
    pattern = re.compile(r"\[[^\]]*\]|" + "|".join(sorted(map(re.escape, tokens), key=len, reverse=True)))
    return pattern.sub(lambda m: m.group(0)[1:-1] if m.group(0).startswith("[") else tokens[m.group(0)], fmt)


def expand_macros(text: str, env: MacroEnv, *, volatile: bool, seed: str = "", key: str = "",
                  original: Optional[str] = None, now: Optional[datetime] = None,
                  rng: Optional[_random.Random] = None, warnings: Optional[list[str]] = None) -> str:
    """Expand SillyTavern macros in ``text`` (legacy engine order, case-insensitive, no nesting; unknown macros are
    left as written).

    ``volatile=False`` (system prompt): ``{{random}}``/``{{roll}}`` are rolled from ``seed`` + ``key`` + position
    (stable for a chat), ``{{pick}}`` is seeded from ``seed`` + the text + position as ST does, and time/date and
    chat-reference macros stay verbatim; ``warnings`` (if given) receives one line per such case.
    ``volatile=True`` (tail): everything is evaluated now (``now`` default: local time; ``rng`` default: a fresh
    ``random.Random``). ``original`` is what ``{{original}}`` expands to (first occurrence only, as in ST).
    """
    if not text or ("{{" not in text and "<" not in text):
        return text
    warn = warnings if warnings is not None else []
    rand = rng or _random.Random()
    raw = text

    def roll_index(n: int, where: int) -> int:
        if volatile:
            return rand.randrange(n)
        return _seeded_index(n, seed, key, str(where))

    # 1. legacy tags
    def legacy(m: re.Match[str]) -> str:
        return env.user if m.group(1).upper() == "USER" else env.char

    text = _LEGACY.sub(legacy, text)

    # 2. dice
    def dice(m: re.Match[str]) -> str:
        counter = iter(range(10_000))
        result = _roll(m.group(1), lambda sides: roll_index(sides, m.start() * 1000 + next(counter)))
        if result is None:
            return m.group(0)
        if not volatile:
            warn.append(f"{key or '提示词'}：{m.group(0)} 在系统提示里每个对话只掷一次（固定）")
        return result

    text = _ROLL.sub(dice, text)

    # 3. variables, line by line, left to right
    def var(m: re.Match[str]) -> str:
        if m.group(1):
            op, name, value = m.group(1).lower(), m.group(2).strip(), m.group(3)
        else:
            op, name, value = m.group(4).lower(), m.group(5).strip(), ""
        store = env.global_variables if "global" in op else env.variables
        if op.startswith("set"):
            store[name] = value
            return ""
        if op.startswith("add"):
            current = store.get(name)
            cur = 0.0 if current in (None, "") else _as_number(current)
            inc = _as_number(value)
            if cur is not None and inc is not None:
                store[name] = cur + inc
            else:
                store[name] = _fmt_value(store.get(name, "")) + value
            return ""
        if op.startswith("inc") or op.startswith("dec"):
            cur = _as_number(store.get(name, 0)) or 0.0
            store[name] = cur + (1 if op.startswith("inc") else -1)
            return _fmt_value(store[name])
        return _fmt_value(store.get(name, ""))

    if "{{" in text and re.search(r"var::", text, re.IGNORECASE):
        text = "\n".join(_VAR.sub(var, line) if "{{" in line else line for line in text.split("\n"))

    # 4. newline / trim / noop / input
    text = _TRIM.sub("", text)
    text = _SIMPLE.sub(lambda m: "\n" if m.group(1).lower() == "newline" else "", text)

    # 5. card fields, then names
    if original is not None or "{{original}}" in text.lower():
        used = [False]

        def orig(_m: re.Match[str]) -> str:
            if used[0]:
                return ""
            used[0] = True
            return original or ""

        text = _ORIGINAL.sub(orig, text)
    fields = {"description": env.description, "chardescription": env.description, "personality": env.personality,
              "charpersonality": env.personality, "scenario": env.scenario, "persona": env.persona,
              "mesexamples": env.mes_examples, "mesexamplesraw": env.mes_examples, "charprompt": env.char_prompt,
              "charjailbreak": env.char_jailbreak, "charinstruction": env.char_jailbreak,
              "charversion": env.char_version, "char_version": env.char_version, "model": env.model}
    text = _FIELDS.sub(lambda m: fields[m.group(1).lower()], text)
    names = {"user": env.user, "char": env.char, "group": env.char, "charifnotgroup": env.char,
             "groupnotmuted": env.char, "notchar": env.user}
    text = _NAMES.sub(lambda m: names[m.group(1).lower()], text)

    # 6. chat references (tail only)
    def chatref(m: re.Match[str]) -> str:
        k = m.group(1).lower()
        if not volatile:
            warn.append(f"{key or '提示词'}：{m.group(0)} 随对话变化，系统提示里不展开（要逐字节稳定）")
            return m.group(0)
        value = {"lastmessage": env.last_message, "lastusermessage": env.last_user_message,
                 "lastcharmessage": env.last_char_message}.get(k)
        return m.group(0) if value is None else value

    text = _CHATREF.sub(chatref, text)

    # 7. comments
    text = _COMMENT.sub("", text)

    # 8. time
    def timefn(m: re.Match[str]) -> str:
        if not volatile:
            warn.append(f"{key or '提示词'}：{m.group(0)} 是时间宏，系统提示里不展开（要逐字节稳定）")
            return m.group(0)
        t = now or datetime.now()
        if m.group(1):
            k = m.group(1).lower()
            return {"time": _moment("h:mm A", t), "date": _moment("MMMM D, YYYY", t), "weekday": _moment("dddd", t),
                    "isotime": _moment("HH:mm", t), "isodate": _moment("YYYY-MM-DD", t)}[k]
        if m.group(2) is not None:
            return _moment(m.group(2).strip(), t)
        if m.group(3) is not None:
            utc = t.astimezone(timezone.utc)  # a naive time is taken as local time
            return _moment("h:mm A", utc + timedelta(hours=int(m.group(3))))
        return m.group(0)  # {{timeDiff}}: not supported

    text = _TIME.sub(timefn, text)

    # 9. random / pick / banned
    def choose(m: re.Match[str]) -> str:
        items = _split_choices(m.group(2))
        if not items:
            return ""
        if m.group(1).lower() == "pick":
            return items[_seeded_index(len(items), seed, raw, str(m.start()))]
        if not volatile:
            warn.append(f"{key or '提示词'}：{m.group(0)[:40]} 在系统提示里每个对话只抽一次（固定）")
        return items[roll_index(len(items), m.start())]

    text = _RANDOM.sub(choose, text)
    text = _BANNED.sub("", text)
    return text


# ---------------------------------------------------------------------------------------------------------------
# rendering


class DepthBlock(BaseModel):
    """Rendered text of one in-chat injection: ``depth`` (0 = after the last message), ``order`` (same depth:
    lower first), ``role``; ``source`` names where it came from (a preset identifier, "persona", "card")."""

    depth: int
    order: int = 100
    role: Role = "system"
    text: str
    source: str = ""


class PresetTail(BaseModel):
    """The per-beat part of a preset: depth injections and after segments (rendered, macros evaluated now)."""

    depth: list[DepthBlock] = Field(default_factory=list)
    after: list[ChatMessage] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def insert_depth_injections(messages: list[ChatMessage], blocks: Iterable[DepthBlock]) -> list[ChatMessage]:
    """Insert in-chat injections into ``messages`` (the chat part: history + the final user message, no system)
    as SillyTavern's ``populationInjectionPrompts`` does (openai.js, 2025):

    for each depth d, blocks are grouped by ``order`` and, within an order, by role; texts of one (order, role)
    are joined with "\\n" and stripped; the group's messages go just before the last d original messages
    (d = 0: after the last one; d ≥ len: at the very start). In the final order lower ``order`` comes first and,
    within an order, roles run assistant, user, system (system closest to the end). Deeper blocks that land on the
    same spot come first. Returns a new list; ``messages`` is not changed."""
    by_depth: dict[int, dict[int, dict[str, list[str]]]] = {}
    for b in blocks:
        if not b.text:
            continue
        by_depth.setdefault(max(0, b.depth), {}).setdefault(b.order, {}).setdefault(b.role, []).append(b.text)
    if not by_depth:
        return list(messages)
    n = len(messages)
    inserts: dict[int, list[tuple[int, list[ChatMessage]]]] = {}
    for depth, orders in by_depth.items():
        group: list[ChatMessage] = []
        for order in sorted(orders):
            for role in ("assistant", "user", "system"):
                texts = orders[order].get(role)
                if texts:
                    joined = "\n".join(texts).strip()
                    if joined:
                        group.append(ChatMessage(role=role, content=joined))  # type: ignore[arg-type]
        if group:
            inserts.setdefault(max(0, n - depth), []).append((depth, group))
    out: list[ChatMessage] = []
    for i in range(n + 1):
        for _, group in sorted(inserts.get(i, []), key=lambda x: -x[0]):
            out.extend(group)
        if i < n:
            out.append(messages[i])
    return out


def _lore_slot(e: LoreEntry) -> Optional[str]:
    """Which world-info marker a constant entry fills: "after" for ``after_char`` (ST position 1), None for an
    ``outlet`` entry (ST sends it only through ``{{outlet::name}}``), else "before" — Author's-Note, example and
    @depth positions included, since Liyuan keeps constant lore in the system prompt (as ``card_layers`` does)."""
    pos = str(getattr(e, "position", "before_char")).lower()
    ext_pos = (e.extensions or {}).get("position")
    if pos in ("outlet", "7") or ext_pos == 7:
        return None
    return "after" if pos in ("after_char", "1") or ext_pos == 1 else "before"


class PresetPrompter:
    """A :class:`PresetPlan` rendered for one chat: the byte-stable system layers (computed once) and the per-beat
    tail (:meth:`tail`, :meth:`build_messages`).

    Args:
        plan: from :func:`plan`.
        card, book: the chat's card and lorebook (``book`` default: ``card.lorebook``).
        ctx: ``char``/``user`` names (the same MacroContext the chat uses).
        persona: the chat's persona, or None (then only the user's name is given).
        seed: a stable per-chat string (e.g. the session header id) for ``{{pick}}`` and the fixed
            ``{{random}}``/``{{roll}}`` of the system layers.
        variables: initial ``{{getvar}}`` store (copied), e.g. an imported ST chat's ``chat_metadata.variables``.
        model_name: what ``{{model}}`` expands to.
        include_card_depth_prompt: add the card's ``extensions.depth_prompt`` (ST "Character's Note") as a depth
            injection (order 100), as ST does.

    ``system_layers`` replaces :func:`assemble.card_layers` (same section headings); ``warnings`` lists macros that
    were fixed or left verbatim in the system layers.
    """

    def __init__(self, plan: PresetPlan, card: Card, book: Optional[Lorebook] = None,
                 ctx: Optional[MacroContext] = None, persona: Optional[Persona] = None, seed: str = "",
                 variables: Optional[dict[str, Any]] = None, model_name: str = "",
                 include_card_depth_prompt: bool = True):
        self.plan = plan
        self.card = card
        self.book = book if book is not None else card.lorebook
        self.ctx = ctx or MacroContext(char=card.name, user=persona.name if persona else "")
        self.persona = persona
        self.seed = seed
        self.include_card_depth_prompt = include_card_depth_prompt
        self.env = MacroEnv(
            char=self.ctx.char, user=self.ctx.user, description=card.description, personality=card.personality,
            scenario=card.scenario, persona=persona.description if persona else "", mes_examples=card.mes_example,
            char_prompt=card.system_prompt, char_jailbreak=card.post_history_instructions,
            char_version=card.character_version, model=model_name, variables=dict(variables or {}),
        )
        self.warnings: list[str] = []
        self.system_layers = self._render_system()
        self._vars_after_system = dict(self.env.variables)
        self._globals_after_system = dict(self.env.global_variables)

    # -- system ---------------------------------------------------------------------------------------------
    def _x(self, text: str, key: str, volatile: bool = False, original: Optional[str] = None,
           warnings: Optional[list[str]] = None, now: Optional[datetime] = None,
           rng: Optional[_random.Random] = None) -> str:
        return expand_macros(text or "", self.env, volatile=volatile, seed=self.seed, key=key, original=original,
                             warnings=self.warnings if warnings is None else warnings, now=now, rng=rng).strip()

    def _override(self, p: PlannedPrompt, card_text: str, key: str, volatile: bool, warnings: Optional[list[str]] = None,
                  now: Optional[datetime] = None, rng: Optional[_random.Random] = None) -> tuple[bool, str]:
        """(card text used?, text) for main/jailbreak: the card's text replaces the preset's unless forbidden."""
        if card_text.strip() and not p.forbid_overrides:
            original = self._x(p.content, key, volatile, warnings=warnings, now=now, rng=rng)
            return True, self._x(card_text, key, volatile, original=original, warnings=warnings, now=now, rng=rng)
        return False, self._x(p.content, key, volatile, warnings=warnings, now=now, rng=rng)

    def _lore(self, after: bool) -> str:
        parts = []
        for e in self.book.constants():
            if _lore_slot(e) == ("after" if after else "before"):
                body = self._x(e.content, f"世界书「{e.display_title}」")
                if body:
                    parts.append(f"【{e.display_title}】{body}")
        return "\n\n".join(parts)

    def _section(self, p: PlannedPrompt, lore_titles: list[str]) -> Optional[tuple[str, str]]:
        ident = p.identifier
        card = self.card
        if p.marker:
            if ident == "charDescription":
                return "角色设定", self._x(card.description, "角色设定")
            if ident == "charPersonality":
                return "性格", self._x(card.personality, "性格")
            if ident == "scenario":
                return "场景", self._x(card.scenario, "场景")
            if ident == "dialogueExamples":
                return "对话示例", self._x(card.mes_example, "对话示例")
            if ident in ("worldInfoBefore", "worldInfoAfter"):
                title = "常驻设定" if not lore_titles else "常驻设定（续）"
                body = self._lore(after=ident == "worldInfoAfter")
                if body:
                    lore_titles.append(title)
                return title, body
            if ident == "personaDescription":
                if not self.ctx.user:
                    return None
                lines = [f"用户扮演「{self.ctx.user}」。"]
                if self.persona is not None and self.persona.in_prompt:
                    desc = self._x(self.persona.description, "用户的角色")
                    if desc:
                        lines.append(desc)
                return "用户的角色", "\n".join(lines)
            return None
        title = f"预设 · {p.name or ident}"
        if ident == "main":
            used, text = self._override(p, card.system_prompt, "main", False)
            return ("卡作者的系统提示" if used else title), text
        if ident == "jailbreak":
            used, text = self._override(p, card.post_history_instructions, "jailbreak", False)
            return ("卡作者的补充要求" if used else title), text
        return title, self._x(p.content, p.name or ident)

    def _render_system(self) -> str:
        sections = [f"# 角色卡：{self.card.name}"]
        lore_titles: list[str] = []
        persona_done = False
        for p in self.plan.system:
            sec = self._section(p, lore_titles)
            if p.identifier == "personaDescription":
                persona_done = True
            if sec and sec[1]:
                sections.append(f"## {sec[0]}\n{sec[1]}")
        if not persona_done and self.ctx.user:
            # Without the marker ST sends no persona text; the user's name is still needed (who the user plays).
            sections.append(f"## 用户的角色\n用户扮演「{self.ctx.user}」。")
        # de-duplicate warnings, keep order
        self.warnings = list(dict.fromkeys(self.warnings))
        return "\n\n".join(sections)

    # -- tail -----------------------------------------------------------------------------------------------
    def _tail_text(self, p: Any, out: "PresetTail", now: Any, rng: Any) -> str:
        """One per-beat preset prompt rendered now: main/jailbreak with the card's override, others as written."""
        key = p.name or p.identifier
        if p.identifier in ("main", "jailbreak"):
            card_text = self.card.system_prompt if p.identifier == "main" else self.card.post_history_instructions
            _, text = self._override(p, card_text, key, True, warnings=out.warnings, now=now, rng=rng)
            return text
        return self._x(p.content, key, True, warnings=out.warnings, now=now, rng=rng)

    def tail(self, user_text: str = "", last_char_message: str = "", now: Optional[datetime] = None,
             rng: Optional[_random.Random] = None) -> PresetTail:
        """Render the depth injections and after segments for one beat (volatile macros evaluated now).
        ``user_text`` feeds ``{{lastMessage}}``/``{{lastUserMessage}}``; ``last_char_message`` ``{{lastCharMessage}}``.
        Variables start from their state after the system layers on every call (a beat does not leak into the
        next through ``{{setvar}}``)."""
        self.env.variables = dict(self._vars_after_system)
        self.env.global_variables = dict(self._globals_after_system)
        self.env.last_message = user_text
        self.env.last_user_message = user_text
        self.env.last_char_message = last_char_message
        out = PresetTail()
        for p in self.plan.depth:
            text = self._tail_text(p, out, now, rng)
            if text:
                out.depth.append(DepthBlock(depth=p.depth, order=p.order, role=p.role, text=text, source=p.identifier))
        if self.persona is not None and self.persona.position == "at_depth":
            text = self._x(self.persona.description, "persona", True, warnings=out.warnings, now=now, rng=rng)
            if text:
                out.depth.append(DepthBlock(depth=self.persona.depth, order=100, role=self.persona.role, text=text,
                                            source="persona"))
        if self.include_card_depth_prompt:
            dp = (self.card.extensions or {}).get("depth_prompt")
            if isinstance(dp, dict) and isinstance(dp.get("prompt"), str) and dp["prompt"].strip():
                role = dp.get("role") if dp.get("role") in ROLES else "system"
                depth = _number(dp.get("depth", 4), integer=True)
                text = self._x(dp["prompt"], "depth_prompt", True, warnings=out.warnings, now=now, rng=rng)
                if text:
                    out.depth.append(DepthBlock(depth=max(0, int(depth if depth is not None else 4)), order=100,
                                                role=role, text=text, source="card"))
        for p in self.plan.after:
            text = self._tail_text(p, out, now, rng)
            if text:
                out.after.append(ChatMessage(role=p.role, content=text))
        out.warnings = list(dict.fromkeys(out.warnings))
        return out

    def build_messages(self, system: str, history: list[ChatMessage], injection: str, user_text: str,
                       now: Optional[datetime] = None, rng: Optional[_random.Random] = None) -> list[ChatMessage]:
        """The first call's messages with this preset — the preset-aware twin of ``assemble.build_messages``:
        system, the history with depth injections, the final user message (injection + blank line + words),
        then the after segments, each with its role. ``history`` is not changed."""
        last_char = next((m.content for m in reversed(history) if m.role == "assistant"), "")
        t = self.tail(user_text=user_text, last_char_message=last_char, now=now, rng=rng)
        final = ChatMessage(role="user", content=f"{injection}\n\n{user_text}" if injection else user_text)
        body = insert_depth_injections([*history, final], t.depth)
        return [ChatMessage(role="system", content=system), *body, *t.after]
