"""The one home of the engine's QuickJS contexts (``quickjs-ng``, a project dependency): a context per thread.

A QuickJS context may only be used by the thread that made it, so every user — world-info regex keys
(:mod:`.lore.keys`), EJS templates (:mod:`.macros.ejs`), card regex scripts (:mod:`.cards.regex_engine`) — keeps
its engine in a :class:`PerThread` holder: made on first use in each thread, dropped after an interrupt or
out-of-memory so the next use starts clean, and given up for the whole process when it cannot be made (a missing
or broken package: the caller degrades instead of failing). Each user sets its own limits: the memory limit when
its context is made (:func:`new_context`), a time limit around each call (:func:`time_limit`).

Imports no core package (a foundation, like :mod:`.errors`); ``quickjs`` is imported lazily, on the first context.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

E = TypeVar("E")


def new_context(memory_limit: int) -> tuple[Any, Any]:
    """``(quickjs module, a new quickjs.Context)`` with its memory limit set to ``memory_limit`` bytes. Raises
    whatever importing or starting QuickJS raises (ImportError when ``quickjs-ng`` is missing). Typed ``Any``: the
    ``quickjs`` module ships no type information."""
    import quickjs  # quickjs-ng; lazy: a native module, loaded only when some JavaScript must run

    ctx = quickjs.Context()
    ctx.set_memory_limit(memory_limit)
    return quickjs, ctx


@contextmanager
def time_limit(ctx: Any, seconds: float) -> Iterator[None]:
    """Run the ``with`` body with ``ctx``'s time limit at ``seconds`` (QuickJS raises ``JSException``
    "interrupted" past it), then lift the limit again (-1) even when the body raised; a failure to lift it (a
    context already broken) is ignored."""
    ctx.set_time_limit(seconds)
    try:
        yield
    finally:
        try:
            ctx.set_time_limit(-1)
        except Exception:  # noqa: BLE001 - the context is dropped by its holder anyway
            pass


class PerThread(Generic[E]):
    """One engine ``E`` per thread, made by ``make()`` on the first :meth:`get` in each thread.

    When ``make()`` raises, :attr:`failure` keeps the exception and :meth:`get` answers None from then on, in every
    thread (the package is missing or broken: it will not get better in this process)."""

    def __init__(self, make: Callable[[], E]) -> None:
        self._make = make
        self._local = threading.local()
        self.failure: Optional[Exception] = None

    def get(self) -> Optional[E]:
        """This thread's engine (made now if it has none), or None when making one failed (see :attr:`failure`)."""
        eng: Optional[E] = getattr(self._local, "engine", None)
        if eng is None:
            if self.failure is not None:
                return None
            try:
                eng = self._make()
            except Exception as exc:  # noqa: BLE001 - missing/broken package: the caller degrades
                self.failure = exc
                return None
            self._local.engine = eng
        return eng

    def drop(self) -> None:
        """Forget this thread's engine (after an interrupt or out-of-memory); the next :meth:`get` makes a fresh
        one."""
        self._local.engine = None
