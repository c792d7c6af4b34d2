"""``liyuan book updates|update …``: library world books replaced while chats use them (issue 33 §4).

    liyuan book updates CHAT [--json]                      what changed in each book the chat reads beside its
                                                            card's own (a library book by its name, one attached
                                                            to the chat as ``chat/NAME``)
    liyuan book updates CHAT --use-new NAME                 the new version from the next beat (the old one is the
                                                            checkpoint ``--undo`` returns to)
    liyuan book updates CHAT --keep-old NAME                this chat keeps the version it plays
    liyuan book updates CHAT --pick NAME --entries K[,K…]   take only these entries (``settings`` for the settings)
    liyuan book updates CHAT --undo NAME                    back to the version played before
    liyuan book update NAME FILE [--yes]                    replace the library book NAME by FILE

The engine is ``core/chat/book_update.py`` (``Chat.book_updates`` / ``Chat.answer_book_update``); the window shows
the same in its card-update bar. ``book update`` without ``--yes`` only says what it would replace (nothing
written: the default is No). CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import dumps, file_error, run_on_chat, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.chat.facade import Chat


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``book`` (``updates`` and ``update``) on the top-level subparsers; returns its parser."""
    p: argparse.ArgumentParser = sub.add_parser("book", help=text("cli.help.book.0"))
    s = p.add_subparsers(dest="book_cmd", required=True)
    u = s.add_parser("updates", help=text("cli.help.book.1"))
    u.add_argument("chat", help=text("cli.help.book.2"))
    u.add_argument("--json", action="store_true", help=text("cli.help.book.3"))
    how = u.add_mutually_exclusive_group()
    how.add_argument("--use-new", metavar="NAME", help=text("cli.help.book.4"))
    how.add_argument("--keep-old", metavar="NAME", help=text("cli.help.book.5"))
    how.add_argument("--pick", metavar="NAME", help=text("cli.help.book.6"))
    how.add_argument("--undo", metavar="NAME", help=text("cli.help.book.7"))
    u.add_argument("--entries", default="", help=text("cli.help.book.8"))
    r = s.add_parser("update", help=text("cli.help.book.9"))
    r.add_argument("name", help=text("cli.help.book.10"))
    r.add_argument("file", help=text("cli.help.book.11"))
    r.add_argument("--yes", action="store_true", help=text("cli.help.book.12"))
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan book``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    if args.book_cmd == "update":
        return _update(args)
    return run_on_chat(args.chat, lambda chat: _updates(chat, args))


def _picks(args: argparse.Namespace) -> list[str]:
    keys = [k.strip() for k in args.entries.split(",") if k.strip()]
    return [k if k == "settings" else f"entries:{k}" for k in keys]


def _updates(chat: Chat, args: argparse.Namespace) -> int:
    from ..core.chat.book_update import key_name
    from ..core.messages import message

    acts = (("new", args.use_new), ("old", args.keep_old), ("pick", args.pick), ("undo", args.undo))
    how, name = next(((h, n) for h, n in acts if n), ("", ""))
    if how:
        if how == "pick" and not _picks(args):
            raise ValueError(message("book_update.no_picks"))
        try:
            chat.answer_book_update(name, how, _picks(args) if how == "pick" else None)
        except KeyError:
            raise ValueError(message("book_update.no_such", name=name)) from None
        said = {"new": "book_update.used", "old": "book_update.kept", "undo": "book_update.undone"}
        shown = key_name(name)
        print(say(message(said[how], name=shown) if how in said else
                  message("book_update.picked", name=shown, n=len(_picks(args)))))
        return 0
    ups = chat.book_updates()
    if args.json:
        print(dumps([u.model_dump(mode="json") for u in ups], indent=1))
        return 0
    if not ups:
        print(say(message("book_update.none")))
    for u in ups:
        n = u.diff.counts()
        what = say(message("book_update.counts", entries=n.get("entries", 0), settings=n.get("settings", 0)))
        prefix = say(message("book_update.prefix")) if u.in_prefix else ""
        print(say(message("book_update.line", name=u.key, what=what, prefix=prefix)))
        for c in u.diff.entries:
            label = f" ({c.label})" if c.label and c.label != c.key else ""
            parts = f" [{', '.join(c.parts)}]" if c.parts else ""
            print(f"  {c.key}{label}: {c.kind}{parts}")
        for c in u.diff.settings:
            print(f"  settings.{c.key}: {json.dumps(c.old, ensure_ascii=False)} → {json.dumps(c.new, ensure_ascii=False)}")
    return 0


def _update(args: argparse.Namespace) -> int:
    from ..core.cards.book_links import find_library_book
    from ..core.chat.book_update import update_library_book
    from ..core.messages import message

    if find_library_book(args.name) is None:
        print(f"liyuan: {say(message('book_update.no_book', name=args.name))}", file=sys.stderr)
        return 2
    if not args.yes:
        print(say(message("book_update.would_replace", name=args.name, file=Path(args.file).name)))
        return 0
    try:
        dest = update_library_book(args.name, Path(args.file))
    except (OSError, ValueError) as e:  # BookFileError is a ValueError carrying a catalog message
        shown = file_error(e) if isinstance(e, OSError) else e.args[0] if e.args else e
        print(f"liyuan: {say(shown)}", file=sys.stderr)
        return 2
    print(say(message("book_update.replaced", name=args.name, path=str(dest))))
    return 0


__all__ = ["add_parser", "run"]
