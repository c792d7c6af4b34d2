"""Variables set by a greeting (issue 13 §2): MVU gives message 0 one snapshot per greeting swipe.

What MagVarUpdate does (``src/function/initvar/variable_init.ts``, ``initCheck``; design/card-runtime.md §3.3), for
each swipe of message 0 (the first message and every alternate greeting):

1. it starts from the initial tree of the [InitVar] entries of the books;
2. when the greeting has ``<initvar>…</initvar>`` blocks (a fence inside is allowed), their contents, deep-merged,
   *replace* the tree — the card's own book is considered done, and the other books' [InitVar] trees are merged in
   again under it (root keys, what is there wins);
3. then the commands in the greeting text run (``updateVariables(swipe)``: ``<UpdateVariable>`` blocks, the classic
   ``_.set(…)`` calls and ``<JSONPatch>`` arrays), giving that swipe's snapshot.

The blocks are hidden from display and from the prompt by :func:`strip_variable_blocks` (cards ship a regex for
that; here it happens whether or not the card's scripts may run).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Optional

from ...messages import message
from .apply import apply_ops
from .commands import parse_update_blocks
from .initvar import clean_meta, deep_merge, merge_initial, parse_data
from .state import MvuState

_INITVAR_OPEN = re.compile(r"<initvar>", re.IGNORECASE)
_HIDDEN_OPEN = re.compile(r"<(UpdateVariable|initvar|json_?patch|Variable(?:Insert|Edit|Delete|Think))>", re.IGNORECASE)


def _close_of(text: str, name: str, pos: int) -> Optional[re.Match[str]]:
    """The first ``</name>`` (any case) at or after ``pos``."""
    return re.compile("</" + re.escape(name) + ">", re.IGNORECASE).search(text, pos)


def _initvar_bodies(text: str) -> list[str]:
    """The bodies of the closed ``<initvar>…</initvar>`` blocks in ``text``, in order (each open tag paired with the
    first close after it). Literal searches, linear: once an open tag has no close after it, no later one has."""
    out: list[str] = []
    pos = 0
    while (m := _INITVAR_OPEN.search(text, pos)) is not None:
        c = _close_of(text, "initvar", m.end())
        if c is None:
            break
        out.append(text[m.end():c.start()])
        pos = c.end()
    return out


def strip_variable_blocks(text: str) -> str:
    """``text`` without ``<UpdateVariable>``, ``<JSONPatch>`` and ``<initvar>`` blocks (an unclosed trailing one
    runs to the end) and the whitespace before each, trailing whitespace trimmed when something was removed.
    Literal searches, linear (issue 29 §1: ``\\s*<(…)>[\\s\\S]*?`` was quadratic on a long run of spaces)."""
    text = text or ""
    out: list[str] = []
    pos = 0
    while (m := _HIDDEN_OPEN.search(text, pos)) is not None:
        start = m.start()
        while start > pos and text[start - 1].isspace():
            start -= 1
        out.append(text[pos:start])
        c = _close_of(text, m.group(1), m.end())
        pos = len(text) if c is None else c.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out).rstrip()


class GreetingVars(NamedTuple):
    """What :func:`greeting_variables` found: ``text`` as shown and sent (blocks removed), ``state`` the swipe's
    snapshot (None when the greeting sets nothing: the initial tree applies), ``warnings`` (Chinese)."""

    text: str
    state: Optional[MvuState]
    warnings: list[str]


def greeting_variables(text: str, initial: Optional[dict[str, Any]], other_books: list[dict[str, Any]]
                       ) -> GreetingVars:
    """The snapshot one greeting gives its swipe (module doc). ``text``: the greeting with macros applied;
    ``initial``: the merged [InitVar] tree of all books (None without one); ``other_books``: the [InitVar] trees of
    the books other than the card's, in book order (merged under an ``<initvar>`` override)."""
    warnings: list[str] = []
    override: Optional[dict[str, Any]] = None
    for body in _initvar_bodies(text or ""):
        try:
            data = parse_data(body)
        except ValueError as e:
            warnings.append(message("mvu.initvar_greeting_bad", why=" ".join(str(e).split())[:200]))
            continue
        if not isinstance(data, dict):
            warnings.append(message("mvu.initvar_greeting_not_object"))
            continue
        override = deep_merge(override or {}, clean_meta(data))
    ops = parse_update_blocks(text or "")
    shown = strip_variable_blocks(text or "")
    if override is None and not ops:
        return GreetingVars(shown, None, warnings)
    tree = merge_initial(override, *reversed(other_books)) if override is not None else initial
    if tree is None:  # commands without any tree: MVU starts from an empty stat_data
        tree = {}
    state = MvuState.initial(tree)
    if ops:
        result = apply_ops(state, ops)
        state = result.state
        warnings += [f"[MVU] 开场白：{w}" for w in result.warnings]
    return GreetingVars(shown, state, warnings)
