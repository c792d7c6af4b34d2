"""The two pane skeletons (issue 25, "merge the real copies"): ui/writing/story_pane.py under 章节 and 检查点, ui/writing/room_pane.py
under 大纲 / 伏笔 / 设定 / 审稿. Each pane built on them keeps the behaviour it had on its own: the agent-only chat with
its status line, the keyed list refilled without losing the selection, the busy refusal, the headers in the current
language. Real panes over a real agent chat (the demo card, three imported chapters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.infra.i18n import language, set_language, tr
from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane
from liyuan_desktop.ui.writing.checkpoint_timeline import CheckpointTimelinePane
from liyuan_desktop.ui.writing.codex_pane import CodexPane
from liyuan_desktop.ui.writing.outline_pane import OutlinePane
from liyuan_desktop.ui.writing.review_panel import ReviewPanel
from liyuan_desktop.ui.writing.room_pane import RoomPane
from liyuan_desktop.ui.writing.story_pane import StoryPane
from liyuan_desktop.ui.writing.threads_pane import ThreadsPane

DEMO_CARD = Path(__file__).resolve().parents[2] / "cards" / "青梧" / "default_Qingwu.json"


def _chat(tmp_path: Path, mode: str = "agent") -> Chat:
    chat = Chat.create(tmp_path / f"局-{mode}", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]), mode=mode)
    if mode == "agent":
        chat.import_chapters([("000-开场.md", "雨。\n"), ("001-渡口.md", "灯。\n"), ("002-夜谈.md", "风。\n")],
                             message="导入三章")
    return chat


@pytest.mark.parametrize("cls", [ChapterTreePane, CheckpointTimelinePane])
def test_story_panes_keep_the_selection_and_refuse_a_role_play_chat(qtbot, tmp_path, cls):
    pane = cls()
    qtbot.addWidget(pane)
    assert isinstance(pane, StoryPane)
    pane.set_chat(_chat(tmp_path, "roleplay"))
    assert pane.chat is None and pane.status.text() == tr("story.not.agent") and pane.keys() == []
    chat = _chat(tmp_path)
    pane.set_chat(chat)
    assert pane.chat is chat and pane.status.text() == ""
    keys = pane.keys()
    assert len(keys) >= 1 and pane.selected() is None
    pane.select(keys[-1])
    pane.refresh()
    assert pane.selected() == keys[-1] and pane.keys() == keys  # the refill keeps the selected row
    pane.set_chat(None)
    assert pane.status.text() == "" and pane.keys() == [] and not pane.list.isEnabled()


def test_chapter_rows_are_keyed_by_file_name_and_busy_stops_edits(qtbot, tmp_path):
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.set_chat(_chat(tmp_path))
    assert pane.names() == ["000-开场.md", "001-渡口.md", "002-夜谈.md"]
    pane.select("001-渡口.md")
    assert pane.insert_btn.isEnabled()
    pane.set_busy(True)
    assert not pane.new_btn.isEnabled() and not pane.insert_btn.isEnabled()
    pane.set_busy(False)
    assert pane.new_btn.isEnabled()


@pytest.mark.parametrize("cls", [OutlinePane, ThreadsPane, CodexPane, ReviewPanel])
def test_room_panes_share_the_headers_and_the_inform_title(qtbot, cls):
    pane = cls()
    qtbot.addWidget(pane)
    assert isinstance(pane, RoomPane) and pane.TITLE_KEY.endswith(".tab")
    assert [pane.tree.headerItem().text(c) for c in range(pane.tree.columnCount())] == pane.headers()
    was = language()
    try:
        set_language("en")  # the live switch builds the panes again (ui/window/language_switch.py)
        built = cls()
        qtbot.addWidget(built)
        english = [built.tree.headerItem().text(c) for c in range(built.tree.columnCount())]
        assert english == [tr(k) for k in pane.HEADERS] and english != [k for k in pane.HEADERS]
    finally:
        set_language(was)
    assert pane.rows() == [] and pane.selected() is None


def test_room_panes_refuse_changes_while_a_turn_runs(qtbot, tmp_path):
    chat = _chat(tmp_path)
    told: list[str] = []
    outline, threads = OutlinePane(), ThreadsPane()
    for pane in (outline, threads):
        qtbot.addWidget(pane)
        pane.inform = told.append
    assert not outline._apply(lambda: None) and told == []  # no chat: refused, nothing to say
    for pane in (outline, threads):
        pane.set_chat(chat)
        pane.set_busy(True)
    from liyuan_desktop.ui.writing.thread_dialog import ThreadForm

    threads.ask_thread = lambda form, reached, edit: ThreadForm(title="玉佩的来历")
    assert not threads.add_thread() and not threads.add_btn.isEnabled()
    assert not outline._apply(lambda: chat.save_outline("# 卷\n## 章\n"))
    assert told == [tr("wr.busy")] * 2 and chat.outline() is None
    threads.set_busy(False)
    assert threads.add_thread() and [t.title for t in chat.threads()] == ["玉佩的来历"]
