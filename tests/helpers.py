"""Shared test constants and helpers (imported as ``helpers``; a module named conftest would clash with
tests/ui/conftest.py depending on collection order)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The design folder beside the checkout (``../shared``: seeds, golden runs, fixtures). CI has it; a clone with
#: nothing beside it does not, and every test that reads it skips (``LIYUAN_SHARED`` points elsewhere, e.g. to a
#: missing folder to check exactly that).
SHARED = Path(os.environ.get("LIYUAN_SHARED", ROOT.parent / "shared"))
GOLDEN = Path(os.environ.get("LIYUAN_GOLDEN", SHARED / "golden"))
FIXTURES = Path(os.environ.get("LIYUAN_FIXTURES", SHARED / "fixtures"))
DEMO_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


def shared_path(*parts: str) -> Path:
    """``../shared/<parts…>`` without checking it exists (for ``skipif`` marks and parametrisation)."""
    if parts and parts[0] == "golden":
        return GOLDEN.joinpath(*parts[1:])
    if parts and parts[0] == "fixtures":
        return FIXTURES.joinpath(*parts[1:])
    return SHARED.joinpath(*parts)


def need_shared(*parts: str) -> Path:
    """``../shared/<parts…>``, or skip the calling test with a one-line reason when it is absent (a clone with
    nothing beside it)."""
    p = shared_path(*parts)
    if not p.exists():
        pytest.skip(f"{'/'.join(parts)} not found: the shared/ folder is not beside this checkout")
    return p


def load_golden(name: str) -> dict:
    """A golden run as JSON, or skip the test when ../shared/golden is not there."""
    return json.loads(need_shared("golden", name).read_text("utf-8"))


async def play_scripted(tmp_path, server, *replies, says, model: str, local: bool = True, prose: bool = True,
                        card=None):
    """Play ``says`` (the user's words, one beat each) on a fresh chat of ``card`` (default the demo card) against
    ``server`` (``sse_server.ScriptedServer``) scripted with ``replies``, through a real ``OpenAIChatModel`` named
    ``model`` (``local``: its ``is_local``); prose-only play unless ``prose`` is False. Returns (the last beat's
    result, the activity lines' texts, the chat)."""
    from liyuan_desktop.core.beat.events import Activity
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm import OpenAIChatModel
    server.script(*replies)
    client = OpenAIChatModel(server.base_url, model, None, retry_base_wait=0.0, read_timeout=5.0, local=local)
    chat = Chat.create(tmp_path / "c", card if card is not None else load_card(DEMO_CARD), client)
    if prose:
        chat.set_prose_only(True)
    events: list = []
    try:
        results = [await chat.send(s, on_event=events.append) for s in says]
    finally:
        await client.aclose()
    return results[-1], [e.text for e in events if isinstance(e, Activity)], chat
