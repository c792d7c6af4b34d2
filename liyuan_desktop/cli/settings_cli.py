"""``liyuan settings``: the app's settings from the terminal (issue 14 §1: SillyTavern's world-info settings).

    liyuan settings show [--json]            the app's world-info settings (SillyTavern's names and values)
    liyuan settings import-st PATH [--json]  take over the world-info settings of a SillyTavern settings.json (or of
                                             the data/<user>/ folder holding it)
                                             (its world_info_settings block, or world_info_* keys at the top level)
                                             into <home>/settings.json; prints what was read and what was not

Exit codes: 0 ok; 2 bad input (file missing, not JSON, no world-info settings in it, settings not writable).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import dumps, out, say, text


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``settings`` (``show``, ``import-st``) on the top-level subparsers; returns its parser."""
    p = sub.add_parser("settings", help=text("cli.help.settings_cli.0"))
    s = p.add_subparsers(dest="settings_cmd")
    show = s.add_parser("show", help=text("cli.help.settings_cli.1"))
    show.add_argument("--json", action="store_true", help=text("cli.help.settings_cli.2"))
    imp = s.add_parser("import-st", help=text("cli.help.settings_cli.3"))
    imp.add_argument("path", help=text("cli.help.settings_cli.4"))
    imp.add_argument("--json", action="store_true", help=text("cli.help.settings_cli.5"))
    return p


def _show(values: dict[str, Any]) -> None:
    width = max(len(k) for k in values)
    for k, v in values.items():
        out(f"  {k.ljust(width)}  {json.dumps(v)}")


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan settings …``; returns the exit code (module doc)."""
    from ..core.lore.settings import from_st_settings
    from ..core.settings import load_settings, save_settings, settings_path

    cmd = getattr(args, "settings_cmd", None)
    if cmd == "show":
        wi = load_settings().world_info.model_dump()
        if args.json:
            out(dumps({"world_info": wi}, indent=1))
        else:
            out(text("cli.out.settings.head", path=str(settings_path())))
            _show(wi)
        return 0
    if cmd != "import-st":
        print(text("cli.out.settings.usage"), file=sys.stderr)
        return 2
    path = Path(args.path)
    if path.is_dir() and (path / "settings.json").is_file():  # SillyTavern's data/<user>/ folder: its settings.json
        path = path / "settings.json"
    try:
        data = json.loads(path.read_text("utf-8-sig"))
    except OSError as e:
        print(text("cli.out.cannot_read", path=str(path), error=e.strerror or str(e)), file=sys.stderr)
        return 2
    except ValueError as e:
        print(text("cli.out.not_json", name=path.name, error=str(e)), file=sys.stderr)
        return 2
    settings = load_settings()
    try:
        wi, notes = from_st_settings(data, settings.world_info)
    except ValueError as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    settings.world_info = wi
    try:
        save_settings(settings)
    except OSError as e:
        print(text("cli.out.settings.not_saved", error=str(e)), file=sys.stderr)
        return 2
    if args.json:
        out(dumps({"world_info": wi.model_dump(), "notes": notes}, indent=1))
    else:
        for n in notes:
            out(say(n))
        out(text("cli.out.settings.saved", path=str(settings_path())))
        _show(wi.model_dump())
    return 0
