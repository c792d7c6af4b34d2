"""``liyuan card preview FILE --screenshot OUT.png [--json]``: render a card's opening with its status bar from the
initial variables, offscreen, and report ``{"frames", "frame_names", "names", "errors", "blocked", "failed",
"height_px"}`` — for card authors.

The preview is the app: the card's display regex scripts run (a preview is the author's own card), the opening
carries the MVU tree from its [InitVar] entries, and the real conversation view renders it the way the main window
does — the same message ids (the floor number: 0 = the opening, what ``getCurrentMessageId()`` answers), the same
frame context (the settings' persona as a new chat in the app gets it, the card's name: ``chat_frame_context``;
reported as ``names``), the card's own frame storage and trust switch (copied
from beside the card file when it has them, e.g. a card in the library). Everything it writes goes to a scratch
folder, never to the card's folder or the user's data.

``errors``: every error the page's console saw (frames' uncaught exceptions and ``console.error``, CSP refusals),
plus what the frames' shim reported as an error (failed event listeners …) and each policy refusal the shim saw
(``CSP refused <directive> <url>``). ``blocked``: what the view's real request filter and the frames' policy refused
(``ConversationView.blocked_requests``). ``failed``: frames showing a notice (``liyuan.frameNotices``: "error",
"blocked", "empty" for 0 px) or stopped by the watchdog ("hung", "memory", "flood"), as ``{name: reason}``.
``frame_names``: ``TH-message--<floor>--<n>`` of the frames shown, as in the window.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from ...core.cards import load_card
from ...core.cards.edit import with_greeting
from ...runtime import make_loop, prepare_env

# beside a card file: what the app keeps for that card and a preview must see too (cards/storage, cards/meta)
CARD_SIDE_FILES = ("frame_storage.json", "liyuan.json")


class _ConsoleErrors(logging.Handler):
    """Collects the page's console errors (HostPage logs them as warnings on the conversation logger)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text.startswith("conversation.js:"):  # "conversation.js:<line>: <message>"
            text = text.split(": ", 1)[-1]
        self.lines.append(text)


def run_preview(card_file: str, screenshot: Optional[str], timeout: float = 20.0, *, greeting: int = 0) -> dict[str, Any]:
    """Render and report (see the module doc); ``greeting``: 0 the first message, n alternate greeting n
    (``cards.edit.with_greeting``). Raises CardError for a file that is not a card or a greeting it lacks."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-preview-"))
    prepare_env()
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtWidgets import QApplication

    from ...core.chat.build import build_chat
    from ...core.llm.replay import ReplayModel
    from .conversation import ConversationView, chat_frame_context

    scratch, copy = _scratch_copy(card_file)
    card = with_greeting(load_card(copy), greeting)  # CardError before any window
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = make_loop(app)
    from ..infra.work import install_gc_pump

    install_gc_pump()  # the cyclic collector runs on the UI thread only (ui/infra/work.py)
    asyncio.set_event_loop(loop)
    # made as the app makes a new chat (core/chat/build.py): the persona a new chat would get, the app's settings
    chat = build_chat(scratch / "chat", card, _settings_quietly(), ReplayModel(actor=[]))
    chat.set_scripts_allowed(True, remember=False)  # the preview runs the card's scripts without storing a permission
    items = chat.transcript()
    console = _ConsoleErrors()
    page_log = logging.getLogger("liyuan_desktop.ui.frames.conversation")
    page_log.addHandler(console)
    view = ConversationView()
    view.resize(900, 1200)
    view.show()
    result: dict[str, Any] = {}

    async def go() -> None:
        end = loop.time() + timeout
        while not view.is_ready() and loop.time() < end:
            await asyncio.sleep(0.05)
        view.show_chat()
        view.set_card(copy.parent)  # the card's frame storage and trust, as the window does
        view.set_frame_context(**chat_frame_context(chat))
        n = len(items)
        # as the main window shows them (MainWindow.display_items): the floor number as the id, the entry id kept
        view.set_transcript([dict(it, id=str(i), entry_id=it["id"], text=chat.display_text(it, n - 1 - i))
                             for i, it in enumerate(items)], False)
        await asyncio.sleep(2.5)  # frames load, run their scripts and report their heights
        box: list = []
        view.eval_js("JSON.stringify({names: window.liyuan.frameNames(), heights: window.liyuan.frameNames()"
                     ".map(n => window.liyuan.frameHeight(n)), logs: window.liyuan.frameLogs(),"
                     " refused: window.liyuan.frameBlocked(), notices: window.liyuan.frameNotices()})", box.append)
        while not box and loop.time() < end:
            await asyncio.sleep(0.05)
        data = json.loads(box[0]) if box else {"names": [], "heights": [], "logs": [], "refused": [], "notices": {}}
        result.update(_report(data, console.lines, view))
        if screenshot:
            view.scroll_to_bottom()  # the bar sits under the opening
            await asyncio.sleep(0.4)
            view.grab().save(screenshot)

    try:
        with loop:
            loop.run_until_complete(go())
    finally:
        page_log.removeHandler(console)
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def _scratch_copy(card_file: str) -> tuple[Path, Path]:
    """A scratch folder and the card copied into it with the files the app keeps beside a card
    (:data:`CARD_SIDE_FILES`): everything the preview writes (its chat, the frames' storage) goes there, so a preview
    never touches the user's data folder or the card's own folder, and can run again. Raises CardError when the file
    is not there."""
    scratch = Path(tempfile.mkdtemp(prefix="liyuan-preview-"))
    src = Path(card_file)
    if not src.is_file():
        from ...core.cards import CardError
        from ...core.messages import message

        raise CardError(message("preview.no_card_file", path=card_file))
    copy = scratch / "card" / src.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(src, copy)
    for name in CARD_SIDE_FILES:
        if (src.parent / name).is_file():
            shutil.copyfile(src.parent / name, copy.parent / name)
    return scratch, copy


def _report(data: dict[str, Any], console: list[str], view: Any) -> dict[str, Any]:
    """The preview's report from what the page said (``data``: frame names, heights, logs, CSP refusals, notices),
    the console's error lines and the view (failed frames, blocked requests, the frame names it used): each error
    once, a CSP refusal only when no error already names its URL."""
    errors: list[str] = list(console)
    for x in data.get("logs") or []:
        if x.get("level") in ("error", "uncaught") and not any(_same_error(x["text"], e) for e in errors):
            errors.append(x["text"])
    for b in data.get("refused") or []:
        line = f"CSP refused {b.get('directive', '')} {b.get('url', '')}".strip()
        if not any(str(b.get("url", "")) and str(b.get("url")) in e for e in errors):
            errors.append(line)
    failed = {name: str(n.get("reason") or "error") for name, n in (data.get("notices") or {}).items()}
    failed.update(view.failed_frames())
    names = list(data.get("names") or [])
    return {
        "frames": len(set(names) | set(failed)),
        "frame_names": names,
        "names": view.frame_context().get("names", {}),
        "errors": _unique(errors),
        "blocked": _unique(view.blocked_requests()),
        "failed": failed,
        "height_px": [round(h) for h in data.get("heights") or []],
    }


def _settings_quietly() -> Optional[Any]:
    """The app settings read without side effects (a missing or broken settings file gives None: the engine's
    defaults, the card's / the default persona), for a preview chat made as the app makes one."""
    from ...core.settings import AppSettings, settings_path

    try:
        return AppSettings.model_validate(json.loads(settings_path().read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def _same_error(shim_text: str, console_text: str) -> bool:
    """True when the shim's ``[card] <message> (line N)`` report is the console line ``console_text`` again."""
    core = shim_text.removeprefix("[card] ").rsplit(" (line ", 1)[0].strip()
    return bool(core) and core in console_text


def _unique(lines: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in lines if not (x in seen or seen.add(x))]
