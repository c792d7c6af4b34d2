"""Issue 15 item 8: the window starts on a data folder that cannot be written, says so in a dialog, offers another
folder, and plays nothing that could not be saved.

A really unwritable folder: as a normal user a ``chmod 555`` folder; as root (CI, containers) permissions do not
stop writes, so a folder under ``/sys`` (the kernel refuses to create it) stands in; skipped when neither exists.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from liyuan_desktop import app as app_mod
from liyuan_desktop.runtime import data_folder_problem, setup_logging

ROOT = Path(__file__).resolve().parents[2]


def _unwritable_home(tmp_path: Path) -> Path:
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        home = tmp_path / "ro-home"
        (home / "cards").mkdir(parents=True)
        home.chmod(0o555)
        return home
    for cand in (Path("/sys/kernel/liyuan-home"), Path("/proc/liyuan-home")):
        if data_folder_problem(cand):
            return cand
    pytest.skip("no unwritable folder available here")


@pytest.fixture
def ro_home(tmp_path, monkeypatch):
    home = _unwritable_home(tmp_path)
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    yield home
    if home.is_relative_to(tmp_path):
        home.chmod(0o755)


def test_problem_is_named_and_the_log_falls_back(ro_home, tmp_path):
    problem = data_folder_problem()
    assert problem and problem.startswith(str(ro_home))
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        path = setup_logging()  # used to raise from the log set-up
    finally:
        for h in root.handlers[:]:
            if h not in before:
                h.close()
                root.removeHandler(h)
    assert path.is_relative_to(tmp_path / "tmp")
    assert "refuses the log" in path.read_text("utf-8")


async def _until(pred, timeout=30.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        assert loop.time() < end
        await asyncio.sleep(0.02)


@pytest.fixture
def own_log_handlers():
    """Remove the log handlers a test's data-folder switch added to the root logger."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for h in root.handlers[:]:
        if h not in before:
            h.close()
            root.removeHandler(h)
    root.setLevel(level)


async def test_window_starts_read_only_and_switches_to_another_folder(qtbot, ro_home, tmp_path, own_log_handlers):
    problem = data_folder_problem()
    win = app_mod.open_window(problem)
    qtbot.addWidget(win)
    assert win.read_only_reason == problem
    box = win.data_folder_box
    assert box.isVisible() and problem in box.text() and "只读" in box.text()
    assert {b.text() for b in box.buttons()} >= {"选择其他文件夹…", "只读浏览"}
    await _until(win.view.is_ready)
    # nothing is played: no demo chat, no new chat, no import — and it says why
    win.start_demo()
    assert win.chat is None
    assert "只读" in win.statusBar().currentMessage()
    win.new_chat_dialog()
    win.import_card_dialog()
    assert win.chat is None
    # another unwritable folder: the dialog comes back with that reason, the window stays
    assert app_mod.switch_data_folder(win, ro_home / "sub") is None
    assert "sub" in win.data_folder_box.text()
    # a writable folder: a new, normal window on it
    good = tmp_path / "good-home"
    new = app_mod.switch_data_folder(win, good)
    assert new is not None
    qtbot.addWidget(new)
    assert os.environ["LIYUAN_HOME"] == str(good) and not new.read_only_reason
    await _until(new.view.is_ready)
    new.start_demo()
    assert new.chat is not None and Path(new.chat.dir).is_relative_to(good)
    new.close()


def test_the_app_starts_on_an_unwritable_data_folder(ro_home, tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(ro_home), "TMPDIR": str(tmp_path / "tmp")}
    log = tmp_path / "tmp" / f"liyuan-logs-{os.getuid()}" / "liyuan.log"
    p = subprocess.Popen([sys.executable, "-m", "liyuan_desktop", "--offscreen"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90  # generous: QtWebEngine start-up on a busy machine
        while time.monotonic() < deadline and p.poll() is None:
            if log.exists() and "read-only" in log.read_text("utf-8"):
                time.sleep(2.0)  # the window is being built; let it come up
                break
            time.sleep(0.2)
        assert p.poll() is None, p.communicate()[1][-3000:]  # on main: a traceback from the log set-up, exit 1
        p.send_signal(signal.SIGTERM)  # closes the window the normal way
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert "data folder cannot be written" in log.read_text("utf-8")
