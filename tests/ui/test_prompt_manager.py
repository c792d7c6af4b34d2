"""Issue 26 §2 in the real window (offscreen): the 预设 dialog's 提示词管理 tab over an imported SillyTavern preset —
prompts listed in order with markers greyed, toggled, reordered (a drop and the ↑ button), edited; saved, the chat
that uses the preset reads it again (its messages kept) and the next beat's prompt (the inspector's record) follows
the new order; exported, the JSON equals the input except what was changed."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from pathlib import Path

import pytest
from helpers import shared_path
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDropEvent
from test_destructive_confirm import Answer
from test_panes_follow_chat import SCRIBE, SEAL, w
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.manager import PromptManager
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.window.main_window import MainWindow

CUSTOM = "5f1d3c2a-aaaa-4bbb-8ccc-123456789abc"


def st_preset() -> dict:
    """A chat-completion preset in SillyTavern's shape: built-ins, markers, a custom prompt with a key Liyuan does
    not model, the old 100000 list beside the 100001 one, source keys and an unknown top-level key."""
    prompts = [
        {"name": "Main Prompt", "system_prompt": True, "role": "system", "content": "主提示：写{{char}}。",
         "identifier": "main"},
        {"identifier": "worldInfoBefore", "name": "World Info (before)", "system_prompt": True, "marker": True},
        {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
        {"identifier": "style", "name": "文风", "system_prompt": False, "role": "system", "content": "文风：短句。",
         "marker": False, "injection_position": 0, "injection_depth": 4, "forbid_overrides": False},
        {"identifier": CUSTOM, "system_prompt": False, "enabled": False, "marker": False, "name": "规矩",
         "role": "system", "content": "规矩：不替用户说话。", "injection_position": 0, "injection_depth": 4,
         "injection_order": 100, "injection_trigger": [], "forbid_overrides": False,
         "st_archichat": {"keywordActivation": {"keywords": ["雨"]}}},
        {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
        {"name": "Post-History Instructions", "system_prompt": True, "role": "system", "content": "收尾。",
         "identifier": "jailbreak"},
    ]
    order = ["main", "worldInfoBefore", "charDescription", "style", CUSTOM, "chatHistory", "jailbreak"]
    return {"chat_completion_source": "openai", "openai_model": "gpt-4-turbo", "temperature": 0.9,
            "openai_max_context": 8000, "stream_openai": True, "prompts": prompts,
            "prompt_order": [{"character_id": 100000, "order": [{"identifier": i, "enabled": True} for i in order]},
                             {"character_id": 100001, "order": [{"identifier": i, "enabled": True} for i in order]}],
            "extensions": {"SPreset": {"ChatSquash": {"enabled": False}}}, "some_future_key": [1, {"x": None}]}


async def open_window_with_chat(qtbot) -> MainWindow:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "提示词管理")
    Chat.create(d, card.load(), ReplayModel(actor=[]))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1200, 760)
    win.show()
    await wait_for(win.view.is_ready)
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    return win


async def play(win: MainWindow, words: str, reply: str) -> list:
    win.chat.model = ReplayModel(actor=[w(reply), SEAL], scribe=[SCRIBE])
    n = len(win.results)
    win.input.setPlainText(words)
    win.send_clicked()
    await wait_for(lambda: len(win.results) > n and not win.busy)
    return win.chat.inspect_beat(win.chat.transcript()[-1]["id"])[0]["request"]["messages"]


def drop(pm, ident: str, onto: str, lower: bool = False) -> None:
    """Drop the row ``ident`` (selected, as a drag starts) on the upper (or ``lower``) half of the row ``onto``,
    carrying what the list's own drag carries."""
    lst = pm.list
    lst.setCurrentItem(item(pm, ident))
    mime = lst.model().mimeData([lst.indexFromItem(item(pm, ident), 0)])
    rect = lst.visualItemRect(item(pm, onto))
    pos = QPointF(rect.center().x(), rect.bottom() - 2 if lower else rect.top() + 2)
    lst.dropEvent(QDropEvent(pos, Qt.DropAction.MoveAction, mime, Qt.MouseButton.LeftButton,
                             Qt.KeyboardModifier.NoModifier))


def names(pm) -> list[str]:
    return [pm.list.topLevelItem(i).text(1) for i in range(pm.list.topLevelItemCount())]


def item(pm, ident: str):
    return next(pm.list.topLevelItem(i) for i in range(pm.list.topLevelItemCount())
                if pm.list.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == ident)


async def test_toggle_reorder_edit_save_reaches_the_chat_and_exports_losslessly(qtbot, tmp_path):
    src = st_preset()
    path = home() / "雨夜预设.json"
    path.write_text(json.dumps(src, ensure_ascii=False, indent=4), "utf-8")
    win = await open_window_with_chat(qtbot)
    await play(win, "开始", "雨下了起来。")
    win.presets_action.trigger()
    dlg = win.presets_dialog
    assert dlg.import_files([str(path)]) == ["雨夜预设"]
    dlg.use_in_chat("雨夜预设")
    assert "▶ 雨夜预设" in dlg.list.currentItem().text()  # repainted from the broadcast notice
    dlg.tabs.setCurrentWidget(dlg.prompts)
    pm = dlg.prompts
    assert names(pm) == ["Main Prompt", "◆ World Info (before)", "◆ Char Description", "文风", "规矩",
                         "◆ Chat History", "Post-History Instructions"]
    assert item(pm, "chatHistory").flags() & Qt.ItemFlag.ItemIsUserCheckable  # ST lets the history be switched
    pm.list.setCurrentItem(item(pm, "charDescription"))
    assert not pm.editor.content.isEnabled() and "标记" in pm.editor.note.text()  # a marker: no text to edit
    await wait_for(lambda: pm.chat_counts)  # the chat's counts, from a worker
    assert int(item(pm, "charDescription").text(4)) > 0 and "按本对话计" in pm.header.text()
    transcript = [i["text"] for i in win.chat.transcript()]

    item(pm, "style").setCheckState(0, Qt.CheckState.Unchecked)  # the check box: 文风 off
    drop(pm, "jailbreak", "main")  # dragged: 收尾 above 主提示
    await wait_for(lambda: pm.list.identifiers()[0] == "jailbreak")
    pm.list.setCurrentItem(item(pm, CUSTOM))
    for _ in range(4):  # ↑ four times: 规矩 to the second row
        pm.buttons["pm.up"].click()
    pm.list.setCurrentItem(item(pm, "main"))
    pm.editor.content.setPlainText("主提示（改）：写{{char}}。")
    pm.editor.apply_btn.click()
    assert names(pm)[:3] == ["Post-History Instructions", "规矩", "Main Prompt"]
    assert "未保存" in pm.header.text()
    pm.buttons["pm.save"].click()
    assert "未保存" not in pm.header.text()

    rows = win.chat.preset_prompt_rows(PromptManager.load("雨夜预设"))
    assert [r.identifier for r in rows][:3] == ["jailbreak", CUSTOM, "main"]
    assert not next(r for r in rows if r.identifier == "style").enabled
    assert [i["text"] for i in win.chat.transcript()] == transcript  # switching the preset kept the chat
    second = await play(win, "继续", "雨停了。")
    system = second[0]["content"]
    assert "文风：短句。" not in system and "主提示（改）" in system
    assert system.index("规矩：不替用户说话。") < system.index("主提示（改）")
    assert ("assistant", "雨下了起来。") in [(m["role"], m["content"]) for m in second]

    out = tmp_path / "导出.json"
    assert pm.export(out)
    got = json.loads(out.read_text("utf-8"))
    assert list(got) == list(src)
    for key in src:
        if key not in ("prompts", "prompt_order"):
            assert json.dumps(got[key], ensure_ascii=False) == json.dumps(src[key], ensure_ascii=False), key
    want = copy.deepcopy(src["prompts"])
    want[0]["content"] = "主提示（改）：写{{char}}。"
    assert got["prompts"] == want  # the custom prompt's unknown key kept
    assert got["prompt_order"][0] == src["prompt_order"][0]  # the old 100000 list untouched
    new = got["prompt_order"][1]["order"]
    assert [i["identifier"] for i in new] == ["jailbreak", CUSTOM, "main", "worldInfoBefore", "charDescription",
                                              "style", "chatHistory"]
    assert [i["enabled"] for i in new] == [True, True, True, True, True, False, True]
    # save as: a new library preset, selected and edited from now on; the chat keeps the one it uses
    assert not pm.save_as("雨夜预设")  # taken: said in the status line, nothing written
    assert "雨夜预设" in dlg.status.text()
    assert pm.save_as("雨夜预设二") and pm.manager.name == "雨夜预设二"
    assert dlg.selected() == "雨夜预设二" and win.chat.preset_name() == "雨夜预设"
    assert "雨夜预设二" in [dlg.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(dlg.list.count())]
    await shots(qtbot, win, dlg)
    dlg.close()


async def test_add_and_delete_a_custom_prompt_asks_first(qtbot):
    path = home() / "小预设.json"
    path.write_text(json.dumps(st_preset(), ensure_ascii=False), "utf-8")
    win = await open_window_with_chat(qtbot)
    win.presets_action.trigger()
    dlg = win.presets_dialog
    dlg.import_files([str(path)])
    pm = dlg.prompts
    assert pm.insert_btn.isHidden()  # every prompt is listed
    pm.list.setCurrentItem(item(pm, "style"))
    pm.manager.detach("style")  # as SillyTavern's "remove from list" leaves it: defined, not listed
    pm.paint()
    assert not pm.insert_btn.isHidden() and pm.unlisted.currentData() == "style"
    pm.insert_btn.click()
    assert pm.list.identifiers()[0] == "style" and item(pm, "style").checkState(0) == Qt.CheckState.Unchecked
    new = pm.add("新规则")
    assert names(pm)[0] == "新规则" and pm.current_id() == new
    pm.editor.content.setPlainText("新规则的内容。")
    pm.editor.role.setCurrentIndex(pm.editor.role.findData("user"))
    pm.editor.position.setCurrentIndex(1)
    pm.editor.depth_box.setValue(2)
    pm.editor.apply_btn.click()
    assert item(pm, new).text(3) == "对话中 @2" and item(pm, new).text(2) == "user"
    drop(pm, "main", "chatHistory", lower=True)  # dragged below the history
    await wait_for(lambda: pm.list.identifiers().index("main") == pm.list.identifiers().index("chatHistory") + 1)
    assert pm.list.identifiers()[-1] == "jailbreak" and pm.current_id() == "main"
    assert not pm.buttons["pm.delete"].isEnabled()  # built-ins are switched off, never deleted
    pm.list.setCurrentItem(item(pm, new))
    with Answer("enter") as a:
        pm.buttons["pm.delete"].click()
    assert "新规则" in a.asked[0][0] and "新规则" in names(pm)  # Enter is No
    with Answer("yes"):
        pm.buttons["pm.delete"].click()
    assert "新规则" not in names(pm)
    with Answer("enter"):  # unsaved edits: closing asks, and Enter keeps the dialog open
        dlg.close()
    assert dlg.isVisible()
    with Answer("yes"):
        dlg.close()
    assert not dlg.isVisible()


def test_the_shared_default_preset_round_trips_through_the_tab(qtbot, tmp_path):
    fixture = shared_path("fixtures", "cards", "formats", "openai-preset-Default.json")
    if fixture is None or not Path(fixture).is_file():
        pytest.skip("../shared/fixtures is absent")
    from liyuan_desktop.ui.dialogs.presets_dialog import PresetsDialog

    dlg = PresetsDialog(S.AppSettings())
    qtbot.addWidget(dlg)
    dlg.import_files([str(fixture)])
    pm = dlg.prompts
    src = json.loads(Path(fixture).read_text("utf-8"))
    assert len(names(pm)) == len(next(o for o in src["prompt_order"] if o["character_id"] == 100001)["order"])
    out = tmp_path / "same.json"
    assert pm.export(out)
    assert json.loads(out.read_text("utf-8")) == src  # nothing edited: equal to SillyTavern's file
    item(pm, "nsfw").setCheckState(0, Qt.CheckState.Unchecked)
    assert pm.export(out)
    got = json.loads(out.read_text("utf-8"))
    assert {k: v for k, v in got.items() if k != "prompt_order"} == {k: v for k, v in src.items() if k != "prompt_order"}
    assert pm.save() and not pm.manager.changed


async def shots(qtbot, win, dlg) -> None:
    """Screenshots of the tab in Chinese and English when LIYUAN_SHOTS names a folder."""
    folder = os.environ.get("LIYUAN_SHOTS")
    if not folder:
        return
    from liyuan_desktop.ui.dialogs.presets_dialog import PresetsDialog

    dlg.resize(1080, 680)
    dlg.prompts.list.setCurrentItem(item(dlg.prompts, "main"))
    await asyncio.sleep(0.3)
    dlg.grab().save(str(Path(folder) / "prompt-manager-zh.png"))
    from liyuan_desktop.ui.infra import theme

    theme.apply("dark")
    try:
        dlg.prompts.paint()  # the markers' grey is the theme's
        await asyncio.sleep(0.3)
        dlg.grab().save(str(Path(folder) / "prompt-manager-zh-dark.png"))
    finally:
        theme.apply("light")
    i18n.set_language("en")
    try:
        en = PresetsDialog(win.settings, win.chat, win, session=win.session)
        qtbot.addWidget(en)
        en.tabs.setCurrentWidget(en.prompts)
        en.resize(1080, 680)
        en.show()
        await wait_for(lambda: en.prompts.chat_counts)
        en.prompts.list.setCurrentItem(item(en.prompts, CUSTOM))
        await asyncio.sleep(0.3)
        en.grab().save(str(Path(folder) / "prompt-manager-en.png"))
        en.close()
    finally:
        i18n.set_language("zh")
