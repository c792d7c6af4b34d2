"""Opening a chat whose card has a heavy display regex (issue 13 §4): first paint and UI-thread stalls.

    python bench/regex_display.py [--beats 30] [--chars 4000]

The card's display script is the real card's ``/([\\s\\S]*)<\\/(think|planning)>/g`` (drops the model's thinking;
QuickJS backtracks over everything after the last ``</think>``, so it costs more the longer the reply). A chat of
``--beats`` beats whose replies carry ``--chars`` characters after their thinking is opened in the real window
(offscreen QtWebEngine): cold (nothing cached: the scripts run on the display worker; measured in the process's
second window — a copy is opened first, as the first window also pays QtWebEngine's start) and warm (a fresh
window after that, as after a restart: everything from the chat's disk cache).

Reported: the scripts' cost per reply measured directly (what the UI thread used to pay per message), open → first
paint (all items in the page), open → filled in (no item left marked ``scripting``), and the longest UI-thread
stall from the first paint until filled in, measured with a 5 ms QTimer (gap between ticks minus the interval).
Targets (issue 13): first paint < 300 ms; no stall over 50 ms while it fills in.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the heavy card builder the tests share
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))


#: qasync 0.28 with PySide6 6.12 drops one reference to None per event-loop callback (``await asyncio.sleep(0)``
#: costs one, measured with ``sys.getrefcount(None)``); after some thousands of callbacks Python aborts with
#: "none_dealloc". Held references keep this polling benchmark clear of it (the app itself needs a real fix).
_NONE_PIN = [None] * 5_000_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--beats", type=int, default=30)
    ap.add_argument("--chars", type=int, default=4000)
    args = ap.parse_args()
    from liyuan_desktop.runtime import make_loop, prepare_env

    prepare_env()
    from heavy_regex_card import THINK_SCRIPT, heavy_reply, make_card, make_chat
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from liyuan_desktop.core import settings as S
    from liyuan_desktop.core.cards import library
    from liyuan_desktop.core.cards.regex_scripts import RegexScript, apply_scripts
    from liyuan_desktop.core.macros import MacroContext
    from liyuan_desktop.ui.window.chat_flow import PAGE
    from liyuan_desktop.ui.window.main_window import MainWindow

    root = Path(tempfile.mkdtemp(prefix="liyuan-regex-bench-"))
    card, card_dir = make_card(root, [THINK_SCRIPT])
    chat_dir = make_chat(root, card, beats=args.beats, chars=args.chars)
    card_ref = library.CardRef(name=card.name, dir=str(card_dir))
    chat_ref = library.ChatRef(name=chat_dir.name, dir=str(chat_dir))
    # the first window of a process also pays QtWebEngine's start (renderer, fonts): a copy of the chat is opened
    # cold in a first window, then the chat itself cold in a second window, then warm in a third
    first_dir = chat_dir.with_name("chat-first-window")
    shutil.copytree(chat_dir, first_dir)
    first_ref = library.ChatRef(name=first_dir.name, dir=str(first_dir))

    # what one reply costs the scripts (formerly paid on the UI thread, per message shown)
    script = RegexScript.model_validate(THINK_SCRIPT)
    costs = []
    for i in range(1, 6):
        t0 = time.perf_counter()
        apply_scripts(heavy_reply(100 + i, args.chars), [script], placement=2, is_markdown=True, depth=1,
                      macros_ctx=MacroContext())
        costs.append((time.perf_counter() - t0) * 1000)

    app = QApplication([])
    app.setQuitOnLastWindowClosed(False)  # the cold window closes before the warm one opens
    loop = make_loop(app)
    asyncio.set_event_loop(loop)
    out: dict = {"beats": args.beats, "chars": args.chars, "script_ms_per_reply": round(statistics.median(costs), 1)}

    async def dom(win) -> list:
        box: list = []
        win.view.eval_js("JSON.stringify(Array.from(document.querySelectorAll('#log .msg')).map("
                         "e => e.classList.contains('scripting')))", box.append)
        while not box:
            await asyncio.sleep(0.005)
        return json.loads(box[0])

    async def one(label: str, ref=chat_ref) -> None:
        win = MainWindow(S.AppSettings())
        win.resize(1000, 800)
        win.show()
        while not win.view.is_ready():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        want = min(1 + 2 * args.beats, PAGE)  # the window shows the newest page; older pages come on scrolling
        gaps: list[float] = []
        at: list[int] = []
        last = [0.0]

        def tick() -> None:
            now = time.perf_counter()
            if last[0]:
                gaps.append((now - last[0]) * 1000 - 5)
                at.append(round((now - t0) * 1000))
            last[0] = now

        timer = QTimer()
        timer.setInterval(5)
        timer.timeout.connect(tick)
        t0 = time.perf_counter()
        win.open_chat(card_ref, ref)
        opened = time.perf_counter()
        while len(await dom(win)) < want:
            await asyncio.sleep(0.005)
        first = time.perf_counter()
        timer.start()
        while True:
            flags = await dom(win)
            if len(flags) == want and not any(flags) and win.display_worker.idle():
                break
            await asyncio.sleep(0.05)
        filled = time.perf_counter()
        timer.stop()
        # control: the same meter for 3 s with nothing to fill in (what the machine's load alone costs)
        idle_gaps = len(gaps)
        last[0] = 0.0
        timer.start()
        await asyncio.sleep(3.0)
        timer.stop()
        control = gaps[idle_gaps:]
        del gaps[idle_gaps:], at[idle_gaps:]
        out[label] = {"open_chat_call_ms": round((opened - t0) * 1000, 1),
                      "first_paint_ms": round((first - t0) * 1000, 1),
                      "filled_in_ms": round((filled - t0) * 1000, 1),
                      "longest_stall_ms": round(max(gaps, default=0.0), 1),
                      "stalls_over_50ms": sum(1 for g in gaps if g > 50),
                      "ticks": len(gaps),
                      "control_idle_longest_stall_ms": round(max(control, default=0.0), 1),
                      "top_stalls_ms_at_ms": sorted(zip((round(g, 1) for g in gaps), at), reverse=True)[:3]}
        win.close()
        win.deleteLater()
        await asyncio.sleep(0.2)

    async def go() -> None:
        await one("cold_first_window", first_ref)
        await one("cold")
        await one("warm")

    with loop:
        loop.run_until_complete(go())
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
