"""Compaction (issue 7; seed 000: 收笔之后……再判断要不要压缩) and the branch's memory index.

:class:`Compactor` summarises the oldest turns into layer-1 summary entries when the next prompt would exceed the
compaction share of the context window, then merges summaries into higher layers (:func:`search.merge_plan`); the
user may rewrite a summary (:meth:`Compactor.edit_summary`). :class:`BranchMemory` keeps the ``memory_search``
index of the active branch (the ranking itself is :mod:`memory.search`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..beat.events import Compacted
from ..llm.types import ChatModel
from ..messages import message
from ..prompt.assemble import HistoryCache, rules_text
from ..prompt.window import ContextWindow
from ..session.transcript import hidden_turn
from ..session.tree import SessionTree
from ..text import prompt_language
from .search import (
    SUMMARY_CALLS,
    MemoryDoc,
    MemoryIndex,
    TurnCost,
    format_turns,
    merge_plan,
    plan_cut,
    snippet,
    summarize,
    summary_limit,
)

Emit = Callable[[Any], None]

#: What the summary calls say besides ``compact.md``, per chat language (issue 32: an English chat's summaries came
#: out in Chinese): the language line added at the end of the system prompt ("" for Chinese: the prompt stays
#: byte-identical to the seed's), the header of the turns to summarise and of the summaries to merge.
COMPACT_WORDING: dict[str, dict[str, str]] = {
    "zh": {"line": "", "story": "【待压缩的剧情】第 {a}–{b} 拍（摘要不超过 {limit} 字）：\n\n{story}",
           "opening": "【开场】\n{opening}\n\n{story}",
           "merge": "【待合并的摘要】按时间先后，合并成一份接力摘要（不超过 900 字）：\n\n{parts}",
           "part": "（第 {a}–{b} 拍）{text}", "beat": "第 {n} 拍", "said": "："},
    "en": {"line": ("[Language] This chat is in English. Write the summary in English; keep names as the story spells "
                    "them."),
           "story": "[Story to compact] beats {a}–{b} (the summary at most {limit} characters):\n\n{story}",
           "opening": "[Opening]\n{opening}\n\n{story}",
           "merge": ("[Summaries to merge] In time order, merge them into one relay summary (at most 900 "
                     "characters):\n\n{parts}"),
           "part": "(beats {a}–{b}) {text}", "beat": "Beat {n}", "said": ": "},
}


def compact_wording(language: str) -> dict[str, str]:
    """:data:`COMPACT_WORDING` for a chat in ``language`` (Chinese for "zh" or none, English for every other)."""
    return COMPACT_WORDING[prompt_language(language)]


def compact_system(language: str) -> str:
    """The summary calls' system prompt: ``compact.md`` (``compact.en.md`` for a chat not in Chinese, issue 32) and,
    for a chat not in Chinese, its language line."""
    line = compact_wording(language)["line"]
    return rules_text("summary", language) + ("\n\n" + line if line else "")


class Compactor:
    """Compaction of one chat's active branch. ``history()`` gives the branch's prompt history, ``usage()`` the
    context meter (:meth:`ContextWindow.usage` for the current state)."""

    def __init__(self, tree: SessionTree, window: ContextWindow, history: Callable[[], HistoryCache],
                 usage: Callable[[], dict[str, Any]]):
        self.tree, self.window, self.history, self.usage = tree, window, history, usage

    def summaries(self) -> list[dict[str, Any]]:
        """The relay summaries (前情提要) active on the shown branch, earliest first:
        ``[{"id", "text", "beats": [first, last], "layer", "source"}]``."""
        return [{"id": e.id, "text": e.text, "beats": list(e.beats), "layer": e.layer, "source": e.source}
                for e in self.history().summary_list()]

    def edit_summary(self, summary_id: str, text: str) -> str:
        """The user rewrote a summary: a new summary entry (``edit_of`` the old one, source user) is appended and the
        leaf persisted; the next beat sends the new text. Returns the new id. KeyError for an id that is not an
        active summary of this branch, ValueError for an empty text, OSError when the disk refuses."""
        if not text.strip():
            raise ValueError(message("summary.empty"))
        old = self.history().summaries.get(summary_id)
        if old is None:
            raise KeyError(summary_id)
        e = self.tree.append("summary", text=text.strip(), upto=old.upto, beats=list(old.beats), layer=old.layer,
                             edit_of=old.id, source="user", tokens=self.window.tokens.text(text))
        self.tree.persist_leaf()
        edited_id: str = e.id
        return edited_id

    def _beat_numbers(self) -> tuple[dict[str, int], set[str]]:
        """Reply/opening entry id → its 1-based beat number on the active branch (a group chat's hidden turns,
        ``session.transcript.hidden_turn``, are not counted), and the replies that answer a hidden turn (what
        stands above them is the nudge the model read, not the user's words: the summariser is not given it)."""
        beat = 0
        out: dict[str, int] = {}
        nudged: set[str] = set()
        hidden = False
        for e in self.tree.path_to():
            if e.type == "user":
                hidden = hidden_turn(e)
                beat += 0 if hidden else 1
            elif e.type in ("assistant", "opening"):
                out[e.id] = beat
                if hidden:
                    nudged.add(e.id)
        return out, nudged

    async def maybe_compact(self, model: ChatModel, persona: str, char: str,
                            emit: Emit, language: str = "zh") -> Optional[Compacted]:
        """When the next prompt would exceed ``share`` of the window, summarise the oldest turns (cut down to about
        half the trigger level, the newest turns kept) with ``model``, in chunks that each fit half the window, at
        most :data:`search.SUMMARY_CALLS` calls; then merge summaries. Returns the :class:`Compacted` event (also
        emitted) or None when nothing was due. ``language``: the chat's, which the summary is written in
        (:func:`compact_wording`). A failed summary call cuts nothing (the event carries the error).
        Raises OSError when the disk refuses."""
        w = self.window
        if w.share <= 0:
            return None
        h = self.history()
        before = self.usage()["used"]
        threshold = int(w.share * w.window)
        if before <= threshold:
            return None
        beat_of, nudged = self._beat_numbers()
        tok = w.tokens
        turns = [TurnCost(t.assistant_id, beat_of.get(t.assistant_id, 0),
                          None if t.assistant_id in nudged else t.user, t.final,
                          tok.text(t.user or "") + tok.text(t.final) + 8)
                 for t in h.turns if t.final is not None and t.assistant_id and h.end_of(t.assistant_id) > h.cut]
        fixed = max(0, before - tok.messages(h.messages[h.cut:]))  # what no cut can shrink
        # a window barely larger than the card's fixed prompt: let the history have a fifth of the window before
        # compacting (up to 85% in all), or every beat would summarise a sliver and break the cached prefix
        threshold = max(threshold, min(int(w.window * 0.85), fixed + int(w.window * 0.2)))
        if before <= threshold:
            return None
        cut = plan_cut(turns, before, threshold, fixed=fixed)
        if not cut:
            return None
        budget = max(1500, int(w.window * 0.5) - 800)
        chunks: list[list[TurnCost]] = [[]]
        size = 0
        for t in cut:
            if chunks[-1] and size + t.tokens > budget:
                if len(chunks) == SUMMARY_CALLS:
                    break
                chunks.append([])
                size = 0
            chunks[-1].append(t)
            size += t.tokens
        ev = Compacted(beats=[cut[0].beat, chunks[-1][-1].beat], layer=1, before=before)
        words, system = compact_wording(language), compact_system(language)
        first = True
        for part in chunks:
            story = format_turns(part, persona, char, words["beat"], words["said"])
            if first and h.cut == 0 and h.opening:
                story = words["opening"].format(opening=h.opening, story=story)
            first = False
            user = words["story"].format(a=part[0].beat, b=part[-1].beat, limit=summary_limit(len(story)), story=story)
            out = await summarize(model, system, user)
            if out.text is None:
                ev.error = out.error
                if part is chunks[0]:
                    emit(ev)
                    return ev
                ev.beats = [cut[0].beat, part[0].beat - 1]
                break
            self.tree.append("summary", text=out.text, upto=part[-1].assistant_id, beats=[part[0].beat, part[-1].beat],
                             layer=1, tokens=tok.text(out.text))
            self.tree.commit()
        ev.error = await self._merge(model, language) or ev.error
        ev.after = self.usage()["used"]
        emit(ev)
        return ev

    async def _merge(self, model: ChatModel, language: str = "zh") -> Optional[str]:
        """Summaries of summaries (at most three layers, together at most a fifth of the window); an error text
        when a merge call failed."""
        for _ in range(6):
            plan = merge_plan(self.history().summary_list(), budget=int(self.window.window * 0.2))
            if plan is None:
                return None
            layer, group = plan
            words = compact_wording(language)
            user = words["merge"].format(parts="\n\n".join(
                words["part"].format(a=s.beats[0], b=s.beats[-1], text=s.text) if s.beats else s.text for s in group))
            out = await summarize(model, compact_system(language), user)
            if out.text is None:
                return out.error
            first = group[0].beats[0] if group[0].beats else 0
            last = group[-1].beats[-1] if group[-1].beats else 0
            self.tree.append("summary", text=out.text, upto=group[-1].upto, beats=[first, last], layer=layer,
                             merges=[s.id for s in group], tokens=self.window.tokens.text(out.text))
            self.tree.commit()
        return None


class BranchMemory:
    """The ``memory_search`` index of the active branch: finals, user words, summaries and ledger changes,
    extended incrementally while the branch only grows (rebuilt after a branch switch)."""

    def __init__(self, tree: SessionTree):
        self.tree = tree
        self._idx: Optional[MemoryIndex] = None
        self._at: tuple[int, Optional[str]] = (0, None)
        self._beat = 0
        self._superseded: dict[int, int] = {}

    def index(self) -> MemoryIndex:
        """The index, brought up to the current branch."""
        path = self.tree.path_to()
        n, last = self._at
        if self._idx is None or n > len(path) or (n and path[n - 1].id != last):
            self._idx, n = MemoryIndex(), 0
            self._beat, self._superseded = 0, {}
        idx = self._idx
        for e in path[n:]:
            t = e.type
            if t == "user" and not hidden_turn(e):  # a group chat's hidden turn is not the user's words
                self._beat += 1
                idx.add(MemoryDoc(e.id, "user", self._beat, e.text))
            elif t in ("assistant", "opening"):
                idx.add(MemoryDoc(e.id, "final", self._beat, e.text))
            elif t == "revision":
                old = idx.keys.get(e.target)
                idx.add(MemoryDoc(e.id, "final", idx.docs[old].beat if old is not None else self._beat, e.text))
                if old is not None:
                    self._superseded[old] = idx.keys[e.id]
            elif t == "summary":
                idx.add(MemoryDoc(e.id, "summary", (e.beats or [self._beat])[-1], e.text))
            elif t == "rp-state" and e.applied:
                idx.add(MemoryDoc(e.id, "ledger", self._beat, "；".join(e.applied)))
        self._at = (len(path), path[-1].id if path else None)
        return idx

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """``memory_search``: BM25 over the branch (module doc). ``[{"beat", "kind", "snippet", "score"}]``, best
        first; ``kind`` final | user | summary | ledger. Replaced text (a revised reply) and the words of the beat
        being played are not returned."""
        idx = self.index()
        skip = set(self._superseded)
        tip = self.tree.path_to()[-1]
        if tip.type in ("user", "ask", "beat"):  # the words of the beat being played are in its prompt already
            user = self.tree.latest("user")
            if user is not None and user.id in idx.keys:
                skip.add(idx.keys[user.id])
        hits = idx.search(query, limit, exclude=skip)
        return [{"beat": d.beat, "kind": d.kind, "snippet": snippet(d.text, query), "score": round(sc, 3)}
                for d, sc in hits]
