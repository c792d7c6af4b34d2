"""The read side of a chat (:class:`ChatView`): the parts a chat is made of and every read-only query the UI and
the CLI may use — what the chat loaded, the branch's ledger, transcript, branches, the context meter, summaries,
memory search, the prompt inspector, the per-card switches. :class:`facade.Chat` adds the commands.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, cast

from ..beat.loop import Beat
from ..cards import Card
from ..cards.book_links import BookLink, library_book_names
from ..cards.meta import card_frames_trusted
from ..cards.personas import Persona, chosen_for_chat
from ..fsutil import atomic_write_text
from ..ledger.history import LedgerHistory, PatchQuality, RevertPlan
from ..ledger.mvu import MvuState
from ..ledger.panels import panels_from_card
from ..ledger.state import WorldState
from ..llm.sampling import Sampling
from ..llm.types import ChatModel
from ..lore import ActivationResult, Lorebook
from ..lore.books import chat_card_book
from ..lore.settings import BudgetBasis, WorldInfoSettings
from ..macros.tavernhelper import apply_th_macros
from ..memory.chapters import ChapterMemory, merge_results
from ..memory.compaction import BranchMemory, Compactor
from ..messages import message
from ..paths import chat_books_dir
from ..prompt.assemble import HistoryCache, build_injection
from ..prompt.authors_note import AuthorsNote, CharacterNote, character_note, note_on_path, stored_notes
from ..prompt.inspect import beat_of_item, inspect_calls, inspect_scribe
from ..prompt.presets.manager import PromptManager, PromptRow
from ..prompt.presets.model import Preset
from ..prompt.presets.store import PresetReport, describe_preset
from ..prompt.window import ContextWindow
from ..session.branches import Branches
from ..session.transcript import Transcript, TranscriptItems, hidden_turn
from ..session.tree import SessionTree
from ..story.layout import NovelLayout, history_dir, novel_layout, story_dir
from . import group_play, group_vars, recovery, turn
from .agent import AgentDesk
from .context import ChatContext, default_user_name
from .group_display import SpeakerContexts
from .ledger import BranchLedger
from .results import BeatResult, call_tokens
from .world_info import ChatWorldInfo
from .writing_room import CodexEntry, WritingRoom

if TYPE_CHECKING:  # pragma: no cover
    from ..messages import Msg
    from .facade import Chat


class ChatView:
    """An open chat. ``model`` plays the actor; ``scribe_model`` (optional side model) keeps the ledger. Parts:
    ``context`` (:class:`ChatContext`), ``ledger``, ``branches``, ``window`` (tokens), ``agent``; ``tree`` is the
    session (tests and core read it; the UI and CLI use the commands and queries below)."""

    def __init__(self, directory: Path, tree: SessionTree, card: Card, model: ChatModel,
                 scribe_model: Optional[ChatModel] = None, persona: str = "", language: Optional[str] = None,
                 preset: Optional[Preset] = None, persona_obj: Optional[Persona] = None,
                 world_info: Optional[WorldInfoSettings] = None):
        """``preset``: a SillyTavern preset (else the one the header names, from the library); ``persona_obj``:
        the chat's persona (else the one the header stored); ``world_info``: the app's world-info settings, under
        the chat's own overrides from the tree (None: the book's own scan settings, see ``world_info.ChatWorldInfo``)."""
        self.dir, self.tree, self.model, self.scribe_model = Path(directory), tree, model, scribe_model
        self._wi = ChatWorldInfo(tree, world_info)
        window = getattr(model, "context_window", 0)
        self.context = c = ChatContext(self.dir, tree, card, model.name, persona=persona, language=language,
                                       preset=preset, persona_obj=persona_obj,
                                       world_info=self._wi.effective if world_info is not None else None,
                                       constants_budget=lambda p: self._budget_basis(p, window).tokens)
        self._wi.attach(lambda: self.context.book)
        self.ledger = BranchLedger(tree, card, c.mvu_initial)
        self.ledger.preset_of = lambda: self.context.preset  # TavernHelper's preset-scope variables
        self.branches = Branches(tree)
        self._transcript = Transcript(tree, self.branches, c.mvu_initial, lambda raw: MvuState.from_any(raw).to_dict())
        # the ChatModel protocol has no context size; a configured client carries one (llm.providers)
        self.window = ContextWindow(getattr(model, "context_window", 0))
        self._history = HistoryCache(c.language)
        self.window.language = c.language
        self.compactor = Compactor(tree, self.window, self.history, self.context_usage)
        self.memory = BranchMemory(tree)
        self.chapter_memory = ChapterMemory(story_dir(self.dir, c.language))  # agent mode: the book's own text (issue 28)
        self.agent = AgentDesk(self.dir, tree, card, c.ctx)
        self.agent.language = c.language
        #: the writing room (issue 19): outline, threads, codex, progress; its blocks join the agent state block
        self.writing = WritingRoom(self.dir, tree, lambda: self.agent.history_log, lambda: self.context.book)
        self.agent.extra_blocks = self.writing.state_blocks
        self.writing.language = c.language
        self.running: Optional[Beat] = None
        self.pending_finish: Optional[Callable[[], Awaitable[BeatResult]]] = None
        self.last_activation: Optional[tuple[ActivationResult, int]] = None
        #: notices for the next beat's activity list (e.g. the preset changed: the cached prefix is rebuilt once)
        self.pending_notices: list[str] = []
        #: a group chat's speaker of the next reply and its state-block scope (chat/group_play.py); None otherwise
        self.speaker: Optional[str] = None
        self.state_filter: Optional[Callable[[WorldState], WorldState]] = None
        self._speaker_contexts = SpeakerContexts()  # a group chat's messages shown with their speakers' cards
        group_vars.follow_last_speaker(self)  # a group chat's MVU variables: the last speaker's card's, until a beat
        self._note: Any = False  # the Author's Notes (all settings, leaf, the leaf's note), read on first use (authors_note)

    def write_meta(self) -> None:
        """Rewrite ``meta.json`` (mode, leaf, title, card, updated ms); a cache, so a refused write is ignored."""
        meta = {"mode": self.mode, "leaf": self.tree.leaf_id, "title": self.tree.header.title,
                "card": self.card.name, "updated": int(time.time() * 1000)}
        try:
            atomic_write_text(self.dir / "meta.json", json.dumps(meta, ensure_ascii=False, indent=1))
        except OSError:
            pass
    # -- what the chat loaded (read-only) -------------------------------------------------------------------
    card = property(lambda self: self.context.card, doc="The chat's card.")
    persona = property(lambda self: self.context.persona, doc="The user's name in this chat ({{user}}).")
    user_label = property(lambda self: "" if self.context.persona == default_user_name(self.context.language)
                          else self.context.persona,
                          doc="The name to show on the user's turns: the persona's, or '' when none is set (the front "
                              "end then shows its own 'you' in the window's language, issue 32).")
    book = property(lambda self: self.context.book, doc="The merged world books (card, attached, global).")
    ctx = property(lambda self: self.context.ctx, doc="The chat's macro context.")
    prompter = property(lambda self: self.context.prompter, doc="The preset prompter, or None without a preset.")
    scripts = property(lambda self: self.context.scripts, doc="The card's regex scripts that run ([] unless allowed).")
    system = property(lambda self: self.context.system, doc="The system prompt (byte-stable across beats).")
    mode = property(lambda self: self.tree.header.mode, doc="roleplay | agent (fixed at creation).")
    tokens = property(lambda self: self.window.tokens, doc="The calibrated token counter.")
    dropped = property(lambda self: self.window.dropped, doc="History messages the last prompt left out.")

    @property
    def load_warnings(self) -> list[str]:
        """What opening found wrong: damaged session lines, a missing preset, the card's [InitVar] problems, stored
        world-info settings this version cannot use."""
        return self.tree.load_warnings + self.context.warnings + self._wi.warnings

    @property
    def context_window(self) -> int:
        """The model's context size in tokens (settable: the provider's setting)."""
        return self.window.window

    @context_window.setter
    def context_window(self, value: int) -> None:
        self.window.window = int(value)

    @property
    def compaction_share(self) -> float:
        """Compaction starts above this share of the window (settable: settings' compaction_share; 0 = never)."""
        return self.window.share

    @compaction_share.setter
    def compaction_share(self, value: float) -> None:
        self.window.share = float(value)

    # -- preset and sampling (issue 14 §3) -------------------------------------------------------------------
    #: the active connection profile's sampling (``AppSettings.profile_sampling``), set by the front end; not saved
    profile_sampling: Optional[Sampling] = None

    def preset_name(self) -> str:
        """The name of the chat's preset in the preset library ("" = none)."""
        p = self.context.preset
        return p.name if p is not None else ""

    def sampling_overrides(self) -> Sampling:
        """The chat's own sampling overrides (empty = none)."""
        return self.context.sampling_overrides.model_copy()

    def sampling(self) -> Sampling:
        """The sampling the actor's calls send: the chat's overrides over the connection profile's over the
        preset's (:mod:`llm.sampling`)."""
        base = self.context.preset_sampling
        if self.profile_sampling is not None:
            base = self.profile_sampling.over(base)
        return self.context.sampling_overrides.over(base)

    def preset_report(self, provider: Optional[str] = None) -> Optional[PresetReport]:
        """What the chat's preset does here (mapping, repairs, sampling sent and not sent, for the chat model's
        provider kind unless ``provider`` is given), or None without a preset."""
        p = self.context.preset
        if p is None:
            return None
        kind = getattr(self.model, "provider", None)  # an OpenAIChatModel's provider kind; a replay has none
        return describe_preset(p, provider or (kind if isinstance(kind, str) else "other"))

    def _chat(self) -> "Chat":
        """This chat as the :class:`~.facade.Chat` the turn's functions take."""
        # The cast holds: ChatView is only ever made as the base of Chat (core.chat.facade), never on its own.
        return cast("Chat", self)

    # -- read-only queries ----------------------------------------------------------------------------------
    def history(self) -> HistoryCache:
        """The prompt history of the active branch (incrementally cached), without the messages hidden from the
        prompt (``Chat.set_hidden``, issue 26)."""
        hidden = getattr(self, "hidden_messages", None)
        if hidden:
            return self._history.update([e for e in self.tree.path_to() if e.id not in hidden])
        return self._history.update(self.tree.path_to())

    def current_state(self) -> WorldState:
        """The ledger of the active branch (its latest rp-state), or an empty one."""
        return self.ledger.state()

    def ledger_entry(self) -> Optional[Any]:
        """The newest ledger snapshot on the branch (``state``, ``applied``, ``warnings``, ``source``), or None."""
        return self.ledger.latest()

    def current_mvu(self) -> Optional[MvuState]:
        """The card's variable tree on the active branch, or None when the card has none."""
        return self.ledger.mvu()

    def frame_variables(self) -> dict[str, dict[str, Any]]:
        """The chat / character / global variable tables status-bar frames wrote on the active branch
        (``{scope: table}``; a scope never written is absent) — for the view's frame context."""
        return self.ledger.frame_variables()

    def ledger_history(self, path: Optional[str] = None) -> LedgerHistory:
        """Issue 33, the ledger timeline of the shown branch: per beat the changes of world state, roster, presence,
        threads and variables (path, old → new, who, the scribe's reason), only paths starting with ``path``; and
        the numeric leaves' values per beat (core.ledger.history)."""
        return self.ledger.history(path)

    def patch_quality(self) -> PatchQuality:
        """Issue 33: the scribe's patches on the shown branch — applied, refused by the guards, reverted or
        overridden by hand by the user (counts)."""
        return self.ledger.patch_quality()

    def ledger_revert_plan(self, beat: int, path: Optional[str] = None) -> RevertPlan:
        """What :meth:`Chat.revert_ledger_change` would set back (beat ``beat``'s change to ``path``, None = all of
        the beat's) and the later beats' changes it overwrites (conflicts, to show before applying). ValueError
        when the beat changed nothing there."""
        return self.ledger.revert_plan(beat, path)

    def current_panels(self) -> list[Any]:
        """The card's panels with their data on the active branch ([] when the card declares none)."""
        return self.ledger.panels()

    def prepare(self, user_text: str) -> tuple[str, list[str], list[Any], WorldState, Any]:
        """Injection, activated titles, first-call messages, ledger and previous beat for ``user_text``."""
        return turn.prepare(self._chat(), user_text)

    def lore_reasons(self) -> list["Msg"]:
        """Why each entry of the last world-info activation fired, one line each."""
        return turn.lore_reasons(self._chat())

    # -- world-info settings (issue 14 §1) ------------------------------------------------------------------------
    def world_info_settings(self) -> WorldInfoSettings:
        """The world-info settings this chat activates lore with: the app's, under the chat's overrides (a copy)."""
        return self._wi.effective.model_copy()

    def world_info_budget_basis(self) -> BudgetBasis:
        """What this chat's world-info budget is computed from and the budget in tokens
        (:meth:`WorldInfoSettings.budget_basis`): the preset's context size minus its reply length when the chat's
        preset sets one (SillyTavern's rule), else the chat's context window. For the world-info settings page and
        the beat's activation."""
        return self._budget_basis(self.context.preset, self.context_window)

    def _budget_basis(self, preset: Optional[Preset], window: int) -> BudgetBasis:
        """:meth:`world_info_budget_basis` for ``preset`` and a context ``window`` (tokens)."""
        return self._wi.effective.budget_basis(window, preset.openai_max_context if preset is not None else None,
                                               preset.openai_max_tokens if preset is not None else None,
                                               preset.name if preset is not None else "")

    def authors_note(self) -> AuthorsNote:
        """The Author's Note of the shown branch (``prompt.authors_note``, kept per branch; an empty note when it has
        none), a copy. The settings are read from the tree once per open (then kept by :meth:`Chat.set_authors_note`);
        the branch's note is looked up once per leaf (O(branch length))."""
        if self._note is False:
            self._note = (stored_notes(self.tree), None, None)
        notes, leaf, note = self._note
        if leaf != self.tree.leaf_id:
            note = note_on_path(notes, self.tree.path_to())
            self._note = (notes, self.tree.leaf_id, note)
        return (note or AuthorsNote()).model_copy()

    def last_reply_id(self) -> Optional[str]:
        """The id of the shown branch's newest reply when nothing came after it but its ledger (the reply 「继续」
        can continue), else None (no reply yet, the user spoke after it, or an unfinished beat is pending)."""
        for e in reversed(self.tree.path_to()):
            if e.type == "assistant":
                return e.id if e.sealed and self.pending_draft() is None else None
            if e.type in ("user", "beat", "opening"):
                return None
        return None

    def character_note(self) -> Optional[CharacterNote]:
        """The card's Character's Note (``extensions.depth_prompt``: prompt, depth, role) as the prompt uses it, or
        None; read-only here (it belongs to the card)."""
        return character_note(self.card.extensions)

    def world_info_overrides(self) -> dict[str, Any]:
        """The chat's own world-info overrides (SillyTavern names → values; {} = the app's settings apply)."""
        return dict(self._wi.overrides)

    @property
    def world_info_defaults(self) -> WorldInfoSettings:
        """The app's world-info settings this chat starts from (settable: ``AppSettings.world_info`` after the
        settings page saved; the chat's overrides stay on top)."""
        return self._wi.defaults.model_copy()

    @world_info_defaults.setter
    def world_info_defaults(self, value: WorldInfoSettings) -> None:
        self._wi.set_defaults(value)

    def display_text(self, item: dict[str, Any], depth: int, issues: Optional[list[str]] = None) -> str:
        """A transcript item as shown (display-side regex scripts at ``depth``, 0 = newest). Runs the card's
        scripts when the result is not cached, which can take long: the window calls it from a worker thread.
        ``issues``: the scripts' warnings (a timed-out script, a bad pattern) are appended."""
        ctx = self._speaker_contexts.get(self, item) or self.context  # a group reply: its speaker's card
        return self._th_display(item, ctx.display_text(item, depth, issues))

    def display_text_if_known(self, item: dict[str, Any], depth: int) -> Optional[str]:
        """:meth:`display_text` when no script has to run for it (no scripts, or the result is cached in memory or
        in the chat's display cache on disk), else None. Cheap: for painting at once on the UI thread."""
        ctx = self._speaker_contexts.get(self, item, build=False)
        known = ctx.display_text_if_known(item, depth) if ctx is not None else None
        return None if known is None else self._th_display(item, known)

    def _th_display(self, item: dict[str, Any], text: str) -> str:
        """TavernHelper's ``{{get_message_variable::…}}`` family replaced in a display text (issue 13 §3): the
        message scope is the item's own snapshot, the others the tables status bars wrote on the branch."""
        if "_variable::" not in text:
            return text
        frame: list[dict[str, Any]] = []

        def lookup(scope: str) -> Any:
            if scope == "message":
                return item.get("variables")
            if not frame:
                try:
                    frame.append(self.ledger.frame_variables())
                except Exception:  # read from the display worker while a beat writes: show nulls, never fail
                    frame.append({})
            return frame[0].get(scope)

        return apply_th_macros(text, self.ctx, lookup)

    def transcript(self, start: int = 0, stop: Optional[int] = None) -> list[dict[str, Any]]:
        """The conversation view's items for the active branch (session.transcript)."""
        return self._transcript.items(start, stop)

    def transcript_page(self, end: Optional[int] = None, count: int = 60) -> tuple[int, int, list[dict[str, Any]]]:
        """``(first, total, items)``: one page of :meth:`transcript` ending at ``end`` (default: the newest)."""
        return self._transcript.page(end, count)

    def transcript_items(self, page: int = 60) -> TranscriptItems:
        """The transcript as a lazy read-only sequence (the newest ``page`` items built at once)."""
        return TranscriptItems(self._transcript, page)

    def swipe_info(self, entry_id: str) -> tuple[int, int]:
        """(index, count) of a transcript item's alternatives (1-based; (1, 1) without any)."""
        return self.branches.swipe_info(entry_id)

    def branch_tree(self) -> list[dict[str, Any]]:
        """The navigator's nodes (session.branches.Branches.navigator)."""
        return self.branches.navigator()

    def pending_draft(self) -> Optional[Any]:
        """The unfinished beat at the branch tip (``draft``, ``draft_version``, ``outcome``), or None."""
        return self.branches.pending_draft()

    def ledger_gaps(self) -> list[str]:
        """Ids of the sealed replies on the shown branch whose ledger snapshot a crash cut off, oldest first
        (chat.recovery; ``Chat.repair_ledger`` fills them in)."""
        return [e.id for e in recovery.ledger_gaps(self.tree)]

    def unanswered(self) -> Optional[Any]:
        """The user's words at the branch tip that a crash left without a reply (``id``, ``text``), or None
        (chat.recovery): show them so the user can resend (``regenerate``), edit (``edit_user``) or drop them
        (``drop_unanswered``). A group chat's hidden turn is never the user's words: :meth:`cut_turn`."""
        left = recovery.unanswered(self.tree)
        return None if left is None or hidden_turn(left) else left

    def cut_turn(self) -> Optional[str]:
        """The member (card name; "" when unknown) whose follow-up reply in a group chat a crash cut off, or None
        (chat/group_play.py ``cut_turn``): offer to let them reply (``regenerate``) or drop the turn
        (``drop_unanswered``)."""
        return group_play.cut_turn(cast("Chat", self))

    def latest_beat(self) -> Optional[Any]:
        """The newest beat entry on the shown branch (``draft``, ``draft_version``, ``outcome``), or None."""
        return self.tree.latest("beat")

    def last_beat_tokens(self) -> Optional[dict[str, Any]]:
        """Token accounting of the newest beat on the branch from its call logs, or None without a beat."""
        beat = self.latest_beat()
        return call_tokens(beat.calls) if beat is not None else None

    def books_folder(self) -> Path:
        """The folder of the world books attached to this chat (``<chat>/世界书``, or ``world-books`` in an
        English-layout data folder, :func:`core.paths.chat_books_dir`; it need not exist)."""
        return chat_books_dir(self.dir)

    def card_book(self) -> Lorebook:
        """The card's own world book (not the merged one: :attr:`book`), for the editor: this chat's copy of it when
        one was saved (the card file was read-only), else the card's."""
        return chat_card_book(self.dir) or self.card.lorebook

    def linked_books(self) -> list[BookLink]:
        """The card's linked library world books (SillyTavern's character lore) and what each does in this chat:
        read, global already, the chat's own copy, carried embedded, missing (cards.book_links), as the chat loaded
        them (no file is read here)."""
        return list(self.context.book_links)

    def library_book_names(self) -> list[str]:
        """The library's world books a card can be linked to (global and not active), sorted."""
        return library_book_names()

    def card_book_writable(self) -> bool:
        """Whether the card's own book can be saved back into its card file (else ``save_card_book`` keeps a copy
        for this chat)."""
        p = Path(self.card.path) if self.card.path else None
        return p is not None and p.is_file() and os.access(p, os.W_OK) and p.suffix.lower() == ".json"

    def persona_info(self) -> dict[str, Any]:
        """This chat's persona: ``{"name": the user's name, "description": str, "id": the persona chosen for this
        chat in the persona library or None (the chat plays the persona it was created with)}``."""
        p = self.context.persona_obj
        chosen = chosen_for_chat(self.dir)
        return {"name": self.persona, "description": p.description if p is not None else "",
                "id": chosen.id if chosen is not None else None}

    def sealed_beat_count(self) -> int:
        """Beats on the branch that ended sealed (or revised the previous reply)."""
        return self.branches.sealed_beat_count()

    def last_user_text(self) -> Optional[str]:
        """The branch's last user message, or None when there is none; "" when the branch's last turn is a group
        chat's hidden turn (a member's follow-up: there is a turn to play again or undo, but no words of the user's
        to give back)."""
        user = self.tree.latest("user")
        return None if user is None else "" if hidden_turn(user) else user.text

    def entry_text(self, entry_id: str) -> str:
        """The stored text of a message entry. Raises KeyError for an unknown id."""
        e = self.tree.get(entry_id)
        return e.text if e.type in ("user", "assistant", "opening", "revision", "summary") else ""

    def entry_kind(self, entry_id: str) -> str:
        """The type of a session entry ("user", "assistant", "opening", …) — e.g. what editing it means (a reply
        becomes a new version, a user message is played again on a new branch). Raises KeyError for an unknown id."""
        return str(self.tree.get(entry_id).type)

    def preset_prompt_rows(self, manager: PromptManager) -> list[PromptRow]:
        """``manager``'s prompts as SillyTavern's Prompt Manager lists them, counted for this chat: its calibrated
        token counter, each prompt rendered with this chat's card, books and persona, and the chat-history marker
        counting this branch's messages (core/prompt/presets/manager.py ``PromptManager.rows``)."""
        return manager.rows(self.tokens, self.context, self.history().prompt_messages())

    def find_entry(self, prefix: str) -> str:
        """The one entry id that starts with ``prefix``; ValueError when none or several match (or it is empty)."""
        if not prefix.strip():
            raise ValueError(message("entry.empty_id"))
        hits = [i for i in self.tree.entries if i.startswith(prefix) and self.tree.entries[i].type != "leaf"]
        if len(hits) != 1:
            raise ValueError(message("entry.not_found" if not hits else "entry.ambiguous", id=prefix))
        return hits[0]

    def opening(self) -> Optional[str]:
        """The opening on the shown branch, or None."""
        e = self.tree.latest("opening")
        return e.text if e is not None else None

    def context_usage(self) -> dict[str, Any]:
        """The context meter ``{"used", "window", "share"}`` in tokens for the next prompt (prompt.window)."""
        w = self.window
        system = self.agent.system() if self.mode == "agent" else self.system
        if w.tokens.observed == 0:
            w.calibrate_from_tree(self.tree, system)
        h = self.history()
        def injection() -> str:
            return build_injection(self.current_state(), [], self.book.index_titles(), self.context.language,
                                   memory_hint=bool(h.summaries))

        return w.usage((self.tree.leaf_id, len(self.tree.order), self.mode), system, h, injection)

    def warm_up(self) -> None:
        """Prepare what the first beat would otherwise compute (the merged book's matchers and key index,
        ``lore.Lorebook.warm_up``), for a front end's open worker: the first beat of a chat with a 50,000-entry book
        spent ~2 s of CPU there on the UI thread (issue 15 item 12). Changes nothing a query returns; never raises."""
        self.book.warm_up()

    def summaries(self) -> list[dict[str, Any]]:
        """The relay summaries active on the branch, earliest first (memory.compaction)."""
        return self.compactor.summaries()

    def memory_search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """``memory_search`` over the active branch: ``[{"beat", "kind", "snippet", "score"}]``, best first. In
        agent mode the chapter text is searched too (``memory.chapters``: ``{"kind": "chapter", "chapter",
        "file", …}``), merged by each index's own scale."""
        hits = self.memory.search(query, limit)
        if self.mode != "agent":
            return hits
        return merge_results(hits, self.chapter_memory.search(query, limit), limit)

    def search_messages(self, query: str, *, regex: bool = False, all_branches: bool = False, limit: int = 1000,
                        cancelled: Optional[Callable[[], bool]] = None) -> list[Any]:
        """Messages of this chat containing ``query`` (case-insensitive substring; ``regex``: Python syntax run by
        RE2): ``chat.search.SearchHit`` list, the shown branch first in order, other branches' messages with
        ``all_branches`` (``index`` -1). Safe on a worker thread while nothing is sent. Raises ValueError (empty),
        ``re.error`` / ``LinearRegexRefused`` (bad pattern)."""
        from .search import Matcher, search_tree

        return search_tree(self.tree, Matcher(query, regex), self._transcript.layout()[0], all_branches=all_branches,
                           limit=limit, cancelled=cancelled)

    def message_index(self, entry_id: str) -> int:
        """The place of a message in the shown branch's transcript (0 = the opening; -1 when not on it)."""
        ids = self._transcript.layout()[0]
        for k in range(len(ids) - 1, -1, -1):
            if ids[k] == entry_id:
                return k
        return -1

    def inspect_beat(self, entry_id: str) -> list[dict[str, Any]]:
        """Every model call of the beat behind a transcript item exactly as sent, then the scribe's call
        (prompt.inspect). Raises KeyError/ValueError for an item without model calls."""
        beat = beat_of_item(self.tree, entry_id)
        agent = self.mode == "agent"
        system = self.agent.system() if agent else (group_play.system_for_beat(self, beat) or self.system)  # type: ignore[arg-type]
        calls = inspect_calls(self.tree, beat, system)
        sc = inspect_scribe(self.tree, beat, persona=self.persona, char=self.card.name,
                            card_panels=panels_from_card(self.card)[0], mvu_initial=self.context.mvu_initial,
                            mvu_rules=self.context.mvu_rules, agent=agent, model_name=(self.scribe_model or self.model).name)
        return calls + ([sc] if sc is not None else [])

    def chapter_turn(self, file: str) -> Optional[str]:
        """The agent turn on the shown branch that last wrote chapter ``file`` (issue 28: its context record — the
        state block with the summaries, codex entries and outline it carried, every call as sent — is one click from
        the chapter, through :meth:`inspect_beat`): that turn's user entry id, or None when no turn of this branch
        wrote it (imported, or written by hand). Renames are followed back to the name the turn wrote."""
        if not history_dir(self.dir, self.context.language).is_dir():
            return None
        users = {e.id for e in self.tree.path_to() if e.type == "user"}
        cps = self.agent.history_log.checkpoints()
        name = file
        if cps and file not in cps[-1].files:  # renamed since the last checkpoint: the same bytes under another name
            try:
                sha = hashlib.sha256((story_dir(self.dir, self.context.language) / file).read_bytes()).hexdigest()
            except OSError:
                sha = ""
            name = next((n for n, h in cps[-1].files.items() if h == sha), file)
        for cp in reversed(cps):
            ch = cp.changed
            if cp.turnId in users and (name in ch.added or name in ch.modified):
                return cp.turnId
            for r in ch.renamed:
                if r.get("to") == name:
                    name = r.get("from", name)
        return None

    def script_scopes(self) -> list[Any]:
        """The chat's TavernHelper script scopes (issue 27; ``cards.th_scripts.chat_script_scopes``): its preset's
        scripts (with the preset library's record), then its card's — each with the user's answer and switches."""
        from ..cards.th_scripts import chat_script_scopes
        from ..prompt.presets.store import presets_dir

        return chat_script_scopes(self.card, self.context.preset, presets_dir())

    def scripts_allowed(self) -> bool:
        """Whether the card's regex scripts run in this chat now: allowed beside the card (cards.meta) or for this
        open chat only (``set_scripts_allowed(True, remember=False)``)."""
        return self.context.scripts_on

    def trusted(self) -> bool:
        """Whether the card's status bars are trusted (cards.meta)."""
        return card_frames_trusted(self.card)

    # -- the writing room (issue 19; chat.writing) ------------------------------------------------------------
    def novel_layout(self) -> NovelLayout:
        """The names this chat's novel has on disk (issue 32, ``story.layout.NovelLayout``: ``story`` the chapter
        folder, ``outline`` the outline file, ``history`` the checkpoint folder): ``正文``/``大纲.md``/``历史``, or
        ``chapters``/``outline.md``/``history`` for a new novel in English; what is on disk wins."""
        return novel_layout(self.dir, self.context.language)

    def outline(self) -> Optional[Any]:
        """The chat's outline (``大纲.md``) parsed (``story.outline.Outline``: volumes → chapters with status,
        target, linked file, beats), or None when there is none."""
        return self.writing.outline()

    def threads(self) -> list[Any]:
        """The foreshadowing threads of the active branch (``ledger.threads.Thread``; planting order, closed ones
        included)."""
        return self.writing.threads()

    def codex(self, name: Optional[str] = None) -> list[CodexEntry]:
        """The codex of the active branch: each roster name (or only ``name``) with its facts (scoped from a
        chapter), first appearance, mentions per chapter file and lore entry (``chat.writing_room.CodexEntry``).
        The first call reads and scans every chapter (about 0.5 s for 3 M characters: run it off the UI thread);
        later calls re-scan only changed files."""
        return self.writing.codex(self.current_state(), name)

    def mentions(self, name: str, limit: Optional[int] = None) -> list[Any]:
        """Every mention of roster ``name`` (aliases included) in the chapter files, book order
        (``story.mentions.Mention``: file, UTF-16 offset, length)."""
        return self.writing.mentions(self.current_state(), name, limit)

    def aliases(self) -> dict[str, list[str]]:
        """The codex alias lists (canonical name → aliases)."""
        return self.writing.aliases()

    def outline_deletion_preview(self, kind: str, ref: "str | int", index: int = 0) -> Any:
        """What deleting an outline ``volume`` / ``chapter`` / ``beat`` would lose (``story.outline_tree.
        DeletionPreview``: chapters, beats, note lines, linked files), nothing changed. Raises ToolError."""
        return self.writing.deletion_preview(kind, ref, index)  # type: ignore[arg-type]

    def unlinked_chapter_files(self) -> list[str]:
        """The chapter files no outline chapter links (the binder's 「大纲外的章节」), by name."""
        return self.writing.unlinked_files()

    def chapter_reached(self) -> Optional[int]:
        """现在写到: the furthest chapter written on the active branch (1-based), or None when nothing is."""
        return self.writing.chapter_reached()

    def mentions_in(self, file: str) -> dict[str, int]:
        """{codex name: mentions} in chapter ``file`` (what the editor highlights; offsets with :meth:`mentions`)."""
        return self.writing.mentions_in(self.current_state(), file)

    def writing_progress(self) -> Any:
        """字数 per chapter / volume / book, targets from the outline, daily counts (``story.progress.Progress``).
        Counts are cached by content hash on disk; the first call on a big book reads every chapter and checkpoint
        blob (run it off the UI thread)."""
        return self.writing.progress()

