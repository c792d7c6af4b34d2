"""Token counting for the world-info budget: :func:`approx_tokens` and SillyTavern's :func:`budget_from_context`."""

from __future__ import annotations

import math
import re
from functools import lru_cache

_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
                   r"\U00020000-\U0003ffff]")


@lru_cache(maxsize=16384)
def token_weight(text: str) -> float:
    """Unrounded token weight of ``text``: one per CJK/fullwidth character, a quarter per other character. The
    budget sums these per entry before rounding (:func:`approx_tokens` rounds one text). Cached per text."""
    wide = len(_WIDE.findall(text)) if not text.isascii() else 0
    return wide + (len(text) - wide) / 4.0


def approx_tokens(text: str) -> int:
    """Approximate token count: one per CJK/fullwidth character, one per 4 other characters (rounded up). Cached per
    text, so each entry is counted once (lessons.md)."""
    return math.ceil(token_weight(text)) if text else 0


def budget_from_context(max_context: int, percent: float = 25, cap: int = 0) -> int:
    """SillyTavern's budget: ``round(percent × max_context / 100)`` (at least 1), capped by ``cap`` when > 0."""
    b = int(math.floor(percent * max_context / 100 + 0.5)) or 1
    return min(b, cap) if cap > 0 else b
