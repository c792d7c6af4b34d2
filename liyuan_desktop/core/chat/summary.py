"""One line about a chat for a chat list (issue 26 §3): how many messages its shown branch holds, its last message
(a short preview) and when it last changed — SillyTavern's character chat list shows the same three (last message,
date, number of messages).

Read from the chat's ``session.jsonl`` (the source of truth; ``meta.json`` is only a cache and holds no text), so
it costs a read of the whole file: callers on a UI thread run it on a worker (the window: ui/window/card_list.py).
Answers are remembered per file (its size and modification time), so listing a card's 200 chats again after one
of them changed reads only that one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Optional

from pydantic import BaseModel

from ..session.transcript import hidden_turn
from ..session.tree import SessionError, SessionTree

__all__ = ["ChatSummary", "PREVIEW_CHARS", "chat_summary"]

PREVIEW_CHARS = 80
"""The preview keeps this many characters (code points) of the last message, whitespace folded to single spaces."""
_MESSAGE_TYPES = ("opening", "user", "assistant")
_CACHE_MAX = 4000
_cache: dict[str, tuple[tuple[int, int], "ChatSummary"]] = {}
_lock = threading.Lock()


class ChatSummary(BaseModel):
    """A chat as a chat list shows it. ``messages``: openings, user messages and replies on the shown branch (a
    swipe's other versions and a group chat's hidden turns not counted); ``last_role``: opening | user | assistant ("" for an empty chat);
    ``last_text``: the last one's text (its newest revision), folded to one line and cut to :data:`PREVIEW_CHARS`
    with "…"; ``updated``: the session file's modification time in ms since the epoch."""

    dir: str
    messages: int = 0
    last_role: str = ""
    last_text: str = ""
    updated: int = 0


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS - 1] + "…"


def chat_summary(chat_dir: str | Path) -> Optional[ChatSummary]:
    """The :class:`ChatSummary` of the chat folder ``chat_dir``, or None when it holds no readable session (no
    ``session.jsonl``, no usable header). Never raises for a damaged file (damaged lines are skipped as
    :meth:`SessionTree.open` does). Safe to call from worker threads."""
    path = Path(chat_dir) / "session.jsonl"
    try:
        st = path.stat()
    except OSError:
        return None
    key, stamp = str(path), (st.st_size, st.st_mtime_ns)
    with _lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        tree = SessionTree.open(path)
    except (SessionError, OSError):
        return None
    path_entries = tree.path_to()
    revised: dict[str, str] = {}
    count, last = 0, None
    for e in path_entries:
        if e.type == "revision":
            revised[e.target] = e.text
        elif e.type in _MESSAGE_TYPES and not hidden_turn(e):  # a group chat's hidden turn is no message
            count += 1
            last = e
    out = ChatSummary(dir=str(Path(chat_dir)), messages=count, updated=st.st_mtime_ns // 1_000_000,
                      last_role=last.type if last is not None else "",
                      last_text=_preview(revised.get(last.id, last.text)) if last is not None else "")
    with _lock:
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = (stamp, out)
    return out
