"""Issue 25 "One task runner": all background work of the window goes through ui/infra/tasks.py.

- No module of ui/ starts a thread of its own (read from the code: threading.Thread, executors, QThread,
  asyncio.to_thread, run_in_executor) — except frame_guard's two documented service threads.
- Results, posts and progress arrive on the UI thread, in order; a deleted guard silences them; the task's callables
  are let go on the UI thread; a lane never runs more than its workers at once; work superseded before it started
  never runs.
- With the Qt check on, a task that calls a Qt object's method or emits a signal fails with QtTouchedOffThread
  (and the widget is untouched), and the window's real background work (opening a chat with display scripts,
  the find bar, the SillyTavern migration's scan) passes it."""

from __future__ import annotations

import ast
import threading
import time
import weakref
from pathlib import Path

import pytest
from heavy_regex_card import THINK_SCRIPT, make_card, make_chat
from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.ui.infra import tasks
from liyuan_desktop.ui.infra.tasks import LatestWins, QtTouchedOffThread, Work
from liyuan_desktop.ui.window.main_window import MainWindow

UI = Path(__file__).resolve().parents[2] / "liyuan_desktop" / "ui"
#: constructs that start a thread (or hand work to one)
STARTERS = {"Thread", "ThreadPoolExecutor", "ProcessPoolExecutor", "QThread", "QThreadPool", "to_thread",
            "run_in_executor", "start_new_thread", "Timer"}
#: the only places allowed: the runner, and frame_guard's service threads (docs/architecture.md says why)
ALLOWED = {"infra/tasks.py": None, "frames/frame_guard.py": 2}


def thread_starts(source: str) -> list[tuple[int, str]]:
    """(line, construct) for every thread-starting call or QThread/Thread subclass in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if isinstance(f, ast.Attribute) and f.attr == "globalInstance" and isinstance(f.value, ast.Name) \
                    and f.value.id == "QThreadPool":
                name = "QThreadPool"
            if name == "Timer" and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                        and f.value.id == "threading"):
                continue  # (QTimer and friends are not threads; only threading.Timer is)
            if name in STARTERS:
                found.append((node.lineno, name))
        elif isinstance(node, ast.ClassDef):
            for b in node.bases:
                bn = b.attr if isinstance(b, ast.Attribute) else b.id if isinstance(b, ast.Name) else ""
                if bn in ("Thread", "QThread"):
                    found.append((node.lineno, f"class {node.name}({bn})"))
    return sorted(found)


def test_the_scanner_sees_every_way_to_start_a_thread():
    src = """
import asyncio, threading
from concurrent.futures import ThreadPoolExecutor
from PySide6.QtCore import QThread, QThreadPool, QTimer
threading.Thread(target=print).start()
ThreadPoolExecutor(1)
asyncio.to_thread(print)
asyncio.get_running_loop().run_in_executor(None, print)
QThreadPool.globalInstance().start(print)
threading.Timer(1, print)
QTimer(None)
QThread.currentThread()
class Worker(QThread):
    pass
"""
    assert [c for _l, c in thread_starts(src)] == ["Thread", "ThreadPoolExecutor", "to_thread", "run_in_executor",
                                                   "QThreadPool", "Timer", "class Worker(QThread)"]


def test_no_ui_module_starts_a_thread_outside_the_task_runner():
    offenders = []
    for path in sorted(UI.rglob("*.py")):
        starts = thread_starts(path.read_text(encoding="utf-8"))
        rel = path.relative_to(UI).as_posix()
        if rel in ALLOWED and (ALLOWED[rel] is None or len(starts) <= ALLOWED[rel]):
            continue
        offenders += [f"ui/{rel}:{line}: {what}" for line, what in starts]
    assert offenders == [], "start background work with ui/infra/tasks.py (submit, run, run_in_worker, LatestWins):\n" + \
        "\n".join(offenders)


# -- delivery ------------------------------------------------------------------------------------------------
def test_results_and_posts_arrive_on_the_ui_thread_in_order(qtbot):
    ui = threading.get_ident()
    seen: list = []

    def fn(w: Work) -> str:
        for i in range(5):
            w.post(i, threading.get_ident() != ui)
        return "done"

    tasks.submit(fn, on_post=lambda i, off: seen.append(("post", i, off, threading.get_ident() == ui)),
                 done=lambda r, e: seen.append(("done", r, e, threading.get_ident() == ui)))
    qtbot.waitUntil(lambda: bool(seen) and seen[-1][0] == "done", timeout=10_000)
    assert seen == [("post", i, True, True) for i in range(5)] + [("done", "done", None, True)]


def test_errors_come_back_as_the_exception(qtbot):
    got: list = []
    tasks.submit(lambda w: 1 / 0, done=lambda r, e: got.append((r, type(e))))
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    assert got == [(None, ZeroDivisionError)]


def test_a_deleted_guard_silences_delivery_and_cancel_drops_it(qtbot):
    got: list = []
    owner = QWidget()
    go = threading.Event()
    tasks.submit(lambda w: (go.wait(5), w.post("late"), "late")[2], guard=owner,
                 on_post=got.append, done=lambda r, e: got.append(r))
    owner.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    go.set()
    task = tasks.submit(lambda w: "cancelled", done=lambda r, e: got.append(r))
    task.cancel()
    last = tasks.submit(lambda w: "alive", done=lambda r, e: got.append(r))
    qtbot.waitUntil(lambda: "alive" in got, timeout=10_000)
    assert last.done()
    qtbot.wait(50)
    assert got == ["alive"]


def test_progress_is_reported_on_the_ui_thread(qtbot):
    ui = threading.get_ident()
    seen: list = []
    go = threading.Event()

    def fn(w: Work) -> None:
        w.progress(3, 10, "step")
        go.wait(5)

    tasks.submit(fn, on_progress=lambda w: seen.append((w.done, w.total, w.text, threading.get_ident() == ui)))
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    go.set()
    assert seen[0] == (3, 10, "step", True)


def test_the_task_s_callables_are_let_go_on_the_ui_thread(qtbot):
    """A closure holding a widget (as the window's lambdas do) must not die on the worker: a Qt object whose last
    reference drops there is destroyed on the wrong thread."""
    ui = threading.get_ident()
    died: list[int] = []
    refs = []
    for _ in range(20):
        holder = QObject()
        refs.append(weakref.ref(holder, lambda _r: died.append(threading.get_ident())))
        tasks.submit(lambda w, h=holder: (time.sleep(0.001), id(h))[1], done=lambda r, e: None)
        del holder
        assert refs[-1]() is not None
    qtbot.waitUntil(lambda: len(died) == 20, timeout=10_000)
    assert set(died) == {ui}


def test_a_lane_runs_no_more_than_its_workers(qtbot):
    workers = tasks.LANES["work"][0]
    lock = threading.Lock()
    now, peak, finished = [0], [0], []

    def fn(_w: Work) -> None:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.02)
        with lock:
            now[0] -= 1

    for _ in range(4 * workers):
        tasks.submit(fn, done=lambda r, e: finished.append(e))
    qtbot.waitUntil(lambda: len(finished) == 4 * workers, timeout=20_000)
    assert finished == [None] * (4 * workers)
    assert 1 <= peak[0] <= workers


def test_latest_wins_drops_superseded_work_and_never_starts_what_was_superseded_before_it_ran(qtbot):
    owner = QWidget()
    lw = LatestWins(owner, lane="migration")  # a one-worker lane: the second run waits behind the first
    ran: list[int] = []
    done: list = []
    lw.done.connect(lambda gen, v: done.append((gen, v)))
    gate = threading.Event()

    def first(cancelled):
        ran.append(1)
        gate.wait(5)
        return "first" if not cancelled() else "stale"

    lw.start(first)
    qtbot.waitUntil(lambda: ran == [1], timeout=5000)
    lw.start(lambda c: ran.append(2) or "second")  # queued behind the first; superseded before it runs
    g3 = lw.start(lambda c: ran.append(3) or "third")
    gate.set()
    qtbot.waitUntil(lambda: (g3, "third") in done, timeout=10_000)
    qtbot.wait(50)
    assert ran == [1, 3]
    assert [v for g, v in done if g == lw.gen] == ["third"]
    owner.deleteLater()


# -- the Qt check ----------------------------------------------------------------------------------------------
class _Emitter(QObject):
    ping = Signal()


@pytest.fixture()
def qt_check():
    tasks.set_qt_check(True)
    before = len(tasks.violations)
    yield before
    tasks.set_qt_check(False)
    del tasks.violations[before:]


def test_a_task_that_touches_a_widget_fails_and_leaves_it_untouched(qtbot, qt_check):
    label = QLabel("before")
    qtbot.addWidget(label)
    em = _Emitter()
    got: list = []
    tasks.submit(lambda w: label.setText("from a worker"), done=lambda r, e: got.append(e))
    tasks.submit(lambda w: em.ping.emit(), done=lambda r, e: got.append(e))
    tasks.submit(lambda w: sum(range(1000)), done=lambda r, e: got.append(r))  # plain Python passes
    qtbot.waitUntil(lambda: len(got) == 3, timeout=10_000)
    assert sorted(map(repr, got)).count("499500") == 1
    errors = [e for e in got if isinstance(e, BaseException)]
    assert len(errors) == 2 and all(isinstance(e, QtTouchedOffThread) for e in errors)
    assert label.text() == "before"
    assert sorted(tasks.violations[qt_check:]) == ["QLabel.setText", "SignalInstance.emit"]


async def test_the_window_s_background_work_passes_the_qt_check(qtbot, tmp_path, qt_check):
    """Opening a chat (chat_work → run_in_worker, big), its display scripts (the display lane), the find bar
    (LatestWins) and the migration's scan, all under the check: no Qt object is touched off the UI thread."""
    card, card_dir = make_card(tmp_path, [THINK_SCRIPT])
    chat_dir = make_chat(tmp_path, card, beats=3, chars=800)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    await wait_for(win.view.is_ready)
    from liyuan_desktop.ui.window import chat_work

    card_ref = library.CardRef(name=card.name, dir=str(card_dir))
    chat_ref = library.ChatRef(name=chat_dir.name, dir=str(chat_dir))
    assert await chat_work.open_chat_async(win, card_ref, chat_ref)
    await wait_for(win.display_worker.idle, timeout=120)
    bar = win.find_bar
    bar.edit.setText("想一想")
    bar.search()
    await wait_for(lambda: not bar.worker.running, timeout=60)
    from liyuan_desktop.ui.dialogs.st_migration import StMigrationDialog

    dlg = StMigrationDialog(win)
    dlg.scan_path(tmp_path / "no such folder")
    assert dlg.wait_idle(30_000)
    assert dlg.state == "failed"
    dlg.close()
    win.close()
    assert tasks.violations[qt_check:] == []
