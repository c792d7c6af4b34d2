"""Write ``liyuan_desktop/_build_info.py`` (version, UTC build date, commit, platform) into a source tree that is about
to be built — the same file ``build.sh`` writes into its staged copy, for the CI's Windows and macOS jobs (a fresh
checkout on a throw-away runner, so the file may go into it). Never run it in your own checkout: a source run would
then claim to be a build in 「关于梨园」.

    python packaging/build_info.py [SOURCE_ROOT]      # prints the version (for installer names)
"""

from __future__ import annotations

import datetime
import platform
import re
import subprocess
import sys
from pathlib import Path


def platform_tag(system: str = sys.platform, machine: str = "") -> str:
    """``windows-x86_64``, ``macos-arm64``, ``linux-x86_64`` … for ``sys.platform`` and ``platform.machine()``
    (``AMD64`` on Windows reads x86_64)."""
    machine = (machine or platform.machine()).lower()
    machine = {"amd64": "x86_64", "aarch64": "arm64"}.get(machine, machine)
    name = {"win32": "windows", "darwin": "macos"}.get(system, "linux" if system.startswith("linux") else system)
    return f"{name}-{machine}"


def write(root: Path) -> str:
    """Write the file under ``root``; returns the version."""
    init = (root / "liyuan_desktop" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "(.*)"', init, re.M)
    version = m.group(1) if m else "0"
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    (root / "liyuan_desktop" / "_build_info.py").write_text(
        '"""Written by packaging/build_info.py into the build\'s copy of the source (never in a source checkout)."""\n\n'
        f'VERSION = "{version}"\nBUILD_DATE = "{date}"\nCOMMIT = "{commit}"\nPLATFORM = "{platform_tag()}"\n',
        encoding="utf-8", newline="\n")
    return version


if __name__ == "__main__":
    print(write(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])))
