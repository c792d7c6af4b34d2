"""Keep the garbage collector off the worker threads and free big objects off the UI thread (issue 15 item 12:
nothing runs on the UI thread for more than 50 ms). Slow work itself goes through the one task runner, ui/infra/tasks.py
(:func:`~.tasks.run_in_worker`, :func:`~.tasks.call_in_worker`, :class:`~.tasks.Work`)::

    from .tasks import WorkCancelled, run_in_worker

    async def import_it(self):
        try:
            chat = await run_in_worker(self, lambda w: import_st_chat(path, card, d, model,
                                                                      progress=w.progress, cancelled=w.cancelled),
                                       label=tr("work.import.chat"))
        except WorkCancelled:
            return                      # the work cleaned up after itself
        except (StChatError, OSError) as e:
            QMessageBox.warning(self, tr("app.title"), str(e))   # the engine's own message
            return
        self.install(chat)              # back on the UI thread

How it works: ui/infra/tasks.py's module doc (a bounded pool per lane, results through an inbox the UI thread drains,
the dialog after 300 ms, Cancel).

Big object graphs (``big=True``; opening a 100,000-message chat builds ~750,000 objects): the interpreter's cyclic
garbage collector holds the GIL for a full pass over every object whenever the heap has grown by a quarter, so
building a big chat on a worker froze the UI thread for 0.5–1.5 s at a time (measured with the stall meter: 2.2 s
worst). During such work full (generation 2) passes are held off, and what the work built is then moved to the
collector's permanent generation (``gc.freeze``), where passes no longer walk it. Nothing ever puts it back and
collects it (that was one full pass over every object on the UI thread: 1.4-3 s with a 100,000-message chat in
memory, proportional to the heap, not to what was freed). A chat the window replaces is instead closed
(``Chat.close()`` empties the chat's attributes: its parts pointed back at it, so it was one big reference cycle)
and its parts dropped on a worker by :func:`release` / :func:`dismantle`, one element at a time with the GIL handed
back every :data:`RELEASE_SLICE` frees: reference counting frees it (frozen or not) and no collector is needed.
What the load itself leaves as cyclic garbage (~30 objects per open, measured) and frozen objects that become cyclic
garbage later stay until the app exits — bounded; tests/ui/test_chat_release.py opens and replaces a big chat
several times and checks the frozen count and the object count come back.

Where the collector runs (:func:`install_gc_pump`): CPython runs a cyclic collection in whichever thread happens to
cross the allocation threshold — a task runner worker (ui/infra/tasks.py), the egress gate's thread, a test's
loopback server. Garbage cycles that hold a PySide wrapper owning its C++ object (a closed dialog, a timer, a
page kept in a lambda) are then destroyed on that thread while the UI thread may be using them or their parent: the
suite died with SIGSEGV at random places under load (faulthandler showed server threads; Qt prints
"Timers cannot be stopped from another thread" for such a destruction). So the window turns automatic collection off
and collects on the UI thread instead, from a timer, with the same generation thresholds.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any, Callable, Optional, TypeVar

from PySide6.QtCore import QCoreApplication, QThread, QTimer

from . import tasks
from .collector import GC_LOCK, STATE
from .i18n import register

__all__ = ["collect_frozen", "dismantle", "install_gc_pump", "release", "GC_PUMP_MS"]

register({
    "work.open.chat": {"zh": "正在打开对话「{name}」…", "en": "Opening chat \"{name}\"…"},
    "work.new.chat": {"zh": "正在新建对话…", "en": "Creating the chat…"},
    "work.import.chat": {"zh": "正在导入聊天记录「{name}」…", "en": "Importing chat \"{name}\"…"},
    "work.import.card": {"zh": "正在导入角色卡「{name}」…", "en": "Importing card \"{name}\"…"},
})

T = TypeVar("T")


def _collect_frozen() -> None:
    if STATE.frozen:
        gc.unfreeze()
        start = time.monotonic()
        gc.collect()
        end = time.monotonic()
        _last_full.update(end=end, took=end - start)  # the pump's next full pass waits accordingly
        STATE.frozen = False


def _on_ui_thread() -> bool:
    app = QCoreApplication.instance()
    return app is not None and QThread.currentThread() is app.thread()


def collect_frozen() -> None:
    """Put back and collect what big work froze (module doc) — a full collector pass, ~1-2 s with a 100,000-message
    chat in memory (it holds the GIL: never in the window; only where a pause is acceptable, e.g. between tests).
    Call it on the UI thread (the pass may destroy Qt objects)."""
    with GC_LOCK:
        _collect_frozen()


#: Pops :func:`dismantle` makes between two pauses (a pop frees one element: a few objects, microseconds).
RELEASE_SLICE = 256
#: Containers at least this long are taken apart element by element; their elements are dropped whole unless they
#: are such containers too.
_BIG_LEN = 64
_deferred: list[Any] = []  # Qt wrappers met by dismantle on a worker: dropped by the pump, on the UI thread
_deferred_lock = threading.Lock()


def _takeable(v: Any) -> bool:
    if isinstance(v, (dict, list, set, tuple)):
        return len(v) > 0
    t = type(v)
    return t.__module__.startswith("liyuan_desktop.") and (hasattr(v, "__dict__") or bool(_slots(t)))


def _slots(t: type) -> list[str]:
    return [n for k in t.__mro__ for n in ((k.__dict__.get("__slots__") or ()) if not isinstance(
        k.__dict__.get("__slots__"), str) else (k.__dict__["__slots__"],)) if n not in ("__dict__", "__weakref__")]


def _is_big(v: Any) -> bool:
    return isinstance(v, (dict, list, set, tuple)) and len(v) >= _BIG_LEN


def _is_qt(v: Any) -> bool:
    return type(v).__module__.startswith(("PySide6", "shiboken6"))


def dismantle(objs: list[Any], pause: Callable[[], None] = lambda: time.sleep(0)) -> int:
    """Drop every object of ``objs`` (the list is emptied) a little at a time, so that freeing a big graph never
    holds the interpreter lock for long: a dict, list, set or tuple, or an instance of a ``liyuan_desktop`` class
    (attributes or ``__slots__``), that nothing else references (``sys.getrefcount``) is emptied one element (one attribute) at a time, descending
    into what it held — into every such element of an instance or a short container, into the long containers
    (:data:`_BIG_LEN`) of a long container; everything else is simply let go (an entry, a string: a few objects).
    ``pause()`` runs every :data:`RELEASE_SLICE` pops (on a worker: ``time.sleep(0)`` hands the lock to the UI
    thread). Anything still referenced elsewhere (shared with a live chat, a module cache) is never changed, only
    our reference dropped. Qt wrappers are not dropped here but handed to the UI thread (the collector pump drops
    them): a Qt object must not be destroyed on a worker thread (module doc). Returns how many pops it made.

    For what :meth:`Chat.close <liyuan_desktop.core.chat.facade.Chat.close>` returns: a 100,000-message chat is
    ~800,000 objects, ~0.5 s of frees in one go when its last reference is dropped."""
    stack = objs
    pops = 0

    def tick() -> None:
        nonlocal pops
        pops += 1
        if pops % RELEASE_SLICE == 0:
            pause()

    while stack:
        obj = stack.pop()
        if _is_qt(obj):
            with _deferred_lock:
                _deferred.append(obj)
            del obj
            continue
        # our two references: ``obj`` and getrefcount's argument; more means someone else holds it: only let go
        if sys.getrefcount(obj) > 2 or not _takeable(obj):
            del obj
            tick()
            continue
        if isinstance(obj, tuple):
            obj = list(obj)  # the tuple goes (ours alone); its elements are now held by a list we can empty
        elif not isinstance(obj, (dict, list, set)):
            for name in _slots(type(obj)):  # a class with __slots__ (e.g. the tree's BranchPath views)
                v = getattr(obj, name, None)
                try:
                    delattr(obj, name)
                except AttributeError:
                    pass
                if _is_qt(v) or _takeable(v):
                    stack.append(v)
                del v
                tick()
            if not hasattr(obj, "__dict__"):
                del obj
                continue
        if isinstance(obj, list):
            big = len(obj) >= _BIG_LEN
            while obj:
                v = obj.pop()
                if (_takeable(v) and not big) or _is_big(v):
                    stack.append(v)
                del v
                tick()
        elif isinstance(obj, set):
            big = len(obj) >= _BIG_LEN
            while obj:
                v = obj.pop()
                if not big and _takeable(v):
                    stack.append(v)
                del v
                tick()
        else:
            d = obj if isinstance(obj, dict) else vars(obj)
            big = d is obj and len(d) >= _BIG_LEN
            while d:
                _k, v = d.popitem()
                if _is_qt(v) or (_takeable(v) and not big) or _is_big(v):
                    stack.append(v)
                del _k, v
                tick()
            del d
        del obj
        tick()
    return pops


def release(objs: list[Any]) -> Any:
    """Drop ``objs`` on a worker thread with :func:`dismantle` (e.g. what ``Chat.close()`` returned when the window
    replaced the chat). Call on the UI thread and keep no reference to what is in the list; returns the
    ``concurrent.futures.Future`` (its result: the pop count). Nothing here is collected: a closed chat has no cycles
    left, so reference counting frees it, and what it froze leaves the permanent generation as it is freed."""
    box = list(objs)
    objs.clear()
    return tasks.detached(dismantle, box)


#: How often the UI thread's collector timer looks at the allocation counts (:func:`install_gc_pump`), in ms.
GC_PUMP_MS = 100
#: A full (generation 2) pass waits until this many times its last duration has gone by since it ended (at most
#: ~2% of the UI thread's time; CPython's own rule, "the heap grew by a quarter", cannot be read from Python).
_FULL_PASS_SPACING = 50
_pump: Optional[QTimer] = None
_last_full = {"end": 0.0, "took": 0.0}


def _pump_tick() -> None:
    if _deferred:
        with _deferred_lock:
            _deferred.clear()
    if GC_LOCK.locked():  # big work runs (what it builds is frozen after, never walked) or a collection does
        return
    c0, c1, c2 = gc.get_count()
    t0, t1, t2 = gc.get_threshold()
    if t0 <= 0 or c0 <= t0:
        return
    gen = 1 if c1 > t1 else 0
    now = time.monotonic()
    if c2 > t2 and now - _last_full["end"] >= _FULL_PASS_SPACING * _last_full["took"]:
        gen = 2
    gc.collect(gen)
    if gen == 2:
        end = time.monotonic()
        _last_full.update(end=end, took=end - now)


def install_gc_pump() -> None:
    """Turn CPython's automatic cyclic collection off and run it from a timer on the UI thread instead (module doc,
    "Where the collector runs"): every :data:`GC_PUMP_MS` ms the timer compares ``gc.get_count()`` with
    ``gc.get_threshold()`` like the interpreter does after allocations and collects the oldest generation due (a
    full pass no more than ~2% of the time; no pass at all while big work runs: what it builds is frozen after it,
    as before, rather than walked by passes on the way). Reference counting still frees
    everything that is not in a cycle at once. Idempotent; call on the UI thread once the QApplication exists (the
    app at start, the UI tests' conftest). Code that pauses the collector around a build (``gc.disable()`` …
    ``gc.enable()`` only if it was enabled) leaves it off."""
    global _pump
    app = QCoreApplication.instance()
    if _pump is not None or app is None:
        return
    if not _on_ui_thread():
        raise RuntimeError("install_gc_pump() must be called on the UI thread")
    gc.disable()
    _pump = QTimer(app)  # the application's child: lives as long as the app, ticks on the UI thread
    _pump.setObjectName("liyuanGcPump")
    _pump.setInterval(GC_PUMP_MS)
    _pump.timeout.connect(_pump_tick)
    _pump.start()
