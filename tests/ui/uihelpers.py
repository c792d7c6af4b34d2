"""Helpers for the async window tests (import as ``from uihelpers import …``; conftests are never imported by name).

They poll on the running qasync loop with ``await asyncio.sleep`` — never ``qtbot.wait*`` inside async tests
(tests/ui/conftest.py explains why)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable


async def wait_for(pred: Callable[[], Any], timeout: float = 30.0, step: float = 0.02) -> None:
    """Poll ``pred()`` until it is true; AssertionError after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {pred}")
        await asyncio.sleep(step)


async def js(win: Any, script: str) -> Any:
    """Evaluate ``script`` in a window's conversation page (``win.view``); the value comes back through JSON (arrays
    and objects do not survive QtWebEngine's own conversion reliably)."""
    box: list = []
    win.view.eval_js(f"JSON.stringify({script})", box.append)
    await wait_for(lambda: bool(box), 10)
    return json.loads(box[0])


# -- synchronous helpers for tests that drive a ConversationView directly (qtbot waits; not in async tests) --------
def view_js(qtbot: Any, view: Any, script: str, timeout: int = 10000) -> Any:
    """Evaluate ``script`` in the view's page and return its value (ms ``timeout``)."""
    box: list = []
    view.eval_js(script, box.append)
    qtbot.waitUntil(lambda: bool(box), timeout=timeout)
    return box[0]


def view_json(qtbot: Any, view: Any, expr: str) -> Any:
    """``expr``'s value through JSON (objects and arrays do not survive QtWebEngine's own conversion reliably)."""
    return json.loads(view_js(qtbot, view, f"JSON.stringify({expr})"))


def wait_view(qtbot: Any, view: Any, expr: str, pred: Callable[[Any], bool], timeout: float = 10.0) -> Any:
    """Evaluate ``expr`` (through JSON) until ``pred(value)``; return the value (AssertionError after seconds)."""
    import time

    end = time.monotonic() + timeout
    while True:
        value = view_json(qtbot, view, expr)
        if pred(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out; last value of {expr!r}: {value!r}")
        qtbot.wait(30)


def probe_frame(qtbot: Any, view: Any, name: str, selector: str, pred: Callable[[Any], bool] = lambda v: v is not None,
                timeout: float = 10.0) -> Any:
    """The textContent of ``selector`` inside status-bar frame ``name`` (a host <-> frame postMessage round trip;
    a probe sent before the frame's shim listens is lost, so it is asked again)."""
    import time

    end = time.monotonic() + timeout
    while True:
        pid = view_js(qtbot, view, f"liyuan.probeFrame({json.dumps(name)}, {json.dumps(selector)})")
        try:
            value = wait_view(qtbot, view, f"liyuan.probeResult({json.dumps(pid)}) === undefined ? null : "
                                           f"{{v: liyuan.probeResult({json.dumps(pid)})}}", lambda v: v is not None,
                              timeout=1.0)["v"]
        except AssertionError:
            value = None
        if value is not None and pred(value):
            return value
        if time.monotonic() > end:
            logs = view_json(qtbot, view, "liyuan.frameLogs()")
            raise AssertionError(f"timed out; last {selector!r} in {name}: {value!r}; frame logs {logs!r}")
        qtbot.wait(50)


def frame_reports(qtbot: Any, view: Any, name: str | None = None) -> list[Any]:
    """What frames sent with ``__liyuanReport`` (all frames, or frame ``name``), oldest first."""
    out = view_json(qtbot, view, "liyuan.frameReports()")
    return [r["data"] for r in out if name is None or r["name"] == name]


def wait_frame_report(qtbot: Any, view: Any, name: str, pred: Callable[[Any], bool], timeout: float = 10.0) -> Any:
    """The newest report of frame ``name`` that satisfies ``pred`` (AssertionError with the frame's logs)."""
    import time

    end = time.monotonic() + timeout
    while True:
        hits = [r for r in frame_reports(qtbot, view, name) if pred(r)]
        if hits:
            return hits[-1]
        if time.monotonic() > end:
            logs = view_json(qtbot, view, "liyuan.frameLogs()")
            raise AssertionError(f"no matching report from {name}; got {frame_reports(qtbot, view, name)!r}; logs {logs!r}")
        qtbot.wait(30)


def close_view(view: Any) -> None:
    """Close and really delete a conversation view (its page goes before the web profile is released)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    view.close()
    view.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
