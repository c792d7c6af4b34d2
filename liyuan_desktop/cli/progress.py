"""Progress and Ctrl-C for long terminal commands (issue 15 item 11), in the callback shapes the engine's long steps
take (``progress(done, total)``, ``cancelled() -> bool``; e.g. ``core.chat.st_import``)::

    with Interrupt() as stop:
        bar = StderrProgress("导入")
        do_the_work(progress=bar, cancelled=stop)
        bar.done()

:class:`StderrProgress` writes to stderr — a ``\\r`` bar redrawn at most ~10 times a second when stderr is a terminal,
else one line per 5 % (logs and pipes stay readable); stdout keeps only the command's result. :class:`Interrupt`
turns the first Ctrl-C into a request the work checks (so it can clean up and stop); a second Ctrl-C interrupts as
usual.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import Any, Optional, TextIO


class StderrProgress:
    """``progress(done, total)`` → stderr (module doc). ``label``: what is being done, shown before the figure."""

    def __init__(self, label: str, stream: Optional[TextIO] = None, tty: Optional[bool] = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._last_pct = -5
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        pct = 100 * done // total if total > 0 else 100
        if self.tty:
            now = time.monotonic()
            if now - self._last_draw < 0.1 and pct < 100:
                return
            self._last_draw = now
            filled = pct * 30 // 100
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {pct:3d}%")
            self.stream.flush()
            self._drawn = True
        elif pct >= self._last_pct + 5 or (pct == 100 and self._last_pct < 100):
            self._last_pct = pct - pct % 5 if pct < 100 else 100
            self.stream.write(f"{self.label} {self._last_pct}%\n")
            self.stream.flush()

    def done(self) -> None:
        """End the bar's line (terminal only)."""
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


class Interrupt:
    """A context manager whose value is ``cancelled()``: True after the first Ctrl-C (SIGINT) inside it. The old
    handler comes back on exit; outside the main thread it does nothing (signals go to the main thread only)."""

    def __init__(self) -> None:
        self.requested = False
        self._old: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:  # a second Ctrl-C: the user means it
            raise KeyboardInterrupt
        self.requested = True

    def __call__(self) -> bool:
        return self.requested

    def __enter__(self) -> "Interrupt":
        try:
            self._old = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread
            self._old = None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
