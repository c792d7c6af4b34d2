"""The chapter pane and the checkpoint timeline of an agent chat (ui/writing/chapter_tree.py, ui/writing/checkpoint_timeline.py):
hand edits of the chapter folder each leave a user checkpoint, deletes are restorable, the editor saves through the
story folder, and the timeline's two restores (files only / files and conversation) work and can be undone.
Sync pytest-qt tests; the one real agent turn runs on the ``qloop`` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.text import count_words
from liyuan_desktop.ui.writing.chapter_tree import ChapterTreePane, between_name, split_prefix
from liyuan_desktop.ui.writing.checkpoint_timeline import CheckpointTimelinePane

DEMO_CARD = Path(__file__).resolve().parents[2] / "cards" / "青梧" / "default_Qingwu.json"

CH0 = "雨从黄昏下起。\n渡口的灯一盏盏亮了。\n"
CH1 = "「你还记得他吗？」\n「记得。」她背对着你。\n雨声很密。\n"
CH2 = "她顿了顿。\n「我倒想先问一句。」\n"


class StubModel:
    name = "stub-model"
    is_replay = False

    async def complete(self, request, on_delta=None):  # never called by these tests
        raise AssertionError("the stub model was called")


def _chat(tmp_path: Path, model=None) -> Chat:
    chat = Chat.create(tmp_path / "局C", load_card(DEMO_CARD), model or StubModel(), mode="agent")
    chat.import_chapters([("000-开场.md", CH0), ("001-雨夜问名.md", CH1), ("002-坦言.md", CH2)], message="导入三章")
    return chat


def _files(chat: Chat) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(chat.story.story_dir.glob("*.md"))}


def _messages(chat: Chat) -> list[str]:
    return [c.message for c in chat.history_log.checkpoints()]


def _names(pane: ChapterTreePane) -> list[str]:
    """The chapter file names as listed (the rows show titles; the file name is the row's key)."""
    return [pane.list.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) for i in range(pane.list.topLevelItemCount())]


@pytest.fixture
def tree(qtbot, tmp_path):
    chat = _chat(tmp_path)
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.resize(460, 640)
    pane.set_chat(chat)
    pane.asked = []
    pane.confirmed = []
    pane.informed = []
    pane.answers = []
    pane.ask_text = lambda title, label, text="": (pane.asked.append((label, text)), pane.answers.pop(0))[1]
    pane.confirm = lambda title, text: (pane.confirmed.append(text), True)[1]
    pane.inform = lambda title, text: pane.informed.append(text)
    return chat, pane


# ------------------------------------------------------------------------------------------------ the tree


def test_tree_lists_chapters_in_order_with_sizes(tree):
    chat, pane = tree
    assert _names(pane) == ["000-开场.md", "001-雨夜问名.md", "002-坦言.md"]
    # rows show titles and 字数 (count_words: CJK characters, not punctuation); file name and size in the tooltip
    assert [pane.list.topLevelItem(i).text(0) for i in range(3)] == ["开场", "雨夜问名", "坦言"]
    assert [pane.list.topLevelItem(i).text(1) for i in range(3)] == [f"{count_words(c)} 字" for c in (CH0, CH1, CH2)]
    assert [pane.list.topLevelItem(i).text(1) for i in range(3)] == ["15 字", "17 字", "11 字"]
    # the tooltip keeps the UTF-16 size: a character outside the BMP counts 2 units, one 字
    chat.story.write("003-星.md", "𠀀\n")
    pane.refresh()
    assert pane.list.topLevelItem(3).text(1) == "1 字"
    assert "003-星.md" in pane.list.topLevelItem(3).toolTip(0) and "3 个 UTF-16" in pane.list.topLevelItem(3).toolTip(0)
    # a role-play chat has no chapters
    pane.set_chat(None)
    assert pane.list.topLevelItemCount() == 0 and not pane.new_btn.isEnabled()


def test_new_rename_insert_delete_reorder(tree):
    chat, pane = tree
    n0 = len(chat.history_log.checkpoints())
    # new: the next number, empty, opened in the editor, one checkpoint
    pane.answers = ["第三章 雨停"]
    assert pane.new_chapter() == "003-雨停.md"
    assert _files(chat)["003-雨停.md"] == ""
    assert _messages(chat)[-1] == "新建 003-雨停.md" and len(chat.history_log.checkpoints()) == n0 + 1
    assert pane.editor.name == "003-雨停.md" and pane.selected() == "003-雨停.md"

    # rename keeps the number; the open editor follows
    pane.select("003-雨停.md")
    pane.answers = ["雨停了"]
    assert pane.rename_chapter() == "003-雨停了.md"
    assert "003-雨停.md" not in _files(chat) and "003-雨停了.md" in _files(chat)
    cp = chat.history_log.latest()
    assert cp.message == "改名 003-雨停.md → 003-雨停了.md" and cp.author == "user"
    assert cp.changed.renamed == [{"from": "003-雨停.md", "to": "003-雨停了.md"}]
    assert pane.editor.name == "003-雨停了.md"
    # a full name moves it
    pane.answers = ["005-尾声.md"]
    assert pane.rename_chapter() == "005-尾声.md"
    # an existing name is refused, nothing changes
    pane.select("005-尾声.md")
    pane.answers = ["002-坦言.md"]
    before = _files(chat)
    assert pane.rename_chapter() is None and _files(chat) == before and "已经有" in pane.informed[-1]

    # insert after 001: a name between the neighbours, no other file renamed
    pane.select("001-雨夜问名.md")
    pane.answers = ["渡口"]
    assert pane.insert_chapter() == "001a-渡口.md"
    assert _names(pane) == ["000-开场.md", "001-雨夜问名.md", "001a-渡口.md", "002-坦言.md", "005-尾声.md"]
    assert _messages(chat)[-1] == "插入 001a-渡口.md"
    # a numeric gap is used first; then the next letter
    pane.select("002-坦言.md")
    pane.answers = ["夜谈"]
    assert pane.insert_chapter() == "003-夜谈.md"
    pane.select("001a-渡口.md")
    pane.answers = ["灯"]
    assert pane.insert_chapter() == "001b-灯.md"

    # reorder: move 002 up swaps its number with 001b's; one checkpoint with two renames
    pane.select("002-坦言.md")
    k = len(chat.history_log.checkpoints())
    assert pane.move_chapter(-1) == "001b-坦言.md"
    assert _names(pane) == ["000-开场.md", "001-雨夜问名.md", "001a-渡口.md", "001b-坦言.md", "002-灯.md",
                            "003-夜谈.md", "005-尾声.md"]
    assert len(chat.history_log.checkpoints()) == k + 1
    cp = chat.history_log.latest()
    assert cp.message == "上移 002-坦言.md → 001b-坦言.md"
    assert sorted(r["to"] for r in cp.changed.renamed) == ["001b-坦言.md", "002-灯.md"]
    assert _files(chat)["001b-坦言.md"] == CH2
    assert pane.selected() == "001b-坦言.md"
    pane.move_chapter(1)
    assert _names(pane)[3:5] == ["001b-灯.md", "002-坦言.md"]

    # delete: a checkpoint before (only when the folder changed since), the file goes, 「删除 X」
    pane.select("002-坦言.md")
    assert pane.delete_chapter()
    assert "002-坦言.md" not in _files(chat) and "002-坦言.md" in pane.confirmed[-1]
    cp = chat.history_log.latest()
    assert cp.message == "删除 002-坦言.md" and cp.changed.removed == ["002-坦言.md"]
    assert pane.informed == ["已经有「002-坦言.md」了，换一个名字。"]


def test_delete_is_restorable_from_the_timeline(tree, qtbot):
    chat, pane = tree
    chat.story.write("001-雨夜问名.md", CH1 + "未记的修改。\n")  # not yet in any checkpoint
    pane.refresh()
    pane.select("001-雨夜问名.md")
    assert pane.delete_chapter()
    msgs = _messages(chat)
    assert msgs[-2:] == ["删除前自动保存", "删除 001-雨夜问名.md"]
    assert "001-雨夜问名.md" not in _files(chat)
    tl = CheckpointTimelinePane()
    qtbot.addWidget(tl)
    tl.set_chat(chat)
    tl.confirm = lambda title, text: True
    before_delete = chat.history_log.checkpoints()[-2]
    tl.select(before_delete.id)
    tl.restore_files()
    assert _files(chat)["001-雨夜问名.md"] == CH1 + "未记的修改。\n"
    pane.refresh()
    assert "001-雨夜问名.md" in _names(pane)


def test_reorder_with_equal_or_missing_prefixes_renumbers(tree):
    chat, pane = tree
    chat.story.write("序.md", "序言。\n")
    chat.history_log.commit(author="user", message="加序")
    pane.refresh()
    assert _names(pane)[-1] == "序.md"
    pane.select("序.md")
    assert pane.move_chapter(-1) == "002-序.md"
    assert _names(pane) == ["000-开场.md", "001-雨夜问名.md", "002-序.md", "003-坦言.md"]
    assert _files(chat)["003-坦言.md"] == CH2 and _files(chat)["002-序.md"] == "序言。\n"


def test_insert_renumbers_when_no_name_fits_between(tree):
    chat, pane = tree
    chat.story.write("001a-甲.md", "甲。\n")
    chat.history_log.commit(author="user", message="加甲")
    pane.refresh()
    pane.select("001-雨夜问名.md")
    pane.answers = ["雨"]  # 001a-雨.md would sort after 001a-甲.md: nothing fits, so the folder is renumbered
    assert pane.insert_chapter() == "002-雨.md"
    assert _names(pane) == ["000-开场.md", "001-雨夜问名.md", "002-雨.md", "003-甲.md", "004-坦言.md"]
    assert "2 个文件重新编号" in pane.confirmed[-1]
    cp = chat.history_log.latest()
    assert cp.message == "插入 002-雨.md" and cp.changed.added == ["002-雨.md"]
    assert {r["to"] for r in cp.changed.renamed} == {"003-甲.md", "004-坦言.md"}
    assert _files(chat)["004-坦言.md"] == CH2


def test_between_name():
    taken = {"001-a.md", "002-b.md"}
    assert between_name("001-a.md", "002-b.md", "新", taken) == "001a-新.md"
    assert between_name("001-a.md", "004-b.md", "新", taken) == "002-新.md"
    assert between_name("001a-x.md", "002-b.md", "新", taken) == "001b-新.md"
    got = between_name("001-a.md", "001a-b.md", "新", taken)
    assert got is None or "001-a.md" < got < "001a-b.md"
    assert split_prefix("010ab-标题.md") == ("010", "ab", "-标题.md")
    assert split_prefix("序.md") == ("", "", "序.md")


# ------------------------------------------------------------------------------------------------ the editor


def test_editor_saves_commits_and_marks_unsaved(tree, qtbot):
    chat, pane = tree
    with qtbot.waitActive(pane):
        pane.show()
        pane.activateWindow()
    changed = []
    pane.changed.connect(lambda: changed.append(1))
    item = pane.list.topLevelItem(1)
    pane.list.itemDoubleClicked.emit(item, 0)  # double-click opens
    ed = pane.editor
    assert ed.name == "001-雨夜问名.md" and ed.text.toPlainText() == CH1 and not ed.dirty
    ed.text.setFocus()
    ed.text.moveCursor(ed.text.textCursor().MoveOperation.End)
    ed.text.insertPlainText("雨停了。\n")
    assert ed.dirty and ed.title.text().startswith("● ")
    qtbot.keyClick(ed.text, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # Ctrl+S
    assert not ed.dirty
    assert _files(chat)["001-雨夜问名.md"] == CH1 + "雨停了。\n"
    cp = chat.history_log.latest()
    assert cp.message == "编辑 001-雨夜问名.md" and cp.author == "user" and cp.changed.modified == ["001-雨夜问名.md"]
    assert not ed.dirty and not ed.title.text().startswith("● ") and changed
    assert pane.list.topLevelItem(1).text(1) == f"{count_words(CH1 + '雨停了。')} 字"


def test_editor_reports_changes_on_disk(tree):
    chat, pane = tree
    pane.open_chapter("002-坦言.md")
    ed = pane.editor
    # changed on disk, no edits here: reloaded and said so
    chat.story.write("002-坦言.md", "agent 改过。\n")
    pane.refresh()
    assert ed.text.toPlainText() == "agent 改过。\n" and not ed.banner.isHidden() and "重新载入" in ed.banner.text()
    # changed on disk while edited here: reported, and saving asks before overwriting
    ed.text.insertPlainText("我的修改")
    chat.story.write("002-坦言.md", "agent 又改了。\n")
    pane.refresh()
    assert ed.dirty and "被改过" in ed.banner.text() and ed.reload_btn.isVisibleTo(ed)
    pane.confirm = lambda title, text: (pane.confirmed.append(text), False)[1]
    assert not ed.save()
    assert _files(chat)["002-坦言.md"] == "agent 又改了。\n" and "覆盖" in pane.confirmed[-1]
    pane.confirm = lambda title, text: True
    assert ed.save()
    assert _files(chat)["002-坦言.md"].startswith("我的修改")
    # CRLF and no-break spaces survive a round trip
    chat.story.write("000-开场.md", "第一行\r\n\u00a0缩进\r\n")
    pane.open_chapter("000-开场.md")
    assert ed.save()
    assert Path(chat.story.story_dir / "000-开场.md").read_bytes() == "第一行\r\n\u00a0缩进\r\n".encode("utf-8")


# ------------------------------------------------------------------------------------------------ the timeline


def _agent_turn(qloop, chat: Chat, text: str = "给第一章末尾补一句雨停") -> None:
    chat.model = ReplayModel(actor=[
        {"tool_calls": [{"name": "edit", "arguments": {"path": "001-雨夜问名.md", "oldText": "雨声很密。",
                                                       "newText": "雨声很密。\n后来雨停了。"}}]},
        {"content": "补好了。"},
    ], scribe=['{"patch": {}}'])
    chat.scribe_model = None
    res = qloop.run_until_complete(chat.send(text))
    assert res.checkpoint is not None and res.checkpoint["author"] == "agent"


@pytest.fixture
def timeline(qtbot, tmp_path, qloop):
    chat = _chat(tmp_path)
    chat.story.write("002-坦言.md", CH2 + "尾声。\n")
    chat.history_log.commit(author="user", message="编辑 002-坦言.md")
    _agent_turn(qloop, chat)
    pane = CheckpointTimelinePane()
    qtbot.addWidget(pane)
    pane.resize(640, 640)
    pane.set_chat(chat)
    pane.confirmed = []
    pane.confirm = lambda title, text: (pane.confirmed.append(text), True)[1]
    return chat, pane


def _rows(pane: CheckpointTimelinePane) -> list[list[str]]:
    return [[pane.list.topLevelItem(i).text(c) for c in range(4)] for i in range(pane.list.topLevelItemCount())]


def test_timeline_lists_newest_first_and_shows_the_diff(timeline):
    chat, pane = timeline
    rows = _rows(pane)
    assert [r[2] for r in rows] == ["给第一章末尾补一句雨停", "编辑 002-坦言.md", "导入三章"]
    assert [r[1] for r in rows] == ["agent", "你", "你"]
    assert rows[0][3] == "改 001-雨夜问名.md" and rows[2][3] == "新 3"
    restored = []
    pane.restored.connect(lambda: restored.append(1))
    pane.list.setCurrentItem(pane.list.topLevelItem(0))
    # a prose diff (ui/writing/prose_diff.py): the file, the added sentence highlighted, no unified-diff hunks
    shown = pane.diff.plain_text()
    assert shown.startswith("修改 001-雨夜问名.md") and "后来雨停了。" in shown
    assert pane.diff.marks == [("insert", "后来雨停了。\n")]
    assert "@@" not in shown and "+后来" not in shown and pane.diff.browser.isReadOnly()
    # the first checkpoint: every file added
    pane.list.setCurrentItem(pane.list.topLevelItem(2))
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in pane.diff.plain_text().splitlines()
            if line.startswith("新增")] == ["新增 000-开场.md", "新增 001-雨夜问名.md", "新增 002-坦言.md"]
    assert not pane.turn_btn.isEnabled()  # no turn, no predecessor
    pane.list.setCurrentItem(pane.list.topLevelItem(1))
    assert not pane.turn_btn.isEnabled() and pane.files_btn.isEnabled()  # a user checkpoint has no turn
    pane.list.setCurrentItem(pane.list.topLevelItem(0))
    assert pane.turn_btn.isEnabled()
    assert not restored


def test_restore_files_only_keeps_the_conversation_and_undoes(timeline):
    chat, pane = timeline
    leaf = chat.tree.leaf_id
    after_turn = _files(chat)
    chat.story.write("003-新.md", "新写的。\n")  # not yet committed: restore saves it first
    restored = []
    pane.restored.connect(lambda: restored.append(1))
    pane.select(chat.history_log.checkpoints()[0].id)  # 导入三章
    cp = pane.restore_files()
    assert cp is not None and cp.restoredFrom == chat.history_log.checkpoints()[0].id and restored
    assert _files(chat) == {"000-开场.md": CH0, "001-雨夜问名.md": CH1, "002-坦言.md": CH2}
    assert chat.tree.leaf_id == leaf  # the conversation stays
    text = pane.confirmed[-1]
    assert "改写：001-雨夜问名.md、002-坦言.md" in text and "删除：003-新.md" in text and "对话不动" in text
    assert _messages(chat)[-2:] == ["恢复前自动保存", "恢复到「导入三章」"]
    assert _rows(pane)[0][2].startswith("↩ ")
    # undo: restore the checkpoint made just before
    pre = chat.history_log.checkpoints()[-2]
    pane.select(pre.id)
    pane.restore_files()
    assert _files(chat) == {**after_turn, "003-新.md": "新写的。\n"}


def test_restore_with_the_conversation_moves_the_leaf_and_undoes(timeline):
    chat, pane = timeline
    turn = chat.history_log.checkpoints()[-1]
    user = chat.tree.get(turn.turnId)
    assert user.type == "user"
    old_leaf = chat.tree.leaf_id
    after_turn = _files(chat)
    pane.select(turn.id)
    cp = pane.restore_before_turn()
    assert cp is not None
    # files: as before the turn (the checkpoint before it); conversation: before the user's words
    assert _files(chat)["001-雨夜问名.md"] == CH1 and _files(chat)["002-坦言.md"] == CH2 + "尾声。\n"
    assert chat.tree.leaf_id == user.parent_id
    assert all(e.type != "user" for e in chat.tree.path_to())
    text = pane.confirmed[-1]
    assert "改写：001-雨夜问名.md" in text and "给第一章末尾补一句雨停" in text and "对话也回到这一轮之前" in text
    # persisted: a reopened chat has the moved leaf
    again = Chat.open(chat.dir, chat.card, StubModel())
    assert again.tree.leaf_id == user.parent_id
    # undo brings back files and conversation
    assert pane.undo_btn.isVisibleTo(pane)
    pane.undo_restore()
    assert _files(chat) == after_turn and chat.tree.leaf_id == old_leaf
    assert Chat.open(chat.dir, chat.card, StubModel()).tree.leaf_id == old_leaf


def test_confirmation_names_added_back_files_and_can_refuse(timeline):
    chat, pane = timeline
    first = chat.history_log.checkpoints()[0]
    (chat.story.story_dir / "000-开场.md").unlink()
    pane.confirm = lambda title, text: (pane.confirmed.append(text), False)[1]
    pane.refresh()
    pane.select(first.id)
    before = _messages(chat)
    assert pane.restore_files() is None
    assert _messages(chat) == before and not (chat.story.story_dir / "000-开场.md").exists()  # refused: nothing
    text = pane.confirmed[-1]
    assert "加回：000-开场.md" in text and "改写：001-雨夜问名.md、002-坦言.md" in text
    assert "恢复前会先把现在的正文记成检查点" in text


# ------------------------------------------------------------------------------- an English-layout novel (issue 32)


def test_the_panes_work_on_an_english_layout_novel(qtbot, tmp_path):
    """A new novel in an English chat keeps its chapters in ``chapters/`` and its checkpoints in ``history/``
    (core/story/layout.py): the chapter pane lists and creates them there, the timeline restores them."""
    en_card = Path(__file__).resolve().parents[2] / "cards" / "Qingwu" / "default_Qingwu.json"
    chat = Chat.create(tmp_path / "Book", load_card(en_card), StubModel(), mode="agent")
    chat.import_chapters([("000-Opening.md", "Rain.\n"), ("001-Ferry.md", "Lamps.\n")], message="Import")
    d = chat.dir
    assert chat.story.story_dir == d / "chapters" and (d / "history" / "checkpoints.jsonl").is_file()
    pane = ChapterTreePane()
    qtbot.addWidget(pane)
    pane.set_chat(chat)
    assert _names(pane) == ["000-Opening.md", "001-Ferry.md"]
    pane.ask_text = lambda title, label, text="": "Dusk"
    assert pane.new_chapter() == "002-Dusk.md" and (d / "chapters" / "002-Dusk.md").is_file()
    tl = CheckpointTimelinePane()
    qtbot.addWidget(tl)
    tl.set_chat(chat)
    tl.confirm = lambda title, text: True
    tl.select(chat.history_log.checkpoints()[0].id)
    assert tl.restore_files() is not None
    assert sorted(p.name for p in (d / "chapters").glob("*.md")) == ["000-Opening.md", "001-Ferry.md"]
    assert not (d / "正文").exists() and not (d / "历史").exists()
