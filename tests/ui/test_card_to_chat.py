"""Issue 26 §3 in the window: from card to chat in one step (double-click a card → its latest chat, or a new one;
an import offers a chat; the new-chat dialog starts on Enter), the Enter-sends setting, the card list's search,
favourites, sort, tags and each chat's last message, the message actions (copy, edit in place, branch, delete
asked first and recoverable) and the card's alternate greetings switched like a swipe on the opening.

Async tests run on the qasync loop (tests/ui/conftest.py); the page is driven with JavaScript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.meta import card_favorite
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.infra.i18n import set_language, tr
from liyuan_desktop.ui.window.card_list import DETAIL_ROLE, STAR_ROLE
from liyuan_desktop.ui.window.main_window import MainWindow

GREETINGS = ["梅雨时节，你推开了茶馆的门。", "雪夜，你在渡口等船。"]


def make_card(tmp_path: Path, name: str, tags: list[str], alternate: list[str] | None = None) -> library.CardRef:
    """A card file of our own (V2) imported into the library."""
    data = {"name": name, "description": f"{name}的描述", "personality": "", "scenario": "",
            "first_mes": GREETINGS[0], "mes_example": "", "tags": tags, "alternate_greetings": alternate or []}
    f = tmp_path / f"{name}.json"
    f.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}, ensure_ascii=False), "utf-8")
    return library.import_card(f)


def make_window(qtbot, **settings) -> MainWindow:
    win = MainWindow(S.AppSettings(**settings))
    qtbot.addWidget(win)
    win.show()
    return win


def top_rows(win: MainWindow) -> dict[str, object]:
    return {win.tree.topLevelItem(i).text(0): win.tree.topLevelItem(i) for i in range(win.tree.topLevelItemCount())}


def shown_cards(win: MainWindow) -> list[str]:
    return [win.tree.topLevelItem(i).text(0) for i in range(win.tree.topLevelItemCount())
            if not win.tree.topLevelItem(i).isHidden()]


def make_chat(card: library.CardRef, title: str, lines: list[str] = ()) -> library.ChatRef:
    d = library.new_chat_dir(card, title)
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]))
    for text in lines:  # a user message (unanswered) is enough for a summary
        chat.tree.append("user", text=text)
    chat.tree.commit()
    chat.write_meta()
    chat.close()
    return library.ChatRef(name=d.name, dir=str(d))


async def test_double_click_a_card_opens_its_latest_chat_or_starts_one(qtbot, tmp_path):
    a = make_card(tmp_path, "白鹭", ["古风"])
    make_chat(a, "旧的")
    newest = make_chat(a, "新的", ["最后一句"])
    b = make_card(tmp_path, "无聊天", [])
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    rows = top_rows(win)
    opened: list = []
    win.chatShown.connect(opened.append)
    # a double-click emits both signals (offscreen QTest cannot synthesise one): the card opens once
    win.tree.itemDoubleClicked.emit(rows["白鹭"], 0)
    win.tree.itemActivated.emit(rows["白鹭"], 0)
    await wait_for(lambda: win.chat is not None and win.chat_ref is not None and not win.busy)
    assert Path(win.chat_ref.dir) == Path(newest.dir)  # the latest chat
    assert len(opened) == 1
    # a card without chats: a new role-play chat is made and opened (Enter on the row activates it)
    win.tree.setCurrentItem(top_rows(win)["无聊天"])
    win.tree.setFocus()
    QTest.keyClick(win.tree, Qt.Key.Key_Return)
    await wait_for(lambda: win.chat is not None and win.card_ref is not None and win.card_ref.dir == b.dir
                   and win.chat_ref is not None and Path(win.chat_ref.dir).parent.parent == Path(b.dir))
    assert win.chat.mode == "roleplay" and len(library.list_chats(b)) == 1


async def test_importing_a_card_offers_a_chat_and_the_new_chat_dialog_starts_on_enter(qtbot, tmp_path):
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    f = tmp_path / "card.json"
    f.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0",
                             "data": {"name": "新来的", "first_mes": "你好。", "tags": ["测试"]}}, ensure_ascii=False), "utf-8")
    ref = win.import_card_file(str(f))
    assert ref is not None
    box = win._start_chat_offer
    assert box.isVisible() and box.defaultButton() is box.button(QMessageBox.StandardButton.Yes)
    assert "新来的" in box.text()
    QTest.keyClick(box, Qt.Key.Key_Return)  # Enter: Yes
    await wait_for(lambda: win.chat is not None and win.card_ref is not None and win.card_ref.dir == ref.dir)
    assert len(library.list_chats(ref)) == 1
    # 新对话…: the dialog's choices have defaults; Enter starts the chat
    win.tree.setCurrentItem(top_rows(win)["新来的"])
    from PySide6.QtCore import QTimer

    def press_enter() -> None:
        dlg = win._new_chat_dialog
        QTest.keyClick(dlg.focusWidget() or dlg, Qt.Key.Key_Return)

    QTimer.singleShot(200, press_enter)
    win.new_chat_dialog()
    await wait_for(lambda: len(library.list_chats(ref)) == 2)
    await wait_for(lambda: win.chat_ref is not None and Path(win.chat_ref.dir).parent.parent == Path(ref.dir)
                   and len(library.list_chats(ref)) == 2 and not win.busy)


async def test_enter_sends_with_the_setting_and_makes_a_new_line_without(qtbot):
    win = make_window(qtbot, enter_sends=True)
    await wait_for(win.view.is_ready)
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "回车")
    chat = Chat.create(d, ref.load(), ReplayModel(
        actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "嗯。"}}]},
               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
        scribe=['{"patch": {}}']))
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    assert win.input.placeholderText() == tr("input.placeholder.enter")
    win.input.setFocus()
    win.input.setPlainText("第一行")
    win.input.moveCursor(win.input.textCursor().MoveOperation.End)
    QTest.keyClick(win.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # Shift+Enter: a new line
    win.input.insertPlainText("第二行")
    assert win.input.toPlainText() == "第一行\n第二行" and not win.results
    QTest.keyClick(win.input, Qt.Key.Key_Return)  # Enter sends
    await wait_for(lambda: len(win.results) == 1 and not win.busy)
    assert chat.last_user_text() == "第一行\n第二行"
    assert win.input.toPlainText() == "" and chat.last_user_text() == "第一行\n第二行"
    # the setting off (what a settings file from before the setting reads as): Enter is a new line again
    win.apply_settings(win.settings.model_copy(update={"enter_sends": False}))
    assert win.input.placeholderText() == tr("input.placeholder.ctrl")
    win.input.setPlainText("甲")
    win.input.moveCursor(win.input.textCursor().MoveOperation.End)
    QTest.keyClick(win.input, Qt.Key.Key_Return)
    assert win.input.toPlainText() == "甲\n" and len(win.results) == 1
    set_language("en")
    try:
        win.send_keys.sync()
        assert win.input.placeholderText() == "Your words for this beat… (Enter for a new line, Ctrl+Enter to send)"
    finally:
        set_language("zh")


def test_enter_sends_is_the_default_for_new_settings_only(qtbot):
    assert S.load_settings().enter_sends is True  # no settings file yet
    S.settings_path().write_text(json.dumps({"theme": "dark"}), "utf-8")  # written before the setting existed
    assert S.load_settings().enter_sends is False
    from liyuan_desktop.ui.settings.settings import SettingsDialog

    dlg = SettingsDialog(S.load_settings())
    qtbot.addWidget(dlg)
    assert not dlg.enter_sends_check.isChecked()
    dlg.enter_sends_check.setChecked(True)
    assert dlg.collect().enter_sends is True
    S.save_settings(dlg.collect())
    assert S.load_settings().enter_sends is True


async def test_card_list_search_favourites_sort_tags_and_chat_lines(qtbot, tmp_path):
    a = make_card(tmp_path, "白鹭", ["古风", "武侠"])
    b = make_card(tmp_path, "Zed", ["scifi"])
    make_chat(a, "第一场", ["你好", "今天下雨了吗？"])
    win = make_window(qtbot)
    # the second lines come from the worker: tags under a card, date · length · last message under a chat
    await wait_for(lambda: top_rows(win)["白鹭"].data(0, DETAIL_ROLE) == "#古风 #武侠")
    chat_row = top_rows(win)["白鹭"].child(0)
    await wait_for(lambda: "今天下雨了吗？" in (top_rows(win)["白鹭"].child(0).data(0, DETAIL_ROLE) or ""))
    chat_row = top_rows(win)["白鹭"].child(0)
    assert "3 条" in chat_row.data(0, DETAIL_ROLE)  # the opening and two messages
    assert chat_row.text(0) == "第一场"  # the first column stays the bare name
    # search by name and by tag
    bar = win.card_bar
    bar.search.setText("scifi")
    assert shown_cards(win) == ["Zed"]
    bar.search.setText("白")
    assert shown_cards(win) == ["白鹭"]
    bar.search.setText("#武侠")
    assert shown_cards(win) == ["白鹭"]
    bar.search.setText("")
    # sort by name; then star Zed: favourites come first and the star is kept in the card's liyuan.json
    bar.sort.setCurrentIndex(bar.sort.findData("name"))
    names = shown_cards(win)
    assert names.index("Zed") < names.index("白鹭")  # case-folded code points: Latin before CJK
    win.tree.setCurrentItem(top_rows(win)["白鹭"])
    assert bar.star.text() == "☆"
    bar.star.click()
    assert card_favorite(a.dir)
    await wait_for(lambda: shown_cards(win)[0] == "白鹭" and top_rows(win)["白鹭"].data(0, STAR_ROLE) is True)
    bar.fav_only.setChecked(True)
    assert shown_cards(win) == ["白鹭"]
    bar.fav_only.setChecked(False)
    assert "Zed" in shown_cards(win)
    # created: the newest import first (favourites still first)
    bar.sort.setCurrentIndex(bar.sort.findData("created"))
    assert shown_cards(win)[0] == "白鹭"
    assert b.name in shown_cards(win)
    # the language switched (the window built again: ui/window/language_switch.py): the sort's items and the rows'
    # second lines follow, the sort chosen stays
    set_language("en")
    try:
        win = win.language_changed("en")
        qtbot.addWidget(win)
        bar = win.card_bar
        assert [bar.sort.itemText(i) for i in range(3)] == ["Recent", "Name", "Created"]
        assert bar.sort.currentData() == "created"
        await wait_for(lambda: "白鹭" in top_rows(win) and top_rows(win)["白鹭"].childCount() > 0
                       and "messages" in (top_rows(win)["白鹭"].child(0).data(0, DETAIL_ROLE) or ""))
        assert "3 messages" in top_rows(win)["白鹭"].child(0).data(0, DETAIL_ROLE)
    finally:
        set_language("zh")
        win = win.language_changed("zh")
        qtbot.addWidget(win)


async def test_a_card_with_200_chats_lists_them_from_the_worker(qtbot, tmp_path):
    card = make_card(tmp_path, "多聊", ["长"])
    first = make_chat(card, "c000", ["第一句"])
    for i in range(1, 200):  # copies of one chat: the folder is what the list reads
        shutil.copytree(first.dir, Path(first.dir).parent / f"c{i:03d}")
    win = make_window(qtbot)
    row = top_rows(win)["多聊"]
    assert row.childCount() == 200  # names and dates at once (meta.json), the rest from the worker
    await wait_for(lambda: all("第一句" in (top_rows(win)["多聊"].child(k).data(0, DETAIL_ROLE) or "")
                               for k in range(200)))


async def test_message_actions_copy_branch_and_delete_asked_first(qtbot, monkeypatch):
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "动作")
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "月色很好。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = Chat.create(d, ref.load(), model)
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    win.input.setPlainText("看看月亮")
    win.send_clicked()
    await wait_for(lambda: len(win.results) == 1 and not win.busy)
    bars = "Array.from(document.querySelectorAll('#log article.msg')).map(a => Array.from(a.querySelectorAll('.msg-actions button')).map(b => b.className))"
    await wait_for(lambda: True)
    acts = await js(win, bars)
    assert acts[0] == ["act-copy", "act-branch", "act-hide"]  # the opening
    assert acts[1] == ["act-copy", "act-edit", "act-branch", "act-hide", "act-delete"] == acts[2]
    # copy: the stored text to the clipboard
    await js(win, "(document.querySelectorAll('#log [data-role=assistant] .act-copy')[0].click(), 1)")
    await wait_for(lambda: QGuiApplication.clipboard().text() == "月色很好。")
    user_id = chat.tree.latest("user").id
    # delete: asked first, No keeps everything (the real box: Enter answers No)
    reply_id = chat.tree.latest("assistant").id
    leaf = chat.tree.leaf_id

    def answer(key):
        def go():
            box = QApplication.activeModalWidget()
            if box is not None:
                QTest.keyClick(box, key)
        return go

    from PySide6.QtCore import QTimer

    QTimer.singleShot(300, answer(Qt.Key.Key_Return))
    assert not win.reply_actions.delete_message(reply_id)
    assert chat.tree.leaf_id == leaf
    # Yes: the reply leaves the shown branch, the user message stays; the old branch is still in the tree
    assert win.reply_actions.delete_message(reply_id, ask=lambda *_: True)
    assert [i["role"] for i in chat.transcript()] == ["opening", "user"]
    assert reply_id in chat.tree.entries
    await wait_for(lambda: len(win.transcript.items) == 2)
    chat.select(reply_id)  # recoverable: the navigator's way back
    assert [i["role"] for i in chat.transcript()] == ["opening", "user", "assistant"]
    # the context menu holds the same actions for the message right-clicked
    from PySide6.QtWidgets import QMenu

    menu = QMenu()
    win.view._message_menu(menu, {"id": user_id, "role": "user"})
    assert [a.text() for a in menu.actions() if not a.isSeparator()] == [tr("msg.copy"), tr("msg.edit"), tr("msg.hide"),
                                                                          tr("msg.delete")]
    menu.actions()[2].trigger()  # 编辑: the editor opens in place
    assert await _until(win, "(document.querySelector('#log .inline-edit textarea')||{}).value", "看看月亮")
    # branch here: the window's 从这里新建对话 gets the message
    branched: list[str] = []
    win.view.branchFromRequested.connect(branched.append)
    await js(win, "(document.querySelectorAll('#log [data-role=user] .act-branch')[0].click(), 1)")
    await wait_for(lambda: bool(branched))
    assert branched == [user_id]


async def test_alternate_greetings_switch_like_a_swipe_on_the_opening(qtbot, tmp_path):
    card = make_card(tmp_path, "开场", [], alternate=[GREETINGS[1]])
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    d = library.new_chat_dir(card, "问候")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]))
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), card, False
    win._after_open()
    count = "(function(){var s=document.querySelector('#log [data-role=opening] .swipe-count');return s?s.textContent:null})()"
    await wait_for(lambda: True)
    for _ in range(200):
        if await js(win, count) == "1/2":
            break
    assert await js(win, count) == "1/2"
    await js(win, "(document.querySelector('#log [data-role=opening] .swipe-next').click(), 1)")
    for _ in range(200):
        if await js(win, count) == "2/2":
            break
    assert await js(win, count) == "2/2"
    text = await js(win, "document.querySelector('#log [data-role=opening] .body').textContent")
    assert GREETINGS[1] in text and GREETINGS[0] not in text


async def _until(win, script, want, tries=300):
    for _ in range(tries):
        if await js(win, script) == want:
            return True
    return False


async def test_hide_a_message_from_the_prompt_keeps_it_shown(qtbot):
    win = make_window(qtbot)
    await wait_for(win.view.is_ready)
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "隐藏")

    def beat(text: str) -> list[dict]:
        return [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]},
                {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]

    chat = Chat.create(d, ref.load(), ReplayModel(actor=beat("一。") + beat("二。"), scribe=['{"patch": {}}'] * 2))
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    win.input.setPlainText("秘密的第一句")
    win.send_clicked()
    await wait_for(lambda: len(win.results) == 1 and not win.busy)
    first = chat.tree.latest("user").id
    await _until(win, "document.querySelectorAll('#log [data-role=user] .act-hide').length", 1)
    await js(win, "(document.querySelector('#log [data-role=user] .act-hide').click(), 1)")
    await wait_for(lambda: first in chat.hidden_messages)
    assert await _until(win, "document.querySelectorAll('#log .hidden-msg .hidden-badge').length", 1)
    assert await js(win, "document.querySelector('#log [data-role=user] .act-hide').textContent") == tr("msg.unhide")
    win.input.setPlainText("第二句")
    win.send_clicked()
    await wait_for(lambda: len(win.results) == 2 and not win.busy)
    sent = " ".join(str(m.content) for m in win.results[-1].sent)
    assert "第二句" in sent and "秘密的第一句" not in sent  # not sent, still shown
    assert "秘密的第一句" in [i["text"] for i in chat.transcript()]
    again = Chat.open(d, ref.load(), ReplayModel(actor=[]))  # kept on the tree
    try:
        assert again.hidden_messages == frozenset({first})
    finally:
        again.close()
    assert win.reply_actions.set_hidden(first, False) and not chat.hidden_messages
    assert any(str(m.content).endswith("秘密的第一句") or "秘密的第一句" in str(m.content)
               for m in chat.history().prompt_messages())
