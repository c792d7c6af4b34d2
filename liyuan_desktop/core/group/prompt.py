"""The card a group member speaks with: the speaker's own card, its character fields joined with the other
members' as SillyTavern's "join character cards" option does (``generation_mode`` and its join prefix/suffix).

The speaker's card is what the chat's context loads for the beat (``ChatContext``: the system prompt, the macros'
``{{char}}`` = the speaker, the speaker's Character's Note, system prompt and post-history instructions, its world
book). In "join" modes the fields SillyTavern joins — description, personality, scenario, example messages — become
every member's field in list order (muted members only with "join_muted"; the speaker always), each wrapped in the
group's join prefix and suffix with ``{{char}}`` there meaning that member (both empty: 「【名字】」 and a line break
before each); ``{{char}}``/``<BOT>`` inside another member's field are replaced with that member's name first, as
ST's ``customBaseChatReplace`` does per member. "swap" (ST's default) sends the speaker's card alone. In the join
modes the card section is headed with every joined member's name (``prompt.assemble.GROUP_JOIN_KEY``) rather than
the speaker's, so the system prompt is byte-identical whoever speaks; the speaker is named by :func:`group_nudge` at
the end of the prompt (measured by bench/group_cache.py).

Every member's embedded world book applies whoever speaks (SillyTavern activates the lore of all group members):
the speaker's card carries one book made of its own entries then the other members' in list order, muted ones
included, their ids renumbered so they stay unique. (A chat's edited copy of the card book, and books linked to
a card in the library, are still the chat card's only.)
"""

from __future__ import annotations

import re
from typing import Any

from ..cards import Card
from ..prompt.assemble import GROUP_JOIN_KEY
from .model import Group

#: The card fields SillyTavern joins across members (``getGroupCharacterCards``).
JOINED_FIELDS: tuple[str, ...] = ("description", "personality", "scenario", "mes_example")
_CHAR = re.compile(r"\{\{\s*char\s*\}\}|<BOT>", re.IGNORECASE)


def _own_name(text: str, name: str) -> str:
    return _CHAR.sub(lambda _m: name, text)


def _entries(book: Any) -> list[Any]:
    if not isinstance(book, dict):
        return []
    entries = book.get("entries")
    if isinstance(entries, dict):
        entries = list(entries.values())
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _with_members_books(group: Group, cards: dict[str, Card], speaker: str) -> Card:
    """The speaker's card whose book also holds the other members' entries (module doc); the card itself when no
    other member has a book."""
    own = cards[speaker]
    others = [e for m in group.members if m in cards and m != speaker for e in _entries(cards[m].character_book)]
    if not others:
        return own
    merged = []
    for i, e in enumerate([*_entries(own.character_book), *others]):
        merged.append({**e, "id": i, **({"uid": i} if "uid" in e else {})})
    book: dict[str, Any] = dict(own.character_book) if isinstance(own.character_book, dict) else {"name": own.name}
    book["entries"] = merged
    return own.model_copy(update={"character_book": book})


def speaker_card(group: Group, cards: dict[str, Card], speaker: str) -> Card:
    """The card ``speaker`` (a member's folder name, in ``cards``) plays this beat with (module doc). The copy keeps
    the speaker's name, path and raw JSON, so an edit of its file is still noticed. KeyError when ``speaker`` has
    no card in ``cards``."""
    own = _with_members_books(group, cards, speaker)
    if group.join_cards == "swap":
        return own
    members = [m for m in group.members if m in cards and (m == speaker or group.join_cards == "join_muted"
                                                          or m not in group.muted)]
    update: dict[str, Any] = {"extensions": {**own.extensions, GROUP_JOIN_KEY: [cards[m].name for m in members]}}
    for f in JOINED_FIELDS:
        parts = []
        for m in members:
            card = cards[m]
            value = getattr(card, f)
            if not value.strip():
                continue
            if m != speaker:
                value = _own_name(value, card.name)
            if group.join_prefix or group.join_suffix:
                parts.append(_own_name(group.join_prefix, card.name) + value + _own_name(group.join_suffix, card.name))
            else:
                parts.append(f"【{card.name}】\n{value}")
        update[f] = "\n\n".join(parts)
    return own.model_copy(update=update)


def group_nudge(name: str) -> str:
    """The line that names who writes the next reply, placed at the end of the prompt's data blocks (SillyTavern's
    group nudge, "[Write the next reply only as {{char}}.]", sits after the chat history too): everything before it
    — the system prompt in the join modes, the history with every reply under its speaker's name — is the same
    whoever speaks, so a provider's prefix cache serves every member from one prefix."""
    return f"【发言】这一条回复只写「{name}」的言行。"


__all__ = ["JOINED_FIELDS", "group_nudge", "speaker_card"]
