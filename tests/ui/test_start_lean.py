"""Start-up leanness of the window (issue 15, "Startup, memory and the hot paths"): no source scan of every module
PySide6 sees imported, and no application style sheet (roles are palettes). One zygote: test_startup_footprint.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFrame, QLabel

from liyuan_desktop.ui.infra import theme

ROOT = Path(__file__).resolve().parents[2]

_SCAN = """
import inspect, sys
calls = []
orig = inspect.getsource
inspect.getsource = lambda m, *a, **k: calls.append(getattr(m, "__name__", "?")) or orig(m, *a, **k)
if sys.argv[1] == "1":
    from liyuan_desktop.runtime import skip_pyside_source_scan
    assert skip_pyside_source_scan()
from PySide6 import QtWidgets  # noqa: F401
import liyuan_desktop.ui.infra.theme  # noqa: F401  modules imported after PySide6
import liyuan_desktop.ui.infra.i18n  # noqa: F401
print(' '.join(calls))
"""


def test_modules_imported_after_pyside_are_not_read_again():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    scanned = [subprocess.run([sys.executable, "-c", _SCAN, flag], env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=True).stdout.split() for flag in ("0", "1")]
    ours = [[n for n in names if n.startswith(("liyuan_desktop", "PySide6."))] for names in scanned]
    assert ours[0]  # PySide6 reads the source of modules imported after it (the cost this spares)
    assert ours[1] == [], ours[1]  # (shiboken6's own import, before the hook can be changed, is still scanned)


def test_roles_are_palettes_not_an_application_style_sheet(qtbot):
    app = QApplication.instance()
    theme.apply("light")
    muted, notice = QLabel("x"), QLabel("note")
    for w in (muted, notice):
        qtbot.addWidget(w)
    theme.set_role(muted, "muted")
    theme.set_role(notice, "notice")
    try:
        assert app.styleSheet() == ""
        assert muted.palette().color(QPalette.ColorRole.WindowText).name() == theme.colors("light")["muted"]
        assert notice.autoFillBackground() and notice.frameShape() == QFrame.Shape.StyledPanel
        assert notice.palette().color(QPalette.ColorRole.Window).name() == theme.colors("light")["notice_bg"]
        theme.apply("dark")  # a switch recolours every role widget there is
        assert muted.palette().color(QPalette.ColorRole.WindowText).name() == theme.colors("dark")["muted"]
        assert notice.palette().color(QPalette.ColorRole.WindowText).name() == theme.colors("dark")["notice_fg"]
        assert app.styleSheet() == ""
    finally:
        theme.apply("light")
