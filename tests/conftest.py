"""Shared fixtures. Golden runs are read in place from ../shared/golden (never copied into the repository);
tests that need them skip with a clear reason when that folder is absent."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# Qt must see these before it is imported anywhere (UI tests run offscreen; CI runs as root).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--no-sandbox --disable-gpu --log-level=3")
os.environ.setdefault("LANG", "C.UTF-8")

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
GOLDEN = Path(os.environ.get("LIYUAN_GOLDEN", ROOT.parent / "shared" / "golden"))
DEMO_CARD = ROOT / "cards" / "青梧" / "default_Qingwu.json"


def load_golden(name: str) -> dict:
    """A golden run as JSON, or skip the test when ../shared/golden is not there."""
    p = GOLDEN / name
    if not p.exists():
        pytest.skip(f"golden file {p} not found (the shared/ folder is not beside this checkout)")
    return json.loads(p.read_text("utf-8"))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own data folder; nothing touches the user's real one."""
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
