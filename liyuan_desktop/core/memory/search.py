"""Memory of long games: compaction into relay summaries (前情提要) and ``memory_search`` (issue 7).

Compaction (seed 000: 收笔之后，定稿交给场记记账，再判断要不要压缩; ARCHITECTURE.md, one beat):

- After a sealed beat, when the estimated next prompt exceeds ``share`` of the model's context window (setting
  ``compaction_share``, default 0.6), the oldest uncompacted turns are summarised by the side model into a layer-1
  summary entry on the tree; the prompt then carries 【前情提要】 (earliest first) in place of those turns
  (assemble.HistoryCache.prompt_messages).
- The cut is made in a large step: down to about half of the trigger level (:data:`KEEP_FACTOR`), so several beats
  can follow before the next compaction and the cached prompt prefix survives them. The last
  :data:`KEEP_TURNS` turns are never summarised.
- At most three layers: more than :data:`MERGE_AT` layer-1 summaries → the oldest ones become one layer-2 summary;
  likewise layer-2 → layer-3; layer-3 summaries beyond :data:`MAX_TOP` are merged into one layer-3 summary.
- Nothing is deleted: the turns stay on the tree and in the transcript; a user edit is a new summary entry.

``memory_search`` ranks the finals, summaries and ledger changes of the active branch with BM25 over character
bigrams (CJK) and lower-cased words (other scripts). It is our own ~80 lines rather than a library: the candidate
libraries (bm25s, rank-bm25) pull in NumPy/SciPy, which would add ~100 MB to an installer already near its 480 MB
budget, and the index here is incremental (new beats are added, nothing is rebuilt).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from ..messages import MsgText, message

KEEP_FACTOR = 0.5  # after a compaction the prompt is aimed at this share of the trigger level
KEEP_TURNS = 2  # the newest turns always stay verbatim
MERGE_AT = 4  # more than this many summaries of one layer → the oldest MERGE_AT become one of the next layer
MAX_TOP = 2  # layer-3 summaries kept before they are merged into one
SUMMARY_MAX_TOKENS = 1200
SUMMARY_CALLS = 4  # summary calls one compaction may make (each covers at most half the context window)


# -- compaction planning ------------------------------------------------------------------------------------------
@dataclass
class TurnCost:
    """One compactable turn: the assistant entry id that ends it, its 1-based beat number, its user words and final,
    and its estimated prompt tokens (user + reply messages)."""

    assistant_id: str
    beat: int
    user: Optional[str]
    final: str
    tokens: int


def plan_cut(turns: list[TurnCost], used: int, threshold: int, keep_turns: int = KEEP_TURNS,
             fixed: int = 0) -> list[TurnCost]:
    """Which turns to summarise: the oldest ones, until the estimated prompt ``used`` (tokens) drops to the target,
    never touching the newest ``keep_turns`` turns. ``fixed``: the part of ``used`` that no cut can shrink (system
    prompt, ledger blocks, tool specs, the summaries); the target keeps :data:`KEEP_FACTOR` of the room the history
    has above it (``fixed + KEEP_FACTOR × (threshold − fixed)``), so one compaction makes room for several beats even
    when the fixed part is large. Returns [] when ``used`` is within ``threshold`` or nothing can be cut."""
    if used <= threshold or len(turns) <= keep_turns:
        return []
    target = fixed + KEEP_FACTOR * max(0, threshold - fixed)
    out: list[TurnCost] = []
    for t in turns[: len(turns) - keep_turns]:
        if used <= target:
            break
        out.append(t)
        used -= t.tokens
    return out


def summary_limit(covered_chars: int) -> int:
    """How many characters a summary of ``covered_chars`` characters of story may take: a fifth, 200–900."""
    return max(200, min(900, covered_chars // 5))


def format_turns(turns: list[TurnCost], persona: str, char: str, beat: str = "第 {n} 拍", said: str = "：") -> str:
    """The turns as the summariser reads them: the beat's heading (``beat`` with ``{n}``: 「第 N 拍」, "Beat N" in an
    English chat), the user's words, the reply, each ``name`` + ``said`` + text (「：」, ": " in an English chat)."""
    parts = []
    for t in turns:
        lines = [beat.format(n=t.beat)]
        if t.user:
            lines.append(f"{persona}{said}{t.user}")
        lines.append(f"{char}{said}{t.final}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


class SummaryOutcome(DeferredModel):  # built on first use (core.deferred)
    """Result of one summary call: ``text`` (None on failure), ``error`` (a catalog message for the user, rendered
    in the reader's language), the request as sent and usage."""

    text: Optional[str] = None
    error: Optional[MsgText] = None
    system: str = ""
    user: str = ""
    usage: dict[str, Any] = Field(default_factory=dict)


async def summarize(model: ChatModel, system: str, user: str) -> SummaryOutcome:
    """One summary call (purpose "summary", thinking off). Never raises for model failures or an empty answer;
    CancelledError propagates."""
    out = SummaryOutcome(system=system, user=user)
    req = ChatRequest(messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
                      max_tokens=SUMMARY_MAX_TOKENS, thinking=False, purpose="summary", temperature=0.2)
    try:
        resp = await model.complete(req)
    except ModelError as e:
        out.error = message("mem.summary_failed", error=e.message)
        return out
    out.usage = resp.usage.raw or resp.usage.model_dump(exclude={"raw"})
    text = (resp.content or "").strip()
    for head in ("【前情提要】", "[Story so far]"):  # a model that repeats the block's header (either language)
        if text.startswith(head):
            text = text[len(head):].strip()
    if not text:
        out.error = message("mem.summary_empty")
        return out
    out.text = text
    return out


def merge_plan(summaries: list[Any], budget: int = 0) -> Optional[tuple[int, list[Any]]]:
    """The next merge to make, or None: ``(new layer, the summaries to merge)`` — the oldest :data:`MERGE_AT` of a
    layer that has more than that, lowest layer first; layer 3 merges all of its summaries once it has more than
    :data:`MAX_TOP`. ``budget`` (tokens, 0 = none): when the summaries together take more (their ``tokens``), the
    two oldest are merged into the next layer up (at most 3), so 【前情提要】 itself never crowds out the story.
    ``summaries``: active summary entries, earliest first."""
    if budget and len(summaries) >= 2 and sum(getattr(s, "tokens", 0) or 0 for s in summaries) > budget:
        return min(3, max(summaries[0].layer, summaries[1].layer) + 1), summaries[:2]
    for layer in (1, 2):
        same = [s for s in summaries if s.layer == layer]
        if len(same) > MERGE_AT:
            return layer + 1, same[:MERGE_AT]
    top = [s for s in summaries if s.layer >= 3]
    if len(top) > MAX_TOP:
        return 3, top
    return None


# -- memory_search ----------------------------------------------------------------------------------------------
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")


def terms(text: str) -> list[str]:
    """Index terms of a text: every CJK character and every pair of adjacent CJK characters (so two-character
    words and names match without a segmenter), and lower-cased Latin/digit words with a crude plural fold."""
    out: list[str] = []
    for run in _CJK.findall(text):
        out.extend(run)
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    for w in _WORD.findall(text):
        w = w.lower()
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


@dataclass
class MemoryDoc:
    """One searchable piece: ``kind`` final | summary | ledger, its beat number, its text."""

    key: str
    kind: str
    beat: int
    text: str


@dataclass
class MemoryIndex:
    """An incremental BM25 index (k1 = 1.2, b = 0.75) over :func:`terms`. ``add`` is O(terms of the doc);
    ``search`` scores only documents that share a query term."""

    k1: float = 1.2
    b: float = 0.75
    docs: list[MemoryDoc] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)
    total_len: int = 0

    def add(self, doc: MemoryDoc) -> None:
        """Add a document (a key seen before is ignored)."""
        if doc.key in self.keys:
            return
        i = len(self.docs)
        self.keys[doc.key] = i
        self.docs.append(doc)
        tf = Counter(terms(doc.text))
        n = sum(tf.values())
        self.lengths.append(n)
        self.total_len += n
        for t, c in tf.items():
            self.postings.setdefault(t, []).append((i, c))

    def search(self, query: str, limit: int = 5, exclude: Iterable[int] = ()) -> list[tuple[MemoryDoc, float]]:
        """The ``limit`` best documents for ``query`` with their BM25 scores, best first (ties: newest first)."""
        if not self.docs:
            return []
        qs = set(terms(query))
        n_docs = len(self.docs)
        avg = self.total_len / n_docs or 1.0
        skip = set(exclude)
        scores: dict[int, float] = {}
        for t in qs:
            plist = self.postings.get(t)
            if not plist:
                continue
            idf = math.log(1 + (n_docs - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, c in plist:
                if i in skip:
                    continue
                norm = c * (self.k1 + 1) / (c + self.k1 * (1 - self.b + self.b * self.lengths[i] / avg))
                scores[i] = scores.get(i, 0.0) + idf * norm
        best = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]
        return [(self.docs[i], s) for i, s in best]


def snippet(text: str, query: str, width: int = 120) -> str:
    """A window of ``text`` (about ``width`` characters) around the densest match of the query's terms."""
    one = " ".join(text.split())
    if len(one) <= width:
        return one
    qs = [t for t in set(terms(query)) if len(t) > 1] or list(set(terms(query)))
    low = one.lower()
    hits = sorted(p for t in qs for p in _positions(low, t.lower()))
    if not hits:
        return one[:width] + "…"
    best, best_n = hits[0], 0
    j = 0
    for i, p in enumerate(hits):
        while hits[j] < p - width // 2:
            j += 1
        if i - j + 1 > best_n:
            best, best_n = hits[j], i - j + 1
    start = max(0, min(best - width // 4, len(one) - width))
    return ("…" if start else "") + one[start:start + width] + ("…" if start + width < len(one) else "")


def _positions(text: str, term: str) -> Iterable[int]:
    i = text.find(term)
    while i >= 0:
        yield i
        i = text.find(term, i + 1)
