"""``liyuan group create|list|show|delete|import-st|export-st``: group chats' groups (issue 31; ``core/group``), and
what ``liyuan chat --group NAME`` needs to play one.

    liyuan group create NAME --member CARD [--member CARD …] [--strategy natural|list|pooled|manual]
                        [--mute CARD …] [--join swap|join|join_muted] [--allow-self] [--greeting members|first|group|none]
                        [--greeting-text TEXT]       a group of library cards
                        [--shared-variables]         one MVU variable tree for all members (default: one per card)
    liyuan group list [--json]                       the groups in the library
    liyuan group show NAME [--json]                  members (muted, talkativeness), strategy, join mode, chats
    liyuan group delete NAME --yes                   remove a group with its chats (asks for --yes)
    liyuan group import-st FILE                      a SillyTavern groups/*.json and the group chats it lists
                                                     (from ../group chats/), members matched by card file name
    liyuan group export-st NAME DIR                  the group and its chats as SillyTavern's groups/ and group chats/
    liyuan chat --group NAME --say … [--speaker CARD]   play the group (cli/chat.py; a new chat is 「群聊」 or --chat)

Errors print one ``liyuan: …`` line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.messages import message
from .common import dumps, file_error, out, say, text


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``group`` on the top-level subparsers; returns its parser."""
    p: argparse.ArgumentParser = sub.add_parser("group", help=text("cli.help.group.x0"))
    ps = p.add_subparsers(dest="group_cmd")
    c = ps.add_parser("create", help=text("cli.help.group.x1"))
    c.add_argument("name")
    c.add_argument("--member", action="append", required=True, help=text("cli.help.group.x2"))
    c.add_argument("--strategy", choices=["natural", "list", "pooled", "manual"], default="natural",
                   help=text("cli.help.group.x3"))
    c.add_argument("--mute", action="append", default=[], help=text("cli.help.group.x4"))
    c.add_argument("--join", choices=["swap", "join", "join_muted"], default="swap",
                   help=text("cli.help.group.x5"))
    c.add_argument("--allow-self", action="store_true", help=text("cli.help.group.x6"))
    c.add_argument("--greeting", choices=["members", "first", "group", "none"], default="members",
                   help=text("cli.help.group.x7"))
    c.add_argument("--greeting-text", default="")
    c.add_argument("--shared-variables", action="store_true", help=text("cli.help.group.shared_vars"))
    ls = ps.add_parser("list", help=text("cli.help.group.x8"))
    ls.add_argument("--json", action="store_true")
    sh = ps.add_parser("show", help=text("cli.help.group.x9"))
    sh.add_argument("name")
    sh.add_argument("--json", action="store_true")
    de = ps.add_parser("delete", help=text("cli.help.group.x10"))
    de.add_argument("name")
    de.add_argument("--yes", action="store_true", help=text("cli.help.group.x11"))
    im = ps.add_parser("import-st", help=text("cli.help.group.x12"))
    im.add_argument("file")
    ex = ps.add_parser("export-st", help=text("cli.help.group.x13"))
    ex.add_argument("name")
    ex.add_argument("dir")
    return p


def _fail(value: Any) -> int:
    print(f"liyuan: {say(value)}", file=sys.stderr)
    return 2


def _create(args: argparse.Namespace) -> int:
    from ..core.group import Group, save_group
    from ..core.group.model import member_card, new_group_name_error

    bad_name = new_group_name_error(args.name)
    if bad_name is not None:
        return _fail(bad_name)
    for m in [*args.member, *args.mute]:
        member_card(m)  # GroupError: not in the library
    unknown = [m for m in args.mute if m not in args.member]
    if unknown:
        return _fail(message("group.unknown_member", name=unknown[0], group=args.name))
    g = Group(name=args.name, members=list(dict.fromkeys(args.member)), muted=args.mute, strategy=args.strategy,
              join_cards=args.join, allow_self_responses=args.allow_self, greeting=args.greeting,
              greeting_text=args.greeting_text, shared_variables=args.shared_variables)
    save_group(g)
    out(say(message("group.cli.created", name=g.name, n=len(g.members))))
    return 0


def _show(args: argparse.Namespace) -> int:
    from ..core.group import load_group
    from ..core.group.model import group_chats, member_card, talkativeness

    g = load_group(args.name)
    rows = []
    for m in g.members:
        try:
            t: Any = talkativeness(member_card(m))
        except ValueError:
            t = None
        rows.append({"member": m, "muted": m in g.muted, "talkativeness": t})
    chats = [d.name for d in group_chats(g)]
    if args.json:
        out(dumps({"name": g.name, "strategy": g.strategy, "join_cards": g.join_cards,
                        "allow_self_responses": g.allow_self_responses, "greeting": g.greeting,
                        "shared_variables": g.shared_variables, "members": rows, "chats": chats},
                       indent=1))
        return 0
    out(say(message("group.cli.header", name=g.name, strategy=say(message(f"group.strategy.{g.strategy}")),
                    join=g.join_cards)))
    out(say(message("group.cli.vars.shared" if g.shared_variables else "group.cli.vars.per_card")))
    for r in rows:
        muted = say(message("group.cli.muted")) if r["muted"] else ""
        missing = say(message("group.cli.no_card")) if r["talkativeness"] is None else f"{r['talkativeness']:.2f}"
        out(f"  {r['member']}  {missing}{muted}")
    out(say(message("group.cli.chats", n=len(chats), names="、".join(chats) or "—")))
    return 0


def _list(args: argparse.Namespace) -> int:
    from ..core.group import list_groups

    groups = list_groups()
    if args.json:
        out(dumps([{"name": g.name, "members": g.members, "strategy": g.strategy} for g in groups],
                       indent=1))
        return 0
    if not groups:
        out(say(message("group.cli.none")))
    for g in groups:
        out(f"{g.name}  ({', '.join(g.members)})  {say(message(f'group.strategy.{g.strategy}'))}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from ..core.group import delete_group

    if not args.yes:
        return _fail(message("group.cli.need_yes", name=args.name))
    delete_group(args.name)
    out(say(message("group.cli.deleted", name=args.name)))
    return 0


def _import(args: argparse.Namespace) -> int:
    from ..core.cards.library import card_folder
    from ..core.group.st import import_st_group

    def member_of(avatar: str) -> Any:
        stem = Path(avatar).stem
        return stem if (card_folder(stem) / "card.json").is_file() else None

    g, notes = import_st_group(Path(args.file), member_of)
    for n in notes:
        print(f"liyuan: {say(n)}", file=sys.stderr)
    out(say(message("group.cli.created", name=g.name, n=len(g.members))))
    return 0


def _export(args: argparse.Namespace) -> int:
    from ..core.chat.group_play import member_cards
    from ..core.group import load_group
    from ..core.group.st import export_st_group

    g = load_group(args.name)
    for f in export_st_group(g, member_cards(g), Path(args.dir)):
        out(str(f))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan group …``; returns the exit code."""
    handlers = {"create": _create, "list": _list, "show": _show, "delete": _delete, "import-st": _import,
                "export-st": _export}
    h = handlers.get(args.group_cmd or "")
    if h is None:
        return _fail(message("group.cli.usage"))
    try:
        return h(args)
    except ValueError as e:
        return _fail(e)
    except OSError as e:
        return _fail(file_error(e))


def chat_target(name: str, chat_name: str) -> tuple[Any, Path, dict[str, Any]]:
    """For ``liyuan chat --group NAME``: (the card a new chat opens with, the chat folder
    ``<home>/groups/<group>/对话/<chat>``, the header fields of a new group chat). GroupError (a ValueError)."""
    from ..core.chat.group_play import member_cards, opening_card
    from ..core.group import load_group
    from ..core.group.model import group_dir
    from ..core.paths import chats_dir, safe_name

    g = load_group(name)
    cards = member_cards(g)
    if not cards:
        raise ValueError(message("group.no_cards", name=g.name))
    return opening_card(g, cards), chats_dir(group_dir(g.name)) / safe_name(chat_name), {"group": g.model_dump()}
