"""``liyuan inspect CHAT [ITEM] [--json]``: the prompt inspector in the terminal (issue 7) — every model call of a
beat exactly as sent (ITEM: a transcript item id or its prefix; default the newest reply). Read-only.

CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .common import dumps, find_entry, msg, run_on_chat, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.chat.facade import Chat


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``inspect`` on the top-level subparsers; returns its parser."""
    i = sub.add_parser("inspect", help=text("cli.help.inspect.0"))
    i.add_argument("chat")
    i.add_argument("item", nargs="?", help=text("cli.help.inspect.1"))
    i.add_argument("--json", action="store_true")
    return i


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan inspect``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    return run_on_chat(args.chat, lambda chat: _inspect(chat, args))


def _inspect(chat: Chat, args: argparse.Namespace) -> int:
    item = find_entry(chat, args.item) if args.item else next(
        (i["id"] for i in reversed(chat.transcript()) if i["role"] in ("assistant", "draft")), None)
    if item is None:
        raise ValueError(msg("cli.out.inspect.no_calls"))
    calls = chat.inspect_beat(item)
    if args.json:
        print(dumps(calls, indent=1))
        return 0
    for c in calls:
        u = c.get("usage") or {}
        mode = text("cli.out.inspect.prose") if c.get("play_mode") == "prose" and c.get("purpose") != "scribe" else ""
        cut = text("cli.out.inspect.cut." + c["cut"]) if c.get("cut") in ("length", "repetition", "echo") else ""
        print(text("cli.out.inspect.call", n=c["round"], model=say(c.get("model", "")), mode=mode, cut=cut,
                   who=text("cli.out.inspect.scribe" if c["purpose"] == "scribe" else "cli.out.inspect.actor"),
                   tokens=text("cli.out.inspect.tokens", n=u["prompt_tokens"]) if u.get("prompt_tokens") else ""))
        req = c.get("request")
        if req is None:
            print(text("cli.out.inspect.too_old"))
        else:
            for m in req["messages"]:
                print(f"── {m['role']}" + (f" (tool_call_id {m['tool_call_id']})" if m.get("tool_call_id") else ""))
                print(m.get("content") or "")
                for t in m.get("tool_calls") or []:
                    print(f"   → {t['function']['name']}({t['function']['arguments']})")
            if req.get("tools"):
                print(text("cli.out.inspect.tools", names=[t["function"]["name"] for t in req["tools"]]))
        r = c["reply"]
        print(text("cli.out.inspect.reply_thinking", n=len(r["reasoning"])) if r.get("reasoning")
              else text("cli.out.inspect.reply"))
        if r.get("content"):
            print(r["content"])
        for t in r.get("tool_calls") or []:
            print(f"   → {t['name']}({t['arguments']}) = {json.dumps(t['result'], ensure_ascii=False)[:200]}")
    return 0
