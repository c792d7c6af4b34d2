"""The About dialog (version, build, folders), the window icon, and the crash dialog of app.py's excepthook."""

from __future__ import annotations

import logging
import sys

from liyuan_desktop import __version__
from liyuan_desktop import app as app_mod
from liyuan_desktop.ui import about
from liyuan_desktop.ui.i18n import set_language, tr


def test_about_text_from_source(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "data"))
    info = about.build_info()
    assert info["version"] == __version__ and info["build_date"] is None  # no _build_info.py in a checkout
    assert about.build_label(info) == "源码运行"
    box = about.make_about_box()
    qtbot.addWidget(box)
    text = box.text()
    assert "梨园" in text and __version__ in text and "源码运行" in text and str(tmp_path / "data") in text
    assert str(app_mod.log_path().parent) in text


def test_about_in_english_and_with_build_info(qtbot, monkeypatch):
    fake = type(sys)("liyuan_desktop._build_info")
    fake.VERSION, fake.BUILD_DATE, fake.COMMIT, fake.PLATFORM = "9.9.9", "2026-01-02T03:04:05Z", "abc1234", "linux-x"
    monkeypatch.setitem(sys.modules, "liyuan_desktop._build_info", fake)
    set_language("en")
    try:
        assert about.build_label() == "2026-01-02T03:04:05Z · abc1234"
        box = about.make_about_box()
        qtbot.addWidget(box)
        assert box.windowTitle() == "About Liyuan" and "9.9.9" in box.text() and "abc1234" in box.text()
    finally:
        set_language("zh")


def test_app_icon_has_all_sizes(qtbot):
    icon = about.app_icon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 48, 64, 128, 256}


def test_crash_dialog_shows_log_path_and_is_not_modal(qtbot, tmp_path, monkeypatch, caplog):
    logfile = tmp_path / "logs" / "liyuan.log"
    monkeypatch.setattr(app_mod, "_crash_box", None)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    app_mod.install_excepthook(logfile)
    with caplog.at_level(logging.ERROR, logger="liyuan"):
        try:
            raise RuntimeError("boom in a slot")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
    box = app_mod._crash_box
    assert box is not None
    qtbot.addWidget(box)
    assert box.isVisible() and not box.isModal()
    assert str(logfile) in box.text() and "RuntimeError: boom in a slot" in box.text()
    assert tr("crash.title") == box.windowTitle()
    assert "boom in a slot" in caplog.text  # and it is in the log
    # a second error while the first dialog is open does not stack another dialog
    assert app_mod.show_crash_dialog(ValueError, ValueError("again"), logfile) is box


def test_sandbox_state_reads_as_text(monkeypatch):
    monkeypatch.setattr(app_mod, "_SANDBOX", "on")
    assert app_mod.sandbox_state() == "开启"
    monkeypatch.setattr(app_mod, "_SANDBOX", "userns")
    assert "命名空间" in app_mod.sandbox_state()
    assert isinstance(app_mod.userns_sandbox_possible(), bool)


def test_main_window_menu_opens_about(qtbot, monkeypatch):
    from liyuan_desktop.core import settings as S
    from liyuan_desktop.ui.main_window import MainWindow

    shown = []
    monkeypatch.setattr(about.QMessageBox, "exec", lambda self: shown.append(self.text()) or 0)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    assert win.about_action.text() == "关于梨园"
    win.about_action.trigger()
    assert shown and __version__ in shown[0]
