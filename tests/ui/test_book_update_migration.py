"""Issue 33 §4 in the window: a SillyTavern player re-imports their updated folder (文件 → 从 SillyTavern 导入…).
The plan lists the same-named world book and card that changed as 新版替换 (identical ones: already here), the
import asks first (default No), replaces them through the library's paths, and the open chat that uses them shows
the card-update bar."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.migrate import run, scan
from liyuan_desktop.core.paths import home
from liyuan_desktop.ui.dialogs import st_migration
from liyuan_desktop.ui.window.main_window import MainWindow

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from st_folder import build_st_folder  # noqa: E402
from test_book_update_more import _st_update  # noqa: E402

SHOTS = Path(os.environ.get("LIYUAN_SHOTS", "/tmp"))


def open_from_menu(win: MainWindow) -> st_migration.StMigrationDialog:
    acts = [a for m in win.menuBar().actions() if m.menu() for a in m.menu().actions()
            if a.text() == "从 SillyTavern 导入…"]
    acts[0].trigger()
    [dlg] = [w for w in QApplication.topLevelWidgets()
             if isinstance(w, st_migration.StMigrationDialog) and w.isVisible()]
    return dlg


async def test_reimporting_an_updated_sillytavern_folder_offers_the_update_in_the_open_chat(qtbot, tmp_path):
    st = build_st_folder(tmp_path / "st")
    run(scan(st))  # the first migration
    card = library.CardRef(name="阿梨", dir=str(home() / "cards" / "阿梨"))
    chat_dir = home() / "cards" / "阿梨" / "对话" / "第一局"
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=chat_dir.name, dir=str(chat_dir)))
    bar = win.card_update_bar
    qtbot.waitUntil(lambda: not bar.finder.running, timeout=5000)
    assert bar.isHidden()
    _st_update(st)  # the player edited the book and the card in SillyTavern
    dlg = open_from_menu(win)
    dlg.scan_path(st)
    await wait_for(lambda: dlg.state == "ready", timeout=30)
    shown = dlg.view.toPlainText()
    assert "新版替换" in shown and "世界书「阿梨的世界」" in shown and "角色卡「阿梨」" in shown
    assert "阿梨的世界-2" not in shown and "阿梨-2" not in shown
    dlg.grab().save(str(SHOTS / "z33fix-migration-plan.png"))
    asked: list[str] = []
    dlg.confirm = lambda title, text: asked.append(text) is not None  # No: nothing happens
    dlg.start_btn.click()
    assert len(asked) == 1 and "阿梨的世界" in asked[0] and "阿梨" in asked[0] and dlg.state == "ready"
    dlg.confirm = lambda title, text: asked.append(text) is None  # Yes
    dlg.start_btn.click()
    await wait_for(lambda: dlg.state == "done", timeout=60)
    assert dlg.report is not None and dlg.report.imported == {"book": 1, "card": 1}
    assert not (home() / "cards" / "阿梨-2").exists()
    dlg.close()
    # the open chat is offered what changed (the card first; the book's update stays offered)
    await wait_for(lambda: bar.isVisible() and not bar.finder.running, timeout=10)
    assert "阿梨" in bar.label.text()
    assert [u.name for u in win.chat.book_updates()] == ["阿梨的世界"]
    win.grab().save(str(SHOTS / "z33fix-migration-bar.png"))


async def test_editing_a_global_book_offers_the_edit_in_the_open_chat(qtbot, tmp_path):
    """世界书… → 全局 → 编辑…: the library book opens in the book editor; saving replaces the file the way 从文件更新…
    does (the old version kept), and the open chat's bar offers the edit (保持旧版 keeps the chat on the old)."""
    from test_book_update_bar import settle, window_on_a_chat

    from liyuan_desktop.core.chat import book_update
    from liyuan_desktop.core.lore.bookcache import file_digest
    from liyuan_desktop.core.lore.books import global_books_dir
    from liyuan_desktop.ui.dialogs.world_books import open_world_books

    win = await window_on_a_chat(qtbot, tmp_path)
    bar = win.card_update_bar
    settle(qtbot, bar)
    assert bar.isHidden()
    before = (global_books_dir() / "镇子.json").read_bytes()
    dlg = open_world_books(win)
    dlg.tabs.setCurrentWidget(dlg.global_list)
    dlg.book_edit_btn.click()  # nothing selected: said, nothing opened
    assert dlg.book_editor is None and dlg.global_list.error.text()
    dlg.global_list.list.setCurrentRow(0)
    dlg.grab().save(str(SHOTS / "z33fix-books-edit-button.png"))
    dlg.book_edit_btn.click()
    editor = dlg.book_editor
    await wait_for(lambda: editor.loaded, timeout=20)
    assert editor.windowTitle() == "世界书：镇子" and editor.model.rowCount() == 2
    assert editor.save_btn.text() == "保存"
    editor.table.selectRow(0)
    assert editor.f_content.toPlainText() == "茶馆在镇北。"
    editor.f_content.setPlainText("茶馆搬到了镇南。")
    assert editor.save()
    assert "用到这本书的对话会提示改动" in editor.note.text()
    editor.grab().save(str(SHOTS / "z33fix-book-editor.png"))
    doc = json.loads((global_books_dir() / "镇子.json").read_text("utf-8"))
    assert [e["content"] for e in doc["entries"].values()] == ["茶馆搬到了镇南。", "渡口有船。"]
    assert doc["entries"]["2"] == json.loads(before)["entries"]["2"]  # the entry not edited comes back as it was
    assert (book_update.versions_dir("镇子") / f"{file_digest(before)}.json").is_file()
    editor.dirty = False
    editor.close()
    dlg.close()
    settle(qtbot, bar)
    await wait_for(lambda: bar.isVisible() and not bar.finder.running, timeout=10)
    assert bar.label.text() == "世界书「镇子」已更新：世界书条目 1 条。"
    win.grab().save(str(SHOTS / "z33fix-book-edit-bar.png"))
    bar.keep_btn.click()
    settle(qtbot, bar)
    assert bar.isHidden() and "镇北" in " ".join(e.content for e in win.chat.context.book.entries)
