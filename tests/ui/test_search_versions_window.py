"""Issue 24 §3, 搜索所有对话: the count at the end is the rows listed (it once said 「找到 0 条」 beside four rows),
one row per message with its versions as child rows, and opening a version opens that chat, branch and version."""

from __future__ import annotations

import os
from pathlib import Path

from test_search_window import HIT, SEAL, until, w
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow


async def test_versions_are_one_row_the_count_is_right_and_each_version_opens(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "灯下")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("灯亮了。"), SEAL, w("灯灭了。"), SEAL],
                                                   scribe=['{"patch": {}}'] * 4))
    await chat.send("我看那盏灯")
    first = chat.transcript()[-1]["id"]
    await chat.regenerate()
    second = chat.transcript()[-1]["id"]
    chat.select(first)
    other = library.new_chat_dir(card, "码头")
    Chat.create(other, card.load(), ReplayModel(actor=[w("码头的灯还亮着。"), SEAL], scribe=['{"patch": {}}']))
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    win.findChild(type(win.actions()[0]), "searchAllAction").trigger()
    dlg = win.search_dialog
    dlg.edit.setText("灯")
    dlg.search()
    await wait_for(lambda: not dlg.worker.running and dlg.go.isEnabled())
    assert len(dlg.hits) == 3  # the user's words and two versions of the reply
    assert dlg.results.topLevelItemCount() == 2
    assert dlg.status.text() == "找到 2 条消息（共 3 个版本）"
    row = next(dlg.results.topLevelItem(i) for i in range(2) if dlg.results.topLevelItem(i).childCount())
    assert row.text(4) == "2 个版本" and "灯亮了" in row.text(2)  # the version on the shown branch
    assert [row.child(i).text(4) for i in range(2)] == ["第 1 版", "第 2 版"]
    if os.environ.get("LIYUAN_SHOTS"):
        row.setExpanded(True)
        dlg.grab().save(str(Path(os.environ["LIYUAN_SHOTS"]) / "search-versions.png"))
    # the second version: its chat opens on its branch, scrolled to it with the words marked
    assert dlg.open_row(row.child(1))
    assert win.chat_ref.name == "灯下" and win.chat.transcript()[-1]["id"] == second
    found = await until(win, HIT, lambda v: v is not None)
    assert found[1] == ["灯"]
    # the message row opens the version that was on the shown branch when searched
    assert dlg.open_row(row)
    assert win.chat.transcript()[-1]["id"] == first
