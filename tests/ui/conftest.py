"""UI tests: a real QApplication (offscreen), async tests run on a qasync loop (so Qt events and the engine share
one loop, as in the app). In async tests never use qtbot.wait*; poll with ``await asyncio.sleep`` instead
(../shared/design/desktop-stack.md, pitfall 3)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from PySide6 import QtWebEngineWidgets  # noqa: F401  must be imported before the QApplication exists
from PySide6.QtWidgets import QApplication


def _app() -> QApplication:
    return QApplication.instance() or QApplication(["liyuan-tests"])


class _NestedLoopApp:
    """What qasync drives instead of the QApplication: exec()/exit() run and stop a nested QEventLoop, so a test's
    run_until_complete never emits QCoreApplication.aboutToQuit. QtWebEngine reacts to aboutToQuit, and once a web
    view has existed in the process the second emission segfaults inside libQt6WebEngineCore."""

    def __init__(self, app):
        self._app = app
        self._loops = []

    def exec(self):
        from PySide6.QtCore import QEventLoop

        loop = QEventLoop()
        self._loops.append(loop)
        try:
            return loop.exec()
        finally:
            self._loops.remove(loop)

    exec_ = exec

    def exit(self, code=0):
        if self._loops:
            self._loops[-1].exit(code)

    def __getattr__(self, name):
        return getattr(self._app, name)


def _qasync_loop():
    from liyuan_desktop.runtime import make_loop

    return make_loop(_NestedLoopApp(_app()))


def pytest_asyncio_loop_factories(config, item):
    return {"qasync": _qasync_loop}


def _modal_limit_s() -> float:
    """Seconds one modal dialog or popup menu may stay open before the watchdog closes it (below pytest-timeout's
    120 s; ``LIYUAN_TEST_MODAL_LIMIT_S`` changes it, read at every tick)."""
    try:
        return float(os.environ.get("LIYUAN_TEST_MODAL_LIMIT_S", "90"))
    except ValueError:
        return 90.0


@pytest.fixture(autouse=True)
def _no_modal_holds_the_run(qapp, request):
    """A watchdog: a test stuck in a modal loop (a ``QDialog.exec``, a message box, a context menu's ``exec``)
    is ended, not left to hold the whole run. pytest-timeout's signal cannot do it: its alarm raises inside a Qt
    slot, where the exception is printed and swallowed, and the modal loop goes on (the deep English tour's
    reused-``id()`` About box held a CI run at 85 %). Every 2 s the active modal widget and popup are looked at;
    one that has been the same widget for the limit is rejected (a dialog's No/Cancel, so nothing destructive
    runs) or closed, and the test then fails naming it. What was closed is kept in ``request.node.modal_closed``.
    Long tests are not affected: the clock is per open widget, not per test."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QDialog

    closed: list[str] = []
    request.node.modal_closed = closed
    seen: dict[str, tuple[object, float]] = {}

    def check() -> None:
        now = time.monotonic()
        for slot, w in (("popup", QApplication.activePopupWidget()), ("modal", QApplication.activeModalWidget())):
            if w is None:
                seen.pop(slot, None)
                continue
            if slot not in seen or seen[slot][0] is not w:
                seen[slot] = (w, now)
            if now - seen[slot][1] < _modal_limit_s():
                continue
            seen.pop(slot, None)
            closed.append(f"{type(w).__name__} {w.windowTitle()!r}")
            if isinstance(w, QDialog):
                w.reject()
            else:
                w.close()

    timer = QTimer()
    timer.setInterval(2000)
    timer.timeout.connect(check)
    timer.start()
    yield
    timer.stop()
    timer.deleteLater()
    if request.node.modal_closed:
        pytest.fail(f"a modal window stayed open {_modal_limit_s():.0f} s and was closed: "
                    f"{'; '.join(request.node.modal_closed)}")


@pytest.fixture
def qloop(qapp):
    """An explicit qasync loop for sync tests that drive coroutines with ``qloop.run_until_complete``. It drives a
    nested event loop like the async tests' (:class:`_NestedLoopApp`): a loop on the QApplication itself ends each
    ``run_until_complete`` with ``QApplication.exit()``, which emits aboutToQuit, and once any earlier test had
    shown a web view the next one segfaulted inside libQt6WebEngineCore (test_story_panes.py's timeline tests after
    test_frame_attacks.py or test_branch_ui.py)."""
    loop = _qasync_loop()
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def view(qtbot):
    """A shown 800x600 conversation view whose page and channel are up (closed and deleted afterwards)."""
    from uihelpers import close_view

    from liyuan_desktop.ui.frames.conversation import ConversationView

    v = ConversationView()
    v.resize(800, 600)
    v.show()
    try:
        qtbot.waitUntil(lambda: v.is_ready(), timeout=20000)
        yield v
    finally:
        close_view(v)


@pytest.fixture(scope="session", autouse=True)
def _collector_on_the_ui_thread(qapp):
    """As in the app (app.py): the cyclic garbage collector runs only on the UI thread (``ui/infra/work.py``
    ``install_gc_pump``), never in a loopback server's, the egress gate's or a worker's thread, where it destroyed
    Qt objects of earlier tests and the process died with SIGSEGV part-way through tests/ui."""
    from liyuan_desktop.ui.infra.work import install_gc_pump

    install_gc_pump()
    yield


@pytest.fixture(scope="session", autouse=True)
def _web_pages_go_before_the_profile(qapp):
    """At the end of the session, close and really delete every window still alive. pytest-qt closes the widgets a
    test registered and calls deleteLater, but after the last test no event loop runs those deletions; a web page
    still alive when QtWebEngine releases its profile at interpreter exit makes the process segfault after every
    test passed ("Release of profile requested but WebEnginePage still not deleted"), so the README's test command
    exited 139 whenever the last UI test file had opened a MainWindow."""
    yield
    from PySide6.QtCore import QEvent

    for w in QApplication.topLevelWidgets():
        w.close()
        w.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """A window the live language switch replaced (ui/window/language_switch.py: ``replaced_by``) is closed and
    deleted by the switch itself: it is taken out of the widgets pytest-qt closes after the test, which would touch
    the deleted C++ object (its Python wrapper lives on in the test's variables)."""
    import shiboken6

    widgets = getattr(item, "qt_widgets", None)
    if widgets:
        kept = []
        for ref, before_close in widgets:
            w = ref()
            if w is not None and (not shiboken6.isValid(w) or getattr(w, "replaced_by", None) is not None):
                continue
            kept.append((ref, before_close))
        item.qt_widgets = kept
    return (yield)
