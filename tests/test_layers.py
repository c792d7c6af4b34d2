"""The import layers (issue 12): pyproject's [tool.importlinter] contracts hold, and they cover every core module
marked private; the top level imports without a cycle and without Qt where it needs none."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "liyuan_desktop"


def _contracts() -> dict[str, dict]:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]
    return {c["id"]: c for c in conf["contracts"]}


def test_every_private_core_module_is_fenced_off_from_the_front_ends():
    private = set()
    for p in (PKG / "core").rglob("_*"):
        if p.name.startswith("__") or "__pycache__" in p.parts:
            continue
        if p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()):
            private.add(".".join(p.relative_to(ROOT).with_suffix("").parts))
    listed = set(_contracts()["no-core-internals-outside-core"]["forbidden_modules"])
    assert private <= listed, f"add to pyproject's no-core-internals-outside-core contract: {sorted(private - listed)}"
    assert listed <= private, f"gone from core, drop from the contract: {sorted(listed - private)}"


def test_import_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    p = subprocess.run([exe, "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_terminal_commands_load_neither_qt_nor_the_window():
    code = ("import sys, liyuan_desktop.runtime, liyuan_desktop.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync') "
            "or m.startswith(('liyuan_desktop.ui', 'liyuan_desktop.app'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_front_ends_import_no_private_name_from_core():
    """import-linter sees modules, not names: ``from ..core.x import _helper`` is caught here."""
    import ast

    files = [*(PKG / "ui").rglob("*.py"), *(PKG / "cli").rglob("*.py"), PKG / "app.py", PKG / "runtime.py"]
    bad = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and "core" in node.module.split("."):
                bad += [f"{f.relative_to(ROOT)}:{node.lineno} {a.name}" for a in node.names if a.name.startswith("_")]
    assert not bad, bad
