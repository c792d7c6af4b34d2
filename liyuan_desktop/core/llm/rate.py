"""The minimum output rate of a model call (issue 29 item 3): a reply that trickles is cut.

The idle timeout (:attr:`.openai_client.OpenAIChatModel.idle_timeout`) only ends a stream that sends no new content
at all, and the total timeout only after many minutes: a server sending one character every two seconds passes the
first and holds the beat for the whole of the second. :class:`MinRate` is the third clock: once the first piece of
content has arrived, every sliding window of ``window`` seconds must bring at least ``chars`` characters of content
(text, reasoning, tool names and arguments), or the call is cut — with what arrived kept, like the other two.

The clock is event-driven, not polled: after each arrival :meth:`MinRate.deadline` says when the rule would fail
if nothing more came, and the client's ``asyncio.timeout_at`` is rescheduled to the earliest of the three clocks.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Optional

__all__ = ["MinRate"]


class MinRate:
    """At least ``chars`` characters in every ``window`` seconds after the first one (times: the event loop's clock,
    seconds). ``chars <= 0`` or ``window <= 0`` switches the rule off (:attr:`on` False, :meth:`deadline` None).

    Call :meth:`seen` with the running total of characters whenever it grows; :meth:`deadline` is then the loop time
    at which the rule fails unless more arrives. Memory: one sample per arrival inside the last window (older ones are
    dropped as the window moves on); each call is O(log n)."""

    def __init__(self, chars: int, window: float):
        self.chars = int(chars)
        self.window = float(window)
        self.on = self.chars > 0 and self.window > 0
        self._start: Optional[float] = None  # when the first content arrived
        self._times: list[float] = []
        self._totals: list[int] = []
        self._head = 0  # samples before it have left the window

    @property
    def started(self) -> bool:
        """Whether the first content has arrived (the rule runs from then on)."""
        return self._start is not None

    def seen(self, now: float, total: int) -> None:
        """``total`` characters have arrived by loop time ``now`` (non-decreasing in both)."""
        if not self.on:
            return
        if self._start is None:
            self._start = now
        self._times.append(now)
        self._totals.append(total)
        # keep one sample at or before the window's left edge: the count at that edge is read from it
        edge = now - self.window
        while self._head + 1 < len(self._times) and self._times[self._head + 1] <= edge:
            self._head += 1
        if self._head > 1024 and self._head * 2 > len(self._times):
            del self._times[:self._head], self._totals[:self._head]
            self._head = 0

    def deadline(self) -> Optional[float]:
        """The loop time at which fewer than :attr:`chars` characters will have arrived in the last :attr:`window`
        seconds if nothing more comes; None before the first content or when the rule is off.

        With ``C`` the running total, the characters in the window ending at ``T`` are ``C - total(T - window)``
        (``total(t)``: the running total at time ``t``); the rule fails at the first ``T`` (not before the first
        content + ``window``) at which ``total(T - window) > C - chars``, i.e. ``window`` seconds after the first
        sample whose total exceeds ``C - chars``."""
        if not self.on or self._start is None:
            return None
        current = self._totals[-1]
        j = bisect_right(self._totals, current - self.chars, lo=self._head)
        j = min(j, len(self._totals) - 1)
        return max(self._start + self.window, self._times[j] + self.window)

    def rate_in_window(self, now: float) -> int:
        """Characters that arrived in the ``window`` seconds before ``now`` (for the error message)."""
        if not self._totals:
            return 0
        i = bisect_right(self._times, now - self.window, lo=0) - 1
        return self._totals[-1] - (self._totals[i] if i >= 0 else 0)
