"""Breaking 世界书… → 从文件更新… as a user would (z99break): a card PNG, an empty file, a JSON that is not a book
and a file that vanished, picked for a book a chat reads — each said in the dialog's error line in the chosen
language; the book on disk and the chat's bar untouched. The real window, real files."""

from __future__ import annotations

from test_book_update_bar import settle, window_on_a_chat

from liyuan_desktop.core.lore.books import global_books_dir
from liyuan_desktop.ui.dialogs.world_books import open_world_books
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.roleplay.card_update import update_book_from_file


async def test_bad_files_for_update_from_file_change_nothing(qtbot, tmp_path):
    win = await window_on_a_chat(qtbot, tmp_path)
    i18n.set_language("en")
    try:
        book = global_books_dir() / "镇子.json"
        before = book.read_bytes()
        png = tmp_path / "card.json"
        png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
        empty = tmp_path / "empty.json"
        empty.write_text("", "utf-8")
        other = tmp_path / "other.json"
        other.write_text('{"a": 1}', "utf-8")
        dlg = open_world_books(win)
        dlg.tabs.setCurrentWidget(dlg.global_list)
        said = []
        for f in (png, empty, other, tmp_path / "gone.json"):
            assert not update_book_from_file(dlg.global_list, win.session, "镇子", str(f), ask=False)
            said.append(dlg.global_list.error.text())
        dlg.close()
        assert all(s and f.name in s for s, f in zip(said, (png, empty, other))), said
        assert all(not any("\u4e00" <= c <= "\u9fff" for c in s.replace("镇子", "")) for s in said), said  # English
        assert said[3], said
        assert book.read_bytes() == before
        settle(qtbot, win.card_update_bar)
        assert win.card_update_bar.isHidden()
    finally:
        i18n.set_language("zh")
