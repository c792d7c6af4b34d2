"""Issue 33 §4 in the window, for library world books: a global book the shown chat reads is replaced in the library
(世界书… → 全局 → 从文件更新…) — the card-update bar says what changed (entries, settings; 查看改动 lists them, each
entry checkable) and offers 保持旧版 / 从下一拍用新版 / picking entries, then 撤销; the chat's books follow."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.books import global_books_dir
from liyuan_desktop.ui.dialogs.world_books import open_world_books
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.card_update import update_book_from_file
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
CARD = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
    "name": "阿棠", "description": "茶馆掌柜。", "first_mes": "雨夜，茶馆。", "extensions": {}}}


def entry(uid: int, key: str, content: str, **kw) -> dict:
    return {"uid": uid, "key": [key], "keysecondary": [], "comment": key, "content": content, "constant": False,
            "selective": True, "order": 100, "position": 0, "disable": False, **kw}


def book(*entries: dict, scan_depth: int = 2) -> dict:
    return {"entries": {str(e["uid"]): e for e in entries}, "scan_depth": scan_depth}


def write(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    return path


def shot_dir(tmp_path: Path) -> Path:
    return Path(os.environ.get("LIYUAN_SHOT_DIR") or tmp_path)


async def window_on_a_chat(qtbot, tmp_path) -> MainWindow:
    """A chat that read the global book 镇子 in one beat, shown in the window."""
    write(global_books_dir() / "镇子.json", book(entry(1, "茶馆", "茶馆在镇北。"), entry(2, "渡口", "渡口有船。")))
    card = library.import_card(write(tmp_path / "阿棠.json", CARD))
    d = library.new_chat_dir(card, "局")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {
        "version": 0, "content": "一。"}}]}, SEAL], scribe=['{"patch": {}}']))
    await chat.send("去茶馆")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    return win


def answer_later(name: str, seen: list[str]) -> None:
    """Click the button ``name`` of the next modal box (a confirm box)."""
    def click():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, click)
            return
        seen.append(box.objectName())
        box.findChild(QPushButton, name).click()
    QTimer.singleShot(100, click)


def replace(win: MainWindow, tmp_path: Path, doc: dict, answer: str = "confirmYes") -> bool:
    """The library's path: 世界书… → 全局 → 从文件更新… for 镇子 (the file dialog's answer given), asked first."""
    dlg = open_world_books(win)
    dlg.tabs.setCurrentWidget(dlg.global_list)
    dlg.grab().save(str(shot_dir(tmp_path) / f"z33books-books-{i18n.language()}.png"))
    src = write(tmp_path / "新版.json", doc)
    seen: list[str] = []
    answer_later(answer, seen)
    done = update_book_from_file(dlg.global_list, win.session, "镇子", str(src))
    assert seen == ["confirmBox"] and dlg.update_btn.text() in ("从文件更新…", "Update from file…")
    assert dlg.chat_update_btn.isEnabled()  # the chat's own books can be updated from a file the same way
    dlg.close()
    return done


def settle(qtbot, bar) -> None:
    """Wait for the bar's book comparison (it runs on a worker)."""
    qtbot.waitUntil(lambda: not bar.finder.running, timeout=5000)


def book_text(win: MainWindow) -> str:
    return " ".join(e.content for e in win.chat.context.book.entries)


async def test_bar_offers_keep_use_pick_and_undo_for_a_library_book(qtbot, tmp_path):
    win = await window_on_a_chat(qtbot, tmp_path)
    bar = win.card_update_bar
    settle(qtbot, bar)
    assert bar.isHidden()
    new = book(entry(1, "茶馆", "茶馆在镇南。"), entry(3, "城门", "城门寅时开。"), scan_depth=4)
    assert not replace(win, tmp_path, new, "confirmNo")  # No: nothing replaced
    settle(qtbot, bar)
    assert bar.isHidden()
    assert replace(win, tmp_path, new)
    settle(qtbot, bar)
    assert bar.isVisible() and bar.undo_btn.isHidden()
    assert bar.label.text() == "世界书「镇子」已更新：世界书条目 3 条、设置 1 处。"
    shot = shot_dir(tmp_path) / "z33books-bar-zh.png"
    assert win.grab().save(str(shot))
    # 查看改动: every change listed; closing takes nothing
    texts: list[str] = []
    tips: list[str] = []

    def close_box():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, close_box)
            return
        texts.extend(box.list.item(i).text() for i in range(box.list.count()))
        tips.extend(box.list.item(i).toolTip() for i in range(box.list.count()))
        box.grab().save(str(shot_dir(tmp_path) / "z33books-pick-zh.png"))
        QTest.keyClick(box, Qt.Key.Key_Escape)

    QTimer.singleShot(100, close_box)
    bar.show_btn.click()
    assert texts == ["1（茶馆）: 修改 [content]", "2（渡口）: 删除", "3（城门）: 新增", "scan_depth: 修改  2 → 4"]
    # each line's tooltip holds the text itself: what changed in an entry, the added or removed entry's content
    assert tips == ["content: 茶馆在镇北。 → 茶馆在镇南。", "渡口有船。", "城门寅时开。", "2 → 4"]
    # 保持旧版: the chat's books stay the old version
    bar.keep_btn.click()
    settle(qtbot, bar)
    assert bar.isHidden() and win.chat.book_updates() == []
    assert "镇北" in book_text(win) and "城门" not in book_text(win)
    assert "继续用世界书「镇子」的旧版" in win.statusBar().currentMessage()
    # another version: pick only the new entry 城门, then undo
    newer = book(entry(1, "茶馆", "茶馆在镇东。"), entry(2, "渡口", "渡口有船。"), entry(3, "城门", "城门卯时开。"))
    assert replace(win, tmp_path, newer)
    settle(qtbot, bar)
    assert bar.isVisible()

    def pick_gate():
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(50, pick_gate)
            return
        items = [box.list.item(i) for i in range(box.list.count())]
        next(it for it in items if it.text().startswith("3（城门）")).setCheckState(Qt.CheckState.Checked)
        box.findChild(QPushButton, "cardUpdateTake").click()

    QTimer.singleShot(100, pick_gate)
    bar.show_btn.click()
    settle(qtbot, bar)
    assert "城门卯时开。" in book_text(win) and "镇北" in book_text(win) and "镇东" not in book_text(win)
    assert bar.isVisible() and bar.undo_btn.isVisible() and bar.use_btn.isHidden()
    assert win.grab().save(str(shot_dir(tmp_path) / "z33books-undo-zh.png"))
    assert bar.label.text() == "世界书「镇子」：下一拍起用勾选的 1 处改动，其余保持旧版。" and bar.dismiss_btn.isVisible()
    assert "勾选的 1 处改动" in win.statusBar().currentMessage()
    bar.undo_btn.click()
    settle(qtbot, bar)
    assert "城门" not in book_text(win) and "镇北" in book_text(win)
    assert "回到了上一个版本" in win.statusBar().currentMessage()
    # the update is offered again; 从下一拍用新版 over the chat's own kept copy: asked, No keeps it; Yes takes it
    assert bar.isVisible() and bar.undo_btn.isHidden() and bar.use_btn.isVisible()
    bar.confirm = lambda title, text: False
    bar.use_btn.click()
    assert bar.isVisible() and "镇北" in book_text(win)
    bar.confirm = lambda title, text: True
    bar.use_btn.click()
    settle(qtbot, bar)
    assert "镇东" in book_text(win) and "城门卯时开。" in book_text(win) and "镇北" not in book_text(win)
    assert bar.undo_btn.isVisible() and "下一拍起用新版" in bar.label.text()
    win.close()


async def test_bar_in_english(qtbot, tmp_path):
    i18n.set_language("en")
    try:
        win = await window_on_a_chat(qtbot, tmp_path)
        bar = win.card_update_bar
        new = book(entry(1, "茶馆", "茶馆在镇南。", constant=True), entry(2, "渡口", "渡口有船。"))
        # 导入… of a file named like the library book: asked; No imports it beside (镇子-2), Yes replaces it
        dlg = open_world_books(win)
        src = write(tmp_path / "again" / "镇子.json", new)
        seen: list[str] = []
        answer_later("confirmNo", seen)
        assert dlg.global_list.import_file(str(src)) == global_books_dir() / "镇子-2.json"
        settle(qtbot, bar)
        assert bar.isHidden()
        (global_books_dir() / "镇子-2.json").unlink()
        answer_later("confirmYes", seen)
        assert dlg.global_list.import_file(str(src)) == global_books_dir() / "镇子.json"
        assert seen == ["confirmBox", "confirmBox"]
        dlg.close()
        settle(qtbot, bar)
        assert bar.label.text() == ("The world book “镇子” was updated: book entries: 1. Constant entries changed: "
                                    "the prompt's cached prefix changes once.")
        assert bar.use_btn.text() == "Use the new version from the next beat"
        assert win.grab().save(str(shot_dir(tmp_path) / "z33books-bar-en.png"))
        bar.use_btn.click()
        settle(qtbot, bar)
        assert "镇南" in book_text(win) and bar.undo_btn.text() == "Undo"
        assert "is used in its new version" in bar.label.text()
        bar.dismiss_btn.click()  # 关闭: the bar goes, the new version stays
        assert bar.isHidden() and "镇南" in book_text(win)
        # two books updated at once: one at a time, the bar says how many follow
        write(global_books_dir() / "渡口.json", book(entry(5, "船", "船夫姓周。")))
        win.chat.note_books_used()  # what a beat does first: the new global book is recorded
        for name, text in (("渡口", "船夫姓吴。"), ("镇子", "茶馆在镇西。")):
            src = write(tmp_path / "more" / f"{name}.json", book(entry(5 if name == "渡口" else 1, "船", text)))
            dlg = open_world_books(win)
            assert update_book_from_file(dlg.global_list, win.session, name, str(src), ask=False)
            dlg.close()
        settle(qtbot, bar)
        assert bar.label.text().startswith("The world book “渡口” was updated") and "1 more updated" in bar.label.text()
        bar.keep_btn.click()
        settle(qtbot, bar)
        assert bar.label.text().startswith("The world book “镇子” was updated") and "more" not in bar.label.text()
        win.close()
    finally:
        i18n.set_language("zh")
