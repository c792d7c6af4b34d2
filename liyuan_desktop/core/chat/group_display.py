"""What a group chat's message is shown with (issue 31): the card of the member who spoke it.

In a one-card chat every message is shown through the chat's card — its display regex scripts, which turn MVU's
``<StatusPlaceHolderImpl/>`` or the reply's own tags into the card's status bar. In a group chat each reply names its
speaker (``item["speaker"]``, a member's card folder name) and is shown through *that* member's card, as SillyTavern
scopes a card's regex scripts: a character's scoped scripts run on that character's messages only. (Liyuan runs no
global or preset display scripts, so nothing runs on every member's messages.) The opening and its swipes are the
opening card's (the card the chat was created with, header ``card``); user messages are shown with the context of
the chat as it is (the speaker of the newest beat), whose card scripts for user messages apply.

Each member's display context is a :class:`~.context.ChatContext` made for the member's card (joined per the group,
:mod:`..group.prompt`) — the card's scripts when the user allowed them for that card (``cards.meta``), ``{{char}}``
= the member — and shares the chat's display cache on disk (its keys carry the script set, so members never see
each other's entries). The chat's current context is used as it is for the member it was loaded for (its scripts
switch included). Contexts are made once per chat context (a beat loads the speaker's card: they are made again),
on the display worker thread; :meth:`SpeakerContexts.get` with ``build=False`` never makes one (the UI thread).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Optional

from ..cards import Card
from ..group.model import Group
from ..group.prompt import speaker_card
from .context import ChatContext

if TYPE_CHECKING:  # pragma: no cover
    from .view import ChatView


def opening_member(chat: "ChatView", cards: dict[str, Card]) -> Optional[str]:
    """The member whose card the chat was created with (header ``card``: the card's file), None when none is."""
    path = str(chat.tree.header.card or "")
    return next((m for m, c in cards.items() if path and str(c.path or "") == path), None)


def item_member(chat: "ChatView", item: dict[str, Any], cards: dict[str, Card]) -> Optional[str]:
    """The member a transcript item is shown as: a reply's ``speaker``, the opening's :func:`opening_member`, else
    None (user messages, drafts: the chat's current context)."""
    who = item.get("speaker")
    if isinstance(who, str) and who:
        return who
    if item.get("role") == "opening":
        return opening_member(chat, cards)
    return None


class SpeakerContexts:
    """The display contexts of one group chat's members (module doc). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._base: Optional[ChatContext] = None
        self._group: Optional[tuple[Group, dict[str, Card]]] = None
        self._by_member: dict[str, ChatContext] = {}

    def _members(self, chat: "ChatView") -> Optional[tuple[Group, dict[str, Card]]]:
        from .group_play import chat_group, member_cards

        if self._group is None:
            group = chat_group(chat)  # type: ignore[arg-type]  # reads the header and the library only
            if group is None:
                return None
            self._group = (group, member_cards(group))
        return self._group

    def get(self, chat: "ChatView", item: dict[str, Any], build: bool = True) -> Optional[ChatContext]:
        """The context ``item`` is shown with: its member's, the chat's own for anything else (and for a one-card
        chat). ``build=False``: None when the member's context is not made yet (making one reads the card and its
        books: not for the UI thread)."""
        base = chat.context
        if chat.tree.header.model_extra is None or "group" not in chat.tree.header.model_extra:
            return base
        with self._lock:
            if self._base is not base:  # a beat loaded another card (or the group changed): start again
                self._base, self._group, self._by_member = base, None, {}
            if self._group is None and not build:  # reading the group and its cards is not for the UI thread
                return base if not item.get("speaker") and item.get("role") != "opening" else None
            members = self._members(chat)
            if members is None:
                return base
            group, cards = members
            member = item_member(chat, item, cards)
            if member is None or member not in cards:
                return base
            hit = self._by_member.get(member)
            if hit is not None:
                return hit
            card = cards[member]
            if base.card.path and str(card.path or "") == str(base.card.path):
                self._by_member[member] = base
                return base
        if not build:
            return None
        # made outside the lock (it reads the card's books): the UI thread's look-ups never wait for it
        ctx = ChatContext(chat.dir, chat.tree, speaker_card(group, cards, member), chat.model.name, preset=base.preset)
        ctx.display_cache = base.display_cache  # one connection to the chat's cache file
        with self._lock:
            if self._base is not base:  # a beat replaced the chat's context meanwhile: not kept
                return ctx
            return self._by_member.setdefault(member, ctx)


__all__ = ["SpeakerContexts", "item_member", "opening_member"]
