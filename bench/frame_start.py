"""Status-bar frame start cost: how long ``ConversationView.set_transcript`` with N small bars takes until every bar
has run its script, and how much memory the page's processes hold afterwards.

    python bench/frame_start.py [--frames 20] [--runs 3] [--touch z]

Each bar is a few lines of HTML whose script reports through the shim's ``__liyuanReport``; it calls no library
(``--touch NAME`` makes it read the global ``NAME`` first, e.g. ``z`` or ``Vue``, to time a library being brought
in on first use). Start time: from ``set_transcript`` to the N-th report (Python polls the host every 2 ms).
Memory: the proportional set size (PSS, /proc/PID/smaps_rollup) of this process's QtWebEngine children (renderer,
GPU, utility, zygotes), summed; Linux only. Offscreen, real QtWebEngine.
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


def bar(i: int, touch: str) -> str:
    """A small status bar that reports once its script ran (after reading the global ``touch`` when given)."""
    pre = f"const lib = typeof {touch}; " if touch else "const lib = ''; "
    return ("```html\n<html><body><div id=\"v\">?</div><script>\n" + pre +
            f"document.getElementById('v').textContent = '{i}';\n"
            "__liyuanReport({i: " + str(i) + ", lib: lib});\n</script></body></html>\n```")


def children_pss_kib(pid: int) -> int:
    """Summed PSS (KiB) of every descendant process of ``pid``."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--touch", default="", help="a global each bar reads first (z, Vue, YAML, _, $ …)")
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
    mem: list[int] = []
    libs: list[str] = []

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
        # every bar is built at once, wherever it is (the view builds only bars near the screen: conversation.js
        # "frame memory"), so this measures N frames starting; bench/ui_start.py --card measures the window's way
        view.eval_js("liyuan.setFrameMemory({nearMargin: '100000px 0px', farMargin: '100000px 0px'})")
        view.set_transcript([{"id": "0", "role": "assistant", "text": "warm-up", "beat": 1}], False)
        await asyncio.sleep(1.0)  # the page and frame_libs.js loaded
        for run in range(args.runs):
            base = run * 1000
            items = [{"id": str(base + i), "role": "assistant", "text": bar(base + i, args.touch), "beat": 1}
                     for i in range(args.frames)]
            t0 = time.perf_counter()
            view.set_transcript(items, False)
            while True:
                got = [r for r in await reports() if isinstance(r.get("data"), dict) and r["data"].get("i", -1) >= base]
                if len(got) >= args.frames:
                    break
                await asyncio.sleep(0.002)
            times.append((time.perf_counter() - t0) * 1000)
            libs.append(str(got[-1]["data"].get("lib")))
            await asyncio.sleep(1.5)  # settle, then measure
            mem.append(children_pss_kib(os.getpid()))

    with loop:
        loop.run_until_complete(go())
    print(f"frame start: {args.frames} bars{' reading ' + args.touch if args.touch else ''} (typeof: {libs[-1]!r}), "
          f"{args.runs} runs, offscreen QtWebEngine")
    print(f"  set_transcript -> all bars ran: median {statistics.median(times):.0f} ms, "
          f"max {max(times):.0f} ms ({statistics.median(times) / args.frames:.1f} ms per bar)")
    print(f"  QtWebEngine processes PSS after: median {statistics.median(mem) / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
