"""The window's one task runner: every piece of background work goes through it (issue 25 "One task runner").

What it gives (the only module of ui/ that starts threads; tests/ui/test_task_runner.py checks it by reading the
code):

- :func:`submit` runs ``fn(work)`` on a worker of a bounded pool (a *lane*, :data:`LANES`) and calls ``done(result,
  error)`` on the UI thread; ``on_post(*args)`` gets what ``fn`` sends with ``work.post(...)`` (partial results, in
  order, before ``done``); ``on_progress(work)`` is called on the UI thread when ``work.progress``/``work.label``
  changed. ``guard``: a QObject whose deletion silences every delivery (a dialog closed mid-work).
- :func:`run` is the same as an awaitable (on the qasync loop); :func:`run_in_worker` adds the progress dialog with
  Cancel after :data:`SHOW_AFTER_MS`; :func:`call_in_worker` is the callback form for widgets that stay synchronous.
- :class:`LatestWins` keeps *generations*: each start supersedes the last, whose late result is dropped and whose
  ``cancelled()`` turns true (the find bar, the search dialog); work superseded before a worker took it never runs.
- :func:`detached` runs work nobody on the UI thread waits for (freeing a replaced chat).

Lanes: ``work`` (2 workers: opening, importing, exporting, diffs, freeing), ``find`` (2: searches, so a burst of
typing never waits behind an opening chat) and ``display`` (1 worker at a lowered CPU priority: the card's display
regex scripts; a thread's priority cannot be raised back without privileges, so that lane's worker never runs
other work). ``migration`` (1) imports SillyTavern data.

Threads and Qt (the rule "worker threads never touch Qt objects"): results and posts travel in a locked inbox of
plain Python that one timer on the UI thread drains every :data:`POLL_MS` ms while work is out — no signal is
emitted from a worker (a queued signal carrying Python objects corrupted reference counts in PySide6; emitting
raced the owner's deletion). The callables handed to :func:`submit` often hold widgets in their closures; the runner
keeps them and lets go of them on the UI thread only (a Qt object whose last reference drops on a worker is
destroyed there). With :func:`set_qt_check` on (the UI tests turn it on), every task runs under a profile hook
that fails the task with :class:`QtTouchedOffThread` and records it in :data:`violations` when it calls a Qt
method of a QObject or emits a signal: one place that enforces the rule (a Python method of a widget class that only
reads plain attributes, e.g. ``MainWindow._load_chat``, passes; what it calls of Qt does not). frame_guard keeps two service threads of its own (the egress gate's asyncio loop and the renderer memory
sampler): they run for the app's life and never end, so they would hold a pool worker forever (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, TypeVar

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, SignalInstance
from PySide6.QtWidgets import QProgressDialog, QWidget

from .collector import hold_collector
from .i18n import register, tr

__all__ = ["LANES", "POLL_MS", "SHOW_AFTER_MS", "LatestWins", "QtTouchedOffThread", "Task", "Work", "WorkCancelled",
           "call_in_worker", "detached", "run", "run_in_worker", "set_qt_check", "submit", "violations"]

register({
    "work.title": {"zh": "请稍候", "en": "Please wait"},
    "work.cancel": {"zh": "取消", "en": "Cancel"},
    "work.cancelling": {"zh": "正在取消…", "en": "Cancelling…"},
    "work.busy": {"zh": "正在处理…", "en": "Working…"},
})

T = TypeVar("T")
#: The dialog of :func:`run_in_worker` appears only for work still running after this many ms.
SHOW_AFTER_MS = 300
#: How often the UI thread looks at the inbox while work is out, in ms.
POLL_MS = 15
#: lane → (workers, lowered CPU priority); module doc
LANES: dict[str, tuple[int, bool]] = {"work": (2, False), "find": (2, False), "display": (1, True),
                                      "migration": (1, False)}
_pools: dict[str, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


class WorkCancelled(Exception):
    """The user pressed Cancel and the work stopped (it left nothing behind: that is the work's own promise)."""


class QtTouchedOffThread(RuntimeError):
    """A task called a Qt object's method on a worker thread (raised only while :func:`set_qt_check` is on)."""


class Work:
    """What the worker function gets: progress reporting, partial results and the Cancel flag. Thread-safe: the
    worker writes, the UI thread reads. ``progress(done, total)`` and ``cancelled() -> bool`` are the engine's
    callback shapes (``core.chat.search``, ``core.chat.st_import``); ``stop`` is the flag as a
    :class:`threading.Event` (``core.migrate.run`` takes one)."""

    def __init__(self) -> None:
        self.done = 0
        self.total = 0
        self.text: Optional[str] = None
        self.stop = threading.Event()
        self._seq = 0  # bumped by progress/label: the UI thread repaints when it moved
        self._post: Optional[Callable[..., None]] = None

    def progress(self, done: int, total: int, label: Optional[str] = None) -> None:
        """Report ``done`` of ``total`` (any unit; ``total`` 0 = unknown), optionally with the step's text."""
        self.done, self.total = int(done), int(total)
        if label is not None:
            self.text = label
        self._seq += 1

    def label(self, text: str) -> None:
        """Change the dialog's text (e.g. the step now running)."""
        self.text = text
        self._seq += 1

    def cancelled(self) -> bool:
        """True once Cancel was pressed."""
        return self.stop.is_set()

    def check(self) -> None:
        """Raise :class:`WorkCancelled` when Cancel was pressed (call between steps that cannot stop midway)."""
        if self.stop.is_set():
            raise WorkCancelled()

    def cancel(self) -> None:
        """Ask the work to stop (what Cancel does; also for tests)."""
        self.stop.set()

    def post(self, *args: Any) -> None:
        """Hand ``args`` (plain Python) to the submitter's ``on_post`` on the UI thread, in order, before the
        result. Ignored when nobody listens."""
        if self._post is not None:
            self._post(*args)


# -- delivery to the UI thread ---------------------------------------------------------------------------------
class _Rec:
    """One delivery target: the callables (kept here, dropped on the UI thread) and the guard."""

    __slots__ = ("fn", "done", "on_post", "on_progress", "guard", "live", "work", "seen", "finished")

    def __init__(self, guard: Optional[QObject]) -> None:
        self.fn: Any = None
        self.done: Any = None
        self.on_post: Any = None
        self.on_progress: Any = None
        self.guard = weakref.ref(guard) if guard is not None else None
        self.live = True
        self.work: Optional[Work] = None
        self.seen = 0
        self.finished = threading.Event()

    def alive(self) -> bool:
        if not self.live:
            return False
        if self.guard is None:
            return True
        g = self.guard()
        return g is not None and shiboken6.isValid(g)

    def clear(self) -> None:
        self.fn = self.done = self.on_post = self.on_progress = self.guard = None
        self.live = False


_lock = threading.Lock()
_inbox: list[tuple[_Rec, Any, tuple]] = []  # (target, callable or _FINISH, arguments); written by workers
_outstanding = 0
_progress: set[_Rec] = set()  # UI thread only
_timer: Optional[QTimer] = None
_FINISH = object()


def _on_ui_thread() -> bool:
    app = QCoreApplication.instance()
    return app is not None and QThread.currentThread() is app.thread()


def _ensure_timer() -> QTimer:
    global _timer
    if _timer is None or not shiboken6.isValid(_timer):
        app = QCoreApplication.instance()
        if app is None or not _on_ui_thread():
            raise RuntimeError("the task runner is used from the UI thread of a running QApplication")
        _timer = QTimer(app)  # the application's child: ticks on the UI thread while work is out
        _timer.setObjectName("liyuanTaskInbox")
        _timer.setInterval(POLL_MS)
        _timer.timeout.connect(_drain)
    return _timer


def _call(fn: Callable[..., Any], args: tuple) -> None:
    """One delivery; an exception in it goes to ``sys.excepthook`` (as from a slot) and the next still runs."""
    try:
        fn(*args)
    except Exception:
        sys.excepthook(*sys.exc_info())


def _put(rec: _Rec, fn: Any, args: tuple) -> None:
    with _lock:
        _inbox.append((rec, fn, args))


def _drain() -> None:
    global _outstanding
    with _lock:
        items = _inbox[:]
        _inbox.clear()
        idle = _outstanding == 0
    for rec in list(_progress):
        if rec.work is not None and rec.work._seq != rec.seen and rec.alive() and rec.on_progress is not None:
            rec.seen = rec.work._seq
            _call(rec.on_progress, (rec.work,))
    for rec, fn, args in items:
        if fn is _FINISH:
            _progress.discard(rec)
            done = rec.done if rec.alive() else None
            rec.clear()
            if done is not None:
                _call(done, args)
            del done
        elif rec.alive():
            _call(fn, args)
    del items
    if idle and _timer is not None and shiboken6.isValid(_timer):
        with _lock:
            if not _inbox and _outstanding == 0:
                _timer.stop()


# -- the pools -------------------------------------------------------------------------------------------------
def _lower_priority() -> None:
    """Give the calling worker thread a lower CPU priority where the OS allows it per thread (Linux: nice 10), so on
    a busy machine the UI thread wins the core; elsewhere nothing happens."""
    if sys.platform.startswith("linux"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except (OSError, AttributeError):
            pass


def _pool(lane: str) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(lane)
        if pool is None:
            workers, low = LANES[lane]
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"liyuan-{lane}",
                                      initializer=_lower_priority if low else None)
            _pools[lane] = pool
        return pool


# -- the Qt check ----------------------------------------------------------------------------------------------
_check = bool(os.environ.get("LIYUAN_CHECK_QT_THREADS"))
#: What the check caught: ``"<class>.<method>"`` per call (tests assert it stays empty).
violations: list[str] = []


def set_qt_check(on: bool) -> None:
    """Turn the worker-threads-never-touch-Qt check on or off (module doc); for tasks submitted afterwards."""
    global _check
    _check = bool(on)


def _guard_profile(frame: Any, event: str, arg: Any) -> None:
    if event == "c_call":
        owner = getattr(arg, "__self__", None)
        if isinstance(owner, (QObject, SignalInstance)):
            _violation(f"{type(owner).__name__}.{getattr(arg, '__name__', '?')}")


def _violation(what: str) -> None:
    violations.append(what)
    sys.setprofile(None)
    raise QtTouchedOffThread(f"a worker thread called {what}: Qt objects are used on the UI thread only")


def _run(rec: _Rec, work: Work) -> None:
    """On the worker: run the task, hand the outcome to the inbox; never drop the last reference to the task's
    callables here (they are cleared on the UI thread)."""
    global _outstanding
    out: list[tuple[Any, Optional[BaseException]]] = []
    f = rec.fn
    try:
        if _check:
            sys.setprofile(_guard_profile)
        try:
            out.append((f(work), None))
        finally:
            if _check:
                sys.setprofile(None)
    except BaseException as e:  # handed to the UI thread
        out.append((None, e))
    finally:
        del f
    with _lock:
        _inbox.append((rec, _FINISH, out.pop()))
        _outstanding -= 1
    rec.finished.set()


class Task:
    """A submitted piece of work (:func:`submit`). ``work``: its :class:`Work`."""

    def __init__(self, rec: _Rec, work: Work) -> None:
        self._rec = rec
        self.work = work

    def cancel(self) -> None:
        """Ask the work to stop and never deliver anything of it (``done`` is not called)."""
        self.work.cancel()
        self._rec.live = False

    def done(self) -> bool:
        """True once the function returned (its outcome may still be on its way to the UI thread)."""
        return self._rec.finished.is_set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until the function returned (tests; never on the UI thread in the app). True if it did."""
        return self._rec.finished.wait(timeout)


def submit(fn: Callable[[Work], T], *, done: Optional[Callable[[Optional[T], Optional[BaseException]], Any]] = None,
           on_post: Optional[Callable[..., Any]] = None, on_progress: Optional[Callable[[Work], Any]] = None,
           guard: Optional[QObject] = None, lane: str = "work", work: Optional[Work] = None) -> Task:
    """Run ``fn(work)`` on a worker of ``lane`` (:data:`LANES`) and call ``done(result, None)`` — or ``done(None,
    exception)`` — on the UI thread when it has returned (module doc: ``on_post``, ``on_progress``, ``guard``).
    ``fn`` must not touch Qt objects. Call on the UI thread; raises RuntimeError elsewhere or without a
    QApplication, KeyError for an unknown lane."""
    global _outstanding
    if not _on_ui_thread():  # (a worker handing on work would start the inbox's timer from its thread)
        raise RuntimeError("tasks.submit() is called on the UI thread of a running QApplication")
    timer = _ensure_timer()
    pool = _pool(lane)
    rec = _Rec(guard)
    rec.fn, rec.done, rec.on_post, rec.on_progress = fn, done, on_post, on_progress
    w = work or Work()
    if on_post is not None:
        w._post = lambda *args: _put(rec, rec.on_post, args) if rec.on_post is not None else None
    rec.work = w
    if on_progress is not None:
        _progress.add(rec)
    with _lock:
        _outstanding += 1
    timer.start()
    del fn, done, on_post, on_progress
    pool.submit(_run, rec, w)
    return Task(rec, w)


def detached(fn: Callable[..., T], *args: Any, lane: str = "work") -> "Future[T]":
    """Run ``fn(*args)`` on ``lane`` with nobody on the UI thread waiting (e.g. dropping a replaced chat, ui/infra/work.py
    ``release``): returns the :class:`concurrent.futures.Future`. ``fn`` and ``args`` must hold no Qt object."""
    return _pool(lane).submit(fn, *args)


def _settler(fut: "asyncio.Future[Any]") -> Callable[[Any, Optional[BaseException]], None]:
    """A ``done`` callback that settles ``fut`` (unless the awaiting coroutine was cancelled meanwhile)."""

    def settle(result: Any, error: Optional[BaseException]) -> None:
        if fut.done():
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(result)
    return settle


async def run(fn: Callable[[Work], T], *, lane: str = "work", work: Optional[Work] = None,
              on_progress: Optional[Callable[[Work], Any]] = None) -> T:
    """Await ``fn(work)`` run on ``lane``: its result, or the exception it raised (no dialog; the qasync loop of the
    UI thread)."""
    fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    submit(fn, done=_settler(fut), lane=lane, work=work, on_progress=on_progress)
    del fn
    return await fut


async def run_in_worker(parent: Optional[QWidget], fn: Callable[[Work], T], *, label: str = "",
                        title: str = "", cancellable: bool = True, show_after_ms: int = SHOW_AFTER_MS,
                        big: bool = False,
                        on_dialog: Optional[Callable[[QProgressDialog, Work], Any]] = None) -> T:
    """Run ``fn(work)`` on a worker and return its result; a progress dialog over ``parent`` (``label``,
    ``title``; Cancel unless ``cancellable`` is False) appears if it takes longer than ``show_after_ms``: a busy
    bar until the first report, then ``work.progress``; Cancel sets the flag ``fn`` checks and says 正在取消…, and
    the dialog stays until ``fn`` has returned. ``big``: the work builds a big object graph (ui/infra/work.py module
    doc). ``on_dialog(dialog, work)`` is called when the dialog is shown (tests use it). Raises what ``fn`` raised,
    or :class:`WorkCancelled` — any exception after Cancel becomes one; a result that arrives although Cancel was
    pressed is returned (the work is done). Must be awaited on the UI thread's (qasync) loop."""
    work = Work()
    if big:
        fn = hold_collector(fn)
    dialog: list[QProgressDialog] = []
    fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    task = submit(fn, done=_settler(fut), work=work, on_progress=lambda w: paint(w))
    del fn

    def show() -> None:
        if task.done() or dialog:
            return
        dlg = QProgressDialog(label or tr("work.busy"), tr("work.cancel") if cancellable else "", 0, 0, parent)
        dlg.setWindowTitle(title or tr("work.title"))
        dlg.setWindowModality(Qt.WindowModality.WindowModal)
        dlg.setAutoClose(False)
        dlg.setAutoReset(False)
        dlg.setMinimumDuration(0)
        if not cancellable:
            dlg.setCancelButton(None)

        def cancel() -> None:
            work.cancel()
            dlg.setLabelText(tr("work.cancelling"))
            dlg.show()  # QProgressDialog hides itself on cancel; it stays until the work has stopped

        dlg.canceled.connect(cancel)
        dialog.append(dlg)
        dlg.show()
        paint(work)
        if on_dialog is not None:
            on_dialog(dlg, work)

    def paint(w: Work) -> None:
        if not dialog:
            return
        dlg = dialog[0]
        if w.total > 0:
            if dlg.maximum() != w.total:
                dlg.setRange(0, w.total)
            dlg.setValue(min(w.done, w.total))
        if w.text is not None and not w.cancelled():
            dlg.setLabelText(w.text)

    shower = QTimer()
    shower.setSingleShot(True)
    shower.timeout.connect(show)
    shower.start(max(0, show_after_ms))
    try:
        return await fut
    except WorkCancelled:
        raise
    except BaseException:
        if work.cancelled():
            raise WorkCancelled() from None
        raise
    finally:
        shower.stop()
        for dlg in dialog:
            dlg.canceled.disconnect()
            dlg.close()
            dlg.deleteLater()


def call_in_worker(parent: QObject, fn: Callable[[], T], done: Callable[[Optional[T], Optional[BaseException]], Any],
                   poll_ms: int = POLL_MS) -> Callable[[], None]:
    """Run ``fn()`` (pure Python) on a worker and call ``done(result, None)`` — or ``done(None, exception)`` — on
    the UI thread; for widgets that must stay synchronous for their callers (no qasync loop, no dialog; the
    checkpoint diff view). Returns ``cancel()``: ``done`` is then never called (the work still runs to its end).
    Nothing is called if ``parent`` is deleted first. ``poll_ms`` is kept for callers; the runner's inbox is
    drained every :data:`POLL_MS` ms."""
    box = [fn]
    del fn
    task = submit(lambda _w: box[0](), done=done, guard=parent)
    return task.cancel


class _Gen:
    """The generation counter a worker of :class:`LatestWins` may read (plain Python, no Qt)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


_SKIPPED = object()


class LatestWins(QObject):
    """Runs ``fn(cancelled)`` on a lane (``find`` by default) where each :meth:`start` begins a new *generation*:
    results of older generations are dropped, their ``cancelled()`` turns true so they can stop early, and one
    superseded before a worker took it never runs. ``done(gen, result)``; ``failed(gen, exception)``, both on the
    UI thread (the runner's inbox, module doc: a result arriving after this object was deleted is dropped).
    ``running``: the owner clears it when the current generation's outcome arrived."""

    done = Signal(int, object)
    failed = Signal(int, object)

    def __init__(self, parent: Optional[QObject] = None, lane: str = "find") -> None:
        super().__init__(parent)
        self._gen = _Gen()
        self._lane = lane
        self._rec = _Rec(self)  # the target of relay() sends
        self.running = False

    @property
    def gen(self) -> int:
        """The current generation (results of older ones are dropped)."""
        return self._gen.value

    def start(self, fn: Callable[[Callable[[], bool]], Any]) -> int:
        """Run ``fn(cancelled)`` on a worker; returns its generation. Call on the UI thread."""
        counter = self._gen
        counter.value += 1
        gen = counter.value
        self.running = True

        def cancelled() -> bool:
            return gen != counter.value

        def work(_w: Work) -> Any:
            if cancelled():
                return _SKIPPED
            return fn(cancelled)

        def finished(result: Any, error: Optional[BaseException]) -> None:
            if result is _SKIPPED:
                return
            if error is not None:
                if isinstance(error, Exception):
                    self.failed.emit(gen, error)
            else:
                self.done.emit(gen, result)

        submit(work, done=finished, guard=self, lane=self._lane)
        return gen

    def relay(self, fn: Callable[..., Any]) -> Callable[..., None]:
        """A function the worker may call with any arguments: ``fn(*args)`` then runs on the UI thread (in order,
        before the result of the same run; dropped once this object is deleted). ``fn`` may be a signal's
        ``emit``."""
        rec = self._rec

        def send(*args: Any) -> None:
            _put(rec, fn, args)
        return send

    def cancel(self) -> None:
        """Drop whatever runs now."""
        self._gen.value += 1
        self.running = False
