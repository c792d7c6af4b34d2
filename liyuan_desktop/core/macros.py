"""Macro evaluation ({{char}}, {{user}} …) for card text.

Minimal set for the engine (issue 2): ``{{char}}``, ``{{user}}``, ``<USER>``/``<BOT>`` (V1 cards), ``{{newline}}``,
``{{trim}}`` and ``{{// comment}}``. Names are matched case-insensitively as SillyTavern does. Volatile macros
(``{{random}}``, ``{{time}}``) are deliberately not expanded in the system prompt, which must stay byte-stable for
prefix caching (../shared/design/lessons.md); the full table comes with card import (issue 4).
"""

from __future__ import annotations

import re

from pydantic import BaseModel


class MacroContext(BaseModel):
    """Values the macros expand to: ``char`` (card name) and ``user`` (persona name)."""

    char: str = ""
    user: str = ""


_MACRO = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def apply_macros(text: str, ctx: MacroContext) -> str:
    """Expand the known macros in ``text``; unknown macros are left as written."""
    if not text:
        return text
    text = text.replace("<USER>", ctx.user).replace("<BOT>", ctx.char)

    def sub(m: re.Match[str]) -> str:
        body = m.group(1)
        key = body.lower()
        if key == "char":
            return ctx.char
        if key == "user":
            return ctx.user
        if key == "newline":
            return "\n"
        if key.startswith("//"):
            return ""
        return m.group(0)

    out = _MACRO.sub(sub, text)
    if "{{trim}}" in out.lower():
        out = re.sub(r"\s*\{\{trim\}\}\s*", "", out, flags=re.IGNORECASE)
    return out
