"""English mode shows no Chinese-only text in the preset dialog's sampling form (found by driving every dialog in
English, issue 15): the stop strings' placeholder was a literal Chinese string. The field labels are in one language
each (issue 32: 温度 / Temperature, no longer "温度 temperature")."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QLabel

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_sampling_form_placeholder_follows_the_language(qtbot):
    from liyuan_desktop.ui.dialogs.presets_dialog import SamplingEditor
    from liyuan_desktop.ui.infra import i18n

    i18n.set_language("en")
    try:
        ed = SamplingEditor()
        qtbot.addWidget(ed)
        assert ed.stop.placeholderText() and not CJK.search(ed.stop.placeholderText())
        labels = [w.text() for w in ed.findChildren(QLabel)]
        assert "Temperature" in labels and not [t for t in labels if CJK.search(t)], labels
    finally:
        i18n.set_language("zh")
    ed = SamplingEditor()
    qtbot.addWidget(ed)
    assert ed.stop.placeholderText() == "停止词，每行一个"
    labels = [w.text() for w in ed.findChildren(QLabel)]
    assert "温度" in labels and "Temperature" not in labels and "温度 temperature" not in labels
