"""Issue 17 "Manage" in the window: the card list's context menu (rename, duplicate, delete to the 回收站), 从这里新建
对话 from a message, the 回收站 dialog with restore, re-importing a card asks, and the list follows the data folder
(a chat made outside the window appears by itself).

Async tests run on the qasync loop (tests/ui/conftest.py) and poll with ``await asyncio.sleep``."""

from __future__ import annotations

import json
from pathlib import Path

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat import manage as core_manage
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window import manage as ui_manage
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def make_window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def rows(win: MainWindow) -> dict[str, list[str]]:
    out = {}
    for i in range(win.tree.topLevelItemCount()):
        top = win.tree.topLevelItem(i)
        out[top.text(0)] = [top.child(k).text(0) for k in range(top.childCount())]
    return out


def chat_item(win: MainWindow, name: str):
    for i in range(win.tree.topLevelItemCount()):
        top = win.tree.topLevelItem(i)
        for k in range(top.childCount()):
            if top.child(k).text(0) == name:
                return top.child(k)
    raise AssertionError(f"no row {name}: {rows(win)}")


async def played(card) -> tuple[Path, Chat]:
    d = library.new_chat_dir(card, "旧事")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("一。"), SEAL, w("二。"), SEAL], scribe=['{"patch": {}}'] * 2))
    await chat.send("甲")
    await chat.send("乙")
    return d, chat


async def test_rename_duplicate_delete_restore_from_the_card_list(qtbot, monkeypatch):
    card = library.ensure_demo_card()
    d, _ = await played(card)
    win = make_window(qtbot)
    win.refresh_tree()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    # the context menu of a chat row
    it = chat_item(win, "旧事")
    menu = win.manager.tree_menu(win.tree.visualItemRect(it).center())
    labels = [a.text() for a in menu.actions() if a.text()]
    assert labels[:3] == ["打开", "改名…", "复制为新对话"] and labels[-1] == "删除（移到回收站）"
    menu.close()
    # rename the open chat: it is reopened under the new name
    monkeypatch.setattr(ui_manage, "ask_text", lambda *a: "雨夜旧事")
    new = win.manager.rename_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    assert new is not None and win.chat_ref.dir == str(new) and win.chat.dir == new
    assert "雨夜旧事" in rows(win)[card.name]
    # 从这里新建对话 on the first reply
    first_reply = [i for i in win.chat.transcript() if i["role"] == "assistant"][0]["id"]
    win.view.branchFromRequested.emit(first_reply)
    await wait_for(lambda: win.chat_ref is not None and win.chat_ref.name == "雨夜旧事 的副本")
    assert [i["role"] for i in win.chat.transcript()] == ["opening", "user", "assistant"]
    # delete the open chat (after the question), then restore it from the 回收站
    monkeypatch.setattr(ui_manage, "ask_yes", lambda *a: True)
    copy_dir = Path(win.chat_ref.dir)
    item = win.manager.delete_chat(win.chat_ref)
    assert item is not None and win.chat is None and not copy_dir.exists()
    assert "雨夜旧事 的副本" not in rows(win)[card.name]
    dlg = win.manager.show_trash()
    assert dlg.list.topLevelItemCount() == 1 and dlg.list.topLevelItem(0).text(0) == "雨夜旧事 的副本"
    dlg.list.topLevelItem(0).setSelected(True)
    assert dlg.restore_selected() == [copy_dir]
    assert "雨夜旧事 的副本" in rows(win)[card.name] and dlg.list.topLevelItemCount() == 0
    assert not dlg.empty.isHidden()
    # a card: its menu offers the whole card to the trash
    top = win.tree.topLevelItem(0)
    menu = win.manager.tree_menu(win.tree.visualItemRect(top).center())
    assert [a.text() for a in menu.actions() if a.text()][-1] == "删除角色卡（连同它的对话，移到回收站）"
    menu.close()
    n_chats = len(library.list_chats(card))
    assert win.manager.delete_card(card) is not None
    assert card.name not in rows(win)
    win.manager.show_trash()
    dlg.list.topLevelItem(0).setSelected(True)
    dlg.restore_selected()
    assert len(rows(win)[card.name]) == n_chats


async def test_the_list_follows_the_data_folder(qtbot):
    card = library.ensure_demo_card()
    win = make_window(qtbot)
    win.refresh_tree()
    before = rows(win).get(card.name, [])
    d = library.new_chat_dir(card, "命令行开的")
    Chat.create(d, card.load(), ReplayModel(actor=[]))  # as `liyuan chat` would, outside the window
    await wait_for(lambda: "命令行开的" in rows(win).get(card.name, []), timeout=15)
    core_manage.delete_chat(d)
    await wait_for(lambda: rows(win).get(card.name, []) == before, timeout=15)


async def test_reimporting_a_card_asks_replace_keep_both_or_cancel(qtbot, tmp_path, monkeypatch):
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "白鹭", "first_mes": "旧开场"}}
    f = tmp_path / "bailu.json"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    win = make_window(qtbot)
    asked: list[str] = []
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, name: asked.append(name) or answer[0])
    answer = ["cancel"]
    ref = win.import_card_file(str(f))
    assert ref is not None and asked == []  # a new card: nothing to ask
    assert win.import_card_file(str(f)) == ref and asked == []  # the same file again: nothing to ask
    raw["data"]["first_mes"] = "新开场"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    assert win.import_card_file(str(f)) is None and asked == ["白鹭"]
    assert ref.load().first_mes == "旧开场"  # cancelled: nothing changed
    answer[0] = "keep"
    kept = win.import_card_file(str(f))
    assert kept is not None and kept.name == "白鹭-2" and ref.load().first_mes == "旧开场"
    raw["data"]["first_mes"] = "第三版"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    answer[0] = "replace"
    assert win.import_card_file(str(f)) == ref and ref.load().first_mes == "第三版"
    assert [i.kind for i in core_manage.list_trash()] == ["card"]  # the replaced files are kept
    assert sorted(rows(win)) == sorted(c.name for c in library.list_cards())


def test_reimport_choice_for_a_worker_import(qtbot, tmp_path, monkeypatch):
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "白鹭", "first_mes": "旧开场"}}
    f = tmp_path / "bailu.json"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    assert ui_manage.reimport_choice(None, str(f)) == "new"
    ref = ui_manage.import_with_choice(str(f), "new")
    raw["data"]["first_mes"] = "新开场"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, _n: "cancel")
    assert ui_manage.reimport_choice(None, str(f)) is None
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, _n: "replace")
    assert ui_manage.reimport_choice(None, str(f)) == "replace"
    assert ui_manage.import_with_choice(str(f), "replace") == ref and ref.load().first_mes == "新开场"


async def test_the_import_dialog_asks_before_the_worker_import(qtbot, tmp_path, monkeypatch):
    from liyuan_desktop.ui.window import library_tree as mw  # import_card_dialog lives there

    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "白鹭", "first_mes": "旧开场"}}
    f = tmp_path / "bailu.json"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    ref = library.import_card(f)
    raw["data"]["first_mes"] = "新开场"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    win = make_window(qtbot)
    monkeypatch.setattr(mw.QFileDialog, "getOpenFileName", lambda *a, **k: (str(f), ""))
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, _n: "cancel")
    win.import_card_dialog()
    assert [c.name for c in library.list_cards()].count("白鹭-2") == 0 and ref.load().first_mes == "旧开场"
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, _n: "replace")
    win.import_card_dialog()
    assert ref.load().first_mes == "新开场" and "白鹭-2" not in [c.name for c in library.list_cards()]
    monkeypatch.setattr(ui_manage, "ask_reimport", lambda _w, _n: "keep")
    raw["data"]["first_mes"] = "第三版"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    win.import_card_dialog()
    await wait_for(lambda: "白鹭-2" in [c.name for c in library.list_cards()], timeout=15)
