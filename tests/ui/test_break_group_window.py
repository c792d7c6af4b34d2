"""Breaking the window's group dialog as a user would (z99break): 新建群组… with the name of a group already
saved must say so and keep that group, not replace it silently. The real window, real files."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMenu

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards.library import import_card
from liyuan_desktop.core.group import Group, load_group, save_group
from liyuan_desktop.core.messages import message
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.group_members import new_group_clicked
from liyuan_desktop.ui.window.main_window import MainWindow


def cards(tmp_path: Path) -> None:
    for name in ("Aster", "Birch", "Cedar"):
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": f"{name}.", "first_mes": f"{name} arrives."}}
        (tmp_path / f"{name}.json").write_text(json.dumps(raw), "utf-8")
        import_card(tmp_path / f"{name}.json")


def test_new_group_with_a_saved_groups_name_is_refused_and_the_group_kept(qtbot, tmp_path):
    cards(tmp_path)
    save_group(Group(name="Party", members=["Aster", "Birch"], muted=["Birch"], strategy="pooled"))
    i18n.set_language("en")
    try:
        win = MainWindow(S.AppSettings())
        qtbot.addWidget(win)
        win.show()
        for typed in ("Party", "party", "Party."):
            dlg = new_group_clicked(win)
            dlg.name.setText(typed)
            dlg.tick(["Cedar", "Aster"])
            said: list[str] = []

            def close_box() -> None:
                box = QApplication.activeModalWidget()
                if box is None or box is dlg:
                    QTimer.singleShot(50, close_box)
                    return
                said.append(box.text())
                QTest.keyClick(box, Qt.Key.Key_Escape)

            QTimer.singleShot(50, close_box)
            dlg._accept()
            assert said == [message("group.cli.exists", name=typed).render("en")], typed
            assert dlg.result() != QDialog.DialogCode.Accepted
            dlg.close()
        g = load_group("Party")
        assert (g.members, g.muted, g.strategy) == (["Aster", "Birch"], ["Birch"], "pooled")
    finally:
        i18n.set_language("zh")


async def test_a_group_without_chats_can_be_started_from_the_menu(qtbot, tmp_path):
    from uihelpers import wait_for

    from liyuan_desktop.core.chat import group_play

    cards(tmp_path)
    save_group(Group(name="Teahouse", members=["Aster", "Birch"]))  # as `liyuan group create` leaves it: no chat yet
    i18n.set_language("en")
    try:
        win = MainWindow(S.AppSettings())
        qtbot.addWidget(win)
        win.show()
        menu = win.findChild(QMenu, "groupMenu")
        menu.aboutToShow.emit()
        acts = {a.text(): a for a in menu.actions()}
        assert "Teahouse: new chat" in acts, list(acts)
        acts["Teahouse: new chat"].trigger()
        await wait_for(lambda: win.chat is not None)
        assert group_play.chat_group(win.chat).name == "Teahouse"
        menu.aboutToShow.emit()
        texts = [a.text() for a in menu.actions()]
        assert "Teahouse / Group chat" in texts and "Teahouse: new chat" in texts  # listed (named in English); another can be made
    finally:
        i18n.set_language("zh")
