"""A group chat's MVU variables before each beat (issue 31, :mod:`..group.mvu`): the chat's ledger reads the tree of
the member who speaks (its newest snapshot, else its own card's ``[InitVar]``), or — when the group sets
``shared_variables`` — the one tree of the chat, every member's initial keys added where it lacks them.

Called by ``group_play.take_turn`` once the speaker's card is loaded; the ledger keeps the choice until the next
beat (so the ledger pane, an edit or a status bar's write in between act on the tree of the member who spoke last).
A group chat just opened follows the newest reply's speaker on the shown branch until its first beat
(:func:`follow_last_speaker`). (After a switch to a branch whose newest reply is another member's, the ledger pane
still shows the tree of the member who spoke last, until the next beat.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..cards import Card
from ..group.mvu import member_of, member_snapshot, own_initial, shared_initial
from ..group.witness import reply_speaker
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


class _Initial:
    """A member's initial tree where the ledger expects a snapshot (``mvu``)."""

    def __init__(self, tree: Any):
        self.mvu = tree


def follow_last_speaker(chat: "ChatView") -> None:
    """A group chat with per-card variables, as opened: its ledger reads the tree of the newest reply's speaker on
    the branch (the opening's member before any reply). Nothing for a one-card chat or shared variables (the
    newest tree is the shared one). The group's cards are read on first use."""
    from .group_play import chat_group, member_cards

    if "group" not in (chat.tree.header.model_extra or {}):
        return
    group = chat_group(chat)  # type: ignore[arg-type]  # reads the header and the library only
    if group is None or group.shared_variables:
        return
    entries = chat.tree.entries
    known: dict[str, Any] = {}

    def find(path: Sequence[Any]) -> Any:
        if "cards" not in known:
            known["cards"] = cards = member_cards(group)
            known["opening"] = opening_member(chat, cards)
        cards, opening = known["cards"], known["opening"]
        last = next((e for e in reversed(path) if e.type == "assistant"), None)
        member = member_of(reply_speaker(last, entries), cards) if last is not None else opening
        if member is None:
            return None
        found = member_snapshot(path, entries, member, cards, opening)
        if found is None and member in cards:
            tree = _own(cards[member], known)
            return _Initial(tree) if tree is not None else None
        return found

    chat.ledger.mvu_find = find


def _own(card: Card, known: dict[str, Any]) -> Any:
    """A member card's own initial tree, read once."""
    key = f"initial:{card.name}"
    if key not in known:
        known[key] = own_initial(card)
    return known[key]


__all__ = ["follow_last_speaker", "use_member"]
