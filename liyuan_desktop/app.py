"""The desktop app: a QApplication with a qasync event loop; the engine runs on that loop and never blocks the UI.

    liyuan                                  open the window (first run: the welcome page offers the offline demo)
    liyuan --self-test [--screenshot FILE]  play the demo through the real window, check it, exit 0/1

The Chromium sandbox stays on for normal users. It is turned off only when running as root
(../shared/design/desktop-stack.md), when the system forbids unprivileged user namespaces (Chromium's sandbox needs
them and QtWebEngine would abort with "No usable sandbox"; a warning goes to the log), or when the user sets
LIYUAN_NO_SANDBOX=1. Logs go to the user log folder with rotation; an uncaught exception is logged and shows a
(non-modal) dialog with the log path — everything is already on disk, so no chat is lost.
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


_SANDBOX = "on"  # why the Chromium sandbox is off, or "on" (set by _prepare_env, shown in the About dialog)


def userns_sandbox_possible() -> bool:
    """Whether Chromium's namespace sandbox can start here (Linux): a forked child tries to unshare a user, PID and
    network namespace, as the sandbox does. False where the kernel, a container or an AppArmor/SELinux policy
    forbids unprivileged user namespaces. Always True off Linux."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return True
    try:
        import ctypes

        unshare = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):
        return True
    clone_newuser, clone_newpid, clone_newnet = 0x10000000, 0x20000000, 0x40000000
    pid = os.fork()
    if pid == 0:  # child: never returns into Python code
        code = 1
        try:
            code = 0 if unshare(clone_newuser | clone_newpid | clone_newnet) == 0 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def sandbox_state() -> str:
    """The web sandbox as the user should read it: on, or off and why (for the About dialog and the log)."""
    from .ui.i18n import tr

    return tr("sandbox.on") if _SANDBOX == "on" else tr(f"sandbox.off.{_SANDBOX}")


def _prepare_env() -> None:
    global _SANDBOX
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("LANG", "C.UTF-8") if not os.environ.get("LANG") else None
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if "--log-level" not in flags:
        flags = (flags + " --log-level=3").strip()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        _SANDBOX = "root"
    elif os.environ.get("LIYUAN_NO_SANDBOX") == "1" or os.environ.get("QTWEBENGINE_DISABLE_SANDBOX") == "1" \
            or "--no-sandbox" in flags:
        _SANDBOX = "user"
    elif not userns_sandbox_possible():
        _SANDBOX = "userns"
    if _SANDBOX != "on":
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


_crash_box = None  # the crash dialog on screen (one at a time; every exception is in the log anyway)


def show_crash_dialog(tp, value, logfile: Path):
    """Show the error and the log path in a non-modal dialog when a QApplication exists (returns it, else None).
    Non-modal, so no nested event loop starts inside the failing code and the engine keeps running."""
    global _crash_box
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        return None
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices
    from PySide6.QtWidgets import QMessageBox

    from .ui.i18n import tr

    if _crash_box is not None and _crash_box.isVisible():
        return _crash_box
    box = QMessageBox(QMessageBox.Icon.Critical, tr("crash.title"),
                      tr("crash.body", error=f"{tp.__name__}: {value}", log=str(logfile)))
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    open_logs = box.addButton(tr("crash.open_logs"), QMessageBox.ButtonRole.ActionRole)
    open_logs.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(logfile).parent))))
    box.setModal(False)
    box.show()
    _crash_box = box
    return box


def install_excepthook(logfile: Path) -> None:
    """Route uncaught exceptions (also those raised in Qt slots) to the log, and to a dialog with the log path once
    the QApplication exists. The session files are append-only and written as the beat goes, so no chat is lost."""

    def excepthook(tp, value, tb) -> None:
        logging.getLogger("liyuan").error("uncaught: %s", "".join(traceback.format_exception(tp, value, tb)))
        if issubclass(tp, KeyboardInterrupt):
            sys.__excepthook__(tp, value, tb)
            return
        try:
            if show_crash_dialog(tp, value, logfile) is None:
                sys.__excepthook__(tp, value, tb)
        except Exception:  # noqa: BLE001 - the hook itself must never raise
            sys.__excepthook__(tp, value, tb)

    sys.excepthook = excepthook


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
    install_excepthook(logfile)
    from PySide6 import QtWebEngineWidgets  # noqa: F401  must come before the QApplication

    from .ui.about import app_icon, build_info, build_label

    info = build_info()
    logging.getLogger("liyuan").info("start: version %s, build %s, frozen %s, web sandbox %s", info["version"],
                                     build_label(info), info["frozen"], _SANDBOX)
    if _SANDBOX == "userns":
        logging.getLogger("liyuan").warning(
            "Chromium sandbox OFF: this system forbids unprivileged user namespaces (kernel setting, container or "
            "AppArmor/SELinux policy), so QtWebEngine runs with --no-sandbox. Card HTML still runs in sandboxed "
            "iframes with a strict CSP.")

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Liyuan")
    app.setApplicationVersion(info["version"])
    app.setDesktopFileName("liyuan")  # matches liyuan.desktop (taskbar grouping, Wayland app id)
    app.setWindowIcon(app_icon())
    loop = make_loop(app)
    asyncio.set_event_loop(loop)

    from .core.settings import load_settings
    from .ui.i18n import set_language
    from .ui.main_window import MainWindow

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
