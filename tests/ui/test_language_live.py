"""The language switch applies without a restart (issue 17): choosing English in the settings dialog shows the
main window's buttons, menus, tabs and panes (ledger form included) in English at once — the window is built again
in the new language (ui/window/language_switch.py), the dialog stays open on it; back to Chinese gives the same
Chinese texts as before."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.language_switch import current
from liyuan_desktop.ui.window.main_window import MainWindow


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
        dlg = win.settings_dialog
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
        en_win = current(win)
        assert en_win is not win and en_win.isVisible() and not win.isVisible()
        qtbot.addWidget(en_win)
        assert dlg.isVisible() and dlg.parentWidget() is en_win and en_win.settings_dialog is dlg
        en = _texts(en_win)
        assert en["send"] == "Send" and en["stop"] == "Stop" and en["regen"] == "Regenerate"
        assert (en["tab0"], en["tab1"]) == ("Draft", "Ledger")
        assert en["menu0"] == "Liyuan" and en["placeholder"].startswith("Your words")
        assert en["edit"] == "Edit" and en["form_head"] == "Name"
        assert "English" in en_win.statusBar().currentMessage()
        chinese = [t for t in en["buttons"] if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
        assert not chinese, chinese
        # back to Chinese: exactly the texts the window started with
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("zh"))
        zh_win = current(win)
        qtbot.addWidget(zh_win)
        assert zh_win is not en_win and dlg.parentWidget() is zh_win
        assert _texts(zh_win) == zh
    finally:
        i18n.set_language("zh")
