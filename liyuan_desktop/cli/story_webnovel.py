"""``liyuan story webnovel CHAT [--min N] [--max N] [--daily N] [--publish FILE]… [--unpublish FILE]… [--json]``
(issue 28, for web-novel authors): the book's chapter length norm, the daily target with its streak (日更), the
buffer of written-but-unpublished chapters (存稿) and the chapters outside the norm; the options change the settings
through ``Chat.set_webnovel`` (the window's 网文设置 does the same). Registered by ``cli/story.py``.
"""

from __future__ import annotations

import argparse

from .common import dumps, open_chat, out, say, text


def add_arguments(sp: argparse.ArgumentParser) -> None:
    """The options of ``story webnovel`` (``chat`` and ``--json`` are added by the caller); help in the CLI's
    language."""
    sp.add_argument("--min", dest="chapter_min", type=int, help=text("webnovel.opt.min"))
    sp.add_argument("--max", dest="chapter_max", type=int, help=text("webnovel.opt.max"))
    sp.add_argument("--daily", dest="daily_target", type=int, help=text("webnovel.opt.daily"))
    sp.add_argument("--publish", action="append", default=[], metavar="FILE", help=text("webnovel.opt.publish"))
    sp.add_argument("--unpublish", action="append", default=[], metavar="FILE", help=text("webnovel.opt.unpublish"))


def run(args: argparse.Namespace) -> int:
    """Print the web-novel status (after applying any option). Exit 0; ValueError/OSError reach ``cli/story.run``,
    which prints one ``liyuan: …`` line and exits 2."""
    from ..core.messages import message

    chat = open_chat(args.chat)
    try:
        if any(v is not None for v in (args.chapter_min, args.chapter_max, args.daily_target)) or args.publish \
                or args.unpublish:
            chat.set_webnovel(chapter_min=args.chapter_min, chapter_max=args.chapter_max,
                              daily_target=args.daily_target, publish=args.publish, unpublish=args.unpublish)
            if not args.json:
                out(say(message("webnovel.saved")))
        p = chat.writing_progress()
    finally:
        chat.close()
    w = p.webnovel
    if args.json:
        out(dumps({"webnovel": w.model_dump() if w else None,
                        "chapters": [{"file": c.file, "title": c.title, "words": c.words, "norm": c.norm,
                                      "published": c.published} for c in p.chapters if c.file]},
                       indent=1))
        return 0
    if w is None:
        return 0
    if w.chapter_min or w.chapter_max:
        out(say(message("webnovel.norm", min=w.chapter_min or 0, max=w.chapter_max or "∞")))
    else:
        out(say(message("webnovel.norm.none")))
    key = "webnovel.daily" if w.daily_target else "webnovel.daily.none"
    out(say(message(key, today=w.today, target=w.daily_target, streak=w.streak, best=w.best_streak)))
    out(say(message("webnovel.buffer", n=w.buffer_chapters, words=w.buffer_words, published=w.published)))
    if w.short:
        out(say(message("webnovel.short", titles=w.short)))
    if w.long:
        out(say(message("webnovel.long", titles=w.long)))
    return 0
