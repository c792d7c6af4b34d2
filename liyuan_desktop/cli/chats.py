"""``liyuan import-chat FILE --card CARD [--chat NAME]`` / ``liyuan export-chat OUT --card CARD --chat NAME``:
SillyTavern .jsonl chats in (swipes become branches) and out. Errors: one ``liyuan: …`` line, exit 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.cards import CardError
from ..core.paths import chat_dir
from ..core.session.tree import SessionError
from .common import resolve_card


def add_parsers(sub: Any) -> None:
    """Register ``import-chat`` and ``export-chat`` on the top-level subparsers."""
    ic = sub.add_parser("import-chat", help="导入 SillyTavern 聊天记录（.jsonl），滑动备选变成分支")
    ic.add_argument("file")
    ic.add_argument("--card", required=True, help="角色卡文件或示例卡名")
    ic.add_argument("--chat", help="对话名（默认取文件名）")
    ec = sub.add_parser("export-chat", help="把一个对话导出成 SillyTavern 聊天记录（.jsonl）")
    ec.add_argument("out")
    ec.add_argument("--card", required=True)
    ec.add_argument("--chat", required=True)


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan import-chat`` / ``liyuan export-chat`` (``args.cmd``); returns the exit code (0 ok, 2 a bad card,
    chat file or path with one ``liyuan: …`` line on stderr). Prints the new chat folder or the written file."""
    from ..core.cards.st_chat import StChatError, default_chat_name
    from ..core.chat.folder import export_st_file

    try:
        card = resolve_card(args.card)
        if args.cmd == "import-chat":
            d = chat_dir(card.name, args.chat or default_chat_name(args.file))
            if (d / "session.jsonl").exists():
                raise ValueError(f"对话「{d.name}」已存在；用 --chat 换个名字")
            from ..core.cards.st_chat import StChatCancelled
            from ..core.chat.st_import import import_st_folder
            from .progress import Interrupt, StderrProgress

            bar = StderrProgress(f"导入 {Path(args.file).name}")
            try:
                with Interrupt() as stop:  # Ctrl-C cancels: nothing of the chat is left behind
                    warnings = import_st_folder(Path(args.file), card, d, progress=bar, cancelled=stop)
            except StChatCancelled:
                bar.done()
                print("liyuan: 已取消导入，没有留下任何文件", file=sys.stderr)
                return 130
            bar.done()
            for w in warnings:
                print(f"liyuan: 注意：{w}", file=sys.stderr)
            print(d)
        else:
            d = chat_dir(card.name, args.chat)
            export_st_file(d, Path(args.out))
            print(args.out)
    except (CardError, StChatError, SessionError, ValueError) as e:
        print(f"liyuan: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"liyuan: {e.strerror or e}：{getattr(e, 'filename', '') or ''}", file=sys.stderr)
        return 2
    return 0
