"""The desktop app: a QApplication with a qasync event loop; the engine runs on that loop and never blocks the UI.

    liyuan                                  open the window (first run: the welcome page offers the offline demo)
    liyuan --self-test [--screenshot FILE]  play the demo through the real window, check it, exit 0/1

The Chromium sandbox is disabled only when running as root (../shared/design/desktop-stack.md). Logs go to the
user log folder with rotation; an uncaught exception shows a dialog with the log path (everything is already on
disk, so no chat is lost).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import logging.handlers
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Optional

import platformdirs


def _prepare_env() -> None:
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("LANG", "C.UTF-8") if not os.environ.get("LANG") else None
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if "--log-level" not in flags:
        flags = (flags + " --log-level=3").strip()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.environ["QTWEBENGINE_DISABLE_SANDBOX"] = "1"
        if "--no-sandbox" not in flags:
            flags += " --no-sandbox"
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = flags


def log_path() -> Path:
    """The rotating log file: ``$LIYUAN_HOME/logs`` when LIYUAN_HOME is set, else the platform's user log folder."""
    home = os.environ.get("LIYUAN_HOME", "").strip()
    d = Path(home).expanduser() / "logs" if home else Path(platformdirs.user_log_dir("liyuan", appauthor=False))
    d.mkdir(parents=True, exist_ok=True)
    return d / "liyuan.log"


def _setup_logging() -> Path:
    path = log_path()
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def make_loop(app):
    """A qasync loop for ``app``, with asyncio's async-generator hooks installed (qasync's run_forever does not
    install them, so half-read httpx streams would be finalised with no running loop and print warnings)."""
    import qasync

    loop = qasync.QEventLoop(app)
    sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook)
    return loop


def has_display() -> bool:
    """True when Qt can open a window here (a display, or an explicit QT_QPA_PLATFORM such as offscreen)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _bench_start(win, path: str) -> None:
    """For bench/ui_start.py: record wall-clock stamps (time.time()) of the first paint of the window and of the
    demo chat being ready for input, write them to ``path``, then quit once ``path + ".quit"`` appears."""
    import json
    import time

    from PySide6.QtCore import QEvent, QObject, QTimer

    stamps: dict[str, float] = {}

    class FirstPaint(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802 - Qt API
            if ev.type() == QEvent.Type.Paint and "paint" not in stamps:
                stamps["paint"] = time.time()
            return False

    f = FirstPaint(win)
    win.installEventFilter(f)

    async def go() -> None:
        while not win.view.is_ready():
            await asyncio.sleep(0.005)
        win.start_demo()
        while win.chat is None or not win.send_btn.isEnabled():
            await asyncio.sleep(0.005)
        box: list = []
        win.view.eval_js("document.querySelectorAll('[data-role]').length", box.append)  # the transcript is in
        while not box:
            await asyncio.sleep(0.005)
        stamps["interactive"] = time.time()
        Path(path).write_text(json.dumps(stamps))
        while not Path(path + ".quit").exists():
            await asyncio.sleep(0.05)
        QTimer.singleShot(0, win.close)

    asyncio.ensure_future(go())


def main(argv: Optional[list[str]] = None) -> int:
    """Start the window (or the self-test). Returns the exit code."""
    ap = argparse.ArgumentParser(prog="liyuan", description="梨园 Liyuan Desktop")
    ap.add_argument("--self-test", action="store_true", help="play the demo through the real window and check it")
    ap.add_argument("--screenshot", help="save a screenshot of the window (with --self-test: at the end)")
    ap.add_argument("--offscreen", action="store_true", help="no visible window (QT_QPA_PLATFORM=offscreen)")
    ap.add_argument("--bench-start", metavar="FILE", help=argparse.SUPPRESS)  # bench/ui_start.py
    args = ap.parse_args(argv)
    if args.offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if not has_display():
        print("liyuan: 这里没有图形界面（DISPLAY 未设置），改在终端里演示；要看窗口请在桌面环境里运行。", file=sys.stderr)
        from .cli import main as cli_main

        return cli_main(["chat", "--demo"])
    if args.self_test and not os.environ.get("LIYUAN_HOME"):
        os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-selftest-")
    _prepare_env()
    logfile = _setup_logging()

    from PySide6 import QtWebEngineWidgets  # noqa: F401  must come before the QApplication
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Liyuan")
    loop = make_loop(app)
    asyncio.set_event_loop(loop)

    from .core.settings import load_settings
    from .ui.i18n import set_language
    from .ui.main_window import MainWindow

    def excepthook(tp, value, tb) -> None:
        logging.getLogger("liyuan").error("uncaught: %s", "".join(traceback.format_exception(tp, value, tb)))
        try:
            QMessageBox.critical(None, "梨园出错了", f"{tp.__name__}: {value}\n\n对话都已存盘，没有丢失。\n详细日志：{logfile}")
        except Exception:
            pass

    sys.excepthook = excepthook
    settings = load_settings()
    set_language(settings.ui_language)
    if settings.ui_language == "zh":  # Qt's own buttons (Yes/No, Cancel…) in Chinese too
        from PySide6.QtCore import QLibraryInfo, QTranslator

        qt_tr = QTranslator(app)
        if qt_tr.load("qtbase_zh_CN", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            app.installTranslator(qt_tr)
    win = MainWindow(settings)
    win.show()
    if args.self_test:
        from .ui.selftest import report_json, run_self_test

        async def go() -> int:
            ok, report = await run_self_test(win, args.screenshot)
            print(report_json(report))
            win.close()
            return 0 if ok else 1

        with loop:
            return loop.run_until_complete(go())
    if args.bench_start:
        _bench_start(win, args.bench_start)
    else:
        win.start()
    if args.screenshot:
        async def shot() -> None:
            await asyncio.sleep(1.5)
            win.grab().save(args.screenshot)

        asyncio.ensure_future(shot())
    import signal

    from PySide6.QtCore import QTimer

    # SIGTERM/SIGINT close the window the normal way (state saved, a running beat stopped and stored)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, win.close))
    wake = QTimer()  # lets Python run its signal handlers while Qt waits
    wake.start(300)
    wake.timeout.connect(lambda: None)
    done = asyncio.Event()
    app.aboutToQuit.connect(done.set)
    with loop:
        loop.run_until_complete(done.wait())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
