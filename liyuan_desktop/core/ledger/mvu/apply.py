"""Applying parsed ``<UpdateVariable>`` commands (:class:`~.commands.MvuOp`) to a snapshot: :func:`apply_ops` (ERA's
``era_*`` ops too, :mod:`.era`)."""

from __future__ import annotations

import copy
from typing import Any, Iterable

from ...messages import message
from .commands import MvuOp
from .era import apply_era
from .patch import set_leaf
from .paths import (
    MISSING,
    Segment,
    eval_math,
    get_at,
    guard_path,
    is_num,
    is_pair,
    join_path,
    js_str,
    list_index,
    num_from_str,
    put_at,
    value_of,
)
from .state import Changes, MvuResult, MvuState, make_result


def _remove_at(tree: dict[str, Any], segs: list[Segment], where: str, warnings: list[str]) -> tuple[bool, Any]:
    parent = get_at(tree, segs[:-1])
    last = segs[-1]
    if isinstance(parent, dict):
        key = last if isinstance(last, str) else str(last)
        if key in parent:
            return True, parent.pop(key)
    elif isinstance(parent, list):
        i = list_index(parent, last)
        if i is not None:
            return True, parent.pop(i)
    warnings.append(message("mvu.missing_delete", where=where))
    return False, None


def apply_ops(tree: Any, ops: Iterable[MvuOp]) -> MvuResult:
    """Apply parsed commands in order to a copy of ``tree`` with the same guards as :func:`apply_mvu_patch`
    (``_set`` on a missing path is an error, as in MVU). Never raises."""
    state = MvuState.from_any(tree)
    data = state.stat_data
    changes = Changes(copy.deepcopy(data))
    applied: list[str] = []
    warnings: list[str] = []
    for op in ops:
        segs = list(op.path)
        where = join_path(segs) or message("mvu.root")
        g = guard_path(segs) if segs else None
        if g:
            warnings.append(g)
            continue
        if op.op.startswith("era_"):  # ERA's nested commands walk the tree themselves (.era)
            apply_era(data, op, changes, applied, warnings)
            continue
        if op.op == "set":
            if get_at(data, segs) is MISSING:
                warnings.append(message("mvu.missing_op", where=where, op="_.set"))
                continue
            set_leaf(data, segs, op.value, changes, applied, warnings, create=False)
        elif op.op == "add":
            cur = get_at(data, segs)
            if cur is MISSING:
                warnings.append(message("mvu.missing_op", where=where, op="_.add"))
                continue
            base = value_of(cur)
            delta = op.value
            if isinstance(delta, str):
                n = num_from_str(delta)
                n = eval_math(delta) if n is None else n
                delta = n if n is not None else delta
            if not is_num(base) or not is_num(delta):
                warnings.append(message("mvu.add_needs_number", where=where, old=js_str(base), delta=js_str(op.value)))
                continue
            set_leaf(data, segs, base + delta, changes, applied, warnings, create=False)
        elif op.op == "insert":
            target: Any = get_at(data, segs) if segs else data
            if target is MISSING:
                warnings.append(message("mvu.missing_op", where=where, op="_.insert"))
                continue
            target = value_of(target) if is_pair(target) and isinstance(target[0], (list, dict)) else target
            if isinstance(target, list):
                if op.key is None or op.key == "-":
                    target.append(copy.deepcopy(op.value))
                    pos = len(target) - 1
                else:
                    at = op.key if isinstance(op.key, int) else num_from_str(str(op.key))
                    if not isinstance(at, int):
                        warnings.append(message("mvu.insert_bad_index", where=where, pos=js_str(op.key)))
                        continue
                    at = max(0, min(len(target), at if at >= 0 else len(target) + at))
                    target.insert(at, copy.deepcopy(op.value))
                    pos = at
                changes.mark(segs)
                applied.append(message("mvu.inserted", where=where, pos=pos, value=js_str(op.value)))
            elif isinstance(target, dict):
                if op.key is None:
                    if not isinstance(op.value, dict):
                        warnings.append(message("mvu.insert_needs_key", where=where))
                        continue
                    for k, v in op.value.items():
                        g2 = guard_path(segs + [k])
                        if g2:
                            warnings.append(g2)
                            continue
                        target[k] = copy.deepcopy(v)
                        changes.mark(segs + [k])
                        applied.append(message("mvu.added", where=join_path(segs + [k]), value=js_str(v)))
                else:
                    k = str(op.key)
                    g2 = guard_path(segs + [k])
                    if g2:
                        warnings.append(g2)
                        continue
                    target[k] = copy.deepcopy(op.value)
                    changes.mark(segs + [k])
                    applied.append(message("mvu.added", where=join_path(segs + [k]), value=js_str(op.value)))
            else:
                warnings.append(message("mvu.not_container", where=where, op="_.insert"))
        elif op.op == "remove":
            if not op.has_value:
                if not segs:
                    warnings.append(message("mvu.no_delete_root"))
                    continue
                ok, old = _remove_at(data, segs, where, warnings)
                if ok:
                    changes.mark(segs)
                    applied.append(message("mvu.removed", where=where, value=js_str(old)))
                continue
            target = get_at(data, segs) if segs else data
            target = value_of(target) if is_pair(target) and isinstance(target[0], (list, dict)) else target
            if isinstance(target, list):
                idx = op.value if is_num(op.value) and float(op.value).is_integer() else None
                if idx is None:
                    idx = next((i for i, x in enumerate(target) if x == op.value), None)
                elif int(idx) < -len(target) or int(idx) >= len(target):
                    idx = None
                if idx is None:
                    warnings.append(message("mvu.not_in", where=where, value=js_str(op.value)))
                    continue
                old = target.pop(int(idx))
                changes.mark(segs)
                applied.append(message("mvu.removed", where=where, value=js_str(old)))
            elif isinstance(target, dict):
                k = str(op.value)
                if guard_path(segs + [k]):
                    warnings.append(guard_path(segs + [k]) or "")
                    continue
                if k not in target:
                    warnings.append(message("mvu.missing_delete", where=join_path(segs + [k])))
                    continue
                old = target.pop(k)
                changes.mark(segs + [k])
                applied.append(message("mvu.removed", where=join_path(segs + [k]), value=js_str(old)))
            else:
                warnings.append(message("mvu.not_container_delete", where=where))
        elif op.op == "move":
            frm = list(op.from_path or [])
            g2 = guard_path(frm) if frm else "move 缺少 from。"
            if g2:
                warnings.append(g2)
                continue
            val = get_at(data, frm)
            if val is MISSING:
                warnings.append(message("mvu.missing_op", where=join_path(frm), op="move"))
                continue
            parent = get_at(data, segs[:-1])
            if not isinstance(parent, dict) or not segs:
                warnings.append(message("mvu.move_parent", where=where))
                continue
            _remove_at(data, frm, join_path(frm), warnings)
            changes.mark(frm)
            put_at(parent, segs[-1], val)
            changes.mark(segs)
            applied.append(message("mvu.moved", src=join_path(frm), where=where))
        else:
            warnings.append(message("mvu.unknown_op", op=op.op))
    return make_result(state, data, changes, applied, warnings)
