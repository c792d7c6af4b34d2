"""Qt's own texts follow the app's language (issue 32 §1): the standard buttons of a QMessageBox (Yes/No, OK,
Cancel, Save, Close) come from the ``qtbase_zh_CN.qm`` catalog the PySide6 wheel ships while the window is Chinese,
and are Qt's English once Settings switches to English — live, without a restart — and Chinese again after."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QMessageBox

from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.qt_language import apply_qt_language, installed_catalog
from liyuan_desktop.ui.window.main_window import MainWindow

CJK = re.compile(r"[\u4e00-\u9fff]")
BUTTONS = (QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No, QMessageBox.StandardButton.Ok,
           QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save, QMessageBox.StandardButton.Close)


def _button_texts() -> list[str]:
    box = QMessageBox()
    box.setStandardButtons(QMessageBox.StandardButton.NoButton)
    for b in BUTTONS:
        box.addButton(b)
    texts = [box.button(b).text() for b in BUTTONS]
    box.deleteLater()
    return texts


def test_qt_catalog_installed_for_chinese_and_removed_for_english(qapp):
    try:
        assert apply_qt_language("zh")
        assert installed_catalog() is not None
        zh = _button_texts()
        assert all(CJK.search(t) for t in zh), zh  # 是(&Y), 否(&N), 确定, 取消, 保存, 关闭
        assert not apply_qt_language("en")
        assert installed_catalog() is None
        en = _button_texts()
        assert not any(CJK.search(t) for t in en), en
        assert [t.replace("&", "") for t in en] == ["Yes", "No", "OK", "Cancel", "Save", "Close"]
        apply_qt_language("zh")
        apply_qt_language("zh")  # installing twice leaves one catalog
        assert _button_texts() == zh
    finally:
        apply_qt_language("en")


def test_settings_language_switch_moves_qt_buttons_live(qtbot):
    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    win.show()
    try:
        apply_qt_language("zh")  # as open_window does for a Chinese window
        assert CJK.search(_button_texts()[0])
        win.open_settings()
        dlg = win.settings_dialog
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
        assert not any(CJK.search(t) for t in _button_texts())
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("zh"))
        assert all(CJK.search(t) for t in _button_texts())
        dlg.reject()
    finally:
        i18n.set_language("zh")
        apply_qt_language("en")
