"""A reader at the end of the chat stays at the end when what is shown grows after the fact (conversation.js,
"pinned"): the window reopened its last chat with the newest message cut off, because the page grew (the banner,
fonts, avatars, a status bar) after the transcript was scrolled to the end. Scrolling up unpins: then nothing moves."""

from __future__ import annotations

from uihelpers import view_js
from uihelpers import view_json as js

GEOM = "[document.scrollingElement.scrollTop, document.scrollingElement.scrollHeight, document.scrollingElement.clientHeight]"


def _items(n: int) -> list[dict]:
    return [{"id": str(i), "role": "assistant" if i % 2 else "user", "text": f"第 {i} 条。" + "雨声。" * 80, "beat": i}
            for i in range(n)]


def _at_end(g) -> bool:
    top, height, client = g
    return height - top - client <= 2


def _grow_last(qtbot, view, px: int) -> None:
    view_js(qtbot, view, f"(function(){{var l=document.querySelector('#log').lastElementChild; "
                    f"l.style.paddingBottom='{px}px'; return 1}})()")
    qtbot.wait(300)  # a layout, the resize observer, a frame


def test_the_end_stays_in_view_when_the_page_grows_later(qtbot, view):
    view.set_transcript(_items(40), False)
    qtbot.waitUntil(lambda: _at_end(js(qtbot, view, GEOM)), timeout=5000)
    view.set_banner("回放模型 · 离线演示")  # appears above the transcript after it was scrolled
    _grow_last(qtbot, view, 300)  # the newest message grows (a bar taking its height, a font arriving)
    g = js(qtbot, view, GEOM)
    assert _at_end(g), g


def test_a_reader_who_scrolled_up_is_not_moved(qtbot, view):
    view.set_transcript(_items(40), False)
    qtbot.waitUntil(lambda: _at_end(js(qtbot, view, GEOM)), timeout=5000)
    view_js(qtbot, view, "(function(){document.scrollingElement.scrollTop = 200; return 1})()")
    qtbot.wait(200)
    _grow_last(qtbot, view, 300)
    g = js(qtbot, view, GEOM)
    assert g[0] == 200 and not _at_end(g), g
