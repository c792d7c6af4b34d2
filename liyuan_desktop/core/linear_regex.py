"""Linear-time regular expressions for patterns that come from a card or a model.

A backtracking engine (Python's ``re``, JavaScript's ``RegExp``) can take exponential time on a pattern such as
``(a+)+$`` — 23.6 s on a 28-character line in the break-test of issue 15, doubling per character. Every regex the
app did not write itself is therefore run by RE2 (``google-re2``, a project dependency with manylinux/macOS/Windows
wheels), whose matching time is linear in the text. RE2 has no backreferences and no lookaround; a pattern using
them is refused here (:class:`LinearRegexRefused`) and the caller decides: agent-mode ``grep`` reports a tool error
the model can act on, world-info keys (:mod:`.lore.keys`) run such patterns in QuickJS under a time limit, regex
scripts keep their own limit (:mod:`.cards.regex_engine`).

Two entry points:

* :func:`compile_re2` — RE2 syntax as is (the world-info translator in :mod:`.lore.jsregex` writes it).
* :func:`compile_python_pattern` — a pattern written in Python ``re`` syntax (the model's ``grep``), with
  Python's Unicode meaning of ``\\w``, ``\\d``, ``\\s`` (RE2's are ASCII-only, which would miss Chinese text) and
  ``\\Z`` (RE2 spells it ``\\z``).

Matching a ``str`` encodes it to UTF-8; a lone surrogate (possible in model output) cannot be encoded, so use
:func:`re2_safe_text` first — it swaps lone surrogates for U+FFFD, which keeps every index unchanged.
"""

from __future__ import annotations

import re
from typing import Any

import re2

from .messages import message

#: Memory RE2 may use to compile one pattern (bytes); a bigger automaton is refused rather than built.
MAX_PATTERN_MEMORY = 8 << 20

_SURROGATE = re.compile("[\ud800-\udfff]")

# Python's Unicode classes in RE2 syntax (str.isalnum + "_" for \w, decimal digits for \d, str.isspace for \s).
_WORD = r"\p{L}\p{N}\p{Mn}\p{Mc}_"
_DIGIT = r"\p{Nd}"
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x{85}\p{Z}"
_UNICODE_SETS = {"w": _WORD, "d": _DIGIT, "s": _SPACE}

#: Python constructs RE2 cannot run, with the catalog key of the words the reader is told (checked before compiling;
#: ``regex.what.*`` in core/messages.py).
_PYTHON_ONLY = [
    (re.compile(r"\(\?[=!]"), "regex.what.lookahead"),
    (re.compile(r"\(\?<[=!]"), "regex.what.lookbehind"),
    (re.compile(r"\(\?P=|\\[1-9]|\\g<"), "regex.what.backref"),
    (re.compile(r"\(\?\("), "regex.what.conditional"),
    (re.compile(r"\(\?>|[*+?}]\+"), "regex.what.atomic"),
]


class LinearRegexRefused(ValueError):
    """A pattern the linear-time engine cannot run (backreference, lookaround, a repeat over 1000, too big).
    Its first argument is a catalog message (``regex.*``): ``str(exc)`` says which construct in Chinese with the RE2
    message, :func:`~.messages.render` in the reader's language."""


def _options() -> Any:
    opts = re2.Options()
    opts.log_errors = False  # RE2 would print every refused pattern to stderr
    opts.max_mem = MAX_PATTERN_MEMORY
    return opts


def compile_re2(pattern: str) -> Any:
    """Compile RE2-syntax ``pattern`` (``(?i)`` etc. inline). Returns an object with the ``re`` API (``search``,
    ``match``, ``finditer``; positions in code points for ``str`` input). Raises :class:`LinearRegexRefused`."""
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise LinearRegexRefused(message("regex.re2_refused", detail=detail)) from None


def _to_re2(pattern: str) -> str:
    """Rewrite Python ``re`` escapes whose meaning differs in RE2: ``\\w \\d \\s`` (and negations outside a class)
    to their Unicode classes, ``\\Z`` to ``\\z``. Everything else is passed through unchanged."""
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0  # depth: inside [...] (1) or not (0)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e in _UNICODE_SETS:
                out.append(_UNICODE_SETS[e] if depth else f"[{_UNICODE_SETS[e]}]")
            elif e in "WDS" and not depth:
                out.append(f"[^{_UNICODE_SETS[e.lower()]}]")
            elif e == "Z" and not depth:
                out.append(r"\z")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if depth:
            if c == "]":
                depth = 0
        elif c == "[":
            depth = 1
            out.append(c)
            i += 1
            # a "]" (or "^]") right after "[" is a literal in Python
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append(r"\]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_python_pattern(pattern: str, *, ignore_case: bool = False) -> Any:
    """Compile a pattern written in Python ``re`` syntax to run in linear time (RE2), keeping Python's Unicode
    ``\\w``/``\\d``/``\\s``. (``\\b`` is ASCII in RE2: a boundary between two Chinese characters and a letter is
    not seen.)

    Raises ``re.error`` when the pattern is not valid Python ``re`` (the caller says "written wrong") and
    :class:`LinearRegexRefused` when it is valid but uses what RE2 cannot run in linear time (the message names
    the construct: backreferences, lookaround, conditionals, atomic groups, repeats over 1000), or when it nests
    groups too deeply for Python's parser to read (its first argument is then the catalog message
    ``regex.too_deep``)."""
    try:
        re.compile(pattern)  # raises re.error: not a pattern at all
    except RecursionError:  # Python's parser recurses per nested group: 1,000 of them exhaust the stack (issue 29)
        raise LinearRegexRefused(message("regex.too_deep")) from None
    body = _to_re2(pattern)
    try:
        return compile_re2("(?i)" + body if ignore_case else body)
    except LinearRegexRefused as exc:
        bare = pattern.replace("\\\\", "")
        for probe, what in _PYTHON_ONLY:  # name the construct in words the reader knows
            if probe.search(bare):
                raise LinearRegexRefused(message("regex.python_only", what=message(what), error=exc)) from None
        raise


def re2_safe_text(text: str) -> str:
    """``text`` ready for RE2: lone UTF-16 surrogates (they cannot be encoded to UTF-8) become U+FFFD, one for one,
    so every position in the result is the same position in ``text``."""
    return _SURROGATE.sub("\ufffd", text)


def search(rx: Any, text: str, *, sticky: bool = False) -> Any:
    """``rx.search(text)`` (``rx.match`` when ``sticky``) on a pattern from :func:`compile_re2` /
    :func:`compile_python_pattern`; a text with lone surrogates is retried through :func:`re2_safe_text`
    (no extra cost for ordinary text). Returns the match or None; positions are code points of ``text``."""
    try:
        return rx.match(text) if sticky else rx.search(text)
    except UnicodeEncodeError:
        safe = re2_safe_text(text)
        return rx.match(safe) if sticky else rx.search(safe)
