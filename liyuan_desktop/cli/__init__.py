"""The ``liyuan`` command: the desktop window, or one of the terminal subcommands on the same engine.

    liyuan                                   the desktop window (see app.py); --self-test plays the demo through it
    liyuan chat …                            play beats headless (chat.py; --demo, --demo-agent)
    liyuan card inspect|import|export|preview …   character cards (card.py)
    liyuan story checkpoints|restore|export …     a long-form chat's chapters (story.py)
    liyuan novel new TITLE …                 a new novel without a character card (novel.py)
    liyuan import-chat|export-chat …         SillyTavern chat files (chats.py)
    liyuan chats list|rename|duplicate|delete|trash|restore …   manage chats and cards, the 回收站 (chats.py)
    liyuan branches|inspect|memory CHAT …    a chat's branch tree, the prompt inspector, memory_search
                                             (branch.py, inspect.py, memory.py)
    liyuan ledger history|revert CHAT …      the ledger timeline per beat; revert one change (ledger.py)
    liyuan book updates CHAT | update NAME FILE   library world-book updates in a chat (book.py)
    liyuan preset import|list|show|delete|default|prompts|export …   the preset library 预设/ (preset.py)
    liyuan qr import|list|show|delete …      quick-reply sets 快速回复/ (quick_replies.py)
    liyuan search QUERY [--card C] [--json]   words in every chat (search.py)
    liyuan settings show|import-st …         the app's world-info settings; take them over from SillyTavern
                                             (settings_cli.py)
    liyuan import-sillytavern PATH [--json] [--dry-run]   a whole SillyTavern data folder in one step (migrate.py)
    liyuan models probe|local|list …         what a provider can do, local model servers (models.py)
    liyuan group create|list|show|delete …   groups of cards for group chats; chat --group NAME (group.py)

Each subcommand module has ``add_parser(sub)`` (``add_parsers`` where it registers two) and ``run(args) -> int``;
what they share lives in ``common.py``. Exit codes: 0 ok; 1 a beat failed (model/network error); 2 bad input;
130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Optional

from .. import __version__
from .common import PipeSafeStdout, lang_flag, take_lang, text


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered (in the order ``liyuan --help`` lists them). The
    subcommand modules are imported here, not with the package: the window (``liyuan`` alone) needs none of them."""
    from . import branch, card, chat, chats, inspect, memory, migrate, models, preset, search, settings_cli, story
    from . import quick_replies as qr_cli
    from .book import add_parser as book_parser
    from .group import add_parser as group_parser
    from .ledger import add_parser as ledger_parser
    from .novel import add_parser as novel_parser

    p = argparse.ArgumentParser(prog="liyuan", description=text("cli.help.liyuan"), epilog=text("cli.help.liyuan_env"))
    p.add_argument("--version", action="version", version=f"liyuan {__version__}")
    p.add_argument("--lang", choices=("zh", "en"), help=text("cli.help.lang"))  # taken out by take_lang; listed here
    sub = p.add_subparsers(dest="cmd")
    chat.add_parser(sub)
    card.add_parser(sub)
    story.add_parser(sub)
    chats.add_parsers(sub)
    branch.add_parser(sub)
    ledger_parser(sub)
    book_parser(sub)
    inspect.add_parser(sub)
    memory.add_parser(sub)
    preset.add_parser(sub)
    qr_cli.add_parser(sub)
    settings_cli.add_parser(sub)
    migrate.add_parser(sub)
    search.add_parser(sub)
    models.add_parser(sub)
    novel_parser(sub)
    group_parser(sub)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    """Console entry point ``liyuan`` (``argv`` defaults to ``sys.argv[1:]``); returns the exit code. Without a
    command, with ``app`` or with a window flag (``--self-test``, ``--offscreen``…) it opens the window (app.py), or
    plays the demo in the terminal where there is no display."""
    # pydantic looks for plugins in every installed package's entry points when the first model is built (~30 ms
    # of the window's start, issue 15); this app has none. A user's own setting (even empty) is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    argv = take_lang(list(sys.argv[1:] if argv is None else argv))  # --lang en: engine messages in English
    if not argv or argv[0] == "app" or (argv[0].startswith("--") and argv[0] not in ("--version", "--help")):
        from ..app import main as app_main

        if lang_flag():  # `liyuan --lang en`: the window too, this run only
            os.environ["LIYUAN_LANG"] = lang_flag() or ""

        return app_main([a for a in argv if a != "app"], terminal_demo=lambda: main(["chat", "--demo"]))
    args = build_parser().parse_args(argv)
    from . import branch, card, chat, chats, inspect, memory, migrate, models, preset, search, settings_cli, story
    from . import quick_replies as qr_cli
    from .book import run as book_run
    from .card_scripts import run as card_scripts_run
    from .group import run as group_run
    from .ledger import run as ledger_run
    from .novel import run as novel_run

    if not isinstance(sys.stdout, PipeSafeStdout):
        sys.stdout = PipeSafeStdout(sys.stdout)
    runs = {"card": card.run, "import-chat": chats.run, "export-chat": chats.run, "chats": chats.run, "story": story.run,
            "branches": branch.run, "inspect": inspect.run, "memory": memory.run, "preset": preset.run,
            "settings": settings_cli.run, "import-sillytavern": migrate.run, "search": search.run, "models": models.run,
            "qr": qr_cli.run, "novel": novel_run, "group": group_run, "ledger": ledger_run,
            "card-scripts": card_scripts_run}  # `card scripts` (cli/card_scripts.py sets this cmd)
    runs["book"] = book_run  # library world-book updates (cli/book.py)
    if args.cmd in runs:
        return runs[args.cmd](args)
    if args.cmd != "chat":
        build_parser().print_help()
        return 2
    try:
        return asyncio.run(chat.run(args))
    except KeyboardInterrupt:
        print("\n" + text("cli.out.interrupted"), file=sys.stderr)
        return 130
