"""The values the one macro engine expands to (:class:`MacroContext`) and the engine's limits.
Part of :mod:`liyuan_desktop.core.macros`."""

from __future__ import annotations

import random as _random
from datetime import datetime
from typing import Annotated, Any, Callable, Optional

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

__all__ = ["MacroContext", "VOLATILE_MACROS", "MAX_FIELD_DEPTH", "MAX_DICE"]

#: Lower-case names of the macros whose value can change between evaluations of the same text in one chat.
VOLATILE_MACROS: frozenset[str] = frozenset({
    "random", "roll",
    "time", "date", "weekday", "isotime", "isodate", "datetimeformat", "time_utc",
    "lastmessage", "lastusermessage", "lastcharmessage", "lastmessageid", "input",
    "getvar", "setvar", "addvar", "incvar", "decvar",
    "getglobalvar", "setglobalvar", "addglobalvar", "incglobalvar", "decglobalvar",
})

#: How deep card-field macros (``{{description}}`` …) are expanded inside each other before values go in verbatim.
MAX_FIELD_DEPTH = 4

#: Cap on the dice of one ``{{roll}}`` (a larger count is an invalid formula), so a card cannot stall the app.
MAX_DICE = 10_000


def _same_dict(value: Any) -> dict[str, Any]:
    """Keep the caller's dict object (so variable macros write into it); other mappings are copied."""
    if isinstance(value, dict):
        return value
    return dict(value or {})


class MacroContext(BaseModel):
    """Everything the macros expand to. Every field has a default, so ``MacroContext(char=…, user=…)`` works.

    Names: ``char`` (card name), ``user`` (persona name). Card fields: ``description``, ``personality``,
    ``scenario``, ``mes_examples``, ``char_prompt`` (card system prompt), ``char_instruction`` (post-history
    instructions), ``char_version``. ``persona``: the persona description. ``model``: model name. ``input``: the
    user's unsent input. ``original``: text for ``{{original}}`` (``None`` = the macro is unknown and kept).
    Chat: ``last_message``, ``last_user_message``, ``last_char_message``, ``last_message_id`` (``None`` → ``''``).
    ``variables`` (chat-local) / ``global_variables``: mutated in place by ``setvar``/``addvar``/``incvar``/``decvar``.
    ``chat_id``: seeds ``{{pick}}`` (and ``{{random}}``/``{{roll}}`` with ``rng_seed``). ``clock``: zero-argument
    callable returning the current ``datetime`` (naive = local time; default ``datetime.now``). ``rng_seed``: int →
    ``{{random}}``/``{{roll}}`` deterministic per chat, text and position; ``None`` → fresh randomness. ``rng``: a
    ``random.Random`` that ``{{random}}``/``{{roll}}`` draw from instead (overrides ``rng_seed``; tests and
    per-beat tails that want a reproducible stream). ``th_variables``: ``scope -> dict | None`` for TavernHelper's
    ``{{get_message_variable::path}}`` family (scope ``message``/``chat``/``character``/``preset``/``global``;
    :mod:`.tavernhelper`); ``None`` keeps those macros as written. ``th_only``: expand nothing but those (the
    display pass, :func:`.tavernhelper.apply_th_macros`). ``ejs``: the chat's :class:`.ejs.TemplateEnv`
    (shared by the copies of a context) — with it, text that still holds an EJS tag after its macros is evaluated
    as an ST-Prompt-Template template; ``None`` leaves tags as written. ``clock``, ``rng``, ``th_variables`` and
    ``ejs`` are not serialised.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    char: str = ""
    user: str = ""
    description: str = ""
    personality: str = ""
    scenario: str = ""
    persona: str = ""
    mes_examples: str = ""
    char_prompt: str = ""
    char_instruction: str = ""
    char_version: str = ""
    model: str = ""
    input: str = ""
    original: Optional[str] = None
    last_message: str = ""
    last_user_message: str = ""
    last_char_message: str = ""
    last_message_id: Optional[int] = None
    variables: Annotated[dict[str, Any], PlainValidator(_same_dict)] = Field(default_factory=dict)
    global_variables: Annotated[dict[str, Any], PlainValidator(_same_dict)] = Field(default_factory=dict)
    chat_id: str = ""
    clock: Optional[Callable[[], datetime]] = Field(default=None, exclude=True)
    rng_seed: Optional[int] = 0
    rng: Optional[_random.Random] = Field(default=None, exclude=True)
    th_variables: Optional[Callable[[str], Any]] = Field(default=None, exclude=True)
    th_only: bool = False
    ejs: Optional[Any] = Field(default=None, exclude=True)

