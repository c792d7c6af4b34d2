"""``liyuan import-sillytavern PATH [--json] [--dry-run]``: bring a whole SillyTavern data folder over in one step
(``core.migrate``): cards with their chats, world books with their links, presets, personas, settings — never keys.

PATH is a SillyTavern folder, its ``data/<user>/``, the older ``public/`` folder, or a backup ``.zip`` of one. Prints
the plan (what was found, conflicts, what is not imported) on stdout, progress on stderr (a line about every 5 %),
then the report (Markdown; ``--json``: only the report as JSON on stdout). ``--dry-run`` writes nothing. Ctrl-C
cancels cleanly: what was already created is removed.

Exit codes: 0 imported (damaged items are listed in the report); 2 PATH is no SillyTavern data or a refused zip;
130 cancelled.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from .common import language, out, say, text


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``import-sillytavern`` on the top-level subparsers; returns its parser."""
    p = sub.add_parser("import-sillytavern",
                       help=text("cli.help.migrate.0"))
    p.add_argument("path", help=text("cli.help.migrate.1"))
    p.add_argument("--json", action="store_true", help=text("cli.help.migrate.2"))
    p.add_argument("--dry-run", action="store_true", help=text("cli.help.migrate.3"))
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan import-sillytavern`` (module doc); returns the exit code."""
    from ..core.migrate import MigrationError, scan
    from ..core.migrate import run as run_migration

    try:
        plan = scan(args.path)
    except MigrationError as e:
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    if not args.json:
        for line in plan.summary_lines(language()):
            out(line)
        out("")
    stop = threading.Event()
    last = [-1]

    def progress(done: int, total: int, label: str) -> None:
        pct = 100 * done // max(total, 1)
        if pct // 5 != last[0] // 5 or done == total:
            last[0] = pct
            print(text("migrate.cli.progress", pct=f"{pct:3d}", label=label), file=sys.stderr, flush=True)

    def on_sigint(signum: int, frame: Any) -> None:
        stop.set()

    old = signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None
    try:
        report = run_migration(plan, progress, stop, dry_run=args.dry_run, lang=language())
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    if args.json:
        out(report.to_json(language()))
    else:
        out(report.markdown(language()))
        if report.report_dir:
            out(text("migrate.cli.saved", dir=report.report_dir))
    if report.cancelled:
        print(text("migrate.cli.cancelled"), file=sys.stderr)
        return 130
    return 0
