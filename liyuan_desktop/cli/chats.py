"""``liyuan import-chat FILE --card CARD [--chat NAME]`` / ``liyuan export-chat OUT --card CARD --chat NAME
[--format jsonl|md|html] [--status-bars omit|text] [--raw] [--title T]``: SillyTavern .jsonl chats in (swipes become
branches) and out, or out as a readable transcript of the shown branch (issue 28; core/chat/transcript_export.py). ``liyuan chats list|rename|duplicate|delete|delete-card|
trash|restore|empty-trash``: managing chats and cards (core/chat/manage.py; deleting moves to the in-app 回收站).
Errors: one ``liyuan: …`` line, exit 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.messages import message
from .common import card_home_name, language, msg, resolve_card, say, text


def add_parsers(sub: Any) -> None:
    """Register ``import-chat`` and ``export-chat`` on the top-level subparsers."""
    ic = sub.add_parser("import-chat", help=text("cli.help.chats.0"))
    ic.add_argument("file")
    ic.add_argument("--card", required=True, help=text("cli.help.chats.1"))
    ic.add_argument("--chat", help=text("cli.help.chats.2"))
    ec = sub.add_parser("export-chat", help=text("cli.help.chats.3"))
    ec.add_argument("out")
    ec.add_argument("--card", required=True)
    ec.add_argument("--chat", required=True)
    ec.add_argument("--format", choices=("jsonl", "md", "html"), default="jsonl",
                    help=text("cli.help.chats.4"))
    ec.add_argument("--status-bars", choices=("omit", "text"), default="omit", help=text("cli.help.chats.5"))
    ec.add_argument("--raw", action="store_true", help=text("cli.help.chats.6"))
    ec.add_argument("--title", default="", help=text("cli.help.chats.7"))
    ch = sub.add_parser("chats", help=text("cli.help.chats.8"))
    csub = ch.add_subparsers(dest="chats_cmd", required=True)
    csub.add_parser("list", help=text("cli.help.chats.9"))
    r = csub.add_parser("rename", help=text("cli.help.chats.10"))
    r.add_argument("chat", help=text("cli.help.chats.11"))
    r.add_argument("name")
    d = csub.add_parser("duplicate", help=text("cli.help.chats.12"))
    d.add_argument("chat")
    d.add_argument("--from", dest="upto", help=text("cli.help.chats.13"))
    d.add_argument("--name")
    x = csub.add_parser("delete", help=text("cli.help.chats.14"))
    x.add_argument("chat")
    xc = csub.add_parser("delete-card", help=text("cli.help.chats.15"))
    xc.add_argument("card", help=text("cli.help.chats.16"))
    csub.add_parser("trash", help=text("cli.help.chats.17"))
    rs = csub.add_parser("restore", help=text("cli.help.chats.18"))
    rs.add_argument("item", help=text("cli.help.chats.19"))
    et = csub.add_parser("empty-trash", help=text("cli.help.chats.20"))
    et.add_argument("--yes", action="store_true", required=True, help=text("cli.help.chats.21"))


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan import-chat`` / ``liyuan export-chat`` (``args.cmd``); returns the exit code (0 ok, 2 a bad card,
    chat file or path with one ``liyuan: …`` line on stderr). Prints the new chat folder or the written file."""
    from ..core.cards import CardError
    from ..core.cards.st_chat import StChatError, default_chat_name
    from ..core.chat.folder import export_st_file
    from ..core.paths import chat_dir
    from ..core.session.tree import SessionError

    if args.cmd == "chats":
        return _manage(args)
    try:
        card = resolve_card(args.card)
        folder = card_home_name(args.card, card)  # a renamed card's folder, or NAME-2
        if args.cmd == "import-chat":
            d = chat_dir(folder, args.chat or default_chat_name(args.file))
            if (d / "session.jsonl").exists():
                raise ValueError(msg("cli.out.chats.exists", name=d.name))
            from ..core.cards.st_chat import StChatCancelled
            from ..core.chat.st_import import import_st_folder
            from .progress import Interrupt, StderrProgress

            bar = StderrProgress(text("cli.out.chats.importing", name=Path(args.file).name))
            try:
                with Interrupt() as stop:  # Ctrl-C cancels: nothing of the chat is left behind
                    warnings = import_st_folder(Path(args.file), card, d, progress=bar, cancelled=stop)
            except StChatCancelled:
                bar.done()
                print(text("cli.out.chats.import_cancelled"), file=sys.stderr)
                return 130
            bar.done()
            for w in warnings:
                print(f"liyuan: {say(message('cli.note', w=w))}", file=sys.stderr)
            print(d)
        else:
            d = chat_dir(folder, args.chat)
            if args.format == "jsonl":
                export_st_file(d, Path(args.out))
            else:
                _transcript(d, args)
            print(args.out)
    except (CardError, StChatError, SessionError, ValueError) as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(text("cli.out.os_error", error=e.strerror or str(e), file=getattr(e, 'filename', '') or ''), file=sys.stderr)
        return 2
    return 0


def _transcript(d: Path, args: argparse.Namespace) -> None:
    """``export-chat --format md|html``: the chat in ``d`` opened as the terminal commands open it (its card, the
    app's settings) and written as a readable transcript (core/chat/transcript_export.py), in the ``--lang``
    language. Raises ValueError (no such chat, card not found), SessionError, OSError."""
    from ..core.chat.transcript_export import TranscriptOptions, export_transcript
    from .common import language, open_chat

    if not (d / "session.jsonl").exists():
        raise ValueError(message("export.no_chat", chat=args.chat))
    chat = open_chat(str(d))
    try:
        opts = TranscriptOptions(status_bars=args.status_bars, display=not args.raw, title=args.title,
                                 language="en" if language() == "en" else "zh")
        export_transcript(chat, args.format, Path(args.out), opts)
    finally:
        chat.close()


def _manage(args: argparse.Namespace) -> int:
    """``liyuan chats …`` (module doc); prints the folder made / moved, or the listing."""
    import time

    from ..core.cards import library
    from ..core.chat import manage
    from ..core.session.tree import SessionError
    from .common import chat_folder

    c = args.chats_cmd
    try:
        if c == "list":
            for card in library.list_cards():
                print(card.name)
                for chat in library.list_chats(card):
                    print(f"  {chat.name}\t{chat.mode}")
        elif c == "rename":
            print(manage.rename_chat(chat_folder(args.chat), args.name))
        elif c == "duplicate":
            d = chat_folder(args.chat)
            upto = None
            if args.upto:
                from ..core.session.tree import SessionTree

                tree = SessionTree.open(d / "session.jsonl")
                hits = [i for i in tree.entries if i.startswith(args.upto) and tree.entries[i].type != "leaf"]
                if len(hits) != 1:
                    raise ValueError(msg("cli.out.chats.no_entry" if not hits else "cli.out.chats.entry_ambiguous",
                                         id=args.upto))
                upto = hits[0]
            print(manage.duplicate_chat(d, upto, args.name, language()))
        elif c == "delete":
            it = manage.delete_chat(chat_folder(args.chat))
            print(text("cli.out.chats.trashed", id=it.id))
        elif c == "delete-card":
            cards = [x for x in library.list_cards() if x.name == args.card]
            if not cards:
                raise ValueError(msg("cli.out.chats.no_card", name=args.card))
            it = manage.delete_card(cards[0])
            print(text("cli.out.chats.trashed", id=it.id))
        elif c == "trash":
            for it in manage.list_trash():
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(it.deleted / 1000))
                kind = text("cli.out.chats.kind_card" if it.kind == "card" else "cli.out.chats.kind_chat")
                print(f"{it.id}\t{kind}\t{it.origin}\t{when}")
        elif c == "restore":
            print(manage.restore(args.item))
        elif c == "empty-trash":
            print(text("cli.out.chats.emptied", n=manage.empty_trash()))
    except (ValueError, SessionError) as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    except OSError as e:
        print(text("cli.out.os_error", error=e.strerror or str(e), file=getattr(e, 'filename', '') or ''),
              file=sys.stderr)
        return 2
    return 0
