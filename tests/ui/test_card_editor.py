"""Issue 26 §1 in the window: the character card editor. A card made from scratch in the dialog is saved into the
library, listed, and a chat starts with it; every field of a real-shaped V2 card (with unknown keys everywhere) is
edited through the dialog's widgets, saved and exported, and the unknown keys come back byte-identical; the
greetings are added, removed and reordered; token counts are shown; closing with unsaved edits asks, No the default.

Async tests run on the qasync loop (tests/ui/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.edit import CardEditor, list_versions
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.books import library_books_dir
from liyuan_desktop.ui.dialogs import avatar_crop, card_parts
from liyuan_desktop.ui.dialogs.avatar_crop import CropDialog
from liyuan_desktop.ui.dialogs.card_editor import CardEditorDialog
from liyuan_desktop.ui.dialogs.export_menu import write_card
from liyuan_desktop.ui.infra import theme
from liyuan_desktop.ui.infra.i18n import set_language
from liyuan_desktop.ui.window.main_window import MainWindow

UNKNOWN_ROOT = {"x_root_tool": {"a": [1, 2.5, "三"], "b": None}}
UNKNOWN_DATA = {"x_data_field": "保留我", "group_only_greetings": ["群聊开场"]}
UNKNOWN_EXT = {"chub": {"full_path": "someone/card", "id": 12345}, "x_vendor": {"nested": {"k": [True, False]}}}
BOOK_EXTRA = {"x_book_key": {"keep": 1}}
ENTRY_EXTRA = {"x_entry_key": "entry extra", "extensions": {"x_entry_ext": 7}}
SCRIPT_EXTRA = {"placement": [1, 2], "markdownOnly": True, "promptOnly": False, "runOnEdit": True, "trimStrings": ["x"],
                "substituteRegex": 0, "minDepth": None, "maxDepth": 3, "id": "abc-123"}


@pytest.fixture(autouse=True)
def _no_question_at_teardown():
    """A failing test must not hang: an editor left with edits would ask (modally) when pytest-qt closes it."""
    yield
    for w in QApplication.topLevelWidgets():
        if isinstance(w, CardEditorDialog):
            w.editor.dirty = False


def real_card() -> dict:
    """A V2 card shaped like the ones players import: V1 fields mirrored at the root, unknown keys at every level."""
    data = {
        "name": "白鹭", "description": "旧描述", "personality": "旧性格", "scenario": "旧场景", "first_mes": "旧开场",
        "mes_example": "<START>\n{{user}}: 你好", "creator_notes": "旧作者的话", "system_prompt": "", "tags": ["古风"],
        "post_history_instructions": "", "creator": "旧作者", "character_version": "1.0",
        "alternate_greetings": ["甲", "乙"],
        "character_book": {"name": "白鹭的书", "entries": [
            {"id": 0, "keys": ["渡口"], "content": "渡口在城南。", "enabled": True, "insertion_order": 100,
             "comment": "渡口", **ENTRY_EXTRA}], **BOOK_EXTRA},
        "extensions": {"talkativeness": "0.5", "fav": False, "world": "", "depth_prompt": {"prompt": "", "depth": 4,
                                                                                         "role": "system"},
                       "regex_scripts": [{"scriptName": "去星号", "findRegex": "/\\*/g", "replaceString": "",
                                          "disabled": False, **SCRIPT_EXTRA}],
                       **UNKNOWN_EXT},
        **UNKNOWN_DATA,
    }
    root = {k: data[k] for k in ("name", "description", "personality", "scenario", "first_mes", "mes_example")}
    return {**root, "creatorcomment": "旧作者的话", "avatar": "none", "talkativeness": "0.5", "fav": False,
            "tags": ["古风"], "spec": "chara_card_v2", "spec_version": "2.0", "data": data, **UNKNOWN_ROOT,
            "create_date": "2024-1-2 @03h 04m 05s 006ms"}


def import_card(tmp_path: Path, doc: dict) -> library.CardRef:
    f = tmp_path / "card.json"
    f.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    return library.import_card(f)


def make_window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def card_rows(win: MainWindow) -> dict:
    return {win.tree.topLevelItem(i).text(0): win.tree.topLevelItem(i) for i in range(win.tree.topLevelItemCount())}


def type_into(dlg: CardEditorDialog, key: str, value) -> None:
    """Set field ``key``'s widget as a user would (its change signal fires)."""
    w = dlg.inputs[key]
    if hasattr(w, "setPlainText"):
        w.setPlainText(value)
    elif hasattr(w, "setText"):
        w.setText(value)
    elif hasattr(w, "findData"):
        w.setCurrentIndex(w.findData(value))
    else:
        w.setValue(value)


def png_with_text(path: Path, w: int = 60, h: int = 90) -> Path:
    """A PNG with a text chunk of its own (``Author``), which a picture used whole keeps."""
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor("#7a3b2e"))
    img.setText("Author", "liyuan-test-painter")
    assert img.save(str(path))
    return path


def crop_half(parent, data: bytes) -> bytes:
    """What the user does in the crop dialog: the frame at half size, dragged to the top-left corner, 裁剪."""
    img = QImage()
    assert img.loadFromData(data)
    dlg = CropDialog(data, img, parent)
    dlg.size_slider.setValue(50)
    dlg.view.move_to(QPoint(0, 0))
    dlg.finish("crop")
    return dlg.result_png()


def test_crop_dialog_frames_a_two_by_three_portrait(qtbot, tmp_path):
    data = png_with_text(tmp_path / "wide.png", 300, 300).read_bytes()
    img = QImage()
    assert img.loadFromData(data)
    dlg = CropDialog(data, img)
    qtbot.addWidget(dlg)
    assert dlg.view.rect_in_image() == QRect(50, 0, 200, 300)  # the largest 2:3 frame, centred
    dlg.size_slider.setValue(50)
    dlg.view.move_to(QPoint(1000, 1000))  # kept inside the picture
    assert dlg.view.rect_in_image() == QRect(200, 150, 100, 150)
    dlg.finish("crop")
    out = QImage()
    assert out.loadFromData(dlg.result_png()) and (out.width(), out.height()) == (100, 150)
    dlg.finish("whole")
    assert dlg.result_png() == data  # the file as chosen, every chunk kept
    dlg.finish("cancel")
    assert dlg.result_png() is None


async def test_new_card_from_scratch_is_saved_listed_and_a_chat_starts_with_it(qtbot, tmp_path, monkeypatch):
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    win.new_card_action.trigger()
    dlg = win.card_editor
    assert isinstance(dlg, CardEditorDialog) and dlg.is_new and dlg.isVisible()
    assert library.list_cards() and all(c.name != "青灯" for c in library.list_cards())
    type_into(dlg, "name", "青灯")
    type_into(dlg, "description", "一位在古寺里抄经的书生。")
    type_into(dlg, "first_mes", "夜深了，青灯下，他抬起头看你。")
    dlg.greetings.add("清晨，钟声响起。")
    monkeypatch.setattr(avatar_crop, "ask_crop", crop_half)
    assert dlg.choose_avatar(str(png_with_text(tmp_path / "face.png")))
    assert not any(c.name == "青灯" for c in library.list_cards())  # nothing written before 保存
    qtbot.mouseClick(dlg.save_btn, Qt.MouseButton.LeftButton)  # written on a worker
    await wait_for(lambda: not dlg.is_new and dlg.isEnabled())
    assert not dlg.editor.dirty and "青灯" in dlg.windowTitle() and dlg.status.text() == "已新建角色卡「青灯」"
    ref = next(c for c in library.list_cards() if c.name == "青灯")
    card = ref.load()
    assert card.description == "一位在古寺里抄经的书生。" and card.alternate_greetings == ["清晨，钟声响起。"]
    face = QImage(str(Path(ref.dir) / "original.png"))
    assert (face.width(), face.height()) == (30, 45)  # cropped to the 2:3 frame chosen
    await wait_for(lambda: "青灯" in card_rows(win))  # the list followed the library notice
    dlg.close()
    win.start_chat(ref)
    await wait_for(lambda: win.chat is not None and win.chat.card.name == "青灯" and not win.busy)
    assert win.chat.card.first_mes == "夜深了，青灯下，他抬起头看你。"
    # 编辑角色卡… in the chat menu opens the open chat's card
    win.edit_card_action.trigger()
    await wait_for(lambda: win.card_editor is not dlg)
    assert win.card_editor.editor.get("name") == "青灯" and not win.card_editor.is_new
    win.card_editor.close()


async def test_every_field_of_a_real_card_edited_saved_exported_unknown_keys_identical(qtbot, tmp_path, monkeypatch):
    doc = real_card()
    ref = import_card(tmp_path, doc)
    books = library_books_dir()
    books.mkdir(parents=True, exist_ok=True)
    for name in ("江湖志", "山河录"):
        (books / f"{name}.json").write_text(json.dumps({"entries": {}}), "utf-8")
    d = library.new_chat_dir(ref, "旧对话")
    Chat.create(d, ref.load(), ReplayModel(actor=[])).close()
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    assert win.open_chat(ref, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: win.chat is not None and not win.busy)
    # 编辑角色卡… from the card list's context menu
    row = card_rows(win)["白鹭"]
    menu = win.manager.tree_menu(win.tree.visualItemRect(row).center())
    next(a for a in menu.actions() if a.text() == "编辑角色卡…").trigger()
    menu.close()
    await wait_for(lambda: getattr(win, "card_editor", None) is not None)  # the card is read on a worker
    dlg = win.card_editor
    assert dlg.value("description") == "旧描述" and dlg.value("tags") == "古风"
    texts = {"name": "白鹭·改", "description": "新描述", "personality": "新性格", "scenario": "新场景",
             "first_mes": "新开场", "mes_example": "<START>\n{{char}}: 新示例", "system_prompt": "新系统提示",
             "post_history_instructions": "新历史后指令", "creator_notes": "新作者的话", "creator": "新作者",
             "character_version": "2.1", "tags": "古风, 江湖", "depth_prompt.prompt": "记得她怕水。"}
    for key, value in texts.items():
        type_into(dlg, key, value)
    type_into(dlg, "depth_prompt.depth", 2)
    type_into(dlg, "depth_prompt.role", "user")
    type_into(dlg, "talkativeness", 0.8)
    dlg.greetings.list.setCurrentRow(1)
    dlg.greetings.text.setPlainText("乙改")
    assert dlg.greetings.move_by(-1)
    monkeypatch.setattr(avatar_crop, "ask_crop", lambda _p, data: data)  # 用整张图片
    assert dlg.choose_avatar(str(png_with_text(tmp_path / "face.png")))
    monkeypatch.setattr(card_parts, "choose_book", lambda _p, names: "江湖志" if "江湖志" in names else None)
    assert dlg.books.link("山河录")
    assert dlg.books.link()  # asked: 江湖志
    dlg.books.links.setCurrentRow(1)
    assert dlg.books.make_primary()
    assert [dlg.books.links.item(i).text() for i in range(2)] == ["江湖志", "山河录"]
    dlg.scripts.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    script = dlg.editor.scripts()[0]
    assert dlg.scripts.edit({**script, "replaceString": "·"})
    book = dlg.books.open_book()
    await wait_for(lambda: book.loaded, timeout=20)
    book.add_entry()
    book.f_keys.setText("古寺")
    book.f_keys.textEdited.emit(book.f_keys.text())
    book.f_content.setPlainText("古寺在山上。")
    assert book.save()
    book.close()
    qtbot.mouseClick(dlg.save_btn, Qt.MouseButton.LeftButton)  # written on a worker
    await wait_for(lambda: not dlg.editor.dirty and dlg.isEnabled())
    assert not dlg.refused and dlg.status.text() == "已保存（旧版本已留存）"
    # the open chat plays the edit from its next beat (Chat.refresh_card through the session)
    assert win.chat.card.description == "新描述"
    assert [n.key for n in win.chat.pending_notices] == ["card.edited_notice"]  # and its next beat says so
    out = write_card(Path(ref.dir), "json", tmp_path / "out.json")
    got = json.loads(out.read_bytes())
    data = got["data"]
    for key, value in texts.items():
        if key not in ("tags", "depth_prompt.prompt"):
            assert data[key] == value, key
    assert data["tags"] == ["古风", "江湖"] and data["alternate_greetings"] == ["乙改", "甲"]
    assert data["extensions"]["depth_prompt"] == {"prompt": "记得她怕水。", "depth": 2, "role": "user"}
    assert float(data["extensions"]["talkativeness"]) == 0.8
    assert data["extensions"]["world"] == "江湖志"
    assert CardEditor.open(ref.dir).linked_books() == ["江湖志", "山河录"]
    sc = data["extensions"]["regex_scripts"][0]
    assert sc["disabled"] is True and sc["replaceString"] == "·"
    entries = data["character_book"]["entries"]
    assert [e["content"] for e in entries] == ["渡口在城南。", "古寺在山上。"]

    def same(a, b):
        return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)

    for k, v in UNKNOWN_ROOT.items():
        assert same(got[k], v), k
    for k, v in UNKNOWN_DATA.items():
        assert same(data[k], v), k
    for k, v in UNKNOWN_EXT.items():
        assert same(data["extensions"][k], v), k
    for k, v in BOOK_EXTRA.items():
        assert same(data["character_book"][k], v), k
    for k, v in ENTRY_EXTRA.items():
        assert same(entries[0][k], v), k
    for k, v in SCRIPT_EXTRA.items():
        assert same(sc[k], v), k
    assert got["create_date"] == doc["create_date"]
    png = write_card(Path(ref.dir), "png", tmp_path / "out.png")
    assert png.read_bytes().startswith(b"\x89PNG") and b"tEXtchara" in png.read_bytes()
    assert b"liyuan-test-painter" in png.read_bytes()  # the chosen picture's own text chunk kept
    dlg.close()


def test_greetings_add_remove_reorder_and_token_counts(qtbot, tmp_path, monkeypatch):
    ref = import_card(tmp_path, real_card())
    dlg = CardEditorDialog(CardEditor.open(ref.dir))
    qtbot.addWidget(dlg)
    dlg.show()
    g = dlg.greetings
    assert g.items() == ["甲", "乙"] and g.list.count() == 2
    qtbot.mouseClick(g.add_btn, Qt.MouseButton.LeftButton)
    assert g.list.currentRow() == 2 and g.items() == ["甲", "乙", ""]
    g.text.setPlainText("丙")
    assert g.items() == ["甲", "乙", "丙"] and "丙" in g.list.item(2).text()
    qtbot.mouseClick(g.up_btn, Qt.MouseButton.LeftButton)
    assert g.items() == ["甲", "丙", "乙"] and g.list.currentRow() == 1
    g.list.setCurrentRow(0)
    assert not g.up_btn.isEnabled()
    qtbot.mouseClick(g.down_btn, Qt.MouseButton.LeftButton)
    assert g.items() == ["丙", "甲", "乙"]
    answers = [False, True]
    monkeypatch.setattr(card_parts, "ask_yes", lambda *_a, **_k: answers.pop(0))
    qtbot.mouseClick(g.remove_btn, Qt.MouseButton.LeftButton)  # asked, answered No: kept
    assert g.items() == ["丙", "甲", "乙"]
    qtbot.mouseClick(g.remove_btn, Qt.MouseButton.LeftButton)  # answered Yes
    assert g.items() == ["丙", "乙"]
    # token counts: each text field's header, each greeting and the total, as the engine counts them
    dlg.recount()
    report = dlg.editor.tokens()
    assert report.fields["description"] > 0
    assert dlg.heads["description"].text().endswith(f"{report.fields['description']} tokens")
    assert f"{report.fields['alternate_greetings.0']} tokens" in g.list.item(0).text()
    assert str(report.total) in dlg.total_label.text() and str(report.permanent) in dlg.total_label.text()
    type_into(dlg, "description", "一段长得多的描述，" * 40)
    dlg.recount()
    assert dlg.editor.tokens().fields["description"] > report.fields["description"]
    assert dlg.heads["description"].text().endswith(f"{dlg.editor.tokens().fields['description']} tokens")
    # a refused value is named and stops the save until fixed
    type_into(dlg, "name", "  ")
    assert dlg.refused and not dlg.save() and dlg.status.text()
    type_into(dlg, "name", "白鹭")
    assert not dlg.refused and dlg.save()
    assert CardEditor.open(ref.dir).get("alternate_greetings") == ["丙", "乙"]


def test_closing_with_unsaved_changes_asks_and_no_is_the_default(qtbot, tmp_path):
    ref = import_card(tmp_path, real_card())
    dlg = CardEditorDialog(CardEditor.open(ref.dir))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.close()  # nothing edited: closes without a question
    assert not dlg.isVisible()
    dlg.show()
    type_into(dlg, "scenario", "改过的场景")
    seen: list = []

    def press_enter() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, press_enter)
            return
        seen.append(box.defaultButton().objectName())
        QTest.keyClick(box, Qt.Key.Key_Return)  # a reflex Enter answers No: the editor stays open

    QTimer.singleShot(0, press_enter)
    dlg.close()
    assert seen == ["confirmNo"] and dlg.isVisible()
    QTimer.singleShot(0, press_enter)
    QTest.keyClick(dlg, Qt.Key.Key_Escape)  # Esc asks too
    assert seen == ["confirmNo", "confirmNo"] and dlg.isVisible()
    assert CardEditor.open(ref.dir).get("scenario") == "旧场景"
    assert dlg.save_key.key().matches(QKeySequence("Ctrl+S")) == QKeySequence.SequenceMatch.ExactMatch
    dlg.save_key.activated.emit()  # Ctrl+S saves (offscreen, the dialog is not the active window a shortcut needs)
    assert CardEditor.open(ref.dir).get("scenario") == "改过的场景" and not dlg.editor.dirty
    dlg.close()
    assert not dlg.isVisible()


def test_screenshots_in_both_languages_and_themes(qtbot, tmp_path):
    """Pictures to look at (/tmp/card_editor_<lang>_<theme>_<tab>.png, /tmp/card_crop_<lang>.png): every tab, the
    crop dialog; the texts fit (no tab title with a stray mnemonic)."""
    ref = import_card(tmp_path, real_card())
    face = png_with_text(tmp_path / "face.png", 240, 200).read_bytes()
    try:
        for lang, mode in (("zh", "light"), ("en", "dark"), ("en", "light"), ("zh", "dark")):
            set_language(lang)
            theme.apply(mode)
            dlg = CardEditorDialog(CardEditor.open(ref.dir))
            qtbot.addWidget(dlg)
            dlg.show()
            qtbot.waitExposed(dlg)
            assert all("&" not in dlg.tabs.tabText(i) for i in range(dlg.tabs.count()))
            for i in range(dlg.tabs.count()):
                dlg.tabs.setCurrentIndex(i)
                assert dlg.grab().save(f"/tmp/card_editor_{lang}_{mode}_{i}.png")
            dlg.close()
            img = QImage()
            assert img.loadFromData(face)
            crop = CropDialog(face, img)
            qtbot.addWidget(crop)
            crop.show()
            crop.size_slider.setValue(70)
            assert crop.grab().save(f"/tmp/card_crop_{lang}_{mode}.png")
            crop.close()
    finally:
        set_language("zh")
        theme.apply("light")


def test_versions_list_and_restore_an_earlier_card(qtbot, tmp_path, monkeypatch):
    ref = import_card(tmp_path, real_card())
    dlg = CardEditorDialog(CardEditor.open(ref.dir))
    qtbot.addWidget(dlg)
    dlg.show()
    type_into(dlg, "description", "第二版")
    assert dlg.save()
    type_into(dlg, "description", "第三版")
    assert dlg.save()
    versions = dlg.show_versions()
    assert versions.list.topLevelItemCount() == 2  # the imported card and the second version
    versions.list.setCurrentItem(versions.list.topLevelItem(1))  # the oldest: the card as imported
    answers = [False, True]
    monkeypatch.setattr(card_parts, "ask_yes", lambda *_a, **_k: answers.pop(0))
    assert not versions.restore() and CardEditor.open(ref.dir).get("description") == "第三版"  # No: nothing changed
    assert versions.restore()
    assert CardEditor.open(ref.dir).get("description") == "旧描述"
    assert dlg.value("description") == "旧描述" and not dlg.editor.dirty and dlg.status.text().startswith("已恢复")
    assert len(list_versions(ref.dir)) == 3  # what the restore replaced is a version too


def test_a_jpeg_picture_becomes_a_png_avatar(qtbot, tmp_path, monkeypatch):
    ref = import_card(tmp_path, real_card())
    dlg = CardEditorDialog(CardEditor.open(ref.dir))
    qtbot.addWidget(dlg)
    img = QImage(40, 60, QImage.Format.Format_RGB32)
    img.fill(QColor("#335577"))
    assert img.save(str(tmp_path / "face.jpg"))
    monkeypatch.setattr(avatar_crop, "ask_crop", lambda _p, data: data)
    assert dlg.choose_avatar(str(tmp_path / "face.jpg")) and dlg.editor.dirty
    assert dlg.save()
    assert (Path(ref.dir) / "original.png").read_bytes().startswith(b"\x89PNG")
    (tmp_path / "not.png").write_bytes(b"not a picture")
    assert not dlg.choose_avatar(str(tmp_path / "not.png")) and "not.png" in dlg.status.text()
