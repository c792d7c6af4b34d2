"""Inclusion groups (SillyTavern's ``filterByInclusionGroups`` and ``getScore``): of the entries of one group that
activate in a scan pass only one stays — sticky members win, cooldown/delayed members are dropped, optional scoring
keeps the best-matching ones, a group that already won in an earlier pass drops its new members, ``groupOverride``
picks the highest order, else a weighted roll by ``groupWeight``.
"""

from __future__ import annotations

from typing import Callable, Optional

from .compile import EntryRec
from .keys import compile_key
from .model import AND_ALL, AND_ANY
from .scan import Haystack, ScanBuffer


def _score(r: EntryRec, hay: Haystack) -> int:
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


def filter_groups(use_group_scoring: bool, new: list[EntryRec], activated: dict[int, EntryRec], buf: ScanBuffer, scan: int,
                  depth: int, sticky_on: set[int], cooldown_on: set[int], delay_on: set[int],
                  roll: Callable[[], float], substitute: Optional[Callable[[str], str]]) -> None:
    """ST ``filterByInclusionGroups`` (in place on ``new``); ``use_group_scoring`` is the book's setting."""
    grouped: dict[str, list[EntryRec]] = {}
    for r in new:
        for g in r.groups:
            grouped.setdefault(g, []).append(r)
    if not grouped:
        return

    def remove(r: Optional[EntryRec]) -> None:
        if r is not None and r in new:
            new.remove(r)

    def remove_all_but(group: list[EntryRec], chosen: Optional[EntryRec]) -> None:
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
        if not use_group_scoring and not any(r.use_group_scoring for r in group):
            continue
        if has_sticky[key]:
            continue
        scores = [_score(r, buf.hay(depth if r.scan_depth is None else r.scan_depth, scan, r.scan_flags))
                  for r in group]
        best = max(scores)
        i = 0
        while i < len(group):
            own = group[i].use_group_scoring
            scored = own if own is not None else use_group_scoring
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
