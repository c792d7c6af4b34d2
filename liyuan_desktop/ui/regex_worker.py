"""The card's display regex scripts off the UI thread (issue 13 §4).

A real card's display regex (``/([\\s\\S]*)<\\/(think|planning)>/g``) takes about half a second per long message in
QuickJS; run on the UI thread, opening a 30-beat chat froze the window for seconds. Now the window paints at once
— every item whose display text is known without running a script (no scripts, or cached in memory or in the
chat's disk cache, :mod:`liyuan_desktop.core.chat.display_cache`) as it will stay, the others from their stored
text marked ``scripting`` — and a :class:`DisplayWorker` runs the scripts for the others on one worker thread
(its own QuickJS engine: :mod:`liyuan_desktop.core.cards.regex_engine` keeps one per thread), newest first, and
hands each result back to the UI thread, which re-renders that item in place.

QuickJS releases the GIL while a regex runs, so the UI thread keeps painting. The per-call time limit of
:func:`liyuan_desktop.core.cards.regex_scripts.apply_scripts` stays; a script that hits it is reported once per
open chat (:meth:`DisplayWorker.take_new_issues` names it), not once per message.

A batch belongs to a *generation*: reloading the transcript (another chat, another branch, a new beat) starts a new
one and results of the old one are dropped, so a slow old run never paints over newer text.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..core.cards.regex_scripts import DEFAULT_TIME_LIMIT

from .i18n import STRINGS, tr

log = logging.getLogger(__name__)

__all__ = ["DisplayWorker", "split_known"]

STRINGS.update({
    "regex.timeout": {"zh": "正则脚本「{name}」处理消息超时（超过 {limit} 秒），已跳过；这些消息按未经该脚本处理的样子显示。",
                      "en": "Regex script \"{name}\" took too long on a message (over {limit} s) and was skipped; those "
                            "messages are shown without it."},
    "regex.failed": {"zh": "正则脚本「{name}」出错，已跳过：{why}", "en": "Regex script \"{name}\" failed and was skipped: {why}"},
})

#: Seconds a batch waits before its first script runs, so the first paint does not share the CPU with it.
START_DELAY_S = 0.25

_WARNING = re.compile(r"^regex script '(?P<name>.*)': skipped: (?P<why>.*)$", re.DOTALL)
_LIMIT = re.compile(r"time limit \((?P<s>[0-9.]+) s\)")


def split_known(items: list[dict[str, Any]], known: Callable[[dict[str, Any]], Optional[str]]
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Items ready to paint and the ones still to script. ``known(item)`` gives an item's display text when it is
    known without running a script, else None; an unknown item is painted from its own text with
    ``scripting: True`` and returned in the second list (the caller runs the scripts for it)."""
    shown, todo = [], []
    for it in items:
        text = known(it)
        if text is None:
            shown.append(dict(it, scripting=True))
            todo.append(it)
        else:
            shown.append(dict(it, text=text))
    return shown, todo


_lowered: set[int] = set()


def _lower_priority() -> None:
    """Give the calling (worker) thread a lower CPU priority where the OS allows it per thread (Linux: nice 10),
    so on a busy machine the UI thread wins the core; elsewhere nothing happens."""
    tid = threading.get_native_id()
    if tid in _lowered or not sys.platform.startswith("linux"):
        return
    _lowered.add(tid)
    try:
        os.setpriority(os.PRIO_PROCESS, tid, 10)
    except (OSError, AttributeError):
        pass


class DisplayWorker(QObject):
    """Runs ``run(item) -> (text, warnings)`` for batches of transcript items on one worker thread and emits
    :attr:`filled` (generation, item, display text) on the UI thread for each, newest first. ``warnings`` are the
    scripts' warning lines; each distinct script that timed out or failed is kept once per generation family
    (:meth:`reset_issues`) for :meth:`take_new_issues`."""

    #: (generation, the item as given, its display text); delivered on the UI thread. The item is carried as
    #: ``object``: a ``dict`` argument becomes a QVariantMap, which sorts the keys of the item's variables (a status
    #: bar lists them in the author's order; issue 29 §10)
    filled = Signal(int, object, str)
    #: a new script problem, already worded for the activity list (once per script until :meth:`reset_issues`)
    issue = Signal(str)
    # only an argument-free signal crosses threads: the results wait in a deque (Python objects carried by a queued
    # signal from another thread corrupted reference counts in PySide6 here: "none_dealloc" crashes)
    _done = Signal()

    def __init__(self, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="liyuan-display-regex")
        self._gen = 0
        self._lock = threading.Lock()
        self._named: set[str] = set()
        self.pending = 0
        self._results: deque[tuple[int, dict, str, list]] = deque()
        self._closed = False
        self._done.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def generation(self) -> int:
        """The current batch generation (results of older ones are dropped)."""
        return self._gen

    def restart(self) -> int:
        """Start a new generation: queued work of the old one is skipped. Returns the new generation."""
        with self._lock:
            self._gen += 1
            self.pending = 0
            return self._gen

    def reset_issues(self) -> None:
        """Forget which scripts were named (a new chat was opened)."""
        self._named.clear()

    def submit(self, items: list[dict[str, Any]], run: Callable[[dict[str, Any]], tuple[str, list[str]]]) -> int:
        """Queue ``items`` (run in the order given; give the newest first) for the current generation; returns it."""
        gen = self._gen
        with self._lock:
            self.pending += len(items)

        def work() -> None:
            _lower_priority()
            time.sleep(START_DELAY_S)  # the page paints first: the renderer gets the cores for it
            for it in items:
                if gen != self._gen:
                    return
                try:
                    text, warnings = run(it)
                except Exception:  # a broken script must never take the worker down
                    log.exception("display scripts failed for item %s", it.get("id"))
                    text, warnings = it.get("text", ""), []
                if gen != self._gen:
                    return
                self._results.append((gen, it, text, list(warnings)))
                with self._lock:  # shutdown() takes the lock: never emit while the window deletes this object
                    if self._closed:
                        return
                    self._done.emit()

        self._pool.submit(work)
        return gen

    @Slot()
    def _deliver(self) -> None:
        while self._results:
            gen, item, text, warnings = self._results.popleft()
            if gen != self._gen:
                continue
            with self._lock:
                self.pending = max(0, self.pending - 1)
            for w in warnings:
                line = self._word(str(w))
                if line is not None:
                    self.issue.emit(line)
            self.filled.emit(gen, item, text)

    def _word(self, warning: str) -> Optional[str]:
        """The activity line for a script warning, or None when that script was named already."""
        m = _WARNING.match(warning)
        name = m.group("name") if m else warning
        if name in self._named:
            return None
        self._named.add(name)
        if m is None:
            return warning
        why = m.group("why")
        if "time limit" in why:
            lim = _LIMIT.search(why)
            return tr("regex.timeout", name=name, limit=lim.group("s") if lim else f"{DEFAULT_TIME_LIMIT:g}")
        return tr("regex.failed", name=name, why=why)

    def idle(self) -> bool:
        """True when no queued item of the current generation is left."""
        return self.pending == 0

    def shutdown(self) -> None:
        """Drop queued work and stop the thread (not waiting for a script that runs; its result is dropped)."""
        self.restart()
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
