"""The one macro engine: SillyTavern-style macros (``{{char}}``, ``{{user}}``, ``{{random::a::b}}`` …).

Every text that carries macros goes through :func:`apply_macros` and nothing else: card fields and greetings
(``prompt.assemble``), world-info keys and content (``lore.lorebook`` via the chat's ``substitute``), preset prompts
(``prompt.presets.prompter``), regex-script find/replace/trim strings (``cards.regex_scripts``), the persona
description (``cards.personas``), MVU ``[InitVar]`` bodies and the agent rules. Package layout: ``context``
(:class:`MacroContext`, limits), ``engine`` (parser and evaluation), ``segments`` (argument splitting),
``variables`` (the variable macros), ``moment`` (date formats), ``tavernhelper`` (TavernHelper's variable macros),
``ejs`` (ST-Prompt-Template's EJS templates, evaluated after the macros when ``ctx.ejs`` is set).

Reference: ../shared/design/cards.md §4 (SillyTavern's legacy engine ``evaluateMacros``/``substituteParams`` and
``replaceVariableMacros``; the 2025 "experimental" engine for nesting).

**How text is read.** A real parser, not a chain of regex substitutions: ``{{`` opens a macro, ``}}`` closes the
innermost open one, and macros nest with the inner one evaluated first (as SillyTavern's 2025 engine does), so
``{{random::{{user}}::{{char}}}}`` works and never leaves stray braces. In a run of three or more braces the two
nearest the name belong to the macro (``{{{char}}}`` → ``{Alice}``, as the legacy regexes matched). A ``}}`` with no
open macro and an ``{{`` that is never closed are plain text. **Unknown macros are kept exactly as written**
(braces, name, whitespace), e.g. TavernHelper's ``{{get_message_variable::stat_data.x}}`` reaches the layer that
understands it; known macros *inside* an unknown one are still expanded. Comments ``{{// … }}`` are dropped with
everything inside them, unevaluated (they may span lines and contain macros). The result of an inner macro is one
unit for its outer macro: a ``::`` or ``,`` that came from a value never splits the outer macro's arguments.

**Names** are case-insensitive; whitespace just inside the braces is ignored (``{{ char }}``).

**Supported macros** (SillyTavern's names and results):

* names: ``{{char}}``, ``{{user}}``, ``{{group}}``/``{{charIfNotGroup}}`` (= char, no group chats),
  ``{{notChar}}`` (= user); legacy tags ``<USER>``, ``<BOT>``, ``<CHAR>``, ``<CHARIFNOTGROUP>``, ``<GROUP>`` in any
  letter case (so ``<user>``/``<char>`` too).
* card and persona fields: ``{{description}}``, ``{{personality}}``, ``{{scenario}}``, ``{{persona}}`` (persona
  description), ``{{mesExamples}}``/``{{mesExamplesRaw}}``, ``{{charPrompt}}`` (card system prompt),
  ``{{charJailbreak}}``/``{{charInstruction}}`` (post-history instructions), ``{{charVersion}}``/``{{char_version}}``,
  ``{{charDescription}}``/``{{charPersonality}}`` (not SillyTavern names; kept because Liyuan's presets took them),
  ``{{model}}``, ``{{input}}``, ``{{original}}`` (only when ``ctx.original`` is set; the first occurrence expands,
  later ones are empty, as in SillyTavern). Field values are themselves macro-expanded (so ``{{char}}`` inside the
  description resolves, as SillyTavern's ordering achieves), up to :data:`MAX_FIELD_DEPTH` levels.
* chat: ``{{lastMessage}}``, ``{{lastUserMessage}}``, ``{{lastCharMessage}}``, ``{{lastMessageId}}``.
* randomness: ``{{random::a::b}}`` / ``{{random:a,b}}``, ``{{pick::a::b}}``, ``{{roll:d20}}`` / ``{{roll 2d6+1}}``
  / ``{{roll 20}}`` (bare number = 1dN; an invalid formula gives ``''``). List rule (SillyTavern): after the name
  come ``:`` or ``::``; if the list contains ``::`` it is split on ``::`` and items are kept as written, otherwise it
  is split on ``,`` with ``\\,`` for a literal comma and each item trimmed (so ``{{random::a,b}}`` is the comma
  form too).
* variables: ``{{getvar::x}}``, ``{{setvar::x::v}}`` (→ ``''``), ``{{addvar::x::n}}`` (→ ``''``),
  ``{{incvar::x}}``/``{{decvar::x}}`` (→ the new value), and the same with ``globalvar`` — backed by
  ``ctx.variables`` (chat-local) and ``ctx.global_variables`` (global), which are mutated **in place** (the dicts
  passed in are the ones written; persist them yourself). Values that look numeric come back as numbers
  (``"007"`` → ``7``), a missing variable is ``''``; ``addvar`` adds numbers, appends to a JSON array, otherwise
  concatenates strings (SillyTavern's ``addLocalVariable``).
* time (clock ``ctx.clock``, default the local time now; moment.js English formats): ``{{time}}`` (``3:07 PM``),
  ``{{date}}`` (``October 18, 2024``), ``{{weekday}}`` (``Friday``), ``{{isotime}}`` (``15:07``), ``{{isodate}}``
  (``2024-10-18``), ``{{datetimeformat YYYY-MM-DD HH:mm}}``, ``{{time_UTC+2}}``.
* text: ``{{newline}}``, ``{{trim}}`` (removes itself and the newlines around it — only newlines, as SillyTavern),
  ``{{noop}}``, ``{{// comment}}``, ``{{reverse:text}}``, ``{{banned "word"}}`` (→ ``''``; bans are a
  text-completion feature).

**Volatile macros** (:data:`VOLATILE_MACROS`): their value can differ between two evaluations of the same text in
the same chat — the clock macros, ``lastMessage``-family, ``input``, the variable macros (chat state and side
effects), and ``random``/``roll``. Text meant to stay byte-stable (the system prompt, for prefix caching) should
avoid them or pin them: ``ctx.clock`` can be frozen, and ``random``/``roll`` are **deterministic by default**:
with ``ctx.rng_seed`` an int (default ``0``) each occurrence is seeded by (seed, chat id, the text, its position),
so the same text in the same chat always rolls the same (a deliberate divergence from SillyTavern, whose
``{{random}}`` re-rolls on every evaluation; change the seed to re-roll, e.g. per swipe; ``rng_seed=None`` gives
SillyTavern's fresh rolls; ``ctx.rng`` supplies a generator of your own). ``{{pick}}`` is stable per chat exactly
as SillyTavern's (seeded by chat id, text and
position, ignoring ``rng_seed``) and is not volatile.
"""

from __future__ import annotations

from typing import Callable, Optional

from .context import MAX_FIELD_DEPTH, VOLATILE_MACROS, MacroContext
from .engine import NAME_SCAN, expand
from .moment import format_moment

__all__ = ["MacroContext", "apply_macros", "volatile_macros", "VOLATILE_MACROS", "MAX_FIELD_DEPTH",
           "format_moment"]


def apply_macros(text: str, ctx: MacroContext, *, escape: Optional[Callable[[str], str]] = None) -> str:
    """Expand the macros in ``text`` with the values in ``ctx``; unknown macros are left exactly as written.

    ``escape`` (optional) is applied to every value a known macro puts into ``text`` at the top level (not to the
    surrounding text, not to values consumed by an outer macro) — SillyTavern's ``substituteParamsExtended`` post
    processor, used to escape macro values inside a regex pattern. Never raises on malformed input; variable
    macros mutate ``ctx.variables``/``ctx.global_variables``. With ``ctx.ejs`` (and no ``escape``), EJS templates
    left after the macros are evaluated (:mod:`.ejs`; a failing one gives ``''`` and a notice there).
    """
    if not text:
        return text
    if "{{" not in text and "<" not in text:
        return text
    out = expand(text, ctx, escape)
    if ctx.ejs is not None and escape is None and "<%" in out:  # ST-Prompt-Template: after the macros (ejs.py)
        out = ctx.ejs.render(out, source=text)
    return out


def volatile_macros(text: str) -> set[str]:
    """Lower-case names of the :data:`VOLATILE_MACROS` that occur in ``text`` (a quick scan, nothing evaluated).

    Use it to warn when text that must stay byte-stable (a system prompt) depends on the clock, chat state or
    fresh randomness.
    """
    found: set[str] = set()
    for m in NAME_SCAN.finditer(text or ""):
        name = m.group(1).lower()
        if name.startswith("time_utc"):
            name = "time_utc"
        if name in VOLATILE_MACROS:
            found.add(name)
    return found
