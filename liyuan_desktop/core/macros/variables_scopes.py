"""TavernHelper's variable scopes beside SillyTavern's chat and global variables (issue 27).

TavernHelper (``src/function/variables.ts``; design/card-runtime.md §2.2) keeps, besides the ``message`` snapshots and
SillyTavern's ``chat`` (``{{setvar}}``) and ``global`` tables, a ``character`` table stored in the card
(``data.extensions.tavern_helper.variables``) and a ``preset`` table stored in the preset (``extensions.tavern_helper
.variables``), and a ``script`` table per script frame (in memory). Liyuan never rewrites a card or a preset: what a
script or a bar writes to ``character`` / ``preset`` is kept per chat and per branch (``rp-state`` snapshots with
``frame_vars``, ``chat.ledger.BranchLedger.write_frame``), like the chat and global tables; until a chat writes one,
that scope reads the card's (preset's) own table. :func:`with_initial_scopes` is that rule.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

__all__ = ["TH_VARIABLE_SCOPES", "WRITABLE_SCOPES", "with_initial_scopes"]

#: every scope TavernHelper's ``getVariables({type})`` names
TH_VARIABLE_SCOPES = ("message", "chat", "character", "preset", "global", "script")
#: the scopes a chat persists when a frame or script writes them (``script`` lives in its frame only)
WRITABLE_SCOPES = ("message", "chat", "character", "preset", "global")


def with_initial_scopes(written: dict[str, dict[str, Any]], character: Optional[dict[str, Any]] = None,
                        preset: Optional[dict[str, Any]] = None) -> dict[str, dict[str, Any]]:
    """``written`` (``{scope: table}`` the chat wrote on its branch) with the ``character`` and ``preset`` scopes
    filled from the card's / preset's own tables (deep copies) where the chat never wrote them and the table is not
    empty. ``written`` is not changed; the result shares its tables."""
    out = dict(written)
    for scope, initial in (("character", character), ("preset", preset)):
        if scope not in out and isinstance(initial, dict) and initial:
            out[scope] = copy.deepcopy(initial)
    return out
