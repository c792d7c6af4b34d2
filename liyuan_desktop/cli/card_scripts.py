"""``liyuan card scripts``: a card's (or a preset's) TavernHelper script library, and the user's permission.

    liyuan card scripts CARD [--json]              list the scripts: name, on/off, folder, buttons, imports, kind,
                                                   whether the card's scripts are allowed and which would run
    liyuan card scripts CARD --allow | --deny      record the answer to 「运行这张卡的酒馆助手脚本？」
    liyuan card scripts CARD --enable ID | --disable ID | --reset ID
                                                   the user's own switch for one script (the card file is untouched)
    liyuan card scripts NAME --preset ...          the same for an installed preset (NAME = its library name)

CARD is what ``liyuan chat`` takes (a card file, a library card's name or folder). Exit codes: 0 ok; 2 a bad card,
preset or script id — one ``liyuan: …`` line on stderr. Wiring: ``add_parser(cs)`` on ``card``'s subparsers
(cli/card.py), which sets ``args.cmd = "card-scripts"``; cli/__init__.py's table runs :func:`run` for it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Optional

from .common import dumps, resolve_card, say, text


def add_parser(card_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``scripts`` to the ``card`` command's subparsers; returns its parser."""
    p = card_subparsers.add_parser("scripts", help=text("cli.help.card_scripts.0"))
    p.add_argument("card", help=text("cli.help.card_scripts.1"))
    p.add_argument("--preset", action="store_true", help=text("cli.help.card_scripts.2"))
    p.add_argument("--json", action="store_true", help=text("cli.help.card_scripts.3"))
    which = p.add_mutually_exclusive_group()
    which.add_argument("--allow", action="store_true", help=text("cli.help.card_scripts.4"))
    which.add_argument("--deny", action="store_true", help=text("cli.help.card_scripts.5"))
    which.add_argument("--enable", metavar="ID", help=text("cli.help.card_scripts.6"))
    which.add_argument("--disable", metavar="ID", help=text("cli.help.card_scripts.7"))
    which.add_argument("--reset", metavar="ID", help=text("cli.help.card_scripts.8"))
    p.set_defaults(cmd="card-scripts")  # cli/__init__.py runs `run` for it (card.run stays as it is)
    return p  # type: ignore[no-any-return]


def _err(msg: Any) -> int:
    print(f"liyuan: {' '.join(say(msg).splitlines())}", file=sys.stderr)
    return 2


def _target(args: argparse.Namespace) -> tuple[str, Any, Any, Optional[Path]]:
    """(name, library, permission, card folder or None for a preset). Raises CardError / PresetError."""
    from ..core.cards.meta import card_th_permission, preset_th_permission
    from ..core.cards.th_scripts import card_th_library, preset_th_library

    if args.preset:
        from ..core.prompt.presets.store import load_installed_preset, presets_dir

        preset = load_installed_preset(args.card)
        return preset.name, preset_th_library(preset), preset_th_permission(presets_dir(), preset.name), None
    card = resolve_card(args.card)
    folder = Path(card.path).parent if card.path else None
    return card.name, card_th_library(card), card_th_permission(folder or card), folder


def _record(args: argparse.Namespace, name: str, lib: Any, folder: Optional[Path]) -> Optional[int]:
    """Apply --allow/--deny/--enable/--disable/--reset; None when none was given, else the exit code."""
    from ..core.cards.meta import set_card_th_allowed, set_card_th_switch, set_preset_th_permission
    from ..core.messages import message

    allowed = True if args.allow else False if args.deny else None
    sid = args.enable or args.disable or args.reset
    if allowed is None and sid is None:
        return None
    if sid is not None and lib.by_id(sid) is None:
        return _err(message("th.unknown_script", id=sid))
    on = None if args.reset else bool(args.enable)
    if args.preset:
        from ..core.prompt.presets.store import presets_dir

        set_preset_th_permission(presets_dir(), name, allowed, (sid, on) if sid is not None else None)
    elif folder is None:
        return _err(message("th.none", name=name))
    elif sid is not None:
        set_card_th_switch(folder, sid, on)
    else:
        set_card_th_allowed(folder, bool(allowed))
    what = sid if sid is not None else ("allow" if allowed else "deny")
    print(say(message("th.saved", what=f"{name} · {what}")))
    return 0


def _text(name: str, lib: Any, perm: Any, rows: list[dict[str, Any]]) -> str:
    from ..core.messages import message

    if not rows:
        return say(message("th.none", name=name))
    state = "th.allowed" if perm.allowed else "th.refused" if perm.allowed is False else "th.not_asked"
    lines = [say(message("th.header", name=name, n=len(rows), allowed=message(state)))]
    for r in rows:
        flag = say(message("th.line.on" if r["enabled"] else "th.line.off"))
        bits = [say(message(f"th.kind.{r['kind']}"))]
        if r["folder"]:
            bits.append(say(message("th.line.folder", folder="/".join(r["folder"]))))
        if r["buttons"]:
            bits.append(say(message("th.line.buttons", names=", ".join(
                b["name"] + ("" if b["visible"] else "(-)") for b in r["buttons"]))))
        if r["imports"]:
            bits.append(say(message("th.line.imports", urls=", ".join(r["imports"][:5])
                                    + (" …" if len(r["imports"]) > 5 else ""))))
        if r["runs"]:
            bits.append(say(message("th.line.runs")))
        switched = say(message("th.line.switched")) if r["switched"] else ""
        lines.append(f"  [{flag}] {r['name'] or '?'}  ({r['id']}){switched}")
        lines += [f"      {b}" for b in bits]
    lines += [f"  ! {say(w)}" for w in lib.warnings]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan card scripts`` (module doc); returns the exit code."""
    from ..core.cards import CardError
    from ..core.cards.th_scripts import script_rows
    from ..core.prompt.presets.model import PresetError

    try:
        name, lib, perm, folder = _target(args)
        done = _record(args, name, lib, folder)
        if done is not None:
            return done
    except (CardError, PresetError) as e:
        return _err(e)
    except OSError as e:
        return _err(text("cli.out.io_failed", error=e.strerror or str(e)))
    rows = script_rows(lib, perm.allowed, perm.switches)
    if args.json:
        print(dumps({"name": name, "source": lib.source, "shape": lib.shape, "allowed": perm.allowed,
                          "scripts": rows, "variables": lib.variables, "warnings": list(lib.warnings)},
                         indent=1))
    else:
        print(_text(name, lib, perm, rows))
    return 0
