"""Breaking a group chat in the window as a user would (z99break): a member's card file broken after the group
was made, every member muted, a member's card deleted from the library. Screenshots to LIYUAN_SHOTS when set."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from test_group_auto_window import names, open_group, settled

from liyuan_desktop.core.cards.library import card_folder
from liyuan_desktop.core.messages import message
from liyuan_desktop.ui.infra import i18n


def shot(win, name: str) -> None:
    folder = os.environ.get("LIYUAN_SHOTS")
    if folder:
        win.grab().save(str(Path(folder) / f"{name}.png"))


async def test_broken_gone_and_all_muted_members_keep_the_users_words(qtbot, tmp_path):
    i18n.set_language("en")
    try:
        win = await open_group(qtbot, tmp_path)
        pane = win.group_pane
        (card_folder("Birch") / "card.json").write_text("{garbage", "utf-8")
        win.input.setPlainText("Birch, hello. Aster too.")
        win.send_clicked()
        await settled(win)
        assert (await names(win))[:1] == ["Aster"] and "Birch" not in await names(win)  # passed over, no error
        shot(win, "break-broken-member")
        shutil.rmtree(card_folder("Cedar"))
        win.input.setPlainText("Cedar?")
        win.send_clicked()
        await settled(win)
        assert "Cedar" not in (await names(win))[2:]
        rows = [pane.list.item(i).text() for i in range(pane.list.count())]
        assert ["card missing or damaged" in r for r in rows] == [False, True, True], rows  # Birch broken, Cedar gone
        win.tabs.setCurrentWidget(pane)
        qtbot.wait(100)
        shot(win, "break-gone-member")
        before = await names(win)
        pane.list.setCurrentRow(1)  # Birch, whose card is broken, made to speak by hand with words typed
        win.input.setPlainText("Birch, say something.")
        pane.make_speak()
        await settled(win)
        assert win.statusBar().currentMessage() == message("group.member_missing", name="Birch").render("en")
        assert win.input.toPlainText() == "Birch, say something." and await names(win) == before
        win.input.clear()
        for i in range(pane.list.count()):
            pane.list.setCurrentRow(i)
            pane.toggle_mute()
        win.input.setPlainText("Anyone there?")
        win.send_clicked()
        await settled(win)
        shot(win, "break-all-muted")
        assert await names(win) == before
        assert win.statusBar().currentMessage() == message("group.why.nobody").render("en")
        assert win.input.toPlainText() == "Anyone there?"  # refused before it was played: the words stay
        assert "Anyone there?" not in [e.text for e in win.chat.tree.path_to() if e.type == "user"]
    finally:
        i18n.set_language("zh")
