"""Token accounting without a network: a calibrated estimate, cached per text, corrected by the API's usage numbers.

No tokenizer of the configured model family can be assumed offline (tiktoken and Hugging Face tokenizers download
their vocabularies on first use), so the count is an estimate from the text's shape, and the chat corrects it with
the ``prompt_tokens`` the server reports (issue 7, token accounting: "a calibrated estimate corrected by the API's
usage numbers"):

- a CJK character (3 UTF-8 bytes) ≈ 0.8 tokens (DeepSeek, Qwen and o200k-style vocabularies give 0.6–1.0);
- other characters ≈ 0.3 tokens (English words average ~4 characters a token);
- 4 tokens of framing per chat message.

The estimate is computed once per distinct string (a dict keyed by the string itself; Python caches a string's hash,
so looking up the same history message again costs O(1)). ``ratio`` scales raw estimates to what the server counts;
:meth:`TokenCounter.observe` moves it towards ``actual / estimated`` after each call (exponential moving average).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

# The shape rule has one home, the model client's usage estimate (llm.usage), which servers without usage use too:
# ``estimate(text)`` is the raw (not rounded, not calibrated) estimate of one string, O(len) in C.
from ..llm.usage import CJK_TOKENS, MESSAGE_OVERHEAD, OTHER_TOKENS
from ..llm.usage import estimate_text_tokens as estimate

__all__ = ["CJK_TOKENS", "OTHER_TOKENS", "MESSAGE_OVERHEAD", "estimate", "TokenCounter"]


class TokenCounter:
    """Estimated token counts, cached per string, scaled by a calibration ``ratio`` (1.0 until usage is seen).

    ``text(s)`` → int tokens of one string; ``messages(msgs)`` → int tokens of a chat message list (content, tool
    calls' names and arguments, framing); ``observe(estimated, actual)`` calibrates. Not thread-safe."""

    def __init__(self, ratio: float = 1.0, max_cache: int = 200_000):
        self.ratio = ratio if ratio > 0 else 1.0
        self.observed = 0  # calls seen by observe()
        self._cache: dict[str, float] = {}
        self._max = max_cache

    def raw(self, text: str) -> float:
        """Uncalibrated estimate of one string (cached)."""
        hit = self._cache.get(text)
        if hit is None:
            if len(self._cache) >= self._max:
                self._cache.clear()
            hit = self._cache[text] = estimate(text)
        return hit

    def text(self, text: str) -> int:
        """Calibrated tokens of one string."""
        return round(self.raw(text) * self.ratio)

    def raw_messages(self, messages: Iterable[Any]) -> float:
        """Uncalibrated estimate of a message list (ChatMessage objects or OpenAI-style dicts)."""
        total = 0.0
        for m in messages:
            if isinstance(m, dict):
                content, calls = m.get("content") or "", m.get("tool_calls") or []
            else:
                content, calls = m.content or "", m.tool_calls or []
            total += MESSAGE_OVERHEAD + self.raw(content)
            for c in calls:
                if isinstance(c, dict):
                    fn = c.get("function") or c
                    total += self.raw(str(fn.get("name", ""))) + self.raw(str(fn.get("arguments", "")))
                else:
                    total += self.raw(c.name) + self.raw(c.arguments)
        return total

    def messages(self, messages: Iterable[Any]) -> int:
        """Calibrated tokens of a message list."""
        return round(self.raw_messages(messages) * self.ratio)

    def tools(self, specs: list[dict[str, Any]]) -> int:
        """Calibrated tokens of tool specs (their JSON text, as servers count them roughly)."""
        if not specs:
            return 0
        return self.text(json.dumps(specs, ensure_ascii=False, separators=(",", ":")))

    def observe(self, estimated_raw: float, actual: int, weight: float = 0.3) -> None:
        """Calibrate with one call: ``estimated_raw`` (uncalibrated estimate of what was sent) against the server's
        ``prompt_tokens``. Ignores calls without usage. The ratio is clamped to 0.3–3 so one odd server answer
        cannot wreck the meter."""
        if actual <= 0 or estimated_raw <= 0:
            return
        r = min(3.0, max(0.3, actual / estimated_raw))
        self.ratio = r if not self.observed else (1 - weight) * self.ratio + weight * r
        self.observed += 1
