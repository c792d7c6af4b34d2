"""Issue 17 in the window: 「编辑」 on a reply (in place since issue 26; a new version, the old one a swipe away, one line saying the ledger was
kept), 「续写」 the last reply, 「代拟」 into the input box (nothing sent), the 「作者注…」 editor with the card's
Character's Note read-only, 重来 disabled with nothing to play again, and the draft pane after a revision.

Async tests run on the qasync loop (tests/ui/conftest.py); the page is driven with JavaScript clicks."""

from __future__ import annotations

import asyncio

from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library as library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.prompt.authors_note import AuthorsNote
from liyuan_desktop.ui.dialogs.authors_note import AuthorsNoteDialog
from liyuan_desktop.ui.roleplay.draft_pane import DraftPane
from liyuan_desktop.ui.window.main_window import MainWindow

REPLIES = "Array.from(document.querySelectorAll('#log [data-role=assistant] .body')).map(e => e.textContent)"
LAST_SWIPE = ("(function(){var a=document.querySelectorAll('#log [data-role=assistant]');"
              "var s=a.length?a[a.length-1].querySelector('.swipe-count'):null;return s?s.textContent:null})()")


def w(text: str, version: int = 0) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": version, "content": text}}]}


def seal(version: int = 1) -> dict:
    return {"tool_calls": [{"name": "draft_seal", "arguments": {"version": version}}]}


def make_window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def open_chat(win: MainWindow, model, card=None) -> Chat:
    ref = library.ensure_demo_card()
    d = library.new_chat_dir(ref, "回复")
    chat = Chat.create(d, card or ref.load(), model)
    win.chat, win.chat_ref, win.card_ref, win.is_demo = chat, library.ChatRef(name=d.name, dir=str(d)), ref, False
    win._after_open()
    return chat


async def until_js(win, script, pred, timeout=20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        v = await js(win, script)
        if pred(v):
            return v
        assert loop.time() < end, f"page never satisfied the condition; last value: {v!r}"
        await asyncio.sleep(0.05)


async def send(win: MainWindow, text: str) -> None:
    n = len(win.results)
    win.input.setPlainText(text)
    win.send_clicked()
    await wait_for(lambda: len(win.results) > n and not win.busy)


async def test_edit_a_reply_in_the_view(qtbot):
    win = make_window(qtbot)
    model = ReplayModel(actor=[w("月色很好。"), seal()], scribe=['{"patch": {"flags": {"月": "圆"}}}'])
    chat = open_chat(win, model)
    assert not win.regen_btn.isEnabled()  # nothing to play again yet
    await send(win, "看看月亮")
    assert win.regen_btn.isEnabled()
    await until_js(win, REPLIES, lambda v: v and v[-1].strip() == "月色很好。")
    # the reply's 编辑 (issue 26: in place, in the page) saves through the window
    await js(win, "(document.querySelector('#log [data-role=assistant] .msg-actions .act-edit').click(), true)")
    assert await until_js(win, "document.querySelector('#log [data-role=assistant] .inline-edit textarea').value",
                          lambda v: v == "月色很好。")
    await js(win, "(function(){var t=document.querySelector('#log [data-role=assistant] .inline-edit textarea');"
                  "t.value='月色很好，风也很轻。';document.querySelector('#log .inline-save').click();return 1})()")
    await until_js(win, REPLIES, lambda v: v and v[-1].strip() == "月色很好，风也很轻。")
    assert await until_js(win, LAST_SWIPE, lambda v: v == "2/2")
    assert "账本" in win.statusBar().currentMessage()  # one line: the ledger was not recomputed
    assert chat.current_state().flags == {"月": "圆"}
    await js(win, "(document.querySelector('#log [data-role=assistant] .swipe-prev').click(), true)")
    await until_js(win, REPLIES, lambda v: v and v[-1].strip() == "月色很好。")


async def test_continue_and_impersonate_in_the_window(qtbot):
    win = make_window(qtbot)
    model = ReplayModel(actor=[w("月色很好。"), seal(),
                               {"tool_calls": [{"name": "draft_append", "arguments": {"version": 1, "content": "云散开了。"}}]},
                               seal(2), {"content": "我抬头看了看天。"}],
                        scribe=['{"patch": {}}', '{"patch": {}}'])
    chat = open_chat(win, model)
    ra = win.reply_actions
    assert not ra.continue_btn.isEnabled() and ra.impersonate_btn.isEnabled()
    await send(win, "看看月亮")
    assert ra.continue_btn.isEnabled()
    n = len(win.results)
    ra.continue_btn.click()
    await wait_for(lambda: len(win.results) > n and not win.busy)
    await until_js(win, REPLIES, lambda v: v and "云散开了。" in v[-1] and "月色很好。" in v[-1])
    assert await until_js(win, LAST_SWIPE, lambda v: v == "2/2")
    before = chat.tree.path.read_bytes()
    win.input.setPlainText("旧的字")
    task = ra.impersonate_clicked()
    assert task is not None and not ra.impersonate_btn.isEnabled()
    await wait_for(lambda: ra.impersonating is None)
    assert win.input.toPlainText() == "我抬头看了看天。" and not win.input.isReadOnly()
    assert chat.tree.path.read_bytes() == before  # nothing sent, nothing saved
    assert len(win.results) == n + 1


async def test_authors_note_dialog_saves_and_shows_the_character_note(qtbot):
    win = make_window(qtbot)
    card = library.ensure_demo_card().load()
    card.extensions = {**(card.extensions or {}), "depth_prompt": {"prompt": "保持冷静。", "depth": 2, "role": "user"}}
    chat = open_chat(win, ReplayModel(actor=[], scribe=[]), card=card)
    win.reply_actions.note_action.trigger()
    dlg = win.reply_actions.dialog
    assert isinstance(dlg, AuthorsNoteDialog) and dlg.isVisible()
    assert dlg.char_note.isReadOnly() and dlg.char_note.toPlainText() == "保持冷静。"
    assert "2" in dlg.char_where.text() and "每一拍都会插入" in dlg.char_where.text()  # sent without a preset too
    dlg.text.setPlainText("多写景。")
    dlg.depth.setValue(1)
    dlg.interval.setValue(2)
    dlg.accept()
    assert chat.authors_note() == AuthorsNote(text="多写景。", depth=1, interval=2)
    assert "作者注" in win.statusBar().currentMessage() or "Author" in win.statusBar().currentMessage()
    again = AuthorsNoteDialog(chat)  # reopening shows what was saved
    qtbot.addWidget(again)
    assert again.text.toPlainText() == "多写景。" and again.depth.value() == 1 and again.interval.value() == 2


def test_draft_pane_after_a_revision_is_not_unsealed(qtbot):
    pane = DraftPane()
    qtbot.addWidget(pane)
    pane.show_beat("", 0, "revised_previous")
    assert "尚未收笔" not in pane.status.text() and "没有收笔" not in pane.status.text()
    assert "版本 0" not in pane.status.text()


def test_draft_pane_renders_markdown_and_tool_arguments_readably(qtbot):
    from liyuan_desktop.core.beat.events import CallStarted, ModelDelta, ScribeFinished
    from liyuan_desktop.ui.roleplay.draft_pane import applied_in_words

    pane = DraftPane()
    qtbot.addWidget(pane)
    pane.draft.setPlainText("她*轻轻*笑了。\n**灯**亮着。")
    assert pane.draft.toPlainText() == "她*轻轻*笑了。\n**灯**亮着。"  # the draft as written
    html = pane.draft.toHtml()
    assert "font-style:italic" in html and "font-weight" in html and "*轻轻*" not in pane.draft.document().toPlainText()
    pane.on_event(CallStarted(round=1, max_rounds=20))
    pane.on_event(ModelDelta(round=1, channel="tool_name", text="draft_write", index=0))
    for piece in ['{"version": 0, "con', 'tent": "他说：\\"好', '。\\"\\n第二', '行\\u4f', '60"}']:
        pane.on_event(ModelDelta(round=1, channel="tool_args", text=piece, index=0))
    pane._flush_text()
    shown = pane.stream.toPlainText()
    assert '他说："好。"\n第二行你' in shown and "\\n" not in shown and '"version"' not in shown
    pane.raw_toggle.setChecked(True)  # raw JSON on demand
    assert '"version": 0' in pane.stream.toPlainText()
    pane.raw_toggle.setChecked(False)
    assert '"version"' not in pane.stream.toPlainText()
    assert applied_in_words("characters.青梧 已更新") == "青梧：状态已更新"
    pane.on_event(ScribeFinished(applied=["characters.青梧 已更新", "time → 夜里"], warnings=[], state="", roster=""))
    line = pane.activity.item(pane.activity.count() - 1).text()
    assert "青梧：状态已更新" in line and "时间：夜里" in line and "characters." not in line


async def test_inspector_shows_the_notes(qtbot):
    win = make_window(qtbot)
    model = ReplayModel(actor=[w("好。"), seal()], scribe=['{"patch": {}}'])
    chat = open_chat(win, model)
    chat.set_authors_note(AuthorsNote(text="多写景。", depth=2))
    await send(win, "你好")
    dlg = win.inspect_latest()
    assert dlg is not None and dlg.notes.isVisible()
    assert "多写景。" in dlg.notes.text() and "2" in dlg.notes.text()
    sent = dlg.all_text()
    assert "多写景。" in sent  # and the note is in the call as sent
