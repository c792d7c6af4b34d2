"""``liyuan qr import|list|show|delete``: the quick-reply library (``<home>/快速回复/``, issue 26 §4;
``core/cards/quick_replies.py``).

    liyuan qr import FILE… [--name NAME] [--replace] [--json]
                                   copy SillyTavern Quick Reply sets into the library; says per reply what was
                                   repaired and which replies hold STscript (kept as text, never run)
    liyuan qr list [--json]        the sets in the library (the globally active ones marked ★)
    liyuan qr show NAME [--json]   one set's replies in order: id, label, send/insert, hidden, STscript
    liyuan qr delete NAME          remove a set from the library (and from every active list)

Errors print one ``liyuan: …`` line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.messages import message
from .common import dumps, say, text


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``qr`` on the top-level subparsers; returns its parser."""
    p: argparse.ArgumentParser = sub.add_parser("qr", help=text("cli.help.quick_replies.0"))
    ps = p.add_subparsers(dest="qr_cmd")
    imp = ps.add_parser("import", help=text("cli.help.quick_replies.1"))
    imp.add_argument("files", nargs="+")
    imp.add_argument("--name", help=text("cli.help.quick_replies.2"))
    imp.add_argument("--replace", action="store_true", help=text("cli.help.quick_replies.3"))
    imp.add_argument("--json", action="store_true")
    ls = ps.add_parser("list", help=text("cli.help.quick_replies.4"))
    ls.add_argument("--json", action="store_true")
    sh = ps.add_parser("show", help=text("cli.help.quick_replies.5"))
    sh.add_argument("name")
    sh.add_argument("--json", action="store_true")
    de = ps.add_parser("delete", help=text("cli.help.quick_replies.6"))
    de.add_argument("name")
    return p


def _fail(msg: str) -> int:
    print(f"liyuan: {msg}", file=sys.stderr)
    return 2


def _import(args: argparse.Namespace) -> int:
    from ..core.cards.quick_replies import import_set

    if args.name and len(args.files) > 1:
        return _fail(text("cli.out.qr.name_one"))
    results = []
    for f in args.files:
        r = import_set(f, name=args.name, replace=args.replace)
        results.append(r)
        if not args.json:
            print(say(message("qr.cli.imported", name=r.set.name, n=len(r.set.qrList))))
            for line in r.lines():
                print(f"  · {say(line)}")
    if args.json:
        print(dumps([{"name": r.set.name, "notes": [say(n) for n in r.notes],
                           "entries": [{**e.model_dump(), "notes": [say(n) for n in e.notes]} for e in r.entries]}
                          for r in results], indent=1))
    return 0


def _show(args: argparse.Namespace) -> int:
    from ..core.cards.quick_replies import load_set

    qrs = load_set(args.name)
    if args.json:
        print(dumps(qrs.to_json(), indent=1))
        return 0
    mode = message("qr.cli.mode_insert" if qrs.disableSend else "qr.cli.mode_send")
    print(say(message("qr.cli.set_line", name=qrs.name, n=len(qrs.qrList), mode=mode)))
    for q in qrs.qrList:
        flags = (say(message("qr.cli.hidden")) if q.isHidden else "") + (say(message("qr.cli.script")) if q.script else "")
        first = q.message.splitlines()[0] if q.message else ""
        print(f"{q.id:>5}  {qrs.mode_of(q):<6}  {q.label}{flags}  → {first[:60]}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan qr …``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    from ..core.cards.quick_replies import QuickReplyError, delete_set, list_sets, load_choices

    cmd = getattr(args, "qr_cmd", None)
    try:
        if cmd == "import":
            return _import(args)
        if cmd == "list":
            names, active = list_sets(), load_choices().global_sets
            if args.json:
                print(dumps({"sets": names, "global_active": active}))
            elif not names:
                print(say(message("qr.cli.empty")))
            else:
                for n in names:
                    print(("★ " if n in active else "  ") + n)
            return 0
        if cmd == "show":
            return _show(args)
        if cmd == "delete":
            if not delete_set(args.name):
                return _fail(say(message("qr.missing", name=args.name)))
            print(say(message("qr.cli.deleted", name=args.name)))
            return 0
    except QuickReplyError as e:
        return _fail(say(e))
    except OSError as e:
        return _fail(text("cli.out.write_failed", error=str(e)))
    print(text("cli.out.qr.usage"), file=sys.stderr)
    return 2
