"""``liyuan novel new TITLE [--author A] [--language zh|en] [--cast NAME]…``: a new novel without a character card
(issue 28) — its own small card in the library and one agent chat, the manuscript (core/chat/build.py
:func:`create_novel`). Prints the manuscript chat's folder on stdout (so a script can go on with ``liyuan chat`` or
``liyuan story … CHAT``) and what to do first on stderr. Errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import out, say


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``novel`` (sub-command ``new``) on the top-level subparsers; returns the ``novel`` parser."""
    p: argparse.ArgumentParser = sub.add_parser("novel", help="长篇小说：不用角色卡，新建一本书（书名、作者、语言、人物）")
    ns = p.add_subparsers(dest="novel_cmd")
    n = ns.add_parser("new", help="新建一本书，打印书稿对话的文件夹")
    n.add_argument("title", help="书名")
    n.add_argument("--author", default="", help="作者")
    n.add_argument("--language", choices=("zh", "en"), default="zh", help="正文语言（默认 zh）")
    n.add_argument("--cast", action="append", default=[],
                   help="登场人物：资料库里的角色卡名（用卡的描述）或一个人名；可多次")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan novel new``; returns 0, or 2 with one ``liyuan: …`` line (a bad title, the disk refused)."""
    from pydantic import ValidationError

    from ..core.chat.build import NovelSpec, create_novel, novel_first_steps
    from ..core.llm.replay import ReplayModel
    from ..core.messages import message
    from ..core.settings import load_settings

    if getattr(args, "novel_cmd", None) != "new":
        print("liyuan: 用法：liyuan novel new TITLE [--author A] [--language zh|en] [--cast NAME]…", file=sys.stderr)
        return 2
    try:
        spec = NovelSpec(title=args.title, author=args.author, language=args.language, cast=args.cast)
    except ValidationError:
        print(f"liyuan: {say(message('novel.bad_title'))}", file=sys.stderr)
        return 2
    try:
        chat = create_novel(spec, load_settings(), ReplayModel(actor=[], scribe=[], label="只读"))
    except (OSError, ValueError) as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    out(str(chat.dir))
    print(say(novel_first_steps()), file=sys.stderr)
    chat.close()
    return 0
