"""Qt objects die on the UI thread only (the suite's SIGSEGVs under load).

CPython runs a cyclic collection in whichever thread crosses the allocation threshold; a garbage cycle holding a
PySide wrapper that owns its C++ object was destroyed on a loopback server's, the egress gate's or a worker's
thread while the UI thread was using Qt. ``ui/infra/work.py`` ``install_gc_pump`` (installed by the app and by
tests/ui/conftest.py) turns automatic collection off and collects from a timer on the UI thread. The find bar's
work (``ui/infra/tasks.py`` ``LatestWins``) never emits signals of an object the UI thread may be deleting."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from types import SimpleNamespace

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from liyuan_desktop.ui.infra import work
from liyuan_desktop.ui.infra.tasks import LatestWins


def test_a_cycle_holding_a_qt_object_is_collected_on_the_ui_thread_not_by_a_worker(qtbot):
    assert not gc.isenabled(), "the UI tests run with the collector on the UI thread (conftest)"
    died_on: list[int] = []
    obj = QObject()  # owned by Python: the wrapper's death deletes the C++ object, in the thread where it happens
    obj.me = obj  # a cycle: only the cyclic collector frees it
    watcher = weakref.ref(obj, lambda _r: died_on.append(threading.get_ident()))
    del obj

    keep: list = []  # (the collector counts allocations minus deallocations: they stay until the end of the test)

    def churn() -> None:  # what a loopback server or a worker does: build containers, many times the threshold
        for i in range(200_000):
            keep.append([i])

    t = threading.Thread(target=churn)
    t.start()
    t.join()
    # the worker crossed gen-0's threshold hundreds of times; without the pump it collected the cycle there
    assert died_on == [] or died_on == [threading.get_ident()]
    qtbot.waitUntil(lambda: watcher() is None, timeout=10_000)  # the UI thread's timer collects it
    assert died_on == [threading.get_ident()]


def test_the_pump_collects_by_generation_and_holds_full_passes_off_during_big_work(qtbot):
    kept = []  # (gc counts allocations minus deallocations: what is allocated must stay to cross a threshold)
    def passes() -> int:  # (a pass of generation g is counted under g only)
        return sum(g["collections"] for g in gc.get_stats())

    before = passes()
    kept.append([[] for _ in range(5000)])
    qtbot.waitUntil(lambda: passes() > before, timeout=5000)
    # big work holds full passes off (its threshold for generation 2); the pump honours it
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 10**9)
    try:
        full, young = gc.get_stats()[2]["collections"], gc.get_stats()[1]["collections"]
        for _ in range(40):
            kept.append([[] for _ in range(2000)])
            qtbot.wait(work.GC_PUMP_MS)
        assert gc.get_stats()[1]["collections"] > young
        assert gc.get_stats()[2]["collections"] == full
    finally:
        gc.set_threshold(*thresholds)


def test_find_thread_results_after_the_owner_is_gone_are_dropped_without_touching_it(qtbot):
    """Owners deleted while their thread finishes (the window closed mid-search): never a crash, never a late
    signal; results of a live owner arrive on the UI thread."""
    got: list[tuple[int, int]] = []
    ui = threading.get_ident()
    for i in range(60):
        owner = QWidget()
        worker = LatestWins(owner)
        worker.done.connect(lambda gen, v: got.append((threading.get_ident(), v)))
        release = threading.Event()
        worker.start(lambda _c, i=i, release=release: (release.wait(2), i)[1])
        release.set()
        if i % 2:
            time.sleep(0.001)  # let the thread finish first on some rounds
        owner.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        del worker, owner
    qtbot.wait(100)
    assert got == []  # every owner was deleted before its timer could deliver
    owner = QWidget()
    worker = LatestWins(owner)
    worker.done.connect(lambda gen, v: got.append((threading.get_ident(), v)))
    worker.start(lambda _c: "ok")
    qtbot.waitUntil(lambda: bool(got), timeout=5000)
    assert got == [(ui, "ok")]
    owner.deleteLater()


def test_panes_on_the_app_wide_theme_notifier_are_disconnected_when_deleted(qtbot):
    """A lambda connected to ``theme.notifier`` outlived its pane: every later theme switch reached the deleted
    widgets (30 later UI tests failed with "Internal C++ object already deleted")."""
    from liyuan_desktop.ui.infra import theme
    from liyuan_desktop.ui.roleplay.state_pane import StatePane
    from liyuan_desktop.ui.writing.threads_pane import ThreadsPane

    for cls in (ThreadsPane, StatePane):
        pane = cls()
        if cls is ThreadsPane:
            pane.show_data(SimpleNamespace(threads=[], chapter=None))  # (the theme slot re-renders shown data)
        pane.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        del pane
    theme.notifier.changed.emit("light")  # pytest-qt fails the test on an exception in a slot


def test_the_qloop_fixture_never_emits_about_to_quit(qapp, qloop):
    """``qloop.run_until_complete`` on a loop over the QApplication itself ended with ``QApplication.exit()``:
    aboutToQuit was emitted each time, and once a web view had existed the second emission segfaulted inside
    libQt6WebEngineCore (test_story_panes.py's timeline tests after test_frame_attacks.py: gdb showed
    QCoreApplication::exit -> aboutToQuit -> libQt6WebEngineCore)."""
    import asyncio

    quits: list[int] = []
    qapp.aboutToQuit.connect(lambda: quits.append(1))
    for _ in range(2):
        assert qloop.run_until_complete(asyncio.sleep(0.01, result=7)) == 7
    assert quits == []
