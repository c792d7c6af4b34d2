"""Issue 26 §4 in the real window (offscreen): a SillyTavern Quick Reply set imported in the 快速回复 editor (the
report says STscript is not run), switched on, shows as buttons under the input; a click sends the reply as the
user's words in a replay chat, an "insert" reply and an STscript reply only fill the input box; edits in the editor
reach the bar; deleting asks first."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from test_destructive_confirm import Answer
from test_panes_follow_chat import SCRIBE, SEAL, w
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.quick_replies import active_sets, list_sets, load_set
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import home
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.main_window import MainWindow


def qr(i: int, label: str, message: str, **extra) -> dict:
    """A reply as SillyTavern's ``QuickReply.toJSON`` writes it."""
    return {"id": i, "label": label, "title": "", "message": message, "contextList": [], "preventAutoExecute": True,
            "isHidden": False, "executeOnStartup": False, "executeOnUser": False, "executeOnAi": False,
            "executeOnChatChange": False, "executeOnGroupMemberDraft": False, "automationId": "", **extra}


def st_set(name: str = "常用") -> dict:
    """A set as SillyTavern's Quick Reply "Export" saves it."""
    return {"version": 2, "name": name, "disableSend": False, "placeBeforeInput": False, "injectInput": False,
            "color": "rgba(0, 0, 0, 0)", "onlyBorderColor": False,
            "qrList": [qr(1, "继续", "继续写下去。"),
                       qr(2, "看看四周", "我环顾四周，{{char}}在做什么？", title="描写环境"),
                       qr(3, "生成", "/gen lock=on 写一段旁白 | /sendas name={{char}}"),
                       qr(4, "藏起来", "隐藏的", isHidden=True)],
            "idIndex": 5}


async def open_window(qtbot) -> MainWindow:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "快速回复")
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1200, 760)
    win.show()
    await wait_for(win.view.is_ready)
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    return win


def labels(bar) -> list[str]:
    return [b.text() for b in bar.buttons.values()]


async def test_import_enable_click_sends_and_inserts(qtbot):
    path = home() / "常用.json"
    path.write_text(json.dumps(st_set(), ensure_ascii=False), "utf-8")
    win = await open_window(qtbot)
    bar = win.quick_replies
    assert bar.isVisible() and labels(bar) == []
    dlg = bar.open_editor()
    assert dlg.import_files([str(path)]) == ["常用"]
    report = dlg.report.toPlainText()
    assert "不运行 STscript" in report and "生成" in report  # said on import, for the reply that holds it
    item = dlg.set_list.topLevelItem(0)
    item.setCheckState(1, Qt_checked())  # on for every chat
    assert active_sets() == ["常用"]
    assert labels(bar) == ["继续", "看看四周", "生成"]  # the hidden one is not on the bar
    assert "STscript" in bar.buttons[("常用", 3)].toolTip()

    # a click sends the reply as the user's words
    win.chat.model = ReplayModel(actor=[w("她点点头，继续说下去。"), SEAL], scribe=[SCRIBE])
    bar.buttons[("常用", 1)].click()
    await wait_for(lambda: bool(win.results) and not win.busy)
    users = [i["text"] for i in win.chat.transcript() if i.get("role") == "user"]
    assert users[-1] == "继续写下去。" and win.input.toPlainText() == ""
    # STscript is never run: its text only lands in the input box
    bar.buttons[("常用", 3)].click()
    assert win.input.toPlainText().startswith("/gen lock=on") and not win.busy
    n = len(win.chat.transcript())
    # the editor makes 看看四周 an "insert" reply: macros expanded, nothing sent
    dlg.replies.setCurrentRow(1)
    dlg.mode.setCurrentIndex(dlg.mode.findData("insert"))
    dlg.label.setText("环顾")
    assert dlg.apply_reply()
    assert labels(bar)[1] == "环顾" and load_set("常用").entry(2).mode == "insert"
    win.input.clear()
    bar.buttons[("常用", 2)].click()
    assert win.input.toPlainText() == f"我环顾四周，{win.chat.card.name}在做什么？"
    assert len(win.chat.transcript()) == n and not win.busy
    dlg.inject.setChecked(True)  # the set joins the reply to what the input box holds, before it
    dlg.before.setChecked(True)
    assert load_set("常用").injectInput and load_set("常用").placeBeforeInput
    win.input.setPlainText("然后呢")
    bar.buttons[("常用", 2)].click()
    assert win.input.toPlainText() == f"我环顾四周，{win.chat.card.name}在做什么？ 然后呢"
    new = dlg.add_reply("问候", "你好。")
    assert labels(bar)[-1] == "问候" and load_set("常用").qrList[-1].id == new
    await shots(qtbot, win, dlg)
    # deleting a set asks; Enter keeps it
    with Answer("enter") as a:
        dlg.findChild(type(dlg.reply_buttons["qred.add"]), "qred_delete_set").click()
    assert "常用" in a.asked[0][0] and list_sets() == ["常用"]
    with Answer("yes"):
        dlg.findChild(type(dlg.reply_buttons["qred.add"]), "qred_delete_set").click()
    assert list_sets() == [] and labels(bar) == []
    dlg.close()


async def test_a_set_on_for_this_chat_only(qtbot):
    path = home() / "本对话.json"
    path.write_text(json.dumps(st_set("本对话"), ensure_ascii=False), "utf-8")
    win = await open_window(qtbot)
    dlg = win.quick_replies.open_editor()
    dlg.import_files([str(path)])
    dlg.set_list.topLevelItem(0).setCheckState(2, Qt_checked())
    assert active_sets() == [] and active_sets(win.chat.dir) == ["本对话"]
    assert labels(win.quick_replies) == ["继续", "看看四周", "生成"]
    win.close_chat()
    assert labels(win.quick_replies) == []  # no chat shown: only sets on for every chat would show
    assert dlg.chat_dir is None and dlg.set_list.topLevelItem(0).text(2) == "（没有打开的对话）"
    dlg.close()


def Qt_checked():  # noqa: N802 - reads as the Qt constant
    from PySide6.QtCore import Qt

    return Qt.CheckState.Checked


async def shots(qtbot, win, dlg) -> None:
    """The bar under the input and the editor, in Chinese and English, when LIYUAN_SHOTS names a folder."""
    folder = os.environ.get("LIYUAN_SHOTS")
    if not folder:
        return
    from liyuan_desktop.ui.dialogs.quick_replies_dialog import QuickRepliesDialog
    from liyuan_desktop.ui.roleplay.quick_replies_bar import QuickRepliesBar

    await asyncio.sleep(0.3)
    win.input.parentWidget().grab().save(str(Path(folder) / "qr-bar-zh.png"))
    dlg.grab().save(str(Path(folder) / "qr-editor-zh.png"))
    from liyuan_desktop.ui.infra import theme

    theme.apply("dark")
    try:
        await asyncio.sleep(0.3)
        dlg.grab().save(str(Path(folder) / "qr-editor-zh-dark.png"))
        win.quick_replies.grab().save(str(Path(folder) / "qr-bar-zh-dark.png"))
    finally:
        theme.apply("light")
    i18n.set_language("en")
    try:
        bar = QuickRepliesBar(win.session, win.input, win.send_clicked)
        qtbot.addWidget(bar)
        bar.resize(900, 44)
        bar.show()
        en = QuickRepliesDialog(str(win.chat.dir))
        qtbot.addWidget(en)
        en.show()
        en.replies.setCurrentRow(0)
        await asyncio.sleep(0.3)
        bar.grab().save(str(Path(folder) / "qr-bar-en.png"))
        en.grab().save(str(Path(folder) / "qr-editor-en.png"))
        en.close()
    finally:
        i18n.set_language("zh")
