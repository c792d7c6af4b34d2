"""The context window (issue 7, token accounting): token estimates calibrated by the server's usage numbers, the
context meter, and fitting a prompt's history into the window.

Units: tokens throughout. The estimate (:class:`tokens.TokenCounter`) is corrected by the first model call's
``prompt_tokens`` of each beat (:meth:`ContextWindow.calibrate`); after opening a chat the correction is derived
from the newest beats' stored ``sent`` records (:meth:`ContextWindow.calibrate_from_tree`).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ..beat.tools.registry import tool_specs
from ..beat.tools.sets import ROLEPLAY_TOOLS
from ..llm.types import ChatMessage
from ..session.tree import SessionTree
from .assemble import HistoryCache, summary_block
from .inspect import decode_sent, tool_specs_for
from .tokens import TokenCounter

DEFAULT_WINDOW = 65536


class ContextWindow:
    """Token accounting of one chat: ``tokens`` (the calibrated counter), ``window`` (the model's context size;
    65,536 when the model does not say), ``share`` (compaction starts above this share of the window; settings:
    compaction_share), ``dropped`` (history messages the last :meth:`fit` left out), ``fixed_over`` (the system
    prompt alone is over the window)."""

    def __init__(self, window: int = 0):
        self.tokens = TokenCounter()
        self.window: int = int(window or DEFAULT_WINDOW)
        self.share: float = 0.6
        self.dropped = 0
        self.fixed_over = False
        #: the chat's language: the tool specs it counts are the ones its beats send (issue 32)
        self.language = "zh"
        self._usage: Optional[tuple[tuple[Any, ...], dict[str, Any]]] = None

    def history_tokens(self, h: HistoryCache) -> int:
        """Calibrated tokens of the history as sent, from the history cache's running sums."""
        return round(h.prompt_raw_tokens(lambda m: self.tokens.raw_messages((m,))) * self.tokens.ratio)

    def fit(self, h: HistoryCache, system: str, user_text: str) -> list[ChatMessage]:
        """The history as sent, trimmed when the whole prompt would not fit (90% of the window, room for the reply
        and tool calls): the oldest messages are left out of this beat's prompt (never out of the tree), starting
        on a user message; a relay-summary message stays first. Sets :attr:`dropped` and :attr:`fixed_over`."""
        hist = h.prompt_messages()
        self.dropped = 0
        budget = int(self.window * 0.9)
        fixed = self.tokens.text(system) + self.tokens.text(user_text) + 1500  # ledger blocks + tool specs
        self.fixed_over = fixed > budget  # the card alone does not fit: trimming history cannot help
        used = fixed + self.history_tokens(h)
        if used <= budget or not hist:
            return hist
        keep_first = 1 if h.summaries else 0
        k = keep_first
        while used > budget and k < len(hist) - 2:  # O(messages left out); only for a chat over the window
            used -= self.tokens.messages([hist[k]])
            k += 1
        while k < len(hist) and hist[k].role != "user":  # start on a user message so roles still alternate
            used -= self.tokens.messages([hist[k]])
            k += 1
        self.dropped = k - keep_first
        if keep_first and k < len(hist):  # the relay summary goes with the first kept user message, as before
            block = summary_block([e.text for e in h.summary_list()], h.language)
            return [ChatMessage(role="user", content=f"{block}\n\n{hist[k].content}"), *hist[k + 1:]]
        return hist[:keep_first] + hist[k:]

    def calibrate(self, messages: list[ChatMessage], calls: list[Any], tool_names: list[str]) -> None:
        """Correct the estimate with the first call's ``prompt_tokens`` as the server counted them (no usage: no
        change)."""
        if not calls:
            return
        actual = int((calls[0].usage or {}).get("prompt_tokens") or 0)
        if actual > 0:
            specs = tool_specs_for(list(tool_names), self.language)
            if self.tokens.observed < 0:
                self.tokens.observed = 0
            self.tokens.observe(self.tokens.raw_messages(messages) + self.tokens.raw(json.dumps(specs, ensure_ascii=False)), actual)

    def calibrate_from_tree(self, tree: SessionTree, system: str, last: int = 8) -> None:
        """Calibrate from the newest beats (up to ``last``) on the branch that have usage and a ``sent`` record,
        oldest first as they were played; with none, never look again (``observed = -1``)."""
        found = []
        seen = 0
        for e in reversed(tree.path_to()):
            if e.type != "beat":
                continue
            seen += 1
            if seen > last:  # only the newest beats are read (each is parsed from disk on first access)
                break
            if e.calls and e.sent and int((e.calls[0].usage or {}).get("prompt_tokens") or 0) > 0:
                found.append(e)
        if not found:
            self.tokens.observed = -1
            return
        path = tree.path_to()
        pos = {x.id: i for i, x in enumerate(path)}
        hc = HistoryCache(str(found[0].sent.get("lang") or "zh"))  # one cache, extended beat by beat: the history is read once, not once per beat
        for e in reversed(found):
            hist = hc.update(path[:pos[e.parent_id] + 1]).prompt_messages()
            msgs = decode_sent(e.sent, system, hist)
            specs = tool_specs_for(e.sent.get("tools") or [], str(e.sent.get("lang") or "zh"))
            self.tokens.observe(self.tokens.raw_messages(msgs) + self.tokens.raw(json.dumps(specs, ensure_ascii=False)),
                                int(e.calls[0].usage["prompt_tokens"]))

    def usage(self, key: tuple[Any, ...], system: str, h: HistoryCache, injection: Callable[[], str]) -> dict[str, Any]:
        """The context meter ``{"used", "window", "share": used/window}``: the estimated next prompt (system,
        history as sent, the ledger blocks ``injection()``, tool specs; the user's next words not counted).
        ``key`` identifies the tree state: asked several times per beat, it is computed once per key."""
        key = (*key, self.tokens.ratio, self.window)
        if self._usage is not None and self._usage[0] == key:
            return dict(self._usage[1])
        used = (self.tokens.text(system) + self.history_tokens(h) + self.tokens.text(injection())
                + self.tokens.tools(tool_specs(ROLEPLAY_TOOLS, self.language)) + 8)
        out = {"used": used, "window": self.window, "share": round(used / self.window, 4) if self.window else 0.0}
        self._usage = (key, out)
        return dict(out)
