"""A group (issue 31): several library cards sharing one scene, kept in the data folder.

Layout::

    <home>/groups/<group>/group.json                 the :class:`Group` (pydantic, written atomically)
    <home>/groups/<group>/对话/<chat>/session.jsonl   its chats (an ordinary session tree whose header names the
                                                      group, each reply naming its speaker — core/chat/group_play.py)

Members are card references: the names of card folders in the card library (``cards.library``), in the order the
user gave them (list order). What SillyTavern's group panel offers is here: muted members (``disabled_members``),
the activation strategy, "allow self responses", the generation mode ("join character cards", with or without the
muted ones, and the join prefix/suffix) and the greeting.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..cards import Card, CardError
from ..cards.library import CardRef, card_folder
from ..fsutil import atomic_write_text
from ..messages import Msg, message, render
from ..paths import FORBIDDEN_NAME_CHARS, chats_dir, home, name_taken, reader_language, safe_name

#: SillyTavern's activation strategies (``group_activation_strategy``): natural order, list order, pooled, manual.
Strategy = Literal["natural", "list", "pooled", "manual"]
#: "swap": only the speaker's card (ST ``generation_mode`` 0); "join": every unmuted member's card fields joined
#: (1); "join_muted": every member's, muted ones included (2).
JoinMode = Literal["swap", "join", "join_muted"]
#: The group chat's opening: "members" — the first unmuted member's greeting, the others' greetings as its swipes;
#: "first" — the first unmuted member's greeting (and that card's alternate greetings); "group" — the group's own
#: ``greeting`` text; "none" — no opening.
GreetingMode = Literal["members", "first", "group", "none"]


class GroupError(ValueError):
    """A group that cannot be found, saved or used (the message is a catalog key's Chinese text)."""


class Group(BaseModel):
    """One group. ``members``: card-library folder names, list order; ``muted``: members that are never picked
    by the strategies (SillyTavern's ``disabled_members``) but can still be made to speak by hand; ``strategy``:
    :data:`Strategy`; ``allow_self_responses``: natural order may pick the member who spoke last (off, as in
    SillyTavern); ``join_cards``: :data:`JoinMode`; ``join_prefix``/``join_suffix``: text around each member's
    joined field (``{{char}}`` = that member; both empty → Liyuan puts 「【名字】」 before each); ``greeting``:
    :data:`GreetingMode` and ``greeting_text`` for "group"; ``st``: the SillyTavern group JSON this came from
    (kept for a lossless export); ``shared_variables``: one MVU variable tree for all members (off: per card)."""

    name: str
    members: list[str] = Field(default_factory=list)
    muted: list[str] = Field(default_factory=list)
    strategy: Strategy = "natural"
    allow_self_responses: bool = False
    join_cards: JoinMode = "swap"
    join_prefix: str = ""
    join_suffix: str = ""
    greeting: GreetingMode = "members"
    greeting_text: str = ""
    st: dict[str, Any] = Field(default_factory=dict)
    #: auto-mode (z31auto): the members continue among themselves after their replies, at most ``auto_limit``
    #: turns per run, ``auto_delay`` seconds apart (SillyTavern's ``auto_mode_delay``, default 5); core/group/auto.py
    auto_mode: bool = False
    auto_delay: float = Field(default=5.0, ge=0.0, le=3600.0)
    auto_limit: int = Field(default=6, ge=1, le=100)
    #: one MVU variable tree for the whole chat (SillyTavern keeps one chat variables object) instead of one per
    #: member's card (the default: each card's ``stat_data`` stays its own; ``group/mvu.py``)
    shared_variables: bool = False

    def active(self) -> list[str]:
        """The members the strategies may pick (not muted), list order."""
        return [m for m in self.members if m not in self.muted]


def groups_root() -> Path:
    """``<home>/groups`` (not created here: reading never makes folders; a save does)."""
    return home() / "groups"


def group_dir(name: str) -> Path:
    """The folder of the group named ``name`` (it need not exist)."""
    return groups_root() / safe_name(name)


def new_group_name_error(name: str) -> Optional[Msg]:
    """Why a new group cannot be called ``name`` (a catalog message), None when it can: nothing usable is left for
    a folder name (blank, only dots: :func:`~..paths.safe_name` falls back), a control or text-direction character
    (a name that would display as another; the message shows it escaped), or a saved group's folder
    has that name — after :func:`~..paths.safe_name` (``Party.`` is ``Party``) or on a case-insensitive disk
    (:func:`~..paths.name_taken`: ``party`` is ``Party`` on Windows and macOS). Saving would replace that group."""
    folder = safe_name(name, fallback="")
    if not folder or any(c in FORBIDDEN_NAME_CHARS and not c.isprintable() for c in name):
        return message("group.cli.bad_name", name="".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name))
    if name_taken(groups_root(), folder):
        return message("group.cli.exists", name=name)
    return None


def save_group(group: Group) -> Path:
    """Write ``group`` to ``<home>/groups/<name>/group.json`` (atomic; replaces one of the same name). Returns the
    file. OSError when the disk refuses."""
    d = group_dir(group.name)
    d.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(d / "group.json", group.model_dump_json(indent=1))


def load_group(name: str) -> Group:
    """The group named ``name``. GroupError when there is none or its file is damaged."""
    f = group_dir(name) / "group.json"
    try:
        return Group.model_validate(json.loads(f.read_text("utf-8")))
    except (OSError, ValueError) as e:
        raise GroupError(message("group.not_found", name=name)) from e


def list_groups() -> list[Group]:
    """Every readable group in the library, by folder name (damaged files skipped)."""
    out: list[Group] = []
    if not groups_root().is_dir():
        return out
    for d in sorted(groups_root().iterdir()):
        f = d / "group.json"
        if f.is_file():
            try:
                out.append(Group.model_validate(json.loads(f.read_text("utf-8"))))
            except (OSError, ValueError):
                continue
    return out


def delete_group(name: str) -> None:
    """Remove the group's folder with its chats (the caller asks first). GroupError when there is none."""
    d = group_dir(name)
    if not (d / "group.json").is_file():
        raise GroupError(message("group.not_found", name=name))
    shutil.rmtree(d)


def member_card(member: str) -> Card:
    """The library card of a member (a card folder name). GroupError when it is gone or damaged."""
    try:
        return CardRef(name=member, dir=str(card_folder(member))).load()
    except (CardError, OSError) as e:
        raise GroupError(message("group.member_missing", name=member)) from e


def new_group_chat_dir(group: Group, title: str = "") -> Path:
    """A fresh chat folder under the group (``title`` or 「群聊」/"Group chat" in the reader's language, numbered when
    taken)."""
    base = chats_dir(group_dir(group.name))  # 对话/ or chats/ (core.paths)
    base.mkdir(parents=True, exist_ok=True)
    name = safe_name(title or render(message("name.group_chat"), reader_language()))
    n, cand = 1, name
    while name_taken(base, cand):
        n += 1
        cand = f"{name}-{n}"
    return base / cand


def group_chats(group: Group) -> list[Path]:
    """The group's chat folders (those with a session file), by name."""
    base = chats_dir(group_dir(group.name))  # 对话/ or chats/ (core.paths)
    if not base.is_dir():
        return []
    return sorted(d for d in base.iterdir() if (d / "session.jsonl").is_file())


def set_muted(name: str, member: str, muted: bool) -> Group:
    """Mute or unmute ``member`` of the group ``name`` and save it (the next beat of its chats reads it). Returns
    the group. GroupError for an unknown group or member; OSError when the disk refuses."""
    group = load_group(name)
    if member not in group.members:
        raise GroupError(message("group.unknown_member", name=member, group=name))
    rest = [m for m in group.muted if m != member]
    group.muted = [m for m in group.members if m in rest or (muted and m == member)]
    save_group(group)
    return group


def talkativeness(card: Card) -> float:
    """The card's talkativeness (SillyTavern's ``data.extensions.talkativeness``, a string or number 0–1; missing
    or unreadable → 0.5, ST's ``talkativeness_default``)."""
    raw = card.extensions.get("talkativeness", 0.5)
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return 0.5
    return v if 0.0 <= v <= 1.0 else 0.5


def find_member(group: Group, name: str, cards: dict[str, Card]) -> Optional[str]:
    """The member whose folder name or card name is ``name`` (case-insensitive), else None."""
    key = name.strip().casefold()
    for m in group.members:
        if m.casefold() == key or (m in cards and cards[m].name.casefold() == key):
            return m
    return None
