"""JavaScript regex keys: a world-info key written ``/pattern/flags`` is a JavaScript ``RegExp`` in SillyTavern.

:func:`parse_regex_key` recognises one (ST's ``parseRegexFromString``); :func:`translate_js_regex` translates the body
into a Python ``re`` pattern once per key (what is covered is listed there); :class:`JsRegexUnsupported` marks the
few valid constructs it does not translate, which :func:`.keys.compile_key` then runs in QuickJS.
:func:`translate_js_regex_re2` translates the same body for RE2 (linear time: a key from a card can never freeze
activation); what RE2 cannot express (backreferences, lookaround, multi-line anchors) raises
:class:`JsRegexUnsupported` and runs in QuickJS under its time limit instead.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Union


class JsRegexUnsupported(ValueError):
    """A ``/pattern/flags`` key that is valid JavaScript but uses a construct this translator does not support.
    :func:`compile_key` then evaluates it in QuickJS; without QuickJS the key never matches (and is reported in
    :attr:`Lorebook.warnings`) rather than matching wrongly."""


class _JsSyntax(ValueError):
    """Invalid JavaScript regex: SillyTavern's ``new RegExp`` throws and the key is matched as plain text."""


_REGEX_KEY = re.compile(r"\A/([\s\S]+?)/([gimsuy]*)\Z")
_UNESCAPED_SLASH = re.compile(r"(^|[^\\])/")
#: Matched at a position of the pattern (never on a slice of it: slicing at every token was quadratic, issue 29 §1).
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_MODIFIER_GROUP = re.compile(r"\(\?[ims]*(?:-[ims]*)?:")
_LINE_TERMS = r"\n\r\u2028\u2029"
_JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WORD_CLS = "A-Za-z0-9_"
_BOUNDARY = r"(?:(?<=[A-Za-z0-9_])(?![A-Za-z0-9_])|(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]))"
_NON_BOUNDARY = r"(?:(?<=[A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<![A-Za-z0-9_])(?![A-Za-z0-9_]))"
_SPACE_RANGES = [(9, 13), (32, 32), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
                 (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
_WORD_RANGES = [(48, 57), (65, 90), (95, 95), (97, 122)]
_DIGIT_RANGES = [(48, 57)]


def parse_regex_key(key: str) -> Optional[tuple[str, str]]:
    """``(pattern, flags)`` if ``key`` is a regex key by SillyTavern's ``parseRegexFromString`` rules, else None:
    ``/…/`` with flags from ``gimsuy``, no unescaped ``/`` inside; the first ``\\/`` is unescaped (as ST)."""
    m = _REGEX_KEY.match(key)
    if not m:
        return None
    pattern, flags = m.group(1), m.group(2)
    if _UNESCAPED_SLASH.search(pattern):
        return None
    return pattern.replace("\\/", "/", 1), flags


def _cls_char(cp: int) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _re2_char(cp: int) -> str:
    """One code point as RE2 pattern text (RE2 spells escapes ``\\x{HHHH}``; it has no ``\\u``)."""
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{{{cp:x}}}"


def _ranges_body(ranges: list[tuple[int, int]], char: Callable[[int], str] = _cls_char) -> str:
    return "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in ranges)


def _complement(ranges: list[tuple[int, int]], char: Callable[[int], str] = _cls_char) -> str:
    out, lo = [], 0
    for a, b in sorted(ranges):
        if a > lo:
            out.append((lo, a - 1))
        lo = max(lo, b + 1)
    if lo <= 0x10FFFF:
        out.append((lo, 0x10FFFF))
    return _ranges_body(out, char)


def _class_sets(char: Callable[[int], str]) -> dict[str, str]:
    return {
        "d": _ranges_body(_DIGIT_RANGES, char), "D": _complement(_DIGIT_RANGES, char),
        "w": _ranges_body(_WORD_RANGES, char), "W": _complement(_WORD_RANGES, char),
        "s": _ranges_body(_SPACE_RANGES, char), "S": _complement(_SPACE_RANGES, char),
    }


_CLASS_SETS = _class_sets(_cls_char)
_CLASS_SETS_RE2 = _class_sets(_re2_char)
_LINE_TERMS_RE2 = r"\n\r\x{2028}\x{2029}"
_SIMPLE_ESCAPES = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13}
_HEX = "0123456789abcdefABCDEF"


class _JsTranslator:
    """One-pass translation of a JavaScript (ES2018+, Annex B, non-``v``) regex body into a Python ``re`` pattern,
    or (``re2=True``) into an RE2 pattern, refusing with :class:`JsRegexUnsupported` what RE2 cannot express."""

    def __init__(self, pattern: str, flags: str, re2: bool = False):
        if len(set(flags)) != len(flags):
            raise _JsSyntax("duplicate flag")
        self.re2 = re2
        self.ch = _re2_char if re2 else _cls_char
        self.sets = _CLASS_SETS_RE2 if re2 else _CLASS_SETS
        self.p = pattern
        self.u = "u" in flags
        self.m = "m" in flags
        self.s = "s" in flags
        self.names: dict[str, int] = {}
        self.total = self._count_groups()
        self.opened = 0
        self.open_stack: list[int] = []  # capture numbers of open groups (0 = non-capturing)

    def _count_groups(self) -> int:
        p, i, n, in_cls = self.p, 0, 0, False
        while i < len(p):
            c = p[i]
            if c == "\\":
                i += 2
                continue
            if in_cls:
                in_cls = c != "]"
            elif c == "[":
                in_cls = True
            elif c == "(":
                if p.startswith("(?<", i) and not p.startswith(("(?<=", "(?<!"), i):
                    n += 1
                    end = p.find(">", i)
                    if end > 0:
                        self.names[p[i + 3:end]] = n
                elif not p.startswith("(?", i):
                    n += 1
            i += 1
        return n

    # -- escapes ----------------------------------------------------------------------------------------------
    def _hex(self, i: int, count: int) -> Optional[int]:
        s = self.p[i:i + count]
        return int(s, 16) if len(s) == count and all(c in _HEX for c in s) else None

    def _code_unit_escape(self, i: int) -> Optional[tuple[int, int]]:
        """``\\uXXXX`` (pairs of surrogate escapes combined), ``\\u{…}`` with the u flag. ``i`` at the ``u``.
        Returns (code point, next index) or None."""
        p = self.p
        if self.u and p.startswith("{", i + 1):
            end = p.find("}", i + 2)
            if end > i + 2 and all(c in _HEX for c in p[i + 2:end]):
                point = int(p[i + 2:end], 16)
                if point > 0x10FFFF:
                    raise _JsSyntax("code point out of range")
                return point, end + 1
            raise _JsSyntax("bad \\u{} escape")
        cp = self._hex(i + 1, 4)
        if cp is None:
            return None
        j = i + 5
        if 0xD800 <= cp <= 0xDBFF and p.startswith("\\u", j):
            lo = self._hex(j + 2, 4)
            if lo is not None and 0xDC00 <= lo <= 0xDFFF:
                return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), j + 6
        return cp, j

    def _legacy_octal(self, i: int) -> tuple[int, int]:
        """Annex B octal escape starting at ``i`` (first digit): up to 3 digits, value ≤ 0o377."""
        p, j = self.p, i
        while j < len(p) and j - i < 3 and p[j] in "01234567" and int(p[i:j + 1], 8) <= 0o377:
            j += 1
        return int(p[i:j], 8), j

    def _class_escape(self, i: int, in_class: bool = True) -> tuple[Union[int, str], int]:
        """Escape inside ``[...]`` (or a single-character escape outside, ``in_class=False``); ``i`` at the backslash.
        Returns (code point | class body, next index)."""
        p = self.p
        if i + 1 >= len(p):
            raise _JsSyntax("\\ at end of pattern")
        c = p[i + 1]
        if c in self.sets:
            return self.sets[c], i + 2
        if c == "b":
            return 8, i + 2
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c], i + 2
        if c == "c":
            nxt = p[i + 2] if i + 2 < len(p) else ""
            # Annex B: \c + letter everywhere; \c + digit or _ only inside a class
            if nxt.isascii() and (nxt.isalpha() or (in_class and not self.u and (nxt.isdigit() or nxt == "_"))):
                return ord(p[i + 2]) % 32, i + 3
            if self.u:
                raise _JsSyntax("bad \\c")
            return ord("\\"), i + 1  # the backslash is literal, "c" is read next
        if c == "x":
            cp = self._hex(i + 2, 2)
            if cp is not None:
                return cp, i + 4
            if self.u:
                raise _JsSyntax("bad \\x")
            return ord("x"), i + 2
        if c == "u":
            r = self._code_unit_escape(i + 1)
            if r is not None:
                return r
            if self.u:
                raise _JsSyntax("bad \\u")
            return ord("u"), i + 2
        if c in "pP":
            if self.u:
                raise JsRegexUnsupported("Unicode property escapes (\\p{…}) are not supported")
            return ord(c), i + 2
        if c in "0123456789":
            if self.u:
                if c == "0" and not (i + 2 < len(p) and p[i + 2] in "0123456789"):
                    return 0, i + 2
                raise _JsSyntax("octal escape in u mode")
            if c in "89":
                return ord(c), i + 2
            return self._legacy_octal(i + 1)
        if self.u and c not in "^$\\.*+?()[]{}|/-":
            raise _JsSyntax("identity escape in u mode")
        return ord(c), i + 2

    def _atom_escape(self, i: int) -> tuple[str, int]:
        """Escape outside a class; ``i`` at the backslash. Returns (python pattern piece, next index)."""
        p = self.p
        if i + 1 >= len(p):
            raise _JsSyntax("\\ at end of pattern")
        c = p[i + 1]
        if c in self.sets:
            return f"[{self.sets[c]}]", i + 2
        if c == "b":  # JavaScript's \b is ASCII (without u+i), as RE2's
            return (r"\b" if self.re2 else _BOUNDARY), i + 2
        if c == "B":
            return (r"\B" if self.re2 else _NON_BOUNDARY), i + 2
        if c in "123456789":
            j = i + 1
            while j < len(p) and p[j] in "0123456789":
                j += 1
            num = int(p[i + 1:j])
            if num <= self.total:
                return self._backref(num), j
            if self.u:
                raise _JsSyntax("backreference to a missing group")
        if c == "k" and (self.names or self.u):
            end = p.find(">", i + 3)
            if not p.startswith("<", i + 2) or end < 0 or p[i + 3:end] not in self.names:
                raise _JsSyntax("bad named backreference")
            return self._backref(self.names[p[i + 3:end]]), end + 1
        cp, j = self._class_escape(i, in_class=False)
        if isinstance(cp, str):  # cannot happen outside the sets handled above
            return f"[{cp}]", j
        return self.ch(cp) if cp != ord("\\") else "\\\\", j

    def _backref(self, num: int) -> str:
        # JS: a reference to a group that has not matched (yet), or is still open, matches the empty string;
        # Python fails instead — so such references become "(?:)" and the others a conditional reference.
        if num > self.opened or num in self.open_stack:
            return "(?:)"
        if self.re2:
            raise JsRegexUnsupported("backreferences are not linear-time (RE2)")
        return f"(?:(?({num})\\{num}))"

    # -- classes ----------------------------------------------------------------------------------------------
    def _class(self, i: int) -> tuple[str, int]:
        p, j = self.p, i + 1
        neg = p.startswith("^", j)
        if neg:
            j += 1
        if p.startswith("]", j):
            never = r"[^\x00-\x{10ffff}]" if self.re2 else "(?!)"
            return ("(?s:.)" if neg else never), j + 1
        items: list[str] = []

        def atom(k: int) -> tuple[Union[int, str], int]:
            if k >= len(p):
                raise _JsSyntax("unterminated character class")
            if p[k] == "\\":
                return self._class_escape(k)
            return ord(p[k]), k + 1

        while True:
            if j >= len(p):
                raise _JsSyntax("unterminated character class")
            if p[j] == "]":
                j += 1
                break
            a, j = atom(j)
            if p.startswith("-", j) and j + 1 < len(p) and p[j + 1] != "]":
                b, k = atom(j + 1)
                if isinstance(a, int) and isinstance(b, int):
                    if a > b:
                        raise _JsSyntax("range out of order")
                    items.append(f"{self.ch(a)}-{self.ch(b)}")
                    j = k
                    continue
                if self.u:
                    raise _JsSyntax("class escape in a range")
                items += [a if isinstance(a, str) else self.ch(a), self.ch(ord("-")),
                          b if isinstance(b, str) else self.ch(b)]
                j = k
                continue
            items.append(a if isinstance(a, str) else self.ch(a))
        return "[" + ("^" if neg else "") + "".join(items) + "]", j

    # -- main -------------------------------------------------------------------------------------------------
    def translate(self) -> str:
        p, out, i = self.p, [], 0
        quantifiable = False
        while i < len(p):
            c = p[i]
            if c == "\\":
                piece, i = self._atom_escape(i)
                out.append(piece)
                quantifiable = piece not in (_BOUNDARY, _NON_BOUNDARY, r"\b", r"\B")
                continue
            if c == "[":
                piece, i = self._class(i)
                out.append(piece)
                quantifiable = True
                continue
            if c == "(":
                if p.startswith(("(?:", "(?=", "(?!", "(?<=", "(?<!"), i):
                    k = 4 if p.startswith("(?<", i) else 3
                    if self.re2 and k == 4 or (self.re2 and p.startswith(("(?=", "(?!"), i)):
                        raise JsRegexUnsupported("lookahead / lookbehind are not linear-time (RE2)")
                    out.append(p[i:i + k])
                    self.open_stack.append(0)
                    i += k
                elif p.startswith("(?<", i):
                    end = p.find(">", i)
                    name = p[i + 3:end] if end > 0 else ""
                    if not name:
                        raise _JsSyntax("bad group name")
                    if not name.isidentifier():
                        raise JsRegexUnsupported(f"group name {name!r} is not a Python identifier")
                    self.opened += 1
                    self.open_stack.append(self.opened)
                    out.append(f"(?P<{name}>")
                    i = end + 1
                elif p.startswith("(?", i):
                    if _MODIFIER_GROUP.match(p, i):
                        raise JsRegexUnsupported("inline modifier groups (?i:…) are not supported")
                    raise _JsSyntax("invalid group")
                else:
                    self.opened += 1
                    self.open_stack.append(self.opened)
                    out.append("(")
                    i += 1
                quantifiable = False
                continue
            if c == ")":
                if not self.open_stack:
                    raise _JsSyntax("unmatched )")
                self.open_stack.pop()
                out.append(")")
                i += 1
                quantifiable = True
                continue
            qm = _QUANTIFIER.match(p, i) if c == "{" else None
            if c in "*+?" or qm:
                if qm is not None:
                    q = qm.group(0)
                    lo_hi = [int(x) for x in q[1:-1].split(",") if x]
                    if len(lo_hi) == 2 and lo_hi[0] > lo_hi[1]:
                        raise _JsSyntax("numbers out of order in quantifier")
                else:
                    q = c
                if not quantifiable:
                    raise _JsSyntax("nothing to repeat")
                i += len(q)
                if p.startswith("?", i):
                    q += "?"
                    i += 1
                out.append(q)
                if i < len(p) and (p[i] in "*+?" or (p[i] == "{" and _QUANTIFIER.match(p, i))):
                    raise _JsSyntax("nothing to repeat")
                quantifiable = False
                continue
            if c == ".":
                out.append("(?s:.)" if self.s else f"[^{_LINE_TERMS_RE2 if self.re2 else _LINE_TERMS}]")
            elif c in "^$" and self.m and self.re2:
                # JavaScript lines also end at \r, U+2028 and U+2029; RE2's (?m) knows only \n
                raise JsRegexUnsupported("multi-line anchors (m flag) need JavaScript line terminators")
            elif c == "^":
                out.append(f"(?<![^{_LINE_TERMS}])" if self.m else r"\A")
            elif c == "$":
                out.append(f"(?![^{_LINE_TERMS}])" if self.m else (r"\z" if self.re2 else r"\Z"))
            elif c == "|":
                out.append("|")
            elif c in "{}]":
                if self.u:
                    raise _JsSyntax(f"lone {c}")
                out.append("\\" + c)
            elif self.re2:
                out.append(c if c.isalnum() else ("\\" + c if c.isascii() and c.isprintable() and c != " "
                                                  else self.ch(ord(c))))
            else:
                out.append(re.escape(c))
            quantifiable = c not in "^$|"
            i += 1
        if self.open_stack:
            raise _JsSyntax("unterminated group")
        return "".join(out)


def translate_js_regex(pattern: str, flags: str = "") -> tuple[str, int, bool]:
    """Translate a JavaScript regex body + flags into ``(python_pattern, re_flags, sticky)``.

    Exact for: literals, ``. ^ $`` (JS line terminators; ``m``/``s`` flags), ``\\d \\w \\s \\b`` and their negations
    (ASCII word/digit classes and JS whitespace, as JS), classes incl. ``[^]`` and ``[]``, quantifiers incl. lazy and
    ``{n,m}`` (a ``{`` that is not a quantifier is literal), groups, lookahead, fixed-width lookbehind, named groups
    ``(?<n>…)``/``\\k<n>``, backreferences (a reference to a group that has not matched matches empty, as JS), Annex B
    escapes (``\\cX``, ``\\xHH``, ``\\uHHHH`` incl. surrogate pairs, ``\\u{…}`` with ``u``, legacy octal,
    identity escapes), flags ``i`` (→ IGNORECASE), ``g`` (no effect on a test), ``y`` (sticky: match at the start
    of the scan text only, as ``test`` from ``lastIndex`` 0).

    Raises :class:`JsRegexUnsupported` for JS-valid constructs that are not translated: ``\\p{…}`` property escapes,
    ``(?i:…)`` modifier groups, variable-width lookbehind (Python's ``re`` needs fixed width), group names that are
    not Python identifiers (:func:`compile_key` then runs the key in QuickJS). Raises ``ValueError`` (a
    ``_JsSyntax``) when the pattern is not valid JavaScript by this translator's reading.
    Remaining differences: case folding under ``i`` follows Python (e.g. ``ſ``/``K`` fold to s/k), and without
    ``u`` JavaScript sees astral characters as two UTF-16 units while Python sees one code point.
    """
    t = _JsTranslator(pattern, flags)
    py = t.translate()
    re_flags = re.IGNORECASE if "i" in flags else 0
    try:
        re.compile(py, re_flags)
    except re.error as exc:
        if "look-behind requires fixed-width" in str(exc):
            raise JsRegexUnsupported("variable-width lookbehind is not supported") from exc
        raise JsRegexUnsupported(f"not translatable to Python: {exc}") from exc
    return py, re_flags, "y" in flags



def translate_js_regex_re2(pattern: str, flags: str = "") -> tuple[str, bool]:
    """Translate a JavaScript regex body + flags into ``(re2_pattern, sticky)`` for the linear-time RE2 engine
    (``google-re2``; the ``i`` flag becomes a leading ``(?i)``).

    Same reading as :func:`translate_js_regex` (same classes, escapes, ``.``/``^``/``$`` and invalid-pattern
    errors), but raises :class:`JsRegexUnsupported` for what RE2 cannot run: backreferences to a group that has
    matched, lookahead and lookbehind, ``^``/``$`` under the ``m`` flag (JavaScript lines also end at ``\\r``,
    U+2028, U+2029), plus everything :func:`translate_js_regex` refuses. Whether RE2 accepts the result (e.g. a
    repeat count over 1000, a lone surrogate) is decided when it is compiled.
    """
    t = _JsTranslator(pattern, flags, re2=True)
    body = t.translate()
    return ("(?i)" + body if "i" in flags else body), "y" in flags
