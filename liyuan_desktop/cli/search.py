"""``liyuan search QUERY [--card C] [--regex] [--limit N] [--json]``: find words in every chat of every card (or one
card's chats), read from the session files (core/chat/search.py). One line per hit: card / chat, the entry id, the
date and a snippet with the match in 【】; ``--json`` prints a list of hits instead. Exit 0 (also with no hits: the
count is printed on stderr), 2 for an empty query, a bad pattern or an unknown card."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any


def add_parser(sub: Any) -> None:
    """Register ``search`` on the top-level subparsers."""
    p = sub.add_parser("search", help="在所有对话里搜索（不分大小写；--regex 用正则）")
    p.add_argument("query")
    p.add_argument("--card", help="只搜这张角色卡的对话（卡的文件夹名）")
    p.add_argument("--regex", action="store_true", help="把 QUERY 当作正则（Python 写法，线性时间执行）")
    p.add_argument("--limit", type=int, default=200, help="最多列出几条（默认 200）")
    p.add_argument("--json", action="store_true", help="输出 JSON")


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000)) if ms else "-"


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan search``; returns the exit code (module doc)."""
    from ..core.linear_regex import LinearRegexRefused

    from ..core.chat.search import search_library

    try:
        hits = list(search_library(args.query, regex=args.regex, card=args.card, limit=max(1, args.limit)))
    except (ValueError, re.error, LinearRegexRefused) as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([h.model_dump() for h in hits], ensure_ascii=False, indent=1))
    else:
        for h in hits:
            s = h.snippet
            marked = s[:h.start] + "【" + s[h.start:h.start + h.length] + "】" + s[h.start + h.length:]
            print(f"{h.card} / {h.chat}  {h.entry_id}  {_date(h.ts)}  {marked}")
    print(f"liyuan: 找到 {len(hits)} 条", file=sys.stderr)
    return 0
