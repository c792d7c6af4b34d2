"""Issue 33 §4 in the window: the card of the shown chat is replaced in the library — a bar above the conversation
says what changed (counted; 查看改动 lists it) and offers 保持旧版 / 从下一拍用新版; either choice hides it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.changes import Changes
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def doc(desc: str, alts: list[str]) -> dict:
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "阿棠", "description": desc, "first_mes": "雨夜，茶馆。", "alternate_greetings": alts,
        "character_book": {"entries": [{"id": 1, "comment": "茶馆", "keys": ["茶馆"], "content": "镇北。",
                                        "enabled": True, "insertion_order": 100, "extensions": {}}]}}}


async def test_bar_offers_keep_or_use(qtbot, tmp_path):
    src = tmp_path / "阿棠.json"
    src.write_text(json.dumps(doc("旧描述。", []), ensure_ascii=False), "utf-8")
    card = library.import_card(src)
    d = library.new_chat_dir(card, "局")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {
        "version": 0, "content": "一。"}}]}, SEAL], scribe=['{"patch": {}}']))
    await chat.send("一")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    bar = win.card_update_bar
    assert bar.isHidden()
    path = win.chat.card.path
    new = doc("新描述。", ["乙"])
    new["data"]["character_book"]["entries"][0]["content"] = "镇南。"
    open(path, "w", encoding="utf-8").write(json.dumps(new, ensure_ascii=False))
    win.session.broadcast(Changes.of("library"))
    assert bar.isVisible()
    assert bar.label.text() == "角色卡「阿棠」已更新：字段 1 处、开场白 1 处、世界书条目 1 条。"
    assert win.grab().save(str(Path(os.environ.get("LIYUAN_SHOT_DIR") or tmp_path) / "card_update_bar.png"))
    # 查看改动: every change listed; closing takes nothing
    def close_box():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, close_box)
            return
        texts.extend(box.list.item(i).text() for i in range(box.list.count()))
        QTest.keyClick(box, Qt.Key.Key_Escape)

    texts: list[str] = []
    QTimer.singleShot(100, close_box)
    bar.show_btn.click()
    assert "description: 修改  旧描述。 → 新描述。" in texts and "1（茶馆）: 修改 [content]" in texts
    assert bar.isVisible() and "旧描述。" in win.chat.system
    bar.keep_btn.click()
    assert bar.isHidden() and win.chat.card_update() is None
    assert "旧描述。" in win.chat.system and "继续用旧版" in win.statusBar().currentMessage()
    new["data"]["description"] = "第三版。"
    open(path, "w", encoding="utf-8").write(json.dumps(new, ensure_ascii=False))
    win.session.broadcast(Changes.of("settings"))
    assert bar.isVisible()
    bar.use_btn.click()
    assert bar.isHidden() and "第三版。" in win.chat.system and "旧描述" not in win.chat.system
    # pick one change: only the checked description is taken, the book entry stays
    newer = json.loads(json.dumps(new))
    newer["data"]["description"] = "第四版。"
    newer["data"]["character_book"]["entries"][0]["content"] = "镇东。"
    open(path, "w", encoding="utf-8").write(json.dumps(newer, ensure_ascii=False))
    win.session.broadcast(Changes.of("library"))
    assert bar.isVisible()

    def pick_description():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, pick_description)
            return
        items = [box.list.item(i) for i in range(box.list.count())]
        next(it for it in items if it.text().startswith("description")).setCheckState(Qt.CheckState.Checked)
        box.findChild(QPushButton, "cardUpdateTake").click()

    QTimer.singleShot(100, pick_description)
    bar.show_btn.click()
    assert bar.isHidden() and "第四版。" in win.chat.system
    assert win.chat.card.character_book["entries"][0]["content"] == "镇南。"
    assert "勾选的 1 处改动" in win.statusBar().currentMessage()
    win.close()
