"""Issue 19 in the window (ui/writing/writing_panes.py and the 大纲 / 伏笔 / 设定 / 审稿 panes): a 10-chapter agent project built
through the real engine (replayed model, real agent loop, checkpoints, scribe), opened in the main window. The panes
show the outline with statuses, 字数 and targets, the threads with the past-due one flagged in red, the codex with
mentions that open the chapter at the name, the review with accept / intentional; edits go through Chat's commands and
the panes follow. Gathering runs on a worker (the loop's longest stall is measured, only a generous bound asserted).

Screenshots: with ``LIYUAN_SHOTS_DIR`` set, the test saves the three panes (light and dark) there."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt
from uihelpers import LoopStallMeter, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.text import count_words
from liyuan_desktop.ui.infra import theme
from liyuan_desktop.ui.window.main_window import MainWindow

OUTLINE = "\n".join([
    "# 第一卷 雨夜",
    *[f"## 第{i}章 章{i} {{target=20}}\n- 情节{i}" + ("\n- 回收：玉佩的来历" if i == 5 else "") for i in range(1, 6)],
    "# 第二卷 回声",
    *[f"## 第{i}章 章{i} {{target=20}}\n- 情节{i}" + ("\n- 回收：旧信" if i == 8 else "") for i in range(6, 11)],
]) + "\n"


def chapter_text(i: int) -> str:
    if i == 2:
        return "林青在雨里捡到一块玉佩。玉佩的来历无人知晓。阿檀看着她。\n"
    if i == 3:
        return "阿檀递给林青一封旧信。林青没有拆开。\n"
    if i == 6:
        return "雨夜，渡口。\n「我回来了。」老周笑道。\n林青站在桥上，嘴角勾起一抹笑。\n"
    if i == 8:
        return "林青拆开旧信：那是阿檀写给老周的。\n"
    return f"林青走过第{i}条街。阿檀在桥上等她。\n"


def turn_steps(i: int) -> list[dict]:
    name = f"{i:03d}-章{i}.md"
    return [{"content": "", "tool_calls": [
        {"name": "write", "arguments": json.dumps({"path": name, "content": chapter_text(i)}, ensure_ascii=False)},
        {"name": "outline_edit", "arguments": json.dumps({"chapter": str(i), "status": "drafted", "file": name},
                                                         ensure_ascii=False)}]},
        {"content": f"第{i}章写好了。", "tool_calls": []}]


def scribe_patch(i: int) -> str:
    threads = (["玉佩的来历"] if i >= 2 else []) + (["旧信"] if 3 <= i < 8 else [])
    chars = {"林青": {"status": f"第{i}章的林青"}, "阿檀": {"status": "守桥"},
             "老周": {"status": "第4章遇害身亡" if i >= 4 else "撑船"}}
    return json.dumps({"patch": {"time": f"第{i}天", "characters": chars, "plot_threads": threads}}, ensure_ascii=False)


MODEL_REVIEW = json.dumps({"findings": [{"kind": "ooc", "quote": "林青站在桥上", "note": "林青此时应在渡口。"}]},
                          ensure_ascii=False)


async def _project() -> tuple[library.CardRef, Path]:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "长篇-十章")
    actor = [s for i in range(1, 11) for s in turn_steps(i)]
    chat = Chat.create(d, card.load(), ReplayModel(actor=actor, scribe=[scribe_patch(i) for i in range(1, 11)]),
                       mode="agent")
    chat.save_outline(OUTLINE)
    for i in range(1, 11):
        res = await chat.send(f"写第{i}章")
        assert res.error is None
    return card, d


def _shots(win: MainWindow, names: tuple[str, ...]) -> None:
    """Grab the window on each pane of ``names``, light and dark, into ``$LIYUAN_SHOTS_DIR`` (when set)."""
    out = os.environ.get("LIYUAN_SHOTS_DIR")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    wp = win.writing_panes
    panes = {"outline": wp.outline, "threads": wp.threads, "codex": wp.codex, "review": wp.review,
             "chapters": win.chapter_pane}
    try:
        for tag in ("light", "dark"):
            theme.apply(tag)
            for name in names:
                win.tabs.setCurrentWidget(panes[name])
                panes[name].repaint()
                win.grab().save(str(Path(out) / f"{name}-{tag}.png"))
    finally:
        theme.apply("light")


async def test_writing_room_panes_on_a_ten_chapter_project(qtbot):
    card, d = await _project()
    win = MainWindow(S.AppSettings(window={"manuscript_on": False}))  # the tabbed layout (issue 28: opt-out)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    wp = win.writing_panes
    tabs = win.tabs
    assert not tabs.isTabVisible(tabs.indexOf(wp.outline))  # no chat yet: hidden
    with LoopStallMeter() as meter:
        assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
        await wait_for(lambda: wp.data is not None)
    print(f"open + gather: worst loop stall {meter.worst_ms:.0f} ms over {meter.ticks} ticks")
    assert meter.worst_ms < 3000
    chat = win.chat
    for pane in wp.panes:
        assert tabs.isTabVisible(tabs.indexOf(pane))
    assert tabs.indexOf(wp.outline) == tabs.indexOf(win.chapter_pane) + 1  # 大纲 beside 章节

    # 大纲: two volumes, ten chapters drafted and linked, 字数/目标, the book's progress
    o = wp.outline
    tops = [o.tree.topLevelItem(i).text(0) for i in range(o.tree.topLevelItemCount())]
    assert tops == ["第一卷 雨夜", "第二卷 回声"]
    rows = o.chapter_items()
    assert len(rows) == 10
    assert [r.text(1) for r in rows] == ["初稿"] * 10
    assert rows[1].text(2) == f"{count_words(chapter_text(2))}/20" and rows[1].text(3) == "002-章2.md"
    words = sum(count_words(chapter_text(i)) for i in range(1, 11))
    assert o.progress.text().startswith(f"全书 {words} 字 / 目标 200") and "今天" in o.progress.text()
    assert wp.status_progress.text() == o.progress.text()
    # double-click a chapter: 章节 opens it
    o._activate(rows[2])
    assert tabs.currentWidget() is win.chapter_pane and win.chapter_pane.editor.name == "003-章3.md"
    assert "本章" in wp.chapter_progress.text() and "/20" in wp.chapter_progress.text()
    _shots(win, ("chapters",))

    wp.codex.select_name("老周")
    wp.threads.tree.setCurrentItem(None)
    _shots(win, ("outline", "threads", "codex"))

    # edit a status and a target through the pane
    o.select_chapter(2)
    o.ask_item = lambda label, items, cur: items.index("修订")
    assert o.change_status()
    o.ask_int = lambda label, v: 3000
    assert o.change_target()
    # both changes run on a worker one after the other, each followed by a gather: the row settles on both
    await wait_for(lambda: wp.outline.chapter_items()[2].text(1) == "修订"
                   and wp.outline.chapter_items()[2].text(2).endswith("/3000"))
    assert chat.outline().chapters()[2].status == "revised" and chat.outline().chapters()[2].target == 3000
    assert wp.outline.chapter_items()[2].text(2).endswith("/3000")

    # 伏笔: 玉佩的来历 due by chapter 5 and still open at chapter 10 → flagged red; 旧信 paid off in chapter 8
    t = wp.threads
    ths = t.threads()
    assert [x.title for x in ths] == ["玉佩的来历", "旧信"]
    late = t.tree.topLevelItem(0)
    assert late.text(0).startswith("⚠") and late.text(3) == "第 5 章" and late.text(2) == "第 2 章"
    assert late.foreground(0).color().name() == theme.colors()["error"]
    assert t.tree.topLevelItem(1).text(1) == "已回收"
    assert "1 条未回收，其中 1 条已过期" in t.summary.text()
    # double-click: the planted quote in chapter 2
    t._open(late)
    ed = win.chapter_pane.editor
    assert ed.name == "002-章2.md" and ed.text.textCursor().selectedText() == "玉佩的来历无人知晓。"
    # mark it intentional: no longer flagged
    t.select(ths[0].id)
    assert t.toggle_intentional()
    await wait_for(lambda: not wp.threads.tree.topLevelItem(0).text(0).startswith("⚠"))
    assert chat.threads()[0].intentional

    # 设定: names by kind with mentions; a mention opens the chapter at the name
    c = wp.codex
    names = {it.data(0, Qt.ItemDataRole.UserRole).name: it for it in c.entry_items()}
    assert {"林青", "阿檀", "老周"} <= set(names)
    assert names["林青"].text(1) == str(sum(chapter_text(i).count("林青") for i in range(1, 11)))
    assert c.select_name("老周")
    assert "第4章遇害身亡" in c.facts.text() and "自第 4 章" in c.facts.text()
    assert c.mentions.count() == sum(chapter_text(i).count("老周") for i in range(1, 11))
    first = c.mentions.item(0)
    assert first.text().startswith("006-章6.md") and "【老周】" in first.text()
    c._open(first)
    assert ed.name == "006-章6.md" and ed.text.textCursor().selectedText() == "老周"
    # an alias counts as a mention
    c.select_name("阿檀")
    before = int(names["阿檀"].text(1))
    c.aliases.setText("檀")  # 「檀」 alone adds nothing new here (it is inside 阿檀: the longest match wins)
    assert c.save_aliases()
    await wait_for(lambda: chat.aliases().get("阿檀") == ["檀"])
    await wait_for(lambda: c.select_name("阿檀") and c.aliases.text() == "檀")
    assert int(next(it for it in c.entry_items() if it.data(0, Qt.ItemDataRole.UserRole).name == "阿檀").text(1)) == before

    # a turn played in the window: the panes follow once it is over
    new10 = "林青走过第10条街，雨停了。阿檀在桥上等她，手里拿着伞。\n"
    chat.model = ReplayModel(actor=[
        {"content": "", "tool_calls": [{"name": "write", "arguments": json.dumps(
            {"path": "010-章10.md", "content": new10}, ensure_ascii=False)}]},
        {"content": "改好了。", "tool_calls": []}], scribe=[scribe_patch(10)])
    n = len(win.results)
    win.input.setPlainText("把第10章写长一点")
    win.send_clicked()
    await wait_for(lambda: len(win.results) > n and not win.busy)
    assert win.results[-1].error is None
    await wait_for(lambda: wp.outline.chapter_items()[9].text(2) == f"{count_words(new10)}/20")

    # 审稿: from 章节's button on chapter 6; the local check finds 老周 speaking, the model adds one
    chat.model = ReplayModel(actor=[], scribe=[MODEL_REVIEW])
    win.tabs.setCurrentWidget(win.chapter_pane)
    win.chapter_pane.select("006-章6.md")
    assert wp.review_btn.isEnabled()
    wp.review_btn.click()
    assert tabs.currentWidget() is wp.review
    await wait_for(lambda: wp.review.result is not None and wp.review.task.done())
    r = wp.review
    kinds = [f.kind for f in r.findings()]
    assert "dead_speaks" in kinds and "stock_phrase" in kinds and "ooc" in kinds
    assert "模型：" in r.summary.text()
    _shots(win, ("review",))
    dead_row = kinds.index("dead_speaks")
    r.tree.setCurrentItem(r.tree.topLevelItem(dead_row))
    assert r.accept()
    assert "1 条" in r.pending.text() and len(chat.pending_review()) == 1
    assert "【审稿意见】" in chat.agent.state_block(chat.current_state())
    # intentional: the stock phrase leaves the list and is not reported again
    r.tree.setCurrentItem(r.tree.topLevelItem([f.kind for f in r.findings()].index("stock_phrase")))
    assert r.intentional()
    assert "stock_phrase" not in [f.kind for f in r.findings()]
    r.local.setChecked(True)
    again = await r.review()
    assert "stock_phrase" not in [f.kind for f in again.findings] and again.suppressed == 1
    # open a finding: the chapter at the quote
    r.tree.setCurrentItem(r.tree.topLevelItem([f.kind for f in r.findings()].index("dead_speaks")))
    r.open_selected()
    assert ed.name == "006-章6.md" and ed.text.textCursor().selectedText() == "「我回来了。」老周笑道。"


    # the language switch builds the window again (ui/window/language_switch.py): the panes in English, the review
    # panel keeps its chapter and findings
    from liyuan_desktop.ui.infra import i18n

    found = [f.kind for f in wp.review.findings()]
    i18n.set_language("en")
    try:
        win = win.language_changed("en")
        qtbot.addWidget(win)
        wp, tabs = win.writing_panes, win.tabs
        await wait_for(lambda: wp.outline.chapter_items() and wp.outline.chapter_items()[0].text(1) == "drafted")
        assert wp.outline.tree.headerItem().text(1) == "Status"
        assert tabs.tabText(tabs.indexOf(wp.threads)) == "Threads" and wp.threads.tree.headerItem().text(3) == "Due by"
        assert wp.review.tree.headerItem().text(0) == "Kind" and [f.kind for f in wp.review.findings()] == found
    finally:
        i18n.set_language("zh")
        win = win.language_changed("zh")
        qtbot.addWidget(win)
        wp, tabs = win.writing_panes, win.tabs
    await wait_for(lambda: wp.outline.chapter_items() and wp.outline.chapter_items()[0].text(1) == "初稿")

    # a role-play chat hides the tabs
    wp.set_chat(None)
    assert not tabs.isTabVisible(tabs.indexOf(wp.outline))


async def test_outline_pane_without_outline_offers_a_new_one(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "长篇-无大纲")
    Chat.create(d, card.load(), ReplayModel(actor=[], scribe=[]), mode="agent").import_chapters(
        [("001-雨.md", "雨下了一夜。\n")])
    win = MainWindow(S.AppSettings(window={"manuscript_on": False}))  # the tabbed layout (issue 28: opt-out)
    qtbot.addWidget(win)
    win.show()
    wp = win.writing_panes
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: wp.data is not None)
    o = wp.outline
    assert not o.empty.isHidden() and not o.new_btn.isHidden()
    # the unlisted chapter still shows, with its 字数
    assert [it.text(3) for it in o.chapter_items()] == ["001-雨.md"]
    o.edit_text = lambda text: "# 卷一\n## 雨 {file=001-雨.md target=100}\n- 下雨\n"
    assert o.new_outline()
    await wait_for(lambda: wp.data is not None and wp.data.outline is not None and o.chapter_items()
                   and o.chapter_items()[0].text(2) == "5/100")
    assert o.empty.isHidden()
    assert win.chat.outline().chapters()[0].file == "001-雨.md"


async def test_outline_changes_are_applied_off_the_ui_thread(qtbot):
    """Issue 29 §1: saving the outline parses the whole 大纲.md (a long line once took minutes), so the pane's
    changes run on a worker thread; the pane still refreshes after, and a change asked while a turn runs is
    refused."""
    import threading

    from liyuan_desktop.ui.infra.i18n import tr

    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "长篇-大纲线程")
    Chat.create(d, card.load(), ReplayModel(actor=[], scribe=[]), mode="agent").import_chapters(
        [("001-雨.md", "雨下了一夜。\n")])
    win = MainWindow(S.AppSettings(window={"manuscript_on": False}))  # the tabbed layout (issue 28: opt-out)
    qtbot.addWidget(win)
    win.show()
    wp = win.writing_panes
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    await wait_for(lambda: wp.data is not None)
    o = wp.outline
    threads: list[threading.Thread] = []
    text = "# 卷一\n## 雨 {file=001-雨.md target=100}\n- 下雨\n"

    def save() -> None:
        threads.append(threading.current_thread())
        win.chat.save_outline(text)

    assert o._apply(save)
    await wait_for(lambda: bool(threads) and o.chapter_items() and o.chapter_items()[0].text(2) == "5/100")
    assert threads == [t for t in threads if t is not threading.main_thread()] and len(threads) == 1
    assert win.chat.outline().chapters()[0].target == 100 and o.note.text() == tr("wr.outline.saved")
    # while a turn runs the pane refuses, as before
    told: list[str] = []
    o.inform = told.append
    o.set_busy(True)
    assert not o._apply(save) and len(told) == 1 and len(threads) == 1
    o.set_busy(False)
