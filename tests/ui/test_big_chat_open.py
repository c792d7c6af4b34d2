"""The stall meter every UI scale test uses (issue 15 item 12): it sees a stall the UI thread really has, and an idle
loop reads low. (The 50,000-entry-book and 100,000-message opens still run on the UI thread; their tests come with
the move to a worker.)"""

from __future__ import annotations

import asyncio
import time

from uihelpers import LoopStallMeter


async def test_stall_meter_sees_a_blocked_loop_and_not_an_idle_one(qtbot, record_property):
    with LoopStallMeter() as idle:
        await asyncio.sleep(0.3)
    with LoopStallMeter() as blocked:
        await asyncio.sleep(0.05)
        time.sleep(0.4)  # the UI thread blocked, as a synchronous parse would block it
        await asyncio.sleep(0.05)
    record_property("idle_worst_ms", round(idle.worst_ms))
    record_property("blocked_worst_ms", round(blocked.worst_ms))
    assert idle.ticks > 0 and blocked.ticks > 0
    assert blocked.worst_ms >= 390  # the 400 ms block is seen (never less than the block itself)
