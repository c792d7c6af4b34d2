"""The chat's loaded context: everything a chat reads once when it is created or opened — the card, its merged
world books (card + the chat's attached ``世界书/`` + the card's linked library books, :mod:`cards.book_links` +
the global ones), the persona, the preset prompter, the macro context, the card's regex scripts (only when the
user allowed them, :mod:`cards.meta`), the card's MVU variable tree and update rules, and the byte-stable system
prompt.

What the session header stored is read back here (issue 12): the persona (name, description and placement) and
the preset by name from the preset library; anything missing becomes a line of :attr:`ChatContext.warnings`, and
the chat opens without it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Optional

from ..cards import Card
from ..cards.book_links import load_links
from ..cards.meta import card_scripts_allowed
from ..cards.personas import Persona, chosen_for_chat
from ..cards.regex_scripts import RegexScript, apply_scripts, scripts_from_card
from ..fsutil import atomic_write_text
from ..ledger.mvu import initvar_entries, load_initvars_books
from ..llm.sampling import Sampling
from ..llm.types import ChatMessage
from ..lore import Lorebook, merge_books
from ..lore.books import chat_card_book, global_books_dir, load_books
from ..lore.settings import WorldInfoSettings
from ..macros import MacroContext, apply_macros
from ..macros.ejs import TemplateEnv, has_template
from ..messages import message
from ..paths import chat_books_dir, safe_name
from ..prompt.assemble import system_prompt
from ..prompt.lore_layers import system_constants
from ..prompt.presets.mapping import plan
from ..prompt.presets.model import SENSITIVE_KEYS, Preset, PresetError
from ..prompt.presets.prompter import PresetPrompter
from ..prompt.presets.store import load_installed_preset, presets_dir
from ..session.tree import SessionTree
from .book_update import swap_kept
from .display_cache import DisplayCache, display_key
from .templates import attach as attach_templates
from .templates import render_for_display

#: The user's name when nothing names it, per chat language: 「你」 for Chinese, "User" otherwise (issue 18: an
#: English card's example dialogue went out as ``你: "…"``).
DEFAULT_USER_NAMES = {"zh": "你"}


def default_user_name(language: str) -> str:
    """The user's default name in a chat in ``language`` (:data:`DEFAULT_USER_NAMES`, "User" for the others)."""
    return DEFAULT_USER_NAMES.get(language or "zh", "User")


def header_persona(tree: SessionTree) -> Optional[Persona]:
    """The persona the header stored at creation (``persona_detail``, else name + ``persona_description``), or
    None when the chat was created without one."""
    h = tree.header
    detail = h.model_extra.get("persona_detail") if h.model_extra else None
    if isinstance(detail, dict):
        try:
            return Persona.model_validate(detail)
        except ValueError:
            pass
    desc = (h.model_extra or {}).get("persona_description")
    # no name stored: left empty, so the chat's language picks the default (default_user_name), never a fixed 「你」
    return Persona(name=h.persona or "", description=desc) if isinstance(desc, str) and desc else None


def keep_preset(preset: Preset) -> str:
    """Copy ``preset`` into the preset library (``presets.presets_dir()/<name>.json``, without the sensitive keys,
    as ``install_preset`` writes it) so a chat that names it can load it again. Returns the library name. Raises
    OSError when the disk refuses."""
    name = safe_name(preset.name, "preset")
    clean = {k: v for k, v in preset.to_json().items() if k not in SENSITIVE_KEYS}
    atomic_write_text(presets_dir() / f"{name}.json", json.dumps(clean, ensure_ascii=False, indent=4))
    return name


def chat_settings(tree: SessionTree) -> tuple[Optional[str], Optional[dict[str, Any]]]:
    """The chat's own settings from its newest ``chat-settings`` entries (``session.entries.ChatSettingsEntry``):
    (preset name — "" for none, None when never changed —, sampling overrides or None). O(entries), once per open."""
    preset: Optional[str] = None
    sampling: Optional[dict[str, Any]] = None
    for i in reversed(tree.order):
        e = tree.entries[i]
        if e.type != "chat-settings":
            continue
        if preset is None and "preset" in e.model_fields_set and e.preset is not None:
            preset = e.preset
        if sampling is None and "sampling" in e.model_fields_set and e.sampling is not None:
            sampling = e.sampling
        if preset is not None and sampling is not None:
            break
    return preset, sampling


class ChatContext:
    """What a chat loaded (module doc). Attributes: ``card``, ``book`` (merged; [mvu_update] rules removed when
    the card has a variable tree), ``persona`` (the user's name), ``persona_obj``, ``language``, ``ctx``
    (:class:`MacroContext`; the clock frozen at the chat's creation, randomness seeded by the chat id, so the
    system prompt stays byte-stable for prefix caching), ``scripts``, ``mvu_initial``, ``mvu_rules``,
    ``prompter``, ``system``, ``warnings`` (what could not be loaded)."""

    def __init__(self, directory: Path, tree: SessionTree, card: Card, model_name: str, *, persona: str = "",
                 language: Optional[str] = None, preset: Optional[Preset] = None,
                 persona_obj: Optional[Persona] = None, world_info: Optional[WorldInfoSettings] = None,
                 constants_budget: Optional[Callable[[Optional[Preset]], Optional[int]]] = None):
        """``constants_budget``: the chat's world-info budget in tokens for a preset (None = no preset), which the
        constants of the byte-stable system prompt are cut with (``Lorebook.set_constants_budget``); None = no
        budget."""
        self._constants_budget = constants_budget
        self.warnings: list[str] = []
        #: the chat's prompt templates (chat.templates; None when its texts use none) and what the last beat's
        #: prompt rendered from them (``[{"label", "output", "error"?}]``)
        self.templates: Optional[TemplateEnv] = None
        #: the templates' copy that renders messages for the conversation view (chat.templates.render_for_display)
        self.display_templates: Optional[TemplateEnv] = None
        self.last_templates: list[dict[str, Any]] = []
        self.card = card
        # the persona: given, else chosen for this chat in the window (personas.json), else what the header stored
        persona_obj = persona_obj or chosen_for_chat(directory) or header_persona(tree)
        self.persona_obj = persona_obj
        self.language = language or card.language
        stored = tree.header.persona
        if stored == "你" and self.language != "zh":  # the old default, stored before the language was looked at
            stored = ""
        self.persona = persona or (persona_obj.name.strip() if persona_obj is not None else "") or stored \
            or card.persona_name or default_user_name(self.language)
        # the card's book, or this chat's own copy of it (saved when the card file is read-only, books.chat_card_book)
        card_book = chat_card_book(Path(directory)) or card.lorebook
        # the card's linked library books (SillyTavern's character lore: extensions.world + charLore, cards.book_links)
        loaded = load_links(card, Path(directory), card_book)
        #: the card's links and what each does in this chat (cards.book_links.BookLink)
        self.book_links = loaded.links
        self.warnings += loaded.warnings
        # books this chat keeps an old (or merged) version of are read in that version (chat.book_update)
        books = [card_book, *swap_kept(Path(directory), [*load_books(chat_books_dir(directory), "chat"), *loaded.books,
                                                         *load_books(global_books_dir(), "global")])]
        book = merge_books(books)
        card_book = books[0]  # the card's book, read once (a big book costs to build: lore.bookcache)
        book.scan_depth = card_book.scan_depth if card_book.entries else book.scan_depth
        if world_info is not None:  # SillyTavern's global settings rule, not the book file's own scan settings
            world_info.apply(book)
        self.scripts: list[RegexScript] = []
        self._script_cache: dict[tuple[str, int, str, Any], str] = {}
        self._fingerprint: Optional[str] = None
        #: display texts the scripts made, on disk beside the chat (issue 13 §4; a cache, never the source of truth)
        self.display_cache = DisplayCache(Path(directory))
        self.set_scripts(card_scripts_allowed(card))
        created = datetime.fromtimestamp(tree.header.ts / 1000)
        self.ctx = MacroContext(char=card.name, user=self.persona, description=card.description,
                                personality=card.personality, scenario=card.scenario, mes_examples=card.mes_example,
                                chat_id=tree.header.id, clock=lambda: created,
                                persona=persona_obj.description if persona_obj is not None else "")
        #: the [InitVar] trees of the books other than the card's, in book order (a greeting's <initvar> override
        #: is merged over them: ledger.mvu.greeting)
        self.mvu_other_books: list[dict[str, Any]] = []
        try:  # the variable tree (MVU [InitVar] entries of every book, card first); macros such as <user> filled in
            self.mvu_initial, trees, mvu_warnings = load_initvars_books(books, substitute=lambda t: apply_macros(t, self.ctx))
            self.mvu_other_books = trees[1:] if initvar_entries(books[0]) else trees  # the book read above: no rebuild
        except Exception as e:  # a broken InitVar never stops a chat; the scribe just gets no tree
            self.mvu_initial, mvu_warnings = None, [message("mvu.initvar_failed", error=e)]
        #: the card's [mvu_update] world-info rules: with a variable tree they go to the scribe, never to the actor
        self.mvu_rules = ""
        if self.mvu_initial is not None:
            rules = [e for e in book.entries if "[mvu_update]" in (e.display_title or "").lower()]
            if rules:
                self.mvu_rules = "\n\n".join(apply_macros(e.content, self.ctx).strip() for e in rules if e.content.strip())
                gone = {id(e) for e in rules}
                book = book.model_copy(update={"entries": [e for e in book.entries if id(e) not in gone]})
        self.book: Lorebook = book
        self._tree, self._model_name = tree, model_name
        chosen, overrides = chat_settings(tree)
        #: the chat's own sampling overrides (a ``chat-settings`` entry; they win over profile and preset)
        self.sampling_overrides = Sampling.model_validate(overrides or {})
        name = chosen if chosen is not None else str((tree.header.model_extra or {}).get("preset") or "")
        if preset is None and name:
            try:
                preset = load_installed_preset(name)
            except PresetError as e:
                self.warnings.append(message("ctx.preset_missing", name=name, error=e))
        self.warnings += mvu_warnings
        self.use_preset(preset)

    # -- the preset -----------------------------------------------------------------------------------------
    def use_preset(self, preset: Optional[Preset]) -> None:
        """Build the prompter and the system prompt for ``preset`` (None = no preset): at open, and when the user
        changes the chat's preset (the byte-stable system prompt changes once). Sets ``preset``,
        ``preset_sampling`` (:meth:`Preset.request_sampling`) and ``preset_notes``."""
        tree = self._tree
        self.preset = preset
        # the constants the byte-stable system prompt holds, within the chat's budget for this preset (SillyTavern
        # cuts constants by the budget too); the turn's other constants are rendered per beat
        self.book.set_constants_budget(self._constants_budget(preset) if self._constants_budget is not None else None)
        #: the constants the system prompt holds (lore_layers.system_constants)
        self.fixed_lore = system_constants(self.book, self.card.name)
        self.prompter: Optional[PresetPrompter] = None
        self.preset_sampling: Optional[Sampling]
        self.preset_notes: list[str]
        self.preset_sampling, self.preset_notes = preset.request_sampling() if preset is not None else (None, [])
        if preset is not None:
            st_meta = ((tree.header.model_extra or {}).get("st") or {}).get("chat_metadata") or {}
        #: the context the prompt is built with: with the chat's templates (EJS, TavernHelper macros) when its texts
        #: use them (chat.templates; the display keeps ``ctx``)
        self.prompt_ctx = attach_templates(self)
        if preset is not None:
            self.prompter = PresetPrompter(plan(preset), self.card, self.book, self.prompt_ctx, persona=self.persona_obj,
                                           seed=tree.header.id, variables=st_meta.get("variables"),
                                           model_name=self._model_name, language=self.language)
        self.system = system_prompt(self.card, self.book, self.prompt_ctx, self.prompter, self.language)
        #: the system prompt of the next beat: ``system`` until templates render differently (:meth:`refresh_system`)
        self.beat_system = self.system

    def refresh_system(self) -> bool:
        """Render the system prompt again with the templates' current values (chat.templates.refresh) into
        :attr:`beat_system`; True when it differs from the previous beat's. ``system`` stays the prompt as opened."""
        if self.templates is None:
            return False
        if self.prompter is not None:
            self.prompter.rerender_system()
        new = system_prompt(self.card, self.book, self.prompt_ctx, self.prompter, self.language)
        changed = new != self.beat_system
        self.beat_system = new
        return changed

    # -- the card's regex scripts -------------------------------------------------------------------------------
    def set_scripts(self, allowed: bool) -> None:
        """Run the card's regex scripts from now on (``allowed``) or not; clears the scripted-text cache."""
        self.scripts = scripts_from_card(self.card.raw) if allowed else []
        #: whether the card's scripts run now (Chat.scripts_allowed)
        self.scripts_on = allowed
        self._script_cache.clear()
        self._fingerprint = None
        if hasattr(self, "system"):  # the scripts' replacements are template sources too (chat.templates)
            self.use_preset(self.preset)

    def _script_fingerprint(self) -> str:
        """A digest of the script set and the macro values their replacements read (names): the disk cache key's
        first part, so changed scripts or names never see an old entry."""
        fp = self._fingerprint
        if fp is None:
            raw = json.dumps([[s.model_dump() for s in self.scripts], self.ctx.user, self.ctx.char],
                             ensure_ascii=False, sort_keys=True, default=str)
            fp = self._fingerprint = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        return fp

    def _depth_key(self, depth: int) -> Any:
        """Depths past every finite min/maxDepth of the scripts behave alike: cache them under one key."""
        bound = max([x for sc in self.scripts for x in (sc.minDepth, sc.maxDepth) if isinstance(x, int) and x >= 0] + [0])
        return depth if depth <= bound else "deep"

    def scripted(self, text: str, placement: int, depth: int, view: str, issues: Optional[list[str]] = None) -> str:
        """``text`` after the scripts for ``placement`` (1 user, 2 reply) at message ``depth`` (0 = newest) in
        ``view`` ("display" | "prompt"); cached in memory (at most 20,000 texts) and, for the display, on disk
        beside the chat (:mod:`.display_cache`; a result with a timed-out script is not written there, so it is
        tried again next time). ``issues``: warnings of this run (timeouts, bad patterns) are appended. Safe to call
        from a worker thread (each thread has its own JavaScript engine)."""
        key: tuple[Any, ...] = (text, placement, view, self._depth_key(depth))
        macros_ctx = self.ctx
        if view == "prompt" and self.templates is not None:  # replacements with templates read the beat's values
            macros_ctx, key = self.prompt_ctx, (*key, self.templates.version)
        hit = self._script_cache.get(key)
        if hit is not None:
            return hit
        scripts = self.scripts
        disk_key = None
        if view == "display":
            disk_key = display_key(self._script_fingerprint(), placement, view, key[3], text)
            hit = self.display_cache.get(disk_key)
        if hit is None:
            found: list[str] = []
            hit = apply_scripts(text, scripts, placement=placement, is_markdown=view == "display",
                                is_prompt=view == "prompt", depth=depth, macros_ctx=macros_ctx, issues=found)
            if issues is not None:
                issues.extend(found)
            if disk_key is not None and scripts is self.scripts and not any("time limit" in w for w in found):
                self.display_cache.put(disk_key, hit)
        if scripts is self.scripts:  # scripts switched meanwhile (a worker thread): the result is stale
            if len(self._script_cache) > 20000:
                self._script_cache.clear()
            self._script_cache[key] = hit
        return hit

    def scripted_if_known(self, text: str, placement: int, depth: int, view: str) -> Optional[str]:
        """What :meth:`scripted` would return, when it is known without running a script (memory or disk cache),
        else None. Cheap enough for the UI thread."""
        key = (text, placement, view, self._depth_key(depth))
        hit = self._script_cache.get(key)
        if hit is None and view == "display":
            hit = self.display_cache.get(display_key(self._script_fingerprint(), placement, view, key[3], text))
            if hit is not None:
                self._script_cache[key] = hit
        return hit

    def prompt_scripts(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The prompt-side scripts on the history (SillyTavern: promptOnly and 'neither' scripts, by message depth,
        0 = the user's new message). Stored text never changes; the system message and the final user message
        (its data blocks) are left alone."""
        out = [messages[0]]
        body = messages[1:]
        n = len(body)
        for i, m in enumerate(body):
            depth = n - 1 - i
            if m.role == "assistant":
                out.append(ChatMessage(role="assistant", content=self.scripted(m.content, 2, depth, "prompt")))
            elif m.role == "user" and i < n - 1:
                out.append(ChatMessage(role="user", content=self.scripted(m.content, 1, depth, "prompt")))
            else:
                out.append(m)
        return out

    def _display_source(self, item: dict[str, Any]) -> tuple[str, Optional[int]]:
        """The text the display scripts start from (MVU's placeholder added to a reply with a variable snapshot) and
        the placement they run with (None: no script runs on this item)."""
        text = item.get("text", "")
        if item.get("role") in ("assistant", "opening") and item.get("variables") is not None \
                and "<StatusPlaceHolderImpl/>" not in text:
            text = f"{text}\n\n<StatusPlaceHolderImpl/>"
        if not self.scripts or item.get("role") not in ("user", "assistant", "opening"):
            return text, None
        placement = 1 if item["role"] == "user" else 2
        if not any(placement in s.placement and not s.disabled and s.findRegex for s in self.scripts):
            return text, None  # no script for this kind of message: nothing to run
        return text, placement

    def display_text(self, item: dict[str, Any], depth: int, issues: Optional[list[str]] = None) -> str:
        """What the conversation view shows for a transcript item: the display-side scripts (markdownOnly and
        'neither') at the item's depth (0 = newest). A reply carrying a variable snapshot gets MVU's
        ``<StatusPlaceHolderImpl/>`` (the card's display regex turns it into its status bar). ``issues``: warnings
        of the scripts' run are appended. May take long (scripts run): call it off the UI thread. EJS templates in
        the text are evaluated first, with the item's own variables (chat.templates.render_for_display)."""
        text, placement = self._display_source(item)
        if self.templates is not None and has_template(text):
            text = render_for_display(self, text, item)
        if placement is None:
            return text
        return self.scripted(text, placement, depth, "display", issues)

    def display_text_if_known(self, item: dict[str, Any], depth: int) -> Optional[str]:
        """:meth:`display_text` when it needs no script run (nothing to run, or cached in memory or on disk), else
        None. For the UI thread: paint these at once and fill in the rest from a worker (text with templates
        always goes there)."""
        text, placement = self._display_source(item)
        if self.templates is not None and has_template(text):
            return None
        if placement is None:
            return text
        return self.scripted_if_known(text, placement, depth, "display")
