"""ui/window/warm.py: every warm-up step names something that exists (a renamed module would silently stop warming)."""

from __future__ import annotations

import asyncio

from liyuan_desktop.ui.window import warm


def test_every_warm_up_step_runs():
    for name, fn in warm.steps() + warm.later_steps():
        fn()  # raises if a module was renamed or the tool sets changed shape
    from liyuan_desktop.core.beat.events import BeatFinished  # a model built on first use (core/deferred.py)

    assert BeatFinished.__pydantic_complete__  # the later step built it ahead of the first beat


def test_the_warm_up_yields_between_steps(qloop, monkeypatch):
    """One step per turn of the loop: the window's other callbacks run between the steps."""
    order: list[str] = []
    monkeypatch.setattr(warm, "steps", lambda: [(f"s{i}", lambda i=i: order.append(f"s{i}")) for i in range(3)])
    monkeypatch.setattr(warm, "later_steps", lambda: [])

    async def other() -> None:
        for i in range(3):
            order.append(f"t{i}")
            await asyncio.sleep(0)

    async def both() -> None:
        await asyncio.gather(warm._run(0.0, 0.0), other())

    qloop.run_until_complete(both())
    steps_at = [i for i, x in enumerate(order) if x.startswith("s")]
    assert len(steps_at) == 3 and all(b - a >= 2 for a, b in zip(steps_at, steps_at[1:])), order
