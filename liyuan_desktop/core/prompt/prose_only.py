"""Prose-only play (issue 18 §2): the prompt for a model that cannot or will not call tools.

Most models people run locally (3–14B on Ollama, LM Studio, llama.cpp, KoboldCpp) call tools poorly or not at all,
and some servers reject a ``tools`` field. In prose-only play the beat is one streamed completion with no tools:

* the system prompt is :func:`prose_system` — the chat's own system prompt with the shipped tool-play rules
  (``resources/prompts/roleplay_system.md``) replaced by the prose-only rules (``roleplay_system_prose.md``: no
  tool instructions). It depends only on the chat's system prompt, so it is byte-stable across beats (the
  provider's cached prefix holds) just as the tool-play one is;
* the activated world info is *inlined* the way SillyTavern sends it — the entries' content, not their titles
  (:func:`prose_lore`, rendered by :func:`.lore_layers.render_lore`): keyed before/after-character entries go in
  【相关设定】 before the user's words (SillyTavern puts them in its system area each turn; ours must stay
  byte-stable, so they travel with the turn's data blocks as the turn's varying constants already do), @depth
  entries at their depth (:func:`.assemble.lore_depth_blocks`, unchanged), all within the world-info budget the
  activation already applied (``ActivationOptions(budget_tokens=…)`` of ``Lorebook.activate_detailed``, SillyTavern's
  budget);
* 【世界状态】 and 【登场名录】 stay; 【设定集索引】 (titles the model could only reach with tools) is left out.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ..lore import LoreEntry, key_matches
from ..macros import MacroContext
from .assemble import rules_text
from .lore_layers import render_lore

__all__ = ["INLINE_LORE_MAX_CHARS", "TOOL_RULES", "PROSE_RULES", "asked_entries", "bounded_lore", "matched_now",
           "near_first", "prose_system", "prose_lore"]

#: At most this many characters of activated entries' text go with a tool-play beat whose model has not shown it
#: calls tools yet (issue 30 §4); whole entries, in book order, the rest left to lorebook_search.
INLINE_LORE_MAX_CHARS = 1500

#: The shipped rules files: tool play (the default system prompt's head) and prose-only play.
TOOL_RULES = "roleplay_system.md"
PROSE_RULES = "roleplay_system_prose.md"
COMPACT_RULES = "roleplay_system_compact.md"
"""The compact tool-play rules for small / CPU models (issue 30 §6; with ``beat.tools.sets.COMPACT_ROLEPLAY_TOOLS``)."""


def _swap(system: str, kind: str, language: str) -> str:
    """``system`` with the tool-play rules at its head (in either language) swapped for the rules ``kind`` in the
    same language; a prompt that does not start with them gets the ``kind`` rules in ``language`` put in front."""
    for lang in ("zh", "en"):
        tools = rules_text("roleplay", lang)
        if system.startswith(tools):
            return rules_text(kind, lang) + system[len(tools):]
    return f"{rules_text(kind, language)}\n\n{system}"


def prose_system(system: str, language: str = "zh") -> str:
    """The prose-only variant of a role-play system prompt ``system`` (``assemble.system_prompt`` output): the
    tool-play rules at its head swapped for the prose-only rules (of the same language); the card layers (or the
    preset's) untouched. A prompt that does not start with the shipped rules (user-replaced) gets the prose-only
    rules in the chat's ``language`` put in front."""
    return _swap(system, "prose", language)


def compact_system(system: str, language: str = "zh") -> str:
    """The compact variant of a role-play system prompt (issue 30 §6: a 0.5B-3B model on a CPU reads ~3,100
    tokens before its first word): the tool-play rules at its head swapped for :data:`COMPACT_RULES` (a third as
    long; of the same language), the card layers untouched — the prefix stays byte-stable beat after beat, so the
    server's cache holds."""
    return _swap(system, "compact", language)


def bounded_lore(text: str, limit: int = INLINE_LORE_MAX_CHARS) -> str:
    """``text`` (:func:`prose_lore` output: entries joined by blank lines) cut to whole entries within ``limit``
    characters; the first entry alone is cut at ``limit`` with 「……」 when it is longer."""
    if len(text) <= limit:
        return text
    parts = text.split("\n\n【")
    out: list[str] = []
    used = 0
    for piece in [parts[0], *("【" + p for p in parts[1:])]:
        if used + len(piece) + 2 > limit:
            break
        out.append(piece)
        used += len(piece) + 2
    return "\n\n".join(out) if out else text[:limit] + "……"


def prose_lore(entries: Iterable[LoreEntry], ctx: MacroContext) -> str:
    """The activated keyed entries' text for 【相关设定】 (``【title】body`` each, macros applied with the beat's
    context ``ctx``, empty wrappers dropped), in the order given (book order)."""
    return render_lore(entries, ctx)


def near_first(keyed: list[LoreEntry], order: dict[int, int], activation: Optional[tuple[Any, int]]) -> list[LoreEntry]:
    """``keyed`` (entries of ``activation``: an ``ActivationResult`` and the number of messages it scanned, the
    last being this beat's words — ``Chat.last_activation``) with the ones a key matched in this beat's own words
    first, then the rest, each part in book order (``order``: id of an entry → its index in the book). Issue 30 §2:
    what the user just asked about stands first in the 【相关设定】 block a small model reads, and survives the
    inline bound (:func:`bounded_lore`). Book order when ``activation`` is None."""
    by_book = sorted(keyed, key=lambda e: order.get(id(e), 0))
    if activation is None:
        return by_book
    now = {id(e) for e in matched_now(activation)}
    return [e for e in by_book if id(e) in now] + [e for e in by_book if id(e) not in now]


def matched_now(activation: tuple[Any, int]) -> list[LoreEntry]:
    """The entries of ``activation`` (an ``ActivationResult`` and the number of messages it scanned, the last being
    this beat's words) whose key matched in this beat's own words (not through recursion), in activation order."""
    lore, n = activation
    return [e for e, r in zip(lore.entries, lore.reasons)
            if r.kind == "key" and r.matched_in != "recursion" and r.message_index == n - 1]


def asked_entries(activation: Optional[tuple[Any, int]], user_text: str) -> list[LoreEntry]:
    """The world-book entries the user *asked about* this beat (issue 30: "lore that reaches the reply"): when the
    user's words hold a question mark (？ or ?), the activated non-constant entries one of whose primary keys
    matches in those words (``lore.key_matches``, the entry's own case and whole-word settings, SillyTavern's
    default of neither) — whatever message the activation reports for it: the demo's 听雨轩 / "Rainsong" is named
    in the opening too, and the activation names the first match it found. [] otherwise. The beat loop retries a
    local model's reply once when it uses none of them (``beat.loop.Beat._lore_unused``)."""
    if activation is None or not any(q in user_text for q in ("？", "?")):
        return []
    lore, _n = activation
    return [e for e in lore.entries if not e.constant and e.content.strip()
            and any(k.strip() and key_matches(user_text, k, case_sensitive=bool(e.case_sensitive),
                                              match_whole_words=bool(e.match_whole_words)) for k in e.keys)]
