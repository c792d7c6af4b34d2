"""``liyuan story summaries CHAT [--make [--chapter FILE]…] [--set FILE --text TEXT] [--json]`` (issue 28): each
chapter's summary and whether it is stale; ``--make`` has the model summarise the stale ones (or the chapters
named; ``--provider``/``--model``/``--base-url`` as ``story review``), ``--set`` stores the author's own. Through
``Chat.chapter_summaries`` / ``summarize_chapters`` / ``set_chapter_summary``. Registered by ``cli/story.py``.
"""

from __future__ import annotations

import argparse
import asyncio

from .common import dumps, open_chat, out, say, text


def add_arguments(sp: argparse.ArgumentParser) -> None:
    """The options of ``story summaries`` (``chat`` and ``--json`` are added by the caller)."""
    sp.add_argument("--make", action="store_true", help=text("chsum.opt.make"))
    sp.add_argument("--chapter", action="append", default=[], metavar="FILE", help=text("chsum.opt.chapter"))
    sp.add_argument("--set", dest="set_file", metavar="FILE", help=text("chsum.opt.set"))
    sp.add_argument("--text", default=None, help=text("chsum.opt.text"))
    sp.add_argument("--provider", help=text("chsum.opt.provider"))
    sp.add_argument("--model", help=text("chsum.opt.model"))
    sp.add_argument("--base-url", dest="base_url", help=text("chsum.opt.base_url"))


def run(args: argparse.Namespace) -> int:
    """Print the summaries (after ``--set`` / ``--make``). Exit 0, or 1 when ``--make`` had problems (each printed);
    ValueError/OSError reach ``cli/story.run`` (one ``liyuan: …`` line, exit 2)."""
    from ..core.messages import message
    from .story_review import review_model

    chat = open_chat(args.chat)
    rc = 0
    try:
        if args.set_file:
            chat.set_chapter_summary(args.set_file, args.text or "")
        if args.make:
            args.local = False
            done, problems = asyncio.run(chat.summarize_chapters(args.chapter or None, review_model(args)))
            if not args.json:
                if done:
                    out(say(message("chsum.made", n=len(done), files=done)))
                for p in problems:
                    out(p)
            rc = 1 if problems else 0
        rows = chat.chapter_summaries()
    finally:
        chat.close()
    if args.json:
        out(dumps([r.model_dump() for r in rows], indent=1))
        return rc
    for r in rows:
        mark = say(message("chsum.stale")) if r.stale and r.text else ""
        out(f"{r.file}{mark}: {r.text or say(message('chsum.none'))}")
    return rc
