"""Every destructive action asks first, and No is the default (issue 24 §2).

Each test clicks the real button or triggers the real menu action; the question is a real ``QMessageBox`` from
``ui.dialogs.confirm``, answered the way a user would by :class:`Answer` — pressing Enter or Esc (both must mean No:
nothing changes on disk) or clicking the yes button (the action is done). Before this, 永久删除 deleted without a
question (Qt's ``checked`` landed in ``confirm``) and the other questions took Enter as Yes.

Async tests run on the qasync loop (tests/ui/conftest.py); the question's nested event loop runs inside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat import manage as core_manage
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.profiles import ConnectionProfile
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.store import install_preset, list_presets
from liyuan_desktop.ui.dialogs.dialogs import confirm
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.main_window import MainWindow


class Answer:
    """Answers every question box that opens while in effect, as a user would: ``"enter"`` / ``"esc"`` press the
    key on the box, ``"yes"`` / ``"no"`` click the button of that role. ``asked`` keeps each question's text and
    its buttons' labels."""

    def __init__(self, how: str):
        self.how = how
        self.asked: list[tuple[str, list[str]]] = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def __enter__(self) -> "Answer":
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox) or not box.isVisible() or box.property("answered"):
            return
        box.setProperty("answered", True)
        buttons = box.buttons()
        self.asked.append((box.text(), [b.text() for b in buttons]))
        if self.how in ("enter", "esc"):
            QTest.keyClick(box, Qt.Key.Key_Return if self.how == "enter" else Qt.Key.Key_Escape)
            return
        roles = {"yes": (QMessageBox.ButtonRole.YesRole, QMessageBox.ButtonRole.AcceptRole),
                 "no": (QMessageBox.ButtonRole.NoRole, QMessageBox.ButtonRole.RejectRole)}[self.how]
        next(b for b in buttons if box.buttonRole(b) in roles).click()


@pytest.fixture(autouse=True)
def zh():
    i18n.set_language("zh")
    yield
    i18n.set_language("zh")


def make_window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def new_chat(card: library.CardRef, name: str) -> Path:
    d = library.new_chat_dir(card, name)
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    return d


def tree_action(win: MainWindow, data_pred, label: str):
    """The context-menu action ``label`` of the first card-list row whose data matches ``data_pred``."""
    tree = win.tree
    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        for it in [top] + [top.child(k) for k in range(top.childCount())]:
            data = it.data(0, Qt.ItemDataRole.UserRole)
            if data and data_pred(data):
                tree.scrollToItem(it)
                menu = win.manager.tree_menu(tree.visualItemRect(it).center())
                act = next(a for a in menu.actions() if a.text() == label)
                return menu, act
    raise AssertionError("no such row")


# -- the one helper ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how, expected", [("enter", False), ("esc", False), ("no", False), ("yes", True)])
def test_confirm_defaults_to_no(qtbot, how, expected):
    with Answer(how) as a:
        assert confirm(None, "标题", "永久删除？", "永久删除") is expected
    assert a.asked == [("永久删除？", ["永久删除", "否"])]


def test_confirm_speaks_english(qtbot):
    i18n.set_language("en")
    with Answer("enter") as a:
        assert confirm(None, "Title", "Delete?") is False
    assert a.asked == [("Delete?", ["Yes", "No"])]


# -- 回收站 ------------------------------------------------------------------------------------------------------------
async def test_trash_delete_forever_button_asks_and_enter_keeps_it(qtbot):
    card = library.ensure_demo_card()
    item = core_manage.delete_chat(new_chat(card, "要永久删除的"))
    win = make_window(qtbot)
    dlg = win.manager.show_trash()
    dlg.list.topLevelItem(0).setSelected(True)
    for how in ("enter", "esc", "no"):
        with Answer(how) as a:
            dlg.purge_btn.click()
        assert len(a.asked) == 1 and "永久删除选中的 1 项" in a.asked[0][0], (how, a.asked)
        assert item.path.exists() and [i.id for i in core_manage.list_trash()] == [item.id]
    with Answer("yes") as a:
        dlg.purge_btn.click()
    assert a.asked[0][1] == ["永久删除", "否"]
    assert not item.path.exists() and core_manage.list_trash() == []
    assert dlg.list.topLevelItemCount() == 0


async def test_empty_the_trash_button_asks_and_enter_keeps_everything(qtbot):
    card = library.ensure_demo_card()
    items = [core_manage.delete_chat(new_chat(card, n)) for n in ("一", "二")]
    win = make_window(qtbot)
    dlg = win.manager.show_trash()
    assert dlg.empty_btn.isEnabled()
    with Answer("enter") as a:
        dlg.empty_btn.click()
    assert "全部 2 项" in a.asked[0][0] and all(i.path.exists() for i in items)
    with Answer("yes"):
        dlg.empty_btn.click()
    assert not any(i.path.exists() for i in items) and core_manage.list_trash() == []
    assert not dlg.empty_btn.isEnabled()


# -- the card list's context menu ---------------------------------------------------------------------------------------
async def test_deleting_a_chat_asks_and_enter_keeps_it(qtbot):
    card = library.ensure_demo_card()
    d = new_chat(card, "留着的对话")
    win = make_window(qtbot)
    win.refresh_tree()
    is_it = lambda data: data[0] == "chat" and Path(data[2].dir) == d  # noqa: E731
    menu, act = tree_action(win, is_it, "删除（移到回收站）")
    with Answer("enter") as a:
        act.trigger()
    menu.close()
    assert "留着的对话" in a.asked[0][0] and d.is_dir() and core_manage.list_trash() == []
    menu, act = tree_action(win, is_it, "删除（移到回收站）")
    with Answer("yes") as a:
        act.trigger()
    menu.close()
    assert a.asked[0][1][0] == "删除（移到回收站）"
    assert not d.exists() and [i.name for i in core_manage.list_trash()] == ["留着的对话"]


async def test_deleting_a_card_with_chats_asks_and_enter_keeps_it(qtbot):
    card = library.ensure_demo_card()
    chats = [new_chat(card, n) for n in ("甲", "乙")]
    win = make_window(qtbot)
    win.refresh_tree()
    is_it = lambda data: data[0] == "card" and Path(data[1].dir) == Path(card.dir)  # noqa: E731
    label = "删除角色卡（连同它的对话，移到回收站）"
    n = len(library.list_chats(card))
    for how in ("esc", "enter"):
        menu, act = tree_action(win, is_it, label)
        with Answer(how) as a:
            act.trigger()
        menu.close()
        assert f"它的 {n} 个对话" in a.asked[0][0] and all(c.is_dir() for c in chats), how
    menu, act = tree_action(win, is_it, label)
    with Answer("yes"):
        act.trigger()
    menu.close()
    assert not Path(card.dir).exists() and [i.kind for i in core_manage.list_trash()] == ["card"]


# -- presets and connection profiles ------------------------------------------------------------------------------------
def _preset_file(name: str) -> str:
    path = home() / f"{name}.json"
    path.write_text(json.dumps({
        "prompts": [{"identifier": "main", "name": "Main Prompt", "content": "写雨。"}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True}]}]},
        ensure_ascii=False), "utf-8")
    return str(path)


def test_deleting_a_preset_asks_and_enter_keeps_it(qtbot):
    from liyuan_desktop.ui.dialogs.presets_dialog import PresetsDialog

    install_preset(_preset_file("雨夜"))
    dlg = PresetsDialog(S.AppSettings())
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.list.setCurrentItem(next(dlg.list.item(r) for r in range(dlg.list.count())
                                 if dlg.list.item(r).data(Qt.ItemDataRole.UserRole) == "雨夜"))
    assert dlg.selected() == "雨夜"
    with Answer("enter") as a:
        dlg.delete_btn.click()
    assert "雨夜" in a.asked[0][0] and "雨夜" in list_presets()
    with Answer("yes"):
        dlg.delete_btn.click()
    assert "雨夜" not in list_presets()


def test_deleting_a_connection_profile_asks_and_enter_keeps_it(qtbot):
    from liyuan_desktop.ui.settings.profiles import ProfilesDialog

    settings = S.AppSettings(providers=[ProviderSettings(name="p", base_url="http://127.0.0.1:9/v1", model="m")],
                             profiles=[ConnectionProfile(name="夜跑", provider="p")])
    S.save_settings(settings)
    dlg = ProfilesDialog(settings)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.list.setCurrentRow(0)
    delete = next(b for b in dlg.findChildren(QPushButton) if b.text() == i18n.tr("profiles.delete"))

    def saved() -> Optional[list[str]]:
        return [p.name for p in S.load_settings().profiles]

    with Answer("enter") as a:
        delete.click()
    assert "夜跑" in a.asked[0][0] and saved() == ["夜跑"] and dlg.list.count() == 1
    with Answer("yes"):
        delete.click()
    assert saved() == [] and dlg.list.count() == 0


async def test_restoring_over_a_chat_of_that_name_overwrites_nothing(qtbot):
    """恢复 never replaces what is there now (``core.chat.manage.restore`` numbers the folder), so it need not ask:
    the chat made since keeps its session, the restored one comes back beside it."""
    card = library.ensure_demo_card()
    d = new_chat(card, "同名")
    item = core_manage.delete_chat(d)
    again = new_chat(card, "同名")
    now = (again / "session.jsonl").read_bytes()
    win = make_window(qtbot)
    dlg = win.manager.show_trash()
    dlg.list.topLevelItem(0).setSelected(True)
    with Answer("enter") as a:
        dlg.restore_btn.click()
    assert a.asked == [] and not item.path.exists()
    assert (again / "session.jsonl").read_bytes() == now and (again.parent / "同名-2" / "session.jsonl").is_file()


# -- an agent chat's chapters and checkpoints --------------------------------------------------------------------------
def _agent_chat(tmp_path: Path) -> Chat:
    from helpers import DEMO_CARD

    from liyuan_desktop.core.cards import load_card

    chat = Chat.create(tmp_path / "局", load_card(DEMO_CARD), ReplayModel(actor=[]), mode="agent")
    chat.import_chapters([("000-开场.md", "旧的开场。\n"), ("001-雨夜.md", "雨。\n")], message="导入两章")
    return chat


def _chapters(chat: Chat) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(chat.story.story_dir.glob("*.md"))}


def test_deleting_a_chapter_asks_and_enter_keeps_it(qtbot, tmp_path):
    from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane

    chat = _agent_chat(tmp_path)
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.set_chat(chat)
    pane.show()
    pane.select("001-雨夜.md")
    with Answer("enter") as a:
        pane.delete_btn.click()
    assert "001-雨夜.md" in a.asked[0][0] and "001-雨夜.md" in _chapters(chat)
    with Answer("yes"):
        pane.delete_btn.click()
    assert "001-雨夜.md" not in _chapters(chat)


def test_restoring_a_checkpoint_asks_and_keeps_unsaved_chapter_edits(qtbot, tmp_path):
    from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane
    from liyuan_desktop.ui.writing.checkpoint_timeline import CheckpointTimelinePane

    chat = _agent_chat(tmp_path)
    first = chat.history_log.latest()
    chat.story.write("000-开场.md", "改过的开场。\n")
    chat.history_log.commit(author="user", message="改开场")
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.set_chat(chat)
    pane.show()
    assert pane.open_chapter("000-开场.md")
    pane.editor.autosave_ms = 0  # the question's event loop must not autosave the edits away
    pane.editor.text.selectAll()
    pane.editor.text.insertPlainText("还没保存的开场。\n")  # typed, not saved
    assert pane.editor.dirty
    tl = CheckpointTimelinePane()
    qtbot.addWidget(tl)
    tl.set_chat(chat)
    tl.show()
    tl.select(first.id)
    for how in ("enter", "esc"):
        with Answer(how) as a:
            tl.files_btn.click()
        assert len(a.asked) == 1 and _chapters(chat)["000-开场.md"] == "改过的开场。\n", how
    with Answer("yes"):
        tl.files_btn.click()
    assert _chapters(chat)["000-开场.md"] == "旧的开场。\n"
    pane.editor.check_disk()  # what the window does when the timeline restored
    assert pane.editor.editor_text() == "还没保存的开场。\n" and pane.editor.dirty
    assert not pane.editor.banner.isHidden()  # the conflict is shown; saving will ask before overwriting


# -- unsaved edits --------------------------------------------------------------------------------------------------
async def test_closing_the_world_book_editor_with_unsaved_edits_asks_and_enter_keeps_it_open(qtbot, tmp_path):
    from uihelpers import wait_for

    from liyuan_desktop.ui.dialogs.book_editor import BookEditorDialog

    chat = Chat.create(tmp_path / "c", library.ensure_demo_card().load(), ReplayModel(actor=[]))
    dlg = BookEditorDialog(chat)
    qtbot.addWidget(dlg)
    dlg.show()
    await wait_for(lambda: dlg.loaded, timeout=20)
    dlg.f_content.setPlainText("没保存的条目内容")
    assert dlg.dirty
    for how in ("enter", "esc"):
        with Answer(how) as a:
            dlg.close_btn.click()
        assert len(a.asked) == 1 and dlg.isVisible() and dlg.dirty, how
    with Answer("yes"):
        dlg.close_btn.click()
    assert not dlg.isVisible()
    assert "没保存的条目内容" not in json.dumps([e.content for e in chat.card_book().entries], ensure_ascii=False)
