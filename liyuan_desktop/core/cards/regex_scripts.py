"""SillyTavern regex scripts (``data.extensions.regex_scripts``) run with JavaScript regex semantics.

Reference: ../shared/design/cards.md §3 (SillyTavern ``public/scripts/extensions/regex/engine.js`` and
``utils.js regexFromString``, 2024 and 2025 code).

**Engine.** Patterns are JavaScript regexes (lookbehind, named groups, ``s``/``u``/``y`` flags, ``[\\s\\S]``,
Annex-B leniency …), so they run in an embedded JavaScript engine, QuickJS-ng (PyPI ``quickjs-ng``, ``import
quickjs``; :mod:`.regex_engine`), never translated to Python ``re``. One engine per thread (a QuickJS context is not
thread-safe), each with a memory limit; compiled ``RegExp`` objects are cached inside it (LRU,
:data:`.regex_engine.REGEX_CACHE_SIZE` entries, keyed by pattern and flags). Every script run has a time limit
(``time_limit`` seconds, measured by QuickJS as process CPU time, so another busy thread makes it fire sooner): a catastrophic pattern such as ``/(a+)+$/`` is interrupted, the
script is **skipped with a warning** (logged, and appended to ``issues`` when given) and the text goes on to the next
script unchanged; the same script on the same text is then skipped at once, without running again.

**findRegex** is parsed like SillyTavern's ``regexFromString``: ``/pattern/flags`` (the last ``/`` ends the
pattern, so unescaped ``/`` inside is fine), or a bare pattern (then no flags: case-sensitive, first match only).
Flags must be distinct letters from ``gmixXsuUAJ``, otherwise the whole string is the pattern; a pattern JavaScript
rejects (including the flags ``x X U A J``) skips the script with a warning.

**Replacement** (SillyTavern's ``runRegexScript``): every match is replaced by ``replaceString`` where
``{{match}}`` and ``$0`` are the whole match, ``$1``…``$n`` capture groups, ``$<name>`` named groups; a missing or
empty group inserts ``''`` (so does ``$n`` beyond the last group — SillyTavern would insert its replace-callback's
offset/input arguments there). Each ``trimStrings`` entry (macro-expanded) is removed from every inserted match or
group, not from the rest of the text. Then macros are expanded over the result of that match's replacement —
captured text included — with ``macros_ctx`` (:func:`liyuan_desktop.core.macros.apply_macros`). ``$&`` is also the
whole match here (an extension: SillyTavern leaves ``$&`` literal); ``$$``, `` $` `` and ``$'`` are kept literally.

**substituteRegex**: 0 none; 1 raw — macros are expanded in ``findRegex`` before it is parsed; 2 escaped — the same
but every macro value is escaped for a regex (SillyTavern's ``sanitizeRegexMacro``: ``. ^ $ * + ? { } [ ] \\ / | (
)`` get a backslash, control characters become ``\\n`` ``\\r`` ``\\t`` ``\\v`` ``\\f`` ``\\0``). Any other value runs
the pattern as written, as SillyTavern does. 2024 exports store a bool (true = 1).

**When a script runs — what is stored vs shown vs sent.** SillyTavern has three kinds of script:

* ``markdownOnly`` ("alter chat display"): applied when the message is rendered; the stored text is unchanged.
* ``promptOnly`` ("alter outgoing prompt"): applied when the prompt is built (chat history and world info).
* neither flag: SillyTavern applies it **once, to the stored text**, when a message is received, sent or edited
  (and to the greeting), rewriting the chat file; display and prompt then see the rewritten text.
* both flags: applied at display and at prompt time, never to the stored text.

Our rule: **stored text is never rewritten.** A "neither" script's effect is reproduced every time the text is
looked at: :func:`apply_scripts` first runs the "neither" scripts (in list order — standing for SillyTavern's
stored rewrite), then, on the result, the view scripts for the call (``is_markdown`` → ``markdownOnly`` scripts;
``is_prompt`` → ``promptOnly`` scripts; both flags set → in both views), again in list order. A call with
neither ``is_markdown`` nor ``is_prompt`` runs only the "neither" scripts (what SillyTavern would have stored). So the
display shows exactly what SillyTavern would show and the model sees what SillyTavern would send, while the raw model
output stays in the chat file. Differences from SillyTavern that follow: "neither" scripts also run on world-info
text at prompt time (SillyTavern 2024 did this; 2025 does not), and they honour the depth window (below), where
SillyTavern's ingest path has no depth and skips the window.

**placement**: the script runs only on text of a listed kind: 1 user input, 2 AI output, 3 slash command /
narrator message, 5 world info, 6 reasoning. Legacy values are migrated as SillyTavern does on load: 0 (markdown
display) → the other placements (or, next to others, dropped) and both ``markdownOnly`` and ``promptOnly`` set;
4 (sendAs) → 3.

**Depth** (``minDepth``/``maxDepth``): ``depth`` is the message's distance from the newest one (0 = newest;
-1 = the message being continued, which only ``minDepth = -1`` admits). A script is skipped when
``depth < minDepth`` (for ``minDepth >= -1``) or ``depth > maxDepth`` (for ``maxDepth >= 0``); null means no bound.
Depth is required for chat text — SillyTavern skipped the window when the depth was unknown (its issue #4559); we
never do. Only world-info text may pass ``depth=None`` (an entry not inserted at a depth): the window does not apply.

**runOnEdit**: ``is_edit=True`` is SillyTavern's edit path: scripts without ``runOnEdit`` are skipped. As stored
text is never rewritten here, callers normally leave it False.

**Order and permission.** Scripts run in the order given; SillyTavern's order is global scripts, then the
character's (then, 2025, the preset's). A card's scripts must run only after the user allowed them (SillyTavern asks
once per card and remembers it in ``character_allowed_regex``): that flag is the caller's business — pass a card's
scripts to :func:`apply_scripts` only when allowed. ``disabled`` scripts never run.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict
from enum import IntEnum
from typing import Any, Iterable, Optional

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ..macros import MacroContext, apply_macros
from .regex_engine import (
    ScriptFailed,
    ScriptTimeout,
    drop_thread_engine,
    engine_error,
    pair_surrogates,
    thread_engine,
)

__all__ = [
    "Placement", "SubstituteRegex", "RegexScript", "apply_scripts", "run_script", "scripts_from_card",
    "parse_find_regex", "escape_regex_macro", "DEFAULT_TIME_LIMIT",
]

log = logging.getLogger(__name__)

#: Seconds of (process CPU) time one script may take on one text before it is interrupted and skipped.
DEFAULT_TIME_LIMIT = 0.5


class Placement(IntEnum):
    """Kinds of text a script applies to (SillyTavern ``regex_placement``)."""

    MD_DISPLAY = 0  # deprecated; migrated on load
    USER_INPUT = 1
    AI_OUTPUT = 2
    SLASH_COMMAND = 3  # also narrator messages
    SEND_AS = 4  # legacy; migrated to SLASH_COMMAND
    WORLD_INFO = 5
    REASONING = 6


_ACTIVE_PLACEMENTS = [Placement.USER_INPUT, Placement.AI_OUTPUT, Placement.SLASH_COMMAND, Placement.WORLD_INFO,
                      Placement.REASONING]


class SubstituteRegex(IntEnum):
    """How macros are expanded inside ``findRegex`` (SillyTavern ``substitute_find_regex``)."""

    NONE = 0
    RAW = 1
    ESCAPED = 2


def _to_depth(value: Any) -> Optional[int]:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value != value:  # NaN
            return None
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value.strip()))
        except ValueError:
            return None
    return None


class RegexScript(BaseModel):
    """One SillyTavern regex script, field names as in the card JSON. Unknown fields are kept (``model_extra``) and
    written back by ``model_dump()``.

    ``findRegex``: ``/pattern/flags`` or a bare pattern. ``replaceString``: replacement (``$1``, ``$<name>``,
    ``{{match}}``, macros). ``trimStrings``: strings removed from inserted matches. ``placement``: list of
    :class:`Placement` values. ``markdownOnly``/``promptOnly``: see the module doc. ``runOnEdit``: also on the edit
    path. ``substituteRegex``: :class:`SubstituteRegex` (bools from 2024 exports become 0/1). ``minDepth``/
    ``maxDepth``: depth window, ``None`` = unbounded (blank strings and NaN also mean unbounded). Lenient: ``None``
    for a string field becomes ``''``, non-lists become empty lists.
    """

    model_config = ConfigDict(extra="allow")

    id: str = ""
    scriptName: str = ""
    findRegex: str = ""
    replaceString: str = ""
    trimStrings: list[str] = []
    placement: list[int] = []
    disabled: bool = False
    markdownOnly: bool = False
    promptOnly: bool = False
    runOnEdit: bool = False
    substituteRegex: int = 0
    minDepth: Optional[int] = None
    maxDepth: Optional[int] = None

    @field_validator("id", "scriptName", "findRegex", "replaceString", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return "" if v is None else str(v)

    @field_validator("trimStrings", mode="before")
    @classmethod
    def _trims(cls, v: Any) -> list[str]:
        if not isinstance(v, (list, tuple)):
            return []
        return [str(x) for x in v if x is not None]

    @field_validator("placement", mode="before")
    @classmethod
    def _placement(cls, v: Any) -> list[int]:
        if not isinstance(v, (list, tuple)):
            return []
        out = []
        for x in v:
            try:
                out.append(int(x))
            except (TypeError, ValueError):
                continue
        return out

    @field_validator("disabled", "markdownOnly", "promptOnly", "runOnEdit", mode="before")
    @classmethod
    def _flag(cls, v: Any) -> bool:
        return bool(v)

    @field_validator("substituteRegex", mode="before")
    @classmethod
    def _substitute(cls, v: Any) -> int:
        if isinstance(v, bool) or v is None:
            return int(bool(v))
        try:
            return int(v)
        except (TypeError, ValueError):
            return 0

    @field_validator("minDepth", "maxDepth", mode="before")
    @classmethod
    def _depth(cls, v: Any) -> Optional[int]:
        return _to_depth(v)

    @model_validator(mode="after")
    def _migrate(self) -> "RegexScript":
        """SillyTavern's load-time migration of placement 0 (markdown display) and 4 (sendAs)."""
        if Placement.MD_DISPLAY in self.placement:
            others = [p for p in self.placement if p != Placement.MD_DISPLAY]
            self.placement = others if others else [int(p) for p in _ACTIVE_PLACEMENTS]
            self.markdownOnly = True
            self.promptOnly = True
        if Placement.SEND_AS in self.placement:
            others = [p for p in self.placement if p != Placement.SEND_AS]
            self.placement = others if others else [int(Placement.SLASH_COMMAND)]
        return self

    @property
    def label(self) -> str:
        """Name for messages: ``scriptName`` or ``id``."""
        return self.scriptName or self.id or "(unnamed)"


def scripts_from_card(card_raw: dict[str, Any]) -> list[RegexScript]:
    """The regex scripts of a card: ``data.extensions.regex_scripts`` of a V2/V3 card dict (the parsed JSON), or a
    root ``extensions.regex_scripts`` when the card has no ``data`` (V1-style). Entries that are not objects are
    skipped with a warning. The caller runs them only after the user allowed this card's scripts."""
    if not isinstance(card_raw, dict):
        return []
    data = card_raw.get("data")
    holder = data if isinstance(data, dict) else card_raw
    ext = holder.get("extensions")
    raw = ext.get("regex_scripts") if isinstance(ext, dict) else None
    if not isinstance(raw, list):
        return []
    out: list[RegexScript] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            log.warning("regex script #%d of the card is not an object; skipped", i)
            continue
        try:
            out.append(RegexScript.model_validate(item))
        except ValidationError as exc:  # pragma: no cover - the validators are lenient
            log.warning("regex script #%d of the card is invalid (%s); skipped", i, exc)
    return out


# ---------------------------------------------------------------------------------------------------------------
# findRegex parsing

_FIND = re.compile(r"(/?)([^\n\r\u2028\u2029]+)\1([a-zA-Z]*)")
_FLAG_SET = set("gmixXsuUAJ")


def parse_find_regex(find: str) -> Optional[tuple[str, str]]:
    """``(pattern, flags)`` for a ``findRegex`` string, by SillyTavern's ``regexFromString`` rules; None for an
    empty string. Whether JavaScript accepts the pattern is checked when the script runs."""
    if not find:
        return None
    m = _FIND.search(find)
    if m is None:
        return None
    flags = m.group(3)
    if flags and not (set(flags) <= _FLAG_SET and len(set(flags)) == len(flags)):
        return find, ""
    return m.group(2), flags


_REGEX_SPECIAL = re.compile(r"[\n\r\t\v\f\0.^$*+?{}\[\]\\/|()]")
_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\f": "\\f", "\0": "\\0"}


def escape_regex_macro(value: str) -> str:
    """Escape a macro value for use inside a regex (SillyTavern ``sanitizeRegexMacro``, substituteRegex = 2)."""
    return _REGEX_SPECIAL.sub(lambda m: _CONTROL_ESCAPES.get(m.group(0), "\\" + m.group(0)), value)


# Scripts that timed out on a given text: (pattern, flags, text digest) → True; skipped without running again.
_timeouts: "OrderedDict[tuple[str, str, str], bool]" = OrderedDict()
_timeouts_lock = threading.Lock()
_TIMEOUT_MEMORY = 256
_META = set("\\^$.|?*+()[]{}")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _warn(script: RegexScript, message: str, issues: Optional[list[str]]) -> None:
    text = f"regex script {script.label!r}: {message}"
    log.warning(text)
    if issues is not None:
        issues.append(text)


def run_script(script: RegexScript, text: str, *, macros_ctx: MacroContext,
               time_limit: float = DEFAULT_TIME_LIMIT, issues: Optional[list[str]] = None) -> str:
    """Run one script on ``text`` regardless of placement, flags and depth (SillyTavern ``runRegexScript``).

    Returns the new text; ``text`` unchanged when the script is disabled, has no findRegex, its regex is invalid,
    or it timed out / failed (then a warning is logged and appended to ``issues``). Never raises for a bad script.
    """
    if script.disabled or not script.findRegex or not text:
        return text
    find = script.findRegex
    if script.substituteRegex == SubstituteRegex.RAW:
        find = apply_macros(find, macros_ctx)
    elif script.substituteRegex == SubstituteRegex.ESCAPED:
        find = apply_macros(find, macros_ctx, escape=escape_regex_macro)
    parsed = parse_find_regex(find)
    if parsed is None:
        return text
    pattern, flags = parsed
    # A literal pattern that cannot occur needs no trip into the engine.
    if "i" not in flags and not (_META & set(pattern)) and pattern not in text:
        return text
    text = pair_surrogates(text)
    key = (pattern, flags, _digest(text))
    with _timeouts_lock:
        if key in _timeouts:
            _timeouts.move_to_end(key)
            known_slow = True
        else:
            known_slow = False
    if known_slow:
        _warn(script, "skipped: it ran past the time limit on this text before", issues)
        return text
    eng = thread_engine()
    if eng is None:
        unavailable = engine_error()
        if issues is not None and unavailable:
            issues.append(unavailable)
        return text
    template = re.sub(r"\{\{match\}\}", lambda _: "$0", script.replaceString, flags=re.IGNORECASE)
    trims = [apply_macros(t, macros_ctx) for t in script.trimStrings]
    try:
        result = eng.run(pattern, flags, text, template, trims, time_limit)
    except ScriptTimeout:
        drop_thread_engine()
        with _timeouts_lock:
            _timeouts[key] = True
            while len(_timeouts) > _TIMEOUT_MEMORY:
                _timeouts.popitem(last=False)
        _warn(script, f"skipped: ran longer than the time limit ({time_limit:g} s)", issues)
        return text
    except ScriptFailed as exc:
        if not str(exc).startswith("invalid regex"):
            drop_thread_engine()
        _warn(script, f"skipped: {exc}", issues)
        return text
    if result is None:
        return text
    pieces, reps = result
    out = [pieces[0]]
    for rep, piece in zip(reps, pieces[1:]):
        out.append(apply_macros(rep, macros_ctx) if rep else rep)
        out.append(piece)
    return pair_surrogates("".join(out))


def _in_window(script: RegexScript, depth: Optional[int]) -> bool:
    if depth is None:
        return True
    if script.minDepth is not None and script.minDepth >= -1 and depth < script.minDepth:
        return False
    if script.maxDepth is not None and script.maxDepth >= 0 and depth > script.maxDepth:
        return False
    return True


def apply_scripts(text: str, scripts: Iterable[RegexScript], *, placement: int, is_markdown: bool = False,
                  is_prompt: bool = False, depth: Optional[int], macros_ctx: MacroContext, is_edit: bool = False,
                  time_limit: float = DEFAULT_TIME_LIMIT, issues: Optional[list[str]] = None) -> str:
    """The text as SillyTavern would show (``is_markdown``) or send (``is_prompt``) it, from the raw stored text.

    ``text``: raw stored text (never rewritten; the caller keeps it). ``scripts``: in run order (global, then the
    card's if the user allowed them). ``placement``: a :class:`Placement` (1 user, 2 AI, 3 slash/narrator, 5 world
    info, 6 reasoning). ``is_markdown``: building the display; ``is_prompt``: building the prompt; neither: what
    SillyTavern would have stored. ``depth``: the message's depth, 0 = newest, -1 = being continued; **required**
    (keyword, no default); ``None`` only for world-info text not inserted at a depth. ``macros_ctx``: for macros in
    replacements, trim strings and substituted patterns (variable macros may mutate its variables). ``is_edit``:
    SillyTavern's edit path (skips scripts without ``runOnEdit``). ``time_limit``: seconds per script.
    ``issues``: if given, warnings (timeouts, invalid patterns) are appended. Two passes (see the module doc):
    the scripts with neither flag, then the ``markdownOnly``/``promptOnly`` scripts of this view.

    Raises ValueError for a missing depth on chat text or an unknown placement.
    """
    try:
        placement = Placement(int(placement))
    except ValueError:
        raise ValueError(f"unknown regex placement {placement!r}") from None
    if depth is None and placement != Placement.WORLD_INFO:
        raise ValueError("depth is required for chat text (0 = newest message); None only for world info")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)):
        raise ValueError(f"depth must be an int, got {depth!r}")
    if not text:
        return text
    usable = [s for s in scripts
              if not s.disabled and s.findRegex and placement in s.placement and _in_window(s, depth)
              and not (is_edit and not s.runOnEdit)]
    if not usable:
        return text
    stored = [s for s in usable if not s.markdownOnly and not s.promptOnly]
    view = [s for s in usable if (s.markdownOnly and is_markdown) or (s.promptOnly and is_prompt)]
    for script in stored + view:
        text = run_script(script, text, macros_ctx=macros_ctx, time_limit=time_limit, issues=issues)
    return text
