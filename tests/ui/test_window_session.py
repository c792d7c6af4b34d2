"""Issue 25: the window's widget-free session (ui/infra/session.py) — what is open and what runs, with signals — and the
window reading and writing through it; the settings hook the migration window finds on the main window by its
public name."""

from __future__ import annotations

import asyncio

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.ui.infra.session import Session, TranscriptPage
from liyuan_desktop.ui.window.main_window import MainWindow


def _chat(name: str = "s") -> tuple[library.CardRef, library.ChatRef, Chat]:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, name)
    chat = Chat.create(d, card.load(), ReplayModel(actor=[]))
    return card, library.ChatRef(name=d.name, dir=str(d)), chat


def test_the_session_holds_the_open_chat_and_says_what_changed_without_a_window(qapp):
    s = Session()
    shown, busy, cards = [], [], []
    s.chatShown.connect(shown.append)
    s.busyChanged.connect(busy.append)
    s.cardSelected.connect(cards.append)
    card, ref, chat = _chat()
    try:
        assert s.set_chat(card, ref, chat, is_demo=False) is None  # nothing was open before
        assert (s.chat, s.chat_ref, s.card_ref, s.is_demo) == (chat, ref, card, False)
        assert cards == [card]
        s.card_ref = card  # the same card again: no notice
        assert cards == [card]
        s.announce_shown()
        assert shown == [chat]
        s.transcript.items, s.transcript.shown_from, s.transcript.browsing = [{"id": "a"}], 1, True
        s.set_busy(True)
        assert busy == [True] and s.marked_busy and not s.busy  # marked busy; no task of its own
        s.set_busy(False)
        assert s.drop() is chat
        assert s.chat is None and s.chat_ref is None and s.card_ref == card  # the card stays selected
        assert s.transcript == TranscriptPage()
        s.announce_shown()
        assert shown == [chat, None] and busy == [True, False]
    finally:
        chat.close()


def test_busy_follows_the_running_task(qapp):
    s = Session()
    loop = asyncio.new_event_loop()
    try:
        fut = loop.create_future()
        s.task = fut  # type: ignore[assignment]
        assert s.busy
        fut.set_result(None)
        assert not s.busy
    finally:
        loop.close()


def test_the_window_reads_and_writes_the_open_chat_through_its_session(qtbot):
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    shown = []
    win.session.chatShown.connect(shown.append)
    card, ref, chat = _chat("w")
    assert win.install_chat(card, ref, chat, False)
    assert win.session.chat is chat and win.chat is chat and win.session.chat_ref == ref
    assert shown == [chat]
    assert win.transcript is win.session.transcript and len(win.transcript.items) >= 1  # the opening, paged
    win.close_chat()
    assert win.session.chat is None and win.chat is None and shown == [chat, None]
    assert list(win.transcript.items) == [] and win.transcript.shown_from == 0


def test_the_migration_window_hands_saved_settings_to_the_main_window(qtbot):
    """ui/dialogs/st_migration.py finds the window's settings hook by name; a saved theme reaches the window when the
    migration window says it switched the provider."""
    from liyuan_desktop.ui.dialogs.st_migration import open_dialog

    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    saved = S.load_settings()
    saved.theme = "dark" if win.settings.theme != "dark" else "light"
    S.save_settings(saved)
    dlg = open_dialog(win)
    try:
        dlg.provider_switched.emit("x")
        assert win.settings.theme == saved.theme
    finally:
        dlg.close()
        from liyuan_desktop.ui.infra import theme

        theme.apply("system")


def test_transcript_page_clear():
    p = TranscriptPage([{"id": "x"}], 3, True)
    p.clear()
    assert (list(p.items), p.shown_from, p.browsing) == ([], 0, False)
