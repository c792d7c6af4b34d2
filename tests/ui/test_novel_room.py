"""Issue 28 in the window: the novelist's room. Through the real main window (pytest-qt, offscreen): 文件 → 新建长篇…
makes a novel without a character card and opens it in the manuscript layout (binder left, chapter editor in the
centre, the agent and the inspectors right, as docks); the binder builds a 2-volume outline through the engine's
outline API (add, rename, status, target, move by drop); the replayed agent writes 3 chapters with the real agent
loop and they land linked under their outline chapters; renaming a chapter file keeps its link; a codex entry is
highlighted in the editor with its description on hover; the export dialog writes an EPUB that passes EPUBCheck,
with the outline's titles and no doubled headings. A role-play chat switches back to the usual layout and a novel
to the manuscript one, which is remembered.

Screenshots: with ``LIYUAN_SHOTS_DIR`` set, the layout at 1366×768 and 1920×1080, light and dark, is saved there."""

from __future__ import annotations

import asyncio
import json
import os
import re
import zipfile
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.story.codex import CodexRecord
from liyuan_desktop.ui.infra import theme
from liyuan_desktop.ui.window.main_window import MainWindow
from liyuan_desktop.ui.writing.binder import KEY

CHAPTERS = {"001-雨夜.md": "林青在雨里捡到一块玉佩。阿青，她的乳名，只有老周知道。\n",
            "002-渡口.md": "渡口的灯一盏一盏灭了。林青没有回头。\n",
            "003-旧信.md": "那封旧信压在箱底，林青始终没有拆开。\n"}


def _turn(name: str, text: str) -> list[dict]:
    return [{"content": "", "tool_calls": [
        {"name": "write", "arguments": json.dumps({"path": name, "content": text}, ensure_ascii=False)}]},
        {"content": f"写好了 {name}。", "tool_calls": []}]


def _binder_tree(win: MainWindow) -> list[tuple[str, list[tuple[str, str]]]]:
    b = win.novel_room.binder
    out = []
    for i in range(b.tree.topLevelItemCount()):
        top = b.tree.topLevelItem(i)
        out.append((top.text(0), [(top.child(j).text(0), top.child(j).data(0, KEY)[2]) for j in range(top.childCount())]))
    return out


async def _changed(win: MainWindow, fn) -> None:
    """Run a binder command and wait until the binder has repainted from the outline it wrote."""
    wp = win.writing_panes
    before = wp.data
    assert fn() is not False
    await wait_for(lambda: wp.data is not before and (wp._task is None or wp._task.done()))


async def _new_novel(win: MainWindow, qtbot) -> None:
    win.novel_action.trigger()
    dlg = win.novel_dialog
    assert dlg.isVisible()
    assert dlg.spec() is None  # no title yet: OK refuses (and says so)
    dlg.title_edit.setText("河灯")
    dlg.author_edit.setText("阿梨")
    dlg.cast_edit.setPlainText("老周\n")
    _grab(dlg, "new-novel-dialog")
    win.novel_dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    await wait_for(lambda: win.chat is not None and win.novel_room.active and win.writing_panes.data is not None)
    assert win.novel_task.result() is True


async def _build_outline(win: MainWindow) -> None:
    b = win.novel_room.binder
    errors: list[str] = []
    b.inform = errors.append
    assert _binder_tree(win) == [("第一卷", [("第一章", "")])]
    b.select("volume", "第一卷")
    await _changed(win, lambda: b.rename(title="第一卷 雨夜"))
    b.select("chapter", "第一章")
    await _changed(win, lambda: b.rename(title="雨夜"))
    b.select("chapter", "雨夜")
    await _changed(win, lambda: b.add_chapter("旧信"))   # after 雨夜 in volume 1
    await _changed(win, lambda: b.add_volume("第二卷 回声"))
    b.select("volume", "第二卷 回声")
    b.ask_text = lambda _label, _text: "渡口"
    await _changed(win, lambda: b.add_chapter())
    # 渡口 belongs in volume 1, between 雨夜 and 旧信: drag it above 旧信; 旧信 then goes to volume 2 by drop
    await _changed(win, lambda: b.drop(b.row("chapter", "渡口"), b.row("chapter", "旧信"), "above"))
    await _changed(win, lambda: b.drop(b.row("chapter", "旧信"), b.row("volume", "第二卷 回声"), "on"))
    cid = b.row("chapter", "雨夜").data(0, KEY)[1]
    await _changed(win, lambda: b.set_target(cid, 1500))
    assert not errors
    assert _binder_tree(win) == [("第一卷 雨夜", [("雨夜", ""), ("渡口", "")]), ("第二卷 回声", [("旧信", "")])]
    text = (Path(win.chat.dir) / "大纲.md").read_text("utf-8")
    assert "# 第一卷 雨夜" in text and "## 雨夜" in text and "target=1500" in text  # Markdown stays the storage
    # beats under a chapter: added and renamed through the tree
    b.select("chapter", "雨夜")
    await _changed(win, lambda: b.add_beat("雨夜捡到玉佩"))
    b.row("chapter", "雨夜").setExpanded(True)
    await _changed(win, lambda: b.rename(b.row("beat", "雨夜捡到玉佩"), "雨夜里捡到玉佩"))
    assert b.row("beat", "雨夜里捡到玉佩").parent().text(0) == "雨夜"
    assert "- 雨夜里捡到玉佩" in (Path(win.chat.dir) / "大纲.md").read_text("utf-8")
    # the context menu offers the tree's commands
    menu = b.context_menu(b.row("chapter", "雨夜"))
    texts = [a.text() for a in menu.actions()]
    assert "改名…" in texts and "状态" in texts and "链接到文件" in texts and "删除…" in texts
    status = next(a.menu() for a in b.context_menu(b.row("chapter", "旧信")).actions() if a.text() == "状态")
    await _changed(win, lambda: next(a for a in status.actions() if a.text() == "修订").trigger())
    assert b.row("chapter", "旧信").text(1) == "修订" and "status=revised" in (Path(win.chat.dir) / "大纲.md").read_text("utf-8")


async def _agent_writes(win: MainWindow) -> None:
    steps = [s for name, text in CHAPTERS.items() for s in _turn(name, text)]
    win.chat.model = ReplayModel(actor=steps, scribe=['{"patch": {}}'] * 3)
    win.chat.scribe_model = None
    for i, name in enumerate(CHAPTERS, 1):
        done = len(win.results)
        win.input.setPlainText(f"写 {name}")
        win.send_clicked()
        await wait_for(lambda: len(win.results) > done and not win.busy, timeout=60)
        assert win.results[-1].error is None
    await wait_for(lambda: all(f for _v, rows in _binder_tree(win) for _t, f in rows))
    assert _binder_tree(win) == [("第一卷 雨夜", [("雨夜", "001-雨夜.md"), ("渡口", "002-渡口.md")]),
                                 ("第二卷 回声", [("旧信", "003-旧信.md")])]
    b = win.novel_room.binder
    row = b.row("chapter", "雨夜")
    assert row.text(1) == "初稿" and row.text(2).endswith("/1500")  # status moved on, 字数 against the target
    assert b.row("chapter", "旧信").text(1) == "修订"  # a status the author set is kept


async def _rename_keeps_link(win: MainWindow) -> None:
    wp = win.writing_panes
    before = wp.data
    assert win.chapter_pane.rename_to("002-渡口.md", "夜渡") == "002-夜渡.md"
    await wait_for(lambda: wp.data is not before and win.novel_room.binder.row("chapter", "002-夜渡.md") is not None)
    assert win.novel_room.binder.row("chapter", "渡口").data(0, KEY)[2] == "002-夜渡.md"
    assert not win.novel_room.binder.unlinked


async def _link_a_file_by_drop(win: MainWindow) -> None:
    """A chapter file written outside the outline is listed as unlinked; dropped on an outline chapter it links."""
    b, wp = win.novel_room.binder, win.writing_panes
    before = wp.data
    win.chat.import_chapters([("090-番外.md", "番外：老周年轻时的渡口。\n")], "导入番外")
    win.session.broadcast(win.chat.last_changes)
    await wait_for(lambda: wp.data is not before and "090-番外.md" in b.unlinked)
    b.select("volume", "第二卷 回声")
    await _changed(win, lambda: b.add_chapter("番外"))
    menu = b.context_menu(b.row("chapter", "番外"))
    link_menu = next(a.menu() for a in menu.actions() if a.text() == "链接到文件")
    assert [a.text() for a in link_menu.actions()] == ["090-番外.md"]
    await _changed(win, lambda: b.drop(b.row("file", "090-番外.md"), b.row("chapter", "番外"), "on"))
    assert b.row("chapter", "番外").data(0, KEY)[2] == "090-番外.md" and not b.unlinked


async def _codex_highlighted(win: MainWindow) -> None:
    room, wp = win.novel_room, win.writing_panes
    before = wp.data
    win.chat.codex_add(CodexRecord(name="林青", kind="character", description="渡口边长大的姑娘，怕水。", aliases=["阿青"]))
    win.session.broadcast(win.chat.last_changes)
    await wait_for(lambda: wp.data is not before and "林青" in room.highlighter.entries)
    assert "老周" in room.highlighter.entries  # the cast given at 新建长篇 is in the codex too
    win.novel_room.binder.open_item(win.novel_room.binder.row("chapter", "雨夜"))
    editor = win.chapter_pane.editor
    assert editor.name == "001-雨夜.md" and editor.isVisible()
    block = editor.text.document().firstBlock()
    spans = [(r.start, r.length) for r in block.layout().formats()
             if r.format.underlineStyle() == room.highlighter.mention_format.underlineStyle()]
    assert (0, 2) in spans and (block.text().index("阿青"), 2) in spans and (block.text().index("老周"), 2) in spans
    cur = editor.text.textCursor()
    cur.setPosition(block.text().index("阿青") + 1)
    rect = editor.text.cursorRect(cur)
    tip = room.tips.tip_at(rect.center().x(), rect.center().y())
    assert "林青" in tip and "怕水" in tip and "阿青" in tip


async def _export_epub(win: MainWindow, tmp_path: Path) -> None:
    win.novel_room.export_book()
    await wait_for(lambda: getattr(win, "book_export_dialog", None) is not None and win.book_export_dialog.isVisible())
    dlg = win.book_export_dialog
    assert dlg.title_edit.text() == "河灯" and dlg.author_edit.text() == "阿梨"
    assert dlg.chapters.count() == 4
    dlg.chapters.item(3).setCheckState(Qt.CheckState.Unchecked)  # the 番外 stays out of the book
    dlg.subtitle_edit.setText("一部小说")
    dlg.format.setCurrentIndex(dlg.format.findData("epub"))
    out = tmp_path / "河灯.epub"
    dlg.out_edit.setText(str(out))
    _grab(dlg, "export-dialog")
    dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    await wait_for(lambda: getattr(win, "book_export_task", None) is not None and win.book_export_task.done())
    assert win.book_export_task.result() is not None and out.is_file()
    with zipfile.ZipFile(out) as z:
        pages = {n: z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xhtml")}
    body = "\n".join(pages.values())
    nav = next(t for n, t in pages.items() if "nav" in n.lower())
    titles = re.findall(r"<a [^>]*>([^<]*)</a>", nav)
    assert [t for t in titles if "雨夜" in t or "渡" in t or "旧信" in t] == ["雨夜", "渡口", "旧信"], titles
    assert "老周年轻时" not in body  # the chapter left out
    chapter_pages = [t for n, t in pages.items() if "雨里捡到" in t]
    assert len(chapter_pages) == 1 and len(re.findall(r"<h[1-3][^>]*>", chapter_pages[0])) == 1  # one heading
    from test_book_export_options import epubcheck  # the one EPUBCheck runner of the tests (tests/ is on the path)

    epubcheck(out)


def _grab(w, name: str) -> None:
    out = os.environ.get("LIYUAN_SHOTS_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        w.grab().save(str(Path(out) / f"{name}.png"))


async def _shots(win: MainWindow, tag: str) -> None:
    out = os.environ.get("LIYUAN_SHOTS_DIR")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    try:
        for size in ((1366, 768), (1920, 1080)):
            win.resize(*size)
            for mode in ("light", "dark"):
                theme.apply(mode)
                await asyncio.sleep(0.8)  # the style sheet, the layout and the conversation page settle
                win.grab().save(str(Path(out) / f"novel-{tag}-{size[0]}x{size[1]}-{mode}.png"))
    finally:
        theme.apply("light")
        win.resize(1366, 768)


async def _switch_layouts(win: MainWindow) -> None:
    room = win.novel_room
    novel_card, novel_ref = win.card_ref, win.chat_ref
    room.docks["checkpoints"].hide()  # the user closes a dock: remembered
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "角色扮演")
    from liyuan_desktop.core.chat.facade import Chat

    Chat.create(d, card.load(), ReplayModel(actor=[])).close()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    assert not room.active and win.split.count() == 3 and win.split.widget(1).isVisible()
    assert win.tabs.indexOf(win.timeline_pane) >= 0 and not win.tabs.isTabVisible(win.tabs.indexOf(win.timeline_pane))
    assert not room.docks["binder"].isVisible() and win.settings.window.get("manuscript")
    assert win.open_chat(novel_card, novel_ref)
    assert room.active and room.docks["binder"].isVisible() and not room.docks["checkpoints"].isVisible()
    assert win.split.widget(0) is win.chapter_pane.editor
    room.reset_layout()
    assert room.docks["checkpoints"].isVisible() and room.docks["agent"].isVisible()


async def test_a_novel_from_new_to_epub_in_the_manuscript_layout(qtbot, tmp_path):
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    await _new_novel(win, qtbot)
    room = win.novel_room
    assert win.chat.mode == "agent" and Path(win.chat.dir).name == "书稿"
    assert room.docks["binder"].isVisible() and room.docks["agent"].isVisible()
    assert win.split.widget(0) is win.chapter_pane.editor and win.chapter_pane.editor.isVisible()
    assert win.dockWidgetArea(room.docks["binder"]) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert win.dockWidgetArea(room.docks["agent"]) == Qt.DockWidgetArea.RightDockWidgetArea
    assert win.chapter_pane.editor.width() > room.docks["binder"].width()
    await _build_outline(win)
    await _agent_writes(win)
    await _rename_keeps_link(win)
    await _link_a_file_by_drop(win)
    await _codex_highlighted(win)
    await _shots(win, "room")
    await _export_epub(win, tmp_path)
    await _switch_layouts(win)
    # focus mode hides every dock and brings them back
    editor = win.chapter_pane.editor
    await wait_for(lambda: room.binder.row("chapter", "雨夜") is not None)
    assert room.binder.open_item(room.binder.row("chapter", "雨夜")) and editor.name == "001-雨夜.md"
    editor.set_focus_mode(True)
    assert not room.docks["binder"].isVisible() and editor.isVisible()
    editor.set_focus_mode(False)
    assert room.docks["binder"].isVisible()

    # the arrangement outlives the window: closed with the novel open, a new window opens it the same way
    room.docks["review"].hide()
    card_ref, chat_ref = win.card_ref, win.chat_ref
    win.close()
    assert not room.active and len(S.load_settings().window["split"]) == 3  # the usual layout's sizes were saved
    win2 = MainWindow(S.load_settings())
    qtbot.addWidget(win2)
    win2.resize(1366, 768)
    win2.show()
    assert win2.open_chat(card_ref, chat_ref)
    room2 = win2.novel_room
    assert room2.active and room2.docks["binder"].isVisible() and not room2.docks["review"].isVisible()
    assert room2.docks["agent"].isVisible()

    # a language switch (the window built again: ui/window/language_switch.py) retitles the docks and the binder;
    # the manuscript layout stays as it was arranged
    from liyuan_desktop.ui.infra import i18n
    from liyuan_desktop.ui.window.language_switch import current

    try:
        i18n.set_language("en")
        win2.language_changed("en")  # once the writing room's gathering is over
        await wait_for(lambda: current(win2) is not win2)
        win2 = current(win2)
        qtbot.addWidget(win2)
        room2 = win2.novel_room
        assert room2.active and room2.docks["binder"].isVisible() and not room2.docks["review"].isVisible()
        assert room2.docks["binder"].windowTitle() == "Binder" and room2.docks["agent"].windowTitle() == "Agent"
        assert room2.binder.tree.headerItem().text(0) == "Volume / chapter"
    finally:
        i18n.set_language("zh")
        win2.language_changed("zh")
        await wait_for(lambda: current(win2) is not win2)
        win2 = current(win2)
        qtbot.addWidget(win2)
    assert win2.novel_room.docks["binder"].windowTitle() != "Binder"
