"""The scan text: SillyTavern's ``WorldInfoBuffer`` for one activation run (:class:`ScanBuffer`: the newest messages
newest first, ``"Name: text"`` trimmed, each prefixed ``\\x01`` and joined by ``\\n\\x01``, then the opt-in card
fields, injected prompts and the recursion buffer) and one assembled text with its lower-cased copy and the
needles of the key index found in it (:class:`Haystack`, :meth:`ScanBuffer.key_hits`).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from .model import MAX_SCAN_DEPTH, ScanMessage

#: Where a piece of the scan text came from: ("msg", index), ("none",), or a global scan field's name and value.
Label = tuple[Any, ...]

if TYPE_CHECKING:  # type only: compile.py builds on the matchers, which read a Haystack
    from .compile import EntryRec, KeyIndex

#: Scan pass types (ST ``scan_state``).
INITIAL, RECURSION, MIN_ACTIVATIONS = 1, 2, 3
SCAN_NAMES = {INITIAL: "initial", RECURSION: "recursion", MIN_ACTIVATIONS: "min_activations"}
_MATCHER = "\x01"
_JOINER = "\n\x01"


class Haystack:
    """One scan text (ST's ``buffer.get``) with its lower-cased copy and a map from offsets to what was scanned."""

    __slots__ = ("raw", "_low", "starts", "labels", "_low_starts", "parts", "depth", "rec_n", "hits", "prev", "rx")

    def __init__(self, parts: list[tuple[str, Label]]):
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
        self.depth = self.rec_n = 0  # set by ScanBuffer.hay: which scan window this is
        self.hits: Optional[dict[int, list[int]]] = None  # key-index needle id → end offsets (ScanBuffer.key_hits)
        #: the text of an earlier recursion pass this one extends (same window; ``raw`` starts with its ``raw``), and
        #: regex key → first match found here (:func:`.activation._find_regex`)
        self.prev: Optional[Haystack] = None
        self.rx: Optional[dict[str, Any]] = None

    @property
    def low(self) -> str:
        """The haystack lower-cased (built once, with the start offset of each part, for case-insensitive keys)."""
        if self._low is None:
            lows = [t.lower() for t, _ in self.parts]
            self._low = "".join(lows)
            starts, pos = [], 0
            for t in lows:
                starts.append(pos)
                pos += len(t)
            self._low_starts = starts
        return self._low

    def locate(self, pos: int, lowered: bool) -> tuple[Label, int]:
        """Which part a match at ``pos`` (code points into the joined haystack, or into :attr:`low` when
        ``lowered``) fell in: its label and the offset inside that part — for the activation's "why" lines."""
        if lowered:
            self.low  # noqa: B018 - builds the offsets
            starts = self._low_starts or [0]
        else:
            starts = self.starts
        k = bisect.bisect_right(starts, pos) - 1
        return self.labels[max(0, k)] if self.labels else ("none",)


class ScanBuffer:
    """ST's ``WorldInfoBuffer`` for one run: messages newest first, injected prompts, the recursion buffer."""

    def __init__(self, messages: Sequence[Union[ScanMessage, str]], include_names: bool, inject: Sequence[str],
                 global_scan: Optional[dict[str, str]]):
        self.messages = messages
        self.n = len(messages)
        self.include_names = include_names
        self.inject = [s for s in inject if s]
        self.global_scan = global_scan or {}
        self.recurse: list[list[tuple[str, Optional[EntryRec]]]] = []  # per step: (content, entry) pieces
        self._texts: dict[int, str] = {}
        self._cache: dict[tuple[int, int, tuple[str, ...]], Haystack] = {}
        self._last_hits: dict[tuple[int, tuple[str, ...]], Haystack] = {}  # (depth, flags) → the latest hay whose key hits are known

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

    def hay(self, depth: int, scan: int, flags: tuple[str, ...] = ()) -> Haystack:
        """The haystack of the last ``depth`` messages (capped at MAX_SCAN_DEPTH), plus the recursion buffer unless
        this is a min-activations pass, plus the extra fields ``flags`` names; cached per (depth, recursion size,
        flags). SillyTavern world-info.js: the scan depth and the recursion buffer."""
        if depth <= 0:
            return Haystack([])
        depth = min(depth, MAX_SCAN_DEPTH)
        rec_n = len(self.recurse) if scan != MIN_ACTIVATIONS else 0
        key = (depth, rec_n, flags)
        h = self._cache.get(key)
        if h is not None:
            return h
        parts: list[tuple[str, Label]] = []
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
        h = self._cache[key] = Haystack(parts)
        h.depth, h.rec_n = depth, rec_n
        for k in range(rec_n - 1, -1, -1):  # the latest earlier pass over this window: h.raw extends its raw
            p = self._cache.get((depth, k, flags))
            if p is not None:
                h.prev = p
                break
        return h

    def key_hits(self, index: "KeyIndex", depth: int, scan: int,
                 flags: tuple[str, ...] = ()) -> dict[int, list[int]]:
        """Needle ids of ``index`` found in :meth:`hay` ``(depth, scan, flags)`` → their end offsets (kept on the hay:
        the matchers read them, :func:`.activation._find`). Incremental: a recursion pass's
        text is the previous pass's text plus the new entries' contents, so only the added text (and the
        ``maxlen - 1`` characters before it, where a key can straddle the seam) is scanned and the earlier hits are
        kept — a pass costs the new text, not the whole buffer again."""
        h = self.hay(depth, scan, flags)
        got = h.hits
        if got is None:
            prev = self._last_hits.get((h.depth, flags))
            if (prev is not None and prev.hits is not None and prev is not h and prev.rec_n < h.rec_n
                    and h.raw.startswith(prev.raw)):
                got = dict(prev.hits)
                for nid, ends in index.scan(h, len(prev.low), len(prev.raw)).items():
                    old = got.get(nid)
                    got[nid] = ends if old is None else old + ends
            else:
                got = index.scan(h)
            h.hits = got
            self._last_hits[(h.depth, flags)] = h
        return got

    def add_recurse(self, pieces: list[tuple[str, Optional[EntryRec]]]) -> None:
        """Add the content of entries activated in this pass to the recursion buffer (each piece: text and the
        entry it came from), so the next pass scans it (SillyTavern's recursive scanning)."""
        self.recurse.append(pieces)
