"""Where activated world-info text goes in the role-play prompt — the one home of these rules for both the plain
system prompt (:func:`.assemble.card_layers`) and a SillyTavern preset (:class:`.presets.prompter.PresetPrompter`).

SillyTavern (``world-info.js`` ``checkWorldInfo`` placement, ``openai.js`` prompt manager) puts activated entries by
position: before/after the character (``worldInfoBefore``/``worldInfoAfter`` markers), inside the example messages
(positions 5/6, parsed into example turns by ``parseExampleIntoIndividual``: text with no ``Name:`` line yields no
turn and is lost), in the chat at a depth (position 4), or only through ``{{outlet}}`` (7). Within a position lower
``order`` comes first, higher order nearer the chat.

**Byte-stable system prompt.** Liyuan's system prompt is made once per chat (prefix caching), so it can only hold
constants that SillyTavern activates on *every* turn: :meth:`Lorebook.fixed_constants` (no probability, no group,
no delay/cooldown, character filter decided by the card's name, no ``@@dont_activate``) whose text has no chat
reference macro (``{{lastMessage}}`` …, :data:`CHAT_REFS`), cut by the chat's world-info budget as SillyTavern cuts
constants (``Lorebook.set_constants_budget``: the preset's context or the model's window, fixed per chat). Every other
constant that the turn's activation
returns is rendered per beat (:func:`beat_constants`, placed with the data blocks before the user's words), and
@depth entries always are (:func:`.assemble.lore_depth_blocks`).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional, Sequence

from ..lore import Lorebook, LoreEntry
from ..macros import MacroContext, apply_macros, volatile_macros

__all__ = ["CHAT_REFS", "lore_slot", "system_constants", "beat_constants", "render_lore", "examples_kept",
           "drop_empty_wrappers", "empty_wrapper_indices", "example_lore"]

#: Macros whose value is the chat's newest messages: an entry using them cannot sit in the byte-stable prefix.
CHAT_REFS = frozenset({"lastmessage", "lastusermessage", "lastcharmessage", "lastmessageid"})


def lore_slot(e: LoreEntry) -> Optional[str]:
    """Where an activated entry's text goes: "before" (ST position 0, and the Author's-Note positions 2/3, which
    Liyuan has no note for), "after" (1), "examples_top"/"examples_bottom" (5/6), or None for @depth (4, placed in
    the chat per beat) and outlet (7, sent only through ``{{outlet::name}}``)."""
    pos = str(e.position).lower()
    ext_pos = (e.extensions or {}).get("position")
    if pos in ("outlet", "7") or ext_pos == 7 or pos in ("at_depth", "4"):
        return None
    if pos in ("after_char", "1"):
        return "after"
    if pos in ("em_top", "5"):
        return "examples_top"
    if pos in ("em_bottom", "6"):
        return "examples_bottom"
    return "before"


def _stable_text(e: LoreEntry) -> bool:
    return not (volatile_macros(e.content) & CHAT_REFS)


def system_constants(book: Lorebook, character: Optional[str]) -> list[LoreEntry]:
    """The constants the byte-stable system prompt holds (module doc), in placement order; @depth/outlet left
    out (they are not system text)."""
    return [e for e in book.fixed_constants(character) if _stable_text(e) and lore_slot(e) is not None]


def beat_constants(result: Any, fixed: Sequence[LoreEntry]) -> list[LoreEntry]:
    """The constants of a turn's activation ``result`` that the system prompt does not already hold (``fixed``,
    from :func:`system_constants`) and that are not @depth/outlet: rolled, grouped, delayed or filtered constants
    that won this turn, and constants that quote the newest messages. Placement order."""
    have = {id(e) for e in fixed}
    return [e for e in result.entries if e.constant and id(e) not in have and lore_slot(e) is not None]


_OPEN = re.compile(r"^\s*<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>\s*$")
_CLOSE = re.compile(r"^\s*</([A-Za-z_][\w.:-]*)\s*>\s*$")
_EMPTY_PAIR = re.compile(r"^\s*(?:<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>\s*</\1\s*>\s*)+$")


def empty_wrapper_indices(texts: Sequence[str]) -> set[int]:
    """Indices of ``texts`` (entry bodies in prompt order) that are empty or wrappers left empty: a body that is
    only an opening tag directly followed (blank bodies aside) by a body that is only its closing tag (both), or a
    body made only of empty tag pairs. Cards wrap rules in separate entries (``<Format>`` … ``</Format>``); when
    Liyuan takes the rules out of the actor's prompt (``[mvu_update]`` entries go to the scribe) the wrapper would
    reach the model around nothing."""
    drop: set[int] = set()
    i = 0
    while i < len(texts):
        t = texts[i]
        if not t.strip() or _EMPTY_PAIR.match(t):
            drop.add(i)
            i += 1
            continue
        m = _OPEN.match(t)
        if m:
            j = i + 1
            while j < len(texts) and not texts[j].strip():
                drop.add(j)
                j += 1
            c = _CLOSE.match(texts[j]) if j < len(texts) else None
            if c and c.group(1) == m.group(1):
                drop.update((i, j))
                i = j + 1
                continue
        i += 1
    return drop


def drop_empty_wrappers(texts: Sequence[str]) -> list[str]:
    """``texts`` without the blank ones and the empty wrappers of :func:`empty_wrapper_indices`."""
    drop = empty_wrapper_indices(texts)
    return [t for i, t in enumerate(texts) if i not in drop]


def examples_kept(text: str, user: str, char: str) -> bool:
    """Whether SillyTavern's chat-completion prompt keeps example-message text ``text`` (macros already applied):
    ``parseMesExamples`` splits it into ``<START>`` blocks (adding one in front when missing) and
    ``parseExampleIntoIndividual`` skips each block's first line and makes turns only from lines starting
    ``user:`` or ``char:``; a block with no such line yields nothing."""
    if not text.strip() or text.strip() == "<START>":
        return False
    body = text if text.startswith("<START>") else "<START>\n" + text.strip()
    heads = tuple(f"{n}:" for n in (user, char) if n)
    for block in re.split(r"<START>", body, flags=re.IGNORECASE)[1:]:
        lines = ("<START>\n" + block.strip() + "\n").split("\n")[1:]
        if any(line.startswith(heads) for line in lines) if heads else False:
            return True
    return False


def render_lore(entries: Iterable[LoreEntry], ctx: MacroContext) -> str:
    """Entries as Liyuan writes lore text: ``【title】`` + the body (decorator lines removed, macros applied),
    joined by blank lines; empty bodies and empty wrappers (:func:`drop_empty_wrappers`) left out."""
    pairs = [(e, apply_macros(e.body, ctx).strip()) for e in entries]
    drop = empty_wrapper_indices([b for _, b in pairs])
    return "\n\n".join(f"【{e.display_title}】{b}" for i, (e, b) in enumerate(pairs) if i not in drop)


def example_lore(entries: Iterable[LoreEntry], ctx: MacroContext) -> tuple[str, str]:
    """(top, bottom): the example-message entries (positions 5/6) SillyTavern keeps, bodies joined by newlines
    (macros applied); entries that would yield no example turn (:func:`examples_kept`) dropped."""
    top: list[str] = []
    bottom: list[str] = []
    for e in entries:
        slot = lore_slot(e)
        if slot not in ("examples_top", "examples_bottom"):
            continue
        body = apply_macros(e.body, ctx).strip()
        if examples_kept(body, ctx.user, ctx.char):
            (top if slot == "examples_top" else bottom).append(body)
    return "\n".join(top), "\n".join(bottom)
