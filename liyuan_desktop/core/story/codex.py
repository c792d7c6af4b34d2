"""The codex you can write (issue 28): entries for people, places, things, story threads and lore, kept in
``名录.json`` in the chat folder.

The ledger's roster (``WorldState.roster``: the scribe's names per branch) and these entries are **one list**: the
codex the writing room shows (:meth:`core.chat.writing_room.WritingRoom.codex`) is every roster name *and* every
written entry, merged by name — an entry whose name, or one of whose aliases, is a roster name *is* that roster
name (one row, the entry's name canonical, the roster's kind unless the entry sets one). Writing an entry for a
roster name adds what the scribe cannot know (description, aliases, tags, relations, from which chapter it holds)
and never touches the ledger; the scribe's facts and first sight stay derived from the branch. The older alias list
``名录别名.json`` (issue 19) is still read and merged; setting aliases now writes them here.

Kinds: ``character`` (people), ``place``, ``item`` (things), ``event`` (a story thread, as the roster has it),
``lore`` (world rules, history, magic…). :func:`parse_kind` takes the English plurals and the Chinese names too.

Bounds (the file is hand-editable, so read like card data): at most :data:`MAX_ENTRIES` entries, a name of
:data:`NAME_MAX` characters, a description of :data:`DESCRIPTION_MAX`, :data:`LIST_MAX` aliases/tags/relations;
a file over :data:`FILE_MAX_BYTES` or not valid JSON reads as empty *and is never overwritten silently*:
:func:`save_codex` refuses to replace a file that did not load (``CodexDamaged``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field, ValidationError, field_validator

from ..deferred import DeferredModel
from ..fsutil import atomic_write_text
from ..messages import message
from .layout import side_file

#: The codex file in the chat folder.
CODEX_FILE = "名录.json"
FILE_MAX_BYTES = 8_000_000
MAX_ENTRIES = 5000
NAME_MAX = 100
DESCRIPTION_MAX = 20_000
LIST_MAX = 64

CodexKind = Literal["character", "place", "item", "event", "lore"]
KINDS: tuple[str, ...] = ("character", "place", "item", "event", "lore")
#: How each kind is said in Chinese (the CLI, the agent's block).
KIND_ZH: dict[str, str] = {"character": "人物", "place": "地点", "item": "物品", "event": "剧情线", "lore": "设定"}
_KIND_ALIASES: dict[str, str] = {
    **{k: k for k in KINDS}, **{v: k for k, v in KIND_ZH.items()},
    "people": "character", "person": "character", "characters": "character", "places": "place",
    "thing": "item", "things": "item", "items": "item", "events": "event", "thread": "event", "角色": "character",
    "物件": "item", "世界观": "lore", "背景": "lore",
}


class CodexError(ValueError):
    """A codex change refused: ``code`` (``exists``, ``not_found``, ``bad_args``, ``bad_kind``, ``damaged``); the
    exception's argument is the message (:mod:`core.messages` key ``codex.<code>``, rendered per language)."""

    def __init__(self, code: str, **params: Any):
        from ..messages import message

        super().__init__(message(f"codex.{code}", **params))
        self.code = code


def parse_kind(name: str) -> CodexKind:
    """The kind a spelling means (``people``/``character``/人物, ``places``/地点, ``things``/``item``/物品,
    ``event``/剧情线, ``lore``/设定). Raises CodexError ``bad_args``."""
    k = _KIND_ALIASES.get((name or "").strip().lower())
    if k is None:
        raise CodexError("bad_kind", kind=name)
    return k  # type: ignore[return-value]


def _clean_list(values: list[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        s = str(v).strip()[:NAME_MAX]
        if s and s not in out:
            out.append(s)
    return out[:LIST_MAX]


class Relation(DeferredModel):
    """A relation to another codex name: ``to`` (the name) and ``kind`` (free words: 师父, 恋人, located in…)."""

    to: str = Field(max_length=NAME_MAX)
    kind: str = Field(default="", max_length=NAME_MAX)


class CodexRecord(DeferredModel):
    """One written entry: ``name`` (canonical), ``kind``, ``description`` (free text), ``aliases`` (other names it
    is mentioned by), ``tags``, ``relations``, ``true_from`` (1-based chapter from which the description holds; None
    from the start — the agent is shown the entry only when writing that chapter or a later one)."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    kind: CodexKind = "character"
    description: str = Field(default="", max_length=DESCRIPTION_MAX)
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list, max_length=LIST_MAX)
    true_from: Optional[int] = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = v.strip()
        if not v or "\n" in v:
            raise ValueError(message("codex.bad_name"))
        return v

    @field_validator("aliases", "tags")
    @classmethod
    def _lists(cls, v: list[str]) -> list[str]:
        return _clean_list(v)

    def names(self) -> list[str]:
        """The name and its aliases."""
        return [self.name, *[a for a in self.aliases if a != self.name]]


class CodexBook(DeferredModel):
    """``名录.json``: ``entries`` in the order they were written."""

    version: int = 1
    entries: list[CodexRecord] = Field(default_factory=list, max_length=MAX_ENTRIES)

    def get(self, name: str) -> Optional[CodexRecord]:
        """The entry named ``name`` or having it as an alias, or None."""
        name = name.strip()
        return next((e for e in self.entries if e.name == name), None) or \
            next((e for e in self.entries if name in e.aliases), None)


def codex_path(chat_dir: Path) -> Path:
    """``<chat folder>/名录.json`` (``codex.json`` in the English layout, :func:`.layout.side_file`)."""
    return side_file(chat_dir, CODEX_FILE)


def load_codex(chat_dir: Path) -> tuple[CodexBook, bool]:
    """The chat's written codex and whether it loaded cleanly (a missing file: an empty book, True; a damaged, too
    big or invalid one: an empty book, False — see :func:`save_codex`)."""
    p = codex_path(chat_dir)
    if not p.exists():
        return CodexBook(), True
    try:
        if p.is_symlink() or p.stat().st_size > FILE_MAX_BYTES:
            return CodexBook(), False
        return CodexBook.model_validate(json.loads(p.read_text("utf-8"))), True
    except (OSError, ValueError, ValidationError):
        return CodexBook(), False


def save_codex(chat_dir: Path, book: CodexBook) -> None:
    """Write ``名录.json`` atomically. Raises CodexError ``damaged`` when the file there did not load (the user's
    text is not replaced by an empty book; fix or move it first), OSError."""
    if not load_codex(chat_dir)[1]:
        raise CodexError("damaged", file=codex_path(chat_dir).name)
    atomic_write_text(codex_path(chat_dir), json.dumps(book.model_dump(exclude_defaults=False), ensure_ascii=False,
                                                       indent=1))


def parse_relations(values: list[str]) -> list[Relation]:
    """Relations from ``名字`` or ``名字:关系`` strings (also ``：`` and ``=``), as the CLI takes them."""
    out = []
    for v in values:
        for sep in (":", "：", "="):
            if sep in v:
                to, _, kind = v.partition(sep)
                break
        else:
            to, kind = v, ""
        if to.strip():
            out.append(Relation(to=to.strip()[:NAME_MAX], kind=kind.strip()[:NAME_MAX]))
    return out[:LIST_MAX]


__all__ = ["CODEX_FILE", "CodexBook", "CodexError", "CodexKind", "CodexRecord", "KINDS", "KIND_ZH", "Relation",
           "codex_path", "load_codex", "parse_kind", "parse_relations", "save_codex"]
