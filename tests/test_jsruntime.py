"""core/jsruntime.py: the one per-thread holder of QuickJS contexts (world-info regex keys, EJS, regex scripts)."""
from __future__ import annotations

import threading

import pytest

from liyuan_desktop.core.jsruntime import PerThread, new_context, time_limit


def test_each_thread_gets_its_own_engine_and_a_drop_makes_a_fresh_one():
    holder: PerThread[object] = PerThread(object)
    mine = holder.get()
    assert mine is not None and holder.get() is mine
    seen: list[object] = []
    t = threading.Thread(target=lambda: seen.append(holder.get()))
    t.start()
    t.join(timeout=30)
    assert seen and seen[0] is not None and seen[0] is not mine
    holder.drop()
    assert holder.get() is not mine


def test_an_engine_that_cannot_be_made_is_given_up_and_its_failure_kept():
    calls: list[int] = []

    def broken() -> object:
        calls.append(1)
        raise ImportError("no quickjs here")

    holder: PerThread[object] = PerThread(broken)
    assert holder.get() is None and holder.get() is None
    assert len(calls) == 1 and isinstance(holder.failure, ImportError)


def test_a_context_is_interrupted_past_its_time_limit_and_usable_after():
    quickjs, ctx = new_context(16 * 1024 * 1024)
    with pytest.raises(quickjs.JSException, match="interrupted"):
        with time_limit(ctx, 0.05):
            ctx.eval("for (;;) {}")
    assert ctx.eval("1 + 1") == 2  # the limit is lifted again


def test_the_memory_limit_holds():
    quickjs, ctx = new_context(4 * 1024 * 1024)
    with pytest.raises(quickjs.JSException):
        ctx.eval("var a = []; for (var i = 0; i < 1e8; i++) a.push('xxxxxxxxxxxxxxxx' + i);")
