"""Issue 28, threads: one dialog adds a thread (the line, a note, the chapter it was planted in, the chapter it is due
by) instead of prompts in a row; positions are chapters once a chapter exists; the pane's 现在写到 is the furthest
chapter written on the branch."""

from __future__ import annotations

from pathlib import Path

from helpers import DEMO_CARD
from PySide6.QtWidgets import QDialogButtonBox

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.writing.thread_dialog import ThreadDialog, ThreadForm
from liyuan_desktop.ui.writing.threads_pane import ThreadsPane
from liyuan_desktop.ui.writing.writing_panes import gather


def _chat(tmp_path: Path) -> Chat:
    chat = Chat.create(tmp_path / "局", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]), mode="agent")
    chat.import_chapters([("001-渡口.md", "灯。\n"), ("002-夜谈.md", "风。\n")], message="导入两章")
    return chat


def test_the_dialog_asks_everything_at_once(qtbot):
    dlg = ThreadDialog(ThreadForm(), reached=2)
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()  # nothing to add yet
    dlg.title_edit.setText("  玉佩的来历 ")
    assert ok.isEnabled() and dlg.planted.value() == 2  # planted: the furthest chapter written, by default
    dlg.due.setValue(8)
    dlg.note_edit.setPlainText("第八章揭开")
    assert dlg.form() == ThreadForm(title="玉佩的来历", note="第八章揭开", planted=2, due=8)
    none = ThreadDialog(ThreadForm(), reached=None)
    qtbot.addWidget(none)
    assert none.form().planted is None and none.planted.text() == none.planted.specialValueText()


def test_a_thread_added_in_one_dialog_is_planted_in_a_chapter(qtbot, tmp_path):
    chat = _chat(tmp_path)
    pane = ThreadsPane()
    qtbot.addWidget(pane)
    pane.set_chat(chat)
    data = gather(chat)
    assert data.chapter == 2  # 现在写到 = the furthest chapter written on this branch
    pane.show_data(data)
    asked: list = []
    pane.ask_thread = lambda form, reached, edit: (asked.append((form, reached, edit)),
                                                   ThreadForm(title="旧信", note="阿檀写的", planted=1, due=2))[1]
    assert pane.add_thread()
    assert asked == [(ThreadForm(), 2, False)]
    (t,) = chat.threads()
    assert (t.title, t.note, t.planted.chapter, t.due_chapter) == ("旧信", "阿檀写的", 1, 2)
    pane.show_data(gather(chat))
    row = pane.tree.topLevelItem(0)
    assert row.text(2) == "第 1 章" and row.text(3) == "第 2 章"
    assert "现在写到第 2 章" in pane.summary.text()
    pane.tree.setCurrentItem(row)
    pane.ask_thread = lambda form, reached, edit: ThreadForm(title=form.title, note=form.note, due=None)
    assert pane.edit_thread()
    assert chat.threads()[0].due_chapter is None
    chat.close()
