"""Issue 31 in the window: a group chat whose member's follow-up a crash cut off opens with a notice naming that
member (never the hidden nudge as the user's words); 「让TA接着说」 lets them reply, 撤下 drops the turn. Screenshots
in both languages go to /tmp/z31fix-cut-<lang>.png."""

from __future__ import annotations

import pytest
from test_group_chat_window import cards, w
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.group_play import prepare_follow_up, waiting
from liyuan_desktop.core.group import Group, save_group
from liyuan_desktop.core.group.model import group_dir
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.infra.i18n import tr
from liyuan_desktop.ui.roleplay.group_members import open_group_chat
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def replay(n: int) -> ReplayModel:
    return ReplayModel(actor=[x for i in range(n) for x in (w(f"Line {i}."), SEAL)], scribe=["{}"] * n)


async def cut_chat(tmp_path) -> tuple[Group, Chat]:
    """A group chat whose second member's follow-up was on disk when the app died."""
    cards(tmp_path)
    g = Group(name="Party", members=["Aster", "Birch", "Cedar"])
    save_group(g)
    chat = Chat.create_group(group_dir("Party") / "对话" / "cut", g, replay(1), group_seed="s")
    await chat.send("Cedar and Aster, sit down.")
    assert waiting(chat)[0] == "Aster"  # Cedar answered first; Aster is next
    prepare_follow_up(chat)
    chat.close()
    return g, chat


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_a_cut_follow_up_is_offered_back_as_that_members_reply(qtbot, tmp_path, lang):
    i18n.set_language(lang)
    try:
        g, chat = await cut_chat(tmp_path)
        win = MainWindow(S.AppSettings())
        qtbot.addWidget(win)
        win.resize(1280, 820)
        win.show()
        await wait_for(win.view.is_ready)
        assert open_group_chat(win, g, chat.dir)
        pane = win.draft_pane
        await wait_for(lambda: pane.unanswered_banner.isVisibleTo(pane))
        label = pane.unanswered_label.text()
        assert "Aster" in label and "（轮到" not in label and "Write the next reply" not in label
        assert pane.resend_btn.text() == tr("dp.cut.resume") and not pane.edit_unanswered_btn.isVisibleTo(pane)
        page = await js(win, "document.body.innerText")
        assert "（轮到" not in page and "Cedar and Aster, sit down." in page
        win.grab().save(f"/tmp/z31fix-cut-{lang}.png")
        win.chat.model = replay(1)
        pane.resend_btn.click()  # the member whose turn it was replies
        await wait_for(lambda: win.session.task is not None and win.session.task.done() and not win.busy, timeout=30)
        await wait_for(lambda: not pane.unanswered_banner.isVisibleTo(pane))
        said = [e.speaker for e in win.chat.tree.path_to() if e.type == "assistant"]
        assert said == ["Cedar", "Aster"]
        assert await js(win, "Array.from(document.querySelectorAll('#log .speaker')).map(e => e.textContent)") \
            == ["Cedar", "Aster"]
    finally:
        i18n.set_language("zh")


async def test_a_cut_follow_up_can_be_dropped(qtbot, tmp_path):
    g, chat = await cut_chat(tmp_path)
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    await wait_for(win.view.is_ready)
    assert open_group_chat(win, g, chat.dir)
    pane = win.draft_pane
    await wait_for(lambda: pane.unanswered_banner.isVisibleTo(pane))
    pane.drop_btn.click()
    assert win.chat.cut_turn() is None and not pane.unanswered_banner.isVisibleTo(pane)
    assert win.chat.tree.path_to()[-1].type != "user"
