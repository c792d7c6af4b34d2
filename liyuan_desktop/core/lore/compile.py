"""A book compiled for activation: every entry as a :class:`_Rec` (keys compiled to matchers with a prefilter probe,
settings resolved against the book's, decorators parsed) in SillyTavern's processing order (``getSortedEntries``:
chat lore, persona lore, then card/global by ``strategy``, each by ``order`` descending; ties: books in merge order,
then uid). :func:`compile_book` builds it; :class:`~.lorebook.Lorebook` caches it until an edit.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Callable, Optional

from .formats import _truthy
from .keys import _Matcher, _Plain, _Refused, compile_key
from .model import _ASCII_WORD, GLOBAL_SCAN_FIELDS, LoreEntry, _parse_decorators

if TYPE_CHECKING:  # type only: the Lorebook model holds the cache of what this builds
    from .lorebook import Lorebook


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



def source_ranks(strategy: int) -> dict[str, int]:
    """Rank of each book source in processing order for the book's ``strategy`` (0 evenly, 1 character first,
    2 global first); chat and persona lore always come first (ST ``getSortedEntries``)."""
    if strategy == 0:
        return {"chat": 0, "persona": 1, "card": 2, "global": 2, "": 2}
    if strategy == 2:
        return {"chat": 0, "persona": 1, "global": 2, "card": 3, "": 3}
    return {"chat": 0, "persona": 1, "card": 2, "global": 3, "": 2}


def compile_book(lb: "Lorebook", sig: tuple) -> _Compiled:
    """Prepare every entry of the book ``lb`` for activation, sorted in processing order; ``sig`` is stored so the
    caller can tell when the book changed. Unusable regex keys are collected in ``warnings`` (Chinese, one line
    each)."""
    c = _Compiled()
    c.sig = sig
    c.warnings = []
    ranks = source_ranks(lb.strategy)
    recs: list[_Rec] = []
    book_seg: dict[str, int] = {}
    for i, e in enumerate(lb.entries):
        r = _Rec()
        r.entry, r.list_index = e, i
        r.enabled = e.enabled
        r.constant = e.constant
        r.dur = e.delay_until_recursion
        r.exclude, r.prevent = e.exclude_recursion, e.prevent_recursion
        r.scan_depth = e.scan_depth
        r.cs = lb.case_sensitive if e.case_sensitive is None else e.case_sensitive
        r.whole = lb.match_whole_words if e.match_whole_words is None else e.match_whole_words
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
        book = e.book or lb.name
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
        sub = (0 if e.source == "global" else 1) if lb.strategy == 0 else 0
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
    return c
