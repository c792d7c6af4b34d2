"""``liyuan card preview``: a real card's opening with its status bar, rendered offscreen, reported as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import shared_path

CARD = shared_path("fixtures", "cards", "青空 理.png")


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


def test_modern_mvu_bar_reads_parent_mvu_and_preview_runs_twice(tmp_path):
    """The 修女与女忍 bar reads ``window.parent.Mvu`` as under TavernHelper (same-origin there); the sandboxed frame's
    parent facade answers with the shim's Mvu, so the bar leaves 「正在读取变量…」 and shows the InitVar values
    (taller than the loading line) with no errors. A second preview with the same data folder works too and the card's
    folder gets nothing written into it."""
    card = CARD.parent / "角色卡_修女与女忍的双面日常.json"
    if not card.exists():
        pytest.skip("fixture card not found")
    before = sorted(p.name for p in card.parent.iterdir())
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home")}
    for _ in range(2):
        p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", "preview", str(card), "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        info = json.loads(p.stdout.strip().splitlines()[-1])
        assert info["frames"] == 1 and info["errors"] == [], info
        assert info["height_px"][0] > 100  # the loaded bar, not the one-line 「正在读取变量…」 (77 px)
    assert sorted(p.name for p in card.parent.iterdir()) == before


def _preview(card, tmp_path, *extra, settings=None):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home")}
    if settings is not None:
        (tmp_path / "home").mkdir(parents=True, exist_ok=True)
        (tmp_path / "home" / "settings.json").write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", "preview", str(card), "--json", *extra],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_preview_of_the_vue_template_card_is_the_app(tmp_path):
    """The StageDog-shaped Vue bar (tests/vue_template_card.py): the opening's frame is floor 0 as in the window
    (TH-message--0--0) with the names a new chat there gets (the settings' persona, the card's name), it renders
    its [InitVar] data with no error, nothing blocked, nothing failed."""
    from vue_template_card import write_card

    info = _preview(write_card(tmp_path / "card"), tmp_path, settings={"persona_name": "阿远"})
    assert info["frame_names"] == ["TH-message--0--0"]
    assert info["names"] == {"user": "阿远", "char": "梧桐"}
    assert info["errors"] == [] and info["blocked"] == [] and info["failed"] == {}, info
    assert info["height_px"][0] > 60


def test_preview_reports_errors_blocked_and_failed_frames(tmp_path):
    """A bar that throws and draws nothing, and one whose remote script the policy refuses: `errors` has the
    exception, `blocked` the refused URL (from the view's real filter / the frame policy), `failed` both frames."""
    from vue_template_card import write_card

    broken = ("开场。\n\n```html\n<body><script>\nconst B = noSuchGlobal.make();\n</script></body>\n```\n\n"
              "```html\n<body><p>HP 3</p><script src=\"https://example.com/bar.js\"></script></body>\n```")
    info = _preview(write_card(tmp_path / "card", first_mes=broken, bar=False), tmp_path)
    assert info["frame_names"] == ["TH-message--0--0", "TH-message--0--1"]
    assert any("noSuchGlobal" in e for e in info["errors"]), info
    assert any("https://example.com/bar.js" in b for b in info["blocked"]), info
    assert info["failed"] == {"TH-message--0--0": "empty", "TH-message--0--1": "blocked"}, info
