"""Macro bodies as segments: ``(text, literal)`` pairs. Literal text came from the source; non-literal text is the
value of an inner macro (or an unknown macro kept as written) and is never split by its outer macro — so a ``::``
or ``,`` that came from a value never splits the outer macro's arguments. Part of the one macro engine
(:mod:`liyuan_desktop.core.macros`)."""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["Seg", "seg_slice", "seg_join", "seg_split", "has_literal", "strip_prefix", "list_items",
           "LIST_PREFIX", "ARGS_PREFIX", "ROLL_PREFIX", "REVERSE_PREFIX", "SPACE_PREFIX"]

#: A body segment: (text, literal).
Seg = tuple[str, bool]

def seg_slice(segs: list[Seg], start: int) -> list[Seg]:
    """The segments from character offset ``start`` of their concatenation on."""
    out: list[Seg] = []
    offset = 0
    for text, literal in segs:
        end = offset + len(text)
        if end > start:
            out.append((text[max(0, start - offset):], literal))
        offset = end
    return [s for s in out if s[0]]


def seg_join(segs: list[Seg]) -> str:
    """The text of ``segs``."""
    return "".join(t for t, _ in segs)


def seg_split(segs: list[Seg], sep: str) -> list[list[Seg]]:
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


def has_literal(segs: list[Seg], needle: str) -> bool:
    """Whether ``needle`` occurs inside a literal (source) segment."""
    return any(literal and needle in text for text, literal in segs)


def strip_prefix(segs: list[Seg], pattern: re.Pattern[str]) -> Optional[list[Seg]]:
    """Remove a regex-matched prefix from the first (literal) segment; None when it does not match."""
    if not segs or not segs[0][1]:
        return None
    m = pattern.match(segs[0][0])
    if m is None:
        return None
    return seg_slice(segs, m.end())


def list_items(segs: list[Seg]) -> list[str]:
    """SillyTavern's random/pick list: split on ``::`` if present, else on commas (``\\,`` escapes, trimmed)."""
    if has_literal(segs, "::"):
        return [seg_join(p) for p in seg_split(segs, "::")]
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


LIST_PREFIX = re.compile(r"\s?::?")
ARGS_PREFIX = re.compile(r"\s*::")
ROLL_PREFIX = re.compile(r"\s*(?:::?|\s)\s*")
REVERSE_PREFIX = re.compile(r"\s*::?")
SPACE_PREFIX = re.compile(r"\s+")
