"""A book compiled for activation: the entries in SillyTavern's processing order (``getSortedEntries``: chat lore,
persona lore, then card/global by ``strategy``, each by ``order`` descending; ties: books in merge order, then uid),
each prepared on demand as a :class:`EntryRec` (keys compiled to matchers, settings resolved against the book's,
decorators parsed), and a :class:`KeyIndex` — Aho–Corasick automata over every literal key — so a scan pass looks
only at the entries whose key text occurs in the scan text (plus constants, decorators and regex/macro keys): the
cost of a pass follows the text and the hits, not the size of the book (issue 15 item 10: a 50,000-entry book).
:func:`compile_book` builds it; :class:`~.lorebook.Lorebook` caches it until an edit.
"""

from __future__ import annotations

import hashlib
import json
import re
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from .bookcache import automaton, gc_paused
from .formats import truthy
from .keys import Matcher, Refused, compile_key
from .model import GLOBAL_SCAN_FIELDS, LoreEntry, parse_decorators

if TYPE_CHECKING:  # type only: the Lorebook model holds the cache of what this builds
    from .lorebook import Lorebook
    from .scan import Haystack


class _Key:
    """A key of an entry: its text as written, the compiled matcher, and ``dynamic`` (macros / legacy ``<USER>`` tags:
    substituted per run)."""

    __slots__ = ("text", "matcher", "dynamic")

    def __init__(self, text: str, cs: bool, whole: bool):
        self.text = text
        self.dynamic = _dynamic(text)
        self.matcher = compile_key(text.strip(), cs, whole)

    def get(self, substitute: Optional[Callable[[str], str]], cs: bool, whole: bool) -> Optional[Matcher]:
        if self.dynamic and substitute is not None:
            t = substitute(self.text)
            return compile_key(t.strip(), cs, whole) if t else None
        return self.matcher


#: A hay group of the key index: (an entry's own scan depth or None, its opt-in scan fields).
HayGroup = tuple[Optional[int], tuple[str, ...]]


def _dynamic(text: str) -> bool:
    return "{{" in text or "<" in text


class EntryRec:
    """An entry prepared for activation (keys compiled, settings resolved). Built on demand by
    :meth:`CompiledBook.rec` — only for the entries a scan pass looks at."""

    __slots__ = ("pos", "entry", "list_index", "enabled", "constant", "dur", "exclude", "prevent", "scan_depth",
                 "primary", "secondary", "check_secondary", "logic", "deco_activate", "deco_dont", "groups",
                 "group_raw", "group_override", "group_weight", "use_group_scoring", "probability", "use_prob",
                 "sticky", "cooldown", "delay", "order", "tkey", "_hash", "body", "cs", "whole", "ignore_budget",
                 "scan_flags", "char_names", "char_exclude", "special", "book")

    pos: int  # processing position
    entry: LoreEntry
    list_index: int  # index into the book's entries
    enabled: bool
    constant: bool
    dur: int  # delay_until_recursion (0 = none, else the level)
    exclude: bool
    prevent: bool
    scan_depth: Optional[int]
    primary: tuple[_Key, ...]
    secondary: tuple[_Key, ...]
    check_secondary: bool
    logic: int
    deco_activate: bool
    deco_dont: bool
    groups: tuple[str, ...]
    group_raw: str
    group_override: bool
    group_weight: int
    use_group_scoring: Optional[bool]
    probability: int
    use_prob: bool
    sticky: int
    cooldown: int
    delay: int
    order: int
    tkey: str  # "book.uid": the key of the entry's timed effects
    _hash: Optional[str]
    body: str  # content without its decorator lines
    cs: bool
    whole: bool
    ignore_budget: bool
    scan_flags: tuple[str, ...]
    char_names: tuple[str, ...]
    char_exclude: bool
    special: bool
    book: str

    @property
    def hash(self) -> str:
        """Hash of the entry (ST keys timed effects to it: an edited entry loses its effects). Computed lazily —
        only entries with timed effects need it."""
        if self._hash is None:
            self._hash = _entry_hash(self.entry, self.book)
        return self._hash


class KeyIndex:
    """Every literal (plain, macro-free, non-empty) primary key of the active entries in two Aho–Corasick automata —
    lower-cased needles searched in the lower-cased scan text, case-sensitive ones in the text as written — so one
    pass over the scan text names the entries whose key text occurs in it, however many entries the book has.

    A hit only makes an entry a *candidate*: its keys are then matched by the same matchers as always (whole words,
    secondary keys …), so the index changes no result. ``owners[g]`` maps a needle id to the processing positions
    of the entries of hay group ``g`` (``groups[g]`` = (own scan depth or None, opt-in scan fields)) holding it;
    ``always`` lists the active entries that must be looked at in every pass (constants, ``@@`` decorators, regex,
    macro or empty keys). ``maxlen``: the longest needle (characters), for scanning only text added since the last
    pass (:meth:`.scan.ScanBuffer.key_hits`)."""

    __slots__ = ("ac_low", "ac_raw", "maxlen", "owners", "groups", "always", "low_ids", "raw_ids", "base")

    ac_low: Any  # ahocorasick.Automaton (the module has no types) or None
    ac_raw: Any
    maxlen: int
    owners: list[dict[int, list[int]]]
    groups: list[HayGroup]
    always: list[int]
    low_ids: dict[str, int]
    raw_ids: dict[str, int]
    base: int

    def scan(self, hay: "Haystack", low_from: int = 0, raw_from: int = 0) -> dict[int, list[int]]:
        """Needle id → end offsets (ascending; in the lower-cased copy for lower-cased needles, else in the text as
        written) of the occurrences in ``hay`` that end at or after ``low_from`` / ``raw_from`` (0, 0: all). Time
        linear in the text scanned plus the matches, independent of the number of needles."""
        out: dict[int, list[int]] = {}
        get = out.get
        for ac, text, start in ((self.ac_low, hay.low if self.ac_low is not None else "", low_from),
                                (self.ac_raw, hay.raw, raw_from)):
            if ac is None:
                continue
            for end, v in ac.iter(text, max(0, start - self.maxlen + 1)):
                if end >= start:  # an earlier end was found by the scan that covered it
                    lst = get(v)
                    if lst is None:
                        out[v] = [end]
                    else:
                        lst.append(end)
        return out

    def needle_id(self, needle: str, cs: bool) -> Optional[int]:
        """The id of a plain matcher's needle (as :class:`.keys._Plain` holds it), None when not indexed."""
        if cs:
            i = self.raw_ids.get(needle)
            return None if i is None else self.base + i
        return self.low_ids.get(needle)


class CompiledBook:
    """A book prepared for activation: the entries in processing order (``order[p]`` = index into ``entries`` of
    position ``p``), the per-entry :class:`EntryRec` built lazily (:meth:`rec`), the key index (:class:`KeyIndex`,
    None without the ``ahocorasick`` module: then every active entry is looked at, as before) and the few lists the
    scan needs up front (constants, delayed entries, delay-until-recursion levels, entries with timed effects)."""

    __slots__ = ("sig", "entries", "order", "_recs", "cs", "whole", "name", "_warnings", "_by_hash", "active_pos",
                 "constants", "delayed", "levels", "timed_pos", "_index", "_keyed", "_always")

    sig: tuple[object, ...]
    entries: list[LoreEntry]
    order: list[int]
    _recs: list[Optional[EntryRec]]
    cs: bool
    whole: bool
    name: str
    _warnings: Optional[list[str]]
    _by_hash: Optional[dict[str, EntryRec]]
    active_pos: list[int]
    constants: list[int]
    delayed: list[tuple[int, int]]  # (position, delay)
    levels: list[int]
    timed_pos: list[int]
    _index: Union[KeyIndex, None, Literal[False]]  # False: not built yet; None: no ahocorasick module
    _keyed: list[int]
    _always: list[int]

    @property
    def index(self) -> Optional[KeyIndex]:
        """The key index, built on first use (the first activation, not the chat's opening: the byte-stable
        constants need only the order); None without the ``ahocorasick`` module."""
        if self._index is False:
            with gc_paused():
                self._index = _index_of(self)
        return self._index

    @property
    def warnings(self) -> list[str]:
        """The regex keys (primary and secondary, every entry, processing order) that cannot be used, one line
        each (catalog messages ``lorekey.*``: Chinese text, rendered by the front ends); computed on first use
        (compiling a book's regex keys costs ~0.2 ms each)."""
        if self._warnings is None:
            out: list[str] = []
            for i in self.order:
                e = self.entries[i]
                cs = self.cs if e.case_sensitive is None else e.case_sensitive
                whole = self.whole if e.match_whole_words is None else e.match_whole_words
                for k in (*e.keys, *e.secondary_keys):
                    if "/" in k and k.lstrip().startswith("/"):
                        m = compile_key(k.strip(), cs, whole)
                        if isinstance(m, Refused) and m.reason not in out:
                            out.append(m.reason)
            self._warnings = out
        return self._warnings

    def rec(self, p: int) -> EntryRec:
        """The prepared entry at processing position ``p`` (built on first use, then kept)."""
        r = self._recs[p]
        if r is None:
            r = self._recs[p] = _make_rec(self, p)
        return r

    @property
    def recs(self) -> list[EntryRec]:
        """Every entry prepared, processing order (builds them all: tests and small books only)."""
        return [self.rec(p) for p in range(len(self.order))]

    @property
    def active(self) -> list[EntryRec]:
        """The enabled entries prepared, processing order (builds them all)."""
        return [self.rec(p) for p in self.active_pos]

    @property
    def by_hash(self) -> dict[str, "EntryRec"]:
        """Entries with sticky or cooldown by :attr:`EntryRec.hash` (first in processing order wins); a timed effect
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


def _make_rec(c: CompiledBook, p: int) -> EntryRec:
    i = c.order[p]
    e = c.entries[i]
    r = EntryRec()
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
    decos, r.body = parse_decorators(e.content)
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
    names = _v if isinstance(_v := cf.get("names"), list) else []
    r.char_names = tuple(str(n) for n in names)
    r.char_exclude = truthy(cf.get("isExclude"))
    r.special = bool(r.char_names or r.dur or r.exclude or r.deco_activate or r.deco_dont or r.constant)
    return r


def compile_book(lb: "Lorebook", sig: tuple[object, ...]) -> CompiledBook:
    """Prepare the book ``lb`` for activation: entries sorted in processing order, the key index built (its automata
    come from the on-disk cache when this set of needles was seen before, :func:`.bookcache.automaton`), refused
    regex keys collected in ``warnings`` (Chinese, one line each). ``sig`` is stored so the caller can tell when the
    book changed. One pass over the entries reading plain fields; the per-entry matchers are built only for the
    entries a scan looks at (:meth:`CompiledBook.rec`)."""
    with gc_paused():  # tens of thousands of small lists and tuples: see gc_paused
        return _compile_book(lb, sig)


def _compile_book(lb: "Lorebook", sig: tuple[object, ...]) -> CompiledBook:
    c = CompiledBook()
    c.sig = sig
    c._warnings = None
    c.entries = entries = lb.entries
    c.cs, c.whole, c.name = lb.case_sensitive, lb.match_whole_words, lb.name
    ranks = source_ranks(lb.strategy)
    card_rank = ranks["card"]
    evenly = lb.strategy == 0
    bname = lb.name
    book_seg: dict[str, int] = {}
    dicts = [e.__dict__ for e in entries]  # field values (plain reads: pydantic attribute access is slower)
    c.order = order = _processing_order(dicts, ranks, card_rank, evenly, bname, book_seg)
    c._recs = [None] * len(order)
    c._by_hash = None
    # columns of the fields the scan needs up front, read in C (operator.itemgetter) and looked at in processing
    # order; ~2x faster than reading each entry's dict field by field (a 50,000-entry book opens with this)
    def col(name: str) -> list[Any]:
        return list(map(itemgetter(name), dicts))

    dur, sticky, cooldown = col("delay_until_recursion"), col("sticky"), col("cooldown")
    levels = {x for x in dur if x}  # ST collects the levels over all entries
    timed_pos = [p for p, i in enumerate(order) if sticky[i] or cooldown[i]]
    enabled = col("enabled")
    active_pos = [p for p, i in enumerate(order) if enabled[i]]
    delay, constant, content, ekeys = col("delay"), col("constant"), col("content"), col("keys")
    constants: list[int] = []
    delayed: list[tuple[int, int]] = []
    always: list[int] = []
    keyed: list[int] = []
    for p in active_pos:
        i = order[p]
        if delay[i]:
            delayed.append((p, delay[i]))
        if constant[i]:
            constants.append(p)
            always.append(p)
        elif content[i][:2] == "@@":  # decorators (@@activate needs no key)
            always.append(p)
        elif ekeys[i]:  # no keys: activates only while sticky
            keyed.append(p)
    c.active_pos, c.constants, c.delayed, c.timed_pos = active_pos, constants, delayed, timed_pos
    c.levels = sorted(levels)  # ST collects the levels over all entries
    c._index, c._keyed, c._always = False, keyed, always
    return c


_B = 1 << 33  # room for an order or uid offset by 2**32 (ints of 32 bits either way)
_OFF = 1 << 32


def _processing_order(dicts: list[dict[str, Any]], ranks: dict[str, int], card_rank: int, evenly: bool, bname: str,
                      book_seg: dict[str, int]) -> list[int]:
    """Indices of the entries (field dicts ``dicts``) in processing order: by source rank, ``order`` descending,
    (strategy "evenly": global before character lore), book segment (merge order), uid, then list position —
    ST ``getSortedEntries``. Sorted on one integer per entry when every order and uid fits in 32 bits (a 50,000-entry
    book: a third of the time of sorting 6-tuples); a stable sort on the position keeps the last tie-break."""
    segs: list[int] = []
    seg_of = book_seg.get
    for d in dicts:
        book = d["book"] or bname
        seg = seg_of(book)
        if seg is None:
            seg = book_seg[book] = len(book_seg)
        segs.append(seg)
    n = max(1, len(book_seg))
    ints: list[int] = []  # one int per entry
    append = ints.append
    keys: Optional[list[Any]] = ints  # None: sort on tuples
    for d, sg in zip(dicts, segs):
        src = d["source"]
        o, u = d["order"], d["uid"]
        # ST "evenly" merges global before character lore, then sorts (stable) by order
        ev = (0 if src == "global" else 1) if evenly else 0
        r = ranks.get(src, card_rank)
        if type(o) is int and type(u) is int and -_OFF < o < _OFF and -_OFF <= u < _OFF:
            append(((((r * _B + (_OFF - o)) * 2 + ev) * n + sg) * _B + (u + _OFF)))
        else:
            keys = None
            break
    if keys is None:  # an order or uid beyond 32 bits: sort on tuples
        keys = [(ranks.get(d["source"], card_rank), -d["order"],
                 (0 if d["source"] == "global" else 1) if evenly else 0, sg, d["uid"]) for d, sg in zip(dicts, segs)]
    return sorted(range(len(dicts)), key=keys.__getitem__)


def constant_recs(lb: "Lorebook") -> list[EntryRec]:
    """The enabled constant entries of ``lb`` prepared as :class:`EntryRec`, in processing order — what
    :func:`compile_book` would list in ``constants`` — without compiling the whole book (one pass picking the
    constants, then the processing order of those alone: the order is a per-entry key, so it is the same order).
    The records' ``pos`` is their rank among the constants, not a processing position of the book."""
    entries = lb.entries
    dicts = [e.__dict__ for e in entries]
    picked = [i for i, d in enumerate(dicts) if d["constant"] and d["enabled"]]
    if not picked:
        return []
    bname = lb.name
    book_seg = {b: n for n, b in enumerate(dict.fromkeys(d["book"] or bname for d in dicts))}
    ranks = source_ranks(lb.strategy)
    sub = [dicts[i] for i in picked]
    order = _processing_order(sub, ranks, ranks["card"], lb.strategy == 0, bname, book_seg)
    c = CompiledBook()
    c.entries, c.cs, c.whole, c.name = entries, lb.case_sensitive, lb.match_whole_words, lb.name
    c.order = [picked[k] for k in order]
    return [_make_rec(c, p) for p in range(len(c.order))]


def _index_of(c: CompiledBook) -> Optional["KeyIndex"]:
    """The key index of ``c``: the literal primary keys of the entries that activate by keys (``c._keyed``)."""
    dicts = c.entries
    order = c.order
    always = list(c._always)
    groups: dict[HayGroup, int] = {(None, ()): 0}
    owners: list[dict[int, list[int]]] = [{}]
    low_ids: dict[str, int] = {}
    raw_ids: dict[str, int] = {}
    book_cs = c.cs
    for p in c._keyed:
        d = dicts[order[p]].__dict__
        found: list[int] = []
        cs = d["case_sensitive"]
        if cs is None:
            cs = book_cs
        ids = raw_ids if cs else low_ids
        for k in d["keys"]:
            t = k.strip()
            # macro keys change per run; a /regex/ key (even one JavaScript would reject and so match as text) is
            # decided when the entry is looked at, where its matcher is built
            if not t or "{{" in k or "<" in k or t[0] == "/":
                found = []
                break
            if not cs:
                t = t.lower()
            nid = ids.get(t)
            if nid is None:
                nid = ids[t] = len(ids)
            found.append(nid if not cs else ~nid)
        if not found:
            always.append(p)
            continue
        for k in d["secondary_keys"]:  # indexed too (no owner): their matching then reads the hit offsets
            t = k.strip()
            if t and "{{" not in k and "<" not in k and t[0] != "/":
                if not cs:
                    t = t.lower()
                if t not in ids:
                    ids[t] = len(ids)
        g = 0
        if d["scan_depth"] is not None or d["match_persona_description"] or d["match_character_description"] \
                or d["match_character_personality"] or d["match_character_depth_prompt"] or d["match_scenario"] \
                or d["match_creator_notes"]:
            gk = (d["scan_depth"], tuple(f for f in GLOBAL_SCAN_FIELDS if d["match_" + f]))
            g = groups.get(gk, -1)
            if g < 0:
                g = groups[gk] = len(owners)
                owners.append({})
        own = owners[g]
        for key in found:
            lst = own.get(key)
            if lst is None:
                own[key] = [p]
            elif lst[-1] != p:
                lst.append(p)
    always.sort()
    return _build_index((low_ids, raw_ids), owners, groups, always)


def _build_index(needles: tuple[dict[str, int], dict[str, int]], owners: list[dict[int, list[int]]],
                 groups: dict[HayGroup, int], always: list[int]) -> Optional[KeyIndex]:
    """The :class:`KeyIndex` (None when the ``ahocorasick`` module is missing). Case-sensitive needle ids are
    stored as ``~id`` while collecting and shifted after the lower-cased ones here."""

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
    x = KeyIndex()
    x.ac_low, x.ac_raw = ac_low, ac_raw
    x.maxlen = max(max(map(len, low), default=1), max(map(len, raw), default=1))
    x.owners = fixed
    x.groups = [gk for gk, _ in sorted(groups.items(), key=lambda kv: kv[1])]
    x.always = always
    x.low_ids, x.raw_ids, x.base = needles[0], needles[1], base
    return x
