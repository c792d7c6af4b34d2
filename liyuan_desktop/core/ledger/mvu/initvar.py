"""``[InitVar]`` lorebook entries: a card's initial variable tree (JSON or YAML, usually in disabled entries), loaded,
macro-substituted and merged into the first snapshot.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Callable, Optional

from ...lenient_json import MAX_REPAIR_DEPTH, bracket_depth, repair_loads
from ...lore import Lorebook
from ...messages import message
from .paths import jsonable

_INITVAR = re.compile(r"\[initvar\]", re.IGNORECASE)


def _entries_of(src: Any) -> list[Any]:
    """Entries of a Card (its book), a Lorebook, a card-book / World Info dict, or a list of entries."""
    if src is None:
        return []
    if isinstance(src, list):
        return list(src)
    # a Card: read through its attribute, since importing Card here would make a cycle (cards.inspect imports mvu)
    lb = getattr(src, "lorebook", None)
    if isinstance(lb, Lorebook):
        return list(lb.entries)
    if isinstance(src, Lorebook):
        return list(src.entries)
    if isinstance(src, dict):
        entries = src.get("entries")
        if isinstance(entries, dict):
            entries = list(entries.values())
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    return []


def _title(e: Any) -> str:
    if isinstance(e, dict):
        return str(e.get("comment") or e.get("title") or e.get("name") or "")
    return str(getattr(e, "title", "") or getattr(e, "comment", "") or "")


def _content(e: Any) -> str:
    v = e.get("content") if isinstance(e, dict) else getattr(e, "content", "")
    return v if isinstance(v, str) else ""


def initvar_entries(book_or_card: Any) -> list[Any]:
    """Entries whose title/comment contains ``[InitVar]`` (any case), enabled or not, in book order."""
    return [e for e in _entries_of(book_or_card) if _INITVAR.search(_title(e))]


_FENCE_INFO = re.compile(r"```[\w-]*")


def _unwrap_body(text: str) -> str:
    """The data of an [InitVar] body: without a surrounding ``<initvar>…</initvar>`` and a code fence whose info
    word is followed by a line break (```` ```yaml ````). Hand-written (issue 29 §1): the patterns it replaces,
    ``\\n?\\s*</initvar>\\s*$`` and ``^```[\\w-]*\\s*\\n([\\s\\S]*?)\\n?```\\s*$``, were quadratic on a
    long run of spaces."""
    t = text.strip()
    if t[:9].lower() == "<initvar>":
        t = t[9:].lstrip()
    if t[-10:].lower() == "</initvar>":
        t = t[:-10].rstrip()
    t = t.strip()
    m = _FENCE_INFO.match(t)
    if m and len(t) >= m.end() + 3 and t.endswith("```"):
        k = m.end()
        while k < len(t) - 3 and t[k].isspace():
            k += 1
        nl = t.rfind("\n", m.end(), k)  # the body starts after the last line break following the info word
        if nl >= 0:
            t = t[nl + 1:len(t) - 3]
    return t.strip()


def _yaml(text: str) -> Any:
    try:  # imported on first use (issue 15: start-up); PyYAML is a declared dependency, JSON-only without it
        import yaml  # type: ignore[import-untyped]  # PyYAML ships no type hints (types-PyYAML is not installed)
    except ImportError:  # pragma: no cover - exercised only on a broken install
        raise ValueError("PyYAML not installed") from None
    if bracket_depth(text) > MAX_REPAIR_DEPTH:  # PyYAML recurses per flow bracket: refuse before it does
        raise ValueError(f"nested deeper than {MAX_REPAIR_DEPTH} levels")
    return yaml.safe_load(text)


def parse_data(text: str) -> Any:
    """An InitVar / JSONPatch body: YAML unless it starts with ``{``/``[``, then JSON, then json-repair, then YAML
    again (card-runtime.md §3.3). Raises ValueError when nothing parses."""
    t = _unwrap_body(text)
    if not t:
        raise ValueError(message("mvu.parse.empty"))
    tries: list[Callable[[str], Any]] = []
    if t[0] not in "{[":
        tries.append(_yaml)
    tries.append(json.loads)

    def repaired(s: str) -> Any:
        if s[0] not in "{[":
            raise ValueError("not JSON-like")
        return repair_loads(s)

    tries += [repaired, _yaml]
    last: Optional[Exception] = None
    for f in tries:
        try:
            return jsonable(f(t))
        except Exception as e:  # noqa: BLE001 - any parser failure moves to the next parser
            last = e
    raise ValueError(str(last) if last else message("mvu.parse.failed"))


def clean_meta(v: Any) -> Any:
    """Drop ``$meta`` objects and the ``"$__META_EXTENSIBLE__$"`` array marker (MVU turns them into ``schema``)."""
    if isinstance(v, dict):
        return {k: clean_meta(x) for k, x in v.items() if k != "$meta"}
    if isinstance(v, list):
        return [clean_meta(x) for x in v if x != "$__META_EXTENSIBLE__$"]
    return v


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``: objects merge key by key, anything else (arrays included) is
    replaced by ``over``'s value."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_initvars(book_or_card: Any, substitute: Optional[Callable[[str], str]] = None
                  ) -> tuple[Optional[dict[str, Any]], list[str]]:
    """Parse every InitVar entry and deep-merge them in book order (a later entry's value wins on the same key —
    several entries in one book are merged like MVU does). Returns (tree or None when the source has no InitVar
    entry, warnings). ``substitute`` runs macro substitution on each body first (MVU does; ``{{user}}`` …)."""
    entries = initvar_entries(book_or_card)
    if not entries:
        return None, []
    tree: dict[str, Any] = {}
    warnings: list[str] = []
    for e in entries:
        body = _content(e)
        if substitute is not None:
            body = substitute(body)
        try:
            data = parse_data(body)
        except ValueError as ex:
            why = " ".join(str(ex).split())  # YAML errors span lines; one line for the UI and the CLI
            warnings.append(message("mvu.initvar_entry_bad", title=_title(e), why=why[:200]))
            continue
        if not isinstance(data, dict):
            warnings.append(message("mvu.initvar_entry_not_object", title=_title(e)))
            continue
        tree = deep_merge(tree, clean_meta(data))
    return tree, warnings


def initial_tree(card: Any, substitute: Optional[Callable[[str], str]] = None) -> Optional[dict[str, Any]]:
    """The card's initial ``stat_data`` from its InitVar entries, or None when it has none."""
    return load_initvars(card, substitute)[0]


def merge_initial(existing: Optional[dict[str, Any]], *initials: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Across lorebooks MVU merges root keys shallowly and existing progress wins:
    ``{...bookA, ...bookB, ...existing}``. Use when a lorebook with InitVar is attached mid-chat."""
    out: dict[str, Any] = {}
    for t in initials:
        if t:
            out.update(copy.deepcopy(t))
    if existing:
        out.update(copy.deepcopy(existing))
    return out



def load_initvars_books(books: list[Any], substitute: Optional[Callable[[str], str]] = None
                        ) -> tuple[Optional[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """The initial tree from the ``[InitVar]`` entries of several books (Lorebook, card, dict …), in the order
    given — Liyuan's book order: the card's book, the chat's attached books, the global ones. Inside one book the
    entries deep-merge (:func:`load_initvars`); across books MVU merges root keys shallowly and what is already
    there wins (``stat_data = {...book, ...stat_data}`` per book, MagVarUpdate ``loadInitVarData``), so a root key
    keeps the value of the first book that has it. (MVU reads the selected global books before the card's; here
    the card comes first, so a global book can add root keys to a card's tree but never replace the card's.)
    Returns ``(tree or None when no book has an InitVar entry, [each book's own tree, in order, books without
    InitVar left out], warnings)``."""
    per_book: list[dict[str, Any]] = []
    warnings: list[str] = []
    for b in books:
        tree, warns = load_initvars(b, substitute)
        warnings += warns
        if tree is not None:
            per_book.append(tree)
    if not per_book:
        return None, [], warnings
    return merge_initial(None, *reversed(per_book)), per_book, warnings
