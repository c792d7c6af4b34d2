"""Personas (用户人设): who the user plays — a name, a description and where that description goes in the prompt.

Storage: ``<home>/personas.json`` (written atomically: temp file + fsync + rename)::

    {"version": 1,
     "personas": [{"id": "…", "name": "旅人", "description": "…", "position": "in_prompt", "depth": 2,
                   "role": "system", …unknown keys kept…}],
     "default": "<persona id or null>",
     "chats": {"cards/青梧/对话/局A": "<persona id>"}}

``chats`` maps a chat (its folder relative to the data folder, ``/``-separated; see :func:`chat_key`) to the persona
chosen for it. :meth:`PersonaStore.for_chat` resolves a chat's persona: its own choice, else the default persona,
else None (the caller falls back to the card's suggestion / 「你」 as today).

SillyTavern behaviour matched (``public/scripts/personas.js``, ``power-user.js``):

- ``{{persona}}`` is the persona's *description* (whatever its position); ``{{user}}`` is its name.
- ``persona_description_position``: 0 IN_PROMPT (the prompt manager's ``personaDescription`` marker), 1 AFTER_CHAR
  (deprecated, same as IN_PROMPT), 2 TOP_AN / 3 BOTTOM_AN (around the Author's Note), 4 AT_DEPTH (an in-chat
  injection with ``depth``/``role``; ST defaults depth 2, role system), 9 NONE (only reachable through
  ``{{persona}}``). Liyuan has no Author's Note, so TOP_AN/BOTTOM_AN are kept as read but rendered like IN_PROMPT
  (see :func:`liyuan_desktop.core.prompt.presets.prompter.PresetPrompter`).
- ST's settings export keeps personas in ``power_user.personas`` (avatar file → name) and
  ``power_user.persona_descriptions`` (avatar file → ``{description, position, depth, role, lorebook, title}``),
  the persona backup file in the same two maps at the top level; :func:`import_st_personas` reads both.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..fsutil import atomic_write_text
from ..jsonfile import object_at
from ..macros import MacroContext, apply_macros
from ..messages import Msg, MsgText, message
from ..paths import home

PersonaPosition = Literal["in_prompt", "top_an", "bottom_an", "at_depth", "none"]
Role = Literal["system", "user", "assistant"]

PERSONAS_FILE = "personas.json"

#: SillyTavern ``persona_description_positions`` value → ours (1 = deprecated AFTER_CHAR = IN_PROMPT).
ST_POSITIONS: dict[int, PersonaPosition] = {0: "in_prompt", 1: "in_prompt", 2: "top_an", 3: "bottom_an",
                                             4: "at_depth", 9: "none"}
#: SillyTavern ``extension_prompt_roles`` value → chat role.
ST_ROLES: dict[int, Role] = {0: "system", 1: "user", 2: "assistant"}


class PersonaError(Exception):
    """A persona file or import cannot be used; the message names the file and the reason (for the UI/CLI)."""


class Persona(BaseModel):
    """One persona.

    Fields: ``id`` (stable key; SillyTavern imports use the avatar file name), ``name`` (``{{user}}``),
    ``description`` (``{{persona}}``; macros allowed), ``position`` (where the description goes, see the module
    doc), ``depth`` (messages from the end for ``at_depth``; 0 = after the last message) and ``role`` (message role
    for ``at_depth``), ``lorebook`` (ST persona lorebook name, kept, not used yet), ``avatar`` (ST avatar file).
    Unknown keys are kept (``extra="allow"``) so a newer file survives a load/save round trip.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(default_factory=lambda: secrets.token_hex(6))
    name: str
    description: str = ""
    position: PersonaPosition = "in_prompt"
    depth: int = Field(default=2, ge=0)
    role: Role = "system"
    lorebook: str = ""
    avatar: str = ""

    @property
    def in_prompt(self) -> bool:
        """True when the description belongs in the system prompt (IN_PROMPT, or an Author's Note position, which
        Liyuan does not have)."""
        return self.position in ("in_prompt", "top_an", "bottom_an")


def persona_text(persona: Optional[Persona], ctx: MacroContext) -> str:
    """What ``{{persona}}`` expands to: the description with ``{{char}}``/``{{user}}`` applied, "" without one."""
    if persona is None:
        return ""
    return apply_macros(persona.description, ctx).strip()


def chat_key(chat_dir: str | Path) -> str:
    """The key of a chat in ``chats``: its folder relative to the data folder with ``/`` separators
    (``cards/青梧/对话/局A``), or the absolute path when the folder is elsewhere."""
    p = Path(chat_dir).expanduser().resolve()
    try:
        return p.relative_to(home().resolve()).as_posix()
    except ValueError:
        return p.as_posix()


class PersonaStore(BaseModel):
    """All personas + the default + per-chat choices (``<home>/personas.json``).

    ``load_warning`` is set (not saved) when the file was damaged; the damaged file was moved aside to
    ``personas.json.bad`` so a later save cannot destroy it.
    """

    model_config = ConfigDict(extra="allow")

    version: int = 1
    personas: list[Persona] = Field(default_factory=list)
    default: Optional[str] = None
    chats: dict[str, str] = Field(default_factory=dict)
    load_warning: Optional[MsgText] = Field(default=None, exclude=True)

    # -- lookup ---------------------------------------------------------------------------------------------
    def get(self, persona_id: Optional[str]) -> Optional[Persona]:
        """The persona with ``persona_id``, or None."""
        for p in self.personas:
            if p.id == persona_id:
                return p
        return None

    def find(self, name: str) -> Optional[Persona]:
        """The first persona called ``name`` (exact match), or None."""
        for p in self.personas:
            if p.name == name:
                return p
        return None

    @property
    def default_persona(self) -> Optional[Persona]:
        """The default persona (used by chats with no choice of their own), or None."""
        return self.get(self.default)

    def for_chat(self, chat_dir: str | Path) -> Optional[Persona]:
        """The persona of a chat: its own choice, else the default, else None. A choice pointing at a deleted
        persona is ignored."""
        return self.get(self.chats.get(chat_key(chat_dir))) or self.default_persona

    # -- editing (in memory; call save_personas to persist) -------------------------------------------------
    def add(self, name: str, description: str = "", **fields: Any) -> Persona:
        """Add a persona and return it. Raises ValueError for an empty name, pydantic ValidationError for bad
        fields (e.g. an unknown position)."""
        if not name.strip():
            raise ValueError(message("persona.need_name"))
        p = Persona(name=name.strip(), description=description, **fields)
        while self.get(p.id) is not None:
            p.id = secrets.token_hex(6)
        self.personas.append(p)
        return p

    def update(self, persona_id: str, **fields: Any) -> Persona:
        """Change fields of a persona (validated). Raises KeyError for an unknown id."""
        p = self.get(persona_id)
        if p is None:
            raise KeyError(message("persona.no_such", id=persona_id))
        data = {**p.model_dump(), **fields, "id": p.id}
        new = Persona.model_validate(data)
        self.personas[self.personas.index(p)] = new
        return new

    def remove(self, persona_id: str) -> None:
        """Delete a persona; the default and the chats that chose it fall back (no error for an unknown id)."""
        self.personas = [p for p in self.personas if p.id != persona_id]
        if self.default == persona_id:
            self.default = None
        self.chats = {k: v for k, v in self.chats.items() if v != persona_id}

    def set_default(self, persona_id: Optional[str]) -> None:
        """Make a persona the default (None clears it). Raises KeyError for an unknown id."""
        if persona_id is not None and self.get(persona_id) is None:
            raise KeyError(message("persona.no_such", id=persona_id))
        self.default = persona_id

    def select_for_chat(self, chat_dir: str | Path, persona_id: Optional[str]) -> None:
        """Choose the persona of one chat (None: use the default). Raises KeyError for an unknown id."""
        key = chat_key(chat_dir)
        if persona_id is None:
            self.chats.pop(key, None)
            return
        if self.get(persona_id) is None:
            raise KeyError(message("persona.no_such", id=persona_id))
        self.chats[key] = persona_id

    def merge(self, personas: list[Persona]) -> list[Persona]:
        """Add imported personas; one whose id already exists replaces that persona (a re-import updates).
        Returns the personas as stored."""
        out = []
        for p in personas:
            old = self.get(p.id)
            if old is not None:
                self.personas[self.personas.index(old)] = p
            else:
                self.personas.append(p)
            out.append(p)
        return out


def personas_path() -> Path:
    """``<home>/personas.json``."""
    return home() / PERSONAS_FILE


def load_personas(path: Optional[Path] = None) -> PersonaStore:
    """Read the persona file (default :func:`personas_path`). A missing file is an empty store. A damaged file
    (bad JSON or bad fields) is moved aside to ``<name>.bad`` and an empty store comes back with ``load_warning``
    saying so — never an exception for bad content. OSError only when the file exists but cannot be read."""
    p = Path(path) if path else personas_path()
    if not p.exists():
        return PersonaStore()
    raw = p.read_bytes()
    try:
        store = PersonaStore.model_validate_json(raw)
    except (ValidationError, ValueError) as e:
        aside = p.with_name(p.name + ".bad")
        try:
            os.replace(p, aside)
            where: Msg | str = message("persona.moved_aside", name=aside.name)
        except OSError:
            where = ""
        bad_json = not isinstance(e, ValidationError) or any(err.get("type") == "json_invalid" for err in e.errors())
        kind = message("persona.damaged.json" if bad_json else "persona.damaged.fields")  # half-written = bad JSON
        return PersonaStore(load_warning=message("persona.file_damaged", file=p.name, kind=kind, where=where))
    seen: set[str] = set()
    unique = []
    for persona in store.personas:
        if persona.id in seen:
            continue
        seen.add(persona.id)
        unique.append(persona)
    store.personas = unique
    return store


def chosen_for_chat(chat_dir: str | Path) -> Optional[Persona]:
    """The persona explicitly chosen for one chat (``chats`` in the persona file), or None: no choice, a choice
    pointing at a deleted persona, no file, or a file that cannot be read. Only the explicit choice: the default
    persona is what *new* chats start with, an existing chat keeps the persona its header stored (issue 17)."""
    try:
        store = load_personas()
    except OSError:
        return None
    return store.get(store.chats.get(chat_key(chat_dir)))


def save_personas(store: PersonaStore, path: Optional[Path] = None) -> Path:
    """Write the store atomically (temp file in the same folder, fsync, rename). Returns the path. Raises OSError
    when the disk refuses (the old file is untouched then)."""
    p = Path(path) if path else personas_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(store.model_dump(mode="json"), ensure_ascii=False, indent=1)
    return atomic_write_text(p, text)


def _int(v: Any, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def import_st_personas(source: str | Path | dict[str, Any]) -> tuple[list[Persona], Optional[str], list[Msg]]:
    """Personas from a SillyTavern export: the settings file (``settings.json``, maps under ``power_user``) or the
    persona backup (maps at the top level). ``source`` is a path or the parsed JSON.

    Returns ``(personas, default_id, warnings)``: ids are the avatar file names (so importing again updates), the
    default is ST's ``default_persona`` when it is among them. Raises :class:`PersonaError` when the file cannot
    be read or holds no persona maps.
    """
    name: str = message("persona.file")
    if isinstance(source, dict):
        obj: Any = source
    else:
        p = Path(source)
        name = p.name
        try:
            obj = json.loads(p.read_bytes().decode("utf-8-sig"))
        except OSError as e:
            raise PersonaError(message("persona.cannot_read", path=str(p), error=e.strerror or str(e))) from e
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise PersonaError(message("persona.bad_json", name=name, error=str(e))) from e
    if not isinstance(obj, dict):
        raise PersonaError(message("persona.not_object", name=name))
    pu = obj.get("power_user")
    src: dict[str, Any] = pu if isinstance(pu, dict) else obj
    names = src.get("personas")
    descs = src.get("persona_descriptions")
    if not isinstance(names, dict):
        raise PersonaError(message("persona.none_inside", name=name))
    descs = descs if isinstance(descs, dict) else {}
    warnings: list[Msg] = []
    out: list[Persona] = []
    for avatar, pname in names.items():
        d = object_at(descs, avatar)
        pos_raw = _int(d.get("position", 0), 0)
        position = ST_POSITIONS.get(pos_raw)
        if position is None:
            warnings.append(message("persona.position", name=pname, pos=repr(d.get("position"))))
            position = "in_prompt"
        extra = {k: v for k, v in d.items() if k not in ("description", "position", "depth", "role", "lorebook")}
        try:
            persona = Persona(id=str(avatar), name=str(pname or avatar), description=str(d.get("description") or ""),
                              position=position, depth=max(0, _int(d.get("depth", 2), 2)),
                              role=ST_ROLES.get(_int(d.get("role", 0), 0), "system"),
                              lorebook=str(d.get("lorebook") or ""), avatar=str(avatar), **extra)
        except ValidationError as e:
            warnings.append(message("persona.fields", name=pname, msg=e.errors()[0].get("msg", "")))
            continue
        out.append(persona)
    default = src.get("default_persona")
    default_id = str(default) if default is not None and any(p.id == str(default) for p in out) else None
    if not out:
        warnings.append(message("persona.empty", name=name))
    return out, default_id, warnings
