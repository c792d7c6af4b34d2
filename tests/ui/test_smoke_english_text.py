"""English mode shows no Chinese-only text in the preset dialog's sampling form (found by driving every dialog in
English, issue 15): the stop strings' placeholder was a literal Chinese string. The field labels are bilingual on
purpose (the Chinese name and the SillyTavern key, e.g. 温度 temperature) and stay."""

from __future__ import annotations

import re

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_sampling_form_placeholder_follows_the_language(qtbot):
    from liyuan_desktop.ui.dialogs.presets_dialog import SamplingEditor
    from liyuan_desktop.ui.infra import i18n

    i18n.set_language("en")
    try:
        ed = SamplingEditor()
        qtbot.addWidget(ed)
        assert ed.stop.placeholderText() and not CJK.search(ed.stop.placeholderText())
    finally:
        i18n.set_language("zh")
    ed = SamplingEditor()
    qtbot.addWidget(ed)
    assert ed.stop.placeholderText() == "停止词，每行一个"
