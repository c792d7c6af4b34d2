"""Search and listing for the lorebook tools: :func:`search_entries` (``lorebook_search``), :func:`list_titles`
(``lorebook_list``) and :func:`index_titles` (the 【设定集索引】 injected into the prompt).
"""

from __future__ import annotations

from typing import Sequence

from ..deferred import DeferredModel
from .model import LoreEntry


class LoreHit(DeferredModel):  # built on first use (core.deferred)
    """One lorebook_search result (seed runs: ``{"title", "score", "content"}``)."""

    title: str
    score: int
    content: str


def index_titles(entries: Sequence[LoreEntry]) -> list[str]:
    """Titles of all enabled non-constant entries, book order (the 【设定集索引】)."""
    return [e.display_title for e in entries if e.enabled and not e.constant]


#: Above either bound the 【设定集索引】 lists only a selection (issue 15 item 10: a 50,000-entry book sent 389,015
#: characters of titles every beat). Books within both keep the full list, byte for byte as before.
INDEX_MAX_TITLES = 200
INDEX_MAX_CHARS = 4000


def bounded_index(titles: Sequence[str], relevant: Sequence[str] = (), max_titles: int = INDEX_MAX_TITLES,
                  max_chars: int = INDEX_MAX_CHARS) -> tuple[list[str], int]:
    """The titles the 【设定集索引】 shows and how many it leaves out: ``(shown, more)``.

    Within both bounds (``len(titles) <= max_titles`` and the titles joined by 「、」 at most ``max_chars``
    characters): every title, in order, ``more == 0``. Above: titles in ``relevant`` (this beat's hits, in their
    order) come first, then the rest in book order, each once, until ``max_titles`` titles or ``max_chars``
    characters (separators counted) are reached; ``more`` = ``len(titles) - len(shown)``. Cost is linear in the
    number of titles (a set of the relevant ones)."""
    if len(titles) <= max_titles and sum(len(t) for t in titles) + max(0, len(titles) - 1) <= max_chars:
        return list(titles), 0
    shown: list[str] = []
    seen: set[str] = set()
    chars = 0
    have = set(titles)

    def take(t: str) -> bool:
        nonlocal chars
        if t in seen:
            return True
        cost = len(t) + (1 if shown else 0)
        if len(shown) >= max_titles or chars + cost > max_chars:
            return False
        shown.append(t)
        seen.add(t)
        chars += cost
        return True

    for t in relevant:
        if t in have and not take(t):
            break
    for t in titles:
        if not take(t):
            break
    return shown, len(titles) - len(shown)


def search_entries(entries: Sequence[LoreEntry], query: str, limit: int = 8) -> list[LoreHit]:
    """Rank entries for ``query`` (terms split on whitespace): per term, title equal +5 (title contains or is
    contained +3), a key equal to / contained in the term +3, each occurrence in the content +1 (at most 3).
    Entries scoring 0 are left out; ties keep book order. Constant entries are searchable. The content searched and
    returned is the entry's body: SillyTavern's ``@@activate``/``@@dont_activate`` decorator lines are activation
    switches, never text (ST strips them before the content reaches the prompt)."""
    terms = [t for t in query.lower().split() if t]
    scored: list[tuple[int, int, LoreEntry, str]] = []
    for idx, e in enumerate(entries):
        if not e.enabled:
            continue
        title = e.display_title.lower()
        keys = [k.lower() for k in e.keys]
        body = e.body
        content = body.lower()
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
            scored.append((score, idx, e, body))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [LoreHit(title=e.display_title, score=s, content=b) for s, _, e, b in scored[: max(1, limit)]]


def list_titles(entries: Sequence[LoreEntry]) -> list[str]:
    """Every enabled title in book order; constant entries marked 「（常驻）」 (seed round 2 lorebook_list)."""
    return [e.display_title + ("（常驻）" if e.constant else "") for e in entries if e.enabled]
