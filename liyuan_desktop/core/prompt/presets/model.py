"""The SillyTavern chat-completion preset file: :class:`Preset` and its prompts and order lists, the repairs made
on import and the refusal of files that are something else (cards.md §5). See :mod:`..presets` for the mapping."""

from __future__ import annotations

import json
import math
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ...jsonfile import object_at
from ...llm.sampling import Sampling, field_label
from ...messages import Msg, MsgText, message

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
    tokens), ``openai_max_tokens`` (reply budget in tokens), ``seed`` (-1 = random), ``n``; ``stream_openai``,
    ``reasoning_effort`` (auto/min/low/medium/high/max). See :meth:`sampling` and :meth:`request_sampling`.
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
    reasoning_effort: Optional[str] = None
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
    warnings: list[MsgText] = Field(default_factory=list, exclude=True)
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
        label: str = name or message("migrate.kind.preset")
        _refuse_other_kinds(obj, label)
        assert isinstance(obj, dict)
        warnings: list[Msg] = []
        data: dict[str, Any] = dict(obj)
        prompts_raw = data.get("prompts")
        if prompts_raw is None:
            legacy = {k: data.get(f"{k}_prompt") for k in ("main", "nsfw", "jailbreak")}
            prompts_raw = [{"identifier": k, **DEFAULT_PROMPTS[k]} for k in DEFAULT_PROMPTS]
            for p in prompts_raw:
                if isinstance(legacy.get(p["identifier"]), str):
                    p["content"] = legacy[p["identifier"]]
            if any(isinstance(v, str) for v in legacy.values()):
                warnings.append(message("presetwarn.legacy"))
            else:
                warnings.append(message("presetwarn.no_prompts"))
        if not isinstance(prompts_raw, list):
            raise PresetError(message("presetfile.prompts_type", label=label, type=type(prompts_raw).__name__))
        data["prompts"] = _clean_prompts(prompts_raw, warnings)
        data["prompt_order"] = _clean_orders(data.get("prompt_order"), warnings)
        for key in _FLOAT_KEYS + _INT_KEYS:
            if key in data and data[key] is not None:
                v = to_number(data[key], integer=key in _INT_KEYS)
                if v is None:
                    warnings.append(message("presetwarn.sampler", key=key, value=repr(data[key])))
                data[key] = v
        for key in ("wi_format", "scenario_format", "personality_format", "new_chat_prompt",
                    "new_example_chat_prompt", "impersonation_prompt", "continue_nudge_prompt",
                    "group_nudge_prompt", "send_if_empty", "assistant_prefill"):
            if key in data and data[key] is not None and not isinstance(data[key], str):
                data[key] = str(data[key])
        for key in ("stream_openai", "squash_system_messages"):
            if key in data and not isinstance(data[key], bool):
                data[key] = None
        if "reasoning_effort" in data and not isinstance(data["reasoning_effort"], str):
            data["reasoning_effort"] = None
        if not isinstance(data.get("name"), str) or not data.get("name"):
            data["name"] = name
        try:
            preset = cls.model_validate(data)
        except ValidationError as e:  # pragma: no cover - the cleaning above covers the typed fields
            err = e.errors(include_input=False, include_url=False)[0]
            loc = ".".join(str(x) for x in err.get("loc", ()))
            raise PresetError(message("presetfile.field", label=label, loc=loc, msg=err.get("msg", ""))) from e
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

    def request_sampling(self) -> tuple[Sampling, list[str]]:
        """The preset's sampling as :class:`~liyuan_desktop.core.llm.sampling.Sampling` for the actor's calls, and
        a line per value that is not used and why (Chinese, for the preset dialog and ``liyuan preset show``).

        Taken: :meth:`sampling`'s values (non-neutral ones only; ``top_a``/``seed`` included), ``stream_openai`` →
        ``stream``, ``reasoning_effort`` (SillyTavern's auto/min/low/medium/high/max; ``auto`` sends nothing).
        Not taken: ``openai_max_tokens`` (presets are tuned for plain replies, e.g. Default.json's 300, and such a
        cap would cut Liyuan's tool calls — a ``draft_write`` carries the whole text; set a reply limit per chat or
        per connection profile instead), ``n`` (Liyuan reads one choice), ``openai_max_context`` (the context window
        is the provider's setting; the world-info budget follows it as SillyTavern does, ``lore.settings.budget_basis``). Values out of the API's range are dropped and reported."""
        notes: list[str] = []
        values = dict(self.sampling())
        if self.stream_openai is not None:
            values["stream"] = self.stream_openai
        effort = (self.reasoning_effort or "").strip().lower()
        if effort:
            if effort in ("auto", "min", "low", "medium", "high", "max"):
                values["reasoning_effort"] = effort
            else:
                notes.append(message("sampling.effort_unknown", field=field_label("reasoning_effort"),
                                     name="reasoning_effort", value=self.reasoning_effort))
        kept: dict[str, Any] = {}
        for key, value in values.items():
            try:
                Sampling.model_validate({key: value})
            except ValidationError:
                notes.append(message("sampling.out_of_range", field=field_label(key), name=key, value=repr(value)))
                continue
            kept[key] = value
        if self.openai_max_tokens:
            notes.append(message("plan.max_tokens", n=self.openai_max_tokens))
        if self.n and self.n > 1:
            notes.append(message("plan.n", n=self.n))
        return Sampling.model_validate(kept), notes

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


def to_number(v: Any, integer: bool) -> Optional[float | int]:
    """``v`` as a finite number (int when ``integer``; bools count as 0/1), or None when it is not one."""
    if isinstance(v, bool):
        return int(v) if integer else float(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if math.isnan(f) or math.isinf(f):
        return None
    return int(f) if integer else f


def _clean_prompts(raw: list[Any], warnings: list[Msg]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, p in enumerate(raw):
        if not isinstance(p, dict):
            warnings.append(message("presetwarn.prompt_not_object", i=i + 1))
            continue
        p = dict(p)
        ident = p.get("identifier")
        if not isinstance(ident, str) or not ident:
            ident = f"prompt-{i + 1}"
            warnings.append(message("presetwarn.no_identifier", i=i + 1, name=p.get("name") or message("presetwarn.unnamed"),
                                    ident=ident))
        p["identifier"] = ident
        if ident in seen:
            warnings.append(message("presetwarn.dup_identifier", ident=ident, i=i + 1))
            continue
        seen.add(ident)
        if p.get("role") not in ROLES:
            if p.get("role") not in (None, ""):
                warnings.append(message("presetwarn.role", name=p.get("name") or ident, role=repr(p.get("role"))))
            p["role"] = "system"
        content = p.get("content")
        p["content"] = "" if content is None else content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        p["name"] = str(p.get("name") or "")
        for key, default in (("injection_position", RELATIVE), ("injection_depth", 4), ("injection_order", 100)):
            v = to_number(p.get(key, default), integer=True) if p.get(key) is not None else default
            if v is None:
                warnings.append(message("presetwarn.number", name=p["name"] or ident, key=key, value=repr(p.get(key)),
                                        default=default))
                v = default
            p[key] = v
        if p["injection_position"] not in (RELATIVE, IN_CHAT):
            warnings.append(message("presetwarn.injection", name=p["name"] or ident, pos=p["injection_position"]))
            p["injection_position"] = RELATIVE
        p["injection_depth"] = max(0, p["injection_depth"])
        trig = p.get("injection_trigger")
        p["injection_trigger"] = [str(t) for t in trig] if isinstance(trig, list) else []
        for key in ("system_prompt", "marker", "forbid_overrides"):
            p[key] = bool(p.get(key, False))
        out.append(p)
    return out


def _clean_orders(raw: Any, warnings: list[Msg]) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(message("presetwarn.order_type", type=type(raw).__name__))
        return []
    out = []
    for i, po in enumerate(raw):
        if not isinstance(po, dict) or not isinstance(po.get("order"), list):
            warnings.append(message("presetwarn.order_item", i=i + 1))
            continue
        cid = po.get("character_id")
        if not isinstance(cid, (int, str)) or isinstance(cid, bool):
            warnings.append(message("presetwarn.order_cid", i=i + 1, cid=repr(cid)))
            continue
        items = []
        missing_flag = 0
        for item in po["order"]:
            if not isinstance(item, dict) or not isinstance(item.get("identifier"), str):
                warnings.append(message("presetwarn.order_entry", cid=cid))
                continue
            item = dict(item)
            if "enabled" not in item:
                missing_flag += 1
            item["enabled"] = item.get("enabled") is True
            items.append(item)
        if missing_flag:
            warnings.append(message("presetwarn.order_enabled", cid=cid, n=missing_flag))
        out.append({**po, "character_id": cid, "order": items})
    return out


def _refuse_other_kinds(obj: Any, label: str) -> None:
    """Raise PresetError naming what ``obj`` is when it is something other than a chat-completion preset."""
    if not isinstance(obj, dict):
        raise PresetError(message("presetfile.not_object", label=label, type=type(obj).__name__))
    keys = set(obj)
    data = object_at(obj, "data")
    if str(obj.get("spec") or "").startswith("chara_card") or "first_mes" in data or (
            "first_mes" in keys and ("name" in keys or "char_name" in keys)) or "char_persona" in keys:
        raise PresetError(message("presetfile.is_card", label=label))
    if "prompts" not in keys and "entries" in keys:
        raise PresetError(message("presetfile.is_book", label=label))
    if "user_name" in keys and "character_name" in keys:
        raise PresetError(message("presetfile.is_chat", label=label))
    if "prompts" in keys or "prompt_order" in keys:
        return
    if "input_sequence" in keys or "output_sequence" in keys:
        raise PresetError(message("presetfile.is_instruct", label=label))
    if "story_string" in keys:
        raise PresetError(message("presetfile.is_context", label=label))
    if "power_user" in keys or "oai_settings" in keys or "textgenerationwebui_settings" in keys:
        raise PresetError(message("presetfile.is_settings", label=label))
    if "main_prompt" in keys or "nsfw_prompt" in keys or "jailbreak_prompt" in keys:
        return
    if keys & {"temp", "rep_pen", "genamt", "max_length", "rep_pen_range", "typical_p", "tfs"}:
        raise PresetError(message("presetfile.is_textgen", label=label))
    raise PresetError(message("presetfile.no_prompts", label=label))


