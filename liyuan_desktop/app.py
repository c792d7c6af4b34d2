"""The desktop app: a QApplication with a qasync event loop; the engine runs on that loop and never blocks the UI.

    liyuan                                  open the window (first run: the welcome page offers the offline demo)
    liyuan --self-test [--screenshot FILE]  play the demo through the real window, check it, exit 0/1

The process is prepared by ``runtime`` (QtWebEngine environment and the Chromium sandbox decision, the rotating log,
the exception hook, the qasync loop). An uncaught exception is logged and shows a (non-modal) dialog with the log
path — everything is already on disk, so no chat is lost. Started by the ``liyuan`` command (``cli.main``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

from .runtime import (  # noqa: F401 - NO_GPU_FLAG, NO_UNSANDBOXED_ZYGOTE_FLAG: the window's switches, named here too
    NO_GPU_FLAG,
    NO_UNSANDBOXED_ZYGOTE_FLAG,
    add_chromium_flags,
    data_folder,
    data_folder_problem,
    has_display,
    install_excepthook,
    make_loop,
    prepare_env,
    setup_logging,
    skip_pyside_source_scan,
    window_chromium_flags,
)

log = logging.getLogger("liyuan")

#: the window on screen (a new one replaces it when the user picks another data folder)
_windows: list = []


def _crash_dialog(tp: type[BaseException], value: BaseException, logfile: Path) -> Optional[object]:
    """The window's crash dialog for ``runtime.install_excepthook`` (Qt is imported only when something crashes)."""
    from .ui.window.crash import show_crash_dialog

    return show_crash_dialog(tp, value, logfile)


def _bench_start(win, path: str) -> None:
    """For bench/ui_start.py: record wall-clock stamps (time.time()) of the first paint of the window and of the
    demo chat being ready for input, and CPU seconds at that point (``cpu``: the process, ``cpu_main``: the UI thread), write them to ``path``,
    then quit once ``path + ".quit"`` appears."""
    import json
    import time

    from PySide6.QtCore import QEvent, QObject, QTimer

    win.resize(1360, 860)  # the bench's scene stays the same whatever the screen (a first start fits the screen now)
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
        from .ui.window import bench_hooks  # bench/ui_start.py --card: a status-bar card's chat instead of the demo

        await bench_hooks.open_card(win, stamps) if bench_hooks.wanted() else win.start_demo()
        while win.chat is None or not win.send_btn.isEnabled():
            await asyncio.sleep(0.005)
        box: list = []
        win.view.eval_js("document.querySelectorAll('[data-role]').length", box.append)  # the transcript is in
        while not box:
            await asyncio.sleep(0.005)
        stamps["interactive"] = time.time()
        # CPU seconds until then, of the app's process (its threads; Chromium's child processes not included) and of
        # its main (UI) thread alone: figures a busy machine inflates much less than wall time
        stamps["cpu"] = time.process_time()
        stamps["cpu_main"] = time.thread_time()
        Path(path).write_text(json.dumps(stamps))
        while not Path(path + ".quit").exists():
            await asyncio.sleep(0.05)
        QTimer.singleShot(0, win.close)

    asyncio.ensure_future(go())


def open_window(problem: Optional[str] = None):
    """Load the settings, build and show the main window; returns it (also kept as the current window).

    ``problem`` (from :func:`runtime.data_folder_problem`): the data folder cannot be written — the window starts
    read-only anyway (it can browse what is there, and plays nothing that could not be saved:
    ``MainWindow.read_only_reason``) and a dialog says so and offers another folder
    (:func:`show_data_folder_problem`). When there is nothing to browse (the folder is missing or has no
    ``cards/``), an empty temporary folder stands in for it so the window can start."""
    from .core.settings import AppSettings, load_settings
    from .ui.infra.i18n import set_language
    from .ui.window.main_window import MainWindow

    if problem and not (data_folder() / "cards").is_dir():
        os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-readonly-")
    try:
        settings = load_settings()
    except OSError as exc:  # unreadable settings in a broken folder: defaults, still read-only
        log.warning("could not read the settings: %s", exc)
        settings = AppSettings()
    from PySide6.QtCore import QLocale

    from .core.settings import is_known_language, language_for_run, unknown_language_warning
    from .ui.infra.qt_language import apply_qt_language

    forced = os.environ.get("LIYUAN_LANG", "")
    if forced and not is_known_language(forced):  # LIYUAN_LANG=fr: one English line, then the system locale's rule
        print(unknown_language_warning(forced), file=sys.stderr)
    lang = language_for_run(settings, system_locale=QLocale.system().name())  # first start: the system locale
    set_language(lang)
    apply_qt_language(lang)  # Qt's own buttons and file dialog in the same language (issue 32)
    win = MainWindow(settings)
    if settings.load_warning:  # a damaged settings file: said in the reader's language, kept until the next beat
        win.draft_pane.notice(settings.load_warning)
    if problem:
        win.read_only_reason = problem
        win.statusBar().showMessage(_tr("home.readonly.status"))
    win.show()
    _keep(win)
    from .ui.infra.cjk_font import cjk_hint

    font_hint = cjk_hint()  # no system Chinese font: which package brings one (issue 16)
    if font_hint and not problem:
        win.statusBar().showMessage(font_hint)
    if problem:
        show_data_folder_problem(win, problem)
    return win


def _keep(win: Any) -> None:
    """``win`` is the window on screen (:data:`_windows`), and so is each window a language switch builds in its
    place (``MainWindow.windowReplaced``, ui/window/language_switch.py)."""
    _windows[:] = [win]
    win.windowReplaced.connect(_keep)


def _start_text(key: str) -> str:
    """An engine message in this run's language before a window exists (``core.settings.language_for_run``)."""
    from .core.messages import message, render
    from .core.settings import language_for_run, load_settings

    try:
        lang = language_for_run(load_settings())
    except OSError:
        lang = "zh"
    return render(message(key), lang)


def _tr(key: str, **fmt: object) -> str:
    from .ui.infra.i18n import tr

    return tr(key, **fmt)


def show_data_folder_problem(win, problem: str):
    """A window-modal (not application-blocking) dialog on ``win``: the data folder cannot be written
    (``problem``), the window is read-only; buttons 选择其他文件夹… (a folder picker, then
    :func:`switch_data_folder`) and 只读浏览. Returns the QMessageBox (kept as ``win.data_folder_box``)."""
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    box = QMessageBox(QMessageBox.Icon.Warning, _tr("home.readonly.title"), _tr("home.readonly.text", error=problem),
                      QMessageBox.StandardButton.NoButton, win)
    choose = box.addButton(_tr("home.readonly.choose"), QMessageBox.ButtonRole.ActionRole)
    box.addButton(_tr("home.readonly.keep"), QMessageBox.ButtonRole.RejectRole)

    def clicked(button) -> None:
        if button is choose:
            folder = QFileDialog.getExistingDirectory(win, _tr("home.readonly.pick"), str(Path.home()))
            if folder:
                switch_data_folder(win, Path(folder))

    box.buttonClicked.connect(clicked)
    win.data_folder_box = box
    box.open()
    return box


def switch_data_folder(win, folder: Path):
    """Use ``folder`` as the data folder for the rest of this run (``LIYUAN_HOME``): when it can be written, the
    read-only window ``win`` closes and a new window opens on ``folder`` (settings, cards and chats from there) and
    is returned; when it cannot, ``win`` stays and the dialog comes back with the new reason (returns None)."""
    from PySide6.QtWidgets import QApplication

    problem = data_folder_problem(folder)
    if problem:
        show_data_folder_problem(win, problem)
        return None
    app = QApplication.instance()
    quit_on_close = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the old window closes before the new one exists
    try:
        win.close()  # saving its state fails quietly in the read-only folder
        os.environ["LIYUAN_HOME"] = str(folder)
        setup_logging()  # from now on the log is in the new folder too
        log.info("data folder switched to %s", folder)
        new = open_window(None)
        new.start()
    finally:
        app.setQuitOnLastWindowClosed(quit_on_close)
    return new


def main(argv: Optional[list[str]] = None, terminal_demo: Optional[Callable[[], int]] = None) -> int:
    """Start the window (or the self-test) with the window flags in ``argv``; returns the exit code. Where Qt cannot
    open a window (no display) it says so on stderr and returns ``terminal_demo()`` (the ``liyuan`` command passes
    the terminal demo), or 2 without one."""
    ap = argparse.ArgumentParser(prog="liyuan", description="Liyuan Desktop")
    ap.add_argument("--self-test", action="store_true", help="play the demo through the real window and check it")
    ap.add_argument("--screenshot", help="save a screenshot of the window (with --self-test: at the end)")
    ap.add_argument("--offscreen", action="store_true", help="no visible window (QT_QPA_PLATFORM=offscreen)")
    ap.add_argument("--lang", choices=("zh", "en"), help="the language of this run (also LIYUAN_LANG); without it "
                    "the language in Settings, on a first start the system locale's")
    ap.add_argument("--bench-start", metavar="FILE", help=argparse.SUPPRESS)  # bench/ui_start.py
    args = ap.parse_args(argv)
    if args.lang:  # `liyuan app --lang en` (the `liyuan` command takes --lang out itself and sets LIYUAN_LANG)
        os.environ["LIYUAN_LANG"] = args.lang
    if args.offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if not has_display():
        if terminal_demo is None:
            print(_start_text("app.no_display"), file=sys.stderr)
            return 2
        print(_start_text("app.no_display_demo"), file=sys.stderr)
        return terminal_demo()
    if args.self_test and not os.environ.get("LIYUAN_HOME"):
        os.environ["LIYUAN_HOME"] = tempfile.mkdtemp(prefix="liyuan-selftest-")
    from .platform_check import preflight  # before Qt loads: the platform plugin's system libraries (issue 16)

    missing_libs = preflight(setup_logging)
    if missing_libs is not None:
        return missing_libs
    from .runtime import prepare_fontconfig

    prepare_fontconfig()  # no Chinese font on the system: the bundled one, for Qt and Chromium alike
    sandbox = prepare_env()
    add_chromium_flags(window_chromium_flags())  # GPU and zygote switches per OS (runtime.chromium_choice)
    problem = data_folder_problem()  # a read-only data folder: start anyway, read-only, and say so
    logfile = setup_logging()
    install_excepthook(logfile, _crash_dialog)
    skip_pyside_source_scan()  # before the window's ~100 modules are imported after Qt
    from PySide6 import QtWebEngineWidgets  # noqa: F401  must come before the QApplication

    from .ui.dialogs.about import app_icon, build_info, build_label

    info = build_info()
    logging.getLogger("liyuan").info("start: version %s, build %s, frozen %s, web sandbox %s", info["version"],
                                     build_label(info), info["frozen"], sandbox)
    if problem:
        logging.getLogger("liyuan").warning("data folder cannot be written, read-only: %s", problem)
    if sandbox == "userns":
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
    from .ui.infra.work import install_gc_pump

    install_gc_pump()  # the cyclic collector runs on the UI thread only (ui/infra/work.py)
    asyncio.set_event_loop(loop)

    win = open_window(problem)
    if args.self_test:
        from .ui.window.selftest import report_json, run_self_test

        async def go() -> int:
            ok, report = await run_self_test(win, args.screenshot)
            print(report_json(report))
            win.close()
            return 0 if ok else 1

        with loop:
            return loop.run_until_complete(go())
    from .ui.window import warm

    warm.start()  # the engine's first-chat work, in small steps, while the page loads (ui/window/warm.py)
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
        signal.signal(sig, lambda *_: QTimer.singleShot(0, (_windows[-1] if _windows else win).close))
    wake = QTimer()  # lets Python run its signal handlers while Qt waits
    wake.start(300)
    wake.timeout.connect(lambda: None)
    done = asyncio.Event()
    app.aboutToQuit.connect(done.set)
    with loop:
        loop.run_until_complete(done.wait())
    return 0

