"""Paths into an MVU variable tree and the small readings shared by every update dialect: VWD pairs
(``[value, "description"]``), JavaScript-style stringification of values, ``a.b[0].c`` path syntax, guarded reads and
writes (``$…`` derived and ``_…`` read-only keys), and the type rules a new value must keep (:func:`coerce_value`).
"""

from __future__ import annotations

import ast
import copy
import json
import math
import operator
import re
from typing import Any, Callable, Iterable, Optional, TypeGuard, Union

from ...messages import message

Segment = Union[str, int]


def is_pair(v: Any) -> bool:
    """A VWD pair: a list of length 2 whose second item is a string."""
    return isinstance(v, list) and len(v) == 2 and isinstance(v[1], str)


def value_of(v: Any) -> Any:
    """Unwrap a VWD pair (classic ``SafeGetValue``)."""
    return v[0] if is_pair(v) else v


def is_num(v: Any) -> TypeGuard[Union[int, float]]:
    """Whether ``v`` is a number as MVU counts one (int or float; a bool is not)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _js_num(n: Union[int, float]) -> str:
    if isinstance(n, float):
        if math.isnan(n):
            return "NaN"
        if math.isinf(n):
            return "Infinity" if n > 0 else "-Infinity"
        if n.is_integer() and abs(n) < 1e21:
            return str(int(n))
        return repr(n)
    return str(n)


def js_str(v: Any) -> str:
    """``String(v)`` for display strings: numbers as JavaScript prints them, objects/arrays as compact JSON."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_num(v):
        return _js_num(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def jsonable(v: Any) -> Any:
    """YAML can yield dates, sets, non-string keys: fold them into JSON types."""
    if isinstance(v, dict):
        return {str(k) if not isinstance(k, str) else k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [jsonable(x) for x in v]
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    return str(v)


def num_from_str(s: str) -> Optional[Union[int, float]]:
    """The number a string spells (``"12"`` → 12, ``" 1.5 "`` → 1.5), or None (empty, not a number, inf/nan)."""
    t = s.strip()
    if not t:
        return None
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    try:
        f = float(t)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def split_path(path: Union[str, Iterable[Segment]]) -> list[Segment]:
    """``"a.b[0].c"`` / ``'a["x.y"]'`` → segments. Pure digit segments stay strings here; they index lists when the
    container is a list. A list of segments is returned as is."""
    if not isinstance(path, str):
        return list(path)
    segs: list[Segment] = []
    start = 0  # where the plain segment being read began (slices, not a string grown a character at a time:
    i, n = 0, len(path)  # that was quadratic on a long path, issue 29 §1)
    while i < n:
        c = path[i]
        if c == ".":
            if i > start:
                segs.append(path[start:i])
            start = i + 1
        elif c == "[":
            if i > start:
                segs.append(path[start:i])
            j = path.find("]", i)
            if j < 0:
                start = i
                break
            inner = path[i + 1:j].strip()
            if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"`":
                segs.append(inner[1:-1])
            elif re.fullmatch(r"-?\d+", inner):
                segs.append(int(inner))
            else:
                segs.append(inner)
            i = j
            start = j + 1
        i += 1
    if start < n:
        segs.append(path[start:])
    return [s.strip() if isinstance(s, str) else s for s in segs]


def join_path(segs: Iterable[Segment]) -> str:
    """Segments → ``a.b[0].c``; a key that a dotted path cannot carry (it has ``.``, ``[`` or ``]``) is written
    ``["…"]`` (lodash's bracket form, which :func:`split_path` reads back)."""
    out = ""
    for s in segs:
        if isinstance(s, int):
            out += f"[{s}]"
        elif needs_brackets(s):
            out += f'["{s}"]'
        else:
            out += ("." if out else "") + s
    return out


def needs_brackets(key: str) -> bool:
    """Whether a key cannot be one segment of a dotted path (``AXMC .338 LM``, ``v1.2``, ``a[b]``)."""
    return any(c in key for c in ".[]")


def split_pointer(pointer: str) -> list[Segment]:
    """A JSON Pointer (RFC 6901: ``/a/b~1c`` → ``["a", "b/c"]``, ``~0`` → ``~``) → segments; ``""`` is the root."""
    if not pointer:
        return []
    return [seg.replace("~1", "/").replace("~0", "~") for seg in pointer[1:].split("/")]


def to_pointer(segs: Iterable[Segment]) -> str:
    """Segments → a JSON Pointer (``~`` → ``~0``, ``/`` → ``~1``)."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segs)


def parse_path(path: Union[str, Iterable[Segment]]) -> list[Segment]:
    """Any path form a patch may use: a JSON Pointer (starts with ``/``), a list of segments, or the dotted /
    bracket form of :func:`split_path`."""
    if isinstance(path, str) and path.startswith("/"):
        return split_pointer(path)
    return split_path(path)


def has_odd_keys(tree: Any) -> bool:
    """Whether any object key in ``tree`` needs more than a dotted path (:func:`needs_brackets`)."""
    if isinstance(tree, dict):
        return any(needs_brackets(k) or has_odd_keys(v) for k, v in tree.items())
    if isinstance(tree, list):
        return any(has_odd_keys(v) for v in tree)
    return False


def guard_path(segs: list[Segment]) -> Optional[str]:
    """Why a write to ``segs`` is refused — a ``$…`` key (derived by the card) or a ``_…`` key (read-only) on the
    path, as MVU has it — as the warning to show; None when the path may be written."""
    p = join_path(segs)
    for s in segs:
        if isinstance(s, str) and s.startswith("$"):
            return message("mvu.derived", path=p, prefix=s)
        if isinstance(s, str) and s.startswith("_"):
            return message("mvu.read_only", path=p)
    return None


def list_index(container: list[Any], seg: Segment) -> Optional[int]:
    """The list position ``seg`` names in ``container`` (an int or a digit string; negative counts from the end),
    or None when it is not an index or out of range."""
    if isinstance(seg, int):
        i = seg
    elif isinstance(seg, str) and re.fullmatch(r"-?\d+", seg):
        i = int(seg)
    else:
        return None
    if i < 0:
        i += len(container)
    return i if 0 <= i < len(container) else None


MISSING = object()


def get_at(tree: Any, segs: list[Segment]) -> Any:
    """The value at ``segs`` in ``tree`` (dict keys, list indexes; pairs not unwrapped), or :data:`MISSING`."""
    cur = tree
    for s in segs:
        if isinstance(cur, dict):
            key = s if isinstance(s, str) else str(s)
            if key not in cur:
                return MISSING
            cur = cur[key]
        elif isinstance(cur, list):
            i = list_index(cur, s)
            if i is None:
                return MISSING
            cur = cur[i]
        else:
            return MISSING
    return cur


def get_path(tree: Any, path: Union[str, Iterable[Segment]], default: Any = None) -> Any:
    """The value at ``path`` (pairs not unwrapped), or ``default``."""
    v = get_at(tree, split_path(path))
    return default if v is MISSING else v


def put_at(container: Any, seg: Segment, value: Any) -> None:
    """Set ``container[seg]`` (a dict key, or an existing list position — AssertionError when out of range)."""
    if isinstance(container, dict):
        container[seg if isinstance(seg, str) else str(seg)] = value
    else:
        i = list_index(container, seg)
        assert i is not None
        container[i] = value


def coerce_value(old: Any, new: Any, where: str) -> tuple[Any, Optional[str]]:
    """``new`` fitted to the type of ``old`` (returns (value, None)), or (None, warning) when refused."""
    if old is None or old is MISSING:
        return new, None
    if is_num(old):
        if is_num(new):
            return new, None
        if isinstance(new, str):
            n = num_from_str(new)
            if n is None:
                n = eval_math(new)
            if n is not None:
                return n, None
        return None, message("mvu.want_number", where=where, old=js_str(old), new=js_str(new))
    if isinstance(old, bool):
        if isinstance(new, bool):
            return new, None
        if isinstance(new, str) and new.strip().lower() in ("true", "false"):
            return new.strip().lower() == "true", None
        return None, message("mvu.want_bool", where=where, old=js_str(old), new=js_str(new))
    if isinstance(old, str):
        if isinstance(new, str):
            return new, None
        if new is None or isinstance(new, bool) or is_num(new):
            return js_str(new), None
        return None, message("mvu.want_string", where=where, new=js_str(new)[:80])
    if isinstance(old, dict):
        if isinstance(new, dict):
            return copy.deepcopy(new), None
        return None, message("mvu.want_object", where=where, new=js_str(new)[:80])
    if isinstance(old, list):
        if isinstance(new, list):
            return copy.deepcopy(new), None
        return None, message("mvu.want_array", where=where, new=js_str(new)[:80])
    return new, None


_BIN: dict[type[ast.operator], Callable[[Union[int, float], Union[int, float]], Union[int, float]]] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Mod: operator.mod, ast.Pow: operator.pow}


def eval_math(expr: str) -> Optional[Union[int, float]]:
    """The value of a plain arithmetic expression (digits, + - * / % **, parentheses — MVU's ``_.add`` accepts
    them), or None for anything else; huge exponents are refused."""
    if not re.fullmatch(r"[\d\s.+\-*/%()eE]+", expr) or not re.search(r"\d", expr):
        return None

    def ev(n: ast.AST) -> Union[int, float]:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and is_num(n.value):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Pow) and abs(b) > 64:
                raise ValueError("exponent too large")
            return _BIN[type(n.op)](a, b)
        raise ValueError("not arithmetic")

    try:
        v = ev(ast.parse(expr.strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None
    if isinstance(v, float) and v.is_integer() and "." not in expr and "/" not in expr:
        return int(v)
    return v

