#!/usr/bin/env python3
"""Run mypy over liyuan_desktop against the checked-in baseline, which may only shrink (issue 25).

``python scripts/typecheck.py`` runs mypy (configured in pyproject.toml ``[tool.mypy]``) and compares its errors with
``scripts/mypy-baseline.txt``. An error is keyed without line numbers (``path: message  [code]``) so that editing
a file above an old error does not make it "new"; the baseline counts how often each key occurs.

Exit status: 0 when mypy reports exactly the baseline; 1 when it reports an error the baseline does not hold (printed
with its line number — fix it), or when the baseline holds errors mypy no longer reports (printed — run with
``--update`` so the baseline shrinks with the fix); 2 when mypy itself could not run. ``--update`` rewrites the
baseline from the current errors but refuses to let it grow unless ``--allow-growth`` is given as well.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "scripts" / "mypy-baseline.txt"
_ERROR = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+): error: (?P<msg>.*)$")


def run_mypy() -> list[tuple[str, str]]:
    """mypy's errors as ``(key, original line)`` pairs; ``key`` is the line without its line number.

    Raises ``SystemExit(2)`` when mypy could not run (not installed, or a crash: exit status above 1).
    """
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context",
                           "--no-pretty", "--show-error-codes"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode > 1:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(2)
    out: list[tuple[str, str]] = []
    for line in proc.stdout.splitlines():
        m = _ERROR.match(line)
        if m:
            msg = re.sub(r"\bline \d+", "line N", m["msg"])  # "already defined on line 12" moves with edits too
            out.append((f"{m['path']}: {msg}", line))
    return out


def read_baseline() -> Counter[str]:
    """The baseline's keys with their counts (a missing file is an empty baseline)."""
    if not BASELINE.exists():
        return Counter()
    keys = [ln for ln in BASELINE.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return Counter(keys)


def main(argv: list[str] | None = None) -> int:
    """Compare mypy with the baseline, or rewrite it (``--update``); see the module docstring for exit codes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from today's errors")
    ap.add_argument("--allow-growth", action="store_true", help="with --update: let the baseline grow")
    args = ap.parse_args(argv)
    errors = run_mypy()
    now = Counter(key for key, _ in errors)
    base = read_baseline()
    new = now - base
    gone = base - now
    if args.update:
        if new and not args.allow_growth:
            print(f"typecheck: {sum(new.values())} error(s) not in the baseline; fix them (or --allow-growth):")
            for key, line in errors:
                if new.get(key):
                    print("  " + line)
            return 1
        header = ("# mypy errors accepted for now (scripts/typecheck.py); this list may only shrink.\n"
                  "# One line per error, without its line number.\n")
        BASELINE.write_text(header + "".join(k + "\n" for k in sorted(now.elements())), encoding="utf-8")
        print(f"typecheck: baseline rewritten: {sum(now.values())} error(s) (was {sum(base.values())})")
        return 0
    status = 0
    if new:
        status = 1
        print(f"typecheck: {sum(new.values())} new mypy error(s) (not in scripts/mypy-baseline.txt):")
        left = Counter(new)
        for key, line in errors:
            if left.get(key):
                left[key] -= 1
                print("  " + line)
    if gone:
        status = 1
        print(f"typecheck: {sum(gone.values())} baseline error(s) are fixed; shrink the baseline with "
              "`python scripts/typecheck.py --update`:")
        for key in sorted(gone.elements()):
            print("  " + key)
    if status == 0:
        print(f"typecheck: mypy reports exactly the baseline ({sum(now.values())} error(s) accepted)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
