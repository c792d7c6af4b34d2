"""What changed between two versions of a character card (issue 33 §4: card updates in running chats).

A chat plays the card it read; when the card in the library is replaced (re-import, the editor, ``liyuan card
set``) the chat shows this diff and offers to use the new version from the next beat or to keep the old one
(``Chat.card_update``, ``Chat.refresh_card``, ``Chat.keep_card``). SillyTavern has no such step: a chat silently plays
whatever the card file holds when the next message is sent.

:func:`card_update_diff` compares:

- ``fields``: the text fields (description, personality, scenario, mes_example, system_prompt,
  post_history_instructions, creator_notes, name, creator, character_version) and tags;
- ``greetings``: the first message and the alternate greetings (by position: ``first_mes``, ``alternate_greetings[i]``);
- ``entries``: the card's own world-book entries, matched by ``id`` (else ``uid``, else position); a changed entry
  names the keys that changed (content, keys, enabled, …);
- ``regex``: the card's regex scripts (``extensions.regex_scripts``), matched by ``id`` (else ``scriptName``);
- ``variables``: the MVU initial variable tree (``[InitVar]`` entries), leaf by leaf (``a.b.c``).

A library world book (a global one, or one linked to the card) replaced by a newer version is compared the same
way by :func:`book_update_diff` (``core/lore/book_update.py`` finds the chats that use it): ``entries`` matched by
``uid`` (World Info files) else ``id`` (card books), each changed entry naming the SillyTavern fields that changed
(``key``, ``content``, ``order``, ``position``, ``disable``, …), and ``settings``: the book's own keys other than
its entries (``scan_depth``, ``token_budget``, ``recursive_scanning``, ``extensions`` …). :func:`merge_book_picked`
takes single entries (or the settings: :func:`pick_key`) of the new version into the old one.
"""

from __future__ import annotations

import copy
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..ledger.mvu.initvar import initial_tree
from . import Card

TEXT_FIELDS = ("name", "description", "personality", "scenario", "mes_example", "system_prompt",
               "post_history_instructions", "creator_notes", "creator", "character_version", "tags")


class ItemChange(BaseModel):
    """One thing that differs: ``key`` (a field name, ``alternate_greetings[2]``, an entry's id, a script's id, a
    variable path), ``label`` (an entry's comment / a script's name, for people), ``kind`` added | removed | changed,
    ``old``/``new`` (None when absent), ``parts``: for a changed entry or script, the keys that changed."""

    key: str
    label: str = ""
    kind: Literal["added", "removed", "changed"]
    old: Any = None
    new: Any = None
    parts: list[str] = Field(default_factory=list)


class CardDiff(BaseModel):
    """The differences between two versions of a card, per area (module doc); every list empty = the same."""

    fields: list[ItemChange] = Field(default_factory=list)
    greetings: list[ItemChange] = Field(default_factory=list)
    entries: list[ItemChange] = Field(default_factory=list)
    regex: list[ItemChange] = Field(default_factory=list)
    variables: list[ItemChange] = Field(default_factory=list)

    def empty(self) -> bool:
        """True when nothing differs."""
        return not (self.fields or self.greetings or self.entries or self.regex or self.variables)

    def counts(self) -> dict[str, int]:
        """``{area: number of changes}`` of the areas that changed."""
        return {a: len(getattr(self, a)) for a in ("fields", "greetings", "entries", "regex", "variables")
                if getattr(self, a)}


def _change(key: str, old: Any, new: Any, label: str = "", parts: Optional[list[str]] = None) -> Optional[ItemChange]:
    if old == new:
        return None
    kind: Literal["added", "removed", "changed"] = "added" if old is None else "removed" if new is None else "changed"
    return ItemChange(key=key, label=label, kind=kind, old=old, new=new, parts=parts or [])


def _by_position(prefix: str, old: list[Any], new: list[Any]) -> list[ItemChange]:
    out = []
    for i in range(max(len(old), len(new))):
        c = _change(f"{prefix}[{i}]", old[i] if i < len(old) else None, new[i] if i < len(new) else None)
        if c is not None:
            out.append(c)
    return out


def _keyed(items: list[Any], ids: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            continue
        key = next((str(it[k]) for k in ids if it.get(k) not in (None, "")), f"#{i}")
        out.setdefault(key, it)
    return out


def _matched(old: list[Any], new: list[Any], ids: tuple[str, ...], label_keys: tuple[str, ...]) -> list[ItemChange]:
    a, b = _keyed(old, ids), _keyed(new, ids)
    out = []
    for key in [*a, *(k for k in b if k not in a)]:
        x, y = a.get(key), b.get(key)
        some = y if y is not None else x or {}
        label = next((str(some[k]) for k in label_keys if some.get(k)), "")
        parts = sorted(k for k in set(x or {}) | set(y or {}) if (x or {}).get(k) != (y or {}).get(k)) if x and y else []
        c = _change(key, x, y, label, parts)
        if c is not None:
            out.append(c)
    return out


def _leaves(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _leaves(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif prefix:
        out[prefix] = value
    return out


def _entries(card: Card) -> list[Any]:
    book = card.character_book or {}
    entries = book.get("entries") if isinstance(book, dict) else None
    if isinstance(entries, dict):  # SillyTavern's world-info file shape {uid: entry}
        return list(entries.values())
    return list(entries) if isinstance(entries, list) else []


def _scripts(card: Card) -> list[Any]:
    s = card.extensions.get("regex_scripts")
    return list(s) if isinstance(s, list) else []


def card_update_diff(old: Card, new: Card) -> CardDiff:
    """What changed from ``old`` to ``new`` (module doc). Pure; never raises for odd card content (an initial
    variable tree that does not parse counts as none)."""
    fields = [c for f in TEXT_FIELDS if (c := _change(f, getattr(old, f), getattr(new, f))) is not None]
    greetings = [c for c in [_change("first_mes", old.first_mes, new.first_mes)] if c is not None]
    greetings += _by_position("alternate_greetings", old.alternate_greetings, new.alternate_greetings)
    entries = _matched(_entries(old), _entries(new), ("id", "uid"), ("comment", "keys"))
    regex = _matched(_scripts(old), _scripts(new), ("id", "scriptName"), ("scriptName",))
    try:
        a, b = initial_tree(old) or {}, initial_tree(new) or {}
    except Exception:  # noqa: BLE001 - a broken [InitVar] entry: the chat reports it when it loads the card
        a, b = {}, {}
    la, lb = _leaves(a, "", {}), _leaves(b, "", {})
    variables = [c for k in [*la, *(k for k in lb if k not in la)] if (c := _change(k, la.get(k), lb.get(k))) is not None]
    return CardDiff(fields=fields, greetings=greetings, entries=entries, regex=regex, variables=variables)


def pick_key(area: str, change: ItemChange) -> str:
    """The key that names one change for :func:`merge_picked` / :func:`merge_book_picked`: ``area:key``
    (``greetings`` is one pick for all greetings, ``settings`` for all of a book's settings; ``variables`` are
    picked through their ``[InitVar]`` entry)."""
    return area if area in ("greetings", "settings") else f"{area}:{change.key}"


def _data(doc: dict[str, Any]) -> dict[str, Any]:
    d = doc.get("data")
    return d if isinstance(d, dict) else doc


def _dict_at(d: dict[str, Any], key: str) -> dict[str, Any]:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _list_at(d: dict[str, Any], key: str) -> list[Any]:
    v = d.get(key)
    return v if isinstance(v, list) else []


def _swap_item(items: list[Any], new_items: list[Any], key: str, ids: tuple[str, ...]) -> None:
    a, b = _keyed(items, ids), _keyed(new_items, ids)
    old, new = a.get(key), b.get(key)
    at = next((i for i, it in enumerate(items) if it is old), None) if old is not None else None
    if new is None and at is not None:
        del items[at]
    elif new is not None and at is None:
        items.append(copy.deepcopy(new))
    elif new is not None and at is not None:
        items[at] = copy.deepcopy(new)


def merge_picked(old: Card, new: Card, picks: list[str]) -> dict[str, Any]:
    """The card JSON of ``old`` with only the ``picks`` (:func:`pick_key`) taken from ``new``: a field's new value,
    all greetings, a book entry or a regex script added / removed / replaced. What SillyTavern cannot do: take part
    of an update. Returns a new document (``old.raw`` untouched)."""
    doc = copy.deepcopy(old.raw) if isinstance(old.raw, dict) else {}
    d = _data(doc)
    for pick in picks:
        area, _, key = pick.partition(":")
        if area == "fields" and key in TEXT_FIELDS:
            d[key] = copy.deepcopy(getattr(new, key))
        elif area == "greetings":
            d["first_mes"], d["alternate_greetings"] = new.first_mes, list(new.alternate_greetings)
        elif area == "entries":
            book = _dict_at(d, "character_book")
            entries = _list_at(book, "entries")
            _swap_item(entries, _entries(new), key, ("id", "uid"))
            d["character_book"] = {**book, "entries": entries}
        elif area == "regex":
            ext = _dict_at(d, "extensions")
            scripts = _list_at(ext, "regex_scripts")
            _swap_item(scripts, _scripts(new), key, ("id", "scriptName"))
            d["extensions"] = {**ext, "regex_scripts": scripts}
    return doc


# -- library world books (issue 33: book updates in running chats) ---------------------------------------------
#: Keys that only say where an entry sits in SillyTavern's editor list: a change of them alone is no change.
BOOK_NOISE = ("displayIndex",)
BOOK_IDS = ("uid", "id")


class BookDiff(BaseModel):
    """The differences between two versions of a world book: ``entries`` (matched by ``uid`` else ``id`` else
    position; ``parts`` names the entry fields that changed) and ``settings`` (the book's keys beside its entries,
    one change per key). Every list empty = the same."""

    entries: list[ItemChange] = Field(default_factory=list)
    settings: list[ItemChange] = Field(default_factory=list)

    def empty(self) -> bool:
        """True when nothing differs."""
        return not (self.entries or self.settings)

    def counts(self) -> dict[str, int]:
        """``{area: number of changes}`` of the areas that changed (``entries``, ``settings``)."""
        return {a: len(getattr(self, a)) for a in ("entries", "settings") if getattr(self, a)}


def book_body(obj: Any) -> dict[str, Any]:
    """The part of a world-book JSON that holds ``entries`` (a ``lorebook_v3`` export's ``data``, else the object
    itself); {} for something that is no object."""
    if not isinstance(obj, dict):
        return {}
    data = obj.get("data")
    return data if obj.get("spec") == "lorebook_v3" and isinstance(data, dict) else obj


def book_entries(obj: Any) -> list[Any]:
    """The entries of a world-book JSON in file order (World Info's ``{uid: entry}`` object or a card book's list)."""
    entries = book_body(obj).get("entries")
    if isinstance(entries, dict):
        return list(entries.values())
    return list(entries) if isinstance(entries, list) else []


def _quiet(entries: list[Any]) -> list[Any]:
    return [{k: v for k, v in e.items() if k not in BOOK_NOISE} if isinstance(e, dict) else e for e in entries]


def book_update_diff(old: Any, new: Any) -> BookDiff:
    """What changed from the world-book JSON ``old`` to ``new`` (World Info file, card book or ``lorebook_v3``
    export; :class:`BookDiff`). Pure; anything that is no book compares as an empty one."""
    entries = _matched(_quiet(book_entries(old)), _quiet(book_entries(new)), BOOK_IDS, ("comment", "key", "keys"))
    a = {k: v for k, v in book_body(old).items() if k != "entries"}
    b = {k: v for k, v in book_body(new).items() if k != "entries"}
    settings = [c for k in [*a, *(k for k in b if k not in a)] if (c := _change(k, a.get(k), b.get(k))) is not None]
    return BookDiff(entries=entries, settings=settings)


def merge_book_picked(old: Any, new: Any, picks: list[str]) -> dict[str, Any]:
    """The world-book JSON ``old`` with only ``picks`` (:func:`pick_key`) taken from ``new``: an entry added,
    removed or replaced (World Info's ``{uid: entry}`` object keeps its keys; a new entry goes under its ``uid``),
    or every setting. Returns a new document (``old`` untouched)."""
    doc = copy.deepcopy(old) if isinstance(old, dict) else {"entries": {}}
    body, nbody = book_body(doc), book_body(new)
    entries = body.get("entries")
    for pick in picks:
        area, _, key = pick.partition(":")
        if area == "settings":
            for k in [k for k in body if k != "entries"]:
                if k not in nbody:
                    del body[k]
            body.update({k: copy.deepcopy(v) for k, v in nbody.items() if k != "entries"})
        elif area == "entries" and isinstance(entries, list):
            _swap_item(entries, book_entries(new), key, BOOK_IDS)
        elif area == "entries" and isinstance(entries, dict):
            items = list(entries.values())
            was = _keyed(items, BOOK_IDS).get(key)
            slot = next((k for k, v in entries.items() if v is was), None)
            now = _keyed(book_entries(new), BOOK_IDS).get(key)
            if now is None and slot is not None:
                del entries[slot]
            elif now is not None:
                entries[slot if slot is not None else str(now.get("uid", key))] = copy.deepcopy(now)
    return doc


__all__ = ["BOOK_NOISE", "BookDiff", "CardDiff", "ItemChange", "TEXT_FIELDS", "book_body", "book_entries",
           "book_update_diff", "card_update_diff", "merge_book_picked", "merge_picked", "pick_key"]
