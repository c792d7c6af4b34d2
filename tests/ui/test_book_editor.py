"""World books in the window (issue 17): the card's own book in an editor (entries table + form, not JSON) that
saves back into the card and the chat re-reads it; a 50,000-entry book loads off the UI thread, pages into the
table and filters without freezing; the chat's and the global book lists switch books on/off and import, and the
chat's activation follows."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from uihelpers import LoopStallMeter, wait_for

from liyuan_desktop.core.cards.library import ensure_demo_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.lore import Lorebook
from liyuan_desktop.core.lore.model import LoreEntry
from liyuan_desktop.ui.dialogs.book_editor import PAGE, BookEditorDialog
from liyuan_desktop.ui.dialogs.world_books import WorldBooksDialog


class _M:
    name = "none"
    is_replay = False


def _chat(tmp_path: Path) -> Chat:
    return Chat.create(tmp_path / "c", ensure_demo_card().load(), _M())


async def _editor(qtbot, chat) -> BookEditorDialog:
    dlg = BookEditorDialog(chat)
    qtbot.addWidget(dlg)
    dlg.show()
    await wait_for(lambda: dlg.loaded, timeout=20)
    return dlg


async def test_edit_an_entry_in_the_form_and_save_into_the_card(qtbot, tmp_path: Path):
    chat = _chat(tmp_path)
    before = chat.card_book()
    dlg = await _editor(qtbot, chat)
    assert dlg.model.rowCount() == len(before.entries) > 0
    assert dlg._current == 0 and dlg.f_title.text() == before.entries[0].title
    assert dlg.f_content.toPlainText() == before.entries[0].content
    dlg.f_keys.setText("雨夜，渡口, 油纸伞")
    dlg.f_keys.textEdited.emit(dlg.f_keys.text())
    dlg.f_content.setPlainText("改写过的条目内容")
    dlg.f_constant.setChecked(True)
    dlg.f_position.setCurrentIndex(dlg.f_position.findData("at_depth"))
    dlg.f_depth.setValue(3)
    dlg.f_order.setValue(250)
    dlg.f_probability.setValue(60)
    dlg.f_logic.setCurrentIndex(3)
    assert dlg.dirty
    assert dlg.model.data(dlg.model.index(0, 2)) == "雨夜, 渡口, 油纸伞"
    assert dlg.model.data(dlg.model.index(0, 3), Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert dlg.save() and not dlg.dirty
    # the card file has it (read back from disk) and the open chat uses it
    card_raw = json.loads(Path(chat.card.path).read_text("utf-8"))
    assert "改写过的条目内容" in json.dumps(card_raw, ensure_ascii=False)
    e = ensure_demo_card().load().lorebook.entries[0]
    assert e.keys == ["雨夜", "渡口", "油纸伞"] and e.content == "改写过的条目内容" and e.constant
    assert (e.position, e.depth, e.order, e.probability, e.selective_logic) == ("at_depth", 3, 250, 60, 3)
    assert any(x.content == "改写过的条目内容" for x in chat.book.entries)
    assert any(x.content == "改写过的条目内容" for x in chat.book.constants())
    # unknown keys of the card survive (lossless export)
    assert card_raw.get("spec") == json.loads(Path(ensure_demo_card().dir, "original.json").read_text("utf-8")).get("spec")


async def test_add_and_delete_entries(qtbot, tmp_path: Path):
    chat = _chat(tmp_path)
    n = len(chat.card_book().entries)
    dlg = await _editor(qtbot, chat)
    dlg.add_entry()
    dlg.f_title.setText("新条目")
    dlg.f_title.textEdited.emit("新条目")
    dlg.f_keys.setText("新词")
    dlg.f_keys.textEdited.emit("新词")
    dlg.f_content.setPlainText("新内容")
    assert dlg.save()
    assert len(chat.card_book().entries) == n + 1 and chat.card_book().entries[-1].keys == ["新词"]
    dlg.table.selectRow(0)
    dlg.delete_entry()
    assert dlg.save() and len(chat.card_book().entries) == n


async def test_read_only_card_saves_a_copy_for_this_chat(qtbot, tmp_path: Path, monkeypatch):
    """A card that cannot be written is left alone; the edit is kept as the chat's own copy, which replaces the
    card's book in this chat (and after reopening), not in others."""
    chat = _chat(tmp_path)
    card_bytes = Path(chat.card.path).read_bytes()
    monkeypatch.setattr(Chat, "card_book_writable", lambda self: False)
    dlg = await _editor(qtbot, chat)
    assert "只读" in dlg.note.text() and dlg.save_btn.isEnabled()
    dlg.f_content.setPlainText("只在这个对话里的改动")
    assert dlg.save() and "副本" in dlg.note.text()
    assert Path(chat.card.path).read_bytes() == card_bytes
    assert (chat.dir / "角色卡世界书.json").is_file()
    assert any(e.content == "只在这个对话里的改动" for e in chat.book.entries)
    assert chat.card_book().entries[0].content == "只在这个对话里的改动"
    n_card = len(ensure_demo_card().load().lorebook.entries)
    assert sum(1 for e in chat.book.entries if e.source == "card") == n_card  # replaced, not added twice
    again = Chat.open(chat.dir, ensure_demo_card().load(), _M())
    assert any(e.content == "只在这个对话里的改动" for e in again.book.entries)
    other = Chat.create(tmp_path / "o", ensure_demo_card().load(), _M())
    assert not any(e.content == "只在这个对话里的改动" for e in other.book.entries)


class _BigChat:
    """What the editor asks a chat for, with a 50,000-entry book."""

    def __init__(self, n: int):
        self.card = type("C", (), {"name": "大书"})()
        self.n = n

    def card_book(self) -> Lorebook:
        return Lorebook(name="大书", entries=[LoreEntry(uid=i, title=f"条目{i}", keys=[f"词{i}"], content=f"内容 {i} " + "雨" * (i % 7))
                                            for i in range(self.n)])

    def card_book_writable(self) -> bool:
        return False


async def test_fifty_thousand_entries_load_off_the_ui_thread_and_filter(qtbot):
    chat = _BigChat(50_000)
    meter = LoopStallMeter()
    with meter:
        dlg = BookEditorDialog(chat)
        qtbot.addWidget(dlg)
        dlg.show()
        await wait_for(lambda: dlg.loaded, timeout=60)
        assert dlg.model.rowCount() == PAGE and dlg.model.matching() == 50_000  # paged into the view
        dlg.model.fetchMore()
        assert dlg.model.rowCount() == 2 * PAGE
        dlg.filter_edit.setText("条目4999")
        await wait_for(lambda: dlg.model.matching() == 11, timeout=10)  # 4999, 49990..49999
        assert "11 / 50000" in dlg.count_label.text().replace(",", "")
        assert dlg.f_title.text() == "条目4999"
        row = dlg.model.row_of(49_999)
        assert row >= 0 and dlg.model.entry_at(row).uid == 49_999
    print(f"50,000-entry book editor: longest UI stall {meter.worst_ms:.0f} ms")
    assert meter.worst_ms < 2000  # generous stall bound: loading and parsing happen on the worker


async def test_book_lists_switch_on_off_and_import(qtbot, tmp_path: Path):
    chat = _chat(tmp_path)
    src = tmp_path / "江湖.json"
    src.write_text(json.dumps({"entries": {"0": {"uid": 0, "key": ["暗号"], "content": "江湖暗号：天王盖地虎",
                                                   "comment": "暗号"}}}, ensure_ascii=False), "utf-8")
    dlg = WorldBooksDialog(chat)
    qtbot.addWidget(dlg)
    changed: list[int] = []
    dlg.booksChanged.connect(lambda: changed.append(1))
    assert dlg.chat_list.import_file(str(src)) is not None
    assert dlg.chat_list.names() == [("江湖", True)] and changed
    assert any(e.content.startswith("江湖暗号") for e in chat.book.entries)
    dlg.chat_list.set_enabled("江湖", False)
    assert dlg.chat_list.names() == [("江湖", False)]
    assert not any(e.content.startswith("江湖暗号") for e in chat.book.entries)
    assert (chat.books_folder() / "未启用" / "江湖.json").is_file()
    # global: the same, for every chat
    assert dlg.global_list.import_file(str(src)) is not None
    assert any(e.content.startswith("江湖暗号") for e in chat.book.entries)
    other = Chat.create(tmp_path / "d", ensure_demo_card().load(), _M())
    assert any(e.content.startswith("江湖暗号") for e in other.book.entries)
    # not a world book: refused with a message
    bad = tmp_path / "bad.json"
    bad.write_text("{不是", "utf-8")
    assert dlg.chat_list.import_file(str(bad)) is None and dlg.chat_list.error.text()
    # the card's own book opens in the editor
    ed = dlg.open_editor()
    qtbot.addWidget(ed)
    await wait_for(lambda: ed.loaded, timeout=20)
    assert ed.model.rowCount() == len(chat.card_book().entries)


async def test_book_lists_find_and_sort(qtbot, tmp_path: Path):
    """Issue 26 §3: the world-book lists find by name and sort by name or by the latest change, as the card list."""
    import os

    chat = _chat(tmp_path)
    dlg = WorldBooksDialog(chat)
    qtbot.addWidget(dlg)
    for i, name in enumerate(("江湖", "山海", "江南")):
        src = tmp_path / f"{name}.json"
        src.write_text(json.dumps({"entries": {"0": {"uid": 0, "key": [name], "content": name}}}, ensure_ascii=False),
                       "utf-8")
        dst = dlg.chat_list.import_file(str(src))
        os.utime(dst, (1_700_000_000 + i * 100, 1_700_000_000 + i * 100))
    dlg.chat_list.refresh()
    assert [n for n, _ in dlg.chat_list.names()] == ["山海", "江南", "江湖"]
    dlg.chat_list.filter.setText("江")
    assert [n for n, _ in dlg.chat_list.names()] == ["江南", "江湖"]
    dlg.chat_list.sort.setCurrentIndex(dlg.chat_list.sort.findData("recent"))
    assert [n for n, _ in dlg.chat_list.names()] == ["江南", "江湖"]  # 江南 changed last
    assert "KB" in dlg.chat_list.list.item(0).toolTip()
    dlg.chat_list.filter.setText("没有这本")
    assert dlg.chat_list.names() == [] and dlg.chat_list.list.count() == 0
