"""Issue 31: in a group chat each reply's status bar and display scripts come from the card of the member who spoke
it (core/chat/group_display.py), and MVU variables stay per card unless the group shares them."""

from __future__ import annotations

from group_bars_cards import BARS, make_group, replay

from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.group.model import group_dir


def shown(chat: Chat) -> list[tuple[str, str]]:
    """(speaker or role, display text) of each reply and the opening, as the conversation view gets them."""
    items = chat.transcript()
    n = len(items)
    return [(it.get("speaker") or it["role"], chat.display_text(it, n - 1 - i)) for i, it in enumerate(items)
            if it["role"] in ("assistant", "opening")]


async def test_each_reply_is_shown_with_its_speakers_bar_and_scripts(tmp_path):
    g = make_group(tmp_path)
    chat = Chat.create_group(group_dir(g.name) / "对话" / "b", g, replay(4), group_seed="s")
    for _ in range(4):
        await chat.send("Next.")
    got = shown(chat)
    assert [who for who, _ in got] == ["opening", "Aster", "Birch", "Cedar", "Aster"]
    for who, text in got[1:]:
        assert f'id="bar-{who}"' in text and f"{who}'s bar · {who}" in text  # its own bar, {{char}} = the speaker
        assert f"[{who} says] reply" in text
        for other in BARS.keys() - {who}:
            assert f"bar-{other}" not in text and f"[{other} says]" not in text
    assert 'id="bar-Aster"' in got[0][1]  # the opening is the opening card's (Aster's greeting)
    again = Chat.open(chat.dir, chat.card, replay(0))  # reopened: the same, from each member's card
    assert shown(again) == got
    known = [again.display_text_if_known(it, 0) for it in again.transcript()]
    assert all(k is None or "bar-" in k or it["role"] == "user" for k, it in zip(known, again.transcript()))
