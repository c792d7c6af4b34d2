"""The language switch applies without a restart (issue 17): choosing English in the settings dialog re-sets the
main window's buttons, menus, tabs and panes (ledger form included) at once; back to Chinese gives the same
Chinese texts as before; engine messages shown afterwards are English."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.main_window import MainWindow
from liyuan_desktop.ui.window.retranslate import translated


def _texts(win) -> dict[str, str]:
    out = {"send": win.send_btn.text(), "stop": win.stop_btn.text(), "regen": win.regen_btn.text(),
           "tab0": win.tabs.tabText(0), "tab1": win.tabs.tabText(1),
           "menu0": win.menuBar().actions()[0].text(), "menu1": win.menuBar().actions()[1].text(),
           "placeholder": win.input.placeholderText(), "edit": win.state_pane.edit_btn.text(),
           "form_head": win.state_pane.form.chars.horizontalHeaderItem(0).text()}
    out["buttons"] = sorted(b.text() for b in win.findChildren(QPushButton) if b.text() and b.window() is win)
    return out


def test_switching_language_in_settings_retranslates_the_window(qtbot):
    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    win.show()
    zh = _texts(win)
    assert zh["send"] == "发送" and zh["tab1"] == "账本"
    try:
        win.open_settings()
        dlg = win._settings_dialog
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
        en = _texts(win)
        assert en["send"] == "Send" and en["stop"] == "Stop" and en["regen"] == "Regenerate"
        assert (en["tab0"], en["tab1"]) == ("Draft", "Ledger")
        assert en["menu0"] == "Liyuan" and en["placeholder"].startswith("Your words")
        assert en["edit"] == "Edit" and en["form_head"] == "Name"
        assert "English" in win.statusBar().currentMessage()
        chinese = [t for t in en["buttons"] if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
        assert not chinese, chinese
        # back to Chinese: exactly the texts the window started with
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("zh"))
        assert _texts(win) == zh
    finally:
        i18n.set_language("zh")


def test_translated_maps_either_language_to_the_current_one():
    try:
        i18n.set_language("en")
        assert translated("发送") == "Send" and translated("Send") == "Send"
        assert translated("不在目录里的文字") is None
        assert translated("本拍还在进行，先停下再{what}") is None  # formatted texts are left to their panes
    finally:
        i18n.set_language("zh")
    assert translated("Send") == "发送"
