"""Helpers for the async window tests (import as ``from uihelpers import …``; conftests are never imported by name).

They poll on the running qasync loop with ``await asyncio.sleep`` — never ``qtbot.wait*`` inside async tests
(tests/ui/conftest.py explains why)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
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


class LoopStallMeter:
    """The UI thread's longest event-loop stall during an operation, in ms: a QTimer ticking every ``interval_ms``
    records the largest gap between two ticks (a gap of ``interval_ms`` means no stall). Use as a context manager
    around the operation (awaiting inside is fine; the timer runs on the Qt loop)::

        with LoopStallMeter() as meter:
            await open_the_chat()
        assert meter.worst_ms < 1000  # report meter.worst_ms; assert only a generous bound

    ``worst_ms`` also counts the gap up to ``__exit__`` (a stall in the last synchronous call is measured);
    ``ticks`` is how many ticks ran. Wall-clock figures are for reports: tests assert only generous bounds."""

    def __init__(self, interval_ms: int = 5) -> None:
        self.interval_ms = interval_ms
        self.worst_ms = 0.0
        self.ticks = 0
        self._last = 0.0
        self._timer: Any = None

    def _tick(self) -> None:
        now = time.monotonic()
        self.worst_ms = max(self.worst_ms, (now - self._last) * 1000)
        self._last = now
        self.ticks += 1

    def __enter__(self) -> "LoopStallMeter":
        from PySide6.QtCore import QTimer

        self._timer = QTimer()
        self._timer.setInterval(self.interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last = time.monotonic()
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._tick()
        self.ticks -= 1
        self._timer.stop()
        self._timer.deleteLater()
        self._timer = None


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


@contextlib.contextmanager
def bench_started_app(tmp_path: Path, what: str = "the demo chat", **env_extra: str):
    """Start the real app (``python -m liyuan_desktop --bench-start``, offscreen, a fresh data folder under
    ``tmp_path``, no GPU/flag overrides from this shell, ``env_extra`` added) and wait until it is interactive; yields
    ``(proc, stamps)`` — the process and its stamp file's values — and quits the app afterwards."""
    import os
    import subprocess
    import sys

    stamp = tmp_path / "stamps.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home"), **env_extra}
    for k in ("LIYUAN_GPU", "QTWEBENGINE_CHROMIUM_FLAGS", "LIYUAN_FRAME_ISOLATION"):
        env.pop(k, None)
    proc = subprocess.Popen([sys.executable, "-m", "liyuan_desktop", "--bench-start", str(stamp)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 120
        stamps: dict = {}
        while not stamps:
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
            assert time.monotonic() < end, f"{what} did not become interactive"
            time.sleep(0.05)
            try:
                stamps = json.loads(stamp.read_text())
            except (OSError, ValueError):  # not there yet, or being written
                pass
        yield proc, stamps
    finally:
        Path(str(stamp) + ".quit").write_text("")
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
