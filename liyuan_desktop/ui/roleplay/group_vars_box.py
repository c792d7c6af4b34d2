"""The 「共用变量」 check box of group chats (issue 31): the group's ``shared_variables`` — one MVU variable tree for
all members (SillyTavern keeps one chat variables object), or, unticked (the default), each member's card keeps its
own ``stat_data`` (``core/group/mvu.py``). In the new-group dialog (:func:`shared_variables_box`) and in the 成员 tab
(:func:`install_pane_box`: saves the group when clicked; the next beat of its chats follows it; it repaints from
the session's notices)."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtWidgets import QCheckBox, QFormLayout, QMessageBox

from ...core.chat import group_play
from ...core.group import save_group
from ..infra.i18n import register, show, tr

log = logging.getLogger(__name__)

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


def set_shared(win: Any, on: bool) -> None:
    """Save the shown group chat's group with ``shared_variables`` = ``on`` (nothing for a one-card chat); a
    warning box when the disk refuses."""
    group = group_play.chat_group(win.chat) if win.chat is not None else None
    if group is None or group.shared_variables == on:
        return
    try:
        save_group(group.model_copy(update={"shared_variables": on}))
    except OSError as e:
        log.warning("group %s not saved: %s", group.name, e)
        QMessageBox.warning(win, tr("app.title"), show(e))


def install_pane_box(win: Any) -> QCheckBox:
    """Put the check box into the 成员 tab (``win.group_pane``, under the strategy) and keep it in step with the shown
    group chat's group."""
    pane = win.group_pane
    box = QCheckBox(tr("groupui.shared_vars"))
    box.setObjectName("groupPaneSharedVariables")
    box.setToolTip(tr("groupui.shared_vars.tip"))
    box.clicked.connect(lambda on: set_shared(win, bool(on)))
    pane.layout().insertWidget(2, box)

    def follow(*_a: Any) -> None:
        group = group_play.chat_group(win.chat) if win.chat is not None else None
        box.setChecked(bool(group is not None and group.shared_variables))

    win.session.chatShown.connect(follow)
    win.session.changed.connect(follow)
    pane.shared_box = box
    return box


__all__ = ["install_pane_box", "set_shared", "shared_variables_box"]
