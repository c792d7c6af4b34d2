"""Reading and writing the two JSON shapes of a book: a card's ``character_book`` (V2/V3; SillyTavern extras in
``entry.extensions`` in snake_case, except ``useProbability`` and ``selectiveLogic`` which stay camelCase) and a
SillyTavern World Info file (``{"entries": {"<uid>": {...camelCase...}}}``). The field mapping and the defaults are
ST's ``convertCharacterBook`` / ``convertWorldInfoToCharacterBook`` (:data:`_EXT_FIELDS`); an entry keeps the JSON it
was read from, so export rewrites only the fields that changed. :class:`~.lorebook.Lorebook` ``from_*`` / ``to_*``
build on these helpers.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable, Iterable, Optional, Union

from .model import DEFAULT_DEPTH, DEFAULT_WEIGHT, POSITIONS, LoreEntry

# ---------------------------------------------------------------------------------------------------------------
# small value helpers (JavaScript-ish readings of loosely typed JSON)
# ---------------------------------------------------------------------------------------------------------------

def truthy(v: Any) -> bool:
    """JavaScript truthiness (``"false"`` is true, ``0``/``""``/``null`` false)."""
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def as_int(v: Any, default: int) -> int:
    """``v`` read as an int the way a JS ``Number()`` field is read in ST's files: bools and finite floats
    truncated, numeric strings parsed; anything else gives ``default``."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return int(v)
    if isinstance(v, str):
        try:
            return int(float(v.strip()))
        except ValueError:
            return default
    return default


def opt_int(v: Any) -> Optional[int]:
    """``v`` as an int (see :func:`as_int`), or None when it is missing, empty or not a number."""
    if v is None or v == "":
        return None
    r = as_int(v, -(10**18))
    return None if r == -(10**18) else r


def _opt_bool(v: Any) -> Optional[bool]:
    return None if v is None else truthy(v)


def _str_list(v: Any) -> list[str]:
    """Keys as a list of strings; a comma-separated string is split (some tools write that); empty strings dropped
    (ST never matches an empty key)."""
    if v is None:
        return []
    if isinstance(v, str):
        v = v.split(",")
    if not isinstance(v, (list, tuple)):
        return []
    return [str(k) for k in v if k is not None and str(k)]


def _position_name(n: Any) -> str:
    i = as_int(n, 1)
    return POSITIONS[i] if 0 <= i < len(POSITIONS) else f"position_{i}"


def _position_number(name: str) -> int:
    if name in POSITIONS:
        return POSITIONS.index(name)
    if name.startswith("position_"):
        return as_int(name[9:], 1)
    return 1


def _dur(v: Any) -> int:
    """``delayUntilRecursion``: ``true`` ≙ level 1, a number is the level, falsy = off."""
    if v is True:
        return 1
    if not truthy(v):
        return 0
    return max(0, as_int(v, 1))


def _dur_out(level: int) -> Union[bool, int]:
    return False if level <= 0 else (True if level == 1 else level)


# ---------------------------------------------------------------------------------------------------------------
# field mapping card entry ⇄ WI entry  (ST convertCharacterBook / convertWorldInfoToCharacterBook)
# ---------------------------------------------------------------------------------------------------------------

# (model field, WI key, card location: "top:<key>" or "ext:<key>", reader, default when absent)
_EXT_FIELDS: list[tuple[str, str, str, Callable[[Any], Any], Any]] = [
    ("selective_logic", "selectiveLogic", "selectiveLogic", lambda v: as_int(v, 0), 0),
    ("probability", "probability", "probability", lambda v: 100 if v is None else as_int(v, 100), 100),
    ("use_probability", "useProbability", "useProbability", truthy, True),
    ("depth", "depth", "depth", lambda v: DEFAULT_DEPTH if v is None else as_int(v, DEFAULT_DEPTH), DEFAULT_DEPTH),
    ("role", "role", "role", lambda v: 0 if v is None else as_int(v, 0), 0),
    ("exclude_recursion", "excludeRecursion", "exclude_recursion", truthy, False),
    ("prevent_recursion", "preventRecursion", "prevent_recursion", truthy, False),
    ("delay_until_recursion", "delayUntilRecursion", "delay_until_recursion", _dur, 0),
    ("group", "group", "group", lambda v: "" if v is None else str(v), ""),
    ("group_override", "groupOverride", "group_override", truthy, False),
    ("group_weight", "groupWeight", "group_weight",
     lambda v: DEFAULT_WEIGHT if v is None else as_int(v, DEFAULT_WEIGHT), DEFAULT_WEIGHT),
    ("use_group_scoring", "useGroupScoring", "use_group_scoring", _opt_bool, None),
    ("scan_depth", "scanDepth", "scan_depth", opt_int, None),
    ("case_sensitive", "caseSensitive", "case_sensitive", _opt_bool, None),
    ("match_whole_words", "matchWholeWords", "match_whole_words", _opt_bool, None),
    ("automation_id", "automationId", "automation_id", lambda v: "" if v is None else str(v), ""),
    ("vectorized", "vectorized", "vectorized", truthy, False),
    ("sticky", "sticky", "sticky", lambda v: max(0, as_int(v, 0)) if v is not None else 0, 0),
    ("cooldown", "cooldown", "cooldown", lambda v: max(0, as_int(v, 0)) if v is not None else 0, 0),
    ("delay", "delay", "delay", lambda v: max(0, as_int(v, 0)) if v is not None else 0, 0),
    ("display_index", "displayIndex", "display_index", opt_int, None),
    ("ignore_budget", "ignoreBudget", "ignore_budget", truthy, False),
    ("triggers", "triggers", "triggers", lambda v: [str(x) for x in v] if isinstance(v, list) else [], []),
    ("outlet_name", "outletName", "outlet_name", lambda v: "" if v is None else str(v), ""),
    ("match_persona_description", "matchPersonaDescription", "match_persona_description", truthy, False),
    ("match_character_description", "matchCharacterDescription", "match_character_description", truthy, False),
    ("match_character_personality", "matchCharacterPersonality", "match_character_personality", truthy, False),
    ("match_character_depth_prompt", "matchCharacterDepthPrompt", "match_character_depth_prompt", truthy, False),
    ("match_scenario", "matchScenario", "match_scenario", truthy, False),
    ("match_creator_notes", "matchCreatorNotes", "match_creator_notes", truthy, False),
]
_MODEL_FIELDS = ("uid", "title", "keys", "secondary_keys", "content", "constant", "selective", "enabled", "order",
                 "position", "character_filter", "extensions") + tuple(f for f, *_ in _EXT_FIELDS)


def _out_value(field: str, value: Any) -> Any:
    if field == "delay_until_recursion":
        return _dur_out(value)
    if isinstance(value, list):
        return list(value)
    return value


def parse_card_entry(e: dict[str, Any], uid: int) -> dict[str, Any]:
    """One entry of a card's embedded ``character_book`` (V2 spec field names, ST's ``extensions``) as the
    field values of a :class:`~.model.LoreEntry` with id ``uid``; missing fields take ST's defaults (cards.md)."""
    ext = _v if isinstance(_v := e.get("extensions"), dict) else {}
    pos = ext.get("position")
    vals: dict[str, Any] = {
        "uid": uid,
        "title": str(e.get("comment") or e.get("name") or ""),
        "keys": _str_list(e.get("keys", e.get("key"))),
        "secondary_keys": _str_list(e.get("secondary_keys", e.get("keysecondary"))),
        "content": "" if e.get("content") is None else str(e.get("content")),
        "constant": truthy(e.get("constant")),
        "selective": truthy(e.get("selective")),  # ST: `entry.selective || false`
        "enabled": truthy(e.get("enabled")),  # ST: `disable: !entry.enabled`
        "order": as_int(e.get("insertion_order", e.get("order", 100)), 100),
        "position": (_position_name(pos) if pos is not None
                     else "before_char" if e.get("position") == "before_char" else "after_char"),
        "character_filter": _v if isinstance(_v := ext.get("character_filter"), dict) else None,
        "extensions": ext,
    }
    for field, _wi, ck, reader, default in _EXT_FIELDS:
        vals[field] = reader(ext[ck]) if ck in ext else json_copy(default)
    return vals


def parse_wi_entry(w: dict[str, Any], uid: int) -> dict[str, Any]:
    """One entry of a SillyTavern world-info file (``entries`` of ``worlds/*.json``, ST field names) as the field
    values of a :class:`~.model.LoreEntry` with id ``uid``; missing fields take ST's defaults (cards.md)."""
    vals: dict[str, Any] = {
        "uid": uid,
        "title": "" if w.get("comment") is None else str(w.get("comment")),
        "keys": _str_list(w.get("key")),
        "secondary_keys": _str_list(w.get("keysecondary")),
        "content": "" if w.get("content") is None else str(w.get("content")),
        "constant": truthy(w.get("constant")),
        "selective": truthy(w.get("selective", True)),
        "enabled": not truthy(w.get("disable")),
        "order": as_int(w.get("order", 100), 100),
        "position": _position_name(w.get("position", 0)),
        "character_filter": _v if isinstance(_v := w.get("characterFilter"), dict) else None,
        "extensions": _v if isinstance(_v := w.get("extensions"), dict) else {},
    }
    for field, wk, _ck, reader, default in _EXT_FIELDS:
        vals[field] = reader(w[wk]) if wk in w else json_copy(default)
    return vals


def _write_card_field(out: dict[str, Any], field: str, value: Any) -> None:
    ext = out.setdefault("extensions", {})
    if field == "uid":
        out["id"] = value
    elif field == "title":
        out["comment"] = value
    elif field in ("keys", "secondary_keys", "content", "constant", "selective"):
        out[field] = _out_value(field, value)
    elif field == "enabled":
        out["enabled"] = value
    elif field == "order":
        out["insertion_order"] = value
    elif field == "position":
        n = _position_number(value)
        out["position"] = "before_char" if n == 0 else "after_char"
        ext["position"] = n
    elif field == "character_filter":
        if value is None:
            ext.pop("character_filter", None)
        else:
            ext["character_filter"] = copy.deepcopy(value)
    elif field == "extensions":
        out["extensions"] = copy.deepcopy(value)
    else:
        ck = next(c for f, _w, c, _r, _d in _EXT_FIELDS if f == field)
        ext[ck] = _out_value(field, value)


def _write_wi_field(out: dict[str, Any], field: str, value: Any) -> None:
    if field == "uid":
        out["uid"] = value
    elif field == "title":
        out["comment"] = value
    elif field == "keys":
        out["key"] = list(value)
    elif field == "secondary_keys":
        out["keysecondary"] = list(value)
    elif field in ("content", "constant", "selective"):
        out[field] = value
    elif field == "enabled":
        out["disable"] = not value
    elif field == "order":
        out["order"] = value
    elif field == "position":
        out["position"] = _position_number(value)
    elif field == "character_filter":
        if value is None:
            out.pop("characterFilter", None)
        else:
            out["characterFilter"] = copy.deepcopy(value)
    elif field == "extensions":
        out["extensions"] = copy.deepcopy(value)
    else:
        wk = next(w for f, w, _c, _r, _d in _EXT_FIELDS if f == field)
        out[wk] = _out_value(field, value)


def _entry_values(e: LoreEntry) -> dict[str, Any]:
    return {f: getattr(e, f) for f in _MODEL_FIELDS}


def export_entry(e: LoreEntry, shape: str) -> dict[str, Any]:
    """The entry as a card-book entry (``shape="card"``) or a WI entry (``"wi"``). Same shape as read: the original
    JSON with only the changed fields rewritten. Other shape: ST's conversion with its full field set."""
    cur = _entry_values(e)
    writer = _write_card_field if shape == "card" else _write_wi_field
    raw = entry_raw(e)
    if raw is not None and e._kind == shape:
        out: dict[str, Any] = json_copy(raw)
        parsed = entry_parsed(e) or {}
        if cur["extensions"] != parsed.get("extensions"):
            writer(out, "extensions", cur["extensions"])
        for f in _MODEL_FIELDS:
            if f != "extensions" and cur[f] != parsed.get(f):
                writer(out, f, cur[f])
        return out
    if shape == "card":
        # ST convertWorldInfoToCharacterBook: {id, keys, …, use_regex: true, extensions: {...wi.extensions, …}}
        out = {
            "id": e.uid, "keys": list(e.keys), "secondary_keys": list(e.secondary_keys), "comment": e.title,
            "content": e.content, "constant": e.constant, "selective": e.selective, "insertion_order": e.order,
            "enabled": e.enabled, "position": "before_char" if _position_number(e.position) == 0 else "after_char",
            "use_regex": True, "extensions": copy.deepcopy(e.extensions),
        }
        out["extensions"]["position"] = _position_number(e.position)
        for f, _w, ck, _r, _d in _EXT_FIELDS:
            out["extensions"][ck] = _out_value(f, getattr(e, f))
        if e.character_filter is not None:
            out["extensions"]["character_filter"] = copy.deepcopy(e.character_filter)
        return out
    # ST convertCharacterBook: the WI template filled from the card entry
    out = {
        "uid": e.uid, "key": list(e.keys), "keysecondary": list(e.secondary_keys), "comment": e.title,
        "content": e.content, "constant": e.constant, "selective": e.selective, "order": e.order,
        "position": _position_number(e.position), "disable": not e.enabled, "addMemo": bool(e.title),
    }
    for f, wk, _c, _r, _d in _EXT_FIELDS:
        out[wk] = _out_value(f, getattr(e, f))
    if out["displayIndex"] is None:
        out["displayIndex"] = e.uid
    out["extensions"] = copy.deepcopy(e.extensions)
    if e.character_filter is not None:
        out["characterFilter"] = copy.deepcopy(e.character_filter)
    return out


def json_copy(v: Any) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, tuples, scalars), several times faster than
    ``copy.deepcopy`` (no memo, no reduce protocol); any other object falls back to ``copy.deepcopy``. Parsing a
    50,000-entry book spent 80 % of its time in ``deepcopy`` (issue 15 item 10)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if type(v) is dict:
        return {k: json_copy(x) for k, x in v.items()}
    if type(v) is list:
        return [json_copy(x) for x in v]
    if type(v) is tuple:
        return tuple(json_copy(x) for x in v)
    return copy.deepcopy(v)


def book_json(obj: Any) -> Optional[dict[str, Any]]:
    """The book object inside a book file's JSON, as :meth:`.lorebook.Lorebook.from_any` finds it: ``obj`` itself,
    or its ``data`` for a ``lorebook_v3`` export whose top level has no entry object. None when ``obj`` is no
    object."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("entries"), dict):
        return obj
    if obj.get("spec") == "lorebook_v3" and isinstance(data := obj.get("data"), dict):
        return data
    return obj


def entry_raw(e: LoreEntry) -> Optional[dict[str, Any]]:
    """The JSON ``e`` was read from, or None (built in code, or its file changed since it was opened). An entry of
    a book opened from the rows cache (:meth:`.lorebook.Lorebook.from_file`) has it not decoded yet: its file is
    decoded now, once for the whole book (:class:`.bookcache.RawFile`), and the entry keeps the result."""
    raw = e._raw
    if raw is None and e._lazy is not None:
        raw = e._lazy.raw()
        if raw is not None:
            priv = e.__pydantic_private__
            assert priv is not None
            priv["_raw"] = raw  # set in place: an attribute assignment counts as an edit and recompiles the book
    return raw


def entry_parsed(e: LoreEntry) -> Optional[dict[str, Any]]:
    """``e``'s field values as read from its JSON (what export compares against to rewrite only changed fields),
    or None (built in code). Built from the cached row on first use for a book opened by
    :meth:`.lorebook.Lorebook.from_file`."""
    parsed = e._parsed
    if parsed is None and e._lazy is not None:
        parsed = e._lazy.parsed()
        if parsed is not None:
            priv = e.__pydantic_private__
            assert priv is not None
            priv["_parsed"] = parsed
    return parsed


def new_entry(vals: dict[str, Any], raw: dict[str, Any], kind: str, book: str, source: str) -> LoreEntry:
    """The entry of ``vals`` (a ``_parse_*_entry`` result: new strings and lists, but ``extensions`` and
    ``character_filter`` are the raw JSON's own dicts), independent of ``raw`` and of its values as read
    (``_parsed``): those two dicts are copied for each side; the lists of ``vals`` go to ``_parsed`` and the entry
    gets its own (pydantic copies lists and top-level dicts, not what they hold). Copying every value twice took
    a third of the first open of a 50,000-entry file (issue 29 §8)."""
    ext, cf = vals["extensions"], vals["character_filter"]
    e = LoreEntry(**{**vals, "extensions": json_copy(ext), "character_filter": json_copy(cf)}, book=book,
                  source=source)
    parsed = dict(vals)
    parsed["extensions"], parsed["character_filter"] = json_copy(ext), json_copy(cf)
    e._raw = raw
    e._kind = kind
    e._parsed = parsed
    return e


def js_key_order(keys: Iterable[str]) -> list[str]:
    """Object key order as JavaScript iterates it: array-index-like keys ascending, then the others as written."""
    keys = list(keys)
    ints = sorted((k for k in keys if k.isascii() and k.isdigit() and (k == "0" or not k.startswith("0"))
                   and int(k) < 2**32 - 1), key=int)
    index_like = set(ints)  # built once: rebuilt per key it made a 50,000-entry book take minutes (issue 29 §8)
    rest = [k for k in keys if k not in index_like]
    return ints + rest

