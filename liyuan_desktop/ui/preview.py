"""``liyuan card preview FILE --screenshot OUT.png [--json]``: render a card's opening with its status bar from the
initial variables, offscreen, and report ``{"frames", "errors", "blocked", "height_px"}`` — for card authors.

The card's display regex scripts run (a preview is the author's own card), the opening carries the MVU tree from
its [InitVar] entries, and the real conversation view renders it. ``errors`` are the frames' console errors and
uncaught exceptions; ``blocked`` lists what the frames' policy refused (CSP violations reported by the shim).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from ..runtime import make_loop, prepare_env


def run_preview(card_file: str, screenshot: Optional[str], timeout: float = 20.0) -> dict[str, Any]:
    """Render and report (see the module doc). Raises CardError for a file that is not a card."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("LIYUAN_HOME", tempfile.mkdtemp(prefix="liyuan-preview-"))
    prepare_env()
    from PySide6 import QtWebEngineWidgets  # noqa: F401
    from PySide6.QtWidgets import QApplication

    from ..core.cards import load_card
    from ..core.chat.facade import Chat
    from ..core.llm.replay import ReplayModel
    from .conversation import ConversationView

    import shutil

    # everything the preview writes (its chat, the frames' storage beside the card) goes to a scratch folder:
    # a preview never touches the user's data folder or the folder the card file lives in, and can run again
    scratch = Path(tempfile.mkdtemp(prefix="liyuan-preview-"))
    src = Path(card_file)
    if not src.is_file():
        from ..core.cards import CardError

        raise CardError(f"找不到角色卡文件：{card_file}")
    copy = scratch / "card" / src.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(src, copy)
    card = load_card(copy)  # CardError before any window
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = make_loop(app)
    asyncio.set_event_loop(loop)
    chat = Chat.create(scratch / "chat", card, ReplayModel(actor=[]))
    chat.set_scripts_allowed(True, remember=False)  # the preview runs the card's scripts without storing a permission
    items = chat.transcript()
    view = ConversationView()
    view.resize(900, 1200)
    view.show()
    result: dict[str, Any] = {}

    async def go() -> None:
        end = loop.time() + timeout
        while not view.is_ready() and loop.time() < end:
            await asyncio.sleep(0.05)
        view.show_chat()
        view.set_frame_context(user=chat.persona, char=card.name)
        view.set_transcript([dict(it, text=chat.display_text(it, len(items) - 1 - i)) for i, it in enumerate(items)], False)
        await asyncio.sleep(2.5)  # frames load, run their scripts and report their heights
        box: list = []
        view.eval_js("JSON.stringify({names: window.liyuan.frameNames(), heights: window.liyuan.frameNames().map(n => window.liyuan.frameHeight(n)), logs: window.liyuan.frameLogs()})", box.append)
        while not box and loop.time() < end:
            await asyncio.sleep(0.05)
        data = json.loads(box[0]) if box else {"names": [], "heights": [], "logs": []}
        logs = data.get("logs") or []
        result.update({
            "frames": len(data.get("names") or []),
            "errors": [x["text"] for x in logs if x.get("level") in ("error", "uncaught")],
            "blocked": [x["text"] for x in logs if "Content Security Policy" in x.get("text", "") or x.get("level") == "blocked"],
            "height_px": [round(h) for h in data.get("heights") or []],
        })
        if screenshot:
            view.scroll_to_bottom()  # the bar sits under the opening
            await asyncio.sleep(0.4)
            view.grab().save(screenshot)

    try:
        with loop:
            loop.run_until_complete(go())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result
