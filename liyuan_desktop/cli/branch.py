"""``liyuan branches CHAT [--select ID | --undo | --swipe ID ±1] [--json]``: a chat's branch tree in the terminal
(issue 7) — one line per user message: beat, first words → first words of the reply, alternatives; ``*`` marks the
shown branch. It reads the session tree and writes at most a leaf line (``--select`` / ``--undo`` / ``--swipe``).

CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import dumps, find_entry, run_on_chat, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.chat.facade import Chat


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``branches`` on the top-level subparsers; returns its parser."""
    b = sub.add_parser("branches", help=text("cli.help.branch.0"))
    b.add_argument("chat", help=text("cli.help.branch.1"))
    g = b.add_mutually_exclusive_group()
    g.add_argument("--select", metavar="ID", help=text("cli.help.branch.2"))
    g.add_argument("--undo", action="store_true", help=text("cli.help.branch.3"))
    g.add_argument("--swipe", nargs=2, metavar=("ID", "STEP"), help=text("cli.help.branch.4"))
    b.add_argument("--json", action="store_true")
    return b


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan branches``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    return run_on_chat(args.chat, lambda chat: _branches(chat, args))


def _branches(chat: Chat, args: argparse.Namespace) -> int:
    if args.select is not None:
        chat.select(find_entry(chat, args.select))
    elif args.undo:
        chat.undo()
    elif args.swipe:
        step = {"-1": -1, "1": 1, "+1": 1}.get(args.swipe[1].strip())
        if step is None:
            raise ValueError(text("cli.branch.bad_step", got=args.swipe[1]))
        target = find_entry(chat, args.swipe[0])
        k, n = chat.swipe_info(target)
        if n < 2:
            raise ValueError(text("cli.branch.no_versions", id=target))
        chat.swipe(target, step)
        print(text("cli.branch.swiped", k=((k - 1 + step) % n) + 1, n=n), file=sys.stderr)
    nodes = chat.branch_tree()
    if args.json:
        print(dumps(nodes, indent=1))
    else:
        for node in nodes:
            mark = "*" if node["active"] else " "
            alt = ""
            if node["siblings"] > 1:
                k = chat.swipe_info(node["id"])[0]
                alt = text("cli.branch.alt_active", k=k, n=node["siblings"]) if node["active"] else \
                    text("cli.branch.alt", n=node["siblings"])
            rep = ""
            if node["replies"] > 1 and node.get("reply_id"):
                k = chat.swipe_info(node["reply_id"])[0]
                rep = text("cli.branch.rep_active", k=k, n=node["replies"]) if node["active"] else \
                    text("cli.branch.rep", n=node["replies"])
            reply = text("cli.branch.reply", reply=node["reply"], id=node["reply_id"][:8]) if node.get("reply_id") else \
                text("cli.branch.no_reply")
            print(text("cli.branch.line", mark=mark, id=node["id"], beat=f"{node['beat']:>3}", text=node["text"], reply=reply,
                       alt=alt, rep=rep))
        print(text("cli.branch.legend"))
    return 0
