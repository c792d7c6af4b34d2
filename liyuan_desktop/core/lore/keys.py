"""Key matchers: the compiled form of one world-info key (plain text with the Liyuan whole-word rule, a JavaScript
regex translated for RE2, a regex run in QuickJS, or a refused one) and :func:`compile_key` / :func:`key_matches`.

Regex keys come from cards, so none runs on a backtracking engine without a bound: RE2 (linear time) runs what it
can express; the rest (backreferences, lookaround, ``m``-flag anchors) runs in QuickJS under :data:`JS_TIME_LIMIT`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional, Union

from ..jsruntime import PerThread, new_context, time_limit
from ..linear_regex import LinearRegexRefused, compile_re2, re2_safe_text
from ..linear_regex import search as linear_search
from ..messages import Msg, message
from .jsregex import JsRegexUnsupported, parse_regex_key, translate_js_regex, translate_js_regex_re2
from .model import ASCII_WORD
from .scan import Haystack

_WS = re.compile(r"\s+")


class _Plain:
    """A plain key: substring, or whole word with boundaries only on the sides where the key has an ASCII word
    character (the Liyuan rule)."""

    __slots__ = ("needle", "cs", "left", "right")
    kind = "plain"

    def __init__(self, needle: str, cs: bool, whole: bool):
        self.needle = needle if cs else needle.lower()
        self.cs = cs
        single = whole and _WS.search(needle) is None  # JS: key.split(/\s+/).length > 1 → substring
        self.left = bool(single and self.needle and self.needle[0] in ASCII_WORD)
        self.right = bool(single and self.needle and self.needle[-1] in ASCII_WORD)

    @property
    def lowered(self) -> bool:
        return not self.cs

    def find(self, hay: Haystack) -> int:
        h = hay.raw if self.cs else hay.low
        n = self.needle
        i = h.find(n)
        if i < 0 or not (self.left or self.right):
            return i
        ln, end = len(n), len(h)
        while i >= 0:
            if (not self.left or i == 0 or h[i - 1] not in ASCII_WORD) and (
                    not self.right or i + ln >= end or h[i + ln] not in ASCII_WORD):
                return i
            i = h.find(n, i + 1)
        return -1


    def find_at(self, hay: Haystack, ends: list[int]) -> int:
        """:meth:`find` given the end offsets of every occurrence of the needle (ascending, from the key index):
        the first one with the word boundaries the key needs — no scan of the text."""
        ln = len(self.needle)
        if not (self.left or self.right):
            return ends[0] - ln + 1
        h = hay.raw if self.cs else hay.low
        end = len(h)
        for e in ends:
            i = e - ln + 1
            if (not self.left or i == 0 or h[i - 1] not in ASCII_WORD) and (
                    not self.right or i + ln >= end or h[i + ln] not in ASCII_WORD):
                return i
        return -1


#: Characters before the seam a recursion pass re-reads for regex keys (:meth:`_Regex.find_from`): a regex match
#: that starts more than this before the text added by the pass and ends in it is not seen (SillyTavern re-tests the
#: whole joined buffer, so it would be) — an accepted difference: keys are words and short phrases, not paragraphs.
REGEX_SEAM_MARGIN = 1000


class _Regex:
    """A regex key compiled for RE2 (linear time in the scan text; ``sticky``: match at the start only).
    ``incremental``: a match in a text stays a match when text is appended after a newline (true unless the pattern
    anchors at the end of the text, ``$`` or ``\\z``, or is sticky) — then a recursion pass tests only the added text
    (:meth:`find_from`)."""

    __slots__ = ("rx", "sticky", "incremental")
    kind = "regex"
    lowered = False

    def __init__(self, rx: Any, sticky: bool, body: str = "$"):
        self.rx = rx
        self.sticky = sticky
        self.incremental = not sticky and "$" not in body and "\\z" not in body

    def find(self, hay: Haystack) -> int:
        m = linear_search(self.rx, hay.raw, sticky=self.sticky)
        return m.start() if m else -1

    def find_from(self, hay: Haystack, start: int) -> int:
        """The first match starting at or after ``start`` (code points), as RE2 sees it in the whole text: only
        ``hay.raw[start - 1:]`` is handed over, its first character kept as context for ``\\b`` and ``^``
        (RE2 looks no further back). -1 when none."""
        if start <= 0:
            return self.find(hay)
        sub = hay.raw[start - 1:]
        try:
            m = self.rx.search(sub, 1)
        except UnicodeEncodeError:
            m = self.rx.search(re2_safe_text(sub), 1)
        return start - 1 + m.start() if m else -1


class Refused:
    """A key that is never matched: a regex key ST would run but we refuse (unsafe or not compilable);
    ``reason`` says why, for the book's warnings (a catalog message: its Chinese text, rendered in the user's
    language by the front ends). Same interface as the matchers (``kind``, ``lowered``)."""
    __slots__ = ("reason",)
    kind = "refused"
    lowered = False

    def __init__(self, reason: str):
        self.reason = reason

    def find(self, hay: Haystack) -> int:
        """A refused key never matches: -1 (the reason is in the book's warnings)."""
        return -1


# -- QuickJS fallback ---------------------------------------------------------------------------------------------

_JS_SOURCE = r"""
var __wiCache = new Map();
function __wiRegex(p, f) {
  var k = f + "/" + p, re = __wiCache.get(k);
  if (re === undefined) {
    re = new RegExp(p, f);
    __wiCache.set(k, re);
    if (__wiCache.size > 512) __wiCache.delete(__wiCache.keys().next().value);
  }
  return re;
}
function __wiTest(p, f, s) { var re = __wiRegex(p, f); re.lastIndex = 0; var m = re.exec(s); return m ? m.index : -1; }
function __wiValid(p, f) { try { __wiRegex(p, f); return true; } catch (e) { return false; } }
"""
#: Seconds one regex key may run in QuickJS before it counts as not matching (catastrophic patterns).
JS_TIME_LIMIT = 0.05


class _JsEngine:
    """A QuickJS-ng context (one per thread; ``quickjs-ng`` is a project dependency) that evaluates the regex keys the
    translator cannot express, with JavaScript's own ``RegExp``."""

    def __init__(self) -> None:
        self.quickjs, self.ctx = new_context(64 * 1024 * 1024)
        self.ctx.eval(_JS_SOURCE)
        self.test_fn = self.ctx.get("__wiTest")
        self.valid_fn = self.ctx.get("__wiValid")

    def valid(self, pattern: str, flags: str) -> bool:
        try:
            return bool(self.valid_fn(pattern, flags))
        except Exception:  # noqa: BLE001 - engine trouble: treat as not valid JavaScript
            return False

    def find(self, pattern: str, flags: str, text: str) -> int:
        try:
            with time_limit(self.ctx, JS_TIME_LIMIT):
                u16 = self.test_fn(pattern, flags, text)
        except Exception:  # noqa: BLE001 - interrupted (time limit), out of memory, unpaired surrogates
            _js_engines.drop()  # start clean next time
            return -1
        if u16 is None or u16 < 0:
            return -1
        if text.isascii() or u16 == 0:
            return int(u16)
        # UTF-16 index → code point index (astral characters are two units in JavaScript)
        units = 0
        for i, ch in enumerate(text):
            if units >= u16:
                return i
            units += 2 if ord(ch) > 0xFFFF else 1
        return len(text)


def _js_engine() -> Optional[_JsEngine]:
    """This thread's QuickJS engine, or None when ``quickjs-ng`` cannot be loaded (then untranslatable regex keys are
    refused)."""
    return _js_engines.get()


_js_engines: PerThread[_JsEngine] = PerThread(_JsEngine)


class _JsEval:
    """A regex key evaluated by QuickJS (constructs the translator does not support)."""

    __slots__ = ("pattern", "flags")
    kind = "regex"
    lowered = False

    def __init__(self, pattern: str, flags: str):
        self.pattern, self.flags = pattern, flags

    def find(self, hay: Haystack) -> int:
        eng = _js_engine()
        return -1 if eng is None else eng.find(self.pattern, self.flags, hay.raw)


Matcher = Union[_Plain, _Regex, _JsEval, Refused]


def _why(exc: Exception) -> Msg | str:
    """Why a regex key was refused: the exception's message (a catalog :class:`Msg` kept as one), else its text."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], Msg) else str(exc)


@lru_cache(maxsize=65536)
def compile_key(key: str, case_sensitive: bool = False, match_whole_words: bool = True) -> Matcher:
    """The matcher for one key text (already substituted/trimmed as the caller wants).

    A regex key per :func:`parse_regex_key` is read by :func:`translate_js_regex` (is it valid JavaScript?) and run
    by RE2 (:func:`translate_js_regex_re2`, linear time); a construct RE2 or the translator does not support is
    evaluated by QuickJS instead (JavaScript's own ``RegExp``, :data:`JS_TIME_LIMIT` per test), and only without
    QuickJS refused (never matches; a warning names it). A pattern that is not valid JavaScript (QuickJS decides when
    available) makes the key plain text, as in ST. Otherwise a plain key. Cached per (key, settings)."""
    rk = parse_regex_key(key)
    if rk is not None:
        try:
            translate_js_regex(*rk)  # the JavaScript reading: raises for invalid or untranslatable patterns
            try:
                body, sticky = translate_js_regex_re2(*rk)
                return _Regex(compile_re2(body), sticky, body)
            except (JsRegexUnsupported, LinearRegexRefused) as exc:
                eng = _js_engine()
                if eng is not None and eng.valid(*rk):
                    return _JsEval(*rk)
                return Refused(message("lorekey.unsafe", key=key, why=_why(exc)))
        except JsRegexUnsupported as exc:
            eng = _js_engine()
            if eng is not None and eng.valid(*rk):
                return _JsEval(*rk)
            if eng is None:
                return Refused(message("lorekey.unusable", key=key, why=_why(exc)))
        except ValueError:
            eng = _js_engine()
            if eng is not None and eng.valid(*rk):  # stricter than JavaScript here: let JavaScript run it
                return _JsEval(*rk)
        # not valid JavaScript: ST's `new RegExp` throws and the key is matched as plain text
    return _Plain(key, case_sensitive, match_whole_words)


def key_matches(text: str, key: str, *, case_sensitive: bool = False, match_whole_words: bool = True) -> bool:
    """Whether ``key`` matches ``text`` by the activation rules (plain or ``/regex/flags``); for tests and the UI."""
    return compile_key(key.strip(), case_sensitive, match_whole_words).find(Haystack([(text, ("text",))])) >= 0
