"""``liyuan card preview``: a real card's opening with its status bar, rendered offscreen, reported as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CARD = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "cards" / "青空 理.png"


def test_preview_renders_the_bar(tmp_path):
    if not CARD.exists():
        pytest.skip("fixture card not found")
    shot = tmp_path / "p.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home")}
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", "preview", str(CARD), "--json", "--screenshot", str(shot)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert info["frames"] == 1 and info["errors"] == [] and info["height_px"][0] > 50
    assert shot.exists() and shot.stat().st_size > 10_000


def test_preview_of_a_broken_file_is_one_line(tmp_path):
    bad = tmp_path / "x.png"
    bad.write_bytes(b"not a png")
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", "preview", str(bad)], capture_output=True, text=True,
                       env={**os.environ, "LIYUAN_HOME": str(tmp_path / "home")}, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
