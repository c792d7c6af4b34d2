"""SillyTavern-style macros (``{{char}}``, ``{{user}}``, ``{{random::a::b}}`` …) for card text.

Reference: ../shared/design/cards.md §4 (SillyTavern's legacy engine ``evaluateMacros``/``substituteParams`` and
``replaceVariableMacros``; the 2025 "experimental" engine for nesting).

**How text is read.** A real parser, not a chain of regex substitutions: ``{{`` opens a macro, ``}}`` closes the
innermost open one, and macros nest with the inner one evaluated first (as SillyTavern's 2025 engine does), so
``{{random::{{user}}::{{char}}}}`` works and never leaves stray braces. In a run of three or more braces the two
nearest the name belong to the macro (``{{{char}}}`` → ``{Alice}``, as the legacy regexes matched). A ``}}`` with no
open macro and an ``{{`` that is never closed are plain text. **Unknown macros are kept exactly as written**
(braces, name, whitespace), e.g. TavernHelper's ``{{get_message_variable::stat_data.x}}`` reaches the layer that
understands it; known macros *inside* an unknown one are still expanded. Comments ``{{// … }}`` are dropped with
everything inside them, unevaluated (they may span lines and contain macros). The result of an inner macro is one
unit for its outer macro: a ``::`` or ``,`` that came from a value never splits the outer macro's arguments.

**Names** are case-insensitive; whitespace just inside the braces is ignored (``{{ char }}``).

**Supported macros** (SillyTavern's names and results):

* names: ``{{char}}``, ``{{user}}``, ``{{group}}``/``{{charIfNotGroup}}`` (= char, no group chats),
  ``{{notChar}}`` (= user); legacy tags ``<USER>``, ``<BOT>``, ``<CHAR>``, ``<CHARIFNOTGROUP>``, ``<GROUP>`` in any
  letter case (so ``<user>``/``<char>`` too).
* card and persona fields: ``{{description}}``, ``{{personality}}``, ``{{scenario}}``, ``{{persona}}`` (persona
  description), ``{{mesExamples}}``/``{{mesExamplesRaw}}``, ``{{charPrompt}}`` (card system prompt),
  ``{{charJailbreak}}``/``{{charInstruction}}`` (post-history instructions), ``{{charVersion}}``/``{{char_version}}``,
  ``{{model}}``, ``{{input}}``, ``{{original}}`` (only when ``ctx.original`` is set; the first occurrence expands,
  later ones are empty, as in SillyTavern). Field values are themselves macro-expanded (so ``{{char}}`` inside the
  description resolves, as SillyTavern's ordering achieves), up to :data:`MAX_FIELD_DEPTH` levels.
* chat: ``{{lastMessage}}``, ``{{lastUserMessage}}``, ``{{lastCharMessage}}``, ``{{lastMessageId}}``.
* randomness: ``{{random::a::b}}`` / ``{{random:a,b}}``, ``{{pick::a::b}}``, ``{{roll:d20}}`` / ``{{roll 2d6+1}}``
  / ``{{roll 20}}`` (bare number = 1dN; an invalid formula gives ``''``). List rule (SillyTavern): after the name
  come ``:`` or ``::``; if the list contains ``::`` it is split on ``::`` and items are kept as written, otherwise it
  is split on ``,`` with ``\\,`` for a literal comma and each item trimmed (so ``{{random::a,b}}`` is the comma
  form too).
* variables: ``{{getvar::x}}``, ``{{setvar::x::v}}`` (→ ``''``), ``{{addvar::x::n}}`` (→ ``''``),
  ``{{incvar::x}}``/``{{decvar::x}}`` (→ the new value), and the same with ``globalvar`` — backed by
  ``ctx.variables`` (chat-local) and ``ctx.global_variables`` (global), which are mutated **in place** (the dicts
  passed in are the ones written; persist them yourself). Values that look numeric come back as numbers
  (``"007"`` → ``7``), a missing variable is ``''``; ``addvar`` adds numbers, appends to a JSON array, otherwise
  concatenates strings (SillyTavern's ``addLocalVariable``).
* time (clock ``ctx.clock``, default the local time now; moment.js English formats): ``{{time}}`` (``3:07 PM``),
  ``{{date}}`` (``October 18, 2024``), ``{{weekday}}`` (``Friday``), ``{{isotime}}`` (``15:07``), ``{{isodate}}``
  (``2024-10-18``), ``{{datetimeformat YYYY-MM-DD HH:mm}}``, ``{{time_UTC+2}}``.
* text: ``{{newline}}``, ``{{trim}}`` (removes itself and the newlines around it — only newlines, as SillyTavern),
  ``{{noop}}``, ``{{// comment}}``, ``{{reverse:text}}``, ``{{banned "word"}}`` (→ ``''``; bans are a
  text-completion feature).

**Volatile macros** (:data:`VOLATILE_MACROS`): their value can differ between two evaluations of the same text in
the same chat — the clock macros, ``lastMessage``-family, ``input``, the variable macros (chat state and side
effects), and ``random``/``roll``. Text meant to stay byte-stable (the system prompt, for prefix caching) should
avoid them or pin them: ``ctx.clock`` can be frozen, and ``random``/``roll`` are **deterministic by default**:
with ``ctx.rng_seed`` an int (default ``0``) each occurrence is seeded by (seed, chat id, the text, its position),
so the same text in the same chat always rolls the same (a deliberate divergence from SillyTavern, whose
``{{random}}`` re-rolls on every evaluation; change the seed to re-roll, e.g. per swipe; ``rng_seed=None`` gives
SillyTavern's fresh rolls). ``{{pick}}`` is stable per chat exactly as SillyTavern's (seeded by chat id, text and
position, ignoring ``rng_seed``) and is not volatile.
"""

from __future__ import annotations

import hashlib
import json
import math
import random as _random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

__all__ = ["MacroContext", "apply_macros", "volatile_macros", "VOLATILE_MACROS", "MAX_FIELD_DEPTH",
           "format_moment"]

#: Lower-case names of the macros whose value can change between evaluations of the same text in one chat.
VOLATILE_MACROS: frozenset[str] = frozenset({
    "random", "roll",
    "time", "date", "weekday", "isotime", "isodate", "datetimeformat", "time_utc",
    "lastmessage", "lastusermessage", "lastcharmessage", "lastmessageid", "input",
    "getvar", "setvar", "addvar", "incvar", "decvar",
    "getglobalvar", "setglobalvar", "addglobalvar", "incglobalvar", "decglobalvar",
})

#: How deep card-field macros (``{{description}}`` …) are expanded inside each other before values go in verbatim.
MAX_FIELD_DEPTH = 4

#: Cap on the dice of one ``{{roll}}`` (a larger count is an invalid formula), so a card cannot stall the app.
MAX_DICE = 10_000


def _same_dict(value: Any) -> dict[str, Any]:
    """Keep the caller's dict object (so variable macros write into it); other mappings are copied."""
    if isinstance(value, dict):
        return value
    return dict(value or {})


class MacroContext(BaseModel):
    """Everything the macros expand to. Every field has a default, so ``MacroContext(char=…, user=…)`` works.

    Names: ``char`` (card name), ``user`` (persona name). Card fields: ``description``, ``personality``,
    ``scenario``, ``mes_examples``, ``char_prompt`` (card system prompt), ``char_instruction`` (post-history
    instructions), ``char_version``. ``persona``: the persona description. ``model``: model name. ``input``: the
    user's unsent input. ``original``: text for ``{{original}}`` (``None`` = the macro is unknown and kept).
    Chat: ``last_message``, ``last_user_message``, ``last_char_message``, ``last_message_id`` (``None`` → ``''``).
    ``variables`` (chat-local) / ``global_variables``: mutated in place by ``setvar``/``addvar``/``incvar``/``decvar``.
    ``chat_id``: seeds ``{{pick}}`` (and ``{{random}}``/``{{roll}}`` with ``rng_seed``). ``clock``: zero-argument
    callable returning the current ``datetime`` (naive = local time; default ``datetime.now``). ``rng_seed``: int →
    ``{{random}}``/``{{roll}}`` deterministic per chat, text and position; ``None`` → fresh randomness.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    char: str = ""
    user: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    persona: str = ""
    mes_examples: str = ""
    char_prompt: str = ""
    char_instruction: str = ""
    char_version: str = ""
    model: str = ""
    input: str = ""
    original: Optional[str] = None
    last_message: str = ""
    last_user_message: str = ""
    last_char_message: str = ""
    last_message_id: Optional[int] = None
    variables: Annotated[dict[str, Any], PlainValidator(_same_dict)] = Field(default_factory=dict)
    global_variables: Annotated[dict[str, Any], PlainValidator(_same_dict)] = Field(default_factory=dict)
    chat_id: str = ""
    clock: Optional[Callable[[], datetime]] = Field(default=None, exclude=True)
    rng_seed: Optional[int] = 0


def apply_macros(text: str, ctx: MacroContext, *, escape: Optional[Callable[[str], str]] = None) -> str:
    """Expand the macros in ``text`` with the values in ``ctx``; unknown macros are left exactly as written.

    ``escape`` (optional) is applied to every value a known macro puts into ``text`` at the top level (not to the
    surrounding text, not to values consumed by an outer macro) — SillyTavern's ``substituteParamsExtended`` post
    processor, used to escape macro values inside a regex pattern. Never raises on malformed input; variable
    macros mutate ``ctx.variables``/``ctx.global_variables``.
    """
    if not text:
        return text
    if "{{" not in text and "<" not in text:
        return text
    run = _Run(ctx=ctx, content=text, escape=escape, shared=_Shared())
    out = _expand(text, run, depth=0)
    if _TRIM_MARK in out:
        out = _TRIM_RE.sub("", out)
    return out


def volatile_macros(text: str) -> set[str]:
    """Lower-case names of the :data:`VOLATILE_MACROS` that occur in ``text`` (a quick scan, nothing evaluated).

    Use it to warn when text that must stay byte-stable (a system prompt) depends on the clock, chat state or
    fresh randomness.
    """
    found: set[str] = set()
    for m in _NAME_SCAN.finditer(text or ""):
        name = m.group(1).lower()
        if name.startswith("time_utc"):
            name = "time_utc"
        if name in VOLATILE_MACROS:
            found.add(name)
    return found


# ---------------------------------------------------------------------------------------------------------------
# parser

_TOKEN = re.compile(r"\{\{|\}\}")
_NAME = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)")
_NAME_SCAN = re.compile(r"\{\{\s*([A-Za-z][A-Za-z0-9_]*)")
_LEGACY_TAG = re.compile(r"<(USER|BOT|CHAR|CHARIFNOTGROUP|GROUP)>", re.IGNORECASE)
_TRIM_MARK = "\ufdd0trim\ufdd1"
_TRIM_RE = re.compile(r"(?:\r?\n)*" + re.escape(_TRIM_MARK) + r"(?:\r?\n)*")

# A body segment: (text, literal). Literal text came from the source; non-literal text is the value of an inner
# macro (or an unknown macro kept as written) and is never split by its outer macro.
Seg = tuple[str, bool]


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
        if "<" not in chunk:
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
# segment helpers

def _slice(segs: list[Seg], start: int) -> list[Seg]:
    """The segments from character offset ``start`` of their concatenation on."""
    out: list[Seg] = []
    offset = 0
    for text, literal in segs:
        end = offset + len(text)
        if end > start:
            out.append((text[max(0, start - offset):], literal))
        offset = end
    return [s for s in out if s[0]]


def _join(segs: list[Seg]) -> str:
    return "".join(t for t, _ in segs)


def _split(segs: list[Seg], sep: str) -> list[list[Seg]]:
    """Split on ``sep`` where it occurs inside literal segments only."""
    parts: list[list[Seg]] = [[]]
    for text, literal in segs:
        if not literal:
            parts[-1].append((text, False))
            continue
        pieces = text.split(sep)
        for idx, piece in enumerate(pieces):
            if idx:
                parts.append([])
            if piece:
                parts[-1].append((piece, True))
    return parts


def _has_literal(segs: list[Seg], needle: str) -> bool:
    return any(literal and needle in text for text, literal in segs)


def _strip_prefix(segs: list[Seg], pattern: re.Pattern[str]) -> Optional[list[Seg]]:
    """Remove a regex-matched prefix from the first (literal) segment; None when it does not match."""
    if not segs or not segs[0][1]:
        return None
    m = pattern.match(segs[0][0])
    if m is None:
        return None
    return _slice(segs, m.end())


def _list_items(segs: list[Seg]) -> list[str]:
    """SillyTavern's random/pick list: split on ``::`` if present, else on commas (``\\,`` escapes, trimmed)."""
    if _has_literal(segs, "::"):
        return [_join(p) for p in _split(segs, "::")]
    items: list[str] = [""]
    for text, literal in segs:
        if not literal:
            items[-1] += text
            continue
        for tok in re.split(r"(\\,|,)", text):
            if tok == ",":
                items.append("")
            elif tok == "\\,":
                items[-1] += ","
            else:
                items[-1] += tok
    return [item.strip() for item in items]


_LIST_PREFIX = re.compile(r"\s?::?")
_ARGS_PREFIX = re.compile(r"\s*::")
_ROLL_PREFIX = re.compile(r"\s*(?:::?|\s)\s*")
_REVERSE_PREFIX = re.compile(r"\s*::?")
_SPACE_PREFIX = re.compile(r"\s+")


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
    rest = _slice(segs, m.end())
    bare = not rest or (all(lit for _, lit in rest) and not _join(rest).strip())
    ctx = run.ctx

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
        body = _strip_prefix(rest, _LIST_PREFIX)
        if not body or not _join(body):
            return None
        items = _list_items(body)
        if not items:
            return ""
        if name == "pick":
            rng = _seeded(f"pick|{ctx.chat_id}|{run.content_hash}|{frame.start}")
        else:
            rng = _rng(run, frame.start, "random")
        return items[rng.randrange(len(items))]

    if name == "roll":
        body = _strip_prefix(rest, _ROLL_PREFIX)
        if not body:
            return None
        return _roll(_join(body), _rng(run, frame.start, "roll"))

    if name in _VAR_MACROS:
        body = _strip_prefix(rest, _ARGS_PREFIX)
        if body is None:
            return None
        args = [_join(p) for p in _split(body, "::")]
        return _variable_macro(name, args, ctx)

    if name == "reverse":
        body = _strip_prefix(rest, _REVERSE_PREFIX)
        if not body:
            return None
        return _join(body)[::-1]

    if name == "datetimeformat":
        body = _strip_prefix(rest, _SPACE_PREFIX)
        if not body:
            return None
        return format_moment(_now(ctx), _join(body).strip())

    if name == "time_utc":
        mo = re.fullmatch(r"\s*([+-]\d{1,2})\s*", _join(rest))
        if mo is None or not all(lit for _, lit in rest):
            return None
        offset = timezone(timedelta(hours=int(mo.group(1))))
        now = _now(ctx)
        if now.tzinfo is None:
            now = now.astimezone()
        return format_moment(now.astimezone(offset), "LT")

    if name == "banned":
        if re.fullmatch(r'\s*".*"\s*', _join(rest), re.DOTALL):
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


# ---------------------------------------------------------------------------------------------------------------
# variables (SillyTavern public/scripts/variables.js semantics)

_VAR_MACROS = {
    "getvar", "setvar", "addvar", "incvar", "decvar",
    "getglobalvar", "setglobalvar", "addglobalvar", "incglobalvar", "decglobalvar",
}

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


def _js_str(value: Any) -> str:
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
        text = (_js_str(current) if current else "") + _js_str(value)
        store[name] = text
        return text
    total = _js_number(current) + increment
    if math.isnan(total):
        return ""
    store[name] = _num_value(total) if not math.isinf(total) else total
    return store[name]


def _variable_macro(name: str, args: list[str], ctx: MacroContext) -> Optional[str]:
    store = ctx.global_variables if "global" in name else ctx.variables
    verb = name[:3]
    if verb in ("get", "inc", "dec"):
        var = "::".join(args).strip()
        if not var:
            return None
        if verb == "get":
            return _js_str(_get_var(store, var))
        return _js_str(_add_var(store, var, 1 if verb == "inc" else -1))
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


# ---------------------------------------------------------------------------------------------------------------
# moment.js-style date formatting (English locale)

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_LONG_FORMATS = {
    "LTS": "h:mm:ss A",
    "LT": "h:mm A",
    "LLLL": "dddd, MMMM D, YYYY h:mm A",
    "LLL": "MMMM D, YYYY h:mm A",
    "LL": "MMMM D, YYYY",
    "L": "MM/DD/YYYY",
}
_MOMENT_TOKEN = re.compile(
    r"\[[^\]]*\]|LTS|LT|LLLL|LLL|LL|L|YYYY|YY|MMMM|MMM|MM|M|Do|DD|D|dddd|ddd|dd|d|HH|H|hh|h|mm|m|ss|s|A|a|ZZ|Z|X|x"
)


def _ordinal(n: int) -> str:
    if 11 <= n % 100 <= 13:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def _offset(dt: datetime, colon: bool) -> str:
    if dt.tzinfo is None:
        dt = dt.astimezone()
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}{':' if colon else ''}{minutes % 60:02d}"


def format_moment(dt: datetime, fmt: str) -> str:
    """Format ``dt`` with moment.js tokens in the English locale (``LT``, ``LL``, ``YYYY-MM-DD``, ``[literal]`` …).

    Supported: ``LTS LT LLLL LLL LL L YYYY YY MMMM MMM MM M Do DD D dddd ddd dd d HH H hh h mm m ss s A a ZZ Z X x``;
    any other character is copied.
    """
    def token(m: re.Match[str]) -> str:
        t = m.group(0)
        if t.startswith("["):
            return t[1:-1]
        if t in _LONG_FORMATS:
            return format_moment(dt, _LONG_FORMATS[t])
        hour12 = dt.hour % 12 or 12
        weekday = (dt.weekday() + 1) % 7  # moment: 0 = Sunday
        table = {
            "YYYY": f"{dt.year:04d}", "YY": f"{dt.year % 100:02d}",
            "MMMM": _MONTHS[dt.month - 1], "MMM": _MONTHS[dt.month - 1][:3],
            "MM": f"{dt.month:02d}", "M": str(dt.month),
            "Do": _ordinal(dt.day), "DD": f"{dt.day:02d}", "D": str(dt.day),
            "dddd": _DAYS[weekday], "ddd": _DAYS[weekday][:3], "dd": _DAYS[weekday][:2], "d": str(weekday),
            "HH": f"{dt.hour:02d}", "H": str(dt.hour), "hh": f"{hour12:02d}", "h": str(hour12),
            "mm": f"{dt.minute:02d}", "m": str(dt.minute), "ss": f"{dt.second:02d}", "s": str(dt.second),
            "A": "AM" if dt.hour < 12 else "PM", "a": "am" if dt.hour < 12 else "pm",
        }
        if t in table:
            return table[t]
        if t in ("Z", "ZZ"):
            return _offset(dt, colon=(t == "Z"))
        stamp = (dt if dt.tzinfo is not None else dt.astimezone()).timestamp()
        return str(int(stamp)) if t == "X" else str(int(stamp * 1000))

    return _MOMENT_TOKEN.sub(token, fmt)
