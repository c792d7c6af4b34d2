"""Issue 17: renaming a card from the card list's context menu (改名…): the folder is renamed, the list shows the new
name with its chats, the open chat of that card is reopened from the new folder and still plays."""

from __future__ import annotations

import json
from pathlib import Path

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window import manage as ui_manage
from liyuan_desktop.ui.window.main_window import MainWindow


async def test_rename_a_card_from_the_list(qtbot, monkeypatch, tmp_path):
    f = tmp_path / "card.json"
    f.write_text(json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                             "data": {"name": "白鹭", "first_mes": "开场"}}, ensure_ascii=False), "utf-8")
    card = library.import_card(f)
    d = library.new_chat_dir(card, "旧事")
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    win.refresh_tree()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    top = next(win.tree.topLevelItem(i) for i in range(win.tree.topLevelItemCount())
               if win.tree.topLevelItem(i).text(0) == "白鹭")
    menu = win.manager.tree_menu(win.tree.visualItemRect(top).center())
    assert "改名…" in [a.text() for a in menu.actions()]
    menu.close()
    monkeypatch.setattr(ui_manage, "ask_text", lambda *a: "白鹭·雨")
    new = win.manager.rename_card(card)
    assert new is not None and new.name == "白鹭·雨"
    assert win.card_ref.dir == new.dir and Path(win.chat_ref.dir) == Path(new.dir) / "对话" / "旧事"
    assert win.chat.dir == Path(new.dir) / "对话" / "旧事"
    names = [win.tree.topLevelItem(i).text(0) for i in range(win.tree.topLevelItemCount())]
    assert "白鹭·雨" in names and "白鹭" not in names
