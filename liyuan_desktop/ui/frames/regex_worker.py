"""The card's display regex scripts off the UI thread (issue 13 §4).

A real card's display regex (``/([\\s\\S]*)<\\/(think|planning)>/g``) takes about half a second per long message in
QuickJS; run on the UI thread, opening a 30-beat chat froze the window for seconds. Now the window paints at once
— every item whose display text is known without running a script (no scripts, or cached in memory or in the
chat's disk cache, :mod:`liyuan_desktop.core.chat.display_cache`) as it will stay, the others from their stored
text marked ``scripting`` — and a :class:`DisplayWorker` runs the scripts for the others on one worker thread
(the task runner's ``display`` lane; its own QuickJS engine: :mod:`liyuan_desktop.core.cards.regex_engine` keeps one per thread), newest first, and
hands each result back to the UI thread, which re-renders that item in place.

QuickJS releases the GIL while a regex runs, so the UI thread keeps painting. The per-call time limit of
:func:`liyuan_desktop.core.cards.regex_scripts.apply_scripts` stays; a script that hits it is reported once per
open chat (:meth:`DisplayWorker.take_new_issues` names it), not once per message.

A batch belongs to a *generation*: reloading the transcript (another chat, another branch, a new beat) starts a new
one and results of the old one are dropped, so a slow old run never paints over newer text.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from ...core.cards.regex_scripts import DEFAULT_TIME_LIMIT
from ..infra import tasks
from ..infra.i18n import STRINGS, tr
from ..infra.tasks import Work

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


class DisplayWorker(QObject):
    """Runs ``run(item) -> (text, warnings)`` for batches of transcript items on the task runner's ``display`` lane
    (one worker at a lowered CPU priority, ui/infra/tasks.py) and emits :attr:`filled` (generation, item, display text)
    on the UI thread for each, newest first. ``warnings`` are the scripts' warning lines; each distinct script that
    timed out or failed is kept once per generation family (:meth:`reset_issues`) for :meth:`take_new_issues`."""

    #: (generation, the item as given, its display text); delivered on the UI thread. The item is carried as
    #: ``object``: a ``dict`` argument becomes a QVariantMap, which sorts the keys of the item's variables (a status
    #: bar lists them in the author's order; issue 29 §10)
    filled = Signal(int, object, str)
    #: a new script problem, already worded for the activity list (once per script until :meth:`reset_issues`)
    issue = Signal(str)

    def __init__(self, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self._gen = [0]  # what the worker reads: plain Python, not this QObject (ui/infra/tasks.py, "Threads and Qt")
        self._named: set[str] = set()
        self.pending = 0
        self._closed = False

    @property
    def generation(self) -> int:
        """The current batch generation (results of older ones are dropped)."""
        return self._gen[0]

    def restart(self) -> int:
        """Start a new generation: queued work of the old one is skipped. Returns the new generation."""
        self._gen[0] += 1
        self.pending = 0
        return self._gen[0]

    def reset_issues(self) -> None:
        """Forget which scripts were named (a new chat was opened)."""
        self._named.clear()

    def submit(self, items: list[dict[str, Any]], run: Callable[[dict[str, Any]], tuple[str, list[str]]]) -> int:
        """Queue ``items`` (run in the order given; give the newest first) for the current generation; returns it.
        Each result reaches the UI thread through the runner's inbox (``work.post``), in order."""
        counter = self._gen
        gen = counter[0]
        if self._closed:
            return gen
        self.pending += len(items)

        def work(w: Work) -> None:
            time.sleep(START_DELAY_S)  # the page paints first: the renderer gets the cores for it
            for it in items:
                if gen != counter[0]:
                    return
                try:
                    text, warnings = run(it)
                except Exception:  # a broken script must never take the worker down
                    log.exception("display scripts failed for item %s", it.get("id"))
                    text, warnings = it.get("text", ""), []
                if gen != counter[0]:
                    return
                w.post(gen, it, text, list(warnings))

        tasks.submit(work, on_post=self._deliver, guard=self, lane="display")
        return gen

    def _deliver(self, gen: int, item: dict, text: str, warnings: list) -> None:
        if gen != self._gen[0] or self._closed:
            return
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
        """Drop queued work (not waiting for a script that runs; its result is dropped) and take no more."""
        self.restart()
        self._closed = True
