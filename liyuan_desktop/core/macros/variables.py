"""Variable macros (``{{getvar}}``, ``{{setvar}}``, ``{{addvar}}``, ``{{incvar}}``, ``{{decvar}}`` and the
``globalvar`` forms) with SillyTavern's ``public/scripts/variables.js`` semantics: values that look numeric come
back as numbers, a missing variable is ``''``, ``addvar`` adds numbers, appends to a JSON array, otherwise
concatenates. Part of the one macro engine (:mod:`liyuan_desktop.core.macros`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Optional

from .context import MacroContext

__all__ = ["VAR_MACROS", "variable_macro"]

#: Lower-case names of the variable macros (chat-local and global).
VAR_MACROS: frozenset[str] = frozenset({
    "getvar", "setvar", "addvar", "incvar", "decvar",
    "getglobalvar", "setglobalvar", "addglobalvar", "incglobalvar", "decglobalvar",
})

_JS_NUMBER = re.compile(
    r"[+-]?(?:Infinity|(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+"
)


def _js_number(value: Any) -> float:
    """JavaScript ``Number(value)`` for the values variables hold (NaN when not numeric)."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if value is None:
        return 0.0
    if not isinstance(value, str):
        return math.nan
    s = value.strip()
    if not s:
        return 0.0
    if not _JS_NUMBER.fullmatch(s):
        return math.nan
    low = s.lower()
    if low.startswith(("0x", "0o", "0b")):
        return float(int(s, 0))
    try:
        return float(s)
    except ValueError:
        return math.inf if "infinity" in low and not low.startswith("-") else -math.inf


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for numbers; JSON for containers; ``''`` for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        text = repr(value)
        if "e" in text:
            mant, exp = text.split("e")
            sign = "-" if exp.startswith("-") else "+"
            text = f"{mant}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
        return text
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _num_value(x: float) -> Any:
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _get_var(store: dict[str, Any], name: str) -> Any:
    """SillyTavern ``getLocalVariable``: numeric-looking values as numbers, missing → ''."""
    value = store.get(name)
    if value is None or value == "":
        return ""
    if isinstance(value, (dict, list)):
        return value
    num = _js_number(value)
    if math.isnan(num):
        return value
    return _num_value(num) if not math.isinf(num) else num


def _add_var(store: dict[str, Any], name: str, value: Any) -> Any:
    """SillyTavern ``addLocalVariable``: array → append, numbers → add, else string concatenation."""
    current = _get_var(store, name)
    if current == "" or current == 0:
        current = 0
    if isinstance(current, list):
        current.append(value)
        return current
    if isinstance(current, str):
        try:
            parsed = json.loads(current)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            parsed.append(value)
            store[name] = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))
            return parsed
    increment = _js_number(value)
    if math.isnan(increment):
        text = (js_string(current) if current else "") + js_string(value)
        store[name] = text
        return text
    total = _js_number(current) + increment
    if math.isnan(total):
        return ""
    store[name] = _num_value(total) if not math.isinf(total) else total
    return store[name]


def variable_macro(name: str, args: list[str], ctx: MacroContext) -> Optional[str]:
    """Evaluate the variable macro ``name`` (lower case, one of :data:`VAR_MACROS`) with its ``::``-separated
    ``args`` (already expanded). ``get``/``inc``/``dec`` take the variable name (all args joined by ``::``,
    trimmed) and return its (new) value as text; ``set``/``add`` take name and value (later ``::`` stay in the
    value) and return ``''``. Writes into ``ctx.variables`` or ``ctx.global_variables`` in place. None (the
    macro is kept as written) when the name or a required value is missing."""
    store = ctx.global_variables if "global" in name else ctx.variables
    verb = name[:3]
    if verb in ("get", "inc", "dec"):
        var = "::".join(args).strip()
        if not var:
            return None
        if verb == "get":
            return js_string(_get_var(store, var))
        return js_string(_add_var(store, var, 1 if verb == "inc" else -1))
    if len(args) < 2:
        return None
    var = args[0].strip()
    if not var:
        return None
    value = "::".join(args[1:])
    if verb == "set":
        store[var] = value
    else:
        _add_var(store, var, value)
    return ""
