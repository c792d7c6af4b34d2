"""TavernHelper's variable macros (issue 13 §3), part of the one macro engine (:mod:`liyuan_desktop.core.macros`):

* ``{{get_<scope>_variable::path}}`` — the value at ``path``: a string as it is, anything else as
  ``JSON.stringify`` writes it (compact, non-ASCII kept; a missing path is ``null``).
* ``{{format_<scope>_variable::path}}`` — a string as it is, anything else as YAML (``yaml`` npm package,
  ``YAML.stringify(value, {blockQuote: 'literal'})`` with the trailing newline trimmed); every line after the first
  is indented by the width of the text before the macro on its line, so a block lines up under its label.

``<scope>`` is ``message`` | ``chat`` | ``character`` | ``preset`` | ``global`` (the name is case-insensitive).
Reference (checked with the search tool, TavernHelper ``src/function/macro_like.ts`` and later versions): the path
is HTML-unescaped and read with lodash ``_.get`` (dots, ``[0]``, ``["key"]``; a key present as written wins over
splitting it), keys starting with ``$`` are dropped at every depth (MVU's ``$meta``), ``get`` macros are replaced
before ``format`` macros, and the indent of a ``format`` value is the JavaScript length (UTF-16 units) of everything
before it on its line, earlier ``format`` values on that line included.

Values come from ``ctx.th_variables`` (:class:`.context.MacroContext`): a callable ``scope -> dict | None`` — in the
conversation view, the message's variable snapshot for ``message`` (SillyTavern's display has one per message).
Without it (``None``, the default) the macros are unknown and kept exactly as written, so prompts that do not set
it stay byte-identical. A scope the lookup answers None for reads as an empty table (values ``null``).

The ERA variable framework's ``{{ERA:path}}`` / ``{{ERA-withmeta:path}}`` (a macro its script registers in
SillyTavern) are read here too: :func:`era_macro`.

Differences from TavernHelper: the YAML writer below covers what variable tables hold (mappings, sequences,
strings, numbers, booleans, null) with the ``yaml`` package's defaults, except that long plain strings are not
folded at 80 columns (Chinese text, which has no spaces to fold at, is unaffected).
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any, Optional

from .variables import js_string

__all__ = ["TH_SCOPES", "is_th_macro", "th_macro", "era_macro", "apply_th_macros", "lodash_get", "omit_dollar_keys", "js_json", "yaml_stringify",
           "FORMAT_START", "FORMAT_INDENT", "FORMAT_END", "apply_format_indent"]

#: The variable scopes TavernHelper's macros name.
TH_SCOPES = ("message", "chat", "character", "preset", "global")
_NAME = re.compile(r"(get|format)_(message|chat|character|preset|global)_variable")

#: Marks the engine puts around a ``format`` value and after each of its newlines; :func:`apply_format_indent`
#: turns them into the indent once the whole text is known (private-use noncharacters, never in real text).
FORMAT_START, FORMAT_INDENT, FORMAT_END = "\ufdd2", "\ufdd3", "\ufdd4"


def is_th_macro(name: str) -> bool:
    """Whether the lower-case macro ``name`` is one of TavernHelper's variable macros."""
    return _NAME.fullmatch(name) is not None


def omit_dollar_keys(value: Any) -> Any:
    """``value`` without the mapping keys that start with ``$``, at every depth (lodash-omitdeep ``omitDeepBy``)."""
    if isinstance(value, dict):
        return {k: omit_dollar_keys(v) for k, v in value.items() if not str(k).startswith("$")}
    if isinstance(value, list):
        return [omit_dollar_keys(v) for v in value]
    return value


_PATH_PART = re.compile(r"""[^.[\]]+|\[(?:(-?\d+(?:\.\d+)?)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]|(?=(?:\.|\[\])(?:\.|\[\]|$))""")


def _path_parts(path: str) -> list[str]:
    """lodash ``stringToPath``: ``a.b[0]["c.d"]`` → ``["a", "b", "0", "c.d"]``."""
    out: list[str] = []
    if path.startswith("."):
        out.append("")
    for m in _PATH_PART.finditer(path):
        if m.group(2):
            out.append(re.sub(r"\\(\\)?", lambda x: x.group(1) or "", m.group(3)))
        elif m.group(1) is not None:
            out.append(m.group(1))
        else:
            out.append(m.group(0))
    return out


def lodash_get(obj: Any, path: str, default: Any = None) -> Any:
    """lodash ``_.get(obj, path, default)`` for JSON-like data: a key present as written is used whole, else the
    path is split at dots and brackets; list indices are decimal strings."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    cur = obj
    parts = _path_parts(path)
    if not parts:
        return default
    for part in parts:
        if isinstance(cur, dict):
            if part not in cur:
                return default
            cur = cur[part]
        elif isinstance(cur, list) and re.fullmatch(r"\d+", part) and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, str) and part == "length":
            cur = len(cur.encode("utf-16-le")) // 2
        elif isinstance(cur, list) and part == "length":
            cur = len(cur)
        else:
            return default
    return default if cur is None and default is not None else cur


def _js_ready(value: Any) -> Any:
    """Floats that are whole numbers become ints (JavaScript writes ``1``, not ``1.0``); NaN/Infinity → None."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, dict):
        return {str(k): _js_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_js_ready(v) for v in value]
    return value


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, non-ASCII as is, whole floats without ``.0``."""
    return json.dumps(_js_ready(value), ensure_ascii=False, separators=(",", ":"))


# ---- YAML (the ``yaml`` npm package's defaults: indent 2, sequences indented under their key) -----------------
_RESERVED = re.compile(r"(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|"
                       r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|"
                       r"0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))")


def _needs_quotes(s: str) -> bool:
    if s == "" or s != s.strip(" \t") or _RESERVED.fullmatch(s):
        return True
    if s[0] in "-?:,[]{}#&*!|>'\"%@`" and not (s[0] in "-?:" and len(s) > 1 and s[1] not in " \t"):
        return True
    if ": " in s or " #" in s or s.endswith(":") or "\t" in s:
        return True
    return any(ord(c) < 0x20 or c in "\ufeff" for c in s)


def _quoted(s: str) -> str:
    if "'" in s and '"' not in s or "'" not in s and '"' not in s:
        return json.dumps(s, ensure_ascii=False)
    if '"' in s and "'" not in s:
        return "'" + s + "'"
    return json.dumps(s, ensure_ascii=False)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return ".nan"
        if isinstance(value, float) and math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return js_string(value)
    s = str(value)
    return _quoted(s) if _needs_quotes(s) else s


def _block_string(s: str, indent: int) -> list[str]:
    """A multi-line string as a literal block: the header (``|-``, ``|`` or ``|+``) and the indented lines."""
    trailing = len(s) - len(s.rstrip("\n"))
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    body = s[:-trailing] if trailing else s
    lead = str(2) if body.startswith((" ", "\n")) else ""
    pad = " " * indent
    lines = [pad + ln if ln else "" for ln in body.split("\n")]
    if chomp == "+":
        lines += [""] * (trailing - 1)
    return ["|" + lead + chomp] + lines


def _lines(value: Any, indent: int) -> list[str]:
    """Lines of a block mapping/sequence at ``indent`` spaces (the caller placed any key or dash)."""
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = _scalar(str(k))
            out += _entry(pad + key + ":", v, indent)
        return out
    for v in value:
        if isinstance(v, (dict, list)) and v:
            inner = _lines(v, indent + 2)
            out.append(pad + "- " + inner[0].lstrip(" "))
            out += inner[1:]
        else:
            out += _entry(pad + "-", v, indent)
    return out


def _entry(head: str, v: Any, indent: int) -> list[str]:
    if isinstance(v, dict) and v:
        return [head] + _lines(v, indent + 2)
    if isinstance(v, list) and v:
        return [head] + _lines(v, indent + 2)
    if isinstance(v, dict):
        return [head + " {}"]
    if isinstance(v, list):
        return [head + " []"]
    if isinstance(v, str) and "\n" in v:
        block = _block_string(v, indent + 2)
        return [head + " " + block[0]] + block[1:]
    return [head + " " + _scalar(v)]


def yaml_stringify(value: Any) -> str:
    """``YAML.stringify(value, {blockQuote: 'literal'})`` of the ``yaml`` npm package, trailing newline trimmed
    (TavernHelper's ``trimEnd()``), for JSON-like values (module doc for the one difference)."""
    value = _js_ready(value) if not isinstance(value, float) else value
    if isinstance(value, (dict, list)) and value:
        return "\n".join(_lines(value, 0)).rstrip()
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    if isinstance(value, str) and "\n" in value:
        return "\n".join(_block_string(value, 0)).rstrip()
    return _scalar(value)


# ---- the macros ---------------------------------------------------------------------------------------------------
def th_macro(name: str, path: str, ctx: Any) -> Optional[str]:
    """The value of TavernHelper macro ``name`` (lower case, :func:`is_th_macro`) for ``path`` (the text after
    ``::``), or None when ``ctx.th_variables`` is not set (the macro is then kept as written). A ``format`` value is
    wrapped in :data:`FORMAT_START`/:data:`FORMAT_END` with :data:`FORMAT_INDENT` after each newline, for
    :func:`apply_format_indent`."""
    lookup = getattr(ctx, "th_variables", None)
    m = _NAME.fullmatch(name)
    if lookup is None or m is None:
        return None
    table = lookup(m.group(2)) or {}
    value = omit_dollar_keys(lodash_get(table, html.unescape(path), None))
    if m.group(1) == "get":
        return value if isinstance(value, str) else js_json(value)
    text = value if isinstance(value, str) else yaml_stringify(value)
    return FORMAT_START + text.replace("\n", "\n" + FORMAT_INDENT) + FORMAT_END


def era_macro(raw_name: str, rest: str, ctx: Any) -> Optional[str]:
    """The ERA variable framework's macros (its ``api/macro/parser.ts``, read with the search tool):
    ``{{ERA:path}}`` and ``{{ERA-withmeta:path}}`` — ``raw_name`` is the macro name as written (ERA only looks for
    ``{{ERA``, upper case), ``rest`` the text after it (``:path`` or ``-withmeta:path``). The value is read from
    the newest message's variables (``ctx.th_variables("message")["stat_data"]``: the ledger's tree, where
    Liyuan keeps what ERA keeps in the chat's ``stat_data``); ``$ALLDATA`` is the whole tree. A missing path is
    ``''``, ``null`` is ``"null"``, objects and arrays compact JSON, anything else ``String(value)``; without
    ``-withmeta`` every ``$…`` key is dropped at every depth. None (kept as written) when ``rest`` is neither form or
    ``ctx.th_variables`` is not set."""
    lookup = getattr(ctx, "th_variables", None)
    if raw_name != "ERA" or lookup is None:
        return None
    if rest.startswith(":"):
        meta, path = False, rest[1:]
    elif rest.startswith("-withmeta:"):
        meta, path = True, rest[len("-withmeta:"):]
    else:
        return None
    table = lookup("message") or {}
    stat = table.get("stat_data") if isinstance(table, dict) and isinstance(table.get("stat_data"), dict) else {}
    path = html.unescape(path.strip())
    missing = object()
    value = stat if path == "$ALLDATA" else lodash_get(stat, path, missing)
    if value is missing:
        return ""
    if not meta:
        value = omit_dollar_keys(value)
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return js_json(value)


def _js_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def apply_format_indent(text: str) -> str:
    """Replace the ``format`` marks in ``text`` by TavernHelper's indent: after each newline inside a value, as
    many spaces as the JavaScript length of what precedes the value on its source line (earlier values included)."""
    if FORMAT_START not in text:
        return text
    out: list[str] = []
    line_len = 0  # JavaScript length of the output since the last newline of the source text
    pad = ""
    inside = False
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == FORMAT_START:
            pad = " " * line_len
            inside = True
        elif c == FORMAT_END:
            inside = False
        elif c == FORMAT_INDENT:
            out.append(pad)
            line_len += len(pad)
        elif c == "\n" and not inside:
            out.append(c)
            line_len = 0
        else:
            out.append(c)
            line_len += 2 if ord(c) > 0xFFFF else 1
        i += 1
    return "".join(out)


def apply_th_macros(text: str, ctx: Any, lookup: Any) -> str:
    """``text`` with only TavernHelper's variable macros replaced (every other macro kept as written), values from
    ``lookup(scope) -> dict | None`` — what TavernHelper does to a rendered message (it replaces its own macros
    there, nothing else). ``ctx``: the chat's :class:`.context.MacroContext` (copied, never changed)."""
    if not text or ("_variable::" not in text and "{{ERA" not in text):
        return text
    from .engine import expand  # the engine imports this module: imported when first used

    return expand(text, ctx.model_copy(update={"th_variables": lookup, "th_only": True}), None)
