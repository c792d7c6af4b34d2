"""A book compiled for activation: the entries in SillyTavern's processing order (``getSortedEntries``: chat lore,
persona lore, then card/global by ``strategy``, each by ``order`` descending; ties: books in merge order, then uid),
each prepared on demand as a :class:`_Rec` (keys compiled to matchers, settings resolved against the book's,
decorators parsed), and a :class:`_KeyIndex` — Aho–Corasick automata over every literal key — so a scan pass looks
only at the entries whose key text occurs in the scan text (plus constants, decorators and regex/macro keys): the
cost of a pass follows the text and the hits, not the size of the book (issue 15 item 10: a 50,000-entry book).
:func:`compile_book` builds it; :class:`~.lorebook.Lorebook` caches it until an edit.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Callable, Optional

from .formats import _truthy
from .keys import _Matcher, _Plain, _Refused, compile_key
from .model import GLOBAL_SCAN_FIELDS, LoreEntry, _parse_decorators

if TYPE_CHECKING:  # type only: the Lorebook model holds the cache of what this builds
    from .lorebook import Lorebook
    from .scan import _Hay


class _Key:
    """A key of an entry: its text as written, the compiled matcher, and ``dynamic`` (macros / legacy ``<USER>`` tags:
    substituted per run)."""

    __slots__ = ("text", "matcher", "dynamic")

    def __init__(self, text: str, cs: bool, whole: bool):
        self.text = text
        self.dynamic = _dynamic(text)
        self.matcher = compile_key(text.strip(), cs, whole)

    def get(self, substitute: Optional[Callable[[str], str]], cs: bool, whole: bool) -> Optional[_Matcher]:
        if self.dynamic and substitute is not None:
            t = substitute(self.text)
            return compile_key(t.strip(), cs, whole) if t else None
        return self.matcher


def _dynamic(text: str) -> bool:
    return "{{" in text or "<" in text


class _Rec:
    """An entry prepared for activation (keys compiled, settings resolved). Built on demand by
    :meth:`_Compiled.rec` — only for the entries a scan pass looks at."""

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


class _KeyIndex:
    """Every literal (plain, macro-free, non-empty) primary key of the active entries in two Aho–Corasick automata —
    lower-cased needles searched in the lower-cased scan text, case-sensitive ones in the text as written — so one
    pass over the scan text names the entries whose key text occurs in it, however many entries the book has.

    A hit only makes an entry a *candidate*: its keys are then matched by the same matchers as always (whole words,
    secondary keys …), so the index changes no result. ``owners[g]`` maps a needle id to the processing positions
    of the entries of hay group ``g`` (``groups[g]`` = (own scan depth or None, opt-in scan fields)) holding it;
    ``always`` lists the active entries that must be looked at in every pass (constants, ``@@`` decorators, regex,
    macro or empty keys). ``maxlen``: the longest needle (characters), for scanning only text added since the last
    pass (:meth:`.scan._Buffer.key_hits`)."""

    __slots__ = ("ac_low", "ac_raw", "maxlen", "owners", "groups", "always")

    def scan(self, hay: "_Hay", low_from: int = 0, raw_from: int = 0) -> set[int]:
        """Ids of the needles that occur in ``hay`` in a match ending at or after offset ``low_from`` of its
        lower-cased copy / ``raw_from`` of its text as written (0, 0: the whole text). Time linear in the text
        scanned plus the matches, independent of the number of needles."""
        out: set[int] = set()
        if self.ac_low is not None:
            out.update(v for _, v in self.ac_low.iter(hay.low, max(0, low_from - self.maxlen + 1)))
        if self.ac_raw is not None:
            out.update(v for _, v in self.ac_raw.iter(hay.raw, max(0, raw_from - self.maxlen + 1)))
        return out


class _Compiled:
    """A book prepared for activation: the entries in processing order (``order[p]`` = index into ``entries`` of
    position ``p``), the per-entry :class:`_Rec` built lazily (:meth:`rec`), the key index (:class:`_KeyIndex`,
    None without the ``ahocorasick`` module: then every active entry is looked at, as before) and the few lists the
    scan needs up front (constants, delayed entries, delay-until-recursion levels, entries with timed effects)."""

    __slots__ = ("sig", "entries", "order", "_recs", "cs", "whole", "name", "warnings", "_by_hash", "active_pos",
                 "constants", "delayed", "levels", "timed_pos", "index")

    def rec(self, p: int) -> _Rec:
        """The prepared entry at processing position ``p`` (built on first use, then kept)."""
        r = self._recs[p]
        if r is None:
            r = self._recs[p] = _make_rec(self, p)
        return r

    @property
    def recs(self) -> list[_Rec]:
        """Every entry prepared, processing order (builds them all: tests and small books only)."""
        return [self.rec(p) for p in range(len(self.order))]

    @property
    def active(self) -> list[_Rec]:
        """The enabled entries prepared, processing order (builds them all)."""
        return [self.rec(p) for p in self.active_pos]

    @property
    def by_hash(self) -> dict[str, "_Rec"]:
        """Entries with sticky or cooldown by :attr:`_Rec.hash` (first in processing order wins); a timed effect
        is only ever recorded for such an entry and the hash covers both values, so no other entry can match."""
        if self._by_hash is None:
            self._by_hash = {}
            for p in self.timed_pos:
                r = self.rec(p)
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


def _make_rec(c: _Compiled, p: int) -> _Rec:
    i = c.order[p]
    e = c.entries[i]
    r = _Rec()
    r.pos, r.entry, r.list_index = p, e, i
    r.enabled = e.enabled
    r.constant = e.constant
    r.dur = e.delay_until_recursion
    r.exclude, r.prevent = e.exclude_recursion, e.prevent_recursion
    r.scan_depth = e.scan_depth
    r.cs = c.cs if e.case_sensitive is None else e.case_sensitive
    r.whole = c.whole if e.match_whole_words is None else e.match_whole_words
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
    book = e.book or c.name
    r.tkey = f"{book}.{e.uid}"
    r.book = book
    r._hash = None
    r.scan_flags = tuple(f for f in GLOBAL_SCAN_FIELDS if getattr(e, "match_" + f))
    cf = e.character_filter or {}
    names = cf.get("names") if isinstance(cf.get("names"), list) else []
    r.char_names = tuple(str(n) for n in names)
    r.char_exclude = _truthy(cf.get("isExclude"))
    r.special = bool(r.char_names or r.dur or r.exclude or r.deco_activate or r.deco_dont or r.constant)
    return r


_MATCH_FLAGS = tuple("match_" + f for f in GLOBAL_SCAN_FIELDS)


def compile_book(lb: "Lorebook", sig: tuple) -> _Compiled:
    """Prepare the book ``lb`` for activation: entries sorted in processing order, the key index built (its automata
    come from the on-disk cache when this set of needles was seen before, :func:`.bookcache.automaton`), refused
    regex keys collected in ``warnings`` (Chinese, one line each). ``sig`` is stored so the caller can tell when the
    book changed. One pass over the entries reading plain fields; the per-entry matchers are built only for the
    entries a scan looks at (:meth:`_Compiled.rec`)."""
    c = _Compiled()
    c.sig = sig
    c.warnings = []
    c.entries = entries = lb.entries
    c.cs, c.whole, c.name = lb.case_sensitive, lb.match_whole_words, lb.name
    ranks = source_ranks(lb.strategy)
    card_rank = ranks["card"]
    book_seg: dict[str, int] = {}
    keys: list[tuple] = []
    for i, e in enumerate(entries):
        book = e.book or lb.name
        seg = book_seg.get(book)
        if seg is None:
            seg = book_seg[book] = len(book_seg)
        # ST "evenly" merges global before character lore, then sorts (stable) by order
        sub = (0 if e.source == "global" else 1) if lb.strategy == 0 else 0
        keys.append((ranks.get(e.source, card_rank), -e.order, sub, seg, e.uid, i))
    keys.sort()
    c.order = order = [k[5] for k in keys]
    c._recs = [None] * len(order)
    c._by_hash = None
    active_pos: list[int] = []
    constants: list[int] = []
    delayed: list[tuple[int, int]] = []
    timed_pos: list[int] = []
    levels: set[int] = set()
    always: list[int] = []
    groups: dict[tuple, int] = {(None, ()): 0}
    owners: list[dict[int, list[int]]] = [{}]
    needles: tuple[dict[str, int], dict[str, int]] = ({}, {})  # lower-cased, case-sensitive → needle id
    book_cs, book_whole = lb.case_sensitive, lb.match_whole_words
    warnings = c.warnings
    for p, i in enumerate(order):
        e = entries[i]
        if e.delay_until_recursion:
            levels.add(e.delay_until_recursion)
        if e.sticky or e.cooldown:
            timed_pos.append(p)
        cs = book_cs if e.case_sensitive is None else e.case_sensitive
        for k in e.keys:
            if k.lstrip().startswith("/"):
                _regex_warning(k, cs, book_whole if e.match_whole_words is None else e.match_whole_words, warnings)
        for k in e.secondary_keys:
            if k.lstrip().startswith("/"):
                _regex_warning(k, cs, book_whole if e.match_whole_words is None else e.match_whole_words, warnings)
        if not e.enabled:
            continue
        active_pos.append(p)
        if e.delay:
            delayed.append((p, e.delay))
        if e.constant:
            constants.append(p)
            always.append(p)
            continue
        if e.content.startswith("@@"):
            always.append(p)
            continue
        if not e.keys:
            continue  # activates only while sticky
        found: list[tuple[int, int]] = []
        for k in e.keys:
            t = k.strip()
            if not t or _dynamic(k):
                found = []
                break
            if t.startswith("/"):
                m = compile_key(t, cs, book_whole if e.match_whole_words is None else e.match_whole_words)
                if not isinstance(m, _Plain):
                    found = []
                    break
            which = 1 if cs else 0
            n = t if cs else t.lower()
            ids = needles[which]
            nid = ids.get(n)
            if nid is None:
                nid = ids[n] = len(ids)
            found.append((which, nid))
        if not found:
            always.append(p)
            continue
        g = 0
        if e.scan_depth is not None or any(getattr(e, f) for f in _MATCH_FLAGS):
            gk = (e.scan_depth, tuple(f for f in GLOBAL_SCAN_FIELDS if getattr(e, "match_" + f)))
            g = groups.get(gk, -1)
            if g < 0:
                g = groups[gk] = len(owners)
                owners.append({})
        own = owners[g]
        for which, nid in found:
            key = nid if which == 0 else ~nid
            lst = own.get(key)
            if lst is None:
                own[key] = [p]
            elif lst[-1] != p:
                lst.append(p)
    c.active_pos, c.constants, c.delayed, c.timed_pos = active_pos, constants, delayed, timed_pos
    c.levels = sorted(levels)  # ST collects the levels over all entries
    c.index = _build_index(needles, owners, groups, always)
    return c


def _regex_warning(k: str, cs: bool, whole: bool, warnings: list[str]) -> None:
    m = compile_key(k.strip(), cs, whole)
    if isinstance(m, _Refused) and m.reason not in warnings:
        warnings.append(m.reason)


def _build_index(needles: tuple[dict[str, int], dict[str, int]], owners: list[dict[int, list[int]]],
                 groups: dict[tuple, int], always: list[int]) -> Optional[_KeyIndex]:
    """The :class:`_KeyIndex` (None when the ``ahocorasick`` module is missing). Case-sensitive needle ids are
    stored as ``~id`` while collecting and shifted after the lower-cased ones here."""
    from .bookcache import automaton  # the cache module imports this one

    low, raw = list(needles[0]), list(needles[1])
    ac_low = automaton(low, 0) if low else None
    ac_raw = automaton(raw, len(low)) if raw else None
    if (low and ac_low is None) or (raw and ac_raw is None):
        return None
    base = len(low)
    fixed: list[dict[int, list[int]]] = []
    for own in owners:
        if any(k < 0 for k in own):
            merged: dict[int, list[int]] = {}
            for k, ps in own.items():
                kk = k if k >= 0 else base + ~k
                if kk in merged:  # cannot happen (ids are distinct per automaton), kept for safety
                    merged[kk] = sorted(set(merged[kk]) | set(ps))
                else:
                    merged[kk] = ps
            fixed.append(merged)
        else:
            fixed.append(own)
    x = _KeyIndex()
    x.ac_low, x.ac_raw = ac_low, ac_raw
    x.maxlen = max(max(map(len, low), default=1), max(map(len, raw), default=1))
    x.owners = fixed
    x.groups = [gk for gk, _ in sorted(groups.items(), key=lambda kv: kv[1])]
    x.always = always
    return x
