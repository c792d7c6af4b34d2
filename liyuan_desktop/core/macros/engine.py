"""The macro parser and evaluator: ``{{`` opens a macro, ``}}`` closes the innermost open one, inner macros are
evaluated first. See :mod:`liyuan_desktop.core.macros` for the rules; this module is internal to it."""

from __future__ import annotations

import hashlib
import random as _random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from .context import MAX_DICE, MAX_FIELD_DEPTH, MacroContext
from .moment import format_moment
from .segments import (
    ARGS_PREFIX,
    LIST_PREFIX,
    REVERSE_PREFIX,
    ROLL_PREFIX,
    SPACE_PREFIX,
    Seg,
    list_items,
    seg_join,
    seg_slice,
    seg_split,
    strip_prefix,
)
from .tavernhelper import FORMAT_START, apply_format_indent, era_macro, is_th_macro, th_macro
from .variables import VAR_MACROS, variable_macro

# ---------------------------------------------------------------------------------------------------------------
# parser

_TOKEN = re.compile(r"\{\{|\}\}")
_NAME = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)")
NAME_SCAN = re.compile(r"\{\{\s*([A-Za-z][A-Za-z0-9_]*)")
_LEGACY_TAG = re.compile(r"<(USER|BOT|CHAR|CHARIFNOTGROUP|GROUP)>", re.IGNORECASE)
_TRIM_MARK = "\ufdd0trim\ufdd1"
_TRIM_RE = re.compile(r"(?:\r?\n)*" + re.escape(_TRIM_MARK) + r"(?:\r?\n)*")


def expand(text: str, ctx: MacroContext, escape: Optional[Callable[[str], str]]) -> str:
    """Expand every macro in ``text`` (non-empty) with ``ctx``; ``escape`` as in ``apply_macros``. Internal entry
    point of the engine: one parse, then the ``{{trim}}`` marks removed with the newlines around them."""
    run = _Run(ctx=ctx, content=text, escape=escape, shared=_Shared())
    out = _expand(text, run, depth=0)
    if _TRIM_MARK in out:
        out = _TRIM_RE.sub("", out)
    if FORMAT_START in out:  # TavernHelper's format_*_variable: indent known only now (tavernhelper.py)
        out = apply_format_indent(out)
    return out


@dataclass
class _Shared:
    original_used: bool = False


@dataclass
class _Run:
    ctx: MacroContext
    content: str
    escape: Optional[Callable[[str], str]]
    shared: _Shared
    _content_hash: Optional[str] = None

    @property
    def content_hash(self) -> str:
        if self._content_hash is None:
            self._content_hash = hashlib.sha256(self.content.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return self._content_hash


@dataclass
class _Frame:
    start: int
    segs: list[Seg] = field(default_factory=list)

    def add(self, text: str, literal: bool) -> None:
        if not text:
            return
        if literal and self.segs and self.segs[-1][1]:
            self.segs[-1] = (self.segs[-1][0] + text, True)
        else:
            self.segs.append((text, literal))

    def raw(self) -> str:
        return "".join(t for t, _ in self.segs)


def _expand(text: str, run: _Run, depth: int) -> str:
    frames: list[_Frame] = [_Frame(start=-1)]
    pos = 0
    n = len(text)

    def put_literal(chunk: str) -> None:
        """Source text into the innermost frame, with the legacy <USER>-style tags replaced."""
        if not chunk:
            return
        if "<" not in chunk or run.ctx.th_only:
            frames[-1].add(chunk, True)
            return
        last = 0
        for m in _LEGACY_TAG.finditer(chunk):
            frames[-1].add(chunk[last:m.start()], True)
            tag = m.group(1).lower()
            value = run.ctx.user if tag == "user" else run.ctx.char
            put_value(value)
            last = m.end()
        frames[-1].add(chunk[last:], True)

    def put_value(value: str) -> None:
        if len(frames) == 1 and run.escape is not None and value:
            value = run.escape(value)
        frames[-1].add(value, False)

    while pos < n:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        i = m.start()
        if text[i] == "{":
            j = i
            while j < n and text[j] == "{":
                j += 1
            opener = j - 2
            put_literal(text[pos:opener])
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if text.startswith("//", k):
                close = _find_close(text, j)
                if close is None:  # an unclosed comment is plain text
                    put_literal(text[opener:])
                    pos = n
                    break
                pos = close + 2
                continue
            frames.append(_Frame(start=opener))
            pos = j
        else:
            put_literal(text[pos:i])
            pos = i + 2
            if len(frames) == 1:
                frames[0].add("}}", True)
                continue
            frame = frames.pop()
            value = _evaluate(frame, run, depth)
            if value is None:
                frames[-1].add("{{" + frame.raw() + "}}", False)
            else:
                put_value(value)
    put_literal(text[pos:])
    while len(frames) > 1:  # unclosed macros: their text stays as written
        frame = frames.pop()
        frames[-1].add("{{", True)
        for seg in frame.segs:
            frames[-1].add(*seg)
    return frames[0].raw()


def _find_close(text: str, pos: int) -> Optional[int]:
    """Index of the ``}}`` closing a macro whose body starts at ``pos`` (nested macros counted), or None."""
    level = 1
    n = len(text)
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            return None
        i = m.start()
        if text[i] == "{":
            j = i
            while j < n and text[j] == "{":
                j += 1
            level += 1
            pos = j
        else:
            level -= 1
            if level == 0:
                return i
            pos = i + 2


# ---------------------------------------------------------------------------------------------------------------
# evaluation

def _evaluate(frame: _Frame, run: _Run, depth: int) -> Optional[str]:
    """Value of the macro in ``frame``, or None when it is unknown/malformed (then it is kept as written)."""
    segs = frame.segs
    if not segs or not segs[0][1]:
        return None
    m = _NAME.match(segs[0][0])
    if m is None:
        return None
    name = m.group(1).lower()
    rest = seg_slice(segs, m.end())
    bare = not rest or (all(lit for _, lit in rest) and not seg_join(rest).strip())
    ctx = run.ctx
    if name == "era":  # the ERA framework's {{ERA:path}} / {{ERA-withmeta:path}} (tavernhelper.era_macro)
        return era_macro(m.group(1), seg_join(rest), ctx)
    if ctx.th_only and not is_th_macro(name):
        return None

    if bare:
        simple = _SIMPLE.get(name)
        if simple is not None:
            return simple(ctx)
        field_getter = _FIELDS.get(name)
        if field_getter is not None:
            value = field_getter(ctx)
            if depth < MAX_FIELD_DEPTH and value and ("{{" in value or "<" in value):
                value = _expand(value, _Run(ctx=ctx, content=value, escape=None, shared=run.shared), depth + 1)
            return value
        if name == "original":
            if ctx.original is None:
                return None
            if run.shared.original_used:
                return ""
            run.shared.original_used = True
            return ctx.original
        if name == "trim":
            return _TRIM_MARK
        if name in _CLOCK_FORMATS:
            return format_moment(_now(ctx), _CLOCK_FORMATS[name])
        return None

    if name in ("random", "pick"):
        body = strip_prefix(rest, LIST_PREFIX)
        if not body or not seg_join(body):
            return None
        items = list_items(body)
        if not items:
            return ""
        if name == "pick":
            rng = _seeded(f"pick|{ctx.chat_id}|{run.content_hash}|{frame.start}")
        else:
            rng = _rng(run, frame.start, "random")
        return items[rng.randrange(len(items))]

    if name == "roll":
        body = strip_prefix(rest, ROLL_PREFIX)
        if not body:
            return None
        return _roll(seg_join(body), _rng(run, frame.start, "roll"))

    if name in VAR_MACROS:
        body = strip_prefix(rest, ARGS_PREFIX)
        if body is None:
            return None
        args = [seg_join(p) for p in seg_split(body, "::")]
        return variable_macro(name, args, ctx)

    if name == "reverse":
        body = strip_prefix(rest, REVERSE_PREFIX)
        if not body:
            return None
        return seg_join(body)[::-1]

    if name == "datetimeformat":
        body = strip_prefix(rest, SPACE_PREFIX)
        if not body:
            return None
        return format_moment(_now(ctx), seg_join(body).strip())

    if name == "time_utc":
        mo = re.fullmatch(r"\s*([+-]\d{1,2})\s*", seg_join(rest))
        if mo is None or not all(lit for _, lit in rest):
            return None
        offset = timezone(timedelta(hours=int(mo.group(1))))
        now = _now(ctx)
        if now.tzinfo is None:
            now = now.astimezone()
        return format_moment(now.astimezone(offset), "LT")

    if is_th_macro(name):  # TavernHelper's {{get_message_variable::path}} family (tavernhelper.py)
        body = strip_prefix(rest, ARGS_PREFIX)
        if body is None or ctx.th_variables is None:
            return None
        return th_macro(name, seg_join(body), ctx)

    if name == "banned":
        if re.fullmatch(r'\s*".*"\s*', seg_join(rest), re.DOTALL):
            return ""
        return None

    return None


_SIMPLE: dict[str, Callable[[MacroContext], str]] = {
    "char": lambda c: c.char,
    "user": lambda c: c.user,
    "group": lambda c: c.char,
    "charifnotgroup": lambda c: c.char,
    "groupnotmuted": lambda c: c.char,
    "notchar": lambda c: c.user,
    "newline": lambda c: "\n",
    "noop": lambda c: "",
    "model": lambda c: c.model,
    "input": lambda c: c.input,
    "charversion": lambda c: c.char_version,
    "char_version": lambda c: c.char_version,
    "lastmessage": lambda c: c.last_message,
    "lastusermessage": lambda c: c.last_user_message,
    "lastcharmessage": lambda c: c.last_char_message,
    "lastmessageid": lambda c: "" if c.last_message_id is None else str(c.last_message_id),
}

# Card/persona fields: their values are macro-expanded in turn.
_FIELDS: dict[str, Callable[[MacroContext], str]] = {
    "description": lambda c: c.description,
    "personality": lambda c: c.personality,
    "scenario": lambda c: c.scenario,
    "persona": lambda c: c.persona,
    "mesexamples": lambda c: c.mes_examples,
    "mesexamplesraw": lambda c: c.mes_examples,
    "charprompt": lambda c: c.char_prompt,
    "charjailbreak": lambda c: c.char_instruction,
    "charinstruction": lambda c: c.char_instruction,
    # not SillyTavern names: Liyuan's former preset engine accepted them, so presets written for it keep working
    "chardescription": lambda c: c.description,
    "charpersonality": lambda c: c.personality,
}

_CLOCK_FORMATS = {
    "time": "LT",
    "date": "LL",
    "weekday": "dddd",
    "isotime": "HH:mm",
    "isodate": "YYYY-MM-DD",
}


def _now(ctx: MacroContext) -> datetime:
    return ctx.clock() if ctx.clock is not None else datetime.now()


def _seeded(key: str) -> _random.Random:
    return _random.Random(int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8], "big"))


_FRESH = _random.Random()


def _rng(run: _Run, position: int, kind: str) -> _random.Random:
    if run.ctx.rng is not None:
        return run.ctx.rng
    seed = run.ctx.rng_seed
    if seed is None:
        return _FRESH
    return _seeded(f"{kind}|{seed}|{run.ctx.chat_id}|{run.content_hash}|{position}")


_DICE = re.compile(r"(\d*)d(\d+)([+-]\d+)?", re.IGNORECASE)


def _roll(formula: str, rng: _random.Random) -> str:
    """droll semantics: ``XdY±Z`` (X defaults to 1), a bare number N means 1dN; invalid → ``''``."""
    formula = re.sub(r"\s+", "", formula)
    if formula.isdigit():
        formula = "1d" + formula
    m = _DICE.fullmatch(formula)
    if m is None:
        return ""
    count = int(m.group(1)) if m.group(1) else 1
    sides = int(m.group(2))
    if sides < 1 or count > MAX_DICE:
        return ""
    total = sum(rng.randint(1, sides) for _ in range(count))
    if m.group(3):
        total += int(m.group(3))
    return str(total)
