"""The prompt manager of a SillyTavern chat-completion preset (issue 26 §2): the preset's prompt list as
SillyTavern's Prompt Manager shows it, and the edits it allows — on/off, order, text, role, position, custom
prompts added and deleted — saved back into the preset library or exported as SillyTavern JSON.

The list (:meth:`PromptManager.rows`)
-------------------------------------
SillyTavern's chat-completion prompt manager runs with the "global" strategy: the list shown is the
``prompt_order`` entry of ``character_id`` 100001 (``GLOBAL_ORDER_ID``), one row per ``{identifier, enabled}`` item,
in order; each row's definition (name, role, content, position…) is the ``prompts[]`` entry with that identifier.
When the preset has no (non-empty) 100001 list SillyTavern shows — and on its first save writes — its built-in
default order (``promptManagerDefaultPromptOrder``); so does this module (:attr:`PromptManager.order_source` says
"default" until an edit writes the list). Built-in prompts missing from ``prompts[]`` are shown with SillyTavern's
default definition (``checkForMissingPrompts``); an item whose identifier is neither in ``prompts[]`` nor built in
is shown with ``missing`` set (SillyTavern drops it; Liyuan's mapping does too). Prompts defined in ``prompts[]``
but not in the list are what SillyTavern offers in its "insert prompt" menu: :meth:`PromptManager.unlisted`.

What may be changed follows ``PromptManager.js`` (checked against SillyTavern's source, 2025):

* on/off (``isPromptToggleAllowed``): every text prompt, and the markers ``charDescription``, ``charPersonality``,
  ``scenario``, ``personaDescription``, ``worldInfoBefore``, ``worldInfoAfter``, ``chatHistory``,
  ``dialogueExamples``; markers of extensions cannot be toggled;
* edit (``isPromptEditAllowed``; the content box is disabled for markers): a text prompt's name, text, role,
  position (relative / in-chat at a depth, with its order) and ``forbid_overrides``; a marker has no text, and only
  the six card/persona/world-info markers take name, role and position;
* delete (``isPromptDeletionAllowed``): only prompts with ``system_prompt`` false — never a built-in or a marker.
  Deleting removes the definition and its item in the 100001 list (other ``character_id`` lists are kept as they
  are, as SillyTavern keeps them);
* add (``handleNewPrompt`` + ``addPrompt``): a new prompt with a uuid4 identifier, ``system_prompt``/``marker``
  false, put into the list at the top (SillyTavern's ``appendPrompt`` inserts at the top too; it adds it switched
  off, here the caller chooses);
* move: drag and drop in SillyTavern; here :meth:`PromptManager.move` to a 0-based row index.

Round trip
----------
The manager edits the preset's JSON document itself, changing only the keys an edit touches: an unedited preset
exports JSON-equal to the file it was read from, and every key Liyuan does not model (model/source keys, extension
data, unknown fields of a prompt or an order item) stays as it was. Two things are only written when an edit needs
them: the 100001 list (from SillyTavern's default order, as SillyTavern writes it) and, for very old presets with
``main_prompt``/``nsfw_prompt``/``jailbreak_prompt`` at the root, ``prompts[]`` (as :meth:`Preset.from_json`
migrated them). Items of the 100001 list that are not ``{identifier, enabled}`` objects (ignored on import) are
dropped when the list's order is changed.

Token counts
------------
Each row has ``tokens``: the text's tokens by the counter the chats use (:class:`..tokens.TokenCounter`; pass the
chat's own, ``Chat.tokens``, for its calibration). Without a chat a text prompt counts its raw text and a marker 0;
with a chat (``chat``: its ``ChatContext``, i.e. ``Chat.context``) every prompt is rendered as it would be for that
chat — markers filled with the card / persona / lorebook text, ``main``/``jailbreak`` replaced by the card's text
when it applies, macros evaluated (:meth:`.prompter.PresetPrompter.prompt_text`) — and ``chatHistory`` counts the
``history`` messages given (``Chat.history().prompt_messages()``). The count is what the prompt would cost when on,
whether it is on or not; section headings and message framing are not included.

Using an edited preset
----------------------
:meth:`PromptManager.save` writes it into the library under its name (:meth:`save_as` under a new name); a chat
that uses that name picks the new text up with ``Chat.set_preset(name)`` (the chat itself — its messages, branches,
ledger — is untouched: only the system prompt and the preset's per-beat segments change). Nothing here touches a
chat.

Errors: :class:`PromptEditError` (a :class:`PresetError`) carrying a catalog message (``core.messages``, keys
``prompts.*``) for an unknown identifier, an edit SillyTavern does not allow, a wrong value; OSError from the disk.
"""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any, Literal, Optional, Protocol

from pydantic import BaseModel, Field

from ...cards import Card
from ...cards.personas import Persona
from ...fsutil import atomic_write_text
from ...llm.types import ChatMessage
from ...lore import Lorebook
from ...macros import MacroContext
from ...messages import MsgText, message
from ..tokens import TokenCounter
from .mapping import PlannedPrompt, PresetPlan, plan
from .model import (
    DEFAULT_PROMPTS,
    GLOBAL_ORDER_ID,
    IN_CHAT,
    RELATIVE,
    ROLES,
    Preset,
    PresetError,
    PresetPrompt,
    Role,
)
from .prompter import PresetPrompter
from .store import load_installed_preset, load_preset, preset_path, write_preset

__all__ = ["PromptManager", "PromptRow", "PromptChat", "PromptEditError", "Position", "TOGGLABLE_MARKERS",
           "EDITABLE_MARKERS", "MAX_PROMPT_CHARS", "MAX_NAME_CHARS", "MAX_DEPTH"]

Position = Literal["relative", "in_chat"]

#: markers SillyTavern lets the user switch on and off (``isPromptToggleAllowed``'s list; ``main`` is no marker)
TOGGLABLE_MARKERS = ("charDescription", "charPersonality", "scenario", "personaDescription", "worldInfoBefore",
                     "worldInfoAfter", "chatHistory", "dialogueExamples")
#: markers whose name, role and position SillyTavern lets the user edit (``isPromptEditAllowed``'s list)
EDITABLE_MARKERS = ("charDescription", "charPersonality", "scenario", "personaDescription", "worldInfoBefore",
                    "worldInfoAfter")
#: the longest prompt text accepted by :meth:`PromptManager.edit` / :meth:`PromptManager.add` (characters)
MAX_PROMPT_CHARS = 1_000_000
#: the longest prompt name accepted (characters)
MAX_NAME_CHARS = 200
#: the deepest in-chat depth accepted (messages from the end); ``injection_order`` is bounded by ±1,000,000
MAX_DEPTH = 10_000
_MAX_ORDER = 1_000_000


class PromptEditError(PresetError):
    """An edit the prompt manager refuses; ``args[0]`` is a catalog message (``prompts.*``) fit for the UI/CLI."""


class PromptChat(Protocol):
    """What token counts for a chat need (a ``core.chat.context.ChatContext`` — ``Chat.context`` — has these)."""

    @property
    def card(self) -> Card:
        """The chat's card."""
        ...

    @property
    def book(self) -> Lorebook:
        """The chat's world book (card book plus linked books)."""
        ...

    @property
    def prompt_ctx(self) -> MacroContext:
        """The macro context prompts are rendered with."""
        ...

    @property
    def persona_obj(self) -> Optional[Persona]:
        """The persona the user plays."""
        ...


class PromptRow(BaseModel):
    """One prompt as the prompt manager lists it.

    ``index``: its 0-based place in the list (-1 for :meth:`PromptManager.unlisted` prompts); ``identifier``,
    ``name``; ``enabled`` (the list item's flag; a missing flag is off, as in SillyTavern); ``role``
    (system/user/assistant); ``position`` "relative" (its place in the list) or "in_chat" (inserted ``depth``
    messages from the end, ``order`` among the same depth: lower first); ``content`` (raw text, macros not
    expanded; "" for markers); ``marker`` (filled by Liyuan from the card, persona, lorebook or history);
    ``system_prompt`` (a built-in); ``forbid_overrides`` (main/jailbreak: the card's own text may not replace it);
    ``injection_trigger`` (generation types it is sent for; empty = all); ``missing`` (the list names an identifier
    that has no definition); ``duplicate`` (the identifier is already earlier in the list: SillyTavern and Liyuan
    use the first); ``can_toggle``/``can_edit``/``can_edit_text``/``can_delete`` (what SillyTavern allows, module
    doc); ``tokens`` (module doc, *Token counts*); ``placement`` where Liyuan puts it when on — "system" (a system
    layer), "after" (a message after the user's words), "depth" (in the chat at its depth), "history" (the
    ``chatHistory`` marker: where the chat's messages go) — or None when it is not sent, ``note`` then saying why (a catalog message, from :func:`.mapping.plan`)."""

    index: int
    identifier: str
    name: str = ""
    enabled: bool = False
    role: Role = "system"
    position: Position = "relative"
    depth: int = 4
    order: int = 100
    content: str = ""
    marker: bool = False
    system_prompt: bool = False
    forbid_overrides: bool = False
    injection_trigger: list[str] = Field(default_factory=list)
    missing: bool = False
    duplicate: bool = False
    can_toggle: bool = True
    can_edit: bool = True
    can_edit_text: bool = True
    can_delete: bool = False
    tokens: int = 0
    placement: Optional[str] = None
    note: MsgText = ""

    @property
    def label(self) -> str:
        """The name, or the identifier when the prompt has none."""
        return self.name or self.identifier

    @property
    def where(self) -> str:
        """The position in words: "relative" or "in-chat @depth N" (for the CLI's table)."""
        return "relative" if self.position == "relative" else f"in-chat @{self.depth}"


def _position_of(value: Any) -> int:
    if value in ("relative", RELATIVE) and not isinstance(value, bool):
        return RELATIVE
    if value in ("in_chat", "in-chat", IN_CHAT) and not isinstance(value, bool):
        return IN_CHAT
    raise PromptEditError(message("prompts.bad_position", value=repr(value)))


def _bounded_int(key: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PromptEditError(message("prompts.bad_number", key=key, value=repr(value), min=low, max=high))
    return value


def _text(what: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise PromptEditError(message("prompts.not_text", what=what, type=type(value).__name__))
    if len(value) > limit:
        raise PromptEditError(message("prompts.too_long", what=what, n=len(value), max=limit))
    return value


class PromptManager:
    """The prompt manager over one preset's JSON document (module doc). Build it with :meth:`load` (a library
    preset), :meth:`from_file` or :meth:`from_preset`; query with :meth:`rows`, :meth:`row`, :meth:`unlisted`;
    change with :meth:`set_enabled`, :meth:`move`, :meth:`edit`, :meth:`add`, :meth:`delete`, :meth:`attach`,
    :meth:`detach`; keep with :meth:`save`, :meth:`save_as`, :meth:`export`. Edits work on the manager's own copy:
    nothing reaches the disk before a save. ``changed`` is true after an edit until the next save. Not
    thread-safe."""

    def __init__(self, doc: dict[str, Any], name: str):
        """``doc``: a preset's JSON (copied); ``name``: its library name. Raises :class:`PresetError` when ``doc``
        is not a chat-completion preset (:meth:`Preset.from_json`)."""
        Preset.from_json(copy.deepcopy(doc), name)  # refuse what is not a preset, before anything else
        self._doc: dict[str, Any] = copy.deepcopy(doc)
        self.name = name
        self.changed = False
        self._preset: Optional[Preset] = None

    # -- building ---------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, name: str) -> "PromptManager":
        """The library preset ``name`` (:func:`.store.load_installed_preset`; PresetError when missing or broken)."""
        p = load_installed_preset(name)
        return cls(p.raw, p.name)

    @classmethod
    def from_file(cls, path: str | Path) -> "PromptManager":
        """A preset file anywhere (:func:`.store.load_preset`; named by its file stem). PresetError as there."""
        p = load_preset(path)
        return cls(p.raw, p.name)

    @classmethod
    def from_preset(cls, preset: Preset) -> "PromptManager":
        """A preset already read (its :meth:`Preset.to_json`, i.e. the file as read plus changes made since)."""
        return cls(preset.to_json(), preset.name)

    # -- queries ----------------------------------------------------------------------------------------------
    @property
    def preset(self) -> Preset:
        """The preset as it stands now (edits included), for :func:`.mapping.plan` or ``ChatContext.use_preset``;
        rebuilt after each edit (a copy: changing it does not change the manager)."""
        if self._preset is None:
            self._preset = Preset.from_json(copy.deepcopy(self._doc), self.name)
        return self._preset

    @property
    def order_source(self) -> str:
        """"100001" when the preset has its own global list, "default" while SillyTavern's default order stands in
        (module doc)."""
        return self.preset.active_order()[1]

    def to_json(self) -> dict[str, Any]:
        """The preset as SillyTavern JSON (a copy): the document read, with the edits made."""
        return copy.deepcopy(self._doc)

    def _definition(self, ident: str) -> Optional[PresetPrompt]:
        p = self.preset.prompt(ident)
        if p is None and ident in DEFAULT_PROMPTS:
            p = PresetPrompt(identifier=ident, **DEFAULT_PROMPTS[ident])
        return p

    def _row(self, index: int, ident: str, enabled: bool, duplicate: bool = False) -> PromptRow:
        p = self._definition(ident)
        if p is None:
            return PromptRow(index=index, identifier=ident, name=ident, enabled=enabled, missing=True,
                             duplicate=duplicate, can_toggle=False, can_edit=False, can_edit_text=False,
                             can_delete=True)
        return PromptRow(
            index=index, identifier=ident, name=p.name, enabled=enabled, role=p.role,
            position="in_chat" if p.injection_position == IN_CHAT else "relative", depth=p.injection_depth,
            order=p.injection_order, content="" if p.marker else p.content, marker=p.marker,
            system_prompt=p.system_prompt, forbid_overrides=p.forbid_overrides,
            injection_trigger=list(p.injection_trigger), duplicate=duplicate,
            can_toggle=not p.marker or ident in TOGGLABLE_MARKERS,
            can_edit=not p.marker or ident in EDITABLE_MARKERS, can_edit_text=not p.marker,
            can_delete=not p.system_prompt and not p.marker)

    def rows(self, counter: Optional[TokenCounter] = None, chat: Optional[PromptChat] = None,
             history: Optional[list[ChatMessage]] = None) -> list[PromptRow]:
        """The list, in order, one :class:`PromptRow` per item of the global list (module doc). ``counter``: the
        token counter (default a fresh, uncalibrated one); ``chat``: count markers and macros for this chat;
        ``history``: the messages ``chatHistory`` stands for. O(prompts) plus, with ``chat``, one prompter built for
        it (the chat's fixed lore constants are gathered, macros and templates evaluated): a front end calls it off
        the UI thread (``ui/tasks.py``)."""
        order, _ = self.preset.active_order()
        seen: set[str] = set()
        rows = []
        for i, item in enumerate(order):
            rows.append(self._row(i, item.identifier, item.enabled, duplicate=item.identifier in seen))
            seen.add(item.identifier)
        self._annotate(rows)
        self._count(rows, counter or TokenCounter(), chat, history)
        return rows

    def unlisted(self, counter: Optional[TokenCounter] = None) -> list[PromptRow]:
        """Prompts defined in ``prompts[]`` but not in the list (SillyTavern's "insert prompt" menu; ``index``
        -1, ``enabled`` false), in file order, with their raw text's tokens. :meth:`attach` puts one in."""
        listed = {i.identifier for i in self.preset.active_order()[0]}
        rows = [self._row(-1, p.identifier, False) for p in self.preset.prompts if p.identifier not in listed]
        tc = counter or TokenCounter()
        for r in rows:
            r.tokens = tc.text(r.content) if r.content else 0
            r.note = message("prompts.note.unlisted")
        return rows

    def row(self, identifier: str, counter: Optional[TokenCounter] = None, chat: Optional[PromptChat] = None,
            history: Optional[list[ChatMessage]] = None) -> PromptRow:
        """The row of ``identifier`` (the first, when listed twice), or its :meth:`unlisted` row. PromptEditError
        when the preset has no such prompt."""
        for r in self.rows(counter, chat, history):
            if r.identifier == identifier:
                return r
        for r in self.unlisted(counter):
            if r.identifier == identifier:
                return r
        raise PromptEditError(message("prompts.not_found", ident=identifier, preset=self.name))

    def _annotate(self, rows: list[PromptRow]) -> None:
        """Where Liyuan puts each row when on (:func:`.mapping.plan`), or why it is not sent."""
        pl = plan(self.preset)
        where: dict[str, str] = {}
        for kind, items in (("system", pl.system), ("after", pl.after), ("depth", pl.depth)):
            for p in items:
                where.setdefault(p.identifier, kind)
        reasons: dict[str, str] = {}
        for d in pl.dropped:
            reasons.setdefault(d.identifier, d.reason)
        for r in rows:
            if r.identifier == "chatHistory" and r.enabled and not r.duplicate:
                r.placement = "history"
                continue
            r.placement = None if r.duplicate else where.get(r.identifier)
            if r.placement is None:
                r.note = message("prompts.note.duplicate") if r.duplicate else reasons.get(r.identifier, "")

    def _count(self, rows: list[PromptRow], counter: TokenCounter, chat: Optional[PromptChat],
               history: Optional[list[ChatMessage]]) -> None:
        prompter = None
        if chat is not None:
            prompter = PresetPrompter(PresetPlan(preset_name=self.name), chat.card, chat.book, chat.prompt_ctx,
                                      persona=chat.persona_obj)
        for r in rows:
            if r.missing:
                continue
            if r.identifier == "chatHistory":
                r.tokens = counter.messages(history) if history else 0
                continue
            if prompter is None:
                r.tokens = counter.text(r.content) if r.content else 0
                continue
            p = self._definition(r.identifier)
            assert p is not None
            planned = PlannedPrompt(identifier=p.identifier, name=p.name, role=p.role, content=p.content,
                                    marker=p.marker, forbid_overrides=p.forbid_overrides)
            text = prompter.prompt_text(planned)
            r.tokens = counter.text(text) if text else 0

    # -- the raw document -------------------------------------------------------------------------------------
    def _touch(self) -> None:
        self.changed = True
        self._preset = None

    def _raw_prompts(self) -> list[Any]:
        """``prompts[]`` of the document, written first for an old preset that had none (module doc)."""
        raw = self._doc.get("prompts")
        if not isinstance(raw, list):
            raw = self._doc["prompts"] = [p.model_dump(mode="json") for p in self.preset.prompts]
        return raw

    def _raw_prompt(self, ident: str) -> dict[str, Any]:
        """The document's definition of ``ident`` (the first), created from SillyTavern's default for a built-in
        the preset lacks. An entry that had no identifier (named ``prompt-N`` on import) gets it written."""
        raw = self._raw_prompts()
        for i, p in enumerate(raw):
            if not isinstance(p, dict):
                continue
            own = p.get("identifier")
            if own == ident:
                return p
            if (not isinstance(own, str) or not own) and ident == f"prompt-{i + 1}":
                p["identifier"] = ident
                return p
        if ident in DEFAULT_PROMPTS:
            new = {"identifier": ident, **copy.deepcopy(DEFAULT_PROMPTS[ident])}
            raw.append(new)
            return new
        raise PromptEditError(message("prompts.not_found", ident=ident, preset=self.name))

    def _raw_order(self) -> list[Any]:
        """The document's 100001 list (the list object itself), written from the active order when the preset
        has none or only an empty one (as SillyTavern does on its first save)."""
        orders = self._doc.get("prompt_order")
        if not isinstance(orders, list):
            orders = self._doc["prompt_order"] = []
        active, source = self.preset.active_order()
        for po in orders:
            if (isinstance(po, dict) and isinstance(po.get("order"), list)
                    and isinstance(po.get("character_id"), (int, str)) and not isinstance(po.get("character_id"), bool)
                    and str(po["character_id"]) == str(GLOBAL_ORDER_ID)):
                lst: list[Any] = po["order"]
                if source == "default":
                    lst[:] = [i.model_dump(mode="json") for i in active]
                return lst
        lst = [i.model_dump(mode="json") for i in active]
        orders.append({"character_id": GLOBAL_ORDER_ID, "order": lst})
        return lst

    @staticmethod
    def _items(lst: list[Any]) -> list[dict[str, Any]]:
        """The valid items of a raw list (what the import reads), in order."""
        return [i for i in lst if isinstance(i, dict) and isinstance(i.get("identifier"), str)]

    def _is_listed(self, ident: str) -> bool:
        return any(i.identifier == ident for i in self.preset.active_order()[0])

    def _listed(self, ident: str) -> tuple[list[Any], dict[str, Any]]:
        """The raw list and the first item of ``ident`` in it; checked before the list is written, so a refused
        edit leaves the document as it was."""
        if not self._is_listed(ident):
            if self._definition(ident) is None:
                raise PromptEditError(message("prompts.not_found", ident=ident, preset=self.name))
            raise PromptEditError(message("prompts.not_listed", ident=ident))
        lst = self._raw_order()
        item = next(i for i in self._items(lst) if i["identifier"] == ident)
        return lst, item

    # -- edits ------------------------------------------------------------------------------------------------
    def set_enabled(self, identifier: str, enabled: bool) -> None:
        """Switch a listed prompt on or off (its first item in the list). PromptEditError for an unknown or
        unlisted identifier and for markers SillyTavern does not let you toggle (module doc)."""
        p = self._definition(identifier)
        if p is not None and p.marker and identifier not in TOGGLABLE_MARKERS:
            raise PromptEditError(message("prompts.no_toggle", name=p.name or identifier))
        _, item = self._listed(identifier)
        item["enabled"] = bool(enabled)
        self._touch()

    def enable(self, identifier: str) -> None:
        """:meth:`set_enabled` on."""
        self.set_enabled(identifier, True)

    def disable(self, identifier: str) -> None:
        """:meth:`set_enabled` off."""
        self.set_enabled(identifier, False)

    def move(self, identifier: str, index: int) -> int:
        """Move a listed prompt (its first item) to row ``index`` (0-based; clamped to the list; the other rows keep
        their order). Returns the index it landed on. PromptEditError for an unknown or unlisted identifier."""
        lst, item = self._listed(identifier)
        items = self._items(lst)
        items.remove(item)
        at = max(0, min(int(index), len(items)))
        items.insert(at, item)
        lst[:] = items
        self._touch()
        return at

    def edit(self, identifier: str, *, text: Optional[str] = None, name: Optional[str] = None,
             role: Optional[str] = None, position: Optional[Position | int] = None, depth: Optional[int] = None,
             order: Optional[int] = None, forbid_overrides: Optional[bool] = None) -> None:
        """Change a prompt's definition — listed or not; None leaves a field as it is. ``text`` (≤
        :data:`MAX_PROMPT_CHARS` characters), ``name`` (≤ :data:`MAX_NAME_CHARS`), ``role`` (system/user/assistant),
        ``position`` ("relative"/"in_chat", or SillyTavern's 0/1), ``depth`` (0–:data:`MAX_DEPTH` messages from
        the end; used in-chat), ``order`` (``injection_order``, ±1,000,000), ``forbid_overrides``. Only the keys
        given are written. PromptEditError for an unknown identifier, a marker's text, a marker SillyTavern does
        not let you edit, or a bad value (nothing is changed then)."""
        p = self._definition(identifier)
        if p is None:
            raise PromptEditError(message("prompts.not_found", ident=identifier, preset=self.name))
        label = p.name or identifier
        if p.marker and text is not None:
            raise PromptEditError(message("prompts.marker_text", name=label))
        others = (name, role, position, depth, order, forbid_overrides)
        if p.marker and identifier not in EDITABLE_MARKERS and any(v is not None for v in others):
            raise PromptEditError(message("prompts.marker_fixed", name=label))
        changes: dict[str, Any] = {}
        if text is not None:
            changes["content"] = _text("text", text, MAX_PROMPT_CHARS)
        if name is not None:
            changes["name"] = _text("name", name, MAX_NAME_CHARS)
        if role is not None:
            if role not in ROLES:
                raise PromptEditError(message("prompts.bad_role", value=repr(role)))
            changes["role"] = role
        if position is not None:
            changes["injection_position"] = _position_of(position)
        if depth is not None:
            changes["injection_depth"] = _bounded_int("depth", depth, 0, MAX_DEPTH)
        if order is not None:
            changes["injection_order"] = _bounded_int("order", order, -_MAX_ORDER, _MAX_ORDER)
        if forbid_overrides is not None:
            changes["forbid_overrides"] = bool(forbid_overrides)
        if not changes:
            return
        self._raw_prompt(identifier).update(changes)
        self._touch()

    def add(self, name: str, text: str = "", *, role: str = "system", index: int = 0, enabled: bool = True,
            position: Position | int = "relative", depth: int = 4, order: int = 100) -> str:
        """Add a custom prompt (module doc) and list it at row ``index`` (0-based, clamped; default the top, where
        SillyTavern puts it) switched on or off. Returns its new identifier (a uuid4, as SillyTavern makes them).
        Values are checked as in :meth:`edit`; PromptEditError for a bad one (nothing is added then)."""
        if role not in ROLES:
            raise PromptEditError(message("prompts.bad_role", value=repr(role)))
        new = {"identifier": str(uuid.uuid4()), "system_prompt": False, "enabled": False, "marker": False,
               "name": _text("name", name, MAX_NAME_CHARS), "role": role,
               "content": _text("text", text, MAX_PROMPT_CHARS), "injection_position": _position_of(position),
               "injection_depth": _bounded_int("depth", depth, 0, MAX_DEPTH),
               "injection_order": _bounded_int("order", order, -_MAX_ORDER, _MAX_ORDER),
               "injection_trigger": [], "forbid_overrides": False}
        lst = self._raw_order()
        self._raw_prompts().append(new)
        items = self._items(lst)
        items.insert(max(0, min(int(index), len(items))), {"identifier": new["identifier"], "enabled": bool(enabled)})
        lst[:] = items
        self._touch()
        return str(new["identifier"])

    def delete(self, identifier: str) -> None:
        """Delete a custom prompt: its definition(s) and its items in the global list. A list item naming a prompt
        that does not exist (``missing``) is removed the same way. PromptEditError for built-ins and markers
        (SillyTavern's rule: switch them off instead) and for an unknown identifier."""
        p = self._definition(identifier)
        if p is not None and (p.system_prompt or p.marker):
            raise PromptEditError(message("prompts.cannot_delete", name=p.name or identifier))
        if p is None and not self._is_listed(identifier):
            raise PromptEditError(message("prompts.not_found", ident=identifier, preset=self.name))
        lst = self._raw_order()
        lst[:] = [i for i in self._items(lst) if i["identifier"] != identifier]
        raw = self._raw_prompts()
        raw[:] = [x for x in raw if not (isinstance(x, dict) and x.get("identifier") == identifier)]
        self._touch()

    def attach(self, identifier: str, index: int = 0, enabled: bool = False) -> None:
        """Put an :meth:`unlisted` prompt into the list at row ``index`` (SillyTavern's "insert prompt": at the top,
        switched off). PromptEditError when it is unknown or already listed."""
        if self._definition(identifier) is None:
            raise PromptEditError(message("prompts.not_found", ident=identifier, preset=self.name))
        if self._is_listed(identifier):
            raise PromptEditError(message("prompts.already_listed", ident=identifier))
        lst = self._raw_order()
        items = self._items(lst)
        items.insert(max(0, min(int(index), len(items))), {"identifier": identifier, "enabled": bool(enabled)})
        lst[:] = items
        self._touch()

    def detach(self, identifier: str) -> None:
        """Take a custom prompt out of the list, keeping its definition (SillyTavern's "remove from list"; allowed
        where deleting is). PromptEditError for built-ins, markers, unknown or unlisted identifiers."""
        p = self._definition(identifier)
        if p is not None and (p.system_prompt or p.marker):
            raise PromptEditError(message("prompts.cannot_delete", name=p.name or identifier))
        lst, _ = self._listed(identifier)
        lst[:] = [i for i in self._items(lst) if i["identifier"] != identifier]
        self._touch()

    # -- keeping ----------------------------------------------------------------------------------------------
    def save(self) -> Path:
        """Write the preset into the library under :attr:`name` (replacing the file; atomic;
        :func:`.store.write_preset`). Returns the path. OSError when the disk refuses."""
        path = write_preset(self.name, self._doc)
        self.changed = False
        return path

    def save_as(self, name: str, overwrite: bool = False) -> Path:
        """Write the preset into the library as a new preset ``name`` and go on editing that one (:attr:`name`
        becomes ``name``). PromptEditError for an empty name or, unless ``overwrite``, a name the library already
        has; OSError from the disk."""
        name = _text("name", name, MAX_NAME_CHARS).strip()
        if not name:
            raise PromptEditError(message("prompts.empty_name"))
        if not overwrite and preset_path(name) is not None:
            raise PromptEditError(message("prompts.name_taken", name=name))
        path = write_preset(name, self._doc)
        self.name = name
        self._preset = None
        self.changed = False
        return path

    def export(self, path: str | Path) -> Path:
        """Write the preset as SillyTavern JSON to ``path`` (atomic; 4-space indent, UTF-8, as SillyTavern writes
        presets; the document as it stands, secrets included if it has any — a library preset has none). Returns
        the path. OSError when the disk refuses."""
        return atomic_write_text(Path(path), json.dumps(self._doc, ensure_ascii=False, indent=4))

