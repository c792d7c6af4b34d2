"""``liyuan memory CHAT QUERY [--limit N] [--json]``: what ``memory_search`` would return on the shown branch
(issue 7). Read-only.

CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import dumps, run_on_chat, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.chat.facade import Chat


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``memory`` on the top-level subparsers; returns its parser."""
    m = sub.add_parser("memory", help=text("cli.help.memory.0"))
    m.add_argument("chat")
    m.add_argument("query")
    m.add_argument("--limit", type=int, default=5)
    m.add_argument("--json", action="store_true")
    return m


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan memory``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    return run_on_chat(args.chat, lambda chat: _memory(chat, args))


def _memory(chat: Chat, args: argparse.Namespace) -> int:
    hits = chat.memory_search(args.query, args.limit)
    if args.json:
        print(dumps(hits, indent=1))
    elif not hits:
        print(text("cli.memory.none"))
    else:
        for h in hits:
            print(text("cli.memory.hit", beat=h["beat"], kind=h["kind"], score=h["score"]) + f"\n  {h['snippet']}")
    return 0
