"""World info / lorebook (世界书): the entry model, SillyTavern activation, import/export, and the lorebook tools.

Semantics follow SillyTavern's ``checkWorldInfo`` (``public/scripts/world-info.js``) as written down in
../shared/design/cards.md §2; where that page is silent the SillyTavern code decides. Summary, with the places where
Liyuan deliberately differs marked **(Liyuan)**:

* **Shapes.** A card's ``character_book`` (V2/V3 spec, SillyTavern extras in ``entry.extensions`` in snake_case,
  except ``useProbability`` and ``selectiveLogic`` which stay camelCase) and a SillyTavern World Info file
  (``{"entries": {"<uid>": {...camelCase...}}}``) load into the same :class:`LoreEntry`; the mapping and the
  defaults are ST's ``convertCharacterBook`` / ``convertWorldInfoToCharacterBook`` (see ``_EXT_FIELDS``).
  :meth:`Lorebook.to_card_book` / :meth:`Lorebook.to_world_info` start from the JSON that was read and write back only
  the fields that changed, so an unedited book round-trips to an equal object; converting between the shapes
  writes ST's full field set.
* **Scan buffer.** The newest ``scan_depth`` messages (entry ``scanDepth`` overrides the book's), each
  ``"Name: text"`` trimmed, newest first, each prefixed ``\\x01`` and joined by ``\\n\\x01``; then the opt-in card
  fields, extra injected prompts, and in recursion steps the content of entries activated earlier. A depth of 0
  gives an empty buffer (the ST code returns ``''`` — cards.md's "only recursion text" is not what the code does).
* **Skips, in order:** already active or failed its roll this run; disabled; character filter (names only);
  ``delay`` (chat shorter than ``delay`` messages); cooldown unless sticky; ``delayUntilRecursion`` outside a
  recursion step or above the current level unless sticky; ``excludeRecursion`` in a recursion step unless sticky;
  ``@@dont_activate``. Immediate: ``@@activate``, ``constant``, active sticky. No primary keys → never.
* **Keys.** Macro-substituted (if a ``substitute`` function is given) and trimmed. ``/pattern/flags`` keys (ST's
  ``parseRegexFromString``: flags ``gimsuy``, no unescaped ``/`` inside) are JavaScript regexes: translated to
  Python ``re`` once per key (:func:`translate_js_regex` lists what is covered); the few constructs it does not cover
  (``\\p{…}``, variable-width lookbehind, ``(?i:…)``) run in QuickJS (JavaScript's own ``RegExp``, time-limited) and
  are refused — never match, named in :attr:`Lorebook.warnings` — only if QuickJS cannot be loaded; a pattern
  that is not valid JavaScript makes the key plain text, as in ST. Case and whole-word settings do not apply to them.
  Plain keys: lower-cased unless case-sensitive (entry value, else book default); with whole words, keys
  containing whitespace match as substrings (ST), single words need a word boundary **only on a side where
  the key itself starts/ends with an ASCII word character** **(Liyuan)** — ST's ``(?:^|\\W)key(?:$|\\W)`` also
  demands a boundary next to CJK or punctuation, so ``手机`` never fires in ``用iPhone手机`` and ``理`` not in
  ``ri理``; here both fire, while ``king`` still does not fire in ``liking`` and does in ``the king.``. Primary:
  any key. Secondary (only if ``selective`` and non-empty): AND_ANY 0 / NOT_ALL 1 / NOT_ANY 2 / AND_ALL 3.
* **Per step:** candidates sticky first, then processing order; inclusion groups (sticky members win, cooldown
  members dropped, optional scoring, a group that already won in an earlier step drops its new members,
  ``groupOverride`` → highest order, else weighted roll by ``groupWeight``); then probability
  (``rng()*100 <= probability``; a failure holds for the whole run) and the token budget (sticky/constant are not
  exempt; ``ignoreBudget`` is; the entry whose content reaches the budget (``>=``) is dropped, and so is every
  later one of the step — except ``ignoreBudget`` entries — and recursion stops; as in ST's code the count is this
  step's contents plus the contents earlier steps put into the recursion buffer).
* **Recursion** (book ``recursive``, default on as in new ST installs; a card book's ``recursive_scanning`` sets it
  **(Liyuan: ST ignores the book-level flag)**): the new entries' content (not ``preventRecursion`` ones) is added to
  the buffer and the scan repeats; pending ``delayUntilRecursion`` levels run afterwards in ascending order (ST
  opens them even with recursion off); ``max_recursion_steps`` / ``min_activations`` as in ST. An entry activated
  earlier is never removed.
* **Processing order** (ST ``getSortedEntries``): chat lore, persona lore, then card/global by ``strategy``
  (1 = character first, default), each sorted by ``order`` descending; ties: books in merge order, then uid (the
  order JavaScript iterates a WI file's ``entries``).
* **Timed effects** (:class:`TimedEffects`, counted in chat messages): a newly activated entry with ``sticky`` /
  ``cooldown`` gets ``end = chat_length + n``; sticky keeps it active while ``chat_length < end``; when sticky
  ends its cooldown starts (protected); an effect is dropped when the chat did not advance past its start
  (regenerate/swipe) or the entry changed (hash of the entry).
* **Placement:** :attr:`ActivationResult.entries` is the insertion order — ``order`` ascending (higher order ends
  nearer the end of the prompt), ties in reverse activation order, as ST's ``unshift``; :meth:`positions` and
  :meth:`depth_groups` split it as ST does.

Known differences besides the (Liyuan) ones: an entry in several inclusion groups that loses twice does not make ST's
``splice(-1)`` remove an unrelated entry; character filters by tag are ignored (names are checked against
``character``); the token count is approximate (:func:`approx_tokens`); probability ``null`` reads as 100; a
translated regex key sees Python code points where JavaScript without ``u`` sees UTF-16 units (``/^.$/`` matches an
emoji here) and folds ``ſ``/``K`` to s/k under ``i``.

In Liyuan the injection lists only the titles hit this beat (【相关设定】) and the index of all non-constant titles
(【设定集索引】); the model pulls the text it needs with ``lorebook_search`` (seed 000/002 runs).
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import json
import math
import random as _random
import re
import threading
from functools import lru_cache
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

# ---------------------------------------------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------------------------------------------

#: Entry positions in SillyTavern's numbering (index = the number in a WI file / ``extensions.position``).
POSITIONS = ("before_char", "after_char", "an_top", "an_bottom", "at_depth", "em_top", "em_bottom", "outlet")
#: ``role`` of an @depth entry.
ROLES = ("system", "user", "assistant")
#: ``selectiveLogic`` values.
AND_ANY, NOT_ALL, NOT_ANY, AND_ALL = 0, 1, 2, 3
LOGIC_NAMES = {AND_ANY: "AND_ANY", NOT_ALL: "NOT_ALL", NOT_ANY: "NOT_ANY", AND_ALL: "AND_ALL"}
#: Where a book is attached; the first four ranks are ST's source order (chat lore first).
SOURCES = ("chat", "persona", "card", "global")
MAX_SCAN_DEPTH = 1000  # ST's MAX_SCAN_DEPTH
DEFAULT_DEPTH = 4
DEFAULT_WEIGHT = 100

_INITIAL, _RECURSION, _MIN_ACTIVATIONS = 1, 2, 3
_SCAN_NAMES = {_INITIAL: "initial", _RECURSION: "recursion", _MIN_ACTIVATIONS: "min_activations"}
_MATCHER = "\x01"
_JOINER = "\n\x01"
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
#: The six card fields an entry may opt in to scanning (ST 2025 ``match*`` flags) → ``global_scan`` keys.
GLOBAL_SCAN_FIELDS = ("persona_description", "character_description", "character_personality",
                      "character_depth_prompt", "scenario", "creator_notes")

# Bumped on every attribute assignment of a LoreEntry/Lorebook, so compiled matchers know when to rebuild.
_EDITS = [0]


# ---------------------------------------------------------------------------------------------------------------
# small value helpers (JavaScript-ish readings of loosely typed JSON)
# ---------------------------------------------------------------------------------------------------------------

def _truthy(v: Any) -> bool:
    """JavaScript truthiness (``"false"`` is true, ``0``/``""``/``null`` false)."""
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def _int(v: Any, default: int) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return int(v)
    if isinstance(v, str):
        try:
            return int(float(v.strip()))
        except ValueError:
            return default
    return default


def _opt_int(v: Any) -> Optional[int]:
    if v is None or v == "":
        return None
    r = _int(v, -(10**18))
    return None if r == -(10**18) else r


def _opt_bool(v: Any) -> Optional[bool]:
    return None if v is None else _truthy(v)


def _str_list(v: Any) -> list[str]:
    """Keys as a list of strings; a comma-separated string is split (some tools write that); empty strings dropped
    (ST never matches an empty key)."""
    if v is None:
        return []
    if isinstance(v, str):
        v = v.split(",")
    if not isinstance(v, (list, tuple)):
        return []
    return [str(k) for k in v if k is not None and str(k)]


def _position_name(n: Any) -> str:
    i = _int(n, 1)
    return POSITIONS[i] if 0 <= i < len(POSITIONS) else f"position_{i}"


def _position_number(name: str) -> int:
    if name in POSITIONS:
        return POSITIONS.index(name)
    if name.startswith("position_"):
        return _int(name[9:], 1)
    return 1


def _dur(v: Any) -> int:
    """``delayUntilRecursion``: ``true`` ≙ level 1, a number is the level, falsy = off."""
    if v is True:
        return 1
    if not _truthy(v):
        return 0
    return max(0, _int(v, 1))


def _dur_out(level: int) -> Union[bool, int]:
    return False if level <= 0 else (True if level == 1 else level)


# ---------------------------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------------------------

class LoreEntry(BaseModel):
    """One world-info entry.

    ``title`` is SillyTavern's ``comment`` (a card entry's ``name`` as fallback). ``order`` is the insertion order
    (higher = later / closer to the end of the prompt). ``position`` is one of :data:`POSITIONS`; ``depth``/``role``
    (0 system, 1 user, 2 assistant) apply to ``at_depth``. ``case_sensitive`` / ``match_whole_words`` /
    ``use_group_scoring`` / ``scan_depth``: ``None`` = the book's setting. ``delay_until_recursion``: 0 off, else
    the recursion level (``true`` in JSON ≙ 1). ``sticky`` / ``cooldown`` / ``delay`` count chat messages, 0 = none.
    ``extensions`` is the entry's own ``extensions`` object as read (unknown keys kept). ``book`` / ``source``
    say where the entry came from (book name; "card" | "chat" | "persona" | "global" | "").

    Mutating a list in place (``entry.keys.append``) is not noticed by the matcher cache — assign a new list or call
    :meth:`Lorebook.invalidate`.
    """

    model_config = ConfigDict(extra="allow")

    uid: int = 0
    title: str = ""
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    selective_logic: int = 0
    content: str = ""
    constant: bool = False
    enabled: bool = True
    order: int = 100
    position: str = "before_char"
    case_sensitive: Optional[bool] = None
    match_whole_words: Optional[bool] = None
    probability: int = 100
    use_probability: bool = True
    group: str = ""
    sticky: int = 0
    cooldown: int = 0
    delay: int = 0
    extensions: dict[str, Any] = Field(default_factory=dict)
    # -- SillyTavern fields added with the full activation --
    selective: bool = True
    depth: int = DEFAULT_DEPTH
    role: int = 0
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: int = 0
    scan_depth: Optional[int] = None
    group_override: bool = False
    group_weight: int = DEFAULT_WEIGHT
    use_group_scoring: Optional[bool] = None
    automation_id: str = ""
    vectorized: bool = False
    display_index: Optional[int] = None
    ignore_budget: bool = False
    triggers: list[str] = Field(default_factory=list)
    outlet_name: str = ""
    character_filter: Optional[dict[str, Any]] = None
    match_persona_description: bool = False
    match_character_description: bool = False
    match_character_personality: bool = False
    match_character_depth_prompt: bool = False
    match_scenario: bool = False
    match_creator_notes: bool = False
    book: str = ""
    source: str = ""

    _raw: Optional[dict[str, Any]] = PrivateAttr(default=None)
    _kind: Optional[str] = PrivateAttr(default=None)  # "card" | "wi": the shape _raw has
    _parsed: Optional[dict[str, Any]] = PrivateAttr(default=None)  # field values as read from _raw

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        _EDITS[0] += 1

    @property
    def display_title(self) -> str:
        """Title shown in injections and tool results: the comment/name, else the first key, else ``#uid``."""
        return self.title or (self.keys[0] if self.keys else f"#{self.uid}")

    @property
    def body(self) -> str:
        """The content without SillyTavern decorator lines (leading ``@@activate`` / ``@@dont_activate`` …)."""
        return _parse_decorators(self.content)[1]

    @property
    def role_name(self) -> str:
        return ROLES[self.role] if 0 <= self.role < len(ROLES) else "system"


class ScanMessage(BaseModel):
    """A chat message as the activation scanner sees it."""

    name: str
    text: str

    def scan_text(self) -> str:
        """``"Name: text"`` — the form SillyTavern scans."""
        return f"{self.name}: {self.text}"


class LoreHit(BaseModel):
    """One lorebook_search result (seed runs: ``{"title", "score", "content"}``)."""

    title: str
    score: int
    content: str


class TimedEffect(BaseModel):
    """One sticky or cooldown effect (ST ``chat_metadata.timedWorldInfo``): active while ``chat_length < end``;
    ``start`` is the chat length when it was set; ``protected`` effects survive a chat that did not advance."""

    hash: str
    start: int
    end: int
    protected: bool = False


class TimedEffects(BaseModel):
    """Sticky/cooldown state of a chat branch, keyed ``"{book}.{uid}"``. The caller stores the :attr:`timed` of each
    :class:`ActivationResult` (e.g. in the session tree, per branch) and passes it back on the next activation.
    Plain JSON via ``model_dump()`` / ``model_validate()``."""

    sticky: dict[str, TimedEffect] = Field(default_factory=dict)
    cooldown: dict[str, TimedEffect] = Field(default_factory=dict)


class ActivationReason(BaseModel):
    """Why an entry is active.

    ``kind``: "constant" | "key" | "sticky" | "decorator" (``@@activate``). For keys: ``key`` is the primary key as
    written, ``secondary_key`` the secondary key that decided (AND_ANY: one that matched, NOT_ALL: one that did not;
    None for NOT_ANY/AND_ALL or without secondary keys), ``logic`` the rule name when secondary keys were checked.
    Where the primary key matched: ``message_index`` (index into the ``messages`` passed, 0 = oldest), or
    ``matched_in`` "recursion" with ``via_uid``/``via_title``/``via_book`` naming the entry whose content contains
    it, or "global:<field>" / "inject". ``step`` counts scan passes from 1; ``scan`` is the pass type;
    ``recursion_level`` the number of recursion passes so far (0 = initial scan); ``delay_level`` the
    delay-until-recursion level that was open.
    """

    uid: int
    title: str
    book: str = ""
    source: str = ""
    kind: Literal["constant", "key", "sticky", "decorator"]
    key: Optional[str] = None
    secondary_key: Optional[str] = None
    logic: Optional[str] = None
    message_index: Optional[int] = None
    matched_in: Optional[str] = None
    via_uid: Optional[int] = None
    via_title: Optional[str] = None
    via_book: Optional[str] = None
    step: int = 1
    scan: str = "initial"
    recursion_level: int = 0
    delay_level: int = 0


class DepthGroup(BaseModel):
    """@depth entries of one (depth, role), in prompt order (ST merges their contents with ``\\n``)."""

    depth: int
    role: int
    entries: list[LoreEntry]


class ActivationResult(BaseModel):
    """Result of :meth:`Lorebook.activate_detailed`.

    ``entries``: every activated entry in insertion order (order ascending, ties in reverse activation order — ST's
    placement); ``reasons[i]`` explains ``entries[i]``. ``timed``: the new sticky/cooldown state to store.
    ``tokens``: approximate tokens of the activated contents; ``budget_overflowed``: the budget stopped the scan;
    ``steps``: scan passes run; ``warnings``: refused regex keys met during this run.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    entries: list[LoreEntry] = Field(default_factory=list)
    reasons: list[ActivationReason] = Field(default_factory=list)
    timed: TimedEffects = Field(default_factory=TimedEffects)
    tokens: int = 0
    budget_overflowed: bool = False
    steps: int = 0
    warnings: list[str] = Field(default_factory=list)

    def reason_for(self, entry: LoreEntry) -> Optional[ActivationReason]:
        for e, r in zip(self.entries, self.reasons):
            if e is entry:
                return r
        return None

    def keyed(self, book_order: Optional[Sequence[LoreEntry]] = None) -> list[LoreEntry]:
        """Activated non-constant entries; in ``book_order`` if given, else insertion order."""
        active = [e for e in self.entries if not e.constant]
        if book_order is None:
            return active
        ids = {id(e) for e in active}
        return [e for e in book_order if id(e) in ids]

    def positions(self) -> dict[str, list[LoreEntry]]:
        """Entries per position name in prompt order; entries with empty content are left out (ST skips them).
        ``at_depth`` entries are listed too; use :meth:`depth_groups` to place them."""
        out: dict[str, list[LoreEntry]] = {}
        for e in self.entries:
            if e.body:
                out.setdefault(e.position, []).append(e)
        return out

    def depth_groups(self) -> list[DepthGroup]:
        """@depth entries grouped by (depth, role) as ST's ``WIDepthEntries``: groups in order of first appearance
        from the highest order down, entries inside a group in prompt order."""
        groups: list[DepthGroup] = []
        for e in reversed(self.entries):  # = ST's order-descending walk
            if e.position != "at_depth" or not e.body:
                continue
            for g in groups:
                if g.depth == e.depth and g.role == e.role:
                    g.entries.insert(0, e)
                    break
            else:
                groups.append(DepthGroup(depth=e.depth, role=e.role, entries=[e]))
        return groups


# ---------------------------------------------------------------------------------------------------------------
# JavaScript regex keys
# ---------------------------------------------------------------------------------------------------------------

class JsRegexUnsupported(ValueError):
    """A ``/pattern/flags`` key that is valid JavaScript but uses a construct this translator does not support.
    :func:`compile_key` then evaluates it in QuickJS; without QuickJS the key never matches (and is reported in
    :attr:`Lorebook.warnings`) rather than matching wrongly."""


class _JsSyntax(ValueError):
    """Invalid JavaScript regex: SillyTavern's ``new RegExp`` throws and the key is matched as plain text."""


_REGEX_KEY = re.compile(r"\A/([\s\S]+?)/([gimsuy]*)\Z")
_UNESCAPED_SLASH = re.compile(r"(^|[^\\])/")
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


def _ranges_body(ranges: list[tuple[int, int]]) -> str:
    return "".join(_cls_char(a) if a == b else f"{_cls_char(a)}-{_cls_char(b)}" for a, b in ranges)


def _complement(ranges: list[tuple[int, int]]) -> str:
    out, lo = [], 0
    for a, b in sorted(ranges):
        if a > lo:
            out.append((lo, a - 1))
        lo = max(lo, b + 1)
    if lo <= 0x10FFFF:
        out.append((lo, 0x10FFFF))
    return _ranges_body(out)


_CLASS_SETS = {
    "d": _ranges_body(_DIGIT_RANGES), "D": _complement(_DIGIT_RANGES),
    "w": _ranges_body(_WORD_RANGES), "W": _complement(_WORD_RANGES),
    "s": _ranges_body(_SPACE_RANGES), "S": _complement(_SPACE_RANGES),
}
_SIMPLE_ESCAPES = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13}
_HEX = "0123456789abcdefABCDEF"


class _JsTranslator:
    """One-pass translation of a JavaScript (ES2018+, Annex B, non-``v``) regex body into a Python ``re`` pattern."""

    def __init__(self, pattern: str, flags: str):
        if len(set(flags)) != len(flags):
            raise _JsSyntax("duplicate flag")
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
                cp = int(p[i + 2:end], 16)
                if cp > 0x10FFFF:
                    raise _JsSyntax("code point out of range")
                return cp, end + 1
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
        if c in _CLASS_SETS:
            return _CLASS_SETS[c], i + 2
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
        if c in _CLASS_SETS:
            return f"[{_CLASS_SETS[c]}]", i + 2
        if c == "b":
            return _BOUNDARY, i + 2
        if c == "B":
            return _NON_BOUNDARY, i + 2
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
        return _cls_char(cp) if cp != ord("\\") else "\\\\", j

    def _backref(self, num: int) -> str:
        # JS: a reference to a group that has not matched (yet), or is still open, matches the empty string;
        # Python fails instead — so such references become "(?:)" and the others a conditional reference.
        if num > self.opened or num in self.open_stack:
            return "(?:)"
        return f"(?:(?({num})\\{num}))"

    # -- classes ----------------------------------------------------------------------------------------------
    def _class(self, i: int) -> tuple[str, int]:
        p, j = self.p, i + 1
        neg = p.startswith("^", j)
        if neg:
            j += 1
        if p.startswith("]", j):
            return ("(?s:.)" if neg else "(?!)"), j + 1
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
                    items.append(f"{_cls_char(a)}-{_cls_char(b)}")
                    j = k
                    continue
                if self.u:
                    raise _JsSyntax("class escape in a range")
                items += [a if isinstance(a, str) else _cls_char(a), _cls_char(ord("-")),
                          b if isinstance(b, str) else _cls_char(b)]
                j = k
                continue
            items.append(a if isinstance(a, str) else _cls_char(a))
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
                quantifiable = piece not in (_BOUNDARY, _NON_BOUNDARY)
                continue
            if c == "[":
                piece, i = self._class(i)
                out.append(piece)
                quantifiable = True
                continue
            if c == "(":
                if p.startswith(("(?:", "(?=", "(?!", "(?<=", "(?<!"), i):
                    k = 4 if p.startswith("(?<", i) else 3
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
                    if re.match(r"\(\?[ims]*(?:-[ims]*)?:", p[i:]):
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
            if c in "*+?" or (c == "{" and re.match(r"\{\d+(?:,\d*)?\}", p[i:])):
                if c == "{":
                    q = re.match(r"\{\d+(?:,\d*)?\}", p[i:]).group(0)
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
                if i < len(p) and (p[i] in "*+?" or (p[i] == "{" and re.match(r"\{\d+(?:,\d*)?\}", p[i:]))):
                    raise _JsSyntax("nothing to repeat")
                quantifiable = False
                continue
            if c == ".":
                out.append("(?s:.)" if self.s else f"[^{_LINE_TERMS}]")
            elif c == "^":
                out.append(f"(?<![^{_LINE_TERMS}])" if self.m else r"\A")
            elif c == "$":
                out.append(f"(?![^{_LINE_TERMS}])" if self.m else r"\Z")
            elif c == "|":
                out.append("|")
            elif c in "{}]":
                if self.u:
                    raise _JsSyntax(f"lone {c}")
                out.append("\\" + c)
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


# ---------------------------------------------------------------------------------------------------------------
# key matchers
# ---------------------------------------------------------------------------------------------------------------

class _Hay:
    """One scan text (ST's ``buffer.get``) with its lower-cased copy and a map from offsets to what was scanned."""

    __slots__ = ("raw", "_low", "starts", "labels", "_low_starts", "parts", "_sets")

    def __init__(self, parts: list[tuple[str, tuple]]):
        # parts: (text, label) where text already includes its \x01 / \n\x01 prefix
        self.parts = parts
        self.raw = "".join(t for t, _ in parts)
        self._low: Optional[str] = None
        self._low_starts: Optional[list[int]] = None
        self.starts = []
        pos = 0
        for t, _ in parts:
            self.starts.append(pos)
            pos += len(t)
        self.labels = [lab for _, lab in parts]
        self._sets: Optional[tuple[set[str], ...]] = None

    def probe_sets(self, with_raw: bool) -> tuple[set[str], ...]:
        """Prefilter sets, indexed by :attr:`_Key.si`: (0/1) the ASCII words of ``raw``/``low``, (2/3) all
        two-character and (4/5) all four-character substrings of ``raw``/``low``. A key whose probe is not in its set
        cannot match — one set lookup rules out nearly every key. The ``raw`` sets are built only ``with_raw``
        (some key is case-sensitive)."""
        if self._sets is None:
            lo = self.low
            empty: set[str] = set()
            sets = [empty, set(_WORD_RUN.findall(lo)), empty, _grams2(lo), empty, _grams4(lo)]
            if with_raw:
                r = self.raw
                sets[0], sets[2], sets[4] = set(_WORD_RUN.findall(r)), _grams2(r), _grams4(r)
            self._sets = tuple(sets)
        return self._sets

    @property
    def low(self) -> str:
        if self._low is None:
            lows = [t.lower() for t, _ in self.parts]
            self._low = "".join(lows)
            starts, pos = [], 0
            for t in lows:
                starts.append(pos)
                pos += len(t)
            self._low_starts = starts
        return self._low

    def locate(self, pos: int, lowered: bool) -> tuple:
        if lowered:
            self.low  # noqa: B018 - builds the offsets
            starts = self._low_starts or [0]
        else:
            starts = self.starts
        k = bisect.bisect_right(starts, pos) - 1
        return self.labels[max(0, k)] if self.labels else ("none",)


_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")


def _grams2(s: str) -> set[str]:
    return set(map(str.__add__, s, s[1:]))


def _grams4(s: str) -> set[str]:
    return set(map(str.__add__, map(str.__add__, s, s[1:]), map(str.__add__, s[2:], s[3:])))


class _Plain:
    """A plain key: substring, or whole word with boundaries only on the sides where the key has an ASCII word
    character (the Liyuan rule)."""

    __slots__ = ("needle", "cs", "left", "right")
    kind = "plain"

    def __init__(self, needle: str, cs: bool, whole: bool):
        self.needle = needle if cs else needle.lower()
        self.cs = cs
        single = whole and len(re.split(r"\s+", needle)) <= 1  # JS: key.split(/\s+/).length > 1 → substring
        self.left = bool(single and self.needle and self.needle[0] in _ASCII_WORD)
        self.right = bool(single and self.needle and self.needle[-1] in _ASCII_WORD)

    @property
    def lowered(self) -> bool:
        return not self.cs

    def find(self, hay: _Hay) -> int:
        h = hay.raw if self.cs else hay.low
        n = self.needle
        i = h.find(n)
        if i < 0 or not (self.left or self.right):
            return i
        ln, end = len(n), len(h)
        while i >= 0:
            if (not self.left or i == 0 or h[i - 1] not in _ASCII_WORD) and (
                    not self.right or i + ln >= end or h[i + ln] not in _ASCII_WORD):
                return i
            i = h.find(n, i + 1)
        return -1


class _Regex:
    __slots__ = ("rx", "sticky")
    kind = "regex"
    lowered = False

    def __init__(self, rx: re.Pattern[str], sticky: bool):
        self.rx = rx
        self.sticky = sticky

    def find(self, hay: _Hay) -> int:
        m = self.rx.match(hay.raw) if self.sticky else self.rx.search(hay.raw)
        return m.start() if m else -1


class _Refused:
    __slots__ = ("reason",)
    kind = "refused"
    lowered = False

    def __init__(self, reason: str):
        self.reason = reason

    def find(self, hay: _Hay) -> int:
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
_js_local = threading.local()
_js_unavailable: list[str] = []


class _JsEngine:
    """A QuickJS-ng context (one per thread; ``quickjs-ng`` is a project dependency) that evaluates the regex keys the
    translator cannot express, with JavaScript's own ``RegExp``."""

    def __init__(self) -> None:
        import quickjs  # quickjs-ng

        self.quickjs = quickjs
        self.ctx = quickjs.Context()
        self.ctx.set_memory_limit(64 * 1024 * 1024)
        self.ctx.eval(_JS_SOURCE)
        self.test_fn = self.ctx.get("__wiTest")
        self.valid_fn = self.ctx.get("__wiValid")

    def valid(self, pattern: str, flags: str) -> bool:
        try:
            return bool(self.valid_fn(pattern, flags))
        except Exception:  # noqa: BLE001 - engine trouble: treat as not valid JavaScript
            return False

    def find(self, pattern: str, flags: str, text: str) -> int:
        self.ctx.set_time_limit(JS_TIME_LIMIT)
        try:
            u16 = self.test_fn(pattern, flags, text)
        except Exception:  # noqa: BLE001 - interrupted (time limit), out of memory, unpaired surrogates
            _js_local.engine = None  # start clean next time
            return -1
        finally:
            try:
                self.ctx.set_time_limit(-1)
            except Exception:  # noqa: BLE001
                pass
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
    eng = getattr(_js_local, "engine", None)
    if eng is None and not _js_unavailable:
        try:
            eng = _js_local.engine = _JsEngine()
        except Exception as exc:  # noqa: BLE001 - missing/broken package: the app keeps working
            _js_unavailable.append(str(exc))
            return None
    return eng


class _JsEval:
    """A regex key evaluated by QuickJS (constructs the translator does not support)."""

    __slots__ = ("pattern", "flags")
    kind = "regex"
    lowered = False

    def __init__(self, pattern: str, flags: str):
        self.pattern, self.flags = pattern, flags

    def find(self, hay: _Hay) -> int:
        eng = _js_engine()
        return -1 if eng is None else eng.find(self.pattern, self.flags, hay.raw)


_Matcher = Union[_Plain, _Regex, _JsEval, _Refused]


@lru_cache(maxsize=65536)
def compile_key(key: str, case_sensitive: bool = False, match_whole_words: bool = True) -> _Matcher:
    """The matcher for one key text (already substituted/trimmed as the caller wants).

    A regex key per :func:`parse_regex_key` is translated to Python (:func:`translate_js_regex`); a construct the
    translator does not support is evaluated by QuickJS instead (JavaScript's own ``RegExp``, time-limited), and only
    without QuickJS refused (never matches; a warning names it). A pattern that is not valid JavaScript (QuickJS
    decides when available) makes the key plain text, as in ST. Otherwise a plain key. Cached per (key, settings)."""
    rk = parse_regex_key(key)
    if rk is not None:
        try:
            py, fl, sticky = translate_js_regex(*rk)
            return _Regex(re.compile(py, fl), sticky)
        except JsRegexUnsupported as exc:
            eng = _js_engine()
            if eng is not None and eng.valid(*rk):
                return _JsEval(*rk)
            if eng is None:
                return _Refused(f"正则关键词 {key} 无法使用：{exc}（JavaScript 引擎不可用）")
        except ValueError:
            eng = _js_engine()
            if eng is not None and eng.valid(*rk):  # stricter than JavaScript here: let JavaScript run it
                return _JsEval(*rk)
        # not valid JavaScript: ST's `new RegExp` throws and the key is matched as plain text
    return _Plain(key, case_sensitive, match_whole_words)


def key_matches(text: str, key: str, *, case_sensitive: bool = False, match_whole_words: bool = True) -> bool:
    """Whether ``key`` matches ``text`` by the activation rules (plain or ``/regex/flags``); for tests and the UI."""
    return compile_key(key.strip(), case_sensitive, match_whole_words).find(_Hay([(text, ("text",))])) >= 0


# ---------------------------------------------------------------------------------------------------------------
# tokens, decorators
# ---------------------------------------------------------------------------------------------------------------

_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
                   r"\U00020000-\U0003ffff]")


@lru_cache(maxsize=16384)
def _token_weight(text: str) -> float:
    wide = len(_WIDE.findall(text)) if not text.isascii() else 0
    return wide + (len(text) - wide) / 4.0


def approx_tokens(text: str) -> int:
    """Approximate token count: one per CJK/fullwidth character, one per 4 other characters (rounded up). Cached per
    text, so each entry is counted once (lessons.md)."""
    return math.ceil(_token_weight(text)) if text else 0


def budget_from_context(max_context: int, percent: float = 25, cap: int = 0) -> int:
    """SillyTavern's budget: ``round(percent × max_context / 100)`` (at least 1), capped by ``cap`` when > 0."""
    b = int(math.floor(percent * max_context / 100 + 0.5)) or 1
    return min(b, cap) if cap > 0 else b


def _parse_decorators(content: str) -> tuple[tuple[str, ...], str]:
    """ST ``parseDecorators``: leading ``@@`` lines; known ones are ``@@activate`` / ``@@dont_activate``
    (``@@@x`` is a fallback used only after an unknown decorator). Returns (decorators, content without them)."""
    if not content.startswith("@@"):
        return (), content
    lines = content.split("\n")
    decorators: list[str] = []
    fallbacked = False
    new_content = content
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            if line.startswith("@@@") and not fallbacked:
                continue
            probe = line[1:] if line.startswith("@@@") else line
            if probe.startswith(("@@activate", "@@dont_activate")):
                decorators.append(probe)
                fallbacked = False
            else:
                fallbacked = True
        else:
            new_content = "\n".join(lines[i:])
            break
    # ST quirk kept: content made only of decorator lines stays as written
    return tuple(decorators), new_content


# ---------------------------------------------------------------------------------------------------------------
# field mapping card entry ⇄ WI entry  (ST convertCharacterBook / convertWorldInfoToCharacterBook)
# ---------------------------------------------------------------------------------------------------------------

# (model field, WI key, card location: "top:<key>" or "ext:<key>", reader, default when absent)
_EXT_FIELDS: list[tuple[str, str, str, Callable[[Any], Any], Any]] = [
    ("selective_logic", "selectiveLogic", "selectiveLogic", lambda v: _int(v, 0), 0),
    ("probability", "probability", "probability", lambda v: 100 if v is None else _int(v, 100), 100),
    ("use_probability", "useProbability", "useProbability", _truthy, True),
    ("depth", "depth", "depth", lambda v: DEFAULT_DEPTH if v is None else _int(v, DEFAULT_DEPTH), DEFAULT_DEPTH),
    ("role", "role", "role", lambda v: 0 if v is None else _int(v, 0), 0),
    ("exclude_recursion", "excludeRecursion", "exclude_recursion", _truthy, False),
    ("prevent_recursion", "preventRecursion", "prevent_recursion", _truthy, False),
    ("delay_until_recursion", "delayUntilRecursion", "delay_until_recursion", _dur, 0),
    ("group", "group", "group", lambda v: "" if v is None else str(v), ""),
    ("group_override", "groupOverride", "group_override", _truthy, False),
    ("group_weight", "groupWeight", "group_weight",
     lambda v: DEFAULT_WEIGHT if v is None else _int(v, DEFAULT_WEIGHT), DEFAULT_WEIGHT),
    ("use_group_scoring", "useGroupScoring", "use_group_scoring", _opt_bool, None),
    ("scan_depth", "scanDepth", "scan_depth", _opt_int, None),
    ("case_sensitive", "caseSensitive", "case_sensitive", _opt_bool, None),
    ("match_whole_words", "matchWholeWords", "match_whole_words", _opt_bool, None),
    ("automation_id", "automationId", "automation_id", lambda v: "" if v is None else str(v), ""),
    ("vectorized", "vectorized", "vectorized", _truthy, False),
    ("sticky", "sticky", "sticky", lambda v: max(0, _int(v, 0)) if v is not None else 0, 0),
    ("cooldown", "cooldown", "cooldown", lambda v: max(0, _int(v, 0)) if v is not None else 0, 0),
    ("delay", "delay", "delay", lambda v: max(0, _int(v, 0)) if v is not None else 0, 0),
    ("display_index", "displayIndex", "display_index", _opt_int, None),
    ("ignore_budget", "ignoreBudget", "ignore_budget", _truthy, False),
    ("triggers", "triggers", "triggers", lambda v: [str(x) for x in v] if isinstance(v, list) else [], []),
    ("outlet_name", "outletName", "outlet_name", lambda v: "" if v is None else str(v), ""),
    ("match_persona_description", "matchPersonaDescription", "match_persona_description", _truthy, False),
    ("match_character_description", "matchCharacterDescription", "match_character_description", _truthy, False),
    ("match_character_personality", "matchCharacterPersonality", "match_character_personality", _truthy, False),
    ("match_character_depth_prompt", "matchCharacterDepthPrompt", "match_character_depth_prompt", _truthy, False),
    ("match_scenario", "matchScenario", "match_scenario", _truthy, False),
    ("match_creator_notes", "matchCreatorNotes", "match_creator_notes", _truthy, False),
]
_MODEL_FIELDS = ("uid", "title", "keys", "secondary_keys", "content", "constant", "selective", "enabled", "order",
                 "position", "character_filter", "extensions") + tuple(f for f, *_ in _EXT_FIELDS)


def _out_value(field: str, value: Any) -> Any:
    if field == "delay_until_recursion":
        return _dur_out(value)
    if isinstance(value, list):
        return list(value)
    return value


def _parse_card_entry(e: dict[str, Any], uid: int) -> dict[str, Any]:
    ext = e.get("extensions") if isinstance(e.get("extensions"), dict) else {}
    pos = ext.get("position")
    vals: dict[str, Any] = {
        "uid": uid,
        "title": str(e.get("comment") or e.get("name") or ""),
        "keys": _str_list(e.get("keys", e.get("key"))),
        "secondary_keys": _str_list(e.get("secondary_keys", e.get("keysecondary"))),
        "content": "" if e.get("content") is None else str(e.get("content")),
        "constant": _truthy(e.get("constant")),
        "selective": _truthy(e.get("selective")),  # ST: `entry.selective || false`
        "enabled": _truthy(e.get("enabled")),  # ST: `disable: !entry.enabled`
        "order": _int(e.get("insertion_order", e.get("order", 100)), 100),
        "position": (_position_name(pos) if pos is not None
                     else "before_char" if e.get("position") == "before_char" else "after_char"),
        "character_filter": ext.get("character_filter") if isinstance(ext.get("character_filter"), dict) else None,
        "extensions": ext,
    }
    for field, _wi, ck, reader, default in _EXT_FIELDS:
        vals[field] = reader(ext[ck]) if ck in ext else copy.deepcopy(default)
    return vals


def _parse_wi_entry(w: dict[str, Any], uid: int) -> dict[str, Any]:
    vals: dict[str, Any] = {
        "uid": uid,
        "title": "" if w.get("comment") is None else str(w.get("comment")),
        "keys": _str_list(w.get("key")),
        "secondary_keys": _str_list(w.get("keysecondary")),
        "content": "" if w.get("content") is None else str(w.get("content")),
        "constant": _truthy(w.get("constant")),
        "selective": _truthy(w.get("selective", True)),
        "enabled": not _truthy(w.get("disable")),
        "order": _int(w.get("order", 100), 100),
        "position": _position_name(w.get("position", 0)),
        "character_filter": w.get("characterFilter") if isinstance(w.get("characterFilter"), dict) else None,
        "extensions": w.get("extensions") if isinstance(w.get("extensions"), dict) else {},
    }
    for field, wk, _ck, reader, default in _EXT_FIELDS:
        vals[field] = reader(w[wk]) if wk in w else copy.deepcopy(default)
    return vals


def _write_card_field(out: dict[str, Any], field: str, value: Any) -> None:
    ext = out.setdefault("extensions", {})
    if field == "uid":
        out["id"] = value
    elif field == "title":
        out["comment"] = value
    elif field in ("keys", "secondary_keys", "content", "constant", "selective"):
        out[field] = _out_value(field, value)
    elif field == "enabled":
        out["enabled"] = value
    elif field == "order":
        out["insertion_order"] = value
    elif field == "position":
        n = _position_number(value)
        out["position"] = "before_char" if n == 0 else "after_char"
        ext["position"] = n
    elif field == "character_filter":
        if value is None:
            ext.pop("character_filter", None)
        else:
            ext["character_filter"] = copy.deepcopy(value)
    elif field == "extensions":
        out["extensions"] = copy.deepcopy(value)
    else:
        ck = next(c for f, _w, c, _r, _d in _EXT_FIELDS if f == field)
        ext[ck] = _out_value(field, value)


def _write_wi_field(out: dict[str, Any], field: str, value: Any) -> None:
    if field == "uid":
        out["uid"] = value
    elif field == "title":
        out["comment"] = value
    elif field == "keys":
        out["key"] = list(value)
    elif field == "secondary_keys":
        out["keysecondary"] = list(value)
    elif field in ("content", "constant", "selective"):
        out[field] = value
    elif field == "enabled":
        out["disable"] = not value
    elif field == "order":
        out["order"] = value
    elif field == "position":
        out["position"] = _position_number(value)
    elif field == "character_filter":
        if value is None:
            out.pop("characterFilter", None)
        else:
            out["characterFilter"] = copy.deepcopy(value)
    elif field == "extensions":
        out["extensions"] = copy.deepcopy(value)
    else:
        wk = next(w for f, w, _c, _r, _d in _EXT_FIELDS if f == field)
        out[wk] = _out_value(field, value)


def _entry_values(e: LoreEntry) -> dict[str, Any]:
    return {f: getattr(e, f) for f in _MODEL_FIELDS}


def _export_entry(e: LoreEntry, shape: str) -> dict[str, Any]:
    """The entry as a card-book entry (``shape="card"``) or a WI entry (``"wi"``). Same shape as read: the original
    JSON with only the changed fields rewritten. Other shape: ST's conversion with its full field set."""
    cur = _entry_values(e)
    writer = _write_card_field if shape == "card" else _write_wi_field
    if e._raw is not None and e._kind == shape:
        out = copy.deepcopy(e._raw)
        parsed = e._parsed or {}
        if cur["extensions"] != parsed.get("extensions"):
            writer(out, "extensions", cur["extensions"])
        for f in _MODEL_FIELDS:
            if f != "extensions" and cur[f] != parsed.get(f):
                writer(out, f, cur[f])
        return out
    if shape == "card":
        # ST convertWorldInfoToCharacterBook: {id, keys, …, use_regex: true, extensions: {...wi.extensions, …}}
        out: dict[str, Any] = {
            "id": e.uid, "keys": list(e.keys), "secondary_keys": list(e.secondary_keys), "comment": e.title,
            "content": e.content, "constant": e.constant, "selective": e.selective, "insertion_order": e.order,
            "enabled": e.enabled, "position": "before_char" if _position_number(e.position) == 0 else "after_char",
            "use_regex": True, "extensions": copy.deepcopy(e.extensions),
        }
        out["extensions"]["position"] = _position_number(e.position)
        for f, _w, ck, _r, _d in _EXT_FIELDS:
            out["extensions"][ck] = _out_value(f, getattr(e, f))
        if e.character_filter is not None:
            out["extensions"]["character_filter"] = copy.deepcopy(e.character_filter)
        return out
    # ST convertCharacterBook: the WI template filled from the card entry
    out = {
        "uid": e.uid, "key": list(e.keys), "keysecondary": list(e.secondary_keys), "comment": e.title,
        "content": e.content, "constant": e.constant, "selective": e.selective, "order": e.order,
        "position": _position_number(e.position), "disable": not e.enabled, "addMemo": bool(e.title),
    }
    for f, wk, _c, _r, _d in _EXT_FIELDS:
        out[wk] = _out_value(f, getattr(e, f))
    if out["displayIndex"] is None:
        out["displayIndex"] = e.uid
    out["extensions"] = copy.deepcopy(e.extensions)
    if e.character_filter is not None:
        out["characterFilter"] = copy.deepcopy(e.character_filter)
    return out


def _new_entry(vals: dict[str, Any], raw: dict[str, Any], kind: str, book: str, source: str) -> LoreEntry:
    e = LoreEntry(**copy.deepcopy(vals), book=book, source=source)
    e._raw = raw
    e._kind = kind
    e._parsed = copy.deepcopy(vals)
    return e


def _js_key_order(keys: Iterable[str]) -> list[str]:
    """Object key order as JavaScript iterates it: array-index-like keys ascending, then the others as written."""
    keys = list(keys)
    ints = sorted((k for k in keys if k.isascii() and k.isdigit() and (k == "0" or not k.startswith("0"))
                   and int(k) < 2**32 - 1), key=int)
    rest = [k for k in keys if k not in set(ints)]
    return ints + rest


# ---------------------------------------------------------------------------------------------------------------
# compiled book
# ---------------------------------------------------------------------------------------------------------------

class _Key:
    """A key of an entry: its text as written, the compiled matcher, and ``gram`` — the first two characters of a
    plain needle (None for regex/short/macro keys), with ``gcs`` telling which gram set (case-sensitive or lower)."""

    __slots__ = ("text", "matcher", "dynamic", "si", "probe")

    def __init__(self, text: str, cs: bool, whole: bool):
        self.text = text
        self.dynamic = "{{" in text or "<" in text  # macros / legacy <USER> tags: substituted per run
        self.matcher = m = compile_key(text.strip(), cs, whole)
        # prefilter (see _Hay.probe_sets): -1 none; 0/1 whole ASCII word; 2/3 first 2 chars; 4/5 first 4 chars
        self.si, self.probe = -1, ""
        if isinstance(m, _Plain) and not self.dynamic and len(m.needle) >= 2:
            n, low = m.needle, 0 if m.cs else 1
            if m.left and m.right and all(c in _ASCII_WORD for c in n):
                self.si, self.probe = low, n  # boundaries both sides + only word chars = a whole word token
            elif len(n) >= 4:
                self.si, self.probe = 4 + low, _rare_gram(n, 4)
            else:
                self.si, self.probe = 2 + low, _rare_gram(n, 2)

    def get(self, substitute: Optional[Callable[[str], str]], cs: bool, whole: bool) -> Optional[_Matcher]:
        if self.dynamic and substitute is not None:
            t = substitute(self.text)
            return compile_key(t.strip(), cs, whole) if t else None
        return self.matcher


def _char_rarity(c: str) -> int:
    if c.isdigit() or not c.isascii():
        return 3
    return 0 if c.isalpha() else 1


def _rare_gram(needle: str, size: int) -> str:
    """The ``size``-character substring of ``needle`` least likely to occur by chance (digits, CJK, punctuation and
    spaces beat letters; earliest on ties) — any substring of a key must occur where the key does."""
    best, best_score = needle[:size], -1
    for i in range(len(needle) - size + 1):
        g = needle[i:i + size]
        sc = sum(_char_rarity(c) for c in g)
        if sc > best_score:
            best, best_score = g, sc
    return best


class _Rec:
    """An entry prepared for activation (keys compiled, settings resolved)."""

    __slots__ = ("pos", "entry", "list_index", "enabled", "constant", "dur", "exclude", "prevent", "scan_depth",
                 "primary", "secondary", "check_secondary", "logic", "deco_activate", "deco_dont", "groups",
                 "group_raw", "group_override", "group_weight", "use_group_scoring", "probability", "use_prob",
                 "sticky", "cooldown", "delay", "order", "tkey", "_hash", "body", "cs", "whole", "ignore_budget",
                 "scan_flags", "char_names", "char_exclude", "special", "book")

    @property
    def hash(self) -> str:
        """Hash of the entry (ST keys timed effects to it: an edited entry loses its effects). Computed lazily —
        only entries with timed effects need it."""
        if self._hash is None:
            self._hash = _entry_hash(self.entry, self.book)
        return self._hash


class _Compiled:
    __slots__ = ("sig", "recs", "active", "_by_hash", "warnings", "any_cs", "delayed", "levels")

    @property
    def by_hash(self) -> dict[str, "_Rec"]:
        if self._by_hash is None:
            self._by_hash = {}
            for r in self.recs:
                self._by_hash.setdefault(r.hash, r)
        return self._by_hash


def _entry_hash(e: LoreEntry, book: str) -> str:
    data = e.model_dump(mode="json", exclude={"source"})
    data["book"] = book
    return hashlib.sha1(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


class _Buffer:
    """ST's ``WorldInfoBuffer`` for one run: messages newest first, injected prompts, the recursion buffer."""

    def __init__(self, messages: Sequence[Union[ScanMessage, str]], include_names: bool, inject: Sequence[str],
                 global_scan: Optional[dict[str, str]]):
        self.messages = messages
        self.n = len(messages)
        self.include_names = include_names
        self.inject = [s for s in inject if s]
        self.global_scan = global_scan or {}
        self.recurse: list[list[tuple[str, Optional[_Rec]]]] = []  # per step: (content, entry) pieces
        self._texts: dict[int, str] = {}
        self._cache: dict[tuple, _Hay] = {}

    def _text(self, d: int) -> str:
        t = self._texts.get(d)
        if t is None:
            m = self.messages[self.n - 1 - d]
            if isinstance(m, str):
                t = m
            else:
                t = m.scan_text() if self.include_names else m.text
            t = self._texts[d] = t.strip()
        return t

    def hay(self, depth: int, scan: int, flags: tuple[str, ...] = ()) -> _Hay:
        if depth <= 0:
            return _Hay([])
        depth = min(depth, MAX_SCAN_DEPTH)
        rec_n = len(self.recurse) if scan != _MIN_ACTIVATIONS else 0
        key = (depth, rec_n, flags)
        h = self._cache.get(key)
        if h is not None:
            return h
        parts: list[tuple[str, tuple]] = []
        for d in range(min(depth, self.n)):
            parts.append(((_MATCHER if d == 0 else _JOINER) + self._text(d), ("msg", self.n - 1 - d)))
        if not parts:
            parts.append((_MATCHER, ("none",)))
        for f in flags:
            v = self.global_scan.get(f)
            if v:
                parts.append((_JOINER + v, ("global", f)))
        for i, s in enumerate(self.inject):
            parts.append((_JOINER + s, ("inject", i)))
        for step in self.recurse[:rec_n]:
            first = True
            for text, rec in step:
                parts.append(((_JOINER if first else "\n") + text, ("entry", rec)))
                first = False
        h = self._cache[key] = _Hay(parts)
        return h

    def add_recurse(self, pieces: list[tuple[str, Optional[_Rec]]]) -> None:
        self.recurse.append(pieces)


def _rng_fn(rng: Any) -> Callable[[], float]:
    if rng is None:
        return _random.random
    if hasattr(rng, "random"):
        return rng.random
    if callable(rng):
        return rng
    raise TypeError("rng must be a random.Random-like object or a callable returning [0, 1)")


# ---------------------------------------------------------------------------------------------------------------
# the book
# ---------------------------------------------------------------------------------------------------------------

_COMPILE_FIELDS = frozenset({"entries", "name", "case_sensitive", "match_whole_words", "strategy"})


class Lorebook(BaseModel):
    """An ordered list of entries plus the scan settings SillyTavern keeps globally.

    Book order is the order titles are listed in. ``scan_depth``: how many of the newest messages are scanned
    (ST default 2). ``recursive`` (ST default on), ``case_sensitive`` (off), ``match_whole_words`` (on),
    ``include_names`` (on), ``use_group_scoring`` (off), ``max_recursion_steps`` / ``min_activations`` /
    ``min_activations_depth_max`` (0 = off), ``strategy`` (0 evenly, 1 character first, 2 global first).
    ``token_budget`` is the card book's value, informative only (ST ignores it; pass ``budget_tokens``).
    ``source``: where the book is attached ("card" | "chat" | "persona" | "global").
    """

    name: str = ""
    entries: list[LoreEntry] = Field(default_factory=list)
    scan_depth: int = 2
    extensions: dict[str, Any] = Field(default_factory=dict)
    description: str = ""
    token_budget: Optional[int] = None
    recursive: bool = True
    case_sensitive: bool = False
    match_whole_words: bool = True
    include_names: bool = True
    use_group_scoring: bool = False
    max_recursion_steps: int = 0
    min_activations: int = 0
    min_activations_depth_max: int = 0
    strategy: int = 1
    source: str = ""

    _raw: Optional[dict[str, Any]] = PrivateAttr(default=None)
    _kind: Optional[str] = PrivateAttr(default=None)
    _parsed: Optional[dict[str, Any]] = PrivateAttr(default=None)
    _entry_keys: Optional[list[str]] = PrivateAttr(default=None)  # WI: the entries' object keys as read
    _load_warnings: list[str] = PrivateAttr(default_factory=list)
    _compiled: Optional[_Compiled] = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _COMPILE_FIELDS:  # settings the compiled matchers depend on
            _EDITS[0] += 1

    # -- loading --------------------------------------------------------------------------------------------
    @classmethod
    def from_card_book(cls, book: Optional[dict[str, Any]], name: str = "", source: str = "card") -> "Lorebook":
        """Build from a card's ``character_book`` (V2/V3 fields; SillyTavern extras under ``entry.extensions``, mapped
        as ST's ``convertCharacterBook``: e.g. missing ``enabled`` = disabled, missing ``selective`` = false, position
        from ``extensions.position`` else ``before_char``→0 / anything else→1). ``None`` or ``{"entries": null}`` is
        an empty book; a dict of entries (World Info shape) is read by :meth:`from_world_info`. Book-level
        ``scan_depth`` (positive int) and ``recursive_scanning`` (bool) become the book's settings."""
        if not book or not isinstance(book, dict):
            return cls(name=name, source=source)
        if book.get("spec") == "lorebook_v3" and isinstance(book.get("data"), dict):
            book = book["data"]
        if isinstance(book.get("entries"), dict):
            return cls.from_world_info(book, name=str(book.get("name") or name), source=source)
        raw_entries = book.get("entries") if isinstance(book.get("entries"), list) else []
        bname = str(book.get("name") or name)
        used = {_int(e.get("id"), -1) for e in raw_entries if isinstance(e, dict) and e.get("id") is not None}
        next_id = 0
        entries: list[LoreEntry] = []
        warnings: list[str] = []
        for i, e in enumerate(raw_entries):
            if not isinstance(e, dict):
                warnings.append(f"世界书第 {i + 1} 条不是对象，已跳过")
                continue
            if e.get("id") is not None and _opt_int(e.get("id")) is not None:
                uid = _int(e.get("id"), i)
            else:  # newer ST: the first id no other entry uses
                while next_id in used:
                    next_id += 1
                uid = next_id
                used.add(uid)
            if "enabled" not in e:
                warnings.append(f"世界书条目 {uid} 没有 enabled 字段，按 SillyTavern 视为禁用")
            entries.append(_new_entry(_parse_card_entry(e, uid), e, "card", bname, source))
        depth = book.get("scan_depth")
        out = cls(
            name=bname, entries=entries,
            scan_depth=depth if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0 else 2,
            extensions=copy.deepcopy(book["extensions"]) if isinstance(book.get("extensions"), dict) else {},
            description=str(book.get("description") or ""),
            token_budget=book.get("token_budget") if isinstance(book.get("token_budget"), int) else None,
            recursive=book["recursive_scanning"] if isinstance(book.get("recursive_scanning"), bool) else True,
            source=source,
        )
        out._raw, out._kind = book, "card"
        out._parsed = out._book_values()
        out._load_warnings = warnings
        return out

    @classmethod
    def from_world_info(cls, obj: Optional[dict[str, Any]], name: str = "", source: str = "global") -> "Lorebook":
        """Build from a SillyTavern World Info file ``{"entries": {"<uid>": {...}}, "originalData"?: ...}``. Entry
        fields are ST's camelCase ones with ST's defaults for missing fields (``selective`` true, ``order`` 100 …).
        Entries are listed in the order JavaScript iterates the object (numeric uids ascending), which is the order
        ST processes them in. A list of entries (card shape) is read by :meth:`from_card_book`."""
        if not obj or not isinstance(obj, dict):
            return cls(name=name, source=source)
        if isinstance(obj.get("entries"), list):
            return cls.from_card_book(obj, name=name, source=source)
        raw = obj.get("entries") if isinstance(obj.get("entries"), dict) else {}
        entries: list[LoreEntry] = []
        warnings: list[str] = []
        bname = name or str(obj.get("name") or "")
        for k in _js_key_order(raw.keys()):
            w = raw[k]
            if not isinstance(w, dict):
                warnings.append(f"世界书条目 {k} 不是对象，已跳过")
                continue
            uid = _int(w.get("uid"), _int(k, len(entries)))
            entries.append(_new_entry(_parse_wi_entry(w, uid), w, "wi", bname, source))
        out = cls(name=bname, entries=entries, source=source)
        out._raw, out._kind = obj, "wi"
        out._entry_keys = list(raw.keys())
        out._parsed = out._book_values()
        out._load_warnings = warnings
        return out

    @classmethod
    def from_any(cls, obj: Any, name: str = "", source: str = "global") -> "Lorebook":
        """A card book, a ``lorebook_v3`` export or a World Info file, told apart by shape."""
        if isinstance(obj, dict) and isinstance(obj.get("entries"), dict):
            return cls.from_world_info(obj, name=name, source=source)
        return cls.from_card_book(obj, name=name, source=source)

    def with_source(self, source: str) -> "Lorebook":
        """Mark the book and its entries as attached to ``source`` ("card" | "chat" | "persona" | "global")."""
        self.source = source
        for e in self.entries:
            e.source = source
        return self

    def _book_values(self) -> dict[str, Any]:
        return {"name": self.name, "scan_depth": self.scan_depth, "extensions": copy.deepcopy(self.extensions),
                "description": self.description, "token_budget": self.token_budget, "recursive": self.recursive}

    @property
    def warnings(self) -> list[str]:
        """Problems met while reading the book and regex keys that cannot be used (Chinese, one line each)."""
        return list(self._load_warnings) + list(self._compile().warnings)

    # -- export ---------------------------------------------------------------------------------------------
    def to_card_book(self) -> dict[str, Any]:
        """The book as a card ``character_book``. A book read from a card book comes back equal unless edited (only
        changed fields are rewritten, unknown keys kept); World Info entries are converted as ST's
        ``convertWorldInfoToCharacterBook`` (``use_regex: true``, extras in ``extensions``)."""
        if self._kind == "card" and self._raw is not None:
            out = copy.deepcopy(self._raw)
            cur, parsed = self._book_values(), self._parsed or {}
            for f, key in (("name", "name"), ("scan_depth", "scan_depth"), ("description", "description"),
                           ("token_budget", "token_budget"), ("recursive", "recursive_scanning"),
                           ("extensions", "extensions")):
                if cur[f] != parsed.get(f):
                    out[key] = copy.deepcopy(cur[f])
        else:
            out = {"name": self.name}
        out["entries"] = [_export_entry(e, "card") for e in self.entries]
        return out

    def to_world_info(self) -> dict[str, Any]:
        """The book as a SillyTavern World Info file. A book read from one comes back equal unless edited (same
        entry keys, only changed fields rewritten); card entries are converted as ST's ``convertCharacterBook``
        (WI template fields filled), and a book read from a card carries ``originalData`` (the card book) as ST's
        import does."""
        if self._kind == "wi" and self._raw is not None:
            out = copy.deepcopy(self._raw)
        else:
            out = {}
        keys = list(self._entry_keys or [])
        raw_entries = (self._raw or {}).get("entries") if self._kind == "wi" else None
        key_of = {id(v): k for k, v in raw_entries.items()} if isinstance(raw_entries, dict) else {}
        entries: dict[str, Any] = {}
        for e in self.entries:
            k = str(e.uid)
            if e._kind == "wi" and e._raw is not None and e._parsed is not None and e._parsed.get("uid") == e.uid:
                # keep the key the entry was read under (it may differ from str(uid) in hand-made files)
                k = key_of.get(id(e._raw), k)
            entries[k] = _export_entry(e, "wi")
        if keys and set(keys) == set(entries):
            entries = {k: entries[k] for k in keys}
        out["entries"] = entries
        if self._kind == "card":
            out["originalData"] = self.to_card_book()
        return out

    # -- compile --------------------------------------------------------------------------------------------
    def invalidate(self) -> None:
        """Drop the compiled matchers (after editing entry lists in place)."""
        self._compiled = None

    def _signature(self) -> tuple:
        return (_EDITS[0], id(self.entries), len(self.entries), tuple(map(id, self.entries)))

    def _compile(self) -> _Compiled:
        sig = self._signature()
        c = self._compiled
        if c is not None and c.sig == sig:
            return c
        c = _Compiled()
        c.sig = sig
        c.warnings = []
        ranks = self._source_ranks()
        recs: list[_Rec] = []
        book_seg: dict[str, int] = {}
        for i, e in enumerate(self.entries):
            r = _Rec()
            r.entry, r.list_index = e, i
            r.enabled = e.enabled
            r.constant = e.constant
            r.dur = e.delay_until_recursion
            r.exclude, r.prevent = e.exclude_recursion, e.prevent_recursion
            r.scan_depth = e.scan_depth
            r.cs = self.case_sensitive if e.case_sensitive is None else e.case_sensitive
            r.whole = self.match_whole_words if e.match_whole_words is None else e.match_whole_words
            r.primary = tuple(_Key(k, r.cs, r.whole) for k in e.keys)
            r.secondary = tuple(_Key(k, r.cs, r.whole) for k in e.secondary_keys)
            r.check_secondary = bool(e.selective and e.secondary_keys)
            r.logic = e.selective_logic
            decos, r.body = _parse_decorators(e.content)
            r.deco_activate = "@@activate" in decos
            r.deco_dont = "@@dont_activate" in decos
            r.group_raw = e.group
            r.groups = tuple(g for g in re.split(r",\s*", e.group) if g) if e.group else ()
            r.group_override, r.group_weight = e.group_override, e.group_weight
            r.use_group_scoring = e.use_group_scoring
            r.probability, r.use_prob = e.probability, e.use_probability
            r.sticky, r.cooldown, r.delay = e.sticky, e.cooldown, e.delay
            r.order = e.order
            r.ignore_budget = e.ignore_budget
            book = e.book or self.name
            r.tkey = f"{book}.{e.uid}"
            r.book = book
            r._hash = None
            r.scan_flags = tuple(f for f in GLOBAL_SCAN_FIELDS if getattr(e, "match_" + f))
            cf = e.character_filter or {}
            names = cf.get("names") if isinstance(cf.get("names"), list) else []
            r.char_names = tuple(str(n) for n in names)
            r.char_exclude = _truthy(cf.get("isExclude"))
            r.special = bool(r.char_names or r.dur or r.exclude or r.deco_activate or r.deco_dont or r.constant)
            for k in r.primary + r.secondary:
                if isinstance(k.matcher, _Refused) and k.matcher.reason not in c.warnings:
                    c.warnings.append(k.matcher.reason)
            seg = book_seg.setdefault(book, len(book_seg))
            # ST "evenly" merges global before character lore, then sorts (stable) by order
            sub = (0 if e.source == "global" else 1) if self.strategy == 0 else 0
            r.pos = (ranks.get(e.source, ranks["card"]), -e.order, sub, seg, e.uid, i)
            recs.append(r)
        recs.sort(key=lambda x: x.pos)
        for n, r in enumerate(recs):
            r.pos = n
        c.recs = recs
        c.active = [r for r in recs if r.enabled]
        c._by_hash = None
        c.any_cs = any(k.si in (0, 2, 4) for r in c.active for k in r.primary)
        c.delayed = [r for r in c.active if r.delay]
        c.levels = sorted({r.dur for r in recs if r.dur})  # ST collects the levels over all entries
        self._compiled = c
        return c

    def _source_ranks(self) -> dict[str, int]:
        if self.strategy == 0:
            return {"chat": 0, "persona": 1, "card": 2, "global": 2, "": 2}
        if self.strategy == 2:
            return {"chat": 0, "persona": 1, "global": 2, "card": 3, "": 3}
        return {"chat": 0, "persona": 1, "card": 2, "global": 3, "": 2}

    # -- activation -----------------------------------------------------------------------------------------
    def activate(self, messages: Sequence[Union[ScanMessage, str]]) -> list[LoreEntry]:
        """Non-constant entries activated for ``messages`` (oldest first; the newest ``scan_depth`` are scanned), in
        book order — the full :meth:`activate_detailed` semantics without timed state or budget (``chat_length`` =
        ``len(messages)``). Constant entries are not returned here (they are always in the system prompt); disabled
        entries never."""
        res = self.activate_detailed(messages, dry_run=True)
        return res.keyed(self.entries)

    def constants(self) -> list[LoreEntry]:
        """Enabled constant (常驻) entries, in book order."""
        return [e for e in self.entries if e.enabled and e.constant]

    def activate_detailed(
        self,
        messages: Sequence[Union[ScanMessage, str]],
        *,
        timed: Optional[TimedEffects] = None,
        chat_length: Optional[int] = None,
        rng: Any = None,
        budget_tokens: Optional[int] = None,
        substitute: Optional[Callable[[str], str]] = None,
        dry_run: bool = False,
        character: Optional[str] = None,
        inject: Sequence[str] = (),
        global_scan: Optional[dict[str, str]] = None,
    ) -> ActivationResult:
        """Run SillyTavern's ``checkWorldInfo`` over ``messages`` (oldest first, as ScanMessage or ready "Name: text"
        strings; only the newest ``scan_depth`` — or an entry's ``scan_depth`` — are read, so passing the whole chat
        costs nothing).

        ``timed``: the state from the previous run on this branch (None = none); ``chat_length``: number of messages
        in the chat (default ``len(messages)``) — sticky/cooldown/delay count in it; ``rng``: ``random.Random``-like
        or a callable returning [0, 1) for probability and group rolls (default :func:`random.random`);
        ``budget_tokens``: the world-info budget in (approximate) tokens, None = unlimited (see
        :func:`budget_from_context`); ``substitute``: macro function applied to keys and to content before it is
        scanned/counted (ST's ``substituteParams``); ``dry_run``: sticky/cooldown are neither read nor written (ST's
        dry run) and ``timed`` comes back unchanged; ``character``: checked against entries' character filters (by
        name or avatar file name; None = filters ignored); ``inject``: extra prompts scanned like ST's extension
        prompts flagged "scan" (Author's Note…); ``global_scan``: texts for the entries' ``match_*`` opt-ins, keys
        from :data:`GLOBAL_SCAN_FIELDS`. Never raises for content; a regex key that cannot be used never matches and
        is listed in ``warnings``.
        """
        comp = self._compile()
        chat_len = len(messages) if chat_length is None else int(chat_length)
        roll = _rng_fn(rng)
        state = TimedEffects() if timed is None else timed.model_copy(deep=True)
        sticky_on: set[int] = set()
        cooldown_on: set[int] = set()
        if not dry_run and (state.sticky or state.cooldown):
            self._check_timed(state, comp, chat_len, sticky_on, cooldown_on)
        delay_on = {r.pos for r in comp.delayed if chat_len < r.delay}
        buf = _Buffer(messages, self.include_names, inject, global_scan)

        activated: dict[int, _Rec] = {}
        reasons: dict[int, ActivationReason] = {}
        failed: set[int] = set()
        levels = list(comp.levels)
        cur_level = levels.pop(0) if levels else 0
        scan, count, skew, rec_steps = _INITIAL, 0, 0, 0
        overflowed = False
        all_weight = 0.0
        budget = budget_tokens
        warnings: list[str] = []
        recursive = self.recursive

        while scan:
            if self.max_recursion_steps and self.max_recursion_steps <= count:
                break
            count += 1
            if scan == _RECURSION:
                rec_steps += 1
            depth = self.scan_depth + skew
            default_hay = buf.hay(depth, scan)
            any_cs = comp.any_cs
            d_sets = default_hay.probe_sets(any_cs)
            now: list[tuple[_Rec, ActivationReason]] = []
            # the skip rules that do not depend on the pass, as one set (ST: active, failed roll, delay, cooldown)
            skip = set(activated)
            skip |= failed
            skip |= delay_on
            skip |= cooldown_on - sticky_on
            for r in comp.active:
                p = r.pos
                if p in skip:
                    continue
                is_sticky = p in sticky_on if sticky_on else False
                if r.special or is_sticky:
                    if r.char_names and character is not None:
                        inc = character in r.char_names or f"{character}.png" in r.char_names
                        if (inc if r.char_exclude else not inc):
                            continue
                    if r.dur and not is_sticky:
                        if scan != _RECURSION or r.dur > cur_level:
                            continue
                    if scan == _RECURSION and recursive and r.exclude and not is_sticky:
                        continue
                    if r.deco_activate:
                        now.append((r, self._reason(r, "decorator", count, scan, rec_steps, cur_level)))
                        continue
                    if r.deco_dont:
                        continue
                    if r.constant:
                        now.append((r, self._reason(r, "constant", count, scan, rec_steps, cur_level)))
                        continue
                    if is_sticky:
                        now.append((r, self._reason(r, "sticky", count, scan, rec_steps, cur_level)))
                        continue
                if not r.primary:
                    continue
                if r.scan_depth is None and not r.scan_flags:
                    hay, sets = default_hay, d_sets
                else:
                    hay = buf.hay(depth if r.scan_depth is None else r.scan_depth, scan, r.scan_flags)
                    sets = hay.probe_sets(any_cs)
                hit = None
                for k in r.primary:
                    si = k.si
                    if si >= 0:
                        if k.probe not in sets[si]:
                            continue
                        m = k.matcher
                    else:
                        m = k.matcher if not k.dynamic else k.get(substitute, r.cs, r.whole)
                        if m is None:
                            continue
                    at = m.find(hay)
                    if at >= 0:
                        hit = (k, m, at)
                        break
                    if m.kind == "refused" and m.reason not in warnings:
                        warnings.append(m.reason)
                if hit is None:
                    continue
                sec_key: Optional[str] = None
                if r.check_secondary:
                    ok, sec_key = self._secondary(r, hay, substitute)
                    if not ok:
                        continue
                reason = self._reason(r, "key", count, scan, rec_steps, cur_level)
                reason.key = hit[0].text
                if r.check_secondary:
                    reason.logic = LOGIC_NAMES.get(r.logic, str(r.logic))
                    reason.secondary_key = sec_key
                self._where(reason, hay.locate(hit[2], hit[1].lowered))
                now.append((r, reason))

            # sticky first, then processing order (ST sorts by sortedEntries index)
            now.sort(key=lambda x: (x[0].pos not in sticky_on, x[0].pos))
            new = [r for r, _ in now]
            why = {r.pos: reason for r, reason in now}
            self._filter_groups(new, activated, buf, scan, depth, sticky_on, cooldown_on, delay_on, roll, substitute)

            new_weight = 0.0
            ignores = sum(1 for r in new if r.ignore_budget)
            for r in new:
                if r.ignore_budget:
                    ignores -= 1
                if overflowed and not r.ignore_budget:
                    if ignores > 0:
                        continue
                    break
                if r.use_prob and r.probability != 100 and r.pos not in sticky_on:
                    if roll() * 100 > r.probability:
                        failed.add(r.pos)
                        continue
                body = substitute(r.body) if substitute else r.body
                new_weight += _token_weight(body) + 0.25
                if (not r.ignore_budget and budget is not None
                        and math.ceil(all_weight) + math.ceil(new_weight) >= budget):
                    overflowed = True
                    continue
                activated[r.pos] = r
                reasons[r.pos] = why[r.pos]

            successful = [r for r in new if r.pos not in failed]
            for_recursion = [r for r in successful if not r.prevent]
            nxt = 0
            if recursive and not overflowed and for_recursion:
                nxt = _RECURSION
            if recursive and not overflowed and scan == _MIN_ACTIVATIONS and buf.recurse:
                nxt = _RECURSION
            if not nxt and not overflowed and self.min_activations > 0 and len(activated) < self.min_activations:
                d_now = self.scan_depth + skew
                cap = self.min_activations_depth_max
                over = (cap > 0 and d_now > cap) or d_now > len(messages)
                if not over:
                    nxt = _MIN_ACTIVATIONS
                    skew += 1
            if not nxt and levels:
                nxt = _RECURSION
                cur_level = levels.pop(0)
            scan = nxt
            if scan:
                pieces = [(substitute(r.body) if substitute else r.body, r) for r in for_recursion]
                text = "\n".join(t for t, _ in pieces)
                if text:
                    buf.add_recurse(pieces)
                    all_weight += _token_weight(text) + 0.25

        if not dry_run:
            for r in activated.values():
                for kind in ("sticky", "cooldown"):
                    n = getattr(r, kind)
                    store = getattr(state, kind)
                    if n and r.tkey not in store:
                        store[r.tkey] = TimedEffect(hash=r.hash, start=chat_len, end=chat_len + n)

        # ST placement: sort by order descending (stable over activation order), then unshift → reverse
        placed = sorted(activated.values(), key=lambda r: -r.order)[::-1]
        tokens = sum(approx_tokens(substitute(r.body) if substitute else r.body) for r in placed)
        return ActivationResult(
            entries=[r.entry for r in placed], reasons=[reasons[r.pos] for r in placed], timed=state,
            tokens=tokens, budget_overflowed=overflowed, steps=count, warnings=warnings,
        )

    # -- activation helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _reason(r: _Rec, kind: str, step: int, scan: int, rec_steps: int, level: int) -> ActivationReason:
        e = r.entry
        return ActivationReason(uid=e.uid, title=e.display_title, book=e.book, source=e.source, kind=kind,
                                step=step, scan=_SCAN_NAMES[scan], recursion_level=rec_steps, delay_level=level)

    @staticmethod
    def _where(reason: ActivationReason, label: tuple) -> None:
        if label[0] == "msg":
            reason.message_index = label[1]
            reason.matched_in = "message"
        elif label[0] == "entry" and label[1] is not None:
            src = label[1].entry
            reason.matched_in = "recursion"
            reason.via_uid, reason.via_title, reason.via_book = src.uid, src.display_title, src.book
        elif label[0] == "global":
            reason.matched_in = f"global:{label[1]}"
        elif label[0] == "inject":
            reason.matched_in = "inject"

    @staticmethod
    def _secondary(r: _Rec, hay: _Hay, substitute: Optional[Callable[[str], str]]) -> tuple[bool, Optional[str]]:
        """ST ``matchSecondaryKeys``: (activates, deciding key)."""
        logic = r.logic
        any_hit, all_hit = False, True
        for k in r.secondary:
            m = k.get(substitute, r.cs, r.whole)
            hit = m is not None and m.find(hay) >= 0
            if hit:
                any_hit = True
            else:
                all_hit = False
            if logic == AND_ANY and hit:
                return True, k.text
            if logic == NOT_ALL and not hit:
                return True, k.text
        if logic == NOT_ANY and not any_hit:
            return True, None
        if logic == AND_ALL and all_hit:
            return True, None
        return False, None

    def _score(self, r: _Rec, hay: _Hay) -> int:
        """ST ``getScore``: matching primary keys (+ secondary for AND_ANY, + all secondary for AND_ALL when all
        match). Keys are used as written (ST does not substitute or trim them here)."""
        if not r.primary:
            return 0
        prim = sum(1 for k in r.entry.keys if compile_key(k, r.cs, r.whole).find(hay) >= 0)
        sec_keys = r.entry.secondary_keys
        sec = sum(1 for k in sec_keys if compile_key(k, r.cs, r.whole).find(hay) >= 0)
        if sec_keys:
            if r.logic == AND_ANY:
                return prim + sec
            if r.logic == AND_ALL:
                return prim + sec if sec == len(sec_keys) else prim
        return prim

    def _filter_groups(self, new: list[_Rec], activated: dict[int, _Rec], buf: _Buffer, scan: int, depth: int,
                       sticky_on: set[int], cooldown_on: set[int], delay_on: set[int], roll: Callable[[], float],
                       substitute: Optional[Callable[[str], str]]) -> None:
        """ST ``filterByInclusionGroups`` (in place on ``new``)."""
        grouped: dict[str, list[_Rec]] = {}
        for r in new:
            for g in r.groups:
                grouped.setdefault(g, []).append(r)
        if not grouped:
            return

        def remove(r: Optional[_Rec]) -> None:
            if r is not None and r in new:
                new.remove(r)

        def remove_all_but(group: list[_Rec], chosen: Optional[_Rec]) -> None:
            for r in group:
                if r is not chosen:
                    remove(r)

        has_sticky: dict[str, bool] = {}
        for key, group in grouped.items():
            stickies = [r for r in group if r.pos in sticky_on]
            has_sticky[key] = bool(stickies)
            if stickies:
                for r in group:
                    if r not in stickies:
                        remove(r)
            for r in group:
                if r.pos in cooldown_on or r.pos in delay_on:
                    remove(r)
        for key, group in grouped.items():
            if not self.use_group_scoring and not any(r.use_group_scoring for r in group):
                continue
            if has_sticky[key]:
                continue
            scores = [self._score(r, buf.hay(depth if r.scan_depth is None else r.scan_depth, scan, r.scan_flags))
                      for r in group]
            best = max(scores)
            i = 0
            while i < len(group):
                own = group[i].use_group_scoring
                scored = own if own is not None else self.use_group_scoring
                if scored and scores[i] < best:
                    remove(group[i])
                    del group[i]
                    del scores[i]
                    continue
                i += 1
        for key, group in grouped.items():
            if has_sticky[key]:
                continue
            if any(r.group_raw == key for r in activated.values()):
                remove_all_but(group, None)
                continue
            if len(group) <= 1:
                continue
            prios = sorted((r for r in group if r.group_override), key=lambda r: -r.order)
            if prios:
                remove_all_but(group, prios[0])
                continue
            total = sum(r.group_weight for r in group)
            value = roll() * total
            acc = 0
            winner = None
            for r in group:
                acc += r.group_weight
                if value <= acc:
                    winner = r
                    break
            if winner is None:
                continue
            remove_all_but(group, winner)

    @staticmethod
    def _check_timed(state: TimedEffects, comp: _Compiled, chat_len: int, sticky_on: set[int],
                     cooldown_on: set[int]) -> None:
        """ST ``WorldInfoTimedEffects.checkTimedEffects`` (sticky first; an ended sticky starts its cooldown)."""
        for kind in ("sticky", "cooldown"):
            store: dict[str, TimedEffect] = getattr(state, kind)
            for key, eff in list(store.items()):
                rec = comp.by_hash.get(eff.hash)
                if chat_len <= eff.start and not eff.protected:
                    del store[key]
                    continue
                if rec is None:
                    if chat_len >= eff.end:
                        del store[key]
                    continue
                if not getattr(rec, kind):
                    del store[key]
                    continue
                if chat_len >= eff.end:
                    del store[key]
                    if kind == "sticky" and rec.cooldown:
                        state.cooldown[rec.tkey] = TimedEffect(hash=rec.hash, start=chat_len,
                                                               end=chat_len + rec.cooldown, protected=True)
                        cooldown_on.add(rec.pos)
                    continue
                (sticky_on if kind == "sticky" else cooldown_on).add(rec.pos)

    # -- index / tools --------------------------------------------------------------------------------------
    def index_titles(self) -> list[str]:
        """Titles of all enabled non-constant entries, book order (the 【设定集索引】)."""
        return [e.display_title for e in self.entries if e.enabled and not e.constant]

    def search(self, query: str, limit: int = 8) -> list[LoreHit]:
        """Rank entries for ``query`` (terms split on whitespace): per term, title equal +5 (title contains or is
        contained +3), a key equal to / contained in the term +3, each occurrence in the content +1 (at most 3).
        Entries scoring 0 are left out; ties keep book order. Constant entries are searchable."""
        terms = [t for t in query.lower().split() if t]
        scored: list[tuple[int, int, LoreEntry]] = []
        for idx, e in enumerate(self.entries):
            if not e.enabled:
                continue
            title = e.display_title.lower()
            keys = [k.lower() for k in e.keys]
            content = e.content.lower()
            score = 0
            for t in terms:
                if title == t:
                    score += 5
                elif title and (title in t or t in title):
                    score += 3
                if any(k == t or (len(k) >= 2 and k in t) for k in keys):
                    score += 3
                score += min(3, content.count(t))
            if score > 0:
                scored.append((score, idx, e))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [LoreHit(title=e.display_title, score=s, content=e.content) for s, _, e in scored[: max(1, limit)]]

    def list_titles(self) -> list[str]:
        """Every enabled title in book order; constant entries marked 「（常驻）」 (seed round 2 lorebook_list)."""
        return [e.display_title + ("（常驻）" if e.constant else "") for e in self.entries if e.enabled]


def merge_books(books: Iterable[Lorebook]) -> Lorebook:
    """One book from several (card, chat, global), entries concatenated in that order (the entries keep their
    ``book``/``source``, so activation still processes chat lore first and the UI can say where an entry came
    from). Scan settings come from the first book; ``scan_depth`` is the largest."""
    books = list(books)
    first = books[0] if books else Lorebook()
    out = Lorebook(name=" + ".join(b.name for b in books if b.name), recursive=first.recursive,
                   case_sensitive=first.case_sensitive, match_whole_words=first.match_whole_words,
                   include_names=first.include_names, use_group_scoring=first.use_group_scoring,
                   max_recursion_steps=first.max_recursion_steps, min_activations=first.min_activations,
                   min_activations_depth_max=first.min_activations_depth_max, strategy=first.strategy)
    for b in books:
        for e in b.entries:
            if not e.book and b.name:
                e.book = b.name
            if not e.source and b.source:
                e.source = b.source
        out.entries.extend(b.entries)
        out.scan_depth = max(out.scan_depth, b.scan_depth) if out.entries else b.scan_depth
    return out
