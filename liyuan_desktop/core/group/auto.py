"""Auto-mode of a group chat (issue 31): the members continue among themselves until the user types.

SillyTavern's auto-mode (the group's "Auto Mode" toggle, ``auto_mode_delay`` seconds between turns, default 5) keeps
generating as long as it is on and the user's input box is empty. Liyuan plays it as a *run*: at most
``limit`` turns (the group's ``auto_limit``, default 6), ``delay`` seconds apart, each turn a normal beat without
user words by the member the group's strategy picks (``select_speaker(..., user_input=False)``). A run ends when it
reaches the limit, when it is stopped (:meth:`AutoRun.stop`: the Stop button, the user typing, Ctrl-C), when a turn
did not end in a sealed reply (an error, a stopped beat), or when nobody can speak (ValueError from the turn).

:class:`AutoRun` is the state (no Qt, no chat): the window steps it turn by turn on its beat runner (:meth:`want`,
:meth:`played_one`), the CLI and the tests await :meth:`run`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Optional

from ..messages import Msg, message

#: Outcomes of a beat after which a run goes on (anything else — an error, a stop — ends it).
GOOD_OUTCOMES = ("sealed", "revised_previous")
#: The most turns one run may ask for (the ceiling of ``Group.auto_limit``; ``liyuan chat --auto N`` is held to it).
MAX_TURNS = 100


class AutoRun:
    """One auto-mode run: ``limit`` turns at most (≥ 0), ``delay`` seconds between them (≥ 0; the first turn
    waits too when ``wait_first``). ``played``: turns played so far; ``stopped``: :meth:`stop` was called;
    ``ended``: why the run is over (a catalog message) or None while it may go on."""

    def __init__(self, limit: int, delay: float = 0.0, *, wait_first: bool = False):
        self.limit = max(0, int(limit))
        self.delay = max(0.0, float(delay))
        self.wait_first = wait_first
        self.played = 0
        self.stopped = False
        self.ended: Optional[Msg] = None

    def want(self) -> bool:
        """True while another turn should be played (not stopped, not ended, under the limit)."""
        if self.ended is None and not self.stopped and self.played >= self.limit:
            self.ended = message("group.auto.done", n=self.played, limit=self.limit)
        return self.ended is None and not self.stopped

    def stop(self) -> None:
        """End the run before its next turn (a turn already playing is stopped by the chat's own Stop)."""
        if not self.stopped and self.ended is None:
            self.ended = message("group.auto.stopped", n=self.played)
        self.stopped = True

    def played_one(self, outcome: str) -> None:
        """Count a played turn; a turn whose ``outcome`` is not in :data:`GOOD_OUTCOMES` ends the run."""
        self.played += 1
        if outcome not in GOOD_OUTCOMES and self.ended is None:
            self.ended = message("group.auto.stopped", n=self.played)
            self.stopped = True

    def nobody(self) -> None:
        """No member could be picked: the run ends."""
        self.ended = message("group.auto.none")
        self.stopped = True

    def pause(self) -> float:
        """Seconds to wait before the next turn (``delay``; 0 before the first unless ``wait_first``)."""
        return self.delay if (self.played or self.wait_first) else 0.0

    async def run(self, turn: Callable[[], Awaitable[Any]],
                  sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> list[Any]:
        """Play the run: await ``turn()`` (a beat; its result's ``outcome`` is read) until :meth:`want` says no,
        sleeping :meth:`pause` seconds before each turn (checking for a stop every 0.1 s). Returns the turns'
        results. A ValueError from ``turn`` (nobody can speak) ends the run; other errors propagate."""
        results: list[Any] = []
        while self.want():
            left = self.pause()
            while left > 0 and not self.stopped:
                await sleep(min(0.1, left))
                left -= 0.1
            if self.stopped:
                break
            try:
                res = await turn()
            except ValueError:
                self.nobody()
                break
            results.append(res)
            self.played_one(str(getattr(res, "outcome", "")))
        return results


__all__ = ["AutoRun", "GOOD_OUTCOMES", "MAX_TURNS"]
