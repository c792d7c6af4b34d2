"""Issue 28 in the window, for web-novel authors: the writing room's progress line says today's count against the
daily target, the streak and the buffer (存稿); 章节 → 网文设置… sets the length norm and the target and ticks the
published chapters, through ``Chat.set_webnovel``; the room follows the notice. Both languages."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.window.main_window import MainWindow
from liyuan_desktop.ui.writing.webnovel_panel import WebNovelDialog


def _turn(i: int, words: int) -> list[dict]:
    name = f"{i:03d}-第{i}章.md"
    return [{"content": "", "tool_calls": [{"name": "write", "arguments": json.dumps(
        {"path": name, "content": "雨" * words}, ensure_ascii=False)}]}, {"content": f"第{i}章好了。", "tool_calls": []}]


async def test_the_room_shows_the_daily_target_streak_and_buffer(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "网文")
    sizes = (2500, 1200, 3600)
    chat = Chat.create(d, card.load(), ReplayModel(actor=[s for i, n in enumerate(sizes, 1) for s in _turn(i, n)],
                                                   scribe=['{"patch": {}}'] * 3), mode="agent")
    for i in range(1, 4):
        assert (await chat.send(f"写第{i}章")).error is None
    chat.close()

    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    wp = win.writing_panes
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: wp.data is not None)
    assert "存稿 3 章" in wp.status_progress.text() and "2 章不合字数" in wp.status_progress.text()
    assert any(a.objectName() == "webNovelAction" for a in win.chapter_pane.list.actions())

    dlg = WebNovelDialog(wp.chat, wp.data.progress, win.session, win)
    qtbot.addWidget(dlg)
    rows = [dlg.list.item(i).text() for i in range(dlg.list.count())]
    assert rows[1].endswith("偏短") and rows[2].endswith("偏长")
    dlg.min_box.setValue(5000)  # above the maximum: refused, shown, nothing saved
    dlg.accept()
    assert "下限不能高于上限" in dlg.error.text()  # a clear sentence, not a validation dump
    dlg.min_box.setValue(1000)
    dlg.daily_box.setValue(6000)
    dlg.list.item(0).setCheckState(Qt.CheckState.Checked)
    shot = os.environ.get("LIYUAN_SHOTS_DIR")
    if shot:
        Path(shot).mkdir(parents=True, exist_ok=True)
        dlg.grab().save(str(Path(shot) / "webnovel_dialog.png"))
    dlg.accept()
    assert dlg.result() == dlg.DialogCode.Accepted
    await wait_for(lambda: "存稿 2 章" in wp.status_progress.text())
    text = wp.status_progress.text()
    assert "日更 7300/6000" in text and "连更 1 天" in text and "1 章不合字数" in text
    if shot:
        win.grab().save(str(Path(shot) / "webnovel_room.png"))

    from liyuan_desktop.ui.infra import i18n
    from liyuan_desktop.ui.writing.outline_pane import progress_text

    i18n.set_language("en")
    try:
        line = progress_text(wp.data.progress)
        assert "daily 7300/6000" in line and "1-day streak" in line and "buffer 2" in line
    finally:
        i18n.set_language("zh")
