"""The freeze a message-flooding status bar causes (issue 29 §9): a bar that posts to the host page as fast as it can
(bursts of 20,000 postMessage calls in a loop for four seconds) is stopped by the page's flood rule; how long does
the host page stay unanswering meanwhile?

    python bench/frame_flood.py [--runs 3] [--via parent|top|calm]

``--via parent`` (default): the bar calls ``parent.postMessage``, as bars do (the frame runtime's own bucket drops
the excess before it crosses); ``top``: ``top.postMessage``, which no script in the frame can intercept (only the
host page's bucket and frame_guard.after_flood stand); ``calm``: a bar that posts nothing (the baseline: showing a
bar at all).

Per run, a fresh transcript with the flooding bar is shown in a real conversation view (offscreen QtWebEngine) and
a trivial script is sent to the page every 10 ms (the next one when the last came back). Printed, medians over the
runs: the longest page round trip (the freeze the user sees: clicks, scrolling and updates wait that long), the
longest stall of the UI thread's event loop (a 10 ms QTimer), the time from the first flood message the page saw
to the frame's stop reaching Python, and from the stop to the page answering again (it may be reloaded:
frame_guard.after_flood).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))

FLOOD = """```html
<body><b id="v">洪水</b><script>
  var t0 = Date.now(), n = 0;
  function burst() {
    if (n === 0) parent.postMessage({__th: 'log', level: 'info', text: 'first ' + Date.now()}, '*');
    for (var i = 0; i < 20000; i++) parent.postMessage({__th: 'log', level: 'info', text: 'f' + (n++)}, '*');
    if (Date.now() - t0 < 4000) setTimeout(burst, 0);
  }
  setTimeout(burst, 100);
</script></body>
```"""


CALM = """```html
<body><b id="v">安静</b><script>__liyuanReport({ok: 1});</script></body>
```"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--via", choices=("parent", "top", "calm"), default="parent")
    ap.add_argument("--verbose", action="store_true", help="log the page's and the guard's lines with times")
    args = ap.parse_args()
    if args.verbose:
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(relativeCreated)7.0f ms %(name)s: %(message)s")
    from liyuan_desktop.runtime import make_loop, prepare_env

    prepare_env()
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from liyuan_desktop.ui.frames.conversation import ConversationView

    app = QApplication([])
    loop = make_loop(app)
    asyncio.set_event_loop(loop)
    view = ConversationView()
    view.resize(800, 600)
    view.show()
    rows: list[dict] = []

    async def ask(script: str, timeout: float = 30.0):
        box: list = []
        view.eval_js(script, box.append)
        end = time.monotonic() + timeout
        while not box and time.monotonic() < end:
            await asyncio.sleep(0.002)
        return box[0] if box else None

    async def run_once(k: int) -> dict:
        failed: list = []
        view.frameFailed.connect(lambda name, why: failed.append((time.time(), name, why)))
        worst = {"page": 0.0, "loop": 0.0}
        state = {"sent": None, "last": time.monotonic(), "first": None}

        def tick() -> None:
            now = time.monotonic()
            worst["loop"] = max(worst["loop"], (now - state["last"]) * 1000)
            state["last"] = now
            if state["sent"] is None:
                state["sent"] = now

                def back(_v, sent=now) -> None:
                    worst["page"] = max(worst["page"], (time.monotonic() - sent) * 1000)
                    state["sent"] = None
                view.eval_js("1", back)
            else:
                worst["page"] = max(worst["page"], (now - state["sent"]) * 1000)
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(tick)
        # the page notes when the first flood message arrived (the bar's first message carries its send time)
        await ask("window.__flood = null; window.addEventListener('message', function (e) {"
                  " if (!window.__flood && e.data && /^first /.test(e.data.text || '')) window.__flood = Date.now(); });"
                  " true")
        timer.start()
        bar = CALM if args.via == "calm" else FLOOD.replace("parent.postMessage", args.via + ".postMessage")
        view.set_transcript([{"id": str(100 + k), "role": "assistant", "text": bar, "beat": 1}], False)
        end = time.monotonic() + (3 if args.via == "calm" else 60)
        while not failed and time.monotonic() < end:
            await asyncio.sleep(0.005)
        while await ask("1 + 1", 0.5) != 2 and time.monotonic() < end:
            pass
        t_back = time.time()
        await asyncio.sleep(0.5)
        timer.stop()
        first = await ask("window.__flood")
        stopped = failed[0][0] if failed else float("nan")
        return {"page": worst["page"], "loop": worst["loop"], "why": failed[0][2] if failed else None,
                "detect": (stopped - first / 1000) * 1000 if first else float("nan"), "back": (t_back - stopped) * 1000}

    async def go() -> None:
        while not view.is_ready():
            await asyncio.sleep(0.02)
        view.show_chat()
        view.set_transcript([{"id": "0", "role": "assistant", "text": "warm-up", "beat": 1}], False)
        await asyncio.sleep(1.0)
        for k in range(args.runs):
            rows.append(await run_once(k))
            view.set_transcript([{"id": "1", "role": "assistant", "text": "calm", "beat": 1}], False)
            await asyncio.sleep(1.0)

    with loop:
        loop.run_until_complete(go())

    def med(key: str) -> str:
        vals = [r[key] for r in rows if r[key] == r[key]]  # (nan: the page was reloaded, or nothing was stopped)
        return f"{statistics.median(vals):.0f}" if vals else "n/a"
    print(f"frame flood via {args.via}: {args.runs} runs, offscreen QtWebEngine, stopped as {[r['why'] for r in rows]}")
    print(f"  longest page round trip (the view's freeze): median {med('page')} ms "
          f"(runs: {', '.join(str(round(r['page'])) for r in rows)})")
    print(f"  longest UI event-loop stall: median {med('loop')} ms")
    print(f"  first flood message in the page -> stop reached Python: median {med('detect')} ms")
    print(f"  stop -> page answering again: median {med('back')} ms")


if __name__ == "__main__":
    main()
