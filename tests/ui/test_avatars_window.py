"""Issue 17 "Avatars": the card's picture in the card list and beside its messages, the persona's beside the user's,
a drawn default (initial on a colour from the name) for a card without one; the page's CSP is unchanged."""

from __future__ import annotations

import asyncio

from PySide6.QtGui import QImage
from uihelpers import js

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.cards.export import export_png
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.frames import avatars
from liyuan_desktop.ui.window.main_window import MainWindow

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
SRCS = ("Array.from(document.querySelectorAll('#log img.avatar')).map(function(i){"
        "return [i.className, (i.getAttribute('src')||'').slice(0, 22), i.getBoundingClientRect().width]})")


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def test_default_avatar_is_stable_per_name_and_a_png_card_gives_its_picture(tmp_path, monkeypatch):
    a, b = avatars.default_avatar("青梧"), avatars.default_avatar("青梧")
    assert a == b and a.width() == avatars.SIZE
    assert avatars.name_colour("青梧") != avatars.name_colour("白鹭")
    assert a.pixelColor(0, 0).alpha() == 0  # a circle
    img = QImage(200, 300, QImage.Format.Format_RGB32)
    img.fill(0x3366AA)
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    ba = QByteArray()
    buf = QBuffer(ba)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    buf.close()
    (tmp_path / "c.png").write_bytes(export_png(load_card(library.ensure_demo_card().card_file), bytes(ba.data())))
    ref = library.import_card(tmp_path / "c.png")
    pic = avatars.card_avatar(ref)
    assert pic.width() == avatars.SIZE and pic.pixelColor(0, 0).name() == "#3366aa"  # the card's own picture
    assert avatars.card_avatar(library.ensure_demo_card()).pixelColor(0, 0).alpha() == 0  # a JSON card: the default
    # the list's icon reads the imported picture, never the card (a 50,000-entry book took 780 ms to parse for it)
    avatars._cache.clear()
    monkeypatch.setattr(type(ref), "load", lambda self: (_ for _ in ()).throw(AssertionError("card parsed for its icon")))
    assert avatars.card_avatar(ref).pixelColor(0, 0).name() == "#3366aa"


async def test_avatars_in_the_list_and_beside_messages(qtbot):
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "头像")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("雨停了。"), SEAL], scribe=['{"patch": {}}']))
    await chat.send("你好")
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    win.refresh_tree()
    top = win.tree.topLevelItem(0)
    assert not top.icon(0).isNull()
    assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while True:
        srcs = await js(win, SRCS)
        if srcs and all(s[1].startswith("data:image/png;base64") for s in srcs):
            break
        assert loop.time() < end, srcs
        await asyncio.sleep(0.05)
    kinds = [s[0] for s in srcs]
    assert kinds == ["avatar char", "avatar user", "avatar char"]  # opening, the user's words, the reply
    assert all(s[2] > 20 for s in srcs)  # laid out and visible
    csp = await js(win, "document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
    assert "img-src data:;" in csp and "connect-src 'none'" in csp
