"""Activation: SillyTavern's ``checkWorldInfo`` (``public/scripts/world-info.js``) over one chat — which entries of a
book are in the prompt this turn, and why. The rules (skips, keys, per-step filtering, recursion, processing order,
placement) are summarised in the package docstring (:mod:`liyuan_desktop.core.lore`); inclusion groups are in
:mod:`.groups`, sticky/cooldown in :mod:`.timed`, the scan text in :mod:`.scan`.
"""

from __future__ import annotations

import logging
import math
import random as _random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field

from ..messages import MsgText, message
from .budget import approx_tokens, token_weight
from .compile import CompiledBook, EntryRec, KeyIndex
from .groups import filter_groups
from .keys import REGEX_SEAM_MARGIN, Refused
from .model import AND_ALL, AND_ANY, LOGIC_NAMES, NOT_ALL, NOT_ANY, LoreEntry, ScanMessage
from .scan import INITIAL, MIN_ACTIVATIONS, RECURSION, SCAN_NAMES, Haystack, Label, ScanBuffer
from .timed import TimedEffects, check_timed, record_timed

if TYPE_CHECKING:  # type only: Lorebook.activate_detailed calls into this module
    from .lorebook import Lorebook

log = logging.getLogger(__name__)


#: Why an entry fired (:attr:`ActivationReason.kind`).
ReasonKind = Literal["constant", "key", "sticky", "decorator"]


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
    kind: ReasonKind
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
    ``safety_stopped``: the hard bound on one run's work stopped it (:data:`SAFETY_MAX_ENTRIES`,
    :data:`SAFETY_MAX_CHARS`; a notice is in ``warnings``); ``steps``: scan passes run; ``warnings``: refused regex
    keys met during this run, and the safety notice.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    entries: list[LoreEntry] = Field(default_factory=list)
    reasons: list[ActivationReason] = Field(default_factory=list)
    timed: TimedEffects = Field(default_factory=TimedEffects)
    tokens: int = 0
    budget_overflowed: bool = False
    safety_stopped: bool = False
    steps: int = 0
    warnings: list[MsgText] = Field(default_factory=list)  # catalog messages, their keys kept

    def reason_for(self, entry: LoreEntry) -> Optional[ActivationReason]:
        """Why ``entry`` (this very object, not an equal one) was activated, or None when it was not."""
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


def _rng_fn(rng: Any) -> Callable[[], float]:
    if rng is None:
        return _random.random
    if hasattr(rng, "random"):
        fn: Callable[[], float] = rng.random
        return fn
    if callable(rng):
        call: Callable[[], float] = rng
        return call
    raise TypeError("rng must be a random.Random-like object or a callable returning [0, 1)")


@dataclass(frozen=True)
class ActivationOptions:
    """How one world-info run is made (:func:`activate`, :meth:`.lorebook.Lorebook.activate_detailed`); the
    defaults are a plain run: no timed state, unlimited budget, :func:`random.random` rolls.

    ``timed``: the state from the previous run on this branch (None = none); ``chat_length``: number of messages
    in the chat (default ``len(messages)``) — sticky/cooldown/delay count in it; ``rng``: ``random.Random``-like
    or a callable returning [0, 1) for probability and group rolls (default :func:`random.random`);
    ``budget_tokens``: the world-info budget in (approximate) tokens, None = unlimited (see
    :func:`budget_from_context`); ``substitute``: macro function applied to keys and to content before it is
    scanned/counted (ST's ``substituteParams``); ``dry_run``: sticky/cooldown are neither read nor written (ST's
    dry run) and ``timed`` comes back unchanged; ``character``: checked against entries' character filters (by
    name or avatar file name; None = filters ignored); ``inject``: extra prompts scanned like ST's extension
    prompts flagged "scan" (Author's Note…); ``global_scan``: texts for the entries' ``match_*`` opt-ins, keys
    from :data:`GLOBAL_SCAN_FIELDS`.
    """

    timed: Optional[TimedEffects] = None
    chat_length: Optional[int] = None
    rng: Any = None
    budget_tokens: Optional[int] = None
    substitute: Optional[Callable[[str], str]] = None
    dry_run: bool = False
    character: Optional[str] = None
    inject: Sequence[str] = ()
    global_scan: Optional[dict[str, str]] = None


#: A plain run (every option at its default).
PLAIN_RUN = ActivationOptions()


def activate(book: "Lorebook", comp: CompiledBook, messages: Sequence[Union[ScanMessage, str]],
             options: ActivationOptions = PLAIN_RUN) -> ActivationResult:
    """Run SillyTavern's ``checkWorldInfo`` for ``book`` (compiled as ``comp``, see :func:`.compile.compile_book`)
    over ``messages`` (oldest first, as ScanMessage or ready "Name: text" strings; only the newest ``scan_depth`` —
    or an entry's ``scan_depth`` — are read, so passing the whole chat costs nothing), made as ``options`` says.
    Never raises for content; a regex key that cannot be used never matches and is listed in ``warnings``.
    """
    timed, chat_length, rng = options.timed, options.chat_length, options.rng
    budget_tokens, substitute, dry_run = options.budget_tokens, options.substitute, options.dry_run
    character, inject, global_scan = options.character, options.inject, options.global_scan
    chat_len = len(messages) if chat_length is None else int(chat_length)
    roll = _rng_fn(rng)
    state = TimedEffects() if timed is None else timed.model_copy(deep=True)
    sticky_on: set[int] = set()
    cooldown_on: set[int] = set()
    if not dry_run and (state.sticky or state.cooldown):
        check_timed(state, comp, chat_len, sticky_on, cooldown_on)
    delay_on = {p for p, delay in comp.delayed if chat_len < delay}
    buf = ScanBuffer(messages, book.include_names, inject, global_scan)
    idx = comp.index if _USE_INDEX else None

    activated: dict[int, EntryRec] = {}
    reasons: dict[int, ActivationReason] = {}
    failed: set[int] = set()
    levels = list(comp.levels)
    cur_level = levels.pop(0) if levels else 0
    scan, count, skew, rec_steps = INITIAL, 0, 0, 0
    overflowed = False
    safety = False  # the hard bound on this run's work was hit (SAFETY_MAX_*)
    added_chars = 0
    all_weight = 0.0
    budget = budget_tokens
    warnings: list[str] = []
    recursive = book.recursive

    while scan:
        if book.max_recursion_steps and book.max_recursion_steps <= count:
            break
        count += 1
        if scan == RECURSION:
            rec_steps += 1
        depth = book.scan_depth + skew
        default_hay = buf.hay(depth, scan)
        now: list[tuple[EntryRec, ActivationReason]] = []
        # the skip rules that do not depend on the pass, as one set (ST: active, failed roll, delay, cooldown)
        skip = set(activated)
        skip |= failed
        skip |= delay_on
        skip |= cooldown_on - sticky_on
        for p in _candidates(comp, buf, depth, scan, sticky_on, skip):
            r = comp.rec(p)
            is_sticky = p in sticky_on if sticky_on else False
            if r.special or is_sticky:
                if r.char_names and character is not None:
                    inc = character in r.char_names or f"{character}.png" in r.char_names
                    if (inc if r.char_exclude else not inc):
                        continue
                if r.dur and not is_sticky:
                    if scan != RECURSION or r.dur > cur_level:
                        continue
                if scan == RECURSION and recursive and r.exclude and not is_sticky:
                    continue
                if r.deco_activate:
                    now.append((r, _reason(r, "decorator", count, scan, rec_steps, cur_level)))
                    continue
                if r.deco_dont:
                    continue
                if r.constant:
                    now.append((r, _reason(r, "constant", count, scan, rec_steps, cur_level)))
                    continue
                if is_sticky:
                    now.append((r, _reason(r, "sticky", count, scan, rec_steps, cur_level)))
                    continue
            if not r.primary:
                continue
            if r.scan_depth is None and not r.scan_flags:
                hay = default_hay
            else:
                hay = buf.hay(depth if r.scan_depth is None else r.scan_depth, scan, r.scan_flags)
            hit = None
            for k in r.primary:
                m = k.matcher if not k.dynamic else k.get(substitute, r.cs, r.whole)
                if m is None:
                    continue
                at = _find(m, hay, idx)
                if at >= 0:
                    hit = (k, m, at)
                    break
                if isinstance(m, Refused) and m.reason not in warnings:
                    warnings.append(m.reason)
            if hit is None:
                continue
            sec_key: Optional[str] = None
            if r.check_secondary:
                ok, sec_key = _secondary(r, hay, substitute, idx)
                if not ok:
                    continue
            reason = _reason(r, "key", count, scan, rec_steps, cur_level)
            reason.key = hit[0].text
            if r.check_secondary:
                reason.logic = LOGIC_NAMES.get(r.logic, str(r.logic))
                reason.secondary_key = sec_key
            _where(reason, hay.locate(hit[2], hit[1].lowered))
            now.append((r, reason))

        # sticky first, then processing order (ST sorts by sortedEntries index)
        now.sort(key=lambda x: (x[0].pos not in sticky_on, x[0].pos))
        new = [r for r, _ in now]
        why = {r.pos: reason for r, reason in now}
        filter_groups(book.use_group_scoring, new, activated, buf, scan, depth, sticky_on, cooldown_on, delay_on, roll, substitute)

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
            if len(activated) >= SAFETY_MAX_ENTRIES or added_chars + len(body) > SAFETY_MAX_CHARS:
                safety = True  # like an overflow, but for every entry (ignore_budget too): the run stops here
                break
            new_weight += token_weight(body) + 0.25
            if (not r.ignore_budget and budget is not None
                    and math.ceil(all_weight) + math.ceil(new_weight) >= budget):
                overflowed = True
                continue
            activated[r.pos] = r
            reasons[r.pos] = why[r.pos]
            added_chars += len(body)

        successful = [r for r in new if r.pos not in failed]
        for_recursion = [r for r in successful if not r.prevent]
        nxt = 0
        if safety:
            _safety_notice(warnings, len(activated), added_chars, count)
            break
        if recursive and not overflowed and for_recursion:
            nxt = RECURSION
        if recursive and not overflowed and scan == MIN_ACTIVATIONS and buf.recurse:
            nxt = RECURSION
        if not nxt and not overflowed and book.min_activations > 0 and len(activated) < book.min_activations:
            d_now = book.scan_depth + skew
            cap = book.min_activations_depth_max
            over = (cap > 0 and d_now > cap) or d_now > len(messages)
            if not over:
                nxt = MIN_ACTIVATIONS
                skew += 1
        if not nxt and levels:
            nxt = RECURSION
            cur_level = levels.pop(0)
        scan = nxt
        if scan:
            pieces: list[tuple[str, Optional[EntryRec]]] = [(substitute(r.body) if substitute else r.body, r)
                                                            for r in for_recursion]
            text = "\n".join(t for t, _ in pieces)
            if text:
                buf.add_recurse(pieces)
                all_weight += token_weight(text) + 0.25

    if not dry_run:
        record_timed(state, list(activated.values()), chat_len)

    # ST placement: sort by order descending (stable over activation order), then unshift → reverse
    placed = sorted(activated.values(), key=lambda r: -r.order)[::-1]
    tokens = sum(approx_tokens(substitute(r.body) if substitute else r.body) for r in placed)
    return ActivationResult(
        entries=[r.entry for r in placed], reasons=[reasons[r.pos] for r in placed], timed=state,
        tokens=tokens, budget_overflowed=overflowed, safety_stopped=safety, steps=count, warnings=warnings,
    )


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------

#: Hard bounds on one activation run (issue 15 item 10): SillyTavern's loop ends when a pass activates nothing new,
#: when ``max_recursion_steps`` is reached or when the world-info budget overflows — without a budget (a context
#: window of 0 = unknown) a big book whose entries name each other activated 15,949 entries over 10 passes. No prompt
#: can hold this much lore (a million characters is far beyond any context window's world-info share), so the run
#: stops like an overflow — the entry that crossed the line is not added, no further pass — logs it and says so in
#: ``warnings``. Books that stay under the bounds get exactly SillyTavern's result.
SAFETY_MAX_ENTRIES = 2000
SAFETY_MAX_CHARS = 1_000_000


def _safety_notice(warnings: list[str], n: int, chars: int, passes: int) -> None:
    log.warning("world-info activation stopped by the safety bound: %d entries, %d characters, %d passes",
                n, chars, passes)
    warnings.append(message("beat.lore_safety", n=n, chars=f"{chars:,}"))


#: Use the key index (:class:`.compile.KeyIndex`) to pick the entries a pass looks at. False: look at every active
#: entry (the reference path the tests compare against; also what runs without the ``ahocorasick`` module).
_USE_INDEX = True


def _find(m: Any, hay: Haystack, idx: Optional[KeyIndex]) -> int:
    """``m.find(hay)``; for a plain key whose needle the index holds, read from the hit offsets the index found in
    this very text (no scan of a text that grows with every recursion pass). Same result: the index reports every
    occurrence. A regex key in a recursion pass tests only the text the pass added (:func:`_find_regex`)."""
    if m.kind == "regex" and idx is not None and hay.prev is not None and getattr(m, "incremental", False):
        return _find_regex(m, hay)
    hits = hay.hits
    found: int  # m is any matcher of .keys (their unions have no common find_at/needle)
    if hits is None or idx is None or m.kind != "plain":
        found = m.find(hay)
        return found
    nid = idx.needle_id(m.needle, m.cs)
    if nid is None:
        found = m.find(hay)
        return found
    ends = hits.get(nid)
    return -1 if ends is None else m.find_at(hay, ends)


def _find_regex(m: Any, hay: Haystack) -> int:
    """First match of the RE2 regex key ``m`` in ``hay``, a recursion pass's text, from the earlier passes' results
    (issue 15 item 10: 1,000 regex keys re-tested over a buffer growing every pass took 99.8 s in a 50,000-entry
    cascade). ``hay.raw`` extends the previous pass's text (``hay.prev``) by ``"\\n" + contents``, so a match found
    there is still the first one (``m.incremental``: no end-of-text anchor), and a key that did not match before can
    only match now by ending in the added text: it is tested from :data:`.keys.REGEX_SEAM_MARGIN` characters before
    the seam. The results are kept per text, so each pass costs the added text, not the whole buffer. A match that
    starts further back than the margin and ends in the added text is missed (SillyTavern re-tests the joined buffer
    and would see it): the accepted difference, documented at the margin."""
    chain = [hay]
    base: Optional[tuple[int, int]] = None  # (result, text length) of the nearest earlier pass that knows m
    h = hay
    while h.prev is not None:
        p = h.prev
        got = p.rx.get(m) if p.rx is not None else None
        if got is not None:
            base = (got, len(p.raw))
            break
        chain.append(p)
        h = p
    pos = -1
    for h in reversed(chain):
        if base is None:
            pos = m.find(h)
        elif base[0] >= 0:
            pos = base[0]
        else:
            pos = m.find_from(h, max(0, base[1] - REGEX_SEAM_MARGIN))
        if h.rx is None:
            h.rx = {}
        h.rx[m] = pos
        base = (pos, len(h.raw))
    return pos


def _candidates(comp: CompiledBook, buf: ScanBuffer, depth: int, scan: int, sticky_on: set[int],
                skip: set[int]) -> list[int]:
    """Processing positions a pass must look at, ascending: the index's always-checked entries, the active sticky
    ones, and every entry owning a literal key whose text occurs in the scan text of its hay group (the pass's
    ``depth``, or the entry's own scan depth / opt-in fields); minus ``skip``. Any other entry cannot activate in
    this pass — it has no key that could match — so the result is the same as looking at every active entry."""
    idx = comp.index
    if idx is None or not _USE_INDEX:
        return [p for p in comp.active_pos if p not in skip]
    c = set(idx.always)
    for p in sticky_on:
        if comp.rec(p).enabled:
            c.add(p)
    for g, (sd, flags) in enumerate(idx.groups):
        own = idx.owners[g]
        if not own:
            continue
        for nid in buf.key_hits(idx, depth if sd is None else sd, scan, flags):
            ps = own.get(nid)
            if ps:
                c.update(ps)
    c -= skip
    return sorted(c)


def _reason(r: EntryRec, kind: ReasonKind, step: int, scan: int, rec_steps: int, level: int) -> ActivationReason:
    e = r.entry
    return ActivationReason(uid=e.uid, title=e.display_title, book=e.book, source=e.source, kind=kind,
                            step=step, scan=SCAN_NAMES[scan], recursion_level=rec_steps, delay_level=level)

def _where(reason: ActivationReason, label: Label) -> None:
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

def _secondary(r: EntryRec, hay: Haystack, substitute: Optional[Callable[[str], str]],
               idx: Optional[KeyIndex] = None) -> tuple[bool, Optional[str]]:
    """ST ``matchSecondaryKeys``: (activates, deciding key)."""
    logic = r.logic
    any_hit, all_hit = False, True
    for k in r.secondary:
        m = k.get(substitute, r.cs, r.whole)
        hit = m is not None and _find(m, hay, idx) >= 0
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
