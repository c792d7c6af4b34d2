"""Issue 28, for web-novel authors, in the window: the book export dialog's 「每章一个纯文本文件」 writes one .txt per
chosen chapter into a folder — the title line, then the paragraphs indented with full-width spaces — ready to paste
into a platform's editor."""

from __future__ import annotations

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.dialogs.book_export import export_with, open_book_export
from liyuan_desktop.ui.window.main_window import MainWindow


async def test_chapters_export_as_one_text_file_each(qtbot, tmp_path):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "网文导出")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[], scribe=[]), mode="agent")
    chat.import_chapters([("001-雨夜.md", "雨下了一夜。\n\n林青推门进去。\n"), ("002-天明.md", "天亮了。\n")], message="导入")
    chat.close()
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: win.chat is not None)
    dlg = await open_book_export(win, tmp_path)
    assert dlg is not None
    dlg.format.setCurrentIndex(dlg.format.findData("chapters"))
    dlg.out_edit.setText(str(tmp_path / "paste"))
    assert dlg.out_path() == tmp_path / "paste"
    done = await export_with(win, dlg, win.chat.story.story_dir)
    dlg.close()
    files = sorted((tmp_path / "paste").glob("*.txt"))
    assert done is not None and len(files) == 2 and done.chapters == 2
    first = files[0].read_text("utf-8")
    assert first.splitlines()[0].strip() and "　　雨下了一夜。" in first and "　　林青推门进去。" in first
