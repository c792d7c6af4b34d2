"""The engine stays strict-clean (issue 25): ``liyuan_desktop/core`` is checked by ``mypy --strict`` and the mypy
baseline (scripts/mypy-baseline.txt, which scripts/typecheck.py compares mypy's errors with) accepts none of its
errors — a new strict error in core fails scripts/typecheck.py rather than joining the baseline. These checks read
files only (mypy itself runs in scripts/typecheck.py)."""

from __future__ import annotations

import re
import tomllib

from helpers import ROOT

CORE = "liyuan_desktop/core/"


def test_baseline_accepts_no_core_error() -> None:
    lines = (ROOT / "scripts" / "mypy-baseline.txt").read_text(encoding="utf-8").splitlines()
    core = [ln for ln in lines if ln.replace("\\", "/").startswith(CORE)]
    assert core == [], "scripts/mypy-baseline.txt accepts strict errors in core; fix them instead:\n" + "\n".join(core)


def test_core_is_checked_strict() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    overrides = config["tool"]["mypy"].get("overrides", [])
    strict = [o for o in overrides if o.get("strict") is True]
    modules = {m for o in strict for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])}
    assert {"liyuan_desktop.core", "liyuan_desktop.core.*"} <= modules


def test_core_ignores_name_their_error_code() -> None:
    """A ``# type: ignore`` in core names the error it silences (``[code]``): a bare one would hide any error."""
    bare = re.compile(r"#\s*type:\s*ignore(?!\[)")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / CORE).rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if bare.search(line)]
    assert found == []
