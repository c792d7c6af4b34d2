"""A fake ``ldd`` first on PATH, so tests of the platform check (liyuan_desktop/platform_check.py) never depend on
which X11 libraries this machine has installed (issue 24 §1).

Two kinds:

* :func:`write_fake_ldd` — the test decides: the real ``ldd``'s answer for the file asked about, with every
  "not found" line resolved to a stub file (so a machine lacking libxcb-icccm4 still sees "all present"), and the
  sonames in ``missing`` reported "not found" (appended when the real answer does not name them). Without a real
  ``ldd`` a fixed list of the xcb plugin's libraries stands in for its answer.
* :data:`NEW_MACHINE_LDD` — the shell script a reviewer puts first on PATH to see the suite as a machine without
  ``libxcb-icccm4`` / ``libxcb-keysyms1`` sees it (:func:`write_new_machine_ldd` writes it).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Iterable

NEW_MACHINE_LDD = """#!/bin/sh
# ldd as a machine without libxcb-icccm4 / libxcb-keysyms1 sees it: the real answer with those two "not found"
/usr/bin/ldd "$@" | grep -v -e 'libxcb-icccm\\.so\\.4' -e 'libxcb-keysyms\\.so\\.1'
printf '\\tlibxcb-icccm.so.4 => not found\\n\\tlibxcb-keysyms.so.1 => not found\\n'
"""
"""The shell script of a machine lacking the two xcb helper packages (needs /usr/bin/ldd, grep, printf)."""

#: what stands in for ldd's answer when this machine has no ldd at all (the xcb plugin's usual X11 libraries)
_FALLBACK = ("libxcb.so.1", "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-image.so.0",
             "libxcb-render-util.so.0", "libxkbcommon-x11.so.0", "libxkbcommon.so.0", "libX11-xcb.so.1")

_SCRIPT = '''#!{python}
"""Fake ldd written by tests/fake_ldd.py: the real answer, stubs for what it lacks, MISSING reported missing."""
import re, subprocess, sys
REAL = {real!r}
STUBS = {stubs!r}
MISSING = {missing!r}
FALLBACK = {fallback!r}
rx = re.compile(r"^\\s*(\\S+)\\s+=>\\s+(.*)$")
if REAL:
    text = subprocess.run([REAL] + sys.argv[1:], capture_output=True, text=True).stdout
else:
    text = "".join("\\t%s => not found\\n" % s for s in FALLBACK)
seen = set()
for line in text.splitlines():
    m = rx.match(line)
    if not m:
        print(line)
        continue
    name = m.group(1)
    seen.add(name)
    if name in MISSING:
        print("\\t%s => not found" % name)
    elif m.group(2).strip() == "not found":
        stub = STUBS + "/" + name
        open(stub, "ab").close()
        print("\\t%s => %s (0x00007f0000000000)" % (name, stub))
    else:
        print(line)
for name in MISSING:
    if name not in seen:
        print("\\t%s => not found" % name)
'''


def real_ldd() -> str | None:
    """The ``ldd`` on PATH now (before a fake is put first), or /usr/bin/ldd, or None."""
    return shutil.which("ldd") or ("/usr/bin/ldd" if os.path.exists("/usr/bin/ldd") else None)


def _executable(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def write_fake_ldd(bindir: Path, missing: Iterable[str] = ()) -> Path:
    """Write ``bindir/ldd`` (a Python script run by this interpreter): every library resolves (stub files under
    ``bindir/stubs`` for those the real ldd cannot find) except the sonames in ``missing``. Returns the script."""
    bindir.mkdir(parents=True, exist_ok=True)
    stubs = bindir / "stubs"
    stubs.mkdir(exist_ok=True)
    real = real_ldd()
    if real and Path(real).resolve().parent == bindir.resolve():
        real = "/usr/bin/ldd" if os.path.exists("/usr/bin/ldd") else None
    return _executable(bindir / "ldd", _SCRIPT.format(python=sys.executable, real=real, stubs=str(stubs),
                                                      missing=sorted(set(missing)), fallback=_FALLBACK))


def write_new_machine_ldd(bindir: Path) -> Path:
    """Write :data:`NEW_MACHINE_LDD` as ``bindir/ldd``; returns it."""
    bindir.mkdir(parents=True, exist_ok=True)
    return _executable(bindir / "ldd", NEW_MACHINE_LDD)


def path_with(bindir: Path) -> str:
    """PATH with ``bindir`` first."""
    return f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"
