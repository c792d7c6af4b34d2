"""The card's linked world books in the 世界书 dialog (card tab): shown with what each does in this chat, linked and
unlinked per card (every chat of the card follows); and the 作者注 dialog's word on the card's Character's Note."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtWidgets import QInputDialog

from liyuan_desktop.core.cards.library import ensure_demo_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.lore.books import global_books_dir, library_books_dir
from liyuan_desktop.ui.dialogs.authors_note import AuthorsNoteDialog
from liyuan_desktop.ui.dialogs.world_books import WorldBooksDialog


class _M:
    name = "none"
    is_replay = False


def _book(folder: Path, name: str, content: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"uid": 0, "key": [name], "content": content, "comment": name}
    (folder / f"{name}.json").write_text(json.dumps({"entries": {"0": entry}}, ensure_ascii=False), "utf-8")


def _texts(dlg: WorldBooksDialog) -> list[str]:
    return [dlg.links.list.item(i).text() for i in range(dlg.links.list.count())]


async def test_link_and_unlink_library_books_for_the_card(qtbot, tmp_path: Path, monkeypatch):
    _book(library_books_dir(), "甲书", "甲书的内容。")
    _book(library_books_dir(), "乙书", "乙书的内容。")
    _book(global_books_dir(), "全局书", "全局的内容。")
    card = ensure_demo_card().load()
    chat = Chat.create(tmp_path / "c", card, _M())
    dlg = WorldBooksDialog(chat)
    qtbot.addWidget(dlg)
    changed: list[int] = []
    dlg.booksChanged.connect(lambda: changed.append(1))
    assert _texts(dlg) == ["（没有链接的世界书）"] and not dlg.links.remove_btn.isEnabled()
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: (a[3][0], True))  # the first free book
    dlg.links.pick()
    assert dlg.links.names() == ["乙书"] and changed
    assert any(e.content == "乙书的内容。" for e in chat.book.entries)
    assert dlg.links.link("甲书") and dlg.links.link("全局书")
    assert _texts(dlg) == ["乙书 — 这个对话在读", "甲书 — 这个对话在读", "全局书 — 全局世界书，本来就在读"]
    assert [e.content for e in chat.book.entries].count("全局的内容。") == 1
    other = Chat.create(tmp_path / "d", card, _M())  # a new chat of the card reads the links too
    assert {"甲书的内容。", "乙书的内容。"} <= {e.content for e in other.book.entries}
    dlg.tabs.setCurrentIndex(2)
    dlg.show()
    qtbot.waitExposed(dlg)
    shots = Path(os.environ.get("LIYUAN_SHOTS", "/tmp/shots/wD"))
    shots.mkdir(parents=True, exist_ok=True)
    dlg.grab().save(str(shots / "linked_books.png"))
    dlg.links.list.setCurrentRow(0)
    dlg.links.unlink_selected()
    assert dlg.links.names() == ["甲书", "全局书"]
    assert not any(e.content == "乙书的内容。" for e in chat.book.entries)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("", False))
    dlg.links.link("乙书")
    dlg.links.pick()  # every library book linked now: said, nothing asked
    assert "没有可以链接" in dlg.links.error.text()


async def test_a_card_without_a_folder_says_why_links_cannot_be_kept(qtbot, tmp_path: Path):
    card = ensure_demo_card().load()
    card.path = ""
    chat = Chat.create(tmp_path / "c", card, _M())
    dlg = WorldBooksDialog(chat)
    qtbot.addWidget(dlg)
    assert not dlg.links.link("甲书") and dlg.links.error.text()


async def test_authors_note_dialog_says_agent_mode_sends_no_character_note(qtbot, tmp_path: Path):
    card = ensure_demo_card().load()
    card.extensions = {**(card.extensions or {}), "depth_prompt": {"prompt": "保持冷静。", "depth": 2, "role": "user"}}
    chat = Chat.create(tmp_path / "a", card, _M(), mode="agent")
    dlg = AuthorsNoteDialog(chat)
    qtbot.addWidget(dlg)
    assert "写长篇模式不发送" in dlg.char_where.text()


async def test_the_window_says_at_import_when_the_cards_linked_book_is_missing(qtbot, tmp_path: Path):
    """文件 → 导入角色卡: the status line names the linked world book the library lacks (CardRef.notes), in the
    window's language — not only later, as a load warning of the card's first chat."""
    from liyuan_desktop.core.settings import AppSettings
    from liyuan_desktop.ui.window import chat_work
    from liyuan_desktop.ui.window.main_window import MainWindow

    raw = {"spec": "chara_card_v2", "spec_version": "2.0",
           "data": {"name": "失书", "description": "", "first_mes": "你好。", "extensions": {"world": "没有这本"}}}
    path = tmp_path / "失书.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    win.ask_scripts = lambda *_a: None  # no regex-script question for this card
    ref = await chat_work.import_card_async(win, str(path))
    assert ref is not None and ref.notes
    line = win.statusBar().currentMessage()
    assert "失书" in line and "没有这本" in line, line
