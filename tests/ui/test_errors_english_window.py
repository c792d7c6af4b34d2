"""The window in English says what is wrong with a file the user gave it in English (design rule "UI text Chinese
first, English complete"): 文件 → 导入角色卡 with a broken PNG, a world book that is no world book, a preset that is
no preset, a SillyTavern data source that is none. The message box / error line is captured as the window shows it
(offscreen, the real widgets); in Chinese the same error keeps its Chinese text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from uihelpers import wait_for

from liyuan_desktop.core.cards.library import ensure_demo_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.ui.infra import i18n

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


class _M:
    name = "none"
    is_replay = False


@pytest.fixture
def english():
    before = i18n.language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)


@pytest.fixture
def boxes(monkeypatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a, **k: shown.append(text))
    return shown


async def test_card_import_of_a_broken_png_in_english(qtbot, tmp_path: Path, english, boxes):
    from liyuan_desktop.core.settings import AppSettings
    from liyuan_desktop.ui.window import chat_work
    from liyuan_desktop.ui.window.main_window import MainWindow

    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00")
    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    assert await chat_work.import_card_async(win, str(broken)) is None
    assert len(boxes) == 1 and "broken.png: Incomplete PNG file" in boxes[0], boxes
    assert not CJK.search(boxes[0]), boxes[0]


async def test_world_book_import_error_in_english_and_chinese(qtbot, tmp_path: Path, english):
    from liyuan_desktop.ui.dialogs.world_books import WorldBooksDialog

    chat = Chat.create(tmp_path / "c", ensure_demo_card().load(), _M())
    dlg = WorldBooksDialog(chat)
    qtbot.addWidget(dlg)
    bad = tmp_path / "settings.json"
    bad.write_text(json.dumps({"name": "not a book"}), "utf-8")
    assert dlg.chat_list.import_file(str(bad)) is None
    text = dlg.chat_list.error.text()
    assert "settings.json: no entries; not a world book" in text and not CJK.search(text), text
    i18n.set_language("zh")
    assert dlg.chat_list.import_file(str(bad)) is None
    assert "settings.json：没有 entries（条目），不是世界书" in dlg.chat_list.error.text()


async def test_preset_import_error_in_english(qtbot, tmp_path: Path, english, boxes):
    from liyuan_desktop.core.settings import AppSettings
    from liyuan_desktop.ui.dialogs.presets_dialog import PresetsDialog

    card = tmp_path / "card.json"
    card.write_text(json.dumps({"spec": "chara_card_v2", "data": {"name": "A", "first_mes": "hi"}}), "utf-8")
    dlg = PresetsDialog(AppSettings())
    qtbot.addWidget(dlg)
    assert dlg.import_files([str(card)]) == []
    assert len(boxes) == 1 and "card: this is a character card, not a preset" in boxes[0], boxes
    assert not CJK.search(boxes[0])


async def test_sillytavern_import_of_a_non_source_in_english(qtbot, tmp_path: Path, english):
    from liyuan_desktop.ui.dialogs.st_migration import StMigrationDialog

    notes = tmp_path / "notes.txt"
    notes.write_text("x", "utf-8")
    dlg = StMigrationDialog()
    qtbot.addWidget(dlg)
    dlg.scan_path(notes)
    await wait_for(lambda: dlg.error, timeout=20)
    assert "notes.txt: choose SillyTavern's data folder" in dlg.status.text(), dlg.status.text()
    assert not CJK.search(dlg.error)
