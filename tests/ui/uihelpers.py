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
