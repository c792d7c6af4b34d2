"""Run slow work off the UI thread, with a progress dialog and Cancel (issue 15 item 12: nothing runs on the UI thread
for more than 50 ms). The one helper for it — reuse it for any step that reads a whole file, compiles a book, imports
or exports::

    from .work import WorkCancelled, run_in_worker

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

How it works: ``fn(work)`` runs on a worker thread of a small shared pool (:data:`_POOL`) while the coroutine waits
on the qasync loop, so the window keeps painting. ``work`` (:class:`Work`) hands ``fn`` the engine's callback shapes:
``work.progress(done, total)`` and ``work.cancelled() -> bool`` (as ``core.chat.search`` and ``core.chat.st_import``
take them), plus ``work.check()`` (raise :class:`WorkCancelled` if asked to stop) and ``work.label(text)``. The
dialog (a :class:`QProgressDialog`, window-modal) appears only when the work is still running after
``show_after_ms`` (300 ms): quick work never flashes one. It shows the progress (a busy bar until the first report)
and Cancel, which sets the flag ``fn`` checks and says 正在取消…; the dialog stays until ``fn`` has returned.

Threads: ``fn`` must not touch Qt objects or anything the UI thread uses at the same time; build new objects there
(a :class:`~liyuan_desktop.core.chat.facade.Chat` — core has no Qt) and hand them back as the result. Progress is
read by a timer on the UI thread from two integers the worker writes: no signal carries Python objects across
threads (see ui/regex_worker.py for why). Results: ``fn``'s return value; its exception is re-raised in the caller —
except that any exception after Cancel becomes :class:`WorkCancelled`. If ``fn`` finishes normally although Cancel was
pressed (too late to stop), its result is returned: the work is done, and nothing is left half-done.

Big object graphs (``big=True``; opening a 100,000-message chat builds ~750,000 objects): the interpreter's cyclic
garbage collector holds the GIL for a full pass over every object whenever the heap has grown by a quarter, so
building a big chat on a worker froze the UI thread for 0.5–1.5 s at a time (measured with the stall meter: 2.2 s
worst). During such work full (generation 2) passes are held off, and what the work built is then moved to the
collector's permanent generation (``gc.freeze``), where passes no longer walk it. The next big work first puts it
back and collects once (on the worker, so a chat that was replaced — its objects are cyclic — is reclaimed then, at
a cost proportional to its size), so nothing leaks for longer than until the next big work.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, TypeVar

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QProgressDialog, QWidget

from .i18n import register, tr

__all__ = ["Work", "WorkCancelled", "collect_frozen", "run_in_worker", "SHOW_AFTER_MS"]

register({
    "work.title": {"zh": "请稍候", "en": "Please wait"},
    "work.cancel": {"zh": "取消", "en": "Cancel"},
    "work.cancelling": {"zh": "正在取消…", "en": "Cancelling…"},
    "work.busy": {"zh": "正在处理…", "en": "Working…"},
    "work.open.chat": {"zh": "正在打开对话「{name}」…", "en": "Opening chat \"{name}\"…"},
    "work.new.chat": {"zh": "正在新建对话…", "en": "Creating the chat…"},
    "work.import.chat": {"zh": "正在导入聊天记录「{name}」…", "en": "Importing chat \"{name}\"…"},
    "work.import.card": {"zh": "正在导入角色卡「{name}」…", "en": "Importing card \"{name}\"…"},
})

#: The dialog appears only for work still running after this many ms.
SHOW_AFTER_MS = 300
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="liyuan-work")
T = TypeVar("T")


class WorkCancelled(Exception):
    """The user pressed Cancel and the work stopped (it left nothing behind: that is the work's own promise)."""


class Work:
    """What the worker function gets: progress reporting and the Cancel flag (module doc). Thread-safe: the worker
    writes, the UI thread reads."""

    def __init__(self) -> None:
        self.done = 0
        self.total = 0
        self.text: Optional[str] = None
        self._cancel = threading.Event()

    def progress(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` (any unit; ``total`` 0 = unknown)."""
        self.done, self.total = int(done), int(total)

    def label(self, text: str) -> None:
        """Change the dialog's text (e.g. the step now running)."""
        self.text = text

    def cancelled(self) -> bool:
        """True once Cancel was pressed."""
        return self._cancel.is_set()

    def check(self) -> None:
        """Raise :class:`WorkCancelled` when Cancel was pressed (call between steps that cannot stop midway)."""
        if self._cancel.is_set():
            raise WorkCancelled()

    def cancel(self) -> None:
        """Ask the work to stop (what Cancel does; also for tests)."""
        self._cancel.set()


_GC_LOCK = threading.Lock()
_frozen = False


def _collect_frozen() -> None:
    global _frozen
    if _frozen:
        gc.unfreeze()
        gc.collect()
        _frozen = False


def collect_frozen() -> None:
    """Put back and collect what big work froze (module doc) now rather than at the start of the next big work — a
    full collector pass, ~1-2 s with a 100,000-message chat in memory (it holds the GIL: call it only where a
    pause is acceptable, e.g. between tests)."""
    with _GC_LOCK:
        _collect_frozen()


def _big(fn: Callable[[Work], T]) -> Callable[[Work], T]:
    """``fn`` with full garbage-collector passes held off while it runs and its objects frozen after (module doc)."""

    def run(work: Work) -> T:
        global _frozen
        with _GC_LOCK:
            _collect_frozen()  # what the last big work froze may hold a replaced chat: collect it now, here
            threshold = gc.get_threshold()
            gc.set_threshold(threshold[0], threshold[1], 10**9)
            try:
                return fn(work)
            finally:
                gc.freeze()
                _frozen = True
                gc.set_threshold(*threshold)

    return run


async def run_in_worker(parent: Optional[QWidget], fn: Callable[[Work], T], *, label: str = "",
                        title: str = "", cancellable: bool = True, show_after_ms: int = SHOW_AFTER_MS,
                        big: bool = False,
                        on_dialog: Optional[Callable[[QProgressDialog, Work], Any]] = None) -> T:
    """Run ``fn(work)`` on a worker thread and return its result; a progress dialog over ``parent`` (``label``,
    ``title``; Cancel unless ``cancellable`` is False) appears if it takes longer than ``show_after_ms``.
    ``big``: the work builds a big object graph (module doc). ``on_dialog(dialog, work)`` is called when the dialog
    is shown (tests use it). Raises what ``fn`` raised, or :class:`WorkCancelled` (module doc). Must be awaited on
    the UI thread's (qasync) loop."""
    work = Work()
    fut = asyncio.wrap_future(_POOL.submit(_big(fn) if big else fn, work))
    dialog: list[QProgressDialog] = []

    def show() -> None:
        if fut.done() or dialog:
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
        if on_dialog is not None:
            on_dialog(dlg, work)

    def poll() -> None:
        if not dialog:
            return
        dlg = dialog[0]
        if work.total > 0:
            if dlg.maximum() != work.total:
                dlg.setRange(0, work.total)
            dlg.setValue(min(work.done, work.total))
        if work.text is not None and not work.cancelled():
            dlg.setLabelText(work.text)

    shower = QTimer()
    shower.setSingleShot(True)
    shower.timeout.connect(show)
    shower.start(max(0, show_after_ms))
    poller = QTimer()
    poller.setInterval(50)
    poller.timeout.connect(poll)
    poller.start()
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
        poller.stop()
        for dlg in dialog:
            dlg.canceled.disconnect()
            dlg.close()
            dlg.deleteLater()
