"""``liyuan novel new TITLE [--author A] [--language zh|en] [--cast NAME]…``: a new novel without a character card
(issue 28) — its own small card in the library and one agent chat, the manuscript (core/chat/build.py
:func:`create_novel`). Prints the manuscript chat's folder on stdout (so a script can go on with ``liyuan chat`` or
``liyuan story … CHAT``) and what to do first on stderr. Errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Literal

from .common import language, out, say, text


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``novel`` (sub-command ``new``) on the top-level subparsers; returns the ``novel`` parser."""
    p: argparse.ArgumentParser = sub.add_parser("novel", help=text("cli.help.novel.0"))
    ns = p.add_subparsers(dest="novel_cmd")
    n = ns.add_parser("new", help=text("cli.help.novel.1"))
    n.add_argument("title", help=text("cli.help.novel.2"))
    n.add_argument("--author", default="", help=text("cli.help.novel.3"))
    n.add_argument("--language", choices=("zh", "en"), default=None, help=text("cli.help.novel.4"))
    n.add_argument("--cast", action="append", default=[],
                   help=text("cli.help.novel.5"))
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan novel new``; returns 0, or 2 with one ``liyuan: …`` line (a bad title, the disk refused)."""
    from pydantic import ValidationError

    from ..core.chat.build import NovelSpec, create_novel, novel_first_steps
    from ..core.llm.replay import ReplayModel
    from ..core.messages import message
    from ..core.settings import load_settings

    if getattr(args, "novel_cmd", None) != "new":
        print(text("cli.out.novel.usage"), file=sys.stderr)
        return 2
    try:
        lang: Literal["zh", "en"] = "en" if (args.language or language()) == "en" else "zh"
        spec = NovelSpec(title=args.title, author=args.author, language=lang, cast=args.cast)
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
