"""MVU variables in a group chat (issue 31): per member's card, or one tree the group shares.

Cards that keep MVU variables carry their initial ``stat_data`` in ``[InitVar]`` entries of their book. In a group
each member's card keeps its own tree by default: member A's replies, its status bar and what its beat reads (the
scribe's variable block, the templates' message variables) are A's tree, which starts from A's own ``[InitVar]`` and
changes only by A's beats (an ``<UpdateVariable>`` in A's reply, the scribe's update after it). A ledger snapshot
belongs to the member whose reply it follows on the branch (before any reply: the opening's member), so nothing new
is stored: :func:`member_snapshot` finds the newest snapshot of one member.

With the group's ``shared_variables`` there is one tree, as SillyTavern keeps one chat variables object whatever
member speaks: it starts from every member's ``[InitVar]`` in list order, merged as MVU merges books (root keys
shallowly, the first member that has a key keeps it: :func:`shared_initial`), and every beat continues from the
newest snapshot, whoever wrote it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..cards import Card
from ..ledger.mvu import load_initvars_books
from .model import Group
from .witness import reply_speaker


def own_initial(card: Card, substitute: Optional[Callable[[str], str]] = None) -> Optional[dict[str, Any]]:
    """The initial variable tree of one member's card (its book's ``[InitVar]`` entries, deep-merged in book order;
    ``substitute`` fills macros such as ``{{user}}`` first), or None when its card has none."""
    tree, _, _ = load_initvars_books([card.lorebook], substitute)
    return tree


def shared_initial(group: Group, cards: dict[str, Card],
                   substitute: Optional[Callable[[str], str]] = None) -> Optional[dict[str, Any]]:
    """The shared tree's start (module doc): every member's ``[InitVar]`` in list order, root keys merged shallowly
    with the first member's value kept; None when no member's card has one."""
    tree, _, _ = load_initvars_books([cards[m].lorebook for m in group.members if m in cards], substitute)
    return tree


def member_of(name: Optional[str], cards: dict[str, Card]) -> Optional[str]:
    """The member a recorded speaker names (its folder name, or a SillyTavern import's card name)."""
    if not name:
        return None
    if name in cards:
        return name
    return next((m for m, c in cards.items() if c.name == name), name)


def member_snapshot(path: Sequence[Any], entries: dict[str, Any], member: str, cards: dict[str, Card],
                    opening: Optional[str]) -> Optional[Any]:
    """The newest ``rp-state`` snapshot on ``path`` (the branch, root first) that holds ``member``'s variable tree
    (module doc): one with ``mvu`` that is the branch's tree (not a bar's write for an older message, not a raw
    table) and follows a reply of ``member`` — or no reply at all when ``member`` is ``opening``. None when the
    member has none yet (its card's initial tree applies)."""
    owner: Optional[str] = opening
    best = None
    for e in path:
        if e.type == "assistant":
            owner = member_of(reply_speaker(e, entries), cards) or owner
        elif e.type == "rp-state" and owner == member and getattr(e, "mvu", None) is not None \
                and not getattr(e, "for_message", None) and not getattr(e, "vars_raw", False):
            best = e
    return best


__all__ = ["member_of", "member_snapshot", "own_initial", "shared_initial"]
