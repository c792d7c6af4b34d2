"""Shared test constants and helpers (imported as ``helpers``; a module named conftest would clash with
tests/ui/conftest.py depending on collection order)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(os.environ.get("LIYUAN_GOLDEN", ROOT.parent / "shared" / "golden"))
DEMO_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


def load_golden(name: str) -> dict:
    """A golden run as JSON, or skip the test when ../shared/golden is not there."""
    p = GOLDEN / name
    if not p.exists():
        pytest.skip(f"golden file {p} not found (the shared/ folder is not beside this checkout)")
    return json.loads(p.read_text("utf-8"))
