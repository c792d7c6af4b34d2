"""Start-up memory (issue 15): the window with the demo open runs one renderer (the host page's; Chromium's idle
spare renderer is off) and composites in software (no GL driver in the process: with Mesa that is llvmpipe and
libLLVM, ~60 MB), while site isolation stays on for status-bar frames (tests/ui/test_frame_attacks.py and
test_statusbar_frames.py check frames run apart). The app is started as a user starts it (``python -m
liyuan_desktop``, offscreen, a fresh data folder) and its process tree is read from /proc: no timings here,
bench/ui_start.py prints them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from uihelpers import bench_started_app

from liyuan_desktop.app import NO_GPU_FLAG
from liyuan_desktop.ui.frames.conversation import SPARE_RENDERER_FEATURE, _disable_feature
from liyuan_desktop.ui.frames.frame_guard import process_tree

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")

GL_DRIVER_MARKS = ("libLLVM", "_dri.so", "libGLX_mesa", "libEGL_mesa", "libvulkan_")


def _threads(pid: int) -> set[str]:
    out = set()
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            out.add((t / "comm").read_text().strip())
        except OSError:
            pass
    return out


def test_the_demo_window_runs_one_renderer_one_zygote_and_no_gl_driver(tmp_path):
    with bench_started_app(tmp_path) as (proc, _stamps):
        time.sleep(1.0)  # a spare renderer is started right after the first page load
        pids = process_tree(proc.pid)
        renderers = [p for p in pids if p != proc.pid and "Compositor" in _threads(p)]
        assert len(renderers) == 1, (pids, renderers)
        kinds = []  # Chromium's child processes by --type (forked renderers keep their zygote's command line)
        for p in pids[1:]:
            try:
                args = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            kinds += [a.split(b"=", 1)[1].decode() for a in args if a.startswith(b"--type=")]
        # one zygote (app.NO_UNSANDBOXED_ZYGOTE_FLAG: the idle unsandboxed one is not started) and the page's renderer
        assert kinds.count("zygote") == 2, kinds
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        assert not [m for m in GL_DRIVER_MARKS if m in maps], [ln for ln in maps.splitlines()
                                                                if any(m in ln for m in GL_DRIVER_MARKS)][:5]


def test_the_spare_renderer_switch_joins_the_users_disabled_features():
    assert _disable_feature("", SPARE_RENDERER_FEATURE) == f"--disable-features={SPARE_RENDERER_FEATURE}"
    got = _disable_feature('--log-level=3 --disable-features=A,B "--x=a b"', SPARE_RENDERER_FEATURE)
    assert got == f'--log-level=3 --disable-features=A,B,{SPARE_RENDERER_FEATURE} "--x=a b"'
    assert _disable_feature(got, SPARE_RENDERER_FEATURE) == got
    assert NO_GPU_FLAG == "--disable-gpu"
