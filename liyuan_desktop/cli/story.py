"""``liyuan story checkpoints|restore|export CHAT …``: a long-form (agent) chat's checkpoints, restoring the chapter
folder (optionally the conversation too) and exporting the chapters as a book. Errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..core.chat.folder import export_story
from ..core.session.tree import SessionError
from .common import chat_folder, open_chat, out


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``story`` (with ``checkpoints``, ``restore``, ``export``) on the top-level subparsers; the chosen
    sub-command is ``args.story_cmd``. Returns the ``story`` parser."""
    st = sub.add_parser("story", help="写长篇（agent）模式：检查点、恢复、导出")
    ss = st.add_subparsers(dest="story_cmd")
    s1 = ss.add_parser("checkpoints", help="列出一个长篇对话的检查点")
    s1.add_argument("chat", help="对话文件夹，或 卡名/对话名")
    s1.add_argument("--json", action="store_true")
    s2 = ss.add_parser("restore", help="把正文恢复到某个检查点")
    s2.add_argument("chat")
    s2.add_argument("checkpoint", help="检查点 id（可只写开头几位）")
    s2.add_argument("--with-conversation", action="store_true", help="对话也回到那一轮之前（撤销本轮）")
    s3 = ss.add_parser("export", help="把正文导出成一本书")
    s3.add_argument("chat")
    s3.add_argument("--format", choices=("md", "epub", "docx"), default="md")
    s3.add_argument("-o", "--output", required=True)
    return st


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan story checkpoints|restore|export`` from parsed ``args``; returns the exit code (0 ok, 2 a bad
    chat, checkpoint or file with one ``liyuan: …`` line on stderr, or no sub-command: usage)."""
    from ..core.story.checkpoints import StoryHistory

    if not getattr(args, "story_cmd", None):
        print("liyuan: 用法：liyuan story checkpoints|restore|export CHAT …", file=sys.stderr)
        return 2
    try:
        d = chat_folder(args.chat)
        hist = StoryHistory(d / "正文", d / "历史")
        if args.story_cmd == "checkpoints":
            cps = hist.checkpoints()
            if args.json:
                out(json.dumps([c.model_dump(exclude_none=True) for c in cps], ensure_ascii=False, indent=1))
            else:
                for c in reversed(cps):
                    ch = c.changed
                    what = "，".join(x for x in (f"新增 {len(ch.added)}" if ch.added else "", f"修改 {len(ch.modified)}" if ch.modified else "",
                                                 f"改名 {len(ch.renamed)}" if ch.renamed else "", f"删除 {len(ch.removed)}" if ch.removed else "") if x)
                    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.ts / 1000))
                    out(f"{c.id}  {when}  {'你' if c.author == 'user' else 'agent'}  {what or '无变化'}  {c.message[:40]}")
            return 0
        if args.story_cmd == "restore":
            cps = [c for c in hist.checkpoints() if c.id.startswith(args.checkpoint)]
            if len(cps) != 1:
                raise ValueError(f"检查点「{args.checkpoint}」{'找不到' if not cps else '不唯一'}")
            target = cps[0]
            # one command for the window and the CLI (撤销本轮 with --with-conversation, seed 000)
            res = open_chat(args.chat).restore_checkpoint(target.id, with_conversation=args.with_conversation)
            if not args.with_conversation:
                out(f"已恢复到 {target.id}（新检查点 {res.checkpoint.id}；对话没动）")
            else:
                out(f"已撤销那一轮：正文回到 {res.files_to.id}（新检查点 {res.checkpoint.id}），对话也回到了那一轮之前")
            return 0
        if args.story_cmd == "export":
            export_story(d, args.format, Path(args.output))  # the same command as Chat.export, without a card
            out(args.output)
            return 0
    except (ValueError, KeyError, SessionError) as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    return 2  # argparse admits only the three sub-commands above
