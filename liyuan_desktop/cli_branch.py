"""``liyuan branches | inspect | memory``: a chat's branch tree, the prompt inspector and memory_search in the
terminal (issue 7). They read the session tree and write at most a leaf line (``branches --select`` / ``--undo``).

- ``liyuan branches CHAT [--select ID | --undo | --swipe ID ±1] [--json]``: the navigator (one line per user
  message: beat, first words → first words of the reply, alternatives; ``*`` marks the shown branch).
- ``liyuan inspect CHAT [ITEM] [--json]``: every model call of a beat exactly as sent (ITEM: a transcript item id
  or its prefix; default the newest reply).
- ``liyuan memory CHAT QUERY [--limit N] [--json]``: what ``memory_search`` would return on the shown branch.

CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .core.cards import CardError


def add_parsers(sub: Any) -> None:
    """Register the three commands on the top-level subparsers."""
    b = sub.add_parser("branches", help="对话的分支树：每句用户的话一行；可切换、撤销本轮、左右滑")
    b.add_argument("chat", help="对话文件夹，或 卡名/对话名")
    g = b.add_mutually_exclusive_group()
    g.add_argument("--select", metavar="ID", help="切到这条分支（用户消息 id 或其开头几位）")
    g.add_argument("--undo", action="store_true", help="撤销本轮：显示的分支退回到最后一句用户的话之前")
    g.add_argument("--swipe", nargs=2, metavar=("ID", "STEP"), help="换到一条消息的上(-1)/下(+1)个备选")
    b.add_argument("--json", action="store_true")
    i = sub.add_parser("inspect", help="提示词检查器：某一拍的每次模型调用，原样")
    i.add_argument("chat")
    i.add_argument("item", nargs="?", help="对话条目 id（或开头几位）；默认最新的回复")
    i.add_argument("--json", action="store_true")
    m = sub.add_parser("memory", help="在当前分支的往事里查细节（memory_search）")
    m.add_argument("chat")
    m.add_argument("query")
    m.add_argument("--limit", type=int, default=5)
    m.add_argument("--json", action="store_true")


def _open(spec: str) -> Any:
    from .cli import _chat_folder, _resolve_card
    from .core.chat.facade import Chat
    from .core.llm.replay import ReplayModel
    from .core.session.tree import SessionTree

    d = _chat_folder(spec)
    header = SessionTree.open(d / "session.jsonl").header
    card = None
    for cand in (header.card, header.card_name):
        if not cand:
            continue
        try:
            card = _resolve_card(cand)
            break
        except (CardError, OSError, ValueError):
            continue
    if card is None:
        raise ValueError(f"找不到这个对话的角色卡：{header.card or header.card_name}")
    return Chat.open(d, card, ReplayModel(actor=[], scribe=[], label="只读"))


def _find(chat: Any, prefix: str) -> str:
    if not prefix.strip():
        raise ValueError("条目 id 是空的")
    hits = [i for i in chat.tree.entries if i.startswith(prefix) and chat.tree.entries[i].type != "leaf"]
    if len(hits) != 1:
        raise ValueError(f"条目「{prefix}」{'找不到' if not hits else '不唯一'}")
    return hits[0]


def run(args: argparse.Namespace) -> int:
    """Run ``branches``/``inspect``/``memory``; returns the exit status."""
    from .core.session.tree import SessionError

    try:
        chat = _open(args.chat)
        if args.cmd == "branches":
            if args.select is not None:
                chat.select(_find(chat, args.select))
            elif args.undo:
                chat.undo()
            elif args.swipe:
                step = {"-1": -1, "1": 1, "+1": 1}.get(args.swipe[1].strip())
                if step is None:
                    raise ValueError(f"--swipe 的第二个参数要是 -1 或 1（收到「{args.swipe[1]}」）")
                target = _find(chat, args.swipe[0])
                k, n = chat.swipe_info(target)
                if n < 2:
                    raise ValueError(f"条目 {target} 没有别的版本可换（重来或编辑过的消息才有）")
                chat.swipe(target, step)
                print(f"已换到第 {((k - 1 + step) % n) + 1}/{n} 个版本", file=sys.stderr)
            nodes = chat.branch_tree()
            if args.json:
                print(json.dumps(nodes, ensure_ascii=False, indent=1))
            else:
                for n in nodes:
                    mark = "*" if n["active"] else " "
                    alt = ""
                    if n["siblings"] > 1:
                        k = chat.swipe_info(n["id"])[0]
                        alt = f"  [说法 {k}/{n['siblings']}]" if n["active"] else f"  [{n['siblings']} 个说法]"
                    rep = ""
                    if n["replies"] > 1 and n.get("reply_id"):
                        k = chat.swipe_info(n["reply_id"])[0]
                        rep = f"  [回复 {k}/{n['replies']}]" if n["active"] else f"  [{n['replies']} 个回复]"
                    reply = f"{n['reply']}（{n['reply_id'][:8]}）" if n.get("reply_id") else "（没有回复）"
                    print(f"{mark} {n['id']}  第 {n['beat']:>3} 拍  {n['text']} → {reply}{alt}{rep}")
                print("* = 正在显示的分支；--select ID 切换，--swipe ID ±1 换一条消息或回复的版本")
            return 0
        if args.cmd == "inspect":
            item = _find(chat, args.item) if args.item else next(
                (i["id"] for i in reversed(chat.transcript()) if i["role"] in ("assistant", "draft")), None)
            if item is None:
                raise ValueError("这个对话还没有模型调用")
            calls = chat.inspect_beat(item)
            if args.json:
                print(json.dumps(calls, ensure_ascii=False, indent=1))
                return 0
            for c in calls:
                u = c.get("usage") or {}
                print(f"══ 第 {c['round']} 次调用 · {'场记' if c['purpose'] == 'scribe' else '演员'} · {c.get('model', '')}"
                      f"{' · 输入 %s token' % u['prompt_tokens'] if u.get('prompt_tokens') else ''}")
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
        hits = chat.memory_search(args.query, args.limit)
        if args.json:
            print(json.dumps(hits, ensure_ascii=False, indent=1))
        elif not hits:
            print("没有查到。")
        else:
            for h in hits:
                print(f"第 {h['beat']} 拍 · {h['kind']} · {h['score']}\n  {h['snippet']}")
        return 0
    except (SessionError, ValueError, KeyError, RuntimeError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"liyuan: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (| head): nothing to say
        return 0
    except OSError as e:
        print(f"liyuan: 会话文件写不进去：{e}", file=sys.stderr)
        return 2
