"""``liyuan search QUERY [--card C] [--regex] [--limit N] [--json]``: find words in every chat of every card (or one
card's chats), read from the session files (core/chat/search.py). One line per message found (the versions of one
message — swipes, edits, revised texts — are one message, as in the window's 搜索所有对话): card / chat, the entry
id, the date and a snippet with the match in 【】, then ``[N versions: version 1, version 2 …]`` when more than one
version matched; ``--json`` prints a list of messages instead (the shown version's fields and ``versions``, every
matching version). Exit 0 (also with no hits: the count is printed on stderr), 2 for an empty query, a bad pattern
or an unknown card."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from .common import dumps, text


def add_parser(sub: Any) -> None:
    """Register ``search`` on the top-level subparsers."""
    p = sub.add_parser("search", help=text("cli.help.search.0"))
    p.add_argument("query")
    p.add_argument("--card", help=text("cli.help.search.1"))
    p.add_argument("--regex", action="store_true", help=text("cli.help.search.2"))
    p.add_argument("--limit", type=int, default=200, help=text("cli.help.search.3"))
    p.add_argument("--json", action="store_true", help=text("cli.help.search.4"))


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms else "-"


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan search``; returns the exit code (module doc)."""
    from ..core.chat.search import found_label, group_hits, messages_json, search_library, version_label
    from ..core.linear_regex import LinearRegexRefused
    from ..core.messages import message
    from .common import say

    try:
        hits = list(search_library(args.query, regex=args.regex, card=args.card, limit=max(1, args.limit)))
    except (ValueError, re.error, LinearRegexRefused) as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    groups = group_hits(hits)
    if args.json:
        print(dumps(messages_json(groups), indent=1))
    else:
        for g in groups:
            h = g.first
            s = h.snippet
            marked = s[:h.start] + text("cli.out.search.mark", text=s[h.start:h.start + h.length]) + s[h.start + h.length:]
            more = ""
            if len(g.versions) > 1:
                more = f"  [{say(message('search.versions', n=len(g.versions)))}: " \
                       f"{', '.join(say(version_label(v)) for v in g.versions)}]"
            print(f"{h.card} / {h.chat}  {h.entry_id}  {_date(h.ts)}  {marked}{more}")
    print(f"liyuan: {say(found_label(groups))}", file=sys.stderr)
    return 0
