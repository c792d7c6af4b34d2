"""The About dialog (version, build, folders), the window icon, and the crash dialog behind runtime's excepthook."""

from __future__ import annotations

import logging
import sys

from liyuan_desktop import __version__, runtime
from liyuan_desktop.ui.dialogs import about
from liyuan_desktop.ui.infra.i18n import set_language, tr
from liyuan_desktop.ui.window import crash


def test_about_text_from_source(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "data"))
    info = about.build_info()
    assert info["version"] == __version__ and info["build_date"] is None  # no _build_info.py in a checkout
    assert about.build_label(info) == "源码运行"
    box = about.make_about_box()
    qtbot.addWidget(box)
    text = box.text()
    assert "梨园" in text and __version__ in text and "源码运行" in text and str(tmp_path / "data") in text
    assert str(runtime.log_path().parent) in text


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
    monkeypatch.setattr(crash, "_crash_box", None)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    runtime.install_excepthook(logfile, crash.show_crash_dialog)
    with caplog.at_level(logging.ERROR, logger="liyuan"):
        try:
            raise RuntimeError("boom in a slot")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
    box = crash.current_crash_dialog()
    assert box is not None
    qtbot.addWidget(box)
    assert box.isVisible() and not box.isModal()
    assert str(logfile) in box.text() and "RuntimeError: boom in a slot" in box.text()
    assert tr("crash.title") == box.windowTitle()
    assert "boom in a slot" in caplog.text  # and it is in the log
    # a second error while the first dialog is open does not stack another dialog
    assert crash.show_crash_dialog(ValueError, ValueError("again"), logfile) is box


def test_sandbox_state_reads_as_text(monkeypatch):
    assert about.sandbox_text("on") == "开启"
    assert "命名空间" in about.sandbox_text("userns")
    assert isinstance(runtime.userns_sandbox_possible(), bool)


def test_prepare_env_records_the_sandbox_decision(monkeypatch):
    for k in ("LIYUAN_NO_SANDBOX", "QTWEBENGINE_DISABLE_SANDBOX", "QTWEBENGINE_CHROMIUM_FLAGS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(runtime, "_sandbox", "on")
    monkeypatch.setenv("LIYUAN_NO_SANDBOX", "1")
    monkeypatch.setattr(runtime.os, "geteuid", lambda: 1000)
    assert runtime.prepare_env() == "user" == runtime.sandbox_mode()
    flags = runtime.os.environ["QTWEBENGINE_CHROMIUM_FLAGS"]
    assert "--no-sandbox" in flags and "--log-level=3" in flags
    assert runtime.os.environ["QTWEBENGINE_DISABLE_SANDBOX"] == "1"


def test_excepthook_without_a_dialog_logs_and_prints(monkeypatch, tmp_path, caplog):
    printed = []
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(sys, "__excepthook__", lambda tp, value, tb: printed.append(tp))
    runtime.install_excepthook(tmp_path / "liyuan.log")
    with caplog.at_level(logging.ERROR, logger="liyuan"):
        try:
            raise KeyError("no dialog here")
        except KeyError:
            sys.excepthook(*sys.exc_info())
    assert printed == [KeyError] and "no dialog here" in caplog.text


def test_main_window_menu_opens_about(qtbot, monkeypatch):
    from liyuan_desktop.core import settings as S
    from liyuan_desktop.ui.window.main_window import MainWindow

    shown = []
    monkeypatch.setattr(about.QMessageBox, "exec", lambda self: shown.append(self.text()) or 0)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    assert win.about_action.text() == "关于梨园"
    win.about_action.trigger()
    assert shown and __version__ in shown[0]
