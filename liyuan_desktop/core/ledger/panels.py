"""Liyuan panels (seed 002, 卡的状态栏和自建面板吃同一份快照): a fixed HTML template plus a data tree, shown beside
the conversation. The scribe moves the data with a ``panel_patch``; the model never sees the template (seed: 自建面板
注入时只喂数据不喂外观).

A card declares its panels in ``extensions.liyuan.panels``::

    [{"id": "行囊", "title": "行囊", "template": "<p>铜钱：{{data.铜钱}}</p>", "data": {"铜钱": 30}}, …]

Templates are rendered with :func:`render_template` against ``{"state": <ledger>, "data": <panel data>}``:
``{{path.to.value}}`` is looked up by dotted path and **HTML-escaped**; nothing else in the template is
interpreted (no loops, no expressions). The ledger side is the :class:`state.WorldState` dict plus ``present``
(names whose ``at`` equals ``location``, seed 002 在场判定) and ``here`` (the same, joined with 「、」).

Only panels with a non-empty ``data`` tree take part in the scribe's prompt (:func:`scribe_panels`); a ledger-only
panel (template reading only ``{{state.…}}``) adds nothing to it, so a card with such a panel keeps its scribe
prompt byte-identical.

The rp-state entry stores the data of the panels as ``{"panels": {id: data}}``; templates and titles always come
from the card (:func:`panels_with_data`).
"""

from __future__ import annotations

import copy
import html
import json
import math
import re
from typing import Any, Callable, Iterable, Optional

from pydantic import BaseModel, Field, ValidationError

from ..jsonfile import object_at
from ..messages import Msg, message, validation_reason

_BRACE = re.compile(r"[{}]")


def _replace_placeholders(template: str, fn: Callable[[str], str]) -> str:
    """``template`` with each ``{{ path }}`` (no brace inside, not blank) replaced by ``fn(path stripped)`` — what
    ``re.sub(r"\\{\\{\\s*([^{}\\s][^{}]*?)\\s*\\}\\}", …)`` did, by literal searches in linear time (that pattern
    was quadratic on ``{{a`` followed by a long run of spaces, issue 29 §1)."""
    out: list[str] = []
    pos = 0
    p = template.find("{{")
    while p >= 0:
        m = _BRACE.search(template, p + 2)  # the body runs to the next brace, which must start "}}"
        q = m.start() if m else -1
        body = template[p + 2:q] if q >= 0 else ""
        if q >= 0 and template.startswith("}}", q) and body.strip():
            out += [template[pos:p], fn(body.strip())]
            pos = q + 2
            p = template.find("{{", pos)
        else:
            p = template.find("{{", p + 1)
    out.append(template[pos:])
    return "".join(out)


class Panel(BaseModel):
    """One panel: ``id`` (the key the scribe's panel_patch uses), ``title`` (shown above it), ``template`` (HTML
    with ``{{path}}`` placeholders), ``data`` (the panel's own tree; empty = the panel reads only the ledger)."""

    id: str
    title: str = ""
    template: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


def panels_from_card(card: Any) -> tuple[list[Panel], list[Msg]]:
    """The panels declared by a card (``extensions.liyuan.panels``). ``card``: a :class:`cards.Card`, the raw card
    dict (V1/V2/V3) or the extensions dict. Returns (panels, warnings); malformed entries and repeated ids are
    skipped with a warning, never raised."""
    ext: Any = getattr(card, "extensions", None)
    if ext is None and isinstance(card, dict):
        if isinstance(card.get("data"), dict) and "extensions" in card["data"]:
            ext = card["data"]["extensions"]          # V2/V3 card
        elif "extensions" in card:
            ext = card["extensions"]                  # V1-style card dict
        else:
            ext = card                                # the extensions dict itself
    liyuan = (ext or {}).get("liyuan") if isinstance(ext, dict) else None
    raw = liyuan.get("panels") if isinstance(liyuan, dict) else None
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [message("panels.not_list")]
    out: list[Panel] = []
    warnings: list[Msg] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        try:
            p = Panel.model_validate(entry)
        except ValidationError as e:
            warnings.append(message("panels.bad", n=i + 1, error=validation_reason(e.errors()[0])))
            continue
        if not p.id.strip() or p.id in seen:
            warnings.append(message("panels.bad_id", n=i + 1, id=repr(p.id)))
            continue
        seen.add(p.id)
        out.append(p)
    return out, warnings


def scribe_panels(panels: Iterable[Panel]) -> list[Panel]:
    """The panels the scribe keeps: those with a non-empty data tree (ledger-only panels add nothing)."""
    return [p for p in panels if p.data]


def panel_data(panels: Iterable[Panel]) -> dict[str, dict[str, Any]]:
    """``{id: data}`` of the panels that carry data (what the rp-state entry stores and the scribe sees)."""
    return {p.id: copy.deepcopy(p.data) for p in panels if p.data}


def panels_with_data(panels: Iterable[Panel], stored: Any) -> list[Panel]:
    """The card's panels with their data replaced by ``stored`` (an rp-state's ``{id: data}``) where it has an
    entry for the panel; ids the card no longer declares are dropped."""
    stored = stored if isinstance(stored, dict) else {}
    out = []
    for p in panels:
        d = stored.get(p.id)
        out.append(p.model_copy(update={"data": copy.deepcopy(d)}) if isinstance(d, dict) else p.model_copy(deep=True))
    return out


# ---- panel_patch -------------------------------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and not math.isfinite(v))


def _coerce(old: Any, new: Any) -> tuple[bool, Any]:
    """(ok, value): ``new`` made to fit the type of ``old`` (numbers stay numbers, strings stay strings, a bool
    stays a bool, an object/array is replaced only by an object/array)."""
    if _is_number(old):
        if _is_number(new):
            return True, new
        if isinstance(new, str):
            try:
                f = float(new.strip())
            except ValueError:
                return False, None
            if not math.isfinite(f):
                return False, None
            return True, int(f) if f.is_integer() and isinstance(old, int) else f
        return False, None
    if isinstance(old, bool):
        if isinstance(new, bool):
            return True, new
        if isinstance(new, str) and new.strip().lower() in ("true", "false"):
            return True, new.strip().lower() == "true"
        return False, None
    if isinstance(old, str):
        if isinstance(new, str):
            return True, new
        if _is_number(new):
            return True, str(new)
        return False, None
    if isinstance(old, dict):
        return (True, new) if isinstance(new, dict) else (False, None)
    if isinstance(old, list):
        return (True, new) if isinstance(new, list) else (False, None)
    # old is null: anything JSON-like goes
    return (True, new) if new is None or isinstance(new, (str, bool, dict, list)) or _is_number(new) else (False, None)


def _kind(v: Any) -> Msg:
    """The JSON kind of ``v`` as a catalog word (数字 / a number …)."""
    if _is_number(v):
        return message("panel.kind.number")
    return message("panel.kind." + {bool: "bool", str: "string", dict: "object", list: "array"}.get(type(v), "null"))


def apply_panel_patch(panels: list[Panel], patch: Any, language: str = "zh") -> tuple[list[Panel], list[str], list[str]]:
    """Apply the scribe's ``panel_patch`` ``{panel id (or title): {"dotted.path": new value}}`` to copies of
    ``panels``. Returns (new panels, applied ``"id.path"`` list, warnings for the scribe in the chat's ``language``).

    Rules: a path must lead through existing objects; its last segment may be new (added) or existing (replaced);
    a replaced value keeps its type (numbers stay numbers — a numeric string is converted, anything else refused;
    strings accept numbers as text; objects/arrays only objects/arrays). Unknown panel ids, ledger-only panels,
    non-object patches and bad paths are refused with a warning; the rest still applies. ``patch`` ``{}``/None:
    nothing changes."""
    out = [p.model_copy(deep=True) for p in panels]
    applied: list[str] = []
    warnings: list[str] = []
    if patch is None or patch == {}:
        return out, applied, warnings
    if not isinstance(patch, dict):
        return out, applied, [message("panel.patch_not_object", key="panel_patch")]
    by_id = {p.id: p for p in out}
    by_title: dict[str, Optional[Panel]] = {}
    for p in out:
        if p.title:
            by_title[p.title] = None if p.title in by_title else p  # an ambiguous title matches nothing
    for name, changes in patch.items():
        panel = by_id.get(str(name)) or by_title.get(str(name))
        if panel is None:
            warnings.append(message("panel.unknown", name=str(name)))
            continue
        if not panel.data:
            warnings.append(message("panel.no_data", name=str(name)))
            continue
        if not isinstance(changes, dict):
            warnings.append(message("panel.changes_not_object", name=str(name)))
            continue
        for path, value in changes.items():
            parts = [s for s in str(path).split(".")]
            if not parts or any(s == "" for s in parts):
                warnings.append(message("panel.bad_path", name=str(name), path=str(path)))
                continue
            cur: Any = panel.data
            ok = True
            for seg in parts[:-1]:
                if isinstance(cur, dict) and isinstance(cur.get(seg), (dict, list)):
                    cur = cur[seg]
                elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur) and isinstance(cur[int(seg)], (dict, list)):
                    cur = cur[int(seg)]
                else:
                    ok = False
                    break
            if not ok:
                warnings.append(message("panel.no_path", name=str(name), path=str(path)))
                continue
            last = parts[-1]
            if isinstance(cur, list):
                if not last.isdigit() or int(last) >= len(cur):
                    warnings.append(message("panel.out_of_range", name=str(name), path=str(path)))
                    continue
                idx = int(last)
                good, v = _coerce(cur[idx], value)
                if not good:
                    warnings.append(message("panel.wrong_kind", name=str(name), path=str(path), kind=_kind(cur[idx]),
                                            value=json.dumps(value, ensure_ascii=False)))
                    continue
                cur[idx] = copy.deepcopy(v)
            elif last in cur:
                good, v = _coerce(cur[last], value)
                if not good:
                    warnings.append(message("panel.wrong_kind", name=str(name), path=str(path), kind=_kind(cur[last]),
                                            value=json.dumps(value, ensure_ascii=False)))
                    continue
                cur[last] = copy.deepcopy(v)
            else:
                good, v = _coerce(None, value)
                if not good:
                    warnings.append(message("panel.bad_value", name=str(name), path=str(path)))
                    continue
                cur[last] = copy.deepcopy(v)
            applied.append(f"{panel.id}.{path}")
    return out, applied, warnings


# ---- rendering -----------------------------------------------------------------------------------------------------
def ledger_context(state: Any) -> dict[str, Any]:
    """The ``state`` side of a template's context: the ledger dict (a WorldState, its dict, or None → empty)
    plus ``present`` (names whose ``at`` equals ``location``) and ``here`` (those joined with 「、」)."""
    if state is None:
        d: dict[str, Any] = {}
    elif isinstance(state, dict):
        d = copy.deepcopy(state)
    else:
        d = state.to_dict() if hasattr(state, "to_dict") else state.model_dump()
    loc = d.get("location") or ""
    chars = object_at(d, "characters")
    present = [n for n, c in chars.items() if loc and isinstance(c, dict) and c.get("at") == loc]
    d["present"] = present
    d["here"] = "、".join(present)
    return d


def _lookup(ctx: Any, path: str) -> Any:
    cur = ctx
    for seg in path.split("."):
        if isinstance(cur, dict) and seg in cur:
            cur = cur[seg]
        elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur):
            cur = cur[int(seg)]
        else:
            return None
    return cur


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "是" if v else "否"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (int, float, str)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return "、".join(_text(x) for x in v)
    return json.dumps(v, ensure_ascii=False)


def render_template(template: str, context: dict[str, Any]) -> str:
    """``template`` with every ``{{dotted.path}}`` replaced by the HTML-escaped text of that value in ``context``
    (missing → ""; lists of scalars joined with 「、」; booleans 是/否; other objects as JSON). The template's
    own HTML is kept as written."""
    return _replace_placeholders(template or "", lambda path: html.escape(_text(_lookup(context, path)), quote=True))


def render_panel(panel: Panel, state: Any) -> str:
    """The HTML of one panel: its template rendered with ``{"state": ledger_context(state), "data": panel.data}``."""
    return render_template(panel.template, {"state": ledger_context(state), "data": panel.data})
