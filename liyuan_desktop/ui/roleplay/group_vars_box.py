"""The group dialog's 「共用变量」 check box (issue 31): the group's ``shared_variables`` — one MVU variable tree for
all members (SillyTavern keeps one chat variables object), or, unticked (the default), each member's card keeps its
own ``stat_data`` (``core/group/mvu.py``)."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QFormLayout

from ..infra.i18n import register, tr

register({
    "groupui.shared_vars": {"zh": "所有成员共用一份变量", "en": "All members share one set of variables"},
    "groupui.shared_vars.tip": {
        "zh": "MVU 变量（stat_data）：勾选后全组共用一份，像 SillyTavern 的聊天变量；不勾选时每张卡各有各的，"
              "状态栏显示发言者自己的数值。",
        "en": "MVU variables (stat_data): ticked, the whole group shares one set, like SillyTavern's chat variables; "
              "unticked, each card keeps its own and its status bar shows the speaker's own values."},
})


def shared_variables_box(form: QFormLayout, checked: bool = False) -> QCheckBox:
    """Add the check box as a row of ``form`` (the group dialog's) and return it; ``checked``: the group's
    ``shared_variables``."""
    box = QCheckBox(tr("groupui.shared_vars"))
    box.setObjectName("groupSharedVariables")
    box.setToolTip(tr("groupui.shared_vars.tip"))
    box.setChecked(checked)
    form.addRow("", box)
    return box


__all__ = ["shared_variables_box"]
