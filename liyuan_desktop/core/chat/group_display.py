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
switch included). A member's context is made once, on the display worker thread, and kept across beats while the
group's file and the members' card files and switches are unchanged (so the other members' replies are known at
once after a beat: their texts come from the display cache); :meth:`SpeakerContexts.get` with ``build=False`` never
reads the disk (the UI thread).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..cards import Card
from ..cards.meta import META_FILE
from ..group.model import Group, group_dir
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


def _signature(group: Group, cards: dict[str, Card]) -> tuple[Optional[int], ...]:
    """What tells that the group or a member's card (or its switches, ``liyuan.json``) changed: their files'
    modification times (ns; None for a missing file). Cheap: a few ``stat`` calls."""
    paths = [group_dir(group.name) / "group.json"]
    for c in cards.values():
        if c.path:
            paths += [Path(c.path), Path(c.path).parent / META_FILE]
    out: list[Optional[int]] = []
    for p in paths:
        try:
            out.append(p.stat().st_mtime_ns)
        except OSError:
            out.append(None)
    return tuple(out)


class SpeakerContexts:
    """The display contexts of one group chat's members (module doc). Thread-safe; the disk is read outside the
    lock, so the UI thread's look-ups never wait for a card to load."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._base: Optional[ChatContext] = None
        self._group: Optional[tuple[Group, dict[str, Card]]] = None
        self._sig: tuple[Optional[int], ...] = ()
        self._by_member: dict[str, ChatContext] = {}

    def _members(self, chat: "ChatView", base: ChatContext, build: bool) -> Optional[tuple[Group, dict[str, Card]]]:
        """The group and its cards: kept while their files are unchanged (looked at when a beat loads another
        card); read from the disk (outside the lock) only when ``build``."""
        from .group_play import chat_group, member_cards

        with self._lock:
            if self._base is not base:
                self._base = base
                if self._group is not None and _signature(*self._group) != self._sig:
                    self._group, self._by_member = None, {}
            if self._group is not None or not build:
                return self._group
        group = chat_group(chat)  # type: ignore[arg-type]  # reads the header and the library only
        if group is None:
            return None
        loaded = (group, member_cards(group))
        with self._lock:
            if self._group is None:
                self._group, self._sig = loaded, _signature(*loaded)
            return self._group

    def get(self, chat: "ChatView", item: dict[str, Any], build: bool = True) -> Optional[ChatContext]:
        """The context ``item`` is shown with: its member's, the chat's own for anything else (and for a one-card
        chat). ``build=False``: None when the member's context is not made yet (making one reads the card and its
        books: not for the UI thread)."""
        base = chat.context
        if chat.tree.header.model_extra is None or "group" not in chat.tree.header.model_extra:
            return base
        members = self._members(chat, base, build)
        if members is None:
            if build or (not item.get("speaker") and item.get("role") != "opening"):
                return base
            return None
        group, cards = members
        member = item_member(chat, item, cards)
        if member is None or member not in cards:
            return base
        if base.card.path and str(cards[member].path or "") == str(base.card.path):
            with self._lock:  # kept for this member's replies after the next beat loads another card
                self._by_member.setdefault(member, base)
            return base  # the member the chat's context is loaded for: its own scripts switch included
        with self._lock:
            hit = self._by_member.get(member)
        if hit is not None or not build:
            return hit
        ctx = ChatContext(chat.dir, chat.tree, speaker_card(group, cards, member), chat.model.name, preset=base.preset)
        ctx.display_cache = base.display_cache  # one connection to the chat's cache file
        with self._lock:
            return self._by_member.setdefault(member, ctx)


__all__ = ["SpeakerContexts", "item_member", "opening_member"]
