"""``liyuan preset import|list|show|delete|default|prompts|export``: the preset library (``<home>/预设/``, issue 14
§3) and a preset's prompt manager (issue 26 §2, ``core/prompt/presets/manager.py``).

    liyuan preset import FILE…            copy SillyTavern chat-completion presets into the library
    liyuan preset list [--json]           the installed presets (the default for new chats marked ★)
    liyuan preset show NAME [--provider KIND] [--json]
                                          what the preset does here: where each prompt goes, what is dropped and
                                          why, the sampling sent (and what the provider KIND does not take)
    liyuan preset delete NAME             remove it from the library
    liyuan preset default [NAME | --none] show or set the preset new chats get (saved in settings.json)
    liyuan preset prompts NAME [--json] [--chat CHAT]
                                          the prompt list as SillyTavern's Prompt Manager shows it: row, on/off,
                                          role, position, tokens (markers counted for CHAT's card when given)
        [--enable ID] [--disable ID] [--move ID POS] [--delete ID]
        [--edit ID (--text-file F | --role R | --rename TEXT | --position P | --depth N | --order N)…]
        [--add TITLE [--text-file F] [--role R] [--position P] [--depth N] [--order N]]
        [--save-as NEW]                   change it (POS counts rows from 1) and save it back into the library
                                          (or as NEW); the list is printed afterwards
    liyuan preset export NAME -o FILE     the preset as SillyTavern JSON

Errors print one ``liyuan: …`` line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.messages import message
from .common import dumps, language, run_on_chat, say, text

KINDS = ("openai", "deepseek", "openrouter", "ollama", "llamacpp", "lmstudio", "other")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``preset`` on the top-level subparsers; returns its parser."""
    p = sub.add_parser("preset", help=text("cli.help.preset.0"))
    ps = p.add_subparsers(dest="preset_cmd")
    imp = ps.add_parser("import", help=text("cli.help.preset.1"))
    imp.add_argument("files", nargs="+")
    ls = ps.add_parser("list", help=text("cli.help.preset.2"))
    ls.add_argument("--json", action="store_true")
    sh = ps.add_parser("show", help=text("cli.help.preset.3"))
    sh.add_argument("name")
    sh.add_argument("--provider", choices=KINDS, default="other", help=text("cli.help.preset.4"))
    sh.add_argument("--json", action="store_true")
    de = ps.add_parser("delete", help=text("cli.help.preset.5"))
    de.add_argument("name")
    df = ps.add_parser("default", help=text("cli.help.preset.6"))
    df.add_argument("name", nargs="?")
    df.add_argument("--none", action="store_true", help=text("cli.help.preset.7"))
    _add_prompts_parser(ps)
    ex = ps.add_parser("export", help=text("cli.help.preset.8"))
    ex.add_argument("name")
    ex.add_argument("-o", "--output", required=True, metavar="FILE")
    return p


def _add_prompts_parser(ps: Any) -> None:
    pr = ps.add_parser("prompts", help=text("cli.help.preset.9"))
    pr.add_argument("name")
    pr.add_argument("--json", action="store_true")
    pr.add_argument("--chat", metavar="CHAT", help=text("cli.help.preset.10"))
    pr.add_argument("--enable", metavar="ID", action="append", default=[])
    pr.add_argument("--disable", metavar="ID", action="append", default=[])
    pr.add_argument("--move", nargs=2, metavar=("ID", "POS"), help=text("cli.help.preset.11"))
    pr.add_argument("--edit", metavar="ID")
    pr.add_argument("--add", metavar="TITLE", help=text("cli.help.preset.12"))
    pr.add_argument("--delete", metavar="ID")
    pr.add_argument("--text-file", metavar="F", help=text("cli.help.preset.13"))
    pr.add_argument("--role", choices=("system", "user", "assistant"))
    pr.add_argument("--rename", metavar="TEXT", help=text("cli.help.preset.14"))
    pr.add_argument("--position", choices=("relative", "in-chat"))
    pr.add_argument("--depth", type=int)
    pr.add_argument("--order", type=int)
    pr.add_argument("--save-as", metavar="NEW", help=text("cli.help.preset.15"))


def _fail(msg: str) -> int:
    print(f"liyuan: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan preset …``; returns the exit status (0 ok, 2 with one ``liyuan: …`` line)."""
    from ..core.prompt.presets.model import PresetError
    from ..core.prompt.presets.store import (
        delete_preset,
        describe_preset,
        install_preset,
        list_presets,
        load_installed_preset,
    )
    from ..core.settings import load_settings, save_settings

    cmd = getattr(args, "preset_cmd", None)
    try:
        if cmd == "import":
            for f in args.files:
                p = install_preset(f)
                print(text("cli.out.preset.imported", name=p.name))
                for w in p.warnings:
                    print(f"  · {say(w)}")  # what the reader repaired, in the --lang language
            return 0
        if cmd == "list":
            default = load_settings().default_preset
            names = list_presets()
            if args.json:
                print(dumps({"presets": names, "default": default}))
            elif not names:
                print(text("cli.out.preset.empty"))
            else:
                for n in names:
                    print(("★ " if n == default else "  ") + n)
            return 0
        if cmd == "show":
            report = describe_preset(load_installed_preset(args.name), args.provider)
            if args.json:
                print(dumps(report.model_dump(), indent=1))
            else:
                print(report.text(language()))
            return 0
        if cmd == "delete":
            if not delete_preset(args.name):
                return _fail(text("cli.out.preset.missing", name=args.name))
            s = load_settings()
            if s.default_preset == args.name:
                s.default_preset = None
                save_settings(s)
            print(text("cli.out.preset.deleted", name=args.name))
            return 0
        if cmd == "prompts":
            return _prompts(args)
        if cmd == "export":
            from ..core.prompt.presets.manager import PromptManager

            m = PromptManager.load(args.name)
            path = m.export(args.output)
            print(say(message("prompts.cli.exported", name=m.name, path=path)))
            return 0
        if cmd == "default":
            s = load_settings()
            if args.none or args.name:
                if args.name:
                    load_installed_preset(args.name)  # must exist
                s.default_preset = None if args.none else args.name
                save_settings(s)
            print(text("cli.out.preset.default", name=s.default_preset or text("cli.out.preset.none")))
            return 0
    except PresetError as e:
        return _fail(say(e))  # the engine's message in the --lang language
    except OSError as e:
        return _fail(text("cli.out.write_failed", error=str(e)))
    print(text("cli.out.preset.usage"), file=sys.stderr)
    return 2


def _read_text(path: str) -> str:
    """The text of ``--text-file`` (``-`` = stdin); ValueError with a catalog message when it cannot be read."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(message("prompts.cli.bad_file", path=path, error=getattr(e, "strerror", None) or e)) from None


def _apply_edits(m: Any, args: argparse.Namespace) -> None:
    """The edits asked for, in a fixed order: enable, disable, move, edit, add, delete."""
    for ident in args.enable:
        m.enable(ident)
    for ident in args.disable:
        m.disable(ident)
    if args.move:
        try:
            pos = int(args.move[1])
        except ValueError:
            raise ValueError(message("prompts.bad_number", key="POS", value=repr(args.move[1]), min=1,
                                     max=len(m.rows()))) from None
        m.move(args.move[0], pos - 1)
    text = _read_text(args.text_file) if args.text_file else None
    position = args.position.replace("-", "_") if args.position else None
    if args.edit:
        fields = (text, args.role, args.rename, position, args.depth, args.order)
        if all(v is None for v in fields):
            raise ValueError(message("prompts.cli.need_text"))
        m.edit(args.edit, text=text, role=args.role, name=args.rename, position=position, depth=args.depth,
               order=args.order)
    if args.add:
        ident = m.add(args.add, text or "", role=args.role or "system", position=position or "relative",
                      depth=4 if args.depth is None else args.depth, order=100 if args.order is None else args.order)
        print(say(message("prompts.cli.added", name=args.add, ident=ident)))
    if args.delete:
        m.delete(args.delete)


def _print_rows(m: Any, rows: list[Any], as_json: bool) -> None:
    if as_json:
        print(dumps({"preset": m.name, "order_source": m.order_source,
                          "prompts": [r.model_dump() for r in rows],
                          "unlisted": [r.model_dump() for r in m.unlisted()]}, indent=1))
        return
    if m.order_source == "default":
        print(say(message("prompts.cli.default_order")))
    print(say(message("prompts.cli.header")))
    for r in rows:
        flag = "on " if r.enabled else "off"
        kind = "◆" if r.marker else ("?" if r.missing else " ")
        print(f"{r.index + 1:>4}  {flag}  {r.role:<9}  {r.where:<14} {r.tokens:>6}  {kind}"
              + text("cli.out.prompt_row", label=r.label, ident=r.identifier))
    extra = m.unlisted()
    if extra:
        print(say(message("prompts.cli.unlisted")))
        for r in extra:
            print(f"         {r.role:<9}  {r.where:<14} {r.tokens:>6}   "
                  + text("cli.out.prompt_row", label=r.label, ident=r.identifier))


def _prompts(args: argparse.Namespace) -> int:
    """``liyuan preset prompts NAME …``: apply the edits asked for, save when something changed, print the list."""
    from ..core.prompt.presets.manager import PromptManager

    m = PromptManager.load(args.name)
    try:
        _apply_edits(m, args)
    except ValueError as e:
        return _fail(say(e))
    if m.changed or args.save_as:
        m.save_as(args.save_as, overwrite=True) if args.save_as else m.save()
        print(say(message("prompts.cli.saved", name=m.name)))
    if not args.chat:
        _print_rows(m, m.rows(), args.json)
        return 0

    def body(chat: Any) -> int:
        _print_rows(m, chat.preset_prompt_rows(m), args.json)
        return 0

    return run_on_chat(args.chat, body)
