"""Shared test constants and helpers (imported as ``helpers``; a module named conftest would clash with
tests/ui/conftest.py depending on collection order)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The design folder beside the checkout (``../shared``: seeds, golden runs, fixtures). CI has it; a clone with
#: nothing beside it does not, and every test that reads it skips (``LIYUAN_SHARED`` points elsewhere, e.g. to a
#: missing folder to check exactly that).
SHARED = Path(os.environ.get("LIYUAN_SHARED", ROOT.parent / "shared"))
GOLDEN = Path(os.environ.get("LIYUAN_GOLDEN", SHARED / "golden"))
FIXTURES = Path(os.environ.get("LIYUAN_FIXTURES", SHARED / "fixtures"))
DEMO_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


def shared_path(*parts: str) -> Path:
    """``../shared/<parts…>`` without checking it exists (for ``skipif`` marks and parametrisation)."""
    if parts and parts[0] == "golden":
        return GOLDEN.joinpath(*parts[1:])
    if parts and parts[0] == "fixtures":
        return FIXTURES.joinpath(*parts[1:])
    return SHARED.joinpath(*parts)


def need_shared(*parts: str) -> Path:
    """``../shared/<parts…>``, or skip the calling test with a one-line reason when it is absent (a clone with
    nothing beside it)."""
    p = shared_path(*parts)
    if not p.exists():
        pytest.skip(f"{'/'.join(parts)} not found: the shared/ folder is not beside this checkout")
    return p


def load_golden(name: str) -> dict:
    """A golden run as JSON, or skip the test when ../shared/golden is not there."""
    return json.loads(need_shared("golden", name).read_text("utf-8"))
