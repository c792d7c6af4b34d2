"""Status-bar update latency: from ``ConversationView.push_variables`` (what the app calls after the scribe applied
an mvu_patch) to the bar having repainted the new value inside its sandboxed frame.

    python bench/statusbar.py [--runs 30]

A small bar listens for ``mag_variable_update_ended``, writes the value into its DOM, waits one animation frame and
reports through the shim's ``__liyuanReport``; the host records it; Python polls the host every 2 ms. Offscreen,
real QtWebEngine. Target (issue 5): under 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))

BAR = """```html
<html><body><div id="v">?</div><script>
const show = () => { document.getElementById('v').textContent = String(getVariables({type:'message'}).stat_data.好感);
  requestAnimationFrame(() => __liyuanReport({v: document.getElementById('v').textContent})); };
eventOn(Mvu.events.VARIABLE_UPDATE_ENDED, show); show();
</script></body></html>
```"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    from liyuan_desktop.runtime import make_loop, prepare_env

    prepare_env()
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtWidgets import QApplication

    from liyuan_desktop.ui.frames.conversation import ConversationView

    app = QApplication([])
    loop = make_loop(app)
    asyncio.set_event_loop(loop)
    view = ConversationView()
    view.resize(800, 600)
    view.show()
    times: list[float] = []

    async def reports() -> list:
        box: list = []
        view.eval_js("JSON.stringify(window.liyuan.frameReports())", box.append)
        while not box:
            await asyncio.sleep(0.001)
        return json.loads(box[0])

    async def go() -> None:
        while not view.is_ready():
            await asyncio.sleep(0.02)
        view.show_chat()
        view.set_transcript([{"id": "1", "role": "assistant", "text": BAR, "beat": 1, "variables": {"stat_data": {"好感": 0}}}], False)
        while not await reports():
            await asyncio.sleep(0.02)
        for i in range(1, args.runs + 1):
            n = len(await reports())
            t0 = time.perf_counter()
            view.push_variables("1", {"stat_data": {"好感": i}})
            while True:
                r = await reports()
                if len(r) > n and r[-1]["data"]["v"] == str(i):
                    break
                await asyncio.sleep(0.002)
            times.append((time.perf_counter() - t0) * 1000)

    with loop:
        loop.run_until_complete(go())
    times.sort()
    print(f"statusbar: push_variables -> bar repainted, {len(times)} updates (offscreen QtWebEngine)")
    print(f"  median {statistics.median(times):.1f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.1f} ms, max {times[-1]:.1f} ms  (target < 100 ms)")


if __name__ == "__main__":
    main()
