"""``<UpdateVariable>`` blocks in a reply (greetings and imported chats still carry them): the classic ``_.set(…)``
command dialect and JSON Patch, parsed into :class:`MvuOp` (:func:`parse_update_blocks`) and hidden from display
(:func:`strip_update_blocks`). The arguments are read without evaluating code (a small arithmetic evaluator).
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from pydantic import BaseModel, Field

from ...lenient_json import repair_loads
from ...messages import MsgText
from .era import has_era_blocks, parse_era_blocks, strip_era_blocks
from .initvar import parse_data
from .paths import Segment, eval_math, js_str, num_from_str, parse_path, split_path


class MvuOp(BaseModel):
    """One update command. ``op``: set | add | insert | remove | move. ``path`` segments; ``key`` the 3-arg
    ``insert``/``remove`` key or index (``"-"`` = append); ``from_path`` for move; ``reason`` the ``//`` comment."""

    op: str
    path: list[Segment] = Field(default_factory=list)
    value: Any = None
    has_value: bool = False
    key: Optional[Segment] = None
    from_path: Optional[list[Segment]] = None
    reason: MsgText = ""  # the model's comment (a value), or why an ERA block was not run (a catalog message)
    source: str = ""


# Blocks are found by literal searches, each text position read a bounded number of times (issue 29 §1: the
# patterns ``\s*<UpdateVariable>[\s\S]*?(?:</UpdateVariable>|$)`` and ``<(json_?patch)>([\s\S]*?)</\1>`` were
# quadratic on a run of spaces or on many unclosed tags in a model's reply).
_OPEN = re.compile(r"<UpdateVariable>", re.IGNORECASE)
_CLOSE = re.compile(r"</UpdateVariable>", re.IGNORECASE)
_JSONPATCH_OPEN = re.compile(r"<(json_?patch)>", re.IGNORECASE)
_CMD = re.compile(r"_\.(set|insert|assign|remove|unset|delete|add)\(")
_OPS = {"set": "set", "add": "add", "insert": "insert", "assign": "insert", "remove": "remove", "unset": "remove",
        "delete": "remove"}


def _unquote(s: str) -> str:
    q = s[0]
    inner = s[1:-1]
    if q == '"':
        try:
            return str(json.loads(s))  # a JSON text opening with '"' is a string
        except json.JSONDecodeError:
            pass
    return re.sub(r"\\(.)", r"\1", inner)


def parse_value(arg: str) -> Any:
    """One command argument: true/false/null/undefined, a quoted string, JSON, a JS object/array literal,
    arithmetic (``10 + 2`` → 12), else the trimmed text."""
    s = arg.strip()
    low = s.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    if low in ("null", "undefined"):
        return None
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"`":
        return _unquote(s)
    n = num_from_str(s)
    if n is not None:
        return n
    if s[:1] in "{[":
        try:
            return json.loads(s)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested thousands deep
            try:
                return repair_loads(s)
            except Exception:  # noqa: BLE001
                return s
    m = eval_math(s)
    if m is not None:
        return m
    return s


def _split_args(body: str) -> list[str]:
    args: list[str] = []
    depth = 0
    quote = ""
    cur = ""
    i = 0
    while i < len(body):
        c = body[i]
        if quote:
            cur += c
            if c == "\\" and i + 1 < len(body):
                cur += body[i + 1]
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
            cur += c
        elif c in "([{":
            depth += 1
            cur += c
        elif c in ")]}":
            depth -= 1
            cur += c
        elif c == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip() or args:
        args.append(cur)
    return [a.strip() for a in args]


def _close_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` just before ``start`` (quote-aware), or -1."""
    depth = 1
    quote = ""
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _path_arg(a: str) -> list[Segment]:
    s = a.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"`":
        s = _unquote(s)
    return split_path(s)


def _classic(text: str) -> list[MvuOp]:
    ops: list[MvuOp] = []
    pos = 0
    while True:
        m = _CMD.search(text, pos)
        if not m:
            break
        close = _close_paren(text, m.end())
        if close < 0:
            break
        pos = close + 1
        if close + 1 >= len(text) or text[close + 1] != ";":  # MVU: a ';' must follow the ')' immediately
            continue
        line_end = text.find("\n", close)
        rest = text[close + 2:line_end if line_end >= 0 else len(text)]
        reason = rest.strip()[2:].strip() if rest.strip().startswith("//") else ""
        args = _split_args(text[m.end():close])
        name = m.group(1)
        src = text[m.start():close + 2]
        if not args or not args[0]:
            continue
        path = _path_arg(args[0])
        op = MvuOp(op=_OPS[name], path=path, reason=reason, source=src)
        vals = [parse_value(a) for a in args[1:]]
        if op.op == "set":
            if not vals:
                continue
            op.value, op.has_value = vals[-1], True
        elif op.op == "add":
            if not vals:
                continue
            op.value, op.has_value = vals[0], True
        elif op.op == "insert":
            if len(vals) >= 2:
                op.key = vals[0] if isinstance(vals[0], (str, int)) and not isinstance(vals[0], bool) else js_str(vals[0])
                op.value, op.has_value = vals[1], True
            elif vals:
                op.value, op.has_value = vals[0], True
            else:
                continue
        elif op.op == "remove":
            if vals:
                op.value, op.has_value = vals[0], True
        ops.append(op)
    return ops


def _pointer(p: Any) -> list[Segment]:
    return parse_path(str(p or ""))


def _jsonpatch(body: str) -> list[MvuOp]:
    try:
        data = parse_data(body)
    except ValueError:
        return []
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return []
    ops: list[MvuOp] = []
    for item in data:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("op", "")).lower()
        src = json.dumps(item, ensure_ascii=False)
        if kind == "move":
            frm = item.get("from")
            to = item.get("to", item.get("path"))
            if frm is None or to is None:
                continue
            ops.append(MvuOp(op="move", path=_pointer(to), from_path=_pointer(frm), source=src))
            continue
        path = _pointer(item.get("path"))
        if kind == "replace":
            ops.append(MvuOp(op="set", path=path, value=item.get("value"), has_value=True, source=src))
        elif kind == "delta":
            ops.append(MvuOp(op="add", path=path, value=item.get("value"), has_value=True, source=src))
        elif kind in ("add", "insert"):
            if not path:
                continue
            ops.append(MvuOp(op="insert", path=path[:-1], key=path[-1], value=item.get("value"), has_value=True,
                             source=src))
        elif kind == "remove":
            ops.append(MvuOp(op="remove", path=path, source=src))
    return ops


def _update_blocks(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, body start, body end, end)`` of each ``<UpdateVariable>`` block (tags case-insensitive; an unclosed
    one runs to the end of the text). Linear in the text."""
    out: list[tuple[int, int, int, int]] = []
    pos = 0
    while True:
        m = _OPEN.search(text, pos)
        if m is None:
            return out
        c = _CLOSE.search(text, m.end())
        if c is None:
            out.append((m.start(), m.end(), len(text), len(text)))
            return out
        out.append((m.start(), m.end(), c.start(), c.end()))
        pos = c.end()


def _jsonpatch_blocks(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, body)`` of each closed ``<JSONPatch>…</JSONPatch>`` (or ``json_patch``; the closing tag names
    the same, case-insensitive). An opening tag without its closing tag is text. Linear: a closing tag searched for
    once is not searched for again over the same stretch."""
    out: list[tuple[int, int, str]] = []
    closes: dict[str, Optional[int]] = {}  # lowered tag name → start of its next closing tag (None: none left)
    pos = 0
    while True:
        m = _JSONPATCH_OPEN.search(text, pos)
        if m is None:
            return out
        name = m.group(1).lower()
        known = closes.get(name, -1)
        if known is not None and known < m.end():  # not searched yet, or the one found lies before this tag
            c = re.compile("</" + re.escape(name) + ">", re.IGNORECASE).search(text, m.end())
            known = closes[name] = c.start() if c is not None else None
        if known is None:
            pos = m.end()
            continue
        end = known + len(name) + 3
        out.append((m.start(), end, text[m.end():known]))
        pos = end


def parse_update_blocks(text: str) -> list[MvuOp]:
    """Commands in ``text``, in order of appearance: the classic ``_.set/_.add/_.insert/_.remove`` calls and
    ``<JSONPatch>`` arrays. Only ``<UpdateVariable>`` blocks are read when the text has any (an unclosed one runs to
    the end); otherwise the whole text is scanned, as MVU does. The ERA framework's ``<VariableInsert>`` /
    ``<VariableEdit>`` / ``<VariableDelete>`` blocks follow, in ERA's order (:func:`.era.parse_era_blocks`); the MVU
    scan does not look inside them."""
    text = text or ""
    if has_era_blocks(text):
        era = parse_era_blocks(text)
        return _mvu_ops(strip_era_blocks(text)) + era
    return _mvu_ops(text)


def _mvu_ops(text: str) -> list[MvuOp]:
    blocks = [text[bs:be] for _s, bs, be, _e in _update_blocks(text)] or [text]
    ops: list[MvuOp] = []
    for b in blocks:
        parts: list[tuple[int, list[MvuOp]]] = []
        pieces, last = [], 0
        for start, end, body in _jsonpatch_blocks(b):
            parts.append((start, _jsonpatch(body)))
            pieces += [b[last:start], " " * (end - start)]
            last = end
        rest = "".join(pieces) + b[last:]
        for op in _classic(rest):
            parts.append((rest.find(op.source), [op]))
        for _, group in sorted(parts, key=lambda p: p[0]):
            ops.extend(group)
    return ops


def strip_update_blocks(text: str) -> str:
    """The text without ``<UpdateVariable>…</UpdateVariable>`` blocks (an unclosed trailing one too) and without
    ERA's command blocks (:func:`.era.strip_era_blocks`), for display."""
    text = strip_era_blocks(text or "")
    blocks = _update_blocks(text)
    if not blocks:
        return text
    pieces, last = [], 0
    for start, _bs, _be, end in blocks:
        pieces.append(text[last:start].rstrip())  # the whitespace before a block goes with it
        last = end
    return ("".join(pieces) + text[last:]).rstrip()

