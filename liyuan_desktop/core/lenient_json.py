"""Broken JSON from a model or a card, mended within bounds (issue 29 §1).

The ``json_repair`` library mends what models write (a missing brace, a trailing comma, single quotes), but it
recurses once per open bracket and spends a fraction of a millisecond per character of nesting: 30,000 ``{`` or
``(`` take about ten seconds, a megabyte minutes, and a deep enough text ends in RecursionError. Every caller that
mends JSON it did not write goes through :func:`repair_loads`, which refuses — before json_repair sees it — a text
longer than :data:`MAX_REPAIR_CHARS` or nested deeper than :data:`MAX_REPAIR_DEPTH`. Strict JSON (``json.loads``,
linear) is the callers' first try and has neither limit.
"""

from __future__ import annotations

from typing import Any

#: The longest text json_repair is asked to mend (characters). A scribe patch, a review, an MVU value or a cut
#: tool call is a few kilobytes; a card's [InitVar] block rarely more than tens.
MAX_REPAIR_CHARS = 100_000
#: The deepest nesting of ``{`` ``[`` ``(`` json_repair is asked to mend (real state is a few levels deep).
MAX_REPAIR_DEPTH = 64


class RepairRefused(ValueError):
    """A text :func:`repair_loads` will not hand to json_repair: too long or nested too deeply."""


def bracket_depth(text: str, limit: int = MAX_REPAIR_DEPTH) -> int:
    """The deepest nesting of ``{``/``[``/``(`` in ``text`` (closers counted regardless of kind and of quotes,
    never below zero); stops counting once ``limit`` is passed and returns ``limit + 1``. Linear."""
    depth = top = 0
    for ch in text:
        if ch in "{[(":
            depth += 1
            if depth > top:
                top = depth
                if top > limit:
                    return limit + 1
        elif ch in "}])" and depth:
            depth -= 1
    return top


def repair_loads(text: str) -> Any:
    """``json_repair.loads(text)``, refused when ``text`` is longer than :data:`MAX_REPAIR_CHARS` or nested deeper
    than :data:`MAX_REPAIR_DEPTH` (raises :class:`RepairRefused`, a ValueError). Anything json_repair itself raises
    passes through (callers treat it as "not usable")."""
    if len(text) > MAX_REPAIR_CHARS:
        raise RepairRefused(f"text too long to mend as JSON ({len(text)} > {MAX_REPAIR_CHARS} characters)")
    if bracket_depth(text) > MAX_REPAIR_DEPTH:
        raise RepairRefused(f"text nested too deeply to mend as JSON (> {MAX_REPAIR_DEPTH} levels)")
    import json_repair  # on first use (issue 15: start-up)

    return json_repair.loads(text)


def fenced_body(text: str) -> str | None:
    """The body of the first fenced block in ``text`` (a ```` ``` ```` or ```` ```json ```` fence up to the next
    ```` ``` ````), stripped; None when there is no closed fence. A literal scan, linear — it replaces
    ``re.search(r"```(?:json)?\\s*([\\s\\S]*?)```", text)``, which is quadratic on a fence followed by a long run of
    spaces with no closing fence, and finds the same block."""
    start = text.find("```")
    if start < 0:
        return None
    end = text.find("```", start + 3)
    if end < 0:
        return None
    body = text[start + 3:end]
    if body.startswith("json"):
        body = body[4:]
    return body.strip()
