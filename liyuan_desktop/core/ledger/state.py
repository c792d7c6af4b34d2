"""The scene ledger (账本): world state, the patch merge rules with their guards, the roster (登场名录), presence.

Rules follow seed 002 (「状态别漂移：每轮一份场景快照」): sections 合并规则写死在程序里, 登场名录：只增不删,
地点和所在地一比. Text formats (applied lines, warnings, 【世界状态】 lines, roster line) are byte-exact with the
golden runs ``round1.json``, ``round2.json`` and ``patch_demo.json``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..messages import Msg, MsgText, message
from ..text import prompt_language, utf16_slice

#: Allowed top-level patch keys, in the order the unknown-key warning lists them (seed 002).
TOP_KEYS: tuple[str, ...] = ("time", "location", "characters", "inventory", "flags", "plot_threads")
#: Roster caps per table (seed 002: 人物、地点 100 条，物品、剧情线 60 条).
ROSTER_CAPS: dict[str, int] = {"characters": 100, "places": 100, "items": 60, "events": 60}
#: A roster time blurb is the in-story time cut to this many UTF-16 units.
ROSTER_BLURB_MAX = 40


def js_json(value: Any) -> str:
    """``JSON.stringify(value)`` as JavaScript prints it (no spaces, non-ASCII kept) — used in warning texts."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CharacterState(BaseModel):
    """One character in the ledger. ``affinity``: attitude towards the user's persona, integer -100..100.
    ``at``: where the character is now, written like ``WorldState.location`` (equal → 在场)."""

    affinity: int = 0
    status: str = ""
    notes: str = ""
    at: Optional[str] = None


class Roster(BaseModel):
    """Append-only index of every name seen: name → in-story time of first appearance ("" once dropped)."""

    characters: dict[str, str] = Field(default_factory=dict)
    items: dict[str, str] = Field(default_factory=dict)
    events: dict[str, str] = Field(default_factory=dict)
    places: dict[str, str] = Field(default_factory=dict)


class WorldState(BaseModel):
    """The whole ledger of one branch at one point. Persisted in ``rp-state`` session entries.

    ``to_json()`` key order is fixed (time, location, characters, inventory, flags, plot_threads, roster) because
    the scribe prompt shows it (golden ``round1.json``/``round2.json`` ``scribe.userText``). ``roster`` is absent
    until the first patch registers names.
    """

    time: str = ""
    location: str = ""
    characters: dict[str, CharacterState] = Field(default_factory=dict)
    inventory: list[str] = Field(default_factory=list)
    flags: dict[str, str] = Field(default_factory=dict)
    plot_threads: list[str] = Field(default_factory=list)
    roster: Optional[Roster] = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict in the canonical key order, ``None`` fields left out."""
        return self.model_dump(exclude_none=True)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """``JSON.stringify(state, null, indent)``: non-ASCII kept, ``{}``/``[]`` for empty containers."""
        if indent is None:
            return js_json(self.to_dict())
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


class PatchResult(BaseModel):
    """Outcome of :func:`apply_patch`: the new state, the applied lines and the warnings (exact seed wording)."""

    state: WorldState
    applied: list[MsgText] = Field(default_factory=list)  # catalog messages (core/messages.py) whose Chinese
    warnings: list[MsgText] = Field(default_factory=list)  # text is the seed's wording, byte for byte


def _clamp_affinity(value: float) -> int:
    # JavaScript Math.round: halves round up (towards +inf), unlike Python's banker's rounding.
    return int(max(-100, min(100, math.floor(value + 0.5))))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _js_string(value: Any) -> str:
    """``String(value)`` for the scalars a scribe may put where a string belongs."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _string_array(key: str, value: Any, warnings: list[str]) -> Optional[list[str]]:
    if not isinstance(value, list):
        warnings.append(message("led.warn.not_array", key=key, value=js_json(value)))
        return None
    kept = [x for x in value if isinstance(x, str)]
    dropped = [x for x in value if not isinstance(x, str)]
    if dropped:
        shown = "、".join(js_json(d) for d in dropped[:2])
        more = "…" if len(dropped) > 2 else ""
        warnings.append(message("led.warn.items_dropped", key=key, n=len(dropped), shown=shown, more=more))
    return kept


#: The longest value (characters) a short world-state field takes (``time``, ``location``, a character's ``at``):
#: 「傍晚（雨中）」, 「青梧的客栈（檐外下雨）」 fit; a sentence of the reply copied into the field does not (issue 30).
SHORT_FIELD_MAX = 24
_SENTENCE_MARKS = ("。", "！", "？", "!", "?", "「", "」", "“", "”", "\n")


def prose_in_short_field(value: str) -> bool:
    """True when ``value`` is prose rather than a short field's value: longer than :data:`SHORT_FIELD_MAX`
    characters, or holding a sentence end, a line break or dialogue quotes (a 0.5B's scribe set ``time`` to a
    sentence of the chapter)."""
    v = value.strip()
    return len(v) > SHORT_FIELD_MAX or any(m in v for m in _SENTENCE_MARKS)


def _short_field_warning(key: str, value: str) -> Msg:
    return message("led.warn.short_field", key=key, value=js_json(value)[:60], n=SHORT_FIELD_MAX)


def apply_patch(state: WorldState, patch: Any, language: str = "zh") -> PatchResult:
    """Merge a scribe patch into ``state`` (which is not modified) with the fixed rules of seed 002.

    - ``time``/``location``: strings, replaced whole; prose (:func:`prose_in_short_field`) is refused, and so are
      both when a patch gives them the same value (a small model filling both with one phrase of the reply).
    - ``characters``: ``{name: {affinity?, status?, notes?, at?}}`` merged field by field; a new name starts at
      affinity 0; affinity is rounded (JavaScript ``Math.round``) and clamped to ±100; wrongly typed fields skipped.
    - ``inventory``/``plot_threads``: string arrays replaced whole; non-strings dropped with a warning.
    - ``flags``: merged by key; values are strings (numbers/booleans are stringified, other values dropped).
    - any other top-level key is refused with ``未知字段 …`` warning. Finally the roster registers new names.

    Returns a :class:`PatchResult`; never raises for bad patch content (a non-object patch is one warning). The
    warnings are messages (``core/messages``: ``led.warn.*``; their Chinese text is seed 002's), rendered in the
    reader's language for display and in the chat's language when fed back to the scribe (:func:`.scribe.scribe_user_text`);
    ``language`` is accepted for the callers' symmetry. The applied lines are the same in both (:mod:`.wording`).
    """
    nxt = state.model_copy(deep=True)
    applied: list[str] = []
    warnings: list[str] = []
    if not isinstance(patch, dict):
        warnings.append(message("led.warn.patch_not_object", value=js_json(patch)[:80]))
        register_roster(nxt)
        return PatchResult(state=nxt, applied=applied, warnings=warnings)
    same = (isinstance(patch.get("time"), str) and patch.get("time") == patch.get("location")
            and bool(str(patch.get("time")).strip()))
    for key, value in patch.items():
        if key in ("time", "location"):
            if same:
                warnings.append(message("led.warn.same_line", key=key, other="location" if key == "time" else "time",
                                        value=js_json(value)[:60]))
            elif isinstance(value, str) and prose_in_short_field(value):
                warnings.append(_short_field_warning(key, value))
            elif isinstance(value, str):
                setattr(nxt, key, value)
                applied.append(message(f"led.patch.{key}", v=value))
            else:
                warnings.append(message("led.warn.not_string", key=key, value=js_json(value)))
        elif key == "characters":
            if not isinstance(value, dict):
                warnings.append(message("led.warn.chars_not_object", key=key))
                continue
            for name, cs in value.items():
                if not isinstance(cs, dict):
                    warnings.append(message("led.warn.char_not_object", name=name, value=js_json(cs)))
                    continue
                cur = nxt.characters.get(name) or CharacterState()
                if _is_number(cs.get("affinity")):
                    cur.affinity = _clamp_affinity(cs["affinity"])
                elif "affinity" in cs:
                    warnings.append(message("led.warn.affinity", name=name, value=js_json(cs["affinity"])))
                for fld in ("status", "notes", "at"):
                    if fld == "at" and isinstance(cs.get(fld), str) and prose_in_short_field(cs[fld]):
                        warnings.append(_short_field_warning(f"characters.{name}.at", cs[fld]))
                    elif isinstance(cs.get(fld), str):
                        setattr(cur, fld, cs[fld])
                    elif fld in cs:
                        warnings.append(message("led.warn.field", name=name, field=fld, value=js_json(cs[fld])))
                nxt.characters[name] = cur
                applied.append(message("led.patch.char", name=name))
        elif key in ("inventory", "plot_threads"):
            kept = _string_array(key, value, warnings)
            if kept is not None:
                setattr(nxt, key, kept)
                applied.append(message(f"led.patch.{key}", v=list(kept)))
        elif key == "flags":
            if not isinstance(value, dict):
                warnings.append(message("led.warn.flags_not_object", key=key))
                continue
            for k, v in value.items():
                if isinstance(v, str) or _is_number(v) or isinstance(v, bool):
                    sv = v if isinstance(v, str) else _js_string(v)
                    nxt.flags[k] = sv
                    applied.append(message("led.patch.flag", k=k, v=sv))
                else:
                    warnings.append(message("led.warn.flag_value", k=k, value=js_json(v)))
        else:
            warnings.append(message("led.warn.unknown_key", key=key, allowed=", ".join(TOP_KEYS)))
    register_roster(nxt)
    return PatchResult(state=nxt, applied=applied, warnings=warnings)


def _cap_roster(table: dict[str, str], cap: int) -> dict[str, str]:
    """Over ``cap`` entries the oldest entries lose their time (seed 002: 超了预算先砍时间、不砍名字). Names are never
    removed — a dropped name would come back as a 「new」 character."""
    items = list(table.items())
    if len(items) > cap:
        cut = len(items) - cap
        items = [(k, "") if i < cut else (k, v) for i, (k, v) in enumerate(items)]
    return dict(items)


def register_roster(state: WorldState) -> None:
    """Add every current character, item, plot thread and place (``location`` and each ``at``) to the roster
    with the in-story time of first sight (seed 002 registerRoster). Names are never removed. Mutates ``state``."""
    r = state.roster or Roster()
    at = utf16_slice(state.time or "", 0, ROSTER_BLURB_MAX)
    for name in state.characters:
        if name not in r.characters:
            r.characters[name] = at
    for it in state.inventory:
        if it and it not in r.items:
            r.items[it] = at
    for t in state.plot_threads:
        if t and t not in r.events:
            r.events[t] = at
    for p in [state.location, *[(c.at or "") for c in state.characters.values()]]:
        if p and p not in r.places:
            r.places[p] = at
    state.roster = Roster(
        characters=_cap_roster(r.characters, ROSTER_CAPS["characters"]),
        items=_cap_roster(r.items, ROSTER_CAPS["items"]),
        events=_cap_roster(r.events, ROSTER_CAPS["events"]),
        places=_cap_roster(r.places, ROSTER_CAPS["places"]),
    )


#: The labels of the formatted ledger per language (issue 32: the model of an English chat reads English; the
#: Chinese ones are seed 002's, byte for byte).
LEDGER_LABELS: dict[str, dict[str, str]] = {
    "zh": {"time": "时间：", "place": "地点：", "affinity": "好感 ", "status": "状态：", "present": "在场", "at": "在：",
           "notes": "备注：", "items": "物品：", "threads": "剧情线：", "sep": "；", "list": "、", "empty": "（尚无记录）",
           "q": "「{}」", "name": "{}：", "r_chars": "人物", "r_places": "地点", "r_items": "物品", "r_events": "剧情线",
           "first": "{}（{}）", "no_roster": "（尚无登记）"},
    "en": {"time": "Time: ", "place": "Place: ", "affinity": "affinity ", "status": "status: ", "present": "present",
           "at": "at: ", "notes": "notes: ", "items": "Items: ", "threads": "Plot threads: ", "sep": "; ",
           "list": ", ", "empty": "(nothing recorded yet)", "q": "\"{}\"", "name": "{}: ", "r_chars": "Characters",
           "r_places": "Places", "r_items": "Items", "r_events": "Plot threads", "first": "{} ({})",
           "no_roster": "(no one registered yet)"},
}


def _labels(language: str) -> dict[str, str]:
    return LEDGER_LABELS[prompt_language(language)]


def format_state(state: WorldState, language: str = "zh") -> str:
    """The 【世界状态】 body: one fact per line (seed 002 formatState). Presence: ``at`` equal to ``location`` prints
    「在场」, otherwise 「在：…」. Empty ledger → 「（尚无记录）」. ``language``: the chat's — the labels in English for
    every language but Chinese (:data:`LEDGER_LABELS`)."""
    w = _labels(language)
    lines: list[str] = []
    if state.time:
        lines.append(f"{w['time']}{state.time}")
    if state.location:
        lines.append(f"{w['place']}{state.location}")
    for name, c in state.characters.items():
        parts = [f"{w['affinity']}{c.affinity}"]
        if c.status:
            parts.append(f"{w['status']}{c.status}")
        if c.at:
            parts.append(w["present"] if c.at == state.location else f"{w['at']}{c.at}")
        if c.notes:
            parts.append(f"{w['notes']}{c.notes}")
        lines.append(w["name"].format(name) + w["sep"].join(parts))
    if state.inventory:
        lines.append(w["items"] + w["list"].join(state.inventory))
    for k, v in state.flags.items():
        lines.append(f"{w['name'].format(k)}{v}")
    if state.plot_threads:
        lines.append(w["threads"] + " ".join(w["q"].format(t) for t in state.plot_threads))
    return "\n".join(lines) if lines else w["empty"]


def _roster_section(label: str, entries: dict[str, str], w: dict[str, str]) -> Optional[str]:
    if not entries:
        return None
    return w["name"].format(label) + w["list"].join(w["first"].format(name, t) if t else name
                                                    for name, t in entries.items())


def format_roster(state: WorldState, language: str = "zh") -> str:
    """The 【登场名录】 line: 人物；地点；物品；剧情线, each ``name（first-seen time）`` joined by 、 (seed 002
    formatRosterIndex). No roster → 「（尚无登记）」. ``language`` as in :func:`format_state`."""
    w = _labels(language)
    r = state.roster
    sections = []
    if r is not None:
        for key, table in (("r_chars", r.characters), ("r_places", r.places), ("r_items", r.items),
                           ("r_events", r.events)):
            s = _roster_section(w[key], table, w)
            if s:
                sections.append(s)
    return w["sep"].join(sections) if sections else w["no_roster"]


def has_roster(state: WorldState) -> bool:
    """True when the roster holds at least one name (the injection shows 【登场名录】 only then)."""
    r = state.roster
    return bool(r and (r.characters or r.items or r.events or r.places))
