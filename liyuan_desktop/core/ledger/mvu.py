"""MVU (MagVarUpdate) variable trees: the state a TavernHelper status bar reads (design/card-runtime.md §3).

A card that ships a status bar keeps its variable tree's initial values in one or more ``[InitVar]`` lorebook
entries (JSON or YAML, usually *disabled* so they are never sent to the model). In SillyTavern the actor model
then appends ``<UpdateVariable>`` commands to every reply; in Liyuan the actor no longer does (seed 002,
「卡的状态栏和自建面板吃同一份快照」): the scribe emits one extra field, ``"mvu_patch"`` — ``{"a.b.c": new value}`` —
which :func:`apply_mvu_patch` merges with type checks. :func:`parse_update_blocks` / :func:`apply_ops` still read the
classic and JSON-Patch dialects (greetings and imported chats carry them), and :func:`strip_update_blocks` hides
them from display.

Tree conventions (MVU): a leaf ``[value, "description"]`` (a *VWD pair*) keeps its description — only element 0
changes; keys starting with ``$`` are derived (computed by the card, never written); any path segment starting
with ``_`` is read-only for the model. ``display_data`` is the tree with each changed leaf replaced by an
``"old->new"`` string (classic bars show it); ``delta_data`` holds only the changed leaves in that string form.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import operator
import re
from typing import Any, Callable, Iterable, NamedTuple, Optional, Union

import json_repair
from pydantic import BaseModel, Field

try:  # PyYAML is a declared dependency; stay importable without it (JSON-only InitVar then)
    import yaml
except ImportError:  # pragma: no cover - exercised only on a broken install
    yaml = None  # type: ignore[assignment]

Segment = Union[str, int]

# ---------------------------------------------------------------------------------------------------------------
# snapshot model


class MvuState(BaseModel):
    """One MVU snapshot as a status bar reads it (``chat[i].variables[swipe]`` in SillyTavern)."""

    stat_data: dict[str, Any] = Field(default_factory=dict)
    display_data: dict[str, Any] = Field(default_factory=dict)
    delta_data: dict[str, Any] = Field(default_factory=dict)
    initialized_lorebooks: dict[str, list[Any]] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (deep copies; the shape bars expect: ``{initialized_lorebooks, stat_data,
        display_data, delta_data}``)."""
        return {
            "initialized_lorebooks": copy.deepcopy(self.initialized_lorebooks),
            "stat_data": copy.deepcopy(self.stat_data),
            "display_data": copy.deepcopy(self.display_data),
            "delta_data": copy.deepcopy(self.delta_data),
        }

    @classmethod
    def from_any(cls, value: Any) -> "MvuState":
        """An :class:`MvuState` from an MvuState, a snapshot dict (has ``stat_data``) or a bare tree dict."""
        if isinstance(value, MvuState):
            return value.model_copy(deep=True)
        if isinstance(value, dict) and isinstance(value.get("stat_data"), dict):
            ib = value.get("initialized_lorebooks")
            if isinstance(ib, list):  # old MVU: string[]
                ib = {str(n): [] for n in ib}
            return cls(stat_data=copy.deepcopy(value["stat_data"]),
                       display_data=copy.deepcopy(value.get("display_data") or {}),
                       delta_data=copy.deepcopy(value.get("delta_data") or {}),
                       initialized_lorebooks=ib if isinstance(ib, dict) else {})
        if isinstance(value, dict):  # a bare tree (the [InitVar] values): MVU's first snapshot shows them as they are
            return cls.initial(value)
        return cls()

    @classmethod
    def initial(cls, tree: dict[str, Any]) -> "MvuState":
        """The snapshot of a fresh variable tree, as MVU initialises one: ``display_data`` is a copy of
        ``stat_data`` (bars that read display_data first must find values, not ``{}``), ``delta_data`` empty."""
        return cls(stat_data=copy.deepcopy(tree), display_data=copy.deepcopy(tree))


class MvuResult(NamedTuple):
    """Outcome of :func:`apply_mvu_patch` / :func:`apply_ops`: the new snapshot (``stat_data`` plus this update's
    ``display_data``/``delta_data``), applied lines and warnings (Chinese, fed back to the scribe)."""

    state: MvuState
    applied: list[str]
    warnings: list[str]


# ---------------------------------------------------------------------------------------------------------------
# small helpers


def is_pair(v: Any) -> bool:
    """A VWD pair: a list of length 2 whose second item is a string."""
    return isinstance(v, list) and len(v) == 2 and isinstance(v[1], str)


def value_of(v: Any) -> Any:
    """Unwrap a VWD pair (classic ``SafeGetValue``)."""
    return v[0] if is_pair(v) else v


def _is_num(v: Any) -> bool:
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
    if _is_num(v):
        return _js_num(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _jsonable(v: Any) -> Any:
    """YAML can yield dates, sets, non-string keys: fold them into JSON types."""
    if isinstance(v, dict):
        return {str(k) if not isinstance(k, str) else k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    return str(v)


def _num_from_str(s: str) -> Optional[Union[int, float]]:
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
    buf = ""
    i, n = 0, len(path)
    while i < n:
        c = path[i]
        if c == ".":
            if buf:
                segs.append(buf)
            buf = ""
        elif c == "[":
            if buf:
                segs.append(buf)
            buf = ""
            j = path.find("]", i)
            if j < 0:
                buf = path[i:]
                break
            inner = path[i + 1:j].strip()
            if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"`":
                segs.append(inner[1:-1])
            elif re.fullmatch(r"-?\d+", inner):
                segs.append(int(inner))
            else:
                segs.append(inner)
            i = j
        else:
            buf += c
        i += 1
    if buf:
        segs.append(buf)
    return [s.strip() if isinstance(s, str) else s for s in segs]


def join_path(segs: Iterable[Segment]) -> str:
    out = ""
    for s in segs:
        if isinstance(s, int):
            out += f"[{s}]"
        else:
            out += ("." if out else "") + s
    return out


def _guard(segs: list[Segment]) -> Optional[str]:
    p = join_path(segs)
    for s in segs:
        if isinstance(s, str) and s.startswith("$"):
            return f"{p} 是派生值（{s} 开头的键由卡自己计算），不能写入，已忽略。"
        if isinstance(s, str) and s.startswith("_"):
            return f"{p} 是只读值（路径里有 _ 开头的键），不能写入，已忽略。"
    return None


def _index(container: list, seg: Segment) -> Optional[int]:
    if isinstance(seg, int):
        i = seg
    elif isinstance(seg, str) and re.fullmatch(r"-?\d+", seg):
        i = int(seg)
    else:
        return None
    if i < 0:
        i += len(container)
    return i if 0 <= i < len(container) else None


_MISSING = object()


def _get(tree: Any, segs: list[Segment]) -> Any:
    cur = tree
    for s in segs:
        if isinstance(cur, dict):
            key = s if isinstance(s, str) else str(s)
            if key not in cur:
                return _MISSING
            cur = cur[key]
        elif isinstance(cur, list):
            i = _index(cur, s)
            if i is None:
                return _MISSING
            cur = cur[i]
        else:
            return _MISSING
    return cur


def get_path(tree: Any, path: Union[str, Iterable[Segment]], default: Any = None) -> Any:
    """The value at ``path`` (pairs not unwrapped), or ``default``."""
    v = _get(tree, split_path(path))
    return default if v is _MISSING else v


def _put(container: Any, seg: Segment, value: Any) -> None:
    if isinstance(container, dict):
        container[seg if isinstance(seg, str) else str(seg)] = value
    else:
        i = _index(container, seg)
        assert i is not None
        container[i] = value


def _coerce(old: Any, new: Any, where: str) -> tuple[Any, Optional[str]]:
    """``new`` fitted to the type of ``old`` (returns (value, None)), or (None, warning) when refused."""
    if old is None or old is _MISSING:
        return new, None
    if _is_num(old):
        if _is_num(new):
            return new, None
        if isinstance(new, str):
            n = _num_from_str(new)
            if n is None:
                n = _math(new)
            if n is not None:
                return n, None
        return None, f"{where} 原值是数字（{js_str(old)}），新值 {js_str(new)} 不是数字，已忽略——请给数字。"
    if isinstance(old, bool):
        if isinstance(new, bool):
            return new, None
        if isinstance(new, str) and new.strip().lower() in ("true", "false"):
            return new.strip().lower() == "true", None
        return None, f"{where} 原值是布尔值（{js_str(old)}），新值 {js_str(new)} 不是 true/false，已忽略。"
    if isinstance(old, str):
        if isinstance(new, str):
            return new, None
        if new is None or isinstance(new, bool) or _is_num(new):
            return js_str(new), None
        return None, f"{where} 原值是字符串，新值 {js_str(new)[:80]} 是对象/数组，已忽略——请给字符串。"
    if isinstance(old, dict):
        if isinstance(new, dict):
            return copy.deepcopy(new), None
        return None, f"{where} 原值是对象，新值 {js_str(new)[:80]} 不是对象，已忽略——整段替换请给完整对象，改单项请写到子路径。"
    if isinstance(old, list):
        if isinstance(new, list):
            return copy.deepcopy(new), None
        return None, f"{where} 原值是数组，新值 {js_str(new)[:80]} 不是数组，已忽略——请给变化后的完整数组。"
    return new, None


# ---------------------------------------------------------------------------------------------------------------
# change tracking → display_data / delta_data


class _Changes:
    def __init__(self, before: dict[str, Any]):
        self.before = before
        self.paths: list[tuple[Segment, ...]] = []

    def mark(self, segs: list[Segment]) -> None:
        if segs and not isinstance(segs[-1], str) or (segs and str(segs[-1]).lstrip("-").isdigit()):
            if is_pair(_get(self.before, segs[:-1])):  # `日期[0]`: the change belongs to the pair
                segs = segs[:-1]
        t = tuple(segs)
        # a change under an already-marked ancestor is covered by it; a marked descendant is superseded
        if any(t[:len(p)] == p for p in self.paths):
            return
        self.paths = [p for p in self.paths if p[:len(t)] != t]
        self.paths.append(t)

    def build(self, after: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        display = copy.deepcopy(after)
        delta: dict[str, Any] = {}
        for p in self.paths:
            old = _get(self.before, list(p))
            new = _get(after, list(p))
            if old == new and type(old) is type(new):
                continue
            # unwrap VWD pairs only when the leaf is a pair on both sides with the same description (a list of two
            # strings is ambiguous — MVU has the same ambiguity)
            both = is_pair(old) and is_pair(new) and old[1] == new[1]
            ov = old[0] if both or (is_pair(old) and new is _MISSING) else old
            nv = new[0] if both or (is_pair(new) and old is _MISSING) else new
            o = "" if ov is _MISSING or ov in ("", None) else js_str(ov)
            nw = "" if nv is _MISSING else js_str(nv)
            text = f"{o}->{nw}"
            if new is not _MISSING:
                _set_display(display, list(p), text)
            _set_display(delta, list(p), text, create=True)
        return display, delta


def _set_display(root: Any, segs: list[Segment], text: str, create: bool = False) -> None:
    cur = root
    for s in segs[:-1]:
        key: Any = s
        if isinstance(cur, dict):
            key = s if isinstance(s, str) else str(s)
            if key not in cur or not isinstance(cur[key], (dict, list)):
                if not create:
                    return
                cur[key] = {}
            cur = cur[key]
        elif isinstance(cur, list):
            i = _index(cur, s)
            if i is None:
                return
            cur = cur[i]
        else:
            return
    last = segs[-1] if segs else None
    if last is None:
        return
    if isinstance(cur, dict):
        cur[last if isinstance(last, str) else str(last)] = text
    elif isinstance(cur, list):
        i = _index(cur, last)
        if i is not None:
            cur[i] = text


def _result(state: MvuState, tree: dict[str, Any], changes: _Changes, applied: list[str],
            warnings: list[str]) -> MvuResult:
    display, delta = changes.build(tree)
    new = MvuState(stat_data=tree, display_data=display, delta_data=delta,
                   initialized_lorebooks=copy.deepcopy(state.initialized_lorebooks))
    return MvuResult(new, applied, warnings)


# ---------------------------------------------------------------------------------------------------------------
# the scribe's mvu_patch


def _set_leaf(tree: dict[str, Any], segs: list[Segment], value: Any, changes: _Changes, applied: list[str],
              warnings: list[str], *, create: bool = True, keep_pair: bool = True) -> bool:
    """Set one path with the type rules; returns True when the tree changed."""
    where = join_path(segs)
    if not segs:
        warnings.append("空路径已忽略。")
        return False
    g = _guard(segs)
    if g:
        warnings.append(g)
        return False
    parent = _get(tree, segs[:-1])
    if parent is _MISSING:
        warnings.append(f"{where} 的上级路径不存在，已忽略——路径请照抄【状态树·当前值】里的写法。")
        return False
    last = segs[-1]
    if isinstance(parent, dict):
        key = last if isinstance(last, str) else str(last)
        if key not in parent:
            if not create:
                warnings.append(f"{where} 不存在，已忽略。")
                return False
            parent[key] = copy.deepcopy(value)
            changes.mark(segs)
            applied.append(f"{where}：新增 {js_str(value)}")
            return True
        old = parent[key]
    elif isinstance(parent, list):
        i = _index(parent, last)
        if i is None:
            warnings.append(f"{where} 超出数组范围或不是下标，已忽略——改数组请给完整新数组。")
            return False
        old = parent[i]
    else:
        warnings.append(f"{where} 的上级不是对象（是 {js_str(parent)[:40]}），不能新建子路径，已忽略。")
        return False
    if keep_pair and is_pair(old) and not (isinstance(value, list) and not is_pair(value) and not isinstance(old[0], list)):
        nv = value[0] if is_pair(value) else value
        coerced, warn = _coerce(old[0], nv, where)
        if warn:
            warnings.append(warn)
            return False
        if coerced == old[0] and type(coerced) is type(old[0]):
            return False
        before = old[0]
        new_leaf = [coerced, old[1]]
    else:
        coerced, warn = _coerce(old, value, where)
        if warn:
            warnings.append(warn)
            return False
        if coerced == old and type(coerced) is type(old):
            return False
        before = old
        new_leaf = coerced
    _put(parent, last, new_leaf)
    changes.mark(segs)
    applied.append(f"{where}：{js_str(before)} → {js_str(value_of(new_leaf))}")
    return True


def apply_mvu_patch(tree: Any, patch: Any) -> MvuResult:
    """Merge the scribe's ``{"a.b.c": new value}`` into a copy of ``tree`` (an :class:`MvuState`, a snapshot dict
    or the bare ``stat_data``). Rules: numbers stay numbers (a numeric string is converted, anything else refused),
    strings stay strings (numbers/booleans are stringified), objects and arrays are replaced whole only by an object
    / array; a ``[value, "description"]`` pair keeps its description; ``$…`` (derived) and ``_…`` (read-only) keys
    are refused; an unknown key is created only under an existing object. Never raises."""
    state = MvuState.from_any(tree)
    data = state.stat_data
    changes = _Changes(copy.deepcopy(data))
    applied: list[str] = []
    warnings: list[str] = []
    if patch is None or patch == {}:
        return _result(state, data, changes, applied, warnings)
    if not isinstance(patch, dict):
        warnings.append(f"mvu_patch 不是 JSON 对象已忽略（{js_str(patch)[:80]}）——请输出形如 {{\"路径.用点分隔\": 新值}} 的对象。")
        return _result(state, data, changes, applied, warnings)
    for path, value in patch.items():
        segs = split_path(str(path))
        _set_leaf(data, segs, value, changes, applied, warnings)
    return _result(state, data, changes, applied, warnings)


# ---------------------------------------------------------------------------------------------------------------
# [InitVar] entries


_INITVAR = re.compile(r"\[initvar\]", re.IGNORECASE)


def _entries_of(src: Any) -> list[Any]:
    """Entries of a Card (its book), a Lorebook, a card-book / World Info dict, or a list of entries."""
    if src is None:
        return []
    if isinstance(src, list):
        return list(src)
    lb = getattr(src, "lorebook", None)  # Card
    if lb is not None and hasattr(lb, "entries"):
        return list(lb.entries)
    if hasattr(src, "entries") and not isinstance(src, dict):  # Lorebook
        return list(src.entries)
    if isinstance(src, dict):
        entries = src.get("entries")
        if isinstance(entries, dict):
            entries = list(entries.values())
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    return []


def _title(e: Any) -> str:
    if isinstance(e, dict):
        return str(e.get("comment") or e.get("title") or e.get("name") or "")
    return str(getattr(e, "title", "") or getattr(e, "comment", "") or "")


def _content(e: Any) -> str:
    v = e.get("content") if isinstance(e, dict) else getattr(e, "content", "")
    return v if isinstance(v, str) else ""


def initvar_entries(book_or_card: Any) -> list[Any]:
    """Entries whose title/comment contains ``[InitVar]`` (any case), enabled or not, in book order."""
    return [e for e in _entries_of(book_or_card) if _INITVAR.search(_title(e))]


def _unwrap_body(text: str) -> str:
    t = text.strip()
    t = re.sub(r"^\s*<initvar>\s*\n?", "", t, flags=re.IGNORECASE)
    t = re.sub(r"\n?\s*</initvar>\s*$", "", t, flags=re.IGNORECASE)
    m = re.match(r"^```[\w-]*\s*\n([\s\S]*?)\n?```\s*$", t.strip())
    if m:
        t = m.group(1)
    return t.strip()


def _yaml(text: str) -> Any:
    if yaml is None:
        raise ValueError("PyYAML not installed")
    return yaml.safe_load(text)


def parse_data(text: str) -> Any:
    """An InitVar / JSONPatch body: YAML unless it starts with ``{``/``[``, then JSON, then json-repair, then YAML
    again (card-runtime.md §3.3). Raises ValueError when nothing parses."""
    t = _unwrap_body(text)
    if not t:
        raise ValueError("空内容")
    tries: list[Callable[[str], Any]] = []
    if t[0] not in "{[":
        tries.append(_yaml)
    tries.append(json.loads)

    def repaired(s: str) -> Any:
        if s[0] not in "{[":
            raise ValueError("not JSON-like")
        return json_repair.loads(s)

    tries += [repaired, _yaml]
    last: Optional[Exception] = None
    for f in tries:
        try:
            return _jsonable(f(t))
        except Exception as e:  # noqa: BLE001 - any parser failure moves to the next parser
            last = e
    raise ValueError(str(last) if last else "无法解析")


def _clean_meta(v: Any) -> Any:
    """Drop ``$meta`` objects and the ``"$__META_EXTENSIBLE__$"`` array marker (MVU turns them into ``schema``)."""
    if isinstance(v, dict):
        return {k: _clean_meta(x) for k, x in v.items() if k != "$meta"}
    if isinstance(v, list):
        return [_clean_meta(x) for x in v if x != "$__META_EXTENSIBLE__$"]
    return v


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``: objects merge key by key, anything else (arrays included) is
    replaced by ``over``'s value."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_initvars(book_or_card: Any, substitute: Optional[Callable[[str], str]] = None
                  ) -> tuple[Optional[dict[str, Any]], list[str]]:
    """Parse every InitVar entry and deep-merge them in book order (a later entry's value wins on the same key —
    several entries in one book are merged like MVU does). Returns (tree or None when the source has no InitVar
    entry, warnings). ``substitute`` runs macro substitution on each body first (MVU does; ``{{user}}`` …)."""
    entries = initvar_entries(book_or_card)
    if not entries:
        return None, []
    tree: dict[str, Any] = {}
    warnings: list[str] = []
    for e in entries:
        body = _content(e)
        if substitute is not None:
            body = substitute(body)
        try:
            data = parse_data(body)
        except ValueError as ex:
            why = " ".join(str(ex).split())  # YAML errors span lines; one line for the UI and the CLI
            warnings.append(f"[MVU] 解析世界书条目'{_title(e)}'失败（这张卡的初始变量没有读到）：{why[:200]}")
            continue
        if not isinstance(data, dict):
            warnings.append(f"[MVU] 世界书条目'{_title(e)}'不是对象（顶层必须是键值对），已跳过")
            continue
        tree = deep_merge(tree, _clean_meta(data))
    return tree, warnings


def initial_tree(card: Any, substitute: Optional[Callable[[str], str]] = None) -> Optional[dict[str, Any]]:
    """The card's initial ``stat_data`` from its InitVar entries, or None when it has none."""
    return load_initvars(card, substitute)[0]


def merge_initial(existing: Optional[dict[str, Any]], *initials: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Across lorebooks MVU merges root keys shallowly and existing progress wins:
    ``{...bookA, ...bookB, ...existing}``. Use when a lorebook with InitVar is attached mid-chat."""
    out: dict[str, Any] = {}
    for t in initials:
        if t:
            out.update(copy.deepcopy(t))
    if existing:
        out.update(copy.deepcopy(existing))
    return out


# ---------------------------------------------------------------------------------------------------------------
# <UpdateVariable> blocks


class MvuOp(BaseModel):
    """One update command. ``op``: set | add | insert | remove | move. ``path`` segments; ``key`` the 3-arg
    ``insert``/``remove`` key or index (``"-"`` = append); ``from_path`` for move; ``reason`` the ``//`` comment."""

    op: str
    path: list[Segment] = Field(default_factory=list)
    value: Any = None
    has_value: bool = False
    key: Optional[Segment] = None
    from_path: Optional[list[Segment]] = None
    reason: str = ""
    source: str = ""


_BLOCK = re.compile(r"<UpdateVariable>([\s\S]*?)(?:</UpdateVariable>|$)", re.IGNORECASE)
_JSONPATCH = re.compile(r"<(json_?patch)>([\s\S]*?)</\1>", re.IGNORECASE)
_CMD = re.compile(r"_\.(set|insert|assign|remove|unset|delete|add)\(")
_OPS = {"set": "set", "add": "add", "insert": "insert", "assign": "insert", "remove": "remove", "unset": "remove",
        "delete": "remove"}

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Mod: operator.mod, ast.Pow: operator.pow}


def _math(expr: str) -> Optional[Union[int, float]]:
    if not re.fullmatch(r"[\d\s.+\-*/%()eE]+", expr) or not re.search(r"\d", expr):
        return None

    def ev(n: ast.AST) -> Union[int, float]:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and _is_num(n.value):
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


def _unquote(s: str) -> str:
    q = s[0]
    inner = s[1:-1]
    if q == '"':
        try:
            return json.loads(s)
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
    n = _num_from_str(s)
    if n is not None:
        return n
    if s[:1] in "{[":
        try:
            return json.loads(s)
        except json.JSONDecodeError:
            try:
                return json_repair.loads(s)
            except Exception:  # noqa: BLE001
                return s
    m = _math(s)
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
    s = str(p or "")
    if not s.startswith("/"):
        return split_path(s)
    return [seg.replace("~1", "/").replace("~0", "~") for seg in s[1:].split("/")]


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


def parse_update_blocks(text: str) -> list[MvuOp]:
    """Commands in ``text``, in order of appearance: the classic ``_.set/_.add/_.insert/_.remove`` calls and
    ``<JSONPatch>`` arrays. Only ``<UpdateVariable>`` blocks are read when the text has any (an unclosed one runs to
    the end); otherwise the whole text is scanned, as MVU does."""
    text = text or ""
    blocks = [m.group(1) for m in _BLOCK.finditer(text)] or [text]
    ops: list[MvuOp] = []
    for b in blocks:
        parts: list[tuple[int, list[MvuOp]]] = []
        for m in _JSONPATCH.finditer(b):
            parts.append((m.start(), _jsonpatch(m.group(2))))
        rest = _JSONPATCH.sub(lambda m: " " * len(m.group(0)), b)
        for op in _classic(rest):
            parts.append((rest.find(op.source), [op]))
        for _, group in sorted(parts, key=lambda p: p[0]):
            ops.extend(group)
    return ops


def strip_update_blocks(text: str) -> str:
    """The text without ``<UpdateVariable>…</UpdateVariable>`` blocks (an unclosed trailing one too), for display."""
    out = re.sub(r"\s*<UpdateVariable>[\s\S]*?(?:</UpdateVariable>|$)", "", text or "", flags=re.IGNORECASE)
    return out.rstrip() if out != text else out


def _remove_at(tree: dict[str, Any], segs: list[Segment], where: str, warnings: list[str]) -> tuple[bool, Any]:
    parent = _get(tree, segs[:-1])
    last = segs[-1]
    if isinstance(parent, dict):
        key = last if isinstance(last, str) else str(last)
        if key in parent:
            return True, parent.pop(key)
    elif isinstance(parent, list):
        i = _index(parent, last)
        if i is not None:
            return True, parent.pop(i)
    warnings.append(f"{where} 不存在，删除已忽略。")
    return False, None


def apply_ops(tree: Any, ops: Iterable[MvuOp]) -> MvuResult:
    """Apply parsed commands in order to a copy of ``tree`` with the same guards as :func:`apply_mvu_patch`
    (``_set`` on a missing path is an error, as in MVU). Never raises."""
    state = MvuState.from_any(tree)
    data = state.stat_data
    changes = _Changes(copy.deepcopy(data))
    applied: list[str] = []
    warnings: list[str] = []
    for op in ops:
        segs = list(op.path)
        where = join_path(segs) or "(根)"
        g = _guard(segs) if segs else None
        if g:
            warnings.append(g)
            continue
        if op.op == "set":
            if _get(data, segs) is _MISSING:
                warnings.append(f"{where} 不存在，_.set 已忽略。")
                continue
            _set_leaf(data, segs, op.value, changes, applied, warnings, create=False)
        elif op.op == "add":
            cur = _get(data, segs)
            if cur is _MISSING:
                warnings.append(f"{where} 不存在，_.add 已忽略。")
                continue
            base = value_of(cur)
            delta = op.value
            if isinstance(delta, str):
                n = _num_from_str(delta)
                n = _math(delta) if n is None else n
                delta = n if n is not None else delta
            if not _is_num(base) or not _is_num(delta):
                warnings.append(f"{where} 的 _.add 需要数字（原值 {js_str(base)}，增量 {js_str(op.value)}），已忽略。")
                continue
            _set_leaf(data, segs, base + delta, changes, applied, warnings, create=False)
        elif op.op == "insert":
            target = _get(data, segs) if segs else data
            if target is _MISSING:
                warnings.append(f"{where} 不存在，_.insert 已忽略。")
                continue
            target = value_of(target) if is_pair(target) and isinstance(target[0], (list, dict)) else target
            if isinstance(target, list):
                if op.key is None or op.key == "-":
                    target.append(copy.deepcopy(op.value))
                    pos = len(target) - 1
                else:
                    k = op.key if isinstance(op.key, int) else _num_from_str(str(op.key))
                    if not isinstance(k, int):
                        warnings.append(f"{where} 是数组，插入位置 {js_str(op.key)} 不是下标，已忽略。")
                        continue
                    k = max(0, min(len(target), k if k >= 0 else len(target) + k))
                    target.insert(k, copy.deepcopy(op.value))
                    pos = k
                changes.mark(segs)
                applied.append(f"{where}[{pos}]：插入 {js_str(op.value)}")
            elif isinstance(target, dict):
                if op.key is None:
                    if not isinstance(op.value, dict):
                        warnings.append(f"{where} 是对象，_.insert 需要键名或对象，已忽略。")
                        continue
                    for k, v in op.value.items():
                        g2 = _guard(segs + [k])
                        if g2:
                            warnings.append(g2)
                            continue
                        target[k] = copy.deepcopy(v)
                        changes.mark(segs + [k])
                        applied.append(f"{join_path(segs + [k])}：新增 {js_str(v)}")
                else:
                    k = str(op.key)
                    g2 = _guard(segs + [k])
                    if g2:
                        warnings.append(g2)
                        continue
                    target[k] = copy.deepcopy(op.value)
                    changes.mark(segs + [k])
                    applied.append(f"{join_path(segs + [k])}：新增 {js_str(op.value)}")
            else:
                warnings.append(f"{where} 不是数组或对象，_.insert 已忽略。")
        elif op.op == "remove":
            if not op.has_value:
                if not segs:
                    warnings.append("不能删除整棵状态树，已忽略。")
                    continue
                ok, old = _remove_at(data, segs, where, warnings)
                if ok:
                    changes.mark(segs)
                    applied.append(f"{where}：删除 {js_str(old)}")
                continue
            target = _get(data, segs) if segs else data
            target = value_of(target) if is_pair(target) and isinstance(target[0], (list, dict)) else target
            if isinstance(target, list):
                idx = op.value if _is_num(op.value) and float(op.value).is_integer() else None
                if idx is None:
                    idx = next((i for i, x in enumerate(target) if x == op.value), None)
                elif int(idx) < -len(target) or int(idx) >= len(target):
                    idx = None
                if idx is None:
                    warnings.append(f"{where} 里没有 {js_str(op.value)}，删除已忽略。")
                    continue
                old = target.pop(int(idx))
                changes.mark(segs)
                applied.append(f"{where}：删除 {js_str(old)}")
            elif isinstance(target, dict):
                k = str(op.value)
                if _guard(segs + [k]):
                    warnings.append(_guard(segs + [k]) or "")
                    continue
                if k not in target:
                    warnings.append(f"{join_path(segs + [k])} 不存在，删除已忽略。")
                    continue
                old = target.pop(k)
                changes.mark(segs + [k])
                applied.append(f"{join_path(segs + [k])}：删除 {js_str(old)}")
            else:
                warnings.append(f"{where} 不是数组或对象，删除已忽略。")
        elif op.op == "move":
            frm = list(op.from_path or [])
            g2 = _guard(frm) if frm else "move 缺少 from。"
            if g2:
                warnings.append(g2)
                continue
            val = _get(data, frm)
            if val is _MISSING:
                warnings.append(f"{join_path(frm)} 不存在，move 已忽略。")
                continue
            parent = _get(data, segs[:-1])
            if not isinstance(parent, dict) or not segs:
                warnings.append(f"{where} 的上级不是对象，move 已忽略。")
                continue
            _remove_at(data, frm, join_path(frm), warnings)
            changes.mark(frm)
            _put(parent, segs[-1], val)
            changes.mark(segs)
            applied.append(f"{join_path(frm)} → {where}")
        else:
            warnings.append(f"不认识的指令 {op.op}，已忽略。")
    return _result(state, data, changes, applied, warnings)
