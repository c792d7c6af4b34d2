"""The scribe's ``mvu_patch`` (``{"a.b.c": new value}``): :func:`apply_mvu_patch` merges it with the type rules.
A key that holds a dot (``AXMC .338 LM``, ``v1.2``) is addressed with a JSON Pointer key (``"/装备/AXMC .338 LM"``)
or lodash's bracket form (``装备["AXMC .338 LM"]``); the dotted form stays for every other key."""

from __future__ import annotations

import copy
from typing import Any

from ...messages import message
from .paths import (
    MISSING,
    Segment,
    coerce_value,
    get_at,
    guard_path,
    is_pair,
    join_path,
    js_str,
    list_index,
    parse_path,
    put_at,
    value_of,
)
from .state import Changes, MvuResult, MvuState, make_result


def set_leaf(tree: dict[str, Any], segs: list[Segment], value: Any, changes: Changes, applied: list[str],
              warnings: list[str], *, create: bool = True, keep_pair: bool = True) -> bool:
    """Set one path with the type rules; returns True when the tree changed."""
    where = join_path(segs)
    if not segs:
        warnings.append(message("mvu.empty_path"))
        return False
    g = guard_path(segs)
    if g:
        warnings.append(g)
        return False
    parent = get_at(tree, segs[:-1])
    if parent is MISSING:
        warnings.append(message("mvu.no_parent_path", where=where))
        return False
    last = segs[-1]
    if isinstance(parent, dict):
        key = last if isinstance(last, str) else str(last)
        if key not in parent:
            if not create:
                warnings.append(message("mvu.missing", where=where))
                return False
            parent[key] = copy.deepcopy(value)
            changes.mark(segs)
            applied.append(message("mvu.added", where=where, value=js_str(value)))
            return True
        old = parent[key]
    elif isinstance(parent, list):
        i = list_index(parent, last)
        if i is None:
            warnings.append(message("mvu.bad_index", where=where))
            return False
        old = parent[i]
    else:
        warnings.append(message("mvu.parent_not_object", where=where, parent=js_str(parent)[:40]))
        return False
    if keep_pair and is_pair(old) and not (isinstance(value, list) and not is_pair(value) and not isinstance(old[0], list)):
        nv = value[0] if is_pair(value) else value
        coerced, warn = coerce_value(old[0], nv, where)
        if warn:
            warnings.append(warn)
            return False
        if coerced == old[0] and type(coerced) is type(old[0]):
            return False
        before = old[0]
        new_leaf = [coerced, old[1]]
    else:
        coerced, warn = coerce_value(old, value, where)
        if warn:
            warnings.append(warn)
            return False
        if coerced == old and type(coerced) is type(old):
            return False
        before = old
        new_leaf = coerced
    put_at(parent, last, new_leaf)
    changes.mark(segs)
    applied.append(message("mvu.changed", where=where, old=js_str(before), new=js_str(value_of(new_leaf))))
    return True


def apply_mvu_patch(tree: Any, patch: Any) -> MvuResult:
    """Merge the scribe's ``{"a.b.c": new value}`` into a copy of ``tree`` (an :class:`MvuState`, a snapshot dict
    or the bare ``stat_data``). Rules: numbers stay numbers (a numeric string is converted, anything else refused),
    strings stay strings (numbers/booleans are stringified), objects and arrays are replaced whole only by an object
    / array; a ``[value, "description"]`` pair keeps its description; ``$…`` (derived) and ``_…`` (read-only) keys
    are refused; an unknown key is created only under an existing object. A path is dotted (``a.b[0]``, lodash
    brackets ``a["x.y"]`` too) or a JSON Pointer (``/a/x.y``, RFC 6901 escapes). Never raises."""
    state = MvuState.from_any(tree)
    data = state.stat_data
    changes = Changes(copy.deepcopy(data))
    applied: list[str] = []
    warnings: list[str] = []
    if patch is None or patch == {}:
        return make_result(state, data, changes, applied, warnings)
    if not isinstance(patch, dict):
        warnings.append(message("mvu.patch_not_object", key="mvu_patch", value=js_str(patch)[:80]))
        return make_result(state, data, changes, applied, warnings)
    for path, value in patch.items():
        segs = parse_path(str(path))
        set_leaf(data, segs, value, changes, applied, warnings)
    return make_result(state, data, changes, applied, warnings)

