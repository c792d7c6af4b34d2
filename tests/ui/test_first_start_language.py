"""A first start on an English desktop is English (issue 32): no settings file, ``LANG=en_US.UTF-8`` — the window
opens in English, Qt's own buttons too; on a Chinese desktop it opens in Chinese; ``LIYUAN_LANG`` (what
``liyuan --lang`` sets for the window) wins over the settings for the run."""

from __future__ import annotations

import json
import re

import pytest
from PySide6.QtWidgets import QMessageBox

from liyuan_desktop import app as app_mod
from liyuan_desktop.core import settings as S
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.qt_language import apply_qt_language

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@pytest.fixture
def restore_language():
    yield
    i18n.set_language("zh")
    apply_qt_language("en")


def _open(qtbot):
    win = app_mod.open_window(None)
    qtbot.addWidget(win)
    return win


def _menu_texts(win) -> list[str]:
    out = []
    for top in win.menuBar().actions():
        out.append(top.text())
        out += [a.text() for a in top.menu().actions() if a.text()]
    return out


def test_english_desktop_first_start_is_english(qtbot, monkeypatch, restore_language):
    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    monkeypatch.setenv("LANGUAGE", "")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert not S.settings_path().exists()
    win = _open(qtbot)
    assert i18n.language() == "en"
    assert win.send_btn.text() == "Send"
    chinese = [t for t in _menu_texts(win) if CJK.search(t)]
    assert not chinese, chinese
    box = QMessageBox()
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    assert box.button(QMessageBox.StandardButton.Yes).text().replace("&", "") == "Yes"
    win.close()
    # nothing chosen yet: the file (if the window saved its state) holds no language
    if S.settings_path().exists():
        assert "ui_language" not in json.loads(S.settings_path().read_text("utf-8"))


def test_chinese_desktop_first_start_is_chinese(qtbot, monkeypatch, restore_language):
    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    win = _open(qtbot)
    assert i18n.language() == "zh" and win.send_btn.text() == "发送"
    win.close()


def test_liyuan_lang_wins_over_the_settings(qtbot, monkeypatch, restore_language):
    S.save_settings(S.AppSettings(ui_language="zh"))
    monkeypatch.setenv("LIYUAN_LANG", "en")
    win = _open(qtbot)
    assert i18n.language() == "en" and win.send_btn.text() == "Send"
    win.close()
    assert json.loads(S.settings_path().read_text("utf-8"))["ui_language"] == "zh"
