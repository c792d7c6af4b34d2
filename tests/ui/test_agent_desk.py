"""Agent mode as a writer expects it (issue 17): an agent chat opens on 章节 and 撤销本轮 says why it is off; chapters
by title with 字数, renamed through the story folder; the roomier chapter editor (writing font, centred column, soft
wrap, distraction-free mode, autosave after a pause as a user checkpoint); prose diffs in the checkpoint timeline;
after a restore the pane says what was restored and how to undo it. pytest-qt, offscreen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QApplication, QPlainTextEdit
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story.checkpoint_model import FileDiff
from liyuan_desktop.core.text import count_words
from liyuan_desktop.ui.window.main_window import MainWindow
from liyuan_desktop.ui.writing.chapter_editor import SERIF_FAMILIES
from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane
from liyuan_desktop.ui.writing.checkpoint_timeline import CheckpointTimelinePane
from liyuan_desktop.ui.writing.prose_diff import ProseDiffView

DEMO_CARD = Path(__file__).resolve().parents[2] / "cards" / "青梧" / "default_Qingwu.json"
CH0 = "雨从黄昏下起。\n渡口的灯一盏盏亮了。\n"
CH1 = "「你还记得他吗？」\n「记得。」她背对着你。\n雨声很密。\n"
CH2 = "She paused. \"Let me ask first.\"\n"


class StubModel:
    name = "stub-model"
    is_replay = False

    async def complete(self, request, on_delta=None):  # never called by these tests
        raise AssertionError("the stub model was called")


def _chat(d: Path) -> Chat:
    chat = Chat.create(d, load_card(DEMO_CARD), StubModel(), mode="agent")
    chat.import_chapters([("000-开场.md", CH0), ("001-雨夜问名.md", CH1), ("002-坦言.md", CH2)], message="导入三章")
    return chat


@pytest.fixture
def pane(qtbot, tmp_path):
    chat = _chat(tmp_path / "局C")
    p = ChapterTreePane()
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.set_chat(chat)
    p.answers = []
    p.ask_text = lambda title, label, text="": p.answers.pop(0)
    p.confirm = lambda title, text: True
    p.informed = []
    p.inform = lambda title, text: p.informed.append(text)
    return chat, p


# ------------------------------------------------------------------------------------------- the main window


async def test_agent_chat_opens_on_chapters_and_undo_says_why(qtbot):
    win = MainWindow(S.AppSettings(window={"manuscript_on": False}))  # the tabbed layout (issue 28: opt-out)
    qtbot.addWidget(win)
    win.show()
    await wait_for(win.view.is_ready)
    win.start_demo()  # a role-play chat (its panels or 稿纸); before any beat 撤销本轮 says there is nothing to undo
    assert win.tabs.currentWidget() not in (win.chapter_pane, win.timeline_pane)
    assert not win.undo_btn.isEnabled() and "还没有你说的话" in win.undo_btn.toolTip()

    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "局D")
    chat = _chat(d)
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), card, False
    win._after_open()
    assert win.tabs.currentWidget() is win.chapter_pane  # not the empty 稿纸
    assert [win.chapter_pane.list.topLevelItem(i).text(0) for i in range(3)] == ["开场", "雨夜问名", "坦言"]
    btn = win.undo_btn
    assert not btn.isEnabled()
    assert "检查点" in btn.toolTip() and btn.statusTip() == btn.toolTip()
    # hovering the disabled button puts the reason in the status bar
    QApplication.sendEvent(btn, QEnterEvent(QPoint(2, 2).toPointF(), QPoint(2, 2).toPointF(), btn.mapToGlobal(QPoint(2, 2)).toPointF()))
    assert "检查点" in win.statusBar().currentMessage()

    # the editor's distraction-free mode hides the card list, the conversation and the side tabs; F11 leaves it
    win.chapter_pane.open_chapter("001-雨夜问名.md")
    ed = win.chapter_pane.editor
    left, centre = win.split.widget(0), win.split.widget(1)
    ed.focus_btn.click()
    assert ed.focus_mode and left.isHidden() and centre.isHidden() and win.tabs.tabBar().isHidden()
    assert win.chapter_pane.list.isHidden() and not ed.isHidden()
    ed.text.setFocus()
    qtbot.keyClick(ed.text, Qt.Key.Key_F11)
    assert not ed.focus_mode and not left.isHidden() and not centre.isHidden() and not win.tabs.tabBar().isHidden()
    assert not win.chapter_pane.list.isHidden()

    # after a restore the conversation (the centre pane) says what was restored and how to undo it
    banners = []
    real_banner = win.view.set_banner
    win.view.set_banner = lambda text: (banners.append(text), real_banner(text))[1]
    tl = win.timeline_pane
    tl.confirm = lambda title, text: True
    tl.refresh()
    tl.select(chat.history_log.checkpoints()[0].id)
    chat.story.write("002-坦言.md", "改过。\n")
    assert tl.restore_files() is not None
    assert "导入三章" in banners[-1] and "002-坦言.md" in banners[-1] and "撤销刚才的恢复" in banners[-1]
    tl.undo_restore()
    assert banners[-1] is None  # the usual banner again (no replay model here)
    win.view.set_banner = real_banner

    # a role-play chat again: the hidden agent tabs are not left current
    win.start_demo()
    assert win.tabs.currentWidget() not in (win.chapter_pane, win.timeline_pane)
    win.close()


# ------------------------------------------------------------------------------------------- chapters


def test_chapters_by_title_with_word_counts_and_rename_through_the_story_folder(pane, monkeypatch):
    chat, p = pane
    rows = [(p.list.topLevelItem(i).text(0), p.list.topLevelItem(i).text(1)) for i in range(3)]
    assert rows == [("开场", "15 字"), ("雨夜问名", "17 字"), ("坦言", f"{count_words(CH2)} 字")]
    assert count_words(CH2) == 6  # Latin words count one each
    assert "000-开场.md" in p.list.topLevelItem(0).toolTip(0)

    calls = []
    real = type(chat.story).rename
    monkeypatch.setattr(type(chat.story), "rename", lambda self, m: (calls.append(dict(m)), real(self, m))[1])
    p.select("001-雨夜问名.md")
    p.answers = ["夜雨"]
    assert p.rename_chapter() == "001-夜雨.md"
    assert calls == [{"001-雨夜问名.md": "001-夜雨.md"}]  # the engine's confined rename, not a bare os.rename
    assert p.list.topLevelItem(1).text(0) == "夜雨"
    cp = chat.history_log.latest()
    assert cp.author == "user" and cp.changed.renamed == [{"from": "001-雨夜问名.md", "to": "001-夜雨.md"}]


def test_a_title_typed_in_place_renames_the_file(pane, qtbot):
    chat, p = pane
    item = p.list.topLevelItem(2)
    assert item.flags() & Qt.ItemFlag.ItemIsEditable
    item.setText(0, "坦白")  # what the F2 editor commits
    qtbot.waitUntil(lambda: "002-坦白.md" in p.names(), timeout=5000)
    assert p.list.topLevelItem(2).text(0) == "坦白" and not (chat.story.story_dir / "002-坦言.md").exists()
    assert chat.history_log.latest().message == "改名 002-坦言.md → 002-坦白.md"
    # a name that is taken is refused and the row shows the old title again
    p.list.topLevelItem(2).setText(0, "001-雨夜问名.md")
    qtbot.waitUntil(lambda: bool(p.informed), timeout=5000)
    qtbot.waitUntil(lambda: p.list.topLevelItem(2).text(0) == "坦白", timeout=5000)
    assert p.names() == ["000-开场.md", "001-雨夜问名.md", "002-坦白.md"]


def test_story_folder_rename_is_confined_and_all_or_nothing(tmp_path):
    chat = _chat(tmp_path / "局C")
    story = chat.story
    before = sorted(x.name for x in story.story_dir.iterdir())
    for bad in ({"000-开场.md": "../逃出.md"}, {"000-开场.md": ".隐藏.md"}, {"000-开场.md": "开场.txt"},
                {"000-开场.md": "002-坦言.md"}, {"不存在.md": "003-x.md"}, {"000-开场.md": "sub/x.md"}):
        with pytest.raises(ToolError):
            story.rename(bad)
        assert sorted(x.name for x in story.story_dir.iterdir()) == before
    assert not (tmp_path / "局C" / "逃出.md").exists()
    # a swap works (temp names in between)
    assert story.rename({"000-开场.md": "001-雨夜问名.md", "001-雨夜问名.md": "000-开场.md"}) == \
        {"000-开场.md": "001-雨夜问名.md", "001-雨夜问名.md": "000-开场.md"}
    assert (story.story_dir / "000-开场.md").read_text("utf-8") == CH1
    assert (story.story_dir / "001-雨夜问名.md").read_text("utf-8") == CH0
    assert not [n for n in os.listdir(story.story_dir) if n.startswith(".liyuan-mv")]


# ------------------------------------------------------------------------------------------- the editor


def test_editor_is_a_writing_column_with_soft_wrap(pane, qtbot):
    chat, p = pane
    p.resize(1300, 800)
    p.show()
    qtbot.waitExposed(p)
    p.open_chapter("001-雨夜问名.md")
    edit = p.editor.text
    assert edit.font().pointSizeF() >= 14
    assert edit.font().family() in SERIF_FAMILIES or edit.font().family() == QApplication.font().family() \
        or edit.font().family()
    assert edit.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    m = edit.viewportMargins()
    assert m.left() > 100 and abs(m.left() - m.right()) <= 1  # a centred column on a wide pane
    assert edit.viewport().width() <= edit.column_px() + 2
    edit.set_column(None)
    assert edit.viewportMargins().left() < 40
    assert p.editor.words.text() == "17 字"


def test_autosave_after_a_pause_is_a_user_checkpoint(pane, qtbot):
    chat, p = pane
    p.open_chapter("000-开场.md")
    ed = p.editor
    ed.autosave_ms = 150
    n = len(chat.history_log.checkpoints())
    ed.text.moveCursor(ed.text.textCursor().MoveOperation.End)
    ed.text.insertPlainText("雨停了。\n")
    assert ed.dirty and ed.autosave_pending
    assert len(chat.history_log.checkpoints()) == n  # nothing yet: the pause has not ended
    qtbot.waitUntil(lambda: not ed.dirty, timeout=5000)
    cps = chat.history_log.checkpoints()
    assert len(cps) == n + 1 and cps[-1].message == "自动保存 000-开场.md" and cps[-1].author == "user"
    assert (chat.story.story_dir / "000-开场.md").read_text("utf-8") == CH0 + "雨停了。\n"
    assert "自动保存" in p.status.text()
    assert p.list.topLevelItem(0).text(1) == f"{count_words(CH0 + '雨停了。')} 字"
    # the file changed on disk meanwhile (the agent): autosave does not overwrite it, it says so
    chat.story.write("000-开场.md", "agent 改过。\n")
    ed.text.insertPlainText("又一句。")
    qtbot.waitUntil(lambda: not ed.autosave_pending, timeout=5000)
    assert (chat.story.story_dir / "000-开场.md").read_text("utf-8") == "agent 改过。\n"
    assert ed.dirty and "没有自动保存" in ed.banner.text() and len(chat.history_log.checkpoints()) == n + 1


# ------------------------------------------------------------------------------------------- prose diffs


def _long(n: int) -> str:
    return "".join(f"第{i}句，雨还在下。" + ("\n" if i % 4 == 3 else "") for i in range(n))


def test_prose_diff_view_inline_side_by_side_and_whole_chapter(qtbot):
    old = _long(40)
    new = old.replace("第20句，雨还在下。", "第20句，雪还在下。")
    v = ProseDiffView()
    qtbot.addWidget(v)
    v.show_files([FileDiff(name="001-雨.md", status="modified", old_text=old, new_text=new)])
    shown = v.plain_text()
    assert v.marks == [("delete", "雨"), ("insert", "雪")]
    assert "未改动" in shown and "第1句" not in shown and "第18句" in shown and "第22句" in shown
    assert "@@" not in shown and "+" not in shown.replace("+1 字", "")
    assert "+1 字" in shown and "1 句有改动" in shown
    v.set_full(True)  # whole-chapter context on demand
    assert "未改动" not in v.plain_text() and "第1句" in v.plain_text() and "第39句" in v.plain_text()
    v.set_full(False)
    v.side_btn.click()
    assert v.side_by_side and "<table" in v.html
    side = v.plain_text()
    assert "之前" in side and "之后" in side and "第20句，雨还在下" in side.replace("\n", "") \
        and "第20句，雪还在下" in side.replace("\n", "")
    assert ("delete", "雨") in v.marks and ("insert", "雪") in v.marks
    v.inline_btn.click()
    assert not v.side_by_side and "<table" not in v.html


# ------------------------------------------------------------------------------------------- after a restore


async def _agent_turn(chat: Chat) -> None:
    chat.model = ReplayModel(actor=[
        {"tool_calls": [{"name": "edit", "arguments": {"path": "001-雨夜问名.md", "oldText": "雨声很密。",
                                                       "newText": "雨声很密。\n后来雨停了。"}}]},
        {"content": "补好了。"},
    ], scribe=['{"patch": {}}'])
    chat.scribe_model = None
    res = await chat.send("给第一章末尾补一句雨停")
    assert res.checkpoint is not None


async def test_after_a_restore_the_pane_says_what_was_restored_and_how_to_undo(qtbot, tmp_path):
    """(async: runs on the tests' qasync loop — a second loop after a web view existed would crash at teardown)"""
    chat = _chat(tmp_path / "局C")
    await _agent_turn(chat)
    tl = CheckpointTimelinePane()
    qtbot.addWidget(tl)
    tl.resize(700, 700)
    tl.set_chat(chat)
    tl.confirm = lambda title, text: True
    assert tl.restore_card_text() == ""
    first = chat.history_log.checkpoints()[0]
    tl.select(first.id)
    done = tl.restore_files()
    assert done is not None
    text = tl.restore_card_text()
    assert "已把正文恢复到检查点「导入三章」" in text and "改写：001-雨夜问名.md" in text and "对话没动" in text
    # the folder was already in a checkpoint (the turn's), so that one holds the files as they were before
    assert "撤销刚才的恢复" in text and "恢复前的正文也记在检查点「给第一章末尾补一句雨停」里" in text
    assert tl.undo_btn.isVisibleTo(tl) and tl.undo_btn.isEnabled() and tl.card.isAncestorOf(tl.undo_btn)
    # and the diff below shows what the restore changed (the added sentence going away), not a blank page
    assert tl.selected_id() == done.id and ("delete", "后来雨停了。\n") in tl.diff.marks
    tl.undo_restore()
    assert tl.restore_card_text() == "" and "后来雨停了" in (chat.story.story_dir / "001-雨夜问名.md").read_text("utf-8")

    # files and conversation: the card says where the conversation went
    turn = next(c for c in reversed(chat.history_log.checkpoints()) if c.turnId)
    tl.refresh()
    tl.select(turn.id)
    assert tl.restore_before_turn() is not None
    text = tl.restore_card_text()
    assert "已撤销「给第一章末尾补一句雨停」这一轮" in text and "对话回到了你说「给第一章末尾补一句雨停」之前" in text
    assert "正文和对话回到恢复之前" in text


def test_the_desk_follows_the_language_switch(pane, qtbot):
    """The live switch builds the window's panes again in the new language (ui/window/language_switch.py): the
    chapter list and the prose diff made in English say their counts and lines in English."""
    from liyuan_desktop.ui.infra import i18n

    chat, _p = pane
    try:
        i18n.set_language("en")
        p = ChapterTreePane()
        qtbot.addWidget(p)
        p.set_chat(chat)
        v = ProseDiffView()
        qtbot.addWidget(v)
        v.show_files([FileDiff(name="001.md", status="modified", old_text=_long(10),
                               new_text=_long(10).replace("雨", "雪", 1))])
        assert p.list.topLevelItem(0).text(1) == "15 words"
        assert v.plain_text().startswith("Changed 001.md") and "unchanged sentences" in v.plain_text()
    finally:
        i18n.set_language("zh")
