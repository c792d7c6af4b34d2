"""A group chat's MVU variables before each beat (issue 31, :mod:`..group.mvu`): the chat's ledger reads the tree of
the member who speaks (its newest snapshot, else its own card's ``[InitVar]``), or — when the group sets
``shared_variables`` — the one tree of the chat, every member's initial keys added where it lacks them.

Called by ``group_play.take_turn`` once the speaker's card is loaded; the ledger keeps the choice until the next
beat (so the ledger pane, an edit or a status bar's write in between act on the tree of the member who spoke last).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..group.mvu import member_snapshot, own_initial, shared_initial
from ..macros import apply_macros
from .group_display import opening_member

if TYPE_CHECKING:  # pragma: no cover
    from .group_play import Turn
    from .view import ChatView


def use_member(chat: "ChatView", turn: "Turn") -> None:
    """Point ``chat.ledger``'s variable look-up at ``turn.member``'s tree, or at the shared one (module doc)."""
    ctx = chat.context.ctx
    led = chat.ledger

    def substitute(text: str) -> str:
        return apply_macros(text, ctx)

    if turn.group.shared_variables:
        led.mvu_find = None
        led.mvu_initial = shared_initial(turn.group, turn.cards, substitute)
        led.mvu_defaults = led.mvu_initial
        return
    member, cards, entries = turn.member, turn.cards, chat.tree.entries
    opening = opening_member(chat, cards)

    def find(path: Sequence[Any]) -> Any:
        return member_snapshot(path, entries, member, cards, opening)

    led.mvu_find = find
    led.mvu_initial = own_initial(cards[member], substitute) if member in cards else None
    led.mvu_defaults = None


__all__ = ["use_member"]
