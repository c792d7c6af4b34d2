"""``liyuan inspect CHAT [ITEM] [--json]``: the prompt inspector in the terminal (issue 7) — every model call of a
beat exactly as sent (ITEM: a transcript item id or its prefix; default the newest reply). Read-only.

CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .common import find_entry, run_on_chat, text

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
        raise ValueError("这个对话还没有模型调用")
    calls = chat.inspect_beat(item)
    if args.json:
        print(json.dumps(calls, ensure_ascii=False, indent=1))
        return 0
    for c in calls:
        u = c.get("usage") or {}
        mode = " · 纯文字演出（无工具）" if c.get("play_mode") == "prose" and c.get("purpose") != "scribe" else ""
        cut = {"length": " · 被输出上限截断", "repetition": " · 重复，提前停下",
               "echo": " · 照抄已有内容，未收笔"}.get(c.get("cut") or "", "")
        print(f"══ 第 {c['round']} 次调用 · {'场记' if c['purpose'] == 'scribe' else '演员'} · {c.get('model', '')}"
              f"{' · 输入 %s token' % u['prompt_tokens'] if u.get('prompt_tokens') else ''}{mode}{cut}")
        req = c.get("request")
        if req is None:
            print("（这一拍早于检查器记录，发送内容无法还原）")
        else:
            for m in req["messages"]:
                print(f"── {m['role']}" + (f" (tool_call_id {m['tool_call_id']})" if m.get("tool_call_id") else ""))
                print(m.get("content") or "")
                for t in m.get("tool_calls") or []:
                    print(f"   → {t['function']['name']}({t['function']['arguments']})")
            if req.get("tools"):
                print(f"── 工具：{'、'.join(t['function']['name'] for t in req['tools'])}")
        r = c["reply"]
        print("── 回复" + (f"（思考 {len(r['reasoning'])} 字）" if r.get("reasoning") else ""))
        if r.get("content"):
            print(r["content"])
        for t in r.get("tool_calls") or []:
            print(f"   → {t['name']}({t['arguments']}) = {json.dumps(t['result'], ensure_ascii=False)[:200]}")
    return 0
