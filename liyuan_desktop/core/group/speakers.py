"""Who speaks next in a group chat: SillyTavern's four activation strategies, with a seeded random and the reason.

SillyTavern (``public/scripts/group-chats.js``) activates, for one user message, a list of members and plays them
one after another, one message each. ``select_speaker`` gives that list (``SpeakerChoice.queue``, with a reason per
member in ``reasons``); its first member answers the user's beat and the others follow, each in a beat of its own
(``chat/group_play.py``). Muted members are never picked by a strategy (SillyTavern's ``disabled_members``); a
member named by the user (``chosen``, "make X speak") always speaks alone, muted or not.

- **natural** (ST ``activateNaturalOrder``): members named in the last message first, in the order they are named
  (a name with CJK characters matches as a substring, a Latin name by whole words, case-insensitive, any of its
  words, as ST's ``extractAllWords``); then each member in a shuffled order rolls ``random() ≤ talkativeness``
  (``data.extensions.talkativeness``, default 0.5); if nobody is activated, one of the members with a talkativeness
  above 0 at random (all unmuted members when none has). Without "allow self responses" the member who spoke last is
  left out when the last message is not the user's (``user_input=False``), as in ST.
- **list** (ST ``activateListOrder``): every unmuted member, in list order, for a user message (the list starts
  after the last speaker, which is the first member once a whole round has been played, as in ST); one member —
  the next after the last speaker — for a turn without user words (auto-mode).
- **pooled** (the issue's rule, "who has spoken least"): one of the members who have spoken least on this branch,
  at random; the last speaker is passed over while another candidate exists (unless self responses are allowed).
- **manual**: nobody for a user message unless the user picks a member (the reason says so; ``speaker`` is None);
  for a turn without user words (auto-mode) one unmuted member at random, as ST does (not the last speaker while
  another one can speak, unless self responses are allowed).

Without user words (``user_input=False``: auto-mode, "the members continue among themselves") every strategy gives
one member, the first of what it would activate.

The random numbers come from ``random.Random(seed)``: the caller seeds it per chat and beat, so a replay is the same.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..cards import Card
from ..messages import Msg, message
from .model import Group, talkativeness

_WORD = re.compile(r"\w+")


@dataclass
class SpeakerChoice:
    """The member who speaks (a card folder name) or None (manual mode without a pick); ``reason`` (a catalog
    message: why, said in the activity list); ``queue``: every member the strategy activated, in order (the first
    is ``speaker``)."""

    speaker: Optional[str]
    reason: Msg
    queue: list[str] = field(default_factory=list)
    #: why each member of ``queue`` was activated (same order; the first is ``reason``)
    reasons: list[Msg] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.reasons and self.queue:
            self.reasons = [self.reason] * len(self.queue)


def _has_cjk(text: str) -> bool:
    return any("\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" for ch in text)


def mention_position(name: str, text: str) -> Optional[int]:
    """Where ``name`` is first named in ``text`` (a character offset) or None: a CJK name as a substring, a Latin
    name by any of its whole words (case-insensitive)."""
    if not name.strip():
        return None
    if _has_cjk(name):
        i = text.find(name)
        return i if i >= 0 else None
    words = {w.lower() for w in _WORD.findall(name)}
    for m in _WORD.finditer(text):
        if m.group(0).lower() in words:
            return m.start()
    return None


def _natural(group: Group, cards: dict[str, Card], last_text: str, banned: Optional[str],
             rng: random.Random) -> SpeakerChoice:
    members = [m for m in group.active() if m != banned]
    named = []
    for m in members:
        pos = mention_position(cards[m].name if m in cards else m, last_text)
        if pos is not None:
            named.append((pos, m))
    named.sort()
    queue = [m for _, m in named]
    reasons: dict[str, Msg] = {m: message("group.why.named", name=_shown(m, cards)) for m in queue}
    shuffled = list(members)
    rng.shuffle(shuffled)
    chatty = []
    for m in shuffled:
        t = talkativeness(cards[m]) if m in cards else 0.5
        roll = rng.random()
        if t >= roll and m not in queue:
            queue.append(m)
            reasons.setdefault(m, message("group.why.talkative", name=_shown(m, cards), roll=f"{roll:.2f}", t=f"{t:.2f}"))
        if t > 0:
            chatty.append(m)
    if not queue:
        pool = chatty or members
        if not pool:
            return SpeakerChoice(None, message("group.why.nobody"))
        pick = pool[int(rng.random() * len(pool))]
        queue = [pick]
        reasons[pick] = message("group.why.random", name=_shown(pick, cards))
    return SpeakerChoice(queue[0], reasons[queue[0]], queue, [reasons[m] for m in queue])


def _shown(member: str, cards: dict[str, Card]) -> str:
    return cards[member].name if member in cards and cards[member].name else member


def _list_order(group: Group, cards: dict[str, Card], last: Optional[str], user_input: bool) -> SpeakerChoice:
    """List order: every unmuted member from the one after ``last`` (wrapping around), or only that one without
    user words."""
    active = group.active()
    if last in group.members:
        at = group.members.index(last) + 1
        order = [m for m in group.members[at:] + group.members[:at] if m in active]
    else:
        order = list(active)
    queue = order if user_input else order[:1]
    reasons = [message("group.why.list", name=_shown(m, cards)) for m in queue]
    return SpeakerChoice(queue[0], reasons[0], queue, reasons)


def select_speaker(group: Group, cards: dict[str, Card], spoken: Sequence[str], last_text: str,
                   rng: random.Random, *, chosen: Optional[str] = None, user_input: bool = True) -> SpeakerChoice:
    """Pick who answers (module doc). ``cards``: member → Card; ``spoken``: the members who replied on this
    branch, oldest first; ``last_text``: the last message (the user's new words, or the last reply's text for a
    turn without them); ``chosen``: a member the user picked (always speaks, alone); ``user_input``: False for a
    turn without user words (auto-mode: one member); members without a card in ``cards`` are passed over as
    muted ones. Never raises; an empty or all-muted group gives ``speaker=None``."""
    if chosen is not None:
        return SpeakerChoice(chosen, message("group.why.chosen", name=_shown(chosen, cards)), [chosen])
    # a member whose card is gone or broken cannot speak: passed over like a muted one
    group = group.model_copy(update={"muted": [*group.muted, *(m for m in group.members if m not in cards)]})
    active = group.active()
    if not active:
        return SpeakerChoice(None, message("group.why.nobody"))
    last = spoken[-1] if spoken else None
    if group.strategy == "manual" and user_input:
        return SpeakerChoice(None, message("group.why.manual"))
    if group.strategy == "manual":  # auto-mode in manual: one unmuted member at random (ST), not the last speaker
        pool = [m for m in active if m != last or group.allow_self_responses] or active
        pick = pool[int(rng.random() * len(pool))]
        return SpeakerChoice(pick, message("group.why.auto_random", name=_shown(pick, cards)), [pick])
    if group.strategy == "list":
        return _list_order(group, cards, last, user_input)
    if group.strategy == "pooled":
        counts = {m: sum(1 for s in spoken if s == m) for m in active}
        least = min(counts.values())
        pool = [m for m in active if counts[m] == least]
        if len(pool) > 1 and last in pool and not group.allow_self_responses:
            pool.remove(last)
        pick = pool[int(rng.random() * len(pool))]
        return SpeakerChoice(pick, message("group.why.pooled", name=_shown(pick, cards), n=least), [pick])
    banned = last if (not user_input and not group.allow_self_responses) else None
    choice = _natural(group, cards, last_text, banned, rng)
    if not user_input and len(choice.queue) > 1:
        return SpeakerChoice(choice.speaker, choice.reason, choice.queue[:1], choice.reasons[:1])
    return choice


__all__ = ["SpeakerChoice", "mention_position", "select_speaker"]
