"""A preset plan rendered for one chat (:class:`PresetPrompter`) and in-chat depth injections
(:func:`insert_depth_injections`). Macros go through the one engine (:func:`..macros.apply_macros`)."""

from __future__ import annotations

import random as _random
from datetime import datetime
from typing import Any, Iterable, Optional

from pydantic import BaseModel, Field

from ...cards import Card
from ...cards.personas import Persona
from ...llm.types import ChatMessage
from ...lore import Lorebook
from ...macros import MacroContext, apply_macros, volatile_macros
from ...messages import message
from ..lore_layers import CHAT_REFS, example_lore, lore_slot, render_lore, system_constants
from ..wording import CARD_TITLES, lang_of
from .mapping import PlannedPrompt, PresetPlan
from .model import Role

__all__ = ["DepthBlock", "PresetTail", "insert_depth_injections", "PresetPrompter"]

class DepthBlock(BaseModel):
    """Rendered text of one in-chat injection: ``depth`` (0 = after the last message), ``order`` (same depth:
    lower first), ``role``; ``source`` names where it came from (a preset identifier, "persona", "card")."""

    depth: int
    order: int = 100
    role: Role = "system"
    text: str
    source: str = ""


class PresetTail(BaseModel):
    """The per-beat part of a preset: depth injections and after segments (rendered, macros evaluated now)."""

    depth: list[DepthBlock] = Field(default_factory=list)
    after: list[ChatMessage] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def insert_depth_injections(messages: list[ChatMessage], blocks: Iterable[DepthBlock]) -> list[ChatMessage]:
    """Insert in-chat injections into ``messages`` (the chat part: history + the final user message, no system)
    as SillyTavern's ``populationInjectionPrompts`` does (openai.js, 2025):

    for each depth d, blocks are grouped by ``order`` and, within an order, by role; texts of one (order, role)
    are joined with "\\n" and stripped; the group's messages go just before the last d original messages
    (d = 0: after the last one; d ≥ len: at the very start). In the final order lower ``order`` comes first and,
    within an order, roles run assistant, user, system (system closest to the end). Deeper blocks that land on the
    same spot come first. Returns a new list; ``messages`` is not changed."""
    by_depth: dict[int, dict[int, dict[str, list[str]]]] = {}
    for b in blocks:
        if not b.text:
            continue
        by_depth.setdefault(max(0, b.depth), {}).setdefault(b.order, {}).setdefault(b.role, []).append(b.text)
    if not by_depth:
        return list(messages)
    n = len(messages)
    inserts: dict[int, list[tuple[int, list[ChatMessage]]]] = {}
    for depth, orders in by_depth.items():
        group: list[ChatMessage] = []
        for order in sorted(orders):
            for role in ("assistant", "user", "system"):
                texts = orders[order].get(role)
                if texts:
                    joined = "\n".join(texts).strip()
                    if joined:
                        group.append(ChatMessage(role=role, content=joined))
        if group:
            inserts.setdefault(max(0, n - depth), []).append((depth, group))
    out: list[ChatMessage] = []
    for i in range(n + 1):
        for _, group in sorted(inserts.get(i, []), key=lambda x: -x[0]):
            out.extend(group)
        if i < n:
            out.append(messages[i])
    return out


#: Volatile macros not reported for the system layers: variables are chat state by design, {{input}} is empty there.
_QUIET_IN_SYSTEM = frozenset({"input", "getvar", "setvar", "addvar", "incvar", "decvar", "getglobalvar",
                              "setglobalvar", "addglobalvar", "incglobalvar", "decglobalvar"})


class PresetPrompter:
    """A :class:`PresetPlan` rendered for one chat: the byte-stable system layers (computed once) and the per-beat
    tail (:meth:`tail`, :meth:`build_messages`). All macros go through :func:`..macros.apply_macros`.

    Args:
        plan: from :func:`..mapping.plan`.
        card, book: the chat's card and lorebook (``book`` default: ``card.lorebook``).
        ctx: the chat's :class:`MacroContext` (names, persona description, clock, seed). The prompter works on a
            copy with the card's fields filled in; when ``ctx`` has no clock the system layers use the moment the
            prompter was made, so they stay byte-stable.
        persona: the chat's persona, or None (then only the user's name is given).
        seed: a stable per-chat string (e.g. the session header id) seeding ``{{pick}}`` and the fixed
            ``{{random}}``/``{{roll}}`` of the system layers (the context's ``chat_id``; default ``ctx.chat_id``).
        variables: initial ``{{getvar}}`` store (copied; default a copy of ``ctx.variables``), e.g. an imported ST
            chat's ``chat_metadata.variables``.
        model_name: what ``{{model}}`` expands to (default ``ctx.model``).
        include_card_depth_prompt: add the card's ``extensions.depth_prompt`` (ST "Character's Note") as a depth
            injection (order 100), as ST does.

    ``system_layers`` replaces :func:`assemble.card_layers` (same section headings); ``warnings`` lists the volatile
    macros (clock, random, chat references) that were evaluated once for the system layers.
    """

    def __init__(self, plan: PresetPlan, card: Card, book: Optional[Lorebook] = None,
                 ctx: Optional[MacroContext] = None, persona: Optional[Persona] = None, seed: str = "",
                 variables: Optional[dict[str, Any]] = None, model_name: str = "",
                 include_card_depth_prompt: bool = True, language: str = "zh"):
        self.plan = plan
        #: the section titles of the system layers in the chat's language (:data:`..wording.CARD_TITLES`)
        self.titles = CARD_TITLES[lang_of(language)]
        self.card = card
        self.book = book if book is not None else card.lorebook
        base = ctx or MacroContext(char=card.name, user=persona.name if persona else "")
        self.persona = persona
        self.seed = seed
        self.include_card_depth_prompt = include_card_depth_prompt
        made = datetime.now()
        self.ctx = base.model_copy(update={
            "description": card.description, "personality": card.personality, "scenario": card.scenario,
            "persona": persona.description if persona is not None else base.persona,
            "mes_examples": card.mes_example, "char_prompt": card.system_prompt,
            "char_instruction": card.post_history_instructions, "char_version": card.character_version,
            "model": model_name or base.model, "chat_id": seed or base.chat_id, "original": None,
            "clock": base.clock or (lambda: made), "rng": None,
            "variables": dict(variables) if variables is not None else dict(base.variables),
            "global_variables": dict(base.global_variables),
        })
        self.warnings: list[str] = []
        #: the constants the byte-stable layers hold (the card's name decides character filters)
        self._fixed = system_constants(self.book, card.name)
        self.system_layers = self._render_system()
        self._vars_after_system = dict(self.ctx.variables)
        self._globals_after_system = dict(self.ctx.global_variables)

    def rerender_system(self) -> str:
        """Render the system layers again and return them (:attr:`system_layers`): a chat whose texts hold EJS
        templates or TavernHelper macros does this each beat, with the values of the beat
        (``chat.templates``); the text is unchanged while those values are. :attr:`warnings` are made anew."""
        self.warnings = []
        self.system_layers = self._render_system()
        return self.system_layers

    def prompt_text(self, p: PlannedPrompt) -> str:
        """What one preset prompt renders to in this chat, for a token count (the prompt manager,
        :mod:`.manager`): a marker → the card / persona / lorebook text it is filled with (the section body, no
        heading; "" when it has nothing), ``main``/``jailbreak`` → the card's override when it applies, any other
        prompt → its text. Macros are evaluated with the system layers' context (a fixed clock and seed). Leaves
        :attr:`warnings`, :attr:`system_layers` and the chat's variables as they were."""
        warnings, variables = list(self.warnings), dict(self.ctx.variables)
        try:
            if p.marker:
                sec = self._section(p, [])
                return sec[1] if sec else ""
            if p.identifier in ("main", "jailbreak"):
                card_text = self.card.system_prompt if p.identifier == "main" else self.card.post_history_instructions
                return self._override(p, card_text, p.name or p.identifier)[1]
            return self._x(p.content, p.name or p.identifier)
        finally:
            self.warnings = warnings
            self.ctx.variables.clear()
            self.ctx.variables.update(variables)

    # -- system ---------------------------------------------------------------------------------------------
    def _x(self, text: str, key: str, ctx: Optional[MacroContext] = None, original: Optional[str] = None) -> str:
        """``text`` through the macro engine, stripped. ``ctx`` None = the system layers (volatile macros are
        reported in :attr:`warnings`); a tail context otherwise."""
        if not text:
            return ""
        if ctx is None:
            ctx = self.ctx
            self._warn_volatile(text, key)
        if original is not None:
            ctx = ctx.model_copy(update={"original": original})  # shallow: variables stay shared
        return apply_macros(text, ctx).strip()

    def _warn_volatile(self, text: str, key: str) -> None:
        where = key or message("preset.where.prompt")
        for name in sorted(volatile_macros(text) - _QUIET_IN_SYSTEM):
            if name in ("random", "roll"):
                self.warnings.append(message("preset.macro.random", where=where, name=name))
            elif name in CHAT_REFS:
                self.warnings.append(message("preset.macro.chat_ref", where=where, name=name))
            else:
                self.warnings.append(message("preset.macro.time", where=where, name=name))

    def _override(self, p: PlannedPrompt, card_text: str, key: str,
                  ctx: Optional[MacroContext] = None) -> tuple[bool, str]:
        """(card text used?, text) for main/jailbreak: the card's text replaces the preset's unless forbidden."""
        if card_text.strip() and not p.forbid_overrides:
            original = self._x(p.content, key, ctx)
            return True, self._x(card_text, key, ctx, original=original)
        return False, self._x(p.content, key, ctx)

    def _lore(self, after: bool) -> str:
        """The ``worldInfoBefore``/``worldInfoAfter`` marker: the chat's fixed constants of that position
        (:func:`..lore_layers.system_constants`, order ascending). @depth constants are not here: they go in the
        chat at their depth per beat (``assemble.lore_depth_blocks``), as SillyTavern sends them — once."""
        slot = "after" if after else "before"
        entries = [e for e in self._fixed if lore_slot(e) == slot]
        for e in entries:
            self._warn_volatile(e.content, message("inspect.where.entry", title=e.display_title))
        return render_lore(entries, self.ctx)

    def _section(self, p: PlannedPrompt, lore_titles: list[str]) -> Optional[tuple[str, str]]:
        ident = p.identifier
        card = self.card
        w = self.titles
        if p.marker:
            if ident == "charDescription":
                return w["description"], self._x(card.description, message("inspect.where.description"))
            if ident == "charPersonality":
                return w["personality"], self._x(card.personality, message("inspect.where.personality"))
            if ident == "scenario":
                return w["scenario"], self._x(card.scenario, message("inspect.where.scenario"))
            if ident == "dialogueExamples":  # with the example-message lore ST keeps (em top / bottom)
                top, bottom = example_lore(self._fixed, self.ctx)
                return w["examples"], "\n".join(x for x in (top, self._x(card.mes_example, message("inspect.where.examples")), bottom) if x)
            if ident in ("worldInfoBefore", "worldInfoAfter"):
                title = w["before"] if not lore_titles else w["after_more"]
                body = self._lore(after=ident == "worldInfoAfter")
                if body:
                    lore_titles.append(title)
                return title, body
            if ident == "personaDescription":
                if not self.ctx.user:
                    return None
                lines = [w["user_line"].format(user=self.ctx.user)]
                if self.persona is not None and self.persona.in_prompt:
                    desc = self._x(self.persona.description, message("preset.where.persona"))
                    if desc:
                        lines.append(desc)
                return w["user_title"], "\n".join(lines)
            return None
        title = w["preset"].format(name=p.name or ident)
        if ident == "main":
            used, text = self._override(p, card.system_prompt, "main")
            return (w["system"] if used else title), text
        if ident == "jailbreak":
            used, text = self._override(p, card.post_history_instructions, "jailbreak")
            return (w["post"] if used else title), text
        return title, self._x(p.content, p.name or ident)

    def _render_system(self) -> str:
        sections = [self.titles["card"].format(name=self.card.name)]
        lore_titles: list[str] = []
        persona_done = False
        for p in self.plan.system:
            sec = self._section(p, lore_titles)
            if p.identifier == "personaDescription":
                persona_done = True
            if sec and sec[1]:
                sections.append(f"## {sec[0]}\n{sec[1]}")
        if not persona_done and self.ctx.user:
            # Without the marker ST sends no persona text; the user's name is still needed (who the user plays).
            sections.append(self.titles["user"].format(user=self.ctx.user))
        # de-duplicate warnings, keep order
        self.warnings = list(dict.fromkeys(self.warnings))
        return "\n\n".join(sections)

    # -- tail -----------------------------------------------------------------------------------------------
    def _tail_text(self, p: PlannedPrompt, ctx: MacroContext) -> str:
        """One per-beat preset prompt rendered now: main/jailbreak with the card's override, others as written."""
        key = p.name or p.identifier
        if p.identifier in ("main", "jailbreak"):
            card_text = self.card.system_prompt if p.identifier == "main" else self.card.post_history_instructions
            _, text = self._override(p, card_text, key, ctx)
            return text
        return self._x(p.content, key, ctx)

    def tail(self, user_text: str = "", last_char_message: str = "", now: Optional[datetime] = None,
             rng: Optional[_random.Random] = None) -> PresetTail:
        """Render the depth injections and after segments for one beat (volatile macros evaluated now: the clock is
        ``now`` or the current time, ``{{random}}``/``{{roll}}`` draw from ``rng`` or fresh randomness).
        ``user_text`` feeds ``{{lastMessage}}``/``{{lastUserMessage}}``; ``last_char_message`` ``{{lastCharMessage}}``.
        Variables start from their state after the system layers on every call (a beat does not leak into the
        next through ``{{setvar}}``)."""
        ctx = self.ctx.model_copy(update={
            "variables": dict(self._vars_after_system), "global_variables": dict(self._globals_after_system),
            "last_message": user_text, "last_user_message": user_text, "last_char_message": last_char_message,
            "clock": (lambda: now) if now is not None else None, "rng": rng, "rng_seed": None,
        })
        out = PresetTail()
        for p in self.plan.depth:
            text = self._tail_text(p, ctx)
            if text:
                out.depth.append(DepthBlock(depth=p.depth, order=p.order, role=p.role, text=text, source=p.identifier))
        if self.persona is not None and self.persona.position == "at_depth":
            text = self._x(self.persona.description, "persona", ctx)
            if text:
                out.depth.append(DepthBlock(depth=self.persona.depth, order=100, role=self.persona.role, text=text,
                                            source="persona"))
        if self.include_card_depth_prompt:  # the card's Character's Note, read by the one rule (authors_note)
            from ..authors_note import character_note  # (that module imports this one)

            cn = character_note(self.card.extensions)
            text = self._x(cn.prompt.strip(), "depth_prompt", ctx) if cn is not None else ""
            if cn is not None and text:
                out.depth.append(DepthBlock(depth=cn.depth, order=100, role=cn.role, text=text, source="card"))
        for p in self.plan.after:
            text = self._tail_text(p, ctx)
            if text:
                out.after.append(ChatMessage(role=p.role, content=text))
        return out

    def build_parts(self, system: str, history: list[ChatMessage], injection: str, user_text: str,
                    now: Optional[datetime] = None, rng: Optional[_random.Random] = None
                    ) -> tuple[list[ChatMessage], list[DepthBlock], int]:
        """The first call's messages with this preset *before* the in-chat injections go in: ``(messages, depth,
        after)`` — system, the history, the final user message (injection + blank line + words), then the
        ``after`` segments (their count), each with its role; ``depth`` the preset's in-chat blocks of this beat
        (its depth prompts, the persona at depth, the card's Character's Note). The caller inserts ``depth``
        together with its own blocks (the Author's Note, @depth lore) in one :func:`insert_depth_injections` pass
        over the chat part (``messages[1:len(messages) - after]``), so that blocks of one depth and role become one
        message, as SillyTavern's ``populationInjectionPrompts`` joins them. ``history`` is not changed."""
        last_char = next((m.content for m in reversed(history) if m.role == "assistant"), "")
        t = self.tail(user_text=user_text, last_char_message=last_char, now=now, rng=rng)
        final = ChatMessage(role="user", content=f"{injection}\n\n{user_text}" if injection else user_text)
        return [ChatMessage(role="system", content=system), *history, final, *t.after], list(t.depth), len(t.after)

    def build_messages(self, system: str, history: list[ChatMessage], injection: str, user_text: str,
                       now: Optional[datetime] = None, rng: Optional[_random.Random] = None) -> list[ChatMessage]:
        """The first call's messages with this preset — the preset-aware twin of ``assemble.build_messages``:
        system, the history with depth injections, the final user message (injection + blank line + words),
        then the after segments, each with its role. ``history`` is not changed (:meth:`build_parts` in one)."""
        messages, depth, after = self.build_parts(system, history, injection, user_text, now=now, rng=rng)
        end = len(messages) - after
        return [messages[0], *insert_depth_injections(messages[1:end], depth), *messages[end:]]
