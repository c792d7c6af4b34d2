"""SillyTavern's group files in and out (issue 31): ``groups/<id>.json`` (a group) and ``group chats/<chat_id>.jsonl``
(its chats).

SillyTavern's group JSON (``public/scripts/group-chats.js``; the server's ``src/endpoints/groups.js`` ``/create``
writes the object and ``/edit`` writes back whatever the client sends, so unknown keys survive there too):

=================================  ====================================================================  ==========
key                                meaning (SillyTavern)                                                 Liyuan
=================================  ====================================================================  ==========
``members``                        the members' avatar file names, e.g. ``"Aster.png"``                   members
``disabled_members``               muted members (avatar file names)                                     muted
``activation_strategy``            ``group_activation_strategy``: 0 natural, 1 list, 2 manual, 3 pooled  strategy
``generation_mode``                ``group_generation_mode``: 0 swap, 1 append (join cards), 2 append    join_cards
                                   disabled (join, muted included)
``generation_mode_join_prefix``    text before each joined card field                                    join_prefix
``generation_mode_join_suffix``    text after each joined card field                                     join_suffix
``allow_self_responses``           natural order may pick the last speaker                               allow_self_responses
``auto_mode_delay``                seconds between auto-mode turns, in the group file (default 5); the   auto_delay
                                   auto-mode switch itself is SillyTavern's session state, not saved
``hideMutedSprites``               hide muted members' expression sprites (Liyuan has no sprites)        kept as is
``id``, ``chat_id``, ``chats``,    the group's id, its open chat, every chat id, avatar, favourite,      kept (chats
``avatar_url``, ``fav``,           the open chat's metadata and the other chats' (``past_metadata``)     updated)
``chat_metadata``,
``past_metadata``
=================================  ====================================================================  ==========

The whole object is kept on the :class:`~.model.Group` (``st``) and written back with the fields Liyuan manages
replaced, so nothing SillyTavern keeps is lost: members whose card was not in the library at import (left out of
the group, said in the notes) are written back after the others with their muted mark, and a strategy or mode code
this version does not know is written back as it was while the group's setting is unchanged.

A group chat file is an ordinary SillyTavern chat file whose messages name their speaker (``name``,
``original_avatar``): it is imported with the one chat importer (``cards.st_chat.write_session``, every message's
own fields kept) into ``<home>/groups/<group>/对话/<chat_id>/``, the header recording the group; it is exported by
the one chat exporter (``cards.st_chat_export``), a reply made in Liyuan named by its ``speaker`` and given its
``original_avatar``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Optional

from ..cards import Card
from ..cards.library import numbered_name
from ..cards.st_chat import read_st_chat, write_session
from ..cards.st_chat_export import st_messages
from ..fsutil import atomic_write_text
from ..jsonfile import read_json_file
from ..messages import Msg, message
from ..paths import chats_dir as chats_folder
from ..session import SessionTree
from .model import Group, GroupError, group_chats, group_dir, load_group, member_card, save_group

STRATEGY_OF = {0: "natural", 1: "list", 2: "manual", 3: "pooled"}
STRATEGY_CODE = {v: k for k, v in STRATEGY_OF.items()}
JOIN_OF = {0: "swap", 1: "join", 2: "join_muted"}
JOIN_CODE = {v: k for k, v in JOIN_OF.items()}


def group_from_st(data: dict[str, Any], member_of: Callable[[str], Optional[str]]) -> tuple[Group, list[str]]:
    """A :class:`Group` from SillyTavern's group JSON ``data``; ``member_of(avatar)`` gives the library card
    folder of a member's avatar file name (None: not in the library — left out and said in the notes). Returns
    (group, notes)."""
    notes: list[str] = []
    avatars: dict[str, str] = {}
    members: list[str] = []
    for av in data.get("members") or []:
        if not isinstance(av, str):
            continue
        m = member_of(av)
        if m is None:
            notes.append(message("group.st.member_missing", group=str(data.get("name", "")), member=av))
            continue
        members.append(m)
        avatars[m] = av
    disabled = {a for a in (data.get("disabled_members") or []) if isinstance(a, str)}
    group = Group(
        name=str(data.get("name") or data.get("id") or "群组"), members=members,
        muted=[m for m in members if avatars[m] in disabled],
        strategy=STRATEGY_OF.get(_int(data.get("activation_strategy")), "natural"),  # type: ignore[arg-type]
        allow_self_responses=bool(data.get("allow_self_responses", False)),
        join_cards=JOIN_OF.get(_int(data.get("generation_mode")), "swap"),  # type: ignore[arg-type]
        join_prefix=str(data.get("generation_mode_join_prefix") or ""),
        join_suffix=str(data.get("generation_mode_join_suffix") or ""),
        auto_delay=_delay(data.get("auto_mode_delay")),
        st={**data, "liyuan_avatars": avatars})
    return group, notes


def _delay(v: Any) -> float:
    """SillyTavern's ``auto_mode_delay`` (seconds; missing or not a number: its default 5) within the range a
    :class:`Group` keeps (0–3600)."""
    try:
        d = float(v)
    except (TypeError, ValueError):
        return 5.0
    return min(max(d, 0.0), 3600.0) if d == d else 5.0


def _code(old: Any, codes: dict[str, int], now: str, fallback: str) -> Any:
    """The code SillyTavern gets for a setting: the imported code ``old`` when this version does not know it and
    the setting is still what such a code was imported as (``fallback``), else ``codes[now]``."""
    if old is not None and _int(old) not in codes.values() and now == fallback:
        return old
    return codes[now]


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def avatar_of(group: Group, member: str) -> str:
    """The SillyTavern avatar file name of a member: the one it was imported with, else ``<member>.png``."""
    known = group.st.get("liyuan_avatars")
    if isinstance(known, dict) and isinstance(known.get(member), str):
        return str(known[member])
    return f"{member}.png"


def group_to_st(group: Group, chat_ids: list[str]) -> dict[str, Any]:
    """SillyTavern's group JSON for ``group`` (module doc): its imported object with Liyuan's fields written over
    it; ``chat_ids`` become ``chats`` and the last one ``chat_id``."""
    out = {k: v for k, v in group.st.items() if k != "liyuan_avatars"}
    out.setdefault("id", str(int(time.time() * 1000)))
    known = group.st.get("liyuan_avatars")
    known_avatars = set(known.values()) if isinstance(known, dict) else set()
    old_members = [a for a in group.st.get("members") or [] if isinstance(a, str)]
    old_disabled = {a for a in group.st.get("disabled_members") or [] if isinstance(a, str)}
    absent = [a for a in old_members if a not in known_avatars]  # never imported: not in the library
    members = [avatar_of(group, m) for m in group.members]
    delay = group.auto_delay
    out.update({
        "name": group.name, "members": [*members, *(a for a in absent if a not in members)],
        "disabled_members": [*(avatar_of(group, m) for m in group.muted if m in group.members),
                             *(a for a in absent if a in old_disabled and a not in members)],
        "activation_strategy": _code(group.st.get("activation_strategy"), STRATEGY_CODE, group.strategy, "natural"),
        "generation_mode": _code(group.st.get("generation_mode"), JOIN_CODE, group.join_cards, "swap"),
        "generation_mode_join_prefix": group.join_prefix, "generation_mode_join_suffix": group.join_suffix,
        "allow_self_responses": group.allow_self_responses,
        "auto_mode_delay": int(delay) if delay == int(delay) else delay})
    for k, v in (("avatar_url", ""), ("fav", False), ("chat_metadata", {}), ("hideMutedSprites", False)):
        out.setdefault(k, v)
    if chat_ids:
        out["chats"] = list(dict.fromkeys([*(c for c in out.get("chats") or [] if c in chat_ids), *chat_ids]))
        out["chat_id"] = out.get("chat_id") if out.get("chat_id") in chat_ids else chat_ids[-1]
    return out


def import_st_group_chat(path: Path, group: Group, cards: dict[str, Card], dest: Path,
                         notes: Optional[list[str]] = None) -> SessionTree:
    """Import a SillyTavern group chat file into ``dest`` (a new chat folder): the one chat importer, the header
    naming the group (and the file's chat id), the first member's card as the chat's card. StChatError /
    SessionError / OSError as ``write_session``; GroupError when no member has a card. ``notes``: gets the file's
    lines skipped or repaired (the reader's warnings)."""
    first = next((m for m in group.members if m in cards), None)
    if first is None:
        raise GroupError(message("group.st.no_members", group=group.name))
    dest.mkdir(parents=True, exist_ok=True)
    st = read_st_chat(path)
    if notes is not None:
        notes.extend(st.warnings)
    return write_session(st, dest / "session.jsonl", card_name=cards[first].name, card_path=cards[first].path,
                         title=path.stem, header_extra={"group": group.model_dump(), "st_chat_id": path.stem})


def export_st_group(group: Group, cards: dict[str, Card], root: Path) -> list[Path]:
    """Write ``group`` and its chats into a SillyTavern-shaped folder ``root``: ``groups/<id>.json`` and
    ``group chats/<chat_id>.jsonl`` (each chat's shown branch; ``chat_id`` the imported one, else the chat's folder
    name). Returns the files written. OSError when the disk refuses."""
    written: list[Path] = []
    ids: list[str] = []
    names = {cards[m].name: m for m in group.members if m in cards}
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for d in group_chats(group):
        tree = SessionTree.open(d / "session.jsonl")
        extra = tree.header.model_extra or {}
        chat_id = str(extra.get("st_chat_id") or d.name)
        header, messages = st_messages(tree)
        for msg in messages:
            if not msg.get("is_user") and "original_avatar" not in msg:
                m = names.get(str(msg.get("name"))) or (msg.get("name") if msg.get("name") in group.members else None)
                if m is not None:
                    msg["original_avatar"] = avatar_of(group, str(m))
        f = root / "group chats" / f"{chat_id}.jsonl"
        f.parent.mkdir(parents=True, exist_ok=True)
        written.append(atomic_write_text(f, "\n".join([dumps(header), *(dumps(m) for m in messages)])))
        ids.append(chat_id)
    data = group_to_st(group, ids)
    f = root / "groups" / f"{data['id']}.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    written.insert(0, atomic_write_text(f, json.dumps(data, ensure_ascii=False, indent=4)))
    return written


def read_st_group(path: Path) -> dict[str, Any]:
    """A SillyTavern group file's JSON object (the one JSON reader: size and nesting checked). ValueError (a
    catalog message naming the file) for a file that cannot be read, is not JSON or is not a group object."""
    try:
        data = read_json_file(path)
    except json.JSONDecodeError as e:
        raise ValueError(message("group.st.bad_json", name=path.name, line=e.lineno, col=e.colno, why=e.msg)) from None
    except UnicodeDecodeError:
        data = None
    except OSError as e:
        raise ValueError(message("group.st.unreadable", name=path.name, error=e.strerror or str(e))) from None
    if not isinstance(data, dict) or not isinstance(data.get("members"), list):
        raise ValueError(message("group.st.not_group", name=path.name))
    return data


def import_st_group(path: Path, member_of: Callable[[str], Optional[str]], *, chats_dir: Optional[Path] = None,
                    name: Optional[str] = None) -> tuple[Group, list[str]]:
    """Import one SillyTavern group file and its chats (from ``chats_dir``, default ``<path>/../../group chats``)
    into the library: the group saved under its name (a number added when taken) and each chat of ``chats`` found
    there imported; ``name``: the name to save it under (the migration's plan chose it). Returns (group, notes: members not in the library, chats not found or not readable). ValueError /
    OSError for an unreadable group file."""
    data = read_st_group(path)
    group, notes = group_from_st(data, member_of)
    group.name = name or numbered_name(group.name, lambda n: (group_dir(n) / "group.json").is_file())
    save_group(group)
    cards = {}
    for m in group.members:
        try:
            cards[m] = member_card(m)
        except GroupError:
            continue
    src = chats_dir if chats_dir is not None else path.parent.parent / "group chats"
    for chat_id in dict.fromkeys([*(data.get("chats") or []), data.get("chat_id")]):
        if not isinstance(chat_id, str) or not chat_id:
            continue
        f = src / f"{chat_id}.jsonl"
        if not f.is_file():
            notes.append(message("group.st.chat_missing", group=group.name, file=f"{chat_id}.jsonl"))
            continue
        try:
            import_st_group_chat(f, group, cards, chats_folder(group_dir(group.name)) / chat_id, notes)
        except Exception as e:  # one damaged chat does not stop the others
            notes.append(message("group.st.chat_failed", group=group.name, file=f"{chat_id}.jsonl", error=e.args[0] if e.args and isinstance(e.args[0], Msg) else str(e)))
    return load_group(group.name), notes


__all__ = ["avatar_of", "export_st_group", "group_from_st", "group_to_st", "import_st_group", "import_st_group_chat",
           "read_st_group"]
