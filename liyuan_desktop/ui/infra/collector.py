"""The garbage collector's bookkeeping that the task runner and the collector's pump share (ui/infra/work.py module
doc, "Where the collector runs"): one lock held while big work builds or a full pass runs, whether what big work built
is frozen, and :func:`hold_collector`, which ``run_in_worker(big=True)`` (ui/infra/tasks.py) wraps big work in. Its own
module so that tasks.py and work.py both stand on it and neither imports the other back."""

from __future__ import annotations

import gc
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

#: Held while big work runs (its objects are frozen after it, never walked by passes on the way) and while a full
#: collection of frozen objects runs; the pump skips its tick while it is held.
GC_LOCK = threading.Lock()


class CollectorState:
    """Whether big work froze objects (``gc.freeze``) that a later :func:`~.work.collect_frozen` must put back."""

    frozen: bool = False


STATE = CollectorState()


def hold_collector(fn: Callable[[Any], T]) -> Callable[[Any], T]:
    """``fn`` (called with the task's :class:`~.tasks.Work`) with full garbage-collector passes held off while it runs
    and its objects frozen after (ui/infra/work.py module doc; ``run_in_worker(big=True)``). What earlier big work
    froze stays frozen: a replaced chat is freed by :func:`~.work.release`, not by a collection."""

    def run(work: Any) -> T:
        with GC_LOCK:
            threshold = gc.get_threshold()
            gc.set_threshold(threshold[0], threshold[1], 10**9)
            try:
                return fn(work)
            finally:
                gc.freeze()
                STATE.frozen = True
                gc.set_threshold(*threshold)

    return run
