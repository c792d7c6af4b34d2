"""The ERA variable framework's commands (issue 27): ``<VariableInsert>``, ``<VariableEdit>`` and ``<VariableDelete>``
blocks in a reply, parsed into :class:`~.commands.MvuOp` (ops ``era_insert`` / ``era_edit`` / ``era_delete``) and
applied to the variable tree (``stat_data``) by :func:`~.apply.apply_ops`, one more command format beside MVU's.

What ERA does (its command guide and ``core/crud/patcher.ts``, read with the search tool): a reply's blocks are
collected by kind and run inserts first, then edits, then deletes; a block's body is one or more JSON objects
(JSONL or simply one after the other). The objects are *nested* like the tree:

* **insert** adds what is missing and never overwrites: a key already there is descended into (both objects) or
  left alone. A new object takes the ``$template`` of its parent in the tree (else the ``$template`` written beside
  it in the command) as defaults under it. ``$meta.unInsertAble`` on a node: ``"all"`` refuses every insert below
  it, ``"self"`` refuses new direct keys (``$meta`` itself stays writable).
* **edit** changes only what exists (a missing path is skipped) and overwrites it whole (arrays included); an
  object in the command is descended into (under a leaf nothing exists, so it is skipped). ``$meta.updatable: false`` protects a node and everything below it, unless the same command sets it to true.
* **delete**: ``{}`` (or ``null``, or any value that is not an object) deletes that key, a non-empty object
  descends. ``$meta.necessary`` ``"self"``
  protects the node itself, ``"all"`` the node and everything below; a command that deletes ``$meta`` (or
  ``$meta.necessary``) lifts the protection for itself.

Also read (the shapes the issue names): a key holding a dotted path (``{"a.b.c": 5}``) addresses that path when no
key of that name exists, and a delete body may be an array of paths (``["a.b", "c"]``) or one path string.

Differences from ERA: a dotted key that does not exist is read as a path (ERA escapes the dots and would create or
miss a literal key); no EditLog / message keys (the session tree already keeps each beat's snapshot, so swipes and
undo need none); templates nested inside templates are applied one level (the direct parent's). Bounds: a body over
:data:`MAX_BODY` characters is refused with a warning; nesting is bounded by the JSON reader (``RecursionError`` →
refused). Block search is literal and linear (commit 5e07f36's rule)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Optional

from ...lenient_json import repair_loads
from ...messages import Msg, message
from .paths import Segment, is_pair, join_path, js_str, split_path
from .state import Changes

#: the largest block body read (characters)
MAX_BODY = 512 * 1024
#: the most JSON values read from one block
MAX_VALUES = 200

ERA_TAGS = ("VariableInsert", "VariableEdit", "VariableDelete")
_OPEN = re.compile(r"<(VariableInsert|VariableEdit|VariableDelete|VariableThink)>", re.IGNORECASE)
_ORDER = {"variableinsert": 0, "variableedit": 1, "variabledelete": 2}
_OPS = {"variableinsert": "era_insert", "variableedit": "era_edit", "variabledelete": "era_delete"}


def era_blocks(text: str) -> list[tuple[str, int, int, int, int]]:
    """``(lowered tag, start, body start, body end, end)`` of each ``<VariableInsert|Edit|Delete|Think>`` block, in
    order (tags any case). An unclosed one runs to the end of the text. Linear: the closing tag of each name is
    searched for again only past the one found before."""
    out: list[tuple[str, int, int, int, int]] = []
    closes: dict[str, Optional[int]] = {}
    pos = 0
    text = text or ""
    while (m := _OPEN.search(text, pos)) is not None:
        name = m.group(1).lower()
        known = closes.get(name, -1)
        if known is not None and known < m.end():
            c = re.compile("</" + name + ">", re.IGNORECASE).search(text, m.end())
            known = closes[name] = c.start() if c is not None else None
        if known is None:
            out.append((name, m.start(), m.end(), len(text), len(text)))
            return out
        end = known + len(name) + 3
        out.append((name, m.start(), m.end(), known, end))
        pos = end
    return out


def has_era_blocks(text: str) -> bool:
    """Whether ``text`` holds an ERA block — a command, or the ``<VariableThink>`` notes hidden with them (a quick,
    case-insensitive literal check)."""
    low = (text or "").lower()
    return any(f"<variable{t}>" in low for t in ("insert", "edit", "delete", "think"))


def strip_era_blocks(text: str) -> str:
    """``text`` without its ERA blocks (``<VariableThink>`` too) and the whitespace before each, trailing whitespace
    trimmed when something was removed; unchanged when it has none."""
    blocks = era_blocks(text or "")
    if not blocks:
        return text
    pieces, last = [], 0
    for _n, start, _bs, _be, end in blocks:
        pieces.append(text[last:start].rstrip())
        last = end
    return ("".join(pieces) + text[last:]).rstrip()


def _values(body: str) -> tuple[list[Any], Optional[Msg]]:
    """The JSON values in a block body (one after the other, JSONL or not), and a problem when part was unreadable."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i, n = 0, len(body)
    while i < n and len(out) < MAX_VALUES:
        while i < n and body[i] in " \t\r\n,;":
            i += 1
        if i >= n:
            break
        try:
            v, i = dec.raw_decode(body, i)
        except (json.JSONDecodeError, RecursionError):
            try:
                v = repair_loads(body[i:])
            except Exception:  # noqa: BLE001 - json-repair raises on some inputs; the block is reported
                return out, message("mvu.era.bad_json")
            if v in ("", None):
                return out, message("mvu.era.bad_json")
            out.append(v)
            return out, None
        out.append(v)
    return out, None


def parse_era_blocks(text: str) -> list[Any]:
    """The ERA commands of ``text`` as ops (``MvuOp`` with op ``era_insert`` / ``era_edit`` / ``era_delete``, the
    parsed value in ``value``; an unreadable block becomes op ``era_invalid`` whose ``reason`` says why), inserts
    first, then edits, then deletes, each kind in order of appearance (ERA's order)."""
    from .commands import MvuOp

    ops: list[tuple[int, int, MvuOp]] = []
    for k, (name, _s, bs, be, _e) in enumerate(era_blocks(text or "")):
        if name == "variablethink":
            continue
        body = text[bs:be]
        tag = {"variableinsert": "VariableInsert", "variableedit": "VariableEdit"}.get(name, "VariableDelete")
        src = f"<{tag}>{body[:200]}"
        if len(body) > MAX_BODY:
            ops.append((_ORDER[name], k, MvuOp(op="era_invalid", reason=message("mvu.era.too_big", tag=tag, kb=MAX_BODY // 1024),
                                                source=src)))
            continue
        values, problem = _values(body)
        if problem:
            ops.append((_ORDER[name], k, MvuOp(op="era_invalid", reason=message("mvu.era.not_run", tag=tag, problem=problem), source=src)))
        for v in values:
            ops.append((_ORDER[name], k, MvuOp(op=_OPS[name], value=v, has_value=True, source=src)))
    return [op for _o, _k, op in sorted(ops, key=lambda t: (t[0], t[1]))]


# -- applying ------------------------------------------------------------------------------------------------------
def _meta(node: Any) -> dict[str, Any]:
    m = node.get("$meta") if isinstance(node, dict) else None
    return m if isinstance(m, dict) else {}


class _Run:
    def __init__(self, changes: Changes, applied: list[str], warnings: list[str]) -> None:
        self.changes, self.applied, self.warnings = changes, applied, warnings

    def _addr(self, node: dict[str, Any], key: str) -> tuple[dict[str, Any], str, list[Segment]] | None:
        """(parent, key, relative path) of ``key`` under ``node``: the key itself, or a dotted path whose parent
        exists (None when neither)."""
        if key in node or "." not in key and not key.startswith("/") and "[" not in key:
            return node, key, [key]
        segs = split_path(key[1:].replace("/", ".") if key.startswith("/") else key)
        cur: Any = node
        for s in segs[:-1]:
            cur = cur.get(str(s)) if isinstance(cur, dict) else None
            if not isinstance(cur, dict):
                return None
        return cur, str(segs[-1]), segs

    # insert ------------------------------------------------------------------------------------------------
    def _warn(self, what: str, msg_key: str, /, **params: Any) -> None:
        """One warning ``ERA <insert|edit|delete>：<message>`` (catalog ``mvu.era``)."""
        self.warnings.append(message("mvu.era", what=message(f"mvu.era.{what}"), msg=message(msg_key, **params)))

    def insert(self, node: dict[str, Any], cmd: Any, path: list[Segment], locked: bool) -> None:
        if not isinstance(cmd, dict):
            self._warn("insert", "mvu.era.not_object", where=_at(path))
            return
        guard = _meta(node).get("unInsertAble")
        all_locked = locked or guard == "all"
        template = node.get("$template") if isinstance(node.get("$template"), dict) else cmd.get("$template")
        for key, value in cmd.items():
            key = str(key)
            if all_locked and key != "$meta":  # writing $meta stays allowed (ERA: maintaining the guard itself)
                self._warn("insert", "mvu.era.no_insert", where=_at(path), key=key)
                continue
            addr = self._addr(node, key)
            if addr is None:
                self._warn("insert", "mvu.era.no_parent", where=join_path(path + [key]))
                continue
            parent, k, rel = addr
            where = path + rel
            if k in parent:
                if isinstance(parent[k], dict) and isinstance(value, dict):
                    self.insert(parent[k], value, where, all_locked)
                continue  # ERA never overwrites
            if parent is node and guard == "self" and key != "$meta":
                self._warn("insert", "mvu.era.no_insert_self", where=_at(path), key=key)
                continue
            new = copy.deepcopy(value)
            if isinstance(new, dict) and isinstance(template, dict) and key != "$template" and parent is node:
                new = {**copy.deepcopy(template), **new}
            parent[k] = new
            self.changes.mark(where)
            self.applied.append(message("mvu.added", where=join_path(where), value=js_str(new)[:200]))

    # edit --------------------------------------------------------------------------------------------------
    def edit(self, node: dict[str, Any], cmd: Any, path: list[Segment], locked: bool) -> None:
        if not isinstance(cmd, dict):
            self._warn("edit", "mvu.era.not_object", where=_at(path))
            return
        unlock = isinstance(cmd.get("$meta"), dict) and cmd["$meta"].get("updatable") is True
        if _meta(node).get("updatable") is False and not unlock:
            locked = True
        elif unlock:
            locked = False
        if locked:
            self._warn("edit", "mvu.era.protected", where=_at(path), rule="updatable: false")
            return
        for key, value in cmd.items():
            key = str(key)
            addr = self._addr(node, key)
            if addr is None or addr[1] not in addr[0]:
                self._warn("edit", "mvu.era.missing_edit", where=join_path(path + [key]))
                continue
            parent, k, rel = addr
            where = path + rel
            old = parent[k]
            if isinstance(value, dict):  # ERA descends into a plain object; a leaf has nothing under it
                if isinstance(old, dict):
                    self.edit(old, value, where, False)
                elif value:
                    self._warn("edit", "mvu.era.not_object_below", where=join_path(where))
                continue
            if is_pair(old) and not isinstance(value, list):
                new: Any = [copy.deepcopy(value), old[1]]
            else:
                new = copy.deepcopy(value)
            if new == old and type(new) is type(old):
                continue
            parent[k] = new
            self.changes.mark(where)
            self.applied.append(message("mvu.changed", where=join_path(where), old=js_str(old)[:80], new=js_str(value)[:200]))

    # delete ------------------------------------------------------------------------------------------------
    def delete(self, node: dict[str, Any], cmd: Any, path: list[Segment], locked: bool) -> None:
        if isinstance(cmd, str):
            cmd = [cmd]
        if isinstance(cmd, list):  # paths: ["a.b", "c"]
            nested: dict[str, Any] = {}
            for p in cmd:
                if isinstance(p, str) and p.strip():
                    nested[p.strip()] = {}
            cmd = nested
        if not isinstance(cmd, dict):
            self._warn("delete", "mvu.era.not_object_or_path", where=_at(path))
            return
        m = cmd.get("$meta")
        exempt = m == {} or (isinstance(m, dict) and m.get("necessary") == {})
        if locked and not exempt:
            self._warn("delete", "mvu.era.protected", where=_at(path), rule="necessary: all")
            return
        for key, value in cmd.items():
            key = str(key)
            addr = self._addr(node, key)
            if addr is None or addr[1] not in addr[0]:
                self._warn("delete", "mvu.era.missing", where=join_path(path + [key]))
                continue
            parent, k, rel = addr
            where = path + rel
            target = parent[k]
            if not isinstance(value, dict) or value == {}:  # ERA: {}, null or any non-object deletes the node
                child_necessary = _meta(target).get("necessary")
                if child_necessary in ("self", "all") and k != "$meta":
                    self._warn("delete", "mvu.era.protected", where=join_path(where), rule=f"necessary: {child_necessary}")
                    continue
                del parent[k]
                self.changes.mark(where)
                self.applied.append(message("mvu.removed", where=join_path(where), value=js_str(target)[:200]))
            elif isinstance(target, dict):
                self.delete(target, value, where, _meta(target).get("necessary") == "all")
            else:
                self._warn("delete", "mvu.era.not_object_below", where=join_path(where))


def _at(path: list[Segment]) -> "str | Msg":
    """A path as the warnings name it: dotted, or 「(根)」 / "(root)" for the root."""
    return join_path(path) or message("mvu.root")


def apply_era(tree: dict[str, Any], op: Any, changes: Changes, applied: list[str], warnings: list[str]) -> None:
    """Apply one ERA op (module doc) to ``tree`` in place, marking what changed in ``changes`` and noting it in
    ``applied``; what was refused goes to ``warnings`` (Chinese). Never raises on any JSON value."""
    run = _Run(changes, applied, warnings)
    try:
        if op.op == "era_insert":
            run.insert(tree, op.value, [], False)
        elif op.op == "era_edit":
            run.edit(tree, op.value, [], False)
        elif op.op == "era_delete":
            run.delete(tree, op.value, [], False)
        else:
            warnings.append(op.reason or message("mvu.era.unreadable"))
    except RecursionError:
        warnings.append(message("mvu.era.too_deep"))


def is_era_tree(tree: Any, limit: int = 20000) -> bool:
    """Whether a variable tree carries ERA's own keys (``$meta`` or ``$template`` on some object; MVU's initial trees
    have their ``$meta`` removed). Looks at most ``limit`` nodes."""
    stack, seen = [tree], 0
    while stack and seen < limit:
        v = stack.pop()
        seen += 1
        if isinstance(v, dict):
            if "$template" in v or isinstance(v.get("$meta"), dict):
                return True
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False
