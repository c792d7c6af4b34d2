"""Issue 28 in the window: select a passage in the chapter editor, 改写 / 扩写 / 缩写 it; the proposal shows as a
prose diff; 采用 changes only that passage (a user checkpoint) and the editor shows it; 放弃 changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import DEMO_CARD
from PySide6.QtGui import QTextCursor
from uihelpers import wait_for

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane
from liyuan_desktop.ui.writing.rewrite_dialog import RewriteDialog, install, open_rewrite

TEXT = "雨下了一夜。\n林青推门进去，看见阿檀坐在灯下。\n天亮了。\n"
PASSAGE = "林青推门进去，看见阿檀坐在灯下。"


def _chat(tmp_path: Path, answers: list[str]) -> Chat:
    chat = Chat.create(tmp_path / "书", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=answers), mode="agent")
    chat.import_chapters([("001-雨夜.md", TEXT)], message="导入")
    return chat


def _editor(qtbot, chat: Chat) -> ChapterTreePane:
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.set_chat(chat)
    assert pane.editor.open(chat.agent.story, chat.history_log, "001-雨夜.md")
    return pane


def _select(editor, part: str) -> None:
    cur = editor.text.textCursor()
    i = editor.editor_text().index(part)
    cur.setPosition(i)
    cur.setPosition(i + len(part), QTextCursor.MoveMode.KeepAnchor)
    editor.text.setTextCursor(cur)


async def test_a_selection_is_rewritten_through_the_dialog(qtbot, tmp_path):
    chat = _chat(tmp_path, ["林青推开门。灯下，阿檀抬起头，像是等了很久。", "另一种写法。"])
    pane = _editor(qtbot, chat)
    ed = pane.editor
    acts = install(ed, lambda: chat, None)
    assert [a.objectName() for a in acts] == ["rewrite_rewrite", "rewrite_expand", "rewrite_condense"]
    assert ed.text.extra_actions == acts
    told: list = []
    ed.inform = lambda title, text: told.append(text)
    assert open_rewrite(ed, chat, "rewrite", None) is None and told  # nothing selected: said, nothing asked

    cur = ed.text.textCursor()
    cur.movePosition(QTextCursor.MoveOperation.End)
    cur.insertText("新写的一句。\n")  # typed, not saved: saved before asking
    assert ed.dirty
    _select(ed, PASSAGE)
    dlg = open_rewrite(ed, chat, "expand", None)
    qtbot.addWidget(dlg)
    assert not ed.dirty and dlg.mode.currentData() == "expand"
    await wait_for(lambda: dlg.proposal is not None)
    assert dlg.proposal.old == PASSAGE and dlg.accept_btn.isEnabled()
    assert dlg.diff.marks  # the changed words are highlighted
    if os.environ.get("LIYUAN_SHOTS_DIR"):
        dlg.grab().save(str(Path(os.environ["LIYUAN_SHOTS_DIR"]) / "rewrite_dialog.png"))
    dlg.instruction.setText("更短")
    dlg.ask()  # again: the second answer
    await wait_for(lambda: dlg.proposal is not None and dlg.proposal.new == "另一种写法。")
    assert dlg.accept_proposal()
    await wait_for(lambda: "另一种写法。" in ed.editor_text())
    disk = (chat.dir / "正文" / "001-雨夜.md").read_text("utf-8")
    assert disk == TEXT.replace(PASSAGE, "另一种写法。") + "新写的一句。\n"
    assert chat.history_log.latest().message == "改写 001-雨夜.md"
    chat.close()


async def test_reject_changes_nothing_and_errors_are_said(qtbot, tmp_path):
    chat = _chat(tmp_path, [""])
    pane = _editor(qtbot, chat)
    before = (chat.dir / "正文" / "001-雨夜.md").read_bytes()
    _select(pane.editor, PASSAGE)
    dlg = open_rewrite(pane.editor, chat, "rewrite", None)
    qtbot.addWidget(dlg)
    await wait_for(lambda: dlg.task is not None and dlg.task.done())
    assert dlg.proposal is None and dlg.status.text() and not dlg.accept_btn.isEnabled()
    dlg.reject()
    assert (chat.dir / "正文" / "001-雨夜.md").read_bytes() == before
    assert isinstance(dlg, RewriteDialog)
    chat.close()
