"""Warm the engine up while the user looks at the window (issue 15: start-up to an interactive chat).

The window shows before the engine's chat is imported (ui/window/main_window.py). The first chat the user opens then
imports the rest of the engine (the beat loop, world-info activation and its key index, …) and builds the tool
schemas the context meter and the first request need: ~150 ms that can be done while the conversation page loads
(Chromium's renderer process does most of that work; the UI thread mostly waits) and the user reads the welcome page
or the chat list. ``app.main`` starts it as soon as the window is shown. The engine is imported one module per step,
leaves first (:data:`MODULES`): imported in one step (~100 ms), it held up Chromium's own work on the UI thread and
the page came up later (bench/ui_start.py, interactive demo 1.45 s against 1.40 s without a warm-up, load ~2); in
small steps the demo is interactive sooner than with the warm-up started only once the page is up (medians of 5×3
runs, quiet: 0.84 s against 0.86 s).

:func:`start` runs these steps on the UI thread's event loop, one step per turn of the loop (each a few to a few
tens of ms), so Chromium's own work on the UI thread is never held up by more than one step. Not a worker thread:
two threads importing the same modules at once can meet a circular import half-done (Python then hands one of
them a partly initialised module), and the engine's first chat may start on the UI thread at any moment. A step
that fails is logged and skipped — the first chat then does that work itself, as it always did. Two seconds later,
when the window is interactive, :func:`later_steps` build the engine models that wait for first use
(``core/deferred.py``), so the first beat does not pay for them either.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from typing import Callable, Optional

log = logging.getLogger(__name__)

_ENGINE: tuple[str, ...] = (
    "beat.draft", "llm.usage", "llm.sse", "beat.merge", "beat.echo", "beat.tools.registry", "beat.text_calls",
    "beat.repetition", "beat.think", "story.workspace", "beat.tools.context", "beat.tools.memory",
    "beat.tools.review", "beat.tools.roleplay", "beat.tools.story_files", "story.outline", "beat.tools.writing",
    "beat.tools.sets", "beat.loop", "cards.personas", "prompt.lore_layers", "prompt.presets.model",
    "prompt.presets.mapping", "prompt.presets.prompter", "prompt.assemble", "prompt.authors_note",
    "prompt.presets.store", "chat.recovery", "ledger.mvu.paths", "ledger.mvu.initvar", "ledger.mvu.patch",
    "ledger.panels", "ledger.scribe", "prompt.inspect", "prompt.prose_only", "story.checkpoints", "chat.agent",
    "chat.results", "chat.pipeline", "provider_caps", "chat.prose_mode", "macros.ejs", "chat.ledger",
    "chat.templates", "chat.turn", "chat.display_cache", "chat.context", "chat.folder", "prompt.tokens",
    "prompt.window", "memory.search", "memory.compaction", "session.branches", "session.transcript",
    "story.mentions", "story.progress", "chat.writing_room", "chat.world_info", "chat.view", "chat.review",
    "chat.facade",
)
MODULES: tuple[str, ...] = ("ahocorasick", "pydantic._internal._dataclasses",
                            *(f"liyuan_desktop.core.{m}" for m in _ENGINE))
"""Modules a first chat imports, leaves first — the order in which Python completes them when the chat facade is
imported after the window's own modules — so each step of the warm-up imports one module (1-7 ms) rather than the
whole engine at once (~100 ms, which held up Chromium's work on this thread while the page loaded). A module
missing from the list is imported by the step of a module that needs it; a stale order only makes steps longer."""


def _tool_schemas() -> None:
    from ...core.beat.tools.registry import tool_specs
    from ...core.beat.tools.sets import AGENT_TOOLS, ROLEPLAY_TOOLS

    tool_specs(ROLEPLAY_TOOLS)  # cached per process (byte-stable); the context meter needs it at open
    tool_specs(AGENT_TOOLS)


def steps() -> list[tuple[str, Callable[[], object]]]:
    """The warm-up steps in order: ``(name, fn)``; each is done once per process (imports and per-process caches)."""
    out: list[tuple[str, Callable[[], object]]] = [(m, lambda m=m: importlib.import_module(m)) for m in MODULES]
    out.append(("tool schemas", _tool_schemas))
    return out


def ensure_engine() -> None:
    """Import the engine's chat modules now, on the calling (UI) thread, if the warm-up has not yet: called before
    anything that opens or creates a chat, so a worker thread that then opens one never imports them itself (two
    threads importing at once can meet a circular import half-done). Cheap once done (a dictionary lookup each)."""
    for m in MODULES:
        if m not in sys.modules:
            importlib.import_module(m)


_task: Optional[asyncio.Future] = None


LATER_S = 2.0
"""Seconds after the first steps before the later ones (:func:`later_steps`): by then the window is interactive."""


def _build_models() -> None:
    from ...core.deferred import build_deferred

    build_deferred()  # ~20 ms: imported engine models whose validators wait for first use (core/deferred.py)


def later_steps() -> list[tuple[str, Callable[[], object]]]:
    """Steps for once the window is interactive: the engine models built on first use (``core.deferred``) are built
    now, so the first beat does not pay for them."""
    return [("deferred models", _build_models)]


async def _run(delay_s: float, later_s: float = LATER_S) -> None:
    await asyncio.sleep(delay_s)
    for name, fn in steps():
        await _step(name, fn)
    await asyncio.sleep(later_s)
    for name, fn in later_steps():
        await _step(name, fn)


async def _step(name: str, fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - a warm-up step must never break the window
        log.exception("warm-up step %s failed", name)
    await asyncio.sleep(0)  # let the window (and Chromium's work on this thread) run between steps


def start(delay_s: float = 0.0) -> asyncio.Future:
    """Schedule the warm-up on the running event loop (once per process; later calls return the same task)."""
    global _task
    if _task is None:
        _task = asyncio.ensure_future(_run(delay_s))
    return _task
