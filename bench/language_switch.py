"""The live language switch (issue 32): how long the window takes to be built again in the other language.

    python bench/language_switch.py [--switches 20]

The real window (offscreen QtWebEngine) opens the demo chat and plays one beat on the replay model; then the
language is switched zh ⇄ en ``--switches`` times through the Settings dialog's language combo, as a user does
(ui/window/language_switch.py builds a new window in the new language and closes the old one). Each switch is one
synchronous step on the UI thread; its wall time is measured around the combo change, and the window's conversation
page is let load before the next switch. Reported: median and max ms of a switch, and the page's load after it (ms
until the new window's conversation view is ready; asynchronous, the UI answers meanwhile).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-bench-"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--switches", type=int, default=20)
    args = ap.parse_args()
    from liyuan_desktop.runtime import make_loop, prepare_env

    prepare_env()
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtWidgets import QApplication

    from liyuan_desktop.core import settings as S
    from liyuan_desktop.ui.infra.i18n import set_language
    from liyuan_desktop.ui.window.language_switch import current
    from liyuan_desktop.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(["liyuan-bench"])
    loop = make_loop(app)
    asyncio.set_event_loop(loop)
    set_language("zh")
    out: dict = {}

    async def until(pred, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > end:
                raise SystemExit("timed out")
            await asyncio.sleep(0.01)

    async def run() -> None:
        win = MainWindow(S.AppSettings())
        win.resize(1360, 860)
        win.show()
        await until(win.view.is_ready)
        win.start_demo()
        n = len(win.results)
        win.send_clicked()
        await until(lambda: len(win.results) > n and not win.busy)
        await asyncio.sleep(0.5)
        switch_ms: list[float] = []
        page_ms: list[float] = []
        win.open_settings()
        for i in range(args.switches):
            lang = "en" if i % 2 == 0 else "zh"
            dlg = win.settings_dialog
            t0 = time.perf_counter()
            dlg.language_combo.setCurrentIndex(dlg.language_combo.findData(lang))
            switch_ms.append((time.perf_counter() - t0) * 1000)
            new = current(win)
            assert new is not win, "the switch was deferred"
            win = new
            t1 = time.perf_counter()
            await until(win.view.is_ready)
            page_ms.append((time.perf_counter() - t1) * 1000)
            await until(lambda: not win.busy and not win.session.work_busy)
            await asyncio.sleep(0.3)  # the panes' gathering after the switch ends
        out.update(switches=args.switches, switch_ms_median=round(statistics.median(switch_ms), 1),
                   switch_ms_max=round(max(switch_ms), 1), page_ready_ms_median=round(statistics.median(page_ms), 1),
                   page_ready_ms_max=round(max(page_ms), 1), switch_ms_all=[round(x) for x in switch_ms],
                   send_label=win.send_btn.text())
        win.settings_dialog.reject()
        await asyncio.sleep(0.2)
        current(win).close()

    with loop:
        loop.run_until_complete(run())
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
