"""Issue 13 §4 in the real window (offscreen QtWebEngine): the card's display regex scripts run on a worker thread —
the transcript is painted before they finish and filled in after; reopening paints from the disk cache with nothing
left to run; a script that hits the time limit is named once in the activity list, not once per message."""

from __future__ import annotations

from heavy_regex_card import SLOW_SCRIPT, THINK_SCRIPT, make_card, make_chat
from uihelpers import js, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.ui.window.main_window import MainWindow


def _window(qtbot) -> MainWindow:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    return win


def _refs(card, card_dir, chat_dir):
    return (library.CardRef(name=card.name, dir=str(card_dir)),
            library.ChatRef(name=chat_dir.name, dir=str(chat_dir)))


async def _dom(win):
    return await js(win, "Array.from(document.querySelectorAll('#log .msg')).map(e => "
                         "({id: e.dataset.id, scripting: e.classList.contains('scripting'), text: e.textContent}))")


async def test_view_paints_before_the_scripts_finish_then_fills_in_and_reopens_from_cache(qtbot, tmp_path):
    card, card_dir = make_card(tmp_path, [THINK_SCRIPT])
    chat_dir = make_chat(tmp_path, card, beats=6, chars=5000)
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    card_ref, chat_ref = _refs(card, card_dir, chat_dir)
    assert win.open_chat(card_ref, chat_ref)
    first = await _dom(win)
    assert len(first) == 13  # the opening and six beats, painted at once
    waiting = [m for m in first if m["scripting"]]
    assert waiting, "every item was scripted before the first paint"
    replies = [m for m in waiting if m["id"] != "0"]  # (the opening is scripted too: placement "AI output")
    assert replies and all("想一想" in m["text"] for m in replies)  # shown from the stored text meanwhile
    await wait_for(win.display_worker.idle, timeout=120)
    await wait_for(lambda: True)

    async def filled():
        dom = await _dom(win)
        return not any(m["scripting"] for m in dom) and not any("想一想" in m["text"] for m in dom)

    for _ in range(200):
        if await filled():
            break
        await qtbot_sleep()
    assert await filled()
    # reopening (a fresh window, as after a restart): everything comes from the cache beside the chat
    win.close()
    win2 = _window(qtbot)
    await wait_for(win2.view.is_ready)
    assert win2.open_chat(card_ref, chat_ref)
    assert win2.display_worker.idle()
    again = await _dom(win2)
    assert len(again) == 13 and not any(m["scripting"] for m in again)
    assert not any("想一想" in m["text"] for m in again)


async def test_timed_out_script_is_named_once(qtbot, tmp_path):
    card, card_dir = make_card(tmp_path, [SLOW_SCRIPT])
    chat_dir = make_chat(tmp_path, card, beats=3, reply="a" * 40 + "!")
    win = _window(qtbot)
    await wait_for(win.view.is_ready)
    assert win.open_chat(*_refs(card, card_dir, chat_dir))
    await wait_for(win.display_worker.idle, timeout=60)
    await wait_for(lambda: True)
    lines = [win.draft_pane.activity.item(i).text() for i in range(win.draft_pane.activity.count())]
    named = [t for t in lines if "卡死的正则" in t]
    assert len(named) == 1, lines
    assert "超时" in named[0]
    # the messages are still shown (without that script)
    dom = await _dom(win)
    assert len(dom) == 7 and not any(m["scripting"] for m in dom)


async def qtbot_sleep() -> None:
    import asyncio

    await asyncio.sleep(0.05)
