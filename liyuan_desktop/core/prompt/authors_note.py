"""The Author's Note (作者注) of a chat and the card's Character's Note — SillyTavern's "Author's Note" extension
(``2_floating_prompt``) as Liyuan places it — and the default texts of SillyTavern's Continue and Impersonate.

SillyTavern's semantics (checked against its documentation and the extension's settings): a note has a text, a
position — in the chat at a depth (default, depth 4) with a role (system / user / assistant), or before / after
the scenario (the story string) — and an insertion frequency "every N user messages" (default 1; 0 = never). The
note is inserted on a generation when the number of user messages in the chat, the new one included, is a multiple
of N. The card's own ``extensions.depth_prompt`` (the Character's Note: prompt, depth, role) is a separate
injection: SillyTavern (``public/script.js`` Generate, checked 2024-09) sets it on every generation of a solo chat as
the in-chat extension prompt ``DEPTH_PROMPT`` — text trimmed, macros applied, depth default 4, role default system —
whatever the prompt manager holds, and ``openai.js`` ``populationInjectionPrompts`` joins it, per depth and role,
after the preset's in-chat prompts and the Author's Note (its key sorts after ``2_floating_prompt``) and before
the @depth world info (``customDepthWI-…``). Liyuan sends it in every role-play prompt of a card that has one
(:func:`character_note_block`): with a preset the prompter places it among the preset's depth prompts
(:mod:`.presets.prompter`), without one the turn puts it beside the Author's Note and the @depth lore; never in
agent mode, whose model is the writer's assistant, not the character (it reads the card file itself).

**Byte-stable system prompt.** Liyuan's system prompt is made once per chat (prefix cache), so a note never goes
into it: an in-chat note is a depth injection (the same machinery as @depth lore, :func:`.presets.prompter.
insert_depth_injections`), and a before/after-scenario note is placed in the per-beat data blocks before the user's
words as 【作者注】 (the nearest per-beat place to the story string). No note = nothing changes (golden runs).

The note is stored on the session tree as the ``authors_note`` field of a ``chat-settings`` entry (the same
mechanism as the chat's world-info overrides, :mod:`..chat.world_info`), kept **per branch** (issue 17): the entry
also names, as ``authors_note_at``, the newest user message of the branch shown when it was set (absent or null =
the whole chat: notes set before the first user message, and files written before this rule). The note of a branch
is the newest entry whose ``authors_note_at`` is on that branch's path, so another branch forked before that user
message keeps its own note, while a regenerated reply (a sibling under the same user message) keeps the note;
``{}`` = no note.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..macros import MacroContext, apply_macros
from ..messages import Msg, message
from ..text import prompt_language
from .presets.model import Role
from .presets.prompter import DepthBlock

__all__ = ["AuthorsNote", "CharacterNote", "note_due", "note_depth_block", "note_injection_text",
           "character_note", "character_note_block", "stored_note", "stored_notes", "note_on_path", "note_anchor", "DEFAULT_CONTINUE_NUDGE", "DEFAULT_IMPERSONATION_PROMPT", "NOTE_HEADER",
           "continue_nudge", "impersonation_prompt"]

#: The header of a before/after-scenario note in the per-beat data blocks.
NOTE_HEADER = "【作者注】"

#: Liyuan's continue nudge (SillyTavern sends a "continue nudge" with the message being continued; a preset's
#: ``continue_nudge_prompt`` is put before this text, which says how Liyuan's draft tools do it). ``{version}``: the
#: draft's version.
DEFAULT_CONTINUE_NUDGE = ("（续写：稿纸上是你上一拍已经收笔的回复，稿件当前版本 {version}。请接着它往下写，"
                          "不要重复、不要改写已有的内容；用 draft_append 把新的段落接在后面，写完用 draft_seal 收笔。）")

#: Liyuan's own impersonation prompt (SillyTavern's ``impersonation_prompt``: the model writes the user's next
#: message in the user's voice; a preset's own text replaces this one). Macros apply.
DEFAULT_IMPERSONATION_PROMPT = ("[请以{{user}}的身份、用{{user}}的口吻，写出{{user}}接下来要说的一句话或要做的动作，"
                                "参照前面对话里{{user}}的写法。不要替{{char}}说话或行动，不要写旁白以外的说明，"
                                "只输出这句话本身。]")

#: The three texts above for a chat in English (issue 32: every prompt the engine writes follows the chat's language).
ENGLISH_TEXTS = {
    "note": "[Author's note] ",
    "continue": ("(Continue: the draft holds your reply of the previous beat, already sealed; the draft's current "
                 "version is {version}. Write on from it without repeating or rewriting what is there: add the new "
                 "paragraphs with draft_append, and seal with draft_seal when done.)"),
    "impersonate": ("[Write the next line {{user}} says or the next thing {{user}} does, as {{user}} and in "
                    "{{user}}'s voice, following how {{user}} wrote earlier in the conversation. Do not speak or act "
                    "for {{char}}, write no explanations beyond narration, and output only that line.]"),
}


def _english(language: str) -> bool:
    return prompt_language(language) == "en"


def continue_nudge(language: str = "zh") -> str:
    """:data:`DEFAULT_CONTINUE_NUDGE` in the chat's ``language`` (English for every language but Chinese)."""
    return ENGLISH_TEXTS["continue"] if _english(language) else DEFAULT_CONTINUE_NUDGE


def impersonation_prompt(language: str = "zh") -> str:
    """:data:`DEFAULT_IMPERSONATION_PROMPT` in the chat's ``language`` (English for every language but Chinese)."""
    return ENGLISH_TEXTS["impersonate"] if _english(language) else DEFAULT_IMPERSONATION_PROMPT


class AuthorsNote(BaseModel):
    """A chat's Author's Note. ``text`` (macros apply; "" = no note); ``position``: ``chat`` (in the chat at
    ``depth`` messages from the end, 0 = after the last one, as ``role``) | ``before`` / ``after`` (SillyTavern:
    before / after the scenario; Liyuan: the per-beat data blocks, module doc); ``interval``: insert on every N-th
    user message (1 = every beat, 0 = never)."""

    text: str = ""
    position: Literal["chat", "before", "after"] = "chat"
    depth: int = Field(default=4, ge=0, le=10000)
    role: Literal["system", "user", "assistant"] = "system"
    interval: int = Field(default=1, ge=0, le=10000)

    @property
    def active(self) -> bool:
        """Whether the note can ever be inserted (text and a non-zero interval)."""
        return bool(self.text.strip()) and self.interval > 0

    def summary(self) -> Msg:
        """One line for the inspector, the CLI and the SillyTavern import's report, as a catalog message
        (``migrate.an.*``), e.g. 「作者注：对话中深度 4（system），每 1 条用户消息插入一次」 / "Author's Note: in the
        chat at depth 4 (system), inserted every 1 user messages"."""
        if not self.text.strip():
            return message("migrate.an.none")
        where = message("migrate.an.chat", depth=self.depth, role=self.role) if self.position == "chat" else \
            message("migrate.an." + self.position)
        every = message("migrate.an.off") if self.interval == 0 else message("migrate.an.every", n=self.interval)
        return message("migrate.an.summary", where=where, every=every)

#: The roles a Character's Note may have (SillyTavern's ``depth_prompt.role``); anything else is "system".
_NOTE_ROLES: dict[str, Role] = {"system": "system", "user": "user", "assistant": "assistant"}


class CharacterNote(BaseModel):
    """The card's Character's Note (``extensions.depth_prompt``) as stored: ``prompt``, ``depth``, ``role``."""

    prompt: str = ""
    depth: int = 4
    role: Role = "system"


def note_due(note: Optional[AuthorsNote], user_count: int) -> bool:
    """Whether ``note`` goes into the prompt of a generation when the chat has ``user_count`` user messages (the
    new one included): active and ``user_count`` a multiple of its interval (SillyTavern's insertion frequency)."""
    if note is None or not note.active:
        return False
    return user_count > 0 and user_count % note.interval == 0


def note_depth_block(note: Optional[AuthorsNote], user_count: int, ctx: MacroContext) -> Optional[DepthBlock]:
    """The in-chat injection of an in-chat ``note`` due now (:func:`note_due`), macros applied with ``ctx``; None
    when not due, not in-chat, or empty after macros."""
    if note is None or note.position != "chat" or not note_due(note, user_count):
        return None
    text = apply_macros(note.text, ctx).strip()
    if not text:
        return None
    return DepthBlock(depth=note.depth, order=100, role=note.role, text=text, source="authors_note")


def note_injection_text(note: Optional[AuthorsNote], user_count: int, ctx: MacroContext, language: str = "zh") -> str:
    """The 【作者注】 block of a before/after-scenario ``note`` due now ("" otherwise), macros applied; the header
    in the chat's ``language``."""
    if note is None or note.position == "chat" or not note_due(note, user_count):
        return ""
    text = apply_macros(note.text, ctx).strip()
    return f"{ENGLISH_TEXTS['note'] if _english(language) else NOTE_HEADER}{text}" if text else ""


def character_note(extensions: Optional[dict[str, Any]]) -> Optional[CharacterNote]:
    """The card's Character's Note from its ``extensions`` (``depth_prompt``: ``prompt``, ``depth`` default 4,
    ``role`` default system), or None when the card has none (or an empty one)."""
    dp = (extensions or {}).get("depth_prompt")
    if not isinstance(dp, dict) or not isinstance(dp.get("prompt"), str) or not dp["prompt"].strip():
        return None
    try:
        depth = int(dp.get("depth", 4))
    except (TypeError, ValueError):
        depth = 4
    raw_role = dp.get("role")
    role = _NOTE_ROLES.get(raw_role, "system") if isinstance(raw_role, str) else "system"
    return CharacterNote(prompt=dp["prompt"], depth=max(0, depth), role=role)


def character_note_block(extensions: Optional[dict[str, Any]], ctx: MacroContext) -> Optional[DepthBlock]:
    """The card's Character's Note (:func:`character_note`) as an in-chat injection: macros applied with ``ctx``
    (the one macro engine) and trimmed, order 100, ``source="card"``; None when the card has none or it is empty
    after macros. For prompts without a preset (a preset's prompter renders its own, :meth:`.presets.prompter.
    PresetPrompter.tail`)."""
    cn = character_note(extensions)
    if cn is None:
        return None
    text = apply_macros(cn.prompt.strip(), ctx).strip()
    if not text:
        return None
    return DepthBlock(depth=cn.depth, order=100, role=cn.role, text=text, source="card")


def stored_notes(tree: Any) -> list[tuple[Optional[str], Optional[AuthorsNote]]]:
    """Every Author's Note setting of ``tree`` (a ``session.tree.SessionTree``), oldest first, as ``(anchor, note)``:
    ``anchor`` the user-message id the note was set at (``authors_note_at``; None = the whole chat), ``note`` None
    for ``{}`` or a value that cannot be read (a damaged value is ignored, as a note is advice, not data).
    O(entries), once per open."""
    out: list[tuple[Optional[str], Optional[AuthorsNote]]] = []
    for i in tree.order:
        e = tree.entries[i]
        if e.type != "chat-settings":
            continue
        raw = getattr(e, "authors_note", None)
        if raw is None:
            continue
        anchor = (e.model_extra or {}).get("authors_note_at")
        note: Optional[AuthorsNote] = None
        if isinstance(raw, dict) and raw:
            try:
                note = AuthorsNote.model_validate(raw)
            except ValueError:
                note = None
        out.append((anchor if isinstance(anchor, str) else None, note))
    return out


def note_on_path(notes: list[tuple[Optional[str], Optional[AuthorsNote]]], path: Any) -> Optional[AuthorsNote]:
    """The note of the branch ``path`` (its entries, root first): the newest of ``notes`` (:func:`stored_notes`) set
    for the whole chat or at a user message on that path; None when there is none. No note: no walk at all; else one
    walk up the path that allocates nothing per entry (a beat of a long chat asks this once)."""
    if not notes:
        return None
    wanted = {anchor for anchor, _n in notes if anchor is not None}
    found: set[str] = set()
    if wanted:
        for e in reversed(path):
            if e.id in wanted:
                found.add(e.id)
                if len(found) == len(wanted):
                    break
    for anchor, note in reversed(notes):
        if anchor is None or anchor in found:
            return note
    return None


def note_anchor(path: Any) -> Optional[str]:
    """Where a note set now is kept: the id of the newest ``user`` entry on ``path`` (the shown branch, root first),
    None before the first user message (then it holds for the whole chat)."""
    for e in reversed(path):
        if e.type == "user":
            anchor: str = e.id
            return anchor
    return None


def stored_note(tree: Any) -> Optional[AuthorsNote]:
    """The Author's Note of ``tree``'s shown branch (:func:`stored_notes`, :func:`note_on_path`); None when there is
    none. O(entries)."""
    return note_on_path(stored_notes(tree), tree.path_to())
