"""The settings dialog's provider form scrolls down, never sideways (found by screenshotting every dialog, issue 15):
at its opening size the form was wider than its scroll area (820 px dialog: 43 px cut in Chinese, 94 px in English),
so 探测能力 / 清除 and the key buttons were cut off at the right edge. The dialog now opens as wide as the form needs."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QScrollArea

from liyuan_desktop.core.llm import ProviderSettings
from liyuan_desktop.core.settings import AppSettings


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_provider_form_is_not_cut_off(qtbot, lang):
    from liyuan_desktop.ui.infra import i18n
    from liyuan_desktop.ui.settings.settings import SettingsDialog

    i18n.set_language(lang)
    d = None
    try:
        s = AppSettings(providers=[ProviderSettings(name="local", base_url="http://127.0.0.1:9/v1", model="m")],
                        active_provider="local", ui_language=lang)
        d = SettingsDialog(s)
        qtbot.addWidget(d)
        d.show()
        qtbot.waitExposed(d)
        scroll = next(a for a in d.findChildren(QScrollArea) if a.widget() is d.form_box)
        assert scroll.isVisible()
        assert scroll.horizontalScrollBar().maximum() == 0, (d.width(), scroll.viewport().width(),
                                                             scroll.widget().minimumSizeHint().width())
        assert d.height() >= 600 and d.width() >= 820
    finally:
        if d is not None:  # closed first: a cancelled dialog puts back the language it was opened in
            d.reject()
        i18n.set_language("zh")
