"""A group chat played through :class:`~.facade.Chat` (issue 31): the session header records the group
(``group``: the :class:`~..group.model.Group` as it was at creation; the library's current version is read when it
still exists, so muting and strategy changes apply), each reply records its speaker (``speaker`` on the assistant
entry, a member's card folder name), and before each beat the chat loads the speaker's card (joined with the others'
per the group's option, :mod:`..group.prompt`) and the state block is cut to what the speaker witnessed
(:mod:`..group.witness`). The scribe then reads the exchange as ``<speaker>：<reply>`` (its ``char_name`` is the
speaker's). Nothing else differs from a one-card chat: the tree, branches, swipes, ledger, export.
"""

from __future__ import annotations

import random
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..cards import Card
from ..group.model import Group, GroupError, find_member, load_group, member_card
from ..group.prompt import speaker_card
from ..group.speakers import SpeakerChoice, select_speaker
from ..group.witness import knowledge, reply_speaker, scoped_state, spoken
from ..llm.types import ChatModel
from ..macros import apply_macros
from ..messages import Msg, message
from ..session.transcript import hidden_turn
from . import group_vars
from .recovery import unanswered

if TYPE_CHECKING:  # pragma: no cover
    from .facade import Chat


def chat_group(chat: "Chat") -> Optional[Group]:
    """The group of a group chat (the library's current version, else the header's copy), None for a one-card
    chat."""
    raw = (chat.tree.header.model_extra or {}).get("group")
    if not isinstance(raw, dict):
        return None
    try:
        stored = Group.model_validate(raw)
    except ValueError:
        return None
    try:
        return load_group(stored.name)
    except GroupError:
        return stored


def speaker_names(chat: Any) -> dict[str, str]:
    """member → card name of a group chat's members whose card is in the library ({} for a one-card chat): the
    name a reply's ``speaker`` is shown and exported under."""
    group = chat_group(chat)
    return {m: c.name for m, c in member_cards(group).items()} if group is not None else {}


def member_cards(group: Group) -> dict[str, Card]:
    """member → its library card; members whose card is gone are left out."""
    out = {}
    for m in group.members:
        try:
            out[m] = member_card(m)
        except GroupError:
            continue
    return out


def opening_card(group: Group, cards: dict[str, Card]) -> Card:
    """The card a new group chat is created with: the first unmuted member's, its opening per the group's
    greeting mode (``group.model.GreetingMode``)."""
    first = next((m for m in group.active() if m in cards), None) or next(iter(cards))
    card = cards[first]
    if group.greeting == "none":
        return card.model_copy(update={"first_mes": "", "alternate_greetings": []})
    if group.greeting == "group":
        return card.model_copy(update={"first_mes": group.greeting_text, "alternate_greetings": []})
    if group.greeting == "members":  # the others' greetings are added by create(), each under its own name
        return card.model_copy(update={"alternate_greetings": []})
    return card


def create(cls: Any, directory: Path, group: Group, model: ChatModel, **kw: Any) -> "Chat":
    """A new group chat in ``directory`` (``Chat.create`` with the first unmuted member's card and the group in the
    header; the opening per the group's greeting mode). GroupError when no member's card is in the library."""
    cards = member_cards(group)
    if not cards:
        raise GroupError(message("group.no_cards", name=group.name))
    chat: "Chat" = cls.create(directory, opening_card(group, cards), model, group=group.model_dump(), **kw)
    if group.greeting == "members":
        _members_greetings(chat, group, cards)
    return chat


def _members_greetings(chat: "Chat", group: Group, cards: dict[str, Card]) -> None:
    """The other unmuted members' greetings as swipes of the opening, each headed with its member's name and its
    macros read with ``{{char}}`` = that member (SillyTavern posts each member's greeting in a new group chat)."""
    tree = chat.tree
    first = next((e for e in tree.path_to() if e.type == "opening"), None)
    if first is None:
        return
    speaker = chat.card.name
    for m in group.active():
        card = cards.get(m)
        if card is None or card.name == speaker or not card.first_mes.strip():
            continue
        ctx = chat.ctx.model_copy(update={"char": card.name, "description": card.description,
                                          "personality": card.personality, "scenario": card.scenario})
        chat.ledger.add_opening(f"【开场 · {card.name}】\n{apply_macros(card.first_mes, ctx)}",
                                chat.context.mvu_other_books, first.parent_id)
    tree.commit()


def new_group_chat(group: Group, title: str = "") -> Path:
    """Make a new chat of ``group`` on disk (``<home>/groups/<group>/对话/<title or 群聊>``, numbered when taken) with
    its opening, for a front end to open like any chat (the model is given when it is opened). Returns the folder.
    GroupError when no member's card is in the library; OSError when the disk refuses."""
    from ..group.model import new_group_chat_dir
    from ..llm.replay import ReplayModel
    from .facade import Chat

    d = new_group_chat_dir(group, title)
    Chat.create_group(d, group, ReplayModel(actor=[])).close()
    return d


@dataclass
class Turn:
    """Who the next beat is for: the member, the choice (with its reason), the group and its cards."""

    member: str
    choice: SpeakerChoice
    group: Group
    cards: dict[str, Card]


def choose(chat: "Chat", user_text: str, speaker: Optional[str] = None, user_input: bool = True) -> Optional[Turn]:
    """Pick the speaker of the next beat of a group chat (None for a one-card chat). The random is seeded with the
    chat (header ``group_seed`` or its id) and the beat number. ValueError (a catalog message) for a ``speaker``
    who is not a member, or when nobody is picked (manual mode without a pick, all members muted). ``user_input``:
    False for a turn without user words (:func:`prepare_follow_up`: one member, the last speaker left out unless
    the group allows self responses)."""
    group = chat_group(chat)
    if group is None:
        return None
    cards = member_cards(group)
    chosen = None
    if speaker:
        chosen = find_member(group, speaker, cards)
        if chosen is None:
            raise ValueError(message("group.unknown_member", name=speaker, group=group.name))
        if chosen not in cards:
            raise ValueError(message("group.member_missing", name=chosen))
    extra = chat.tree.header.model_extra or {}
    seed = f"{extra.get('group_seed') or chat.tree.header.id}:{chat.history().user_count + 1}"
    path = chat.tree.path_to()
    said = spoken(group, cards, path, chat.tree.entries)
    choice = select_speaker(group, cards, said, user_text, random.Random(seed), chosen=chosen, user_input=user_input)
    if choice.speaker is None or choice.speaker not in cards:
        raise ValueError(choice.reason)
    return Turn(choice.speaker, choice, group, cards)


def take_turn(chat: "Chat", turn: Turn) -> None:
    """Make the chat speak as ``turn.member`` for the next beat: its card (joined per the group) loaded, replies
    stamped with the member, the state block scoped to what the member witnessed, and the choice with its reason
    said in the beat's activity list."""
    chat._reload_context(speaker_card(turn.group, turn.cards, turn.member))
    group_vars.use_member(chat, turn)  # MVU variables: the member's own tree, or the group's shared one
    known = knowledge(turn.group, turn.cards, chat.tree.path_to(), chat.tree.entries)
    member = turn.member
    chat.speaker = member
    present = [turn.cards[m].name for m in turn.group.members if m in known.present | {member} and m in turn.cards]
    chat.state_filter = lambda state: scoped_state(state, known, member, present)
    chat.pending_notices.append(turn.choice.reason)


def prepare(chat: "Chat", user_text: str, speaker: Optional[str] = None) -> None:
    """Before a beat of a group chat: :func:`choose` then :func:`take_turn`; nothing for a one-card chat (a
    ``speaker`` there is ignored). ValueError as :func:`choose` (nothing written yet)."""
    turn = choose(chat, user_text, speaker)
    if turn is not None:
        _QUEUES[chat] = list(zip(turn.choice.queue[1:], turn.choice.reasons[1:])) if not speaker else []
        take_turn(chat, turn)


#: chat → the members still to answer its last user message (with why), after the first one (SillyTavern plays
#: every member a message activated, one message each; :func:`prepare_follow_up` takes them in order)
_QUEUES: "weakref.WeakKeyDictionary[Chat, list[tuple[str, Msg]]]" = weakref.WeakKeyDictionary()


def waiting(chat: "Chat") -> list[str]:
    """The members still to reply to the chat's last user message, in order (SillyTavern's activated members
    after the first; [] for a one-card chat, after a pick by hand, or once they have all replied)."""
    return [m for m, _ in _QUEUES.get(chat, [])]


def drop_waiting(chat: "Chat") -> None:
    """Forget the members still waiting to reply (the user typed, or Stop)."""
    _QUEUES.pop(chat, None)


def prepare_follow_up(chat: "Chat", speaker: Optional[str] = None) -> str:
    """Before a group chat's beat without user words (issue 31: the next member activated by the last user message
    — :func:`waiting` —, else an auto-mode turn by the member the strategy picks with ``user_input=False``, or the
    ``speaker`` the user chose): the turn taken (:func:`take_turn`, the reason in the activity list) and a user
    entry with the nudge 「（轮到X发言）」 put on the tree (``group_nudge``: the transcript does not show it; the
    prompt carries it, as SillyTavern's group nudge; ``nudge_for`` names the member, so a crash mid-reply can be
    resumed by them: :func:`cut_turn`, :func:`prepare_again`). Returns the nudge text for the beat
    (:func:`nudge_text`, in the chat's language). ValueError (a catalog
    message) for a one-card chat or when nobody can speak; SessionWriteError when the disk refuses."""
    from .results import SessionWriteError

    group = chat_group(chat)
    if group is None:
        raise ValueError(message("group.auto.none"))
    turn: Optional[Turn] = None
    queue = _QUEUES.get(chat) or []
    while speaker is None and queue and turn is None:
        member, reason = queue.pop(0)
        cards = member_cards(group)
        if member in cards and member not in group.muted:  # muted since the message: skipped
            turn = Turn(member, SpeakerChoice(member, reason, [member]), group, cards)
    if turn is None:
        path = chat.tree.path_to()
        last = next((e.text for e in reversed(path) if e.type == "assistant"), "")
        turn = choose(chat, last, speaker, user_input=False)
    if turn is None:
        raise ValueError(message("group.auto.none"))
    take_turn(chat, turn)
    card = turn.cards.get(turn.member)
    text = nudge_text(card.name if card is not None else turn.member, chat.context.language)
    mark = chat.tree.pending_mark()
    chat.tree.append("user", parent_id=chat.tree.leaf_id, text=text, group_nudge=True, nudge_for=turn.member)
    try:
        chat.tree.commit()
    except OSError as e:
        chat.tree.rollback(mark)
        raise SessionWriteError(e) from e
    return text


#: The nudge that carries a follow-up turn, per chat language (the model reads it as the user's message of that
#: turn; SillyTavern's default group nudge is "[Write the next reply only as {{char}}.]").
NUDGE = {"zh": "（轮到{name}发言）", "en": "[Write the next reply only as {name}.]"}


def nudge_text(name: str, language: str) -> str:
    """The nudge of a follow-up turn by the member called ``name`` in a chat in ``language`` (:data:`NUDGE`):
    Chinese for a Chinese chat, English for every other language (as the chat's default user name, 「你」 or
    "User": ``context.default_user_name``)."""
    return NUDGE["zh" if language == "zh" else "en"].format(name=name)


def _nudge_member(chat: "Chat", entry: Any) -> Optional[str]:
    """The member a hidden turn (``session.transcript.hidden_turn``) was for (``nudge_for``), None when the entry
    is no hidden turn or does not say (made before the field existed)."""
    if not hidden_turn(entry):
        return None
    who = getattr(entry, "nudge_for", None)
    return who if isinstance(who, str) and who else None


def cut_turn(chat: "Chat") -> Optional[str]:
    """The card name of the member whose follow-up reply a crash (or a quit mid-reply) cut off: the shown branch
    ends in a hidden turn with no beat after it (``recovery.unanswered`` found it). The window offers to let that
    member reply (regenerate, :func:`prepare_again`) or to drop the turn (``Chat.drop_unanswered``); the nudge is
    never shown as the user's words. "" when the member is not known any more; None when nothing was cut."""
    left = unanswered(chat.tree)
    if left is None or not hidden_turn(left):
        return None
    who = _nudge_member(chat, left)
    group = chat_group(chat)
    if who is None or group is None:
        return ""
    card = member_cards(group).get(who)
    return card.name if card is not None else who


def prepare_again(chat: "Chat", user_id: str, user_text: str) -> None:
    """Before a regenerate of a group chat's beat: the member who answered ``user_id`` answers again (a reply's
    new version keeps its speaker); nobody answered yet → the member a hidden turn was for (:func:`cut_turn`: the
    follow-up a crash cut off is resumed by its member, the members still waiting are not brought back), else
    :func:`prepare`. Nothing for a one-card chat."""
    if chat_group(chat) is None:
        return
    who = None
    for e in reversed(chat.tree.path_to()):
        if e.id == user_id:
            who = _nudge_member(chat, e)  # a hidden turn nobody answered yet: its member
            if who is None and hidden_turn(e):  # a turn whose member it does not say: the strategy picks one
                _QUEUES.pop(chat, None)
                turn = choose(chat, "", None, user_input=False)
                if turn is not None:
                    take_turn(chat, turn)
                return
            break
        if e.type == "assistant":
            who = getattr(e, "speaker", None)
            break
    prepare(chat, user_text, who)


def prepare_draft(chat: "Chat", user_id: str) -> None:
    """Before 「继续」 on an unfinished draft of a group chat: the member whose turn it was writes on — the member a
    hidden turn ``user_id`` was for (the waiting members are kept). Nothing for a one-card chat or an unfinished
    beat that answers the user's own words (the member chosen then is the one in force)."""
    if chat_group(chat) is None:
        return
    who = _nudge_member(chat, chat.tree.get(user_id))
    if who is not None:
        turn = choose(chat, "", who)
        if turn is not None:
            take_turn(chat, turn)


def prepare_continue(chat: "Chat", reply_id: str) -> None:
    """Before a Continue of a group chat's reply: the member who wrote it writes on (its speaker, or the speaker of
    the reply it is a version of). Nothing for a one-card chat or a reply without a speaker."""
    if chat_group(chat) is None:
        return
    who = reply_speaker(chat.tree.get(reply_id), chat.tree.entries)
    if who:
        prepare(chat, "", who)


def system_for_beat(chat: "Chat", beat: Any) -> Optional[str]:
    """The system prompt a group chat's ``beat`` was played with (its speaker's card, joined per the group), for
    the prompt inspector; None for a one-card chat, a beat without a named reply, or a speaker whose card is gone."""
    reply = next((e for e in chat.tree.children(beat.id) if e.type == "assistant"), None)
    member = getattr(reply, "speaker", None)
    group = chat_group(chat) if member else None
    if group is None:
        return None
    cards = member_cards(group)
    if member not in cards:
        return None
    old, stamp = chat.context, chat._card_stamp
    try:
        chat._reload_context(speaker_card(group, cards, member))
        system: str = chat.system
        return system
    finally:
        chat.context, chat._card_stamp = old, stamp


@dataclass
class MemberRow:
    """One member as the member list shows it: folder name, card name, muted, present in the scene, replies on
    the branch, the card's avatar file (or None), whether its card is in the library (readable)."""

    member: str
    name: str
    muted: bool
    present: bool
    replies: int
    avatar: Optional[str]
    has_card: bool = True


def member_rows(chat: "Chat") -> list[MemberRow]:
    """The group's members with presence and reply counts on the shown branch ([] for a one-card chat)."""
    group = chat_group(chat)
    if group is None:
        return []
    cards = member_cards(group)
    path = chat.tree.path_to()
    said = spoken(group, cards, path, chat.tree.entries)
    known = knowledge(group, cards, path, chat.tree.entries)
    rows = []
    for m in group.members:
        card = cards.get(m)
        avatar = None
        if card is not None and card.path:
            png = Path(card.path).parent / "original.png"
            avatar = str(png) if png.is_file() else None
        rows.append(MemberRow(m, card.name if card else m, m in group.muted, m in known.present,
                              said.count(m), avatar, card is not None))
    return rows


__all__ = ["NUDGE", "MemberRow", "Turn", "chat_group", "choose", "create", "cut_turn", "drop_waiting", "member_cards",
           "member_rows", "new_group_chat", "nudge_text", "opening_card", "prepare", "prepare_again",
           "prepare_continue", "prepare_draft", "prepare_follow_up", "speaker_names", "system_for_beat", "take_turn",
           "waiting"]
