"""``liyuan ledger history|revert CHAT …``: the ledger timeline in the terminal (issue 33).

    liyuan ledger history CHAT [--path P] [--json]        per beat on the shown branch: path, old → new, who, reason
    liyuan ledger revert CHAT BEAT [--path P] [--yes]     set beat BEAT's change to P (or all its changes) back
    liyuan ledger set CHAT PATH VALUE                     set one field or variable by hand (a user snapshot)

``revert`` without ``--yes`` only shows what it would set back and the later beats' changes it would overwrite
(nothing written: the default is No); with ``--yes`` it appends a user snapshot on the shown branch
(``Chat.revert_ledger_change``), which ``liyuan branches CHAT --undo`` steps back over. Texts follow ``--lang``.
CHAT is a chat folder or ``card name/chat name``. Errors print one line and exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import dumps, run_on_chat, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.chat.facade import Chat
    from ..core.ledger.history import LedgerChange


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ledger`` (``history`` and ``revert``) on the top-level subparsers; returns its parser."""
    p: argparse.ArgumentParser = sub.add_parser("ledger", help=text("cli.help.ledger.x0"))
    s = p.add_subparsers(dest="ledger_cmd", required=True)
    h = s.add_parser("history", help=text("cli.help.ledger.x1"))
    h.add_argument("chat", help=text("cli.help.ledger.x2"))
    h.add_argument("--path", help=text("cli.help.ledger.x3"))
    h.add_argument("--json", action="store_true")
    r = s.add_parser("revert", help=text("cli.help.ledger.x4"))
    r.add_argument("chat", help=text("cli.help.ledger.x5"))
    r.add_argument("beat", help=text("cli.help.ledger.x6"))
    r.add_argument("--path", help=text("cli.help.ledger.x7"))
    r.add_argument("--yes", action="store_true", help=text("cli.help.ledger.x8"))
    st = s.add_parser("set", help=text("cli.help.ledger.x9"))
    st.add_argument("chat", help=text("cli.help.ledger.x10"))
    st.add_argument("path", help=text("cli.help.ledger.x11"))
    st.add_argument("value", help=text("cli.help.ledger.x12"))
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan ledger``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    if args.ledger_cmd == "history":
        return run_on_chat(args.chat, lambda chat: _history(chat, args))
    if args.ledger_cmd == "set":
        return run_on_chat(args.chat, lambda chat: _set(chat, args))
    return run_on_chat(args.chat, lambda chat: _revert(chat, args))


def change_line(c: LedgerChange, with_who: bool = True) -> str:
    """``path：old → new  （who：reason）`` in the chosen language."""
    from ..core.ledger.history import describe_value, who_message

    who = say(who_message(c.who)) + (f": {c.reason}" if c.reason else "") if with_who else ""
    return f"  {c.path}: {describe_value(c.old)} → {describe_value(c.new)}" + (f"  ({who})" if who else "")


def _history(chat: Chat, args: argparse.Namespace) -> int:
    from ..core.ledger.history import beat_message
    from ..core.messages import message

    h = chat.ledger_history(args.path)
    if args.json:
        print(dumps(h.model_dump(mode="json"), indent=1))
        return 0
    if not h.beats:
        print(say(message("ledger.history.empty")))
    for b in h.beats:
        print(say(beat_message(b)))
        for c in b.changes:
            print(change_line(c))
    return 0


def _revert(chat: Chat, args: argparse.Namespace) -> int:
    from ..core.messages import message

    try:
        beat = int(str(args.beat).strip())
    except ValueError:
        raise ValueError(message("cli.ledger.bad_beat", beat=args.beat)) from None
    plan = chat.ledger_revert_plan(beat, args.path)
    print(say(message("cli.ledger.plan", beat=beat, n=len(plan.targets))))
    for t in plan.targets:
        print(change_line(t.model_copy(update={"old": t.new, "new": t.old}), with_who=False))
    if plan.conflicts:
        print(say(message("cli.ledger.conflicts")))
        for c in plan.conflicts:
            print(f"  [{beat_no(c)}]" + change_line(c)[1:])
    if not args.yes:
        print(say(message("cli.ledger.ask_yes")))
        return 0
    chat.revert_ledger_change(beat, args.path)
    print(say(message("cli.ledger.done")))
    return 0


def _set(chat: Chat, args: argparse.Namespace) -> int:
    from ..core.ledger.history import describe_value, value_from_text, value_now

    old = value_now(chat.ledger_history(), args.path)
    chat.set_ledger_value(args.path, value_from_text(args.value, old))
    print(text("cli.out.ledger.set", path=args.path, old=describe_value(old),
               new=describe_value(value_now(chat.ledger_history(), args.path))))
    return 0


def beat_no(c: LedgerChange) -> str:
    """The beat a conflict belongs to, as ``#n``."""
    return f"#{c.beat}"
