"""A chat: one session tree + its card + the models, and the one public command per user action that the UI and
the CLI call. Data on disk (docs/architecture.md): ``<chat dir>/session.jsonl`` is the source of truth;
``meta.json`` is a cache (mode, active leaf, title) rewritten after every command.

:class:`Chat` holds no engine logic of its own; it routes to the parts: the loaded context (:mod:`.context`), the
turn and the pipeline after it (:mod:`.turn`, :mod:`.pipeline`), agent mode (:mod:`.agent`), the branch ledger
(:mod:`.ledger`), branches and transcript (``session.branches``/``session.transcript``), the context window
(``prompt.window``), compaction and memory (``memory.compaction``), the inspector (``prompt.inspect``), the per-card
switches (``cards.meta``) and export (``story.export``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional

from ..beat.draft import Draft
from ..beat.events import BeatFinished, DraftChanged
from ..beat.loop import EventSink
from ..beat.tools.context import AskHandler
from ..cards import Card, CardError, load_card
from ..cards.edit import card_stamp, edited_notice, edited_since
from ..cards.meta import (
    card_allowed_sites,
    set_card_frames_trusted,
    set_card_linked_books,
    set_card_scripts_allowed,
    set_card_site_allowed,
)
from ..cards.personas import Persona, load_personas, save_personas
from ..cards.update_diff import CardDiff, card_update_diff
from ..fsutil import atomic_write_bytes, atomic_write_text
from ..ledger.history import RevertPlan
from ..ledger.state import WorldState
from ..llm.sampling import Sampling
from ..llm.types import ChatModel
from ..lore import Lorebook
from ..lore.books import CARD_BOOK_COPY
from ..lore.settings import WorldInfoSettings
from ..macros import apply_macros
from ..messages import CATALOG, action, message
from ..prompt.assemble import opening_text
from ..prompt.authors_note import AuthorsNote, continue_nudge, impersonation_prompt, note_anchor
from ..prompt.presets.model import Preset
from ..prompt.presets.store import load_installed_preset
from ..session.entries import AssistantEntry
from ..session.tree import SessionTree
from ..story.checkpoint_model import Checkpoint
from ..text import utf16_len
from . import book_update, card_keep, group_play, recovery, turn
from .agent import RestoreResult
from .changes import BEAT, COMMAND_CHANGES, EVERYTHING, NOTHING, Changes, notices
from .context import ChatContext, default_user_name, keep_preset
from .folder import export_story
from .pipeline import emit, run_scribe_step
from .prose_mode import PROSE_LIMITS, prose_mode
from .results import BeatResult, SessionWriteError
from .review import ChapterReview
from .view import ChatView

#: What the window and the CLI say after :meth:`Chat.edit_reply` (one line; the catalog entry "chat.reply_edited").
REPLY_EDIT_NOTE = CATALOG["chat.reply_edited"]["zh"]


class Chat(ChatView):
    """An open chat: :class:`ChatView`'s parts and queries plus one public method per user command (send,
    regenerate, continue, seal as is, select / swipe / undo / edit a message, restore a checkpoint, edit the ledger
    or a summary, the card's switches, export). Construct with :meth:`create` or :meth:`open`."""

    _hidden: Optional[frozenset[str]] = None  # hidden_messages, read from the tree on first use

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        #: what the last command changed (core/chat/changes.py; the session broadcasts it after each command)
        self.last_changes: Changes = NOTHING
        #: the card file as this chat read it (cards.edit.card_stamp): an edit is noticed at the next beat
        self._card_stamp = card_stamp(self.card.path) if self.card.path else None
        #: chapter review (issue 19 §4, chat.review): accepted findings join the agent state block as 【审稿意见】
        self.review = ChapterReview(self)
        self.agent.extra_blocks = self.review.wrap_blocks(self.agent.extra_blocks)

    @staticmethod
    def declared_changes(command: str) -> Changes:
        """The notice the command named ``command`` declares (core/chat/changes.py ``COMMAND_CHANGES``): what a
        caller broadcasts when it needs the notice of one command rather than the last one run. KeyError for a
        name that is not a command."""
        return COMMAND_CHANGES[command]

    # -- creating / opening ---------------------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, card: Card, model: ChatModel, *, mode: str = "roleplay", persona: str = "",
               title: str = "", scribe_model: Optional[ChatModel] = None, preset: Optional[Preset] = None,
               persona_obj: Optional[Persona] = None, world_info: Optional[WorldInfoSettings] = None,
               **header_extra: Any) -> "Chat":
        """Create a chat folder with its session tree (header + opening). The header keeps what :meth:`open` reads
        back: mode, card, persona (name, description, placement), the preset's name (the preset itself is copied
        into the preset library). ``world_info``: the app's world-info settings (None: the card book's own).
        ``header_extra`` goes into the header too (e.g. ``demo=True``). Raises SessionError if a session exists,
        OSError when the disk refuses."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        persona = persona or (persona_obj.name.strip() if persona_obj is not None else "") or card.persona_name \
            or default_user_name(card.language)
        if preset is not None:
            header_extra["preset"] = keep_preset(preset)
        if persona_obj is not None:
            header_extra["persona_detail"] = persona_obj.model_dump(include={"name", "description", "position", "depth", "role"})
            if persona_obj.description:
                header_extra["persona_description"] = persona_obj.description
        tree = SessionTree.create(directory / "session.jsonl", mode=mode, card=card.path, card_name=card.name,
                                  persona=persona, title=title or directory.name, **header_extra)
        chat = cls(directory, tree, card, model, scribe_model, persona, preset=preset, persona_obj=persona_obj,
                   world_info=world_info)
        if card.first_mes.strip() and mode != "agent":  # agent mode: the conversation is discussion, not story
            # a greeting's variable commands and <initvar> override give its swipe its own values (chat.ledger)
            books = chat.context.mvu_other_books
            first = chat.ledger.add_opening(opening_text(card, chat.ctx, chat.context.language), books)
            for alt in card.alternate_greetings:  # SillyTavern: the alternate greetings are swipes of message 0
                if alt.strip():
                    chat.ledger.add_opening(opening_text(card, chat.ctx, chat.context.language, alt), books, first.parent_id)
            tree.set_leaf(chat.branches.tip(first.id))
        tree.persist_leaf()
        book_update.note_baseline(book_update.chat_links(chat), directory, tree)  # issue 33 §4: the books it starts with
        chat.write_meta()
        return chat

    @classmethod
    def create_group(cls, directory: Path, group: Any, model: ChatModel, **kw: Any) -> "Chat":
        """A new group chat (issue 31) for ``group`` (``core.group.Group``): see ``chat/group_play.py``."""
        return group_play.create(cls, directory, group, model, **kw)

    @classmethod
    def open(cls, directory: Path, card: Card, model: ChatModel, scribe_model: Optional[ChatModel] = None,
             preset: Optional[Preset] = None, persona_obj: Optional[Persona] = None,
             world_info: Optional[WorldInfoSettings] = None) -> "Chat":
        """Open a chat folder: the tree (damaged lines skipped), and everything its header names — persona,
        preset (from the library unless ``preset`` is given), attached world books, the card's switches, the chat's
        world-info overrides over ``world_info`` (the app's settings; None: the card book's own); what is missing is in
        :attr:`load_warnings`. Raises SessionError / OSError."""
        library_card, card = card, card_keep.kept_card(Path(directory), card)  # 「保持旧版」 (issue 33 §4)
        tree = SessionTree.open(Path(directory) / "session.jsonl",
                                rebuild_header=lambda: recovery.header_fields(Path(directory), card))
        note = recovery.recover_draft(tree, Path(directory))  # a beat killed mid-draft: its draft, offered back
        if note:
            tree.load_warnings.append(note)
        chat = cls(Path(directory), tree, card, model, scribe_model,
                   preset=preset, persona_obj=persona_obj, world_info=world_info)
        if card is library_card and tree.order and edited_since(card.path, tree.get(tree.order[-1]).ts):
            chat.pending_notices.append(edited_notice(card.name))
        book_update.note_baseline(book_update.chat_links(chat), chat.dir, tree)  # books it reads and never recorded
        chat.write_meta()
        return chat

    def close(self) -> list[Any]:
        """Let go of everything this chat holds and return it (its parts: the session tree, the caches, the loaded
        card and books, the models) for the caller to drop — the window drops them on a worker thread, a slice at a
        time (ui/infra/work.py ``release``), because freeing a 100,000-message chat's ~800,000 objects takes ~0.5 s.

        Why: the parts point back at the chat (callbacks, bound methods), so a replaced chat is one big reference
        cycle that only a full pass of the interpreter's cyclic collector could free — a pause proportional to
        everything in memory. Emptying the chat's attributes breaks those cycles: reference counting frees the rest
        as soon as the returned list goes. Nothing is written (every command already saved what it changed). The
        chat cannot be used afterwards (its attributes are gone); only :attr:`dir` and ``closed`` stay. Idempotent."""
        if vars(self).get("closed"):
            return []  # closed already
        if self.running is not None:
            self.running.stop()
        directory = self.dir
        parts = list(vars(self).values())
        vars(self).clear()
        self.dir, self.closed = directory, True
        return parts

    # -- commands -------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the running beat, if any (the draft so far is kept)."""
        if self.running is not None:
            self.running.stop()

    def _user(self, text: str, parent_id: Optional[str] = None) -> None:
        """Put the user's words on disk before the first model call (SessionWriteError and a rollback if not)."""
        mark = self.tree.pending_mark()
        self.tree.append("user", parent_id=self.tree.leaf_id if parent_id is None else parent_id, text=text)
        try:
            self.tree.commit()
        except OSError as e:
            self.tree.rollback(mark)
            raise SessionWriteError(e) from e

    @notices(BEAT)
    async def send(self, user_text: str, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None,
                   max_rounds: Optional[int] = None, speaker: Optional[str] = None,
                   chapter: Optional[str] = None) -> BeatResult:
        """Play one beat for ``user_text`` and store it. Model failures end it with ``outcome="error"``; raises
        SessionWriteError (nothing played) or BeatSaveError (played, not saved) when the disk refuses. Words a
        crash left unanswered (:meth:`unanswered`) are never sent along silently: the new words go beside them
        (a sibling; the old ones stay on their own branch). A group chat first picks who answers (``speaker``: a
        member the user chose; chat/group_play.py), ValueError when nobody can. ``chapter`` (agent mode, issue 30
        §5): the reply *is* that chapter file's text — no tools are offered, and the answer is written to the file
        (created or replaced) before the turn's checkpoint, so a model that only talks can still write a book;
        ToolError for a name that is not a chapter file."""
        group_play.prepare(self, user_text, speaker)
        if chapter is not None:
            chapter = turn.reply_chapter_name(self, chapter)
        left = recovery.unanswered(self.tree)  # the user's words, or a group chat's turn a crash cut
        if left is not None:
            self._user(user_text, left.parent_id)
            return await turn.play(self, user_text, ask, on_event, max_rounds, chapter=chapter)
        self._user(user_text)
        return await turn.play(self, user_text, ask, on_event, max_rounds, chapter=chapter)

    @notices(BEAT)
    async def group_reply(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None,
                          speaker: Optional[str] = None) -> BeatResult:
        """A group chat's next reply without new words from the user (issue 31: the next member the last message
        activated, or an auto-mode turn): chat/group_play.py ``prepare_follow_up``. ValueError when nobody can."""
        return await turn.play(self, group_play.prepare_follow_up(self, speaker), ask, on_event, None)

    @notices(BEAT)
    async def regenerate(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None) -> BeatResult:
        """Play the branch's last user message again: a sibling reply (the old one stays on its branch). Raises
        ValueError with no user message."""
        user = self.tree.latest("user")
        if user is None:
            raise ValueError(message("chat.refuse.nothing_to_regenerate"))
        group_play.prepare_again(self, user.id, user.text)  # a group chat: the same member answers again
        self.tree.leaf_id = user.id
        return await turn.play(self, user.text, ask, on_event, None, how="regenerate")

    @notices(EVERYTHING)
    async def edit_user(self, user_id: str, text: str, ask: Optional[AskHandler] = None,
                        on_event: Optional[EventSink] = None, max_rounds: Optional[int] = None) -> BeatResult:
        """Edit a past user message: the new words start a sibling branch, played there. KeyError for an unknown
        id, ValueError when it is not a user message."""
        old = self.tree.get(user_id)
        if old.type != "user":
            raise ValueError(message("chat.refuse.edit_user_only"))
        self._user(text, old.parent_id)
        return await turn.play(self, text, ask, on_event, max_rounds, how="edit")

    # -- a reply: edit, continue; impersonate (issue 17) ---------------------------------------------------------
    def _reply_slot(self, reply_id: str) -> tuple[Any, Optional[Any]]:
        """(the entry a new version of the reply ``reply_id`` hangs under — its user message, or the opening /
        header for a reply without one —, the ledger snapshot in force after the reply on the active branch: the
        newest ``rp-state`` between it and the next user message that is not aimed at an older message, or None).
        ValueError when ``reply_id`` is not a reply on the shown branch; KeyError for an unknown id."""
        e = self.tree.get(reply_id)
        if e.type != "assistant":
            raise ValueError(message("chat.refuse.reply_only"))
        path = self.tree.path_to()
        at = next((i for i in range(len(path) - 1, -1, -1) if path[i].id == reply_id), None)
        if at is None:
            raise ValueError(message("chat.refuse.reply_off_branch"))
        owner = e
        while owner.parent_id is not None and self.tree.entries[owner.parent_id].type not in ("user", "opening", "header"):
            owner = self.tree.entries[owner.parent_id]
        snap = None
        for x in path[at + 1:]:
            if x.type == "user":
                break
            if x.type == "rp-state" and not getattr(x, "for_message", None):
                snap = x
        return self.tree.get(owner.parent_id), snap

    def _carry(self, snap: Optional[Any]) -> None:
        """Append (at the leaf, uncommitted) a copy of the ledger snapshot ``snap``: a new version of a reply keeps
        the ledger the old one had (it is not recomputed). The copy names its source (``carried_from``) and no
        reply (``covers``), so it covers everything before it (chat.recovery)."""
        if snap is None:
            return
        fields = {k: v for k, v in snap.model_dump().items() if k not in ("id", "parent_id", "ts", "type", "covers")}
        fields.setdefault("carried_from", snap.id)  # a copy of a copy names the first snapshot
        self.tree.append("rp-state", **fields)

    @notices(Changes.of("messages", "branches", "ledger"))
    def edit_reply(self, reply_id: str, text: str) -> str:
        """Edit a reply of the shown branch (the model's final; issue 17): the new text becomes a new version of
        that reply — a sibling attempt under the same user message, so 「◀ n/m ▶」 reaches the old text — and the
        ledger is carried over unchanged (not recomputed from the new words; say so, :data:`REPLY_EDIT_NOTE`).
        The next prompt sends the edited text. Editing an older reply starts the new version there: the later beats
        stay on the old version's branch. Returns the new reply's id. ValueError for an empty text, a message that
        is not a reply or not on the shown branch; KeyError for an unknown id; RuntimeError while a beat runs;
        SessionWriteError when the disk refuses (nothing changed)."""
        self._idle("修改回复")
        if not text.strip():
            raise ValueError(message("chat.refuse.empty_reply"))
        owner, snap = self._reply_slot(reply_id)
        mark = self.tree.pending_mark()
        reply: AssistantEntry = self.tree.append("assistant", parent_id=owner.id, text=text, sealed=True, by="user",
                                                 edit_of=reply_id)
        self._carry(snap)  # a carried snapshot goes below the new reply
        try:
            self.tree.commit()
        except OSError as e:
            self.tree.rollback(mark)
            raise SessionWriteError(e) from e
        self.write_meta()
        return reply.id

    @notices(BEAT)
    async def continue_reply(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None,
                             max_rounds: Optional[int] = None) -> BeatResult:
        """SillyTavern's Continue on the newest sealed reply (:meth:`last_reply_id`): its text becomes the starting
        draft of a continuation beat under the same user message (the ledger carried over as it stood after the
        reply), the model is nudged to write on (the preset's ``continue_nudge_prompt`` first when it has one, then
        how the draft tools do it), and the result is sealed as a new version of that reply (the old one stays a
        swipe away). The scribe reads only the addition. ValueError when there is no reply to continue (or it
        answers no user message); RuntimeError while a beat runs. Not :meth:`continue_beat` (an unsealed draft)."""
        self._idle("续写")
        reply_id = self.last_reply_id()
        if reply_id is None:
            raise ValueError(message("chat.refuse.nothing_to_continue"))
        owner, snap = self._reply_slot(reply_id)
        if owner.type != "user":
            raise ValueError(message("chat.refuse.continue_opening"))
        group_play.prepare_continue(self, reply_id)  # a group chat: the reply's own member writes on
        text = self.history().revisions.get(reply_id, (self.tree.get(reply_id).text, 0))[0]
        self.tree.set_leaf(owner.id)
        self._carry(snap)
        preset = self.context.preset
        nudge = apply_macros(preset.continue_nudge_prompt, self.ctx).strip() if preset and preset.continue_nudge_prompt else ""
        note = (nudge + "\n" if nudge else "") + continue_nudge(self.context.language).format(version=1)
        return await turn.play(self, owner.text, ask, on_event, max_rounds, draft=Draft(text, 1), note=note,
                               how="continue", continues=text)

    @notices(NOTHING)
    async def impersonate(self, on_delta: Optional[Any] = None) -> str:
        """SillyTavern's Impersonate: the model drafts the user's next message in the persona's voice (one
        completion, no tools; the preset's ``impersonation_prompt`` when it has one, else Liyuan's). Returns the
        text for the input box; nothing is sent or written to the chat. Raises ``llm.types.ModelError`` (a failed
        call), RuntimeError while a beat runs."""
        self._idle("代拟")
        preset = self.context.preset
        own = preset.impersonation_prompt if preset is not None else None
        prompt = own if own is not None and own.strip() else impersonation_prompt(self.context.language)
        return await turn.impersonate(self, prompt, on_delta)

    @notices(Changes.of("settings"))
    def set_authors_note(self, note: Optional[AuthorsNote]) -> bool:
        """Set the chat's Author's Note (``prompt.authors_note.AuthorsNote``; None or an empty text = no note),
        kept on the tree as a ``chat-settings`` entry for the shown BRANCH (anchored at its newest user message,
        ``prompt.authors_note.note_anchor``: branches forked after it share it, others keep theirs); the next
        beat's prompt places it (in the chat at its depth, or in the beat's data blocks — never in the system
        prompt). Returns False when nothing changed (nothing written). RuntimeError while a beat runs;
        SessionWriteError when the disk refuses (nothing changed)."""
        self._idle("改作者注")
        new = note if note is not None and note.text.strip() else None
        if (new.model_dump() if new else None) == (self.authors_note().model_dump() if self.authors_note().text.strip() else None):
            return False
        mark = self.tree.pending_mark()
        anchor = note_anchor(self.tree.path_to())
        self.tree.append("chat-settings", parent_id=None, move_leaf=False,
                         authors_note=new.model_dump() if new is not None else {}, authors_note_at=anchor)
        try:
            self.tree.commit()
        except OSError as e:
            self.tree.rollback(mark)
            raise SessionWriteError(e) from e
        notes = self._note[0] if self._note is not False else []
        notes.append((anchor, new.model_copy() if new is not None else None))
        self._note = (notes, None, None)  # looked up again for the shown leaf
        return True

    def _idle(self, what: str) -> None:
        if self.running is not None:
            raise RuntimeError(message("chat.busy", what=action(what)))  # core/messages.py: rendered per language

    @notices(EVERYTHING)
    def select(self, entry_id: str) -> str:
        """Show the branch through ``entry_id`` (the tip below it); only the leaf is written. Returns the new leaf.
        KeyError for an unknown id, RuntimeError while a beat runs."""
        self._idle("切换分支")
        leaf = self.branches.move_to(entry_id)
        self.write_meta()
        return leaf

    @notices(EVERYTHING)
    def swipe(self, entry_id: str, delta: int) -> str:
        """「◀ n/m ▶」: the previous (-1) / next (+1) alternative of a reply or user message, wrapping around."""
        target = self.branches.swipe_target(entry_id, delta)
        return self.tree.active_leaf if target is None else self.select(target)

    @notices(EVERYTHING)
    def undo(self) -> str:
        """「撤销本轮」: the leaf moves back before the last user message (nothing deleted). ValueError when there
        is nothing to undo, RuntimeError while a beat runs."""
        self._idle("撤销")
        target = self.branches.undo_target()
        self.tree.set_leaf(target)
        self.tree.persist_leaf()
        self.write_meta()
        return target

    @notices(EVERYTHING)
    def delete_message(self, entry_id: str) -> str:
        """「删除」 a message of the shown branch together with what follows it (SillyTavern's delete mode marks the
        message and every later one): the leaf moves to just before it — for a user message its parent, for a reply
        its user message (which stays, unanswered, ready for 重来) — and nothing is erased: the old branch stays in
        the session tree, reachable in 分支 (the navigator) and with 「◀ ▶」. Only the leaf is written. Returns the
        new leaf. ValueError for the opening, another kind of entry or a message not on the shown branch; KeyError
        for an unknown id; RuntimeError while a beat runs."""
        self._idle("删除消息")
        e = self.tree.get(entry_id)
        if e.type not in ("user", "assistant"):
            raise ValueError(message("chat.refuse.delete_kind"))
        if all(x.id != entry_id for x in self.tree.path_to()):
            raise ValueError(message("chat.refuse.message_off_branch"))
        owner = e
        while e.type == "assistant" and owner.parent_id is not None \
                and self.tree.entries[owner.parent_id].type not in ("user", "opening", "header"):
            owner = self.tree.entries[owner.parent_id]
        target: Optional[str] = owner.parent_id
        if target is None:
            raise ValueError(message("chat.refuse.no_stop_before"))
        self.tree.set_leaf(target)
        self.tree.persist_leaf()
        self.write_meta()
        return target

    @property
    def hidden_messages(self) -> frozenset[str]:
        """The session entry ids of the messages hidden from the prompt (:meth:`set_hidden`): the ``hidden`` list of
        the newest ``chat-settings`` entry that carries one (for the whole chat), empty when none. Read from the
        tree once, then kept."""
        if self._hidden is None:
            found: frozenset[str] = frozenset()
            for i in reversed(self.tree.order):
                e = self.tree.entries[i]
                if e.type != "chat-settings":
                    continue
                extra = e.model_extra or {}
                if isinstance(extra.get("hidden"), list):
                    found = frozenset(str(x) for x in extra["hidden"])
                    break
            self._hidden = found
        return self._hidden

    @notices(Changes.of("messages", "settings"))
    def set_hidden(self, entry_id: str, hidden: bool) -> bool:
        """Hide a message from the prompt, or show it to the model again (SillyTavern's ``/hide`` and ``/unhide``,
        the eye on a message): it stays in the conversation, marked, but the next prompts leave it out (a hidden
        user message's reply is sent on its own; a hidden reply's user message too). Kept on the tree as the
        ``hidden`` list of a ``chat-settings`` entry (every hidden id of the chat, newest entry wins), so reopening
        and copies of the chat keep it. Returns False when nothing changed (nothing written). ValueError for an
        entry that is not an opening, user message or reply; KeyError for an unknown id; RuntimeError while a beat
        runs; OSError when the disk refuses."""
        self._idle("隐藏消息")
        if self.tree.get(entry_id).type not in ("opening", "user", "assistant"):
            raise ValueError(message("chat.refuse.hide_kind"))
        now = set(self.hidden_messages)
        if (entry_id in now) == bool(hidden):
            return False
        now.symmetric_difference_update({entry_id})
        self.tree.append("chat-settings", parent_id=None, move_leaf=False, hidden=sorted(now))
        self.tree.commit()
        self._hidden = frozenset(now)
        self._history.reset()  # the prompt history is built again without (or with) it
        return True

    @notices(BEAT)
    async def seal_as_is(self, on_event: Optional[EventSink] = None) -> BeatResult:
        """「按现稿收笔」: seal the unfinished draft as it stands, then the scribe. ValueError without a draft."""
        pending, user = self.pending_draft(), self.tree.latest("user")
        if pending is None or user is None:
            raise ValueError(message("chat.refuse.no_unsealed"))
        state = self.current_state()
        self.tree.append("assistant", text=pending.draft, sealed=True, beat=pending.id, by="user")
        self.tree.commit()
        result = BeatResult(user=user.text, injection=pending.injection, activated=list(pending.activated),
                            final=pending.draft, sealed=True, outcome="sealed")
        emit(on_event, DraftChanged(text=pending.draft, version=pending.draft_version,
                                    chars=utf16_len(pending.draft), sealed=True, by="user"))
        await run_scribe_step(self, result, state, user.text, pending.draft, on_event)
        emit(on_event, BeatFinished(outcome="sealed", final=pending.draft, sealed=True, message=message("beat.sealed_as_is")))
        return result

    @notices(BEAT)
    async def continue_beat(self, ask: Optional[AskHandler] = None, on_event: Optional[EventSink] = None) -> BeatResult:
        """「继续」: run the loop again on the unfinished draft (same version). ValueError without a draft."""
        pending, user = self.pending_draft(), self.tree.latest("user")
        if pending is None or user is None:
            raise ValueError(message("chat.refuse.no_unsealed"))
        group_play.prepare_draft(self, user.id)  # a group chat's follow-up: its member writes on
        note = (f"（接着上一次没写完的稿子：稿件当前版本 {pending.draft_version}，尚未收笔。"
                "先用 draft_read 看一遍，需要时补写或修改，写完用 draft_seal 收笔。）")
        return await turn.play(self, user.text, ask, on_event, None, draft=Draft(pending.draft, pending.draft_version),
                               note=note, how="continue")

    @notices(EVERYTHING)
    def drop_unanswered(self) -> str:
        """Drop the words a crash left unanswered (:meth:`unanswered`) from the branch: the leaf moves back before
        them (nothing deleted; they stay on their own branch). Returns the new leaf. ValueError when there are
        none, RuntimeError while a beat runs."""
        self._idle("撤下")
        left = recovery.unanswered(self.tree)  # the user's words, or a group chat's turn a crash cut
        back: Optional[str] = left.parent_id if left is not None else None
        if back is None:
            raise ValueError(message("chat.refuse.no_unanswered"))
        self.tree.set_leaf(back)
        self.tree.persist_leaf()
        self.write_meta()
        return back

    @notices(Changes.of("ledger"))
    async def repair_ledger(self, on_event: Optional[EventSink] = None) -> list[BeatResult]:
        """Run the scribe for every sealed reply the ledger misses (:meth:`ledger_gaps`: a crash after the reply
        was saved, before its snapshot), oldest first; each repair is committed before the next starts. Returns
        one result per repaired reply ([] when there was no gap). RuntimeError while a beat runs; BeatSaveError
        (stage "ledger") when the disk refuses."""
        self._idle("补记账")
        done: list[BeatResult] = []
        for reply in recovery.ledger_gaps(self.tree):
            user_text = recovery.user_before(self.tree, reply.id)
            result = BeatResult(user=user_text, injection="", final=reply.text, sealed=True, outcome="sealed")
            await run_scribe_step(self, result, self.current_state(), user_text, reply.text, on_event,
                                  covers=reply.id)
            done.append(result)
        return done

    @notices(BEAT)
    def retry_save(self) -> None:
        """Write what a failed save left pending (OSError again if the disk still refuses)."""
        self.tree.commit()
        self.write_meta()

    @property
    def needs_scribe(self) -> bool:
        """A turn was saved late and what follows saving (scribe, checkpoint) is still to be done."""
        return self.pending_finish is not None

    @notices(BEAT)
    async def finish_pending(self, on_event: Optional[EventSink] = None) -> BeatResult:
        """Do for a late-saved turn what it would have done next (its events go to its own sink). ValueError when
        nothing is pending, OSError when the disk refuses again."""
        pending = self.pending_finish
        if pending is None:
            raise ValueError(message("chat.refuse.no_ledger_pending"))
        self.retry_save()
        self.pending_finish = None
        return await pending()

    @notices(Changes.of("summaries"))
    async def maybe_compact(self, on_event: Optional[EventSink] = None) -> Optional[Any]:
        """Compact the branch when the next prompt is over the share (memory.compaction); the Compacted event or
        None."""
        ev = await self.compactor.maybe_compact(self.scribe_model or self.model, self.persona, self.card.name,
                                                lambda e: emit(on_event, e), language=self.context.language)
        if ev is not None:
            self.write_meta()
        return ev

    @notices(Changes.of("ledger"))
    def edit_state(self, state: WorldState) -> None:
        """The user edited the ledger: a new snapshot (source user); the next beat uses it. OSError."""
        self.ledger.edit(state)
        self.write_meta()

    @notices(Changes.of("ledger"))
    def revert_ledger_change(self, beat: int, path: Optional[str] = None) -> RevertPlan:
        """Issue 33: set beat ``beat``'s change to ``path`` (None: every change of the beat) back, as a new user
        snapshot on the shown branch (other branches keep theirs); 「撤销」 (:meth:`undo`) steps back over it. Returns
        the plan applied (its conflicts: later changes it overwrote). ValueError, RuntimeError while a beat runs,
        OSError."""
        self._idle("撤回账本改动")
        plan = self.ledger_revert_plan(beat, path)
        self.ledger.revert(plan)
        self.write_meta()
        return plan

    @notices(Changes.of("ledger"))
    def set_ledger_value(self, path: str, value: Any) -> None:
        """Issue 33: the user sets one ledger field or variable (``path`` as the timeline writes it, ``vars.…`` for
        variables) to ``value``, as a new user snapshot on the shown branch; 「撤销」 steps back over it. ValueError
        (a path outside the ledger, a value it refuses), RuntimeError while a beat runs, OSError."""
        self._idle("改账本的值")
        self.ledger.set_value(path, value)
        self.write_meta()

    @notices(Changes.of("ledger"))
    def write_frame_variables(self, message_id: Optional[str], variables: dict[str, Any], scope: str = "message") -> bool:
        """A status-bar frame wrote variables (the view's ``frameVariablesChanged`` payload: ``scope`` = its
        ``type``, message | chat | character | global; ``message_id`` = its ``message_id``, the message's index in
        the transcript as the view numbers them (0 = the opening; an entry id works too; ignored for the other
        scopes); ``variables`` = the whole new table of that scope). Recorded as a user snapshot on the active
        branch (chat.ledger), so it survives reopening, branch switches and export; a message's table is what its
        transcript item carries from then on, and the newest message's is what the scribe continues from. Returns
        False when nothing changed (nothing written). Raises ValueError (bad scope, table or message),
        RuntimeError while a beat runs (the frame may write again after it), OSError when the disk refuses."""
        self._idle("保存状态栏变量")
        done = self.ledger.write_frame(scope, variables, message_id,
                                       self.transcript_items() if scope == "message" else [])
        if done:
            self.write_meta()
        return done

    @notices(Changes.of("ledger"))
    def seed_ledger(self, state: WorldState) -> None:
        """Start the ledger from ``state`` (an ``init`` snapshot, e.g. carried over from a role-play chat). OSError."""
        self.tree.append("rp-state", state=state.to_dict(), source="init")
        self.tree.commit()
        self.write_meta()

    @notices(Changes.of("summaries"))
    def edit_summary(self, summary_id: str, text: str) -> str:
        """The user rewrote a summary (memory.compaction); returns the new entry's id."""
        new_id = self.compactor.edit_summary(summary_id, text)
        self.write_meta()
        return new_id

    @notices(Changes.of("settings", "messages"))
    def set_scripts_allowed(self, allowed: bool, *, remember: bool = True) -> None:
        """Allow or forbid the card's regex scripts and re-apply them from now on (the scripted-text cache is
        cleared). ``remember``: store the choice beside the card (cards.meta, ``liyuan.json``); without it the choice
        holds for this open chat only (``liyuan chat --allow-card-scripts``, ``card preview``). Raises OSError;
        ValueError when asked to remember for a card without a folder."""
        if remember:
            if not self.card.path:
                raise ValueError(message("chat.refuse.no_folder.regex"))
            set_card_scripts_allowed(Path(self.card.path).parent, allowed)
        self.context.set_scripts(allowed)

    @notices(Changes.of("settings"))
    def set_preset(self, name: Optional[str]) -> str:
        """Use the library preset ``name`` (None or "" = no preset) for this chat from the next beat on: a
        ``chat-settings`` entry on the tree (so reopening keeps it) and a new system prompt — the cached prompt
        prefix is rebuilt once, which the next beat's activity list says (:attr:`pending_notices`). Returns that
        notice ("" when the preset did not change; the same name after the preset was edited in the library — the
        prompt manager, ``presets.manager`` — reads it again). PresetError for a missing/broken preset, RuntimeError while a
        beat runs, OSError when the disk refuses."""
        self._idle("换预设")
        name = (name or "").strip()
        preset = load_installed_preset(name) if name else None
        old = self.context.preset
        if name == self.preset_name() and (preset is None) == (old is None) and (
                preset is None or old is None or preset.to_json() == old.to_json()):  # same name, edited: reload
            return ""
        before = self.system
        self.tree.append("chat-settings", parent_id=None, move_leaf=False, preset=preset.name if preset else "")
        self.tree.commit()
        self.context.use_preset(preset)
        if self.system == before:
            return ""
        what = message("chat.preset_use", name=preset.name) if preset is not None else message("chat.preset_none")
        notice = message("chat.preset_notice", what=what)
        self.pending_notices.append(notice)
        return notice

    @notices(Changes.of("settings", "messages"))
    def set_persona(self, persona_id: Optional[str]) -> str:
        """Play this chat as the persona ``persona_id`` of the persona library (``core/cards/personas.py``; None =
        back to the persona the chat was created with). The choice is kept in the persona file's per-chat choices
        (``PersonaStore.select_for_chat``), which opening reads (``ChatContext``), and takes effect from the next
        beat: the chat's context is rebuilt ({{user}}, {{persona}}, the system prompt; the provider's cached prefix
        is rebuilt once, said in the next beat's activity list). Past messages keep the name they were written
        with. Returns the user's name now. KeyError for an unknown id, RuntimeError while a beat runs, OSError
        when the persona file cannot be written."""
        self._idle("换角色")
        store = load_personas()
        store.select_for_chat(self.dir, persona_id)
        old = self.context
        save_personas(store)
        self._reload_context()
        if self.context.persona != old.persona or self.system != old.system:
            self.pending_notices.append(message("persona.changed", name=self.context.persona))
        return self.context.persona

    def _reload_context(self, card: Optional[Card] = None) -> None:
        """Read what the chat loaded again (persona, world books, card), keeping the preset and the app's
        world-info settings; the next beat uses it."""
        old = self.context
        window = self.context_window
        if card is not None and card.path:
            self._card_stamp = card_stamp(card.path)
        self.context = ChatContext(self.dir, self.tree, card or old.card, self.model.name, preset=old.preset,
                                   world_info=self._wi.effective,
                                   constants_budget=lambda p: self._budget_basis(p, window).tokens)

    def refresh_card(self) -> Optional[str]:
        """Read the card again when its file changed since this chat read it (edited in the card editor or with
        ``liyuan card set``, ``cards.edit``): the next prompt uses the new card (its cached prefix changes once) and
        :attr:`pending_notices` says so. The beat calls this as it starts, so a running chat gets an edit on its next
        beat. Returns the notice (``card.edited_notice``), or None when nothing changed or the card no longer reads
        (the chat keeps the card it has). Called by the beat as it starts; the window may call it after saving a
        card too (nothing happens while a beat runs: the next beat reads the card). Its notice ("settings") is
        declared below the class and added to :attr:`last_changes` only when the card changed: a beat that finds
        nothing new keeps its own notice."""
        if self.running is not None:
            return None  # never mid-beat: the next one reads it
        path = self.card.path
        stamp = card_stamp(path) if path else None
        if stamp is None or stamp == self._card_stamp:
            return None
        self._card_stamp = stamp
        try:
            card = load_card(path)
        except CardError:
            return None
        card_keep.forget(self.dir)  # the library's card again, not a kept old version
        self._reload_context(card)
        self.last_changes = self.last_changes | COMMAND_CHANGES["refresh_card"]
        notice = edited_notice(card.name)
        if notice not in self.pending_notices:
            self.pending_notices.append(notice)
        return notice

    def card_update(self) -> Optional[CardDiff]:
        """Issue 33 §4: what changed in the card's file since this chat read it (cards.update_diff), or None when
        nothing did, the card no longer reads, or a beat runs. The window offers it: :meth:`refresh_card` uses the
        new version from the next beat (the library keeps the old in the card's ``versions/``), :meth:`keep_card`
        keeps this chat on the one it plays."""
        path = self.card.path
        if self.running is not None or not path or card_stamp(path) in (None, self._card_stamp):
            return None
        try:
            return card_update_diff(self.card, load_card(path))
        except CardError:
            return None

    @notices(Changes.of("settings"))
    def keep_card(self) -> None:
        """Keep playing the card this chat read although its file changed, also when opened again (chat.card_keep;
        until the library card changes once more). OSError when the disk refuses."""
        stamp = card_stamp(self.card.path) if self.card.path else None
        if stamp is not None:
            card_keep.keep(self.dir, self.card, stamp)
            self._card_stamp = stamp

    @notices(Changes.of("settings"))
    def take_card_changes(self, picks: list[str]) -> None:
        """Take only some changes of the replaced card (``picks``: ``cards.update_diff.pick_key`` of the
        :meth:`card_update` items); the rest stays as this chat plays it, also when opened again (chat.card_keep).
        The next prompt uses the merged card. CardError, OSError, RuntimeError while a beat runs."""
        self._idle("改角色卡")
        self._reload_context(card_keep.take_picked(self.dir, self.card, picks))

    def book_updates(self) -> list[book_update.BookUpdate]:
        """Issue 33 §4: the world books this chat reads beside its card's own (library books, attached books) that
        were replaced since it last used them (``chat.book_update.BookUpdate``: key, name, diff, in_prefix…); []
        while a beat runs."""
        return [] if self.running is not None else book_update.updates(book_update.chat_links(self), self.dir, self.tree)

    @notices(Changes.of("settings"))
    def answer_book_update(self, key: str, how: str, picks: Optional[list[str]] = None) -> None:
        """Use the new version of the book ``key`` (a ``BookUpdate.key``; ``how="new"``), keep the old (``"old"``),
        take only ``picks`` (``"pick"``) or step back (``"undo"``) — ``chat.book_update.apply``; the next beat reads
        it. KeyError (no such update), OSError, RuntimeError while a beat runs."""
        self._idle("改世界书")
        book_update.apply(book_update.chat_links(self), self.dir, self.tree, key, how, picks)
        self._reload_context()

    def note_books_used(self) -> None:
        """The beat starts: record the world books it reads beside the card's (an update left alone is taken, and said)."""
        said = book_update.note_used(book_update.chat_links(self), self.dir, self.tree)
        if said:
            self._reload_context()
            self.last_changes = self.last_changes | COMMAND_CHANGES["refresh_card"]  # the bar looks again
            self.pending_notices += [n for n in said if n not in self.pending_notices]

    @notices(Changes.of("settings"))
    def reload_books(self) -> None:
        """World books changed on disk (the chat's or the global ones switched on/off, imported, removed): read
        them again; the next beat's activation uses them. RuntimeError while a beat runs."""
        self._idle("改世界书")
        self._reload_context()

    @notices(Changes.of("settings", "library"))
    def save_card_book(self, book: Lorebook) -> Path:
        """Write ``book`` back as the card's own world book (``character_book`` of the card file, through the
        lossless export: unknown keys kept, only edited fields rewritten) and use it from the next beat. A card
        that cannot be written (:meth:`card_book_writable` false) is left alone: the book is kept as this chat's
        own copy (``books.CARD_BOOK_COPY`` beside the session, World Info JSON), which replaces the card's book in
        this chat only. Returns the file written. RuntimeError while a beat runs, OSError when the disk refuses."""
        self._idle("改世界书")
        card = self.context.card
        if not self.card_book_writable():
            path = self.dir / CARD_BOOK_COPY
            atomic_write_text(path, json.dumps(book.to_world_info(), ensure_ascii=False, indent=1))
            self._reload_context()
            return path
        new = card.model_copy(update={"character_book": book.to_card_book()})
        path = Path(card.path)
        from ..cards.export import card_json_bytes, export_json  # on first use (issue 15: start-up)

        atomic_write_bytes(path, card_json_bytes(export_json(new), indent=2))
        self._reload_context(load_card(path))
        return path

    @notices(Changes.of("settings"))
    def set_sampling(self, overrides: Optional[Sampling]) -> None:
        """Set this chat's own sampling overrides (None or empty = none; they win over the connection profile's
        and the preset's, :meth:`sampling`), kept on the tree as a ``chat-settings`` entry. OSError."""
        s = overrides or Sampling()
        self.tree.append("chat-settings", parent_id=None, move_leaf=False,
                         sampling=s.model_dump(mode="json", exclude_none=True))
        self.tree.commit()
        self.context.sampling_overrides = s.model_copy()

    @notices(Changes.of("settings"))
    def set_world_info(self, overrides: dict[str, Any], replace: bool = True) -> bool:
        """Set the chat's own world-info settings (issue 14 §1): ``overrides`` maps SillyTavern's names
        (``world_info_depth`` …, or the same without ``world_info_``) to values; they replace the chat's old
        overrides (``replace``; ``{}`` = back to the app's settings) or are added to them. Kept on the tree (a
        ``chat-settings`` entry, for the whole chat), so reopening keeps them; the next beat activates lore with
        them. Returns False when nothing changed (nothing written). Raises ValueError (Chinese) for an unknown name
        or a bad value, RuntimeError while a beat runs, OSError when the disk refuses."""
        self._idle("改世界书设置")
        return self._wi.set_overrides(overrides, replace)

    @notices(Changes.of("settings", "messages"))
    def set_prose_only(self, on: Optional[bool]) -> None:
        """Switch this chat to prose-only play (True: one completion per beat, no tools, lore inlined —
        :mod:`.prose_mode`), to tool play (False), or back to following the provider's capabilities (None). Kept on
        the tree (a ``chat-settings`` entry); the next beat plays that way. RuntimeError while a beat runs, OSError."""
        self._idle("切换演出方式")
        prose_mode(self).set(self, on)

    def prose_only(self) -> dict[str, Any]:
        """How the next beat will play: ``{"on": bool, "why": "switch" | "rejected" | "ignored" | "", "switch":
        the chat's own switch (True / False / None = follow the provider), "limits": what prose-only play cannot do}``."""
        pm = prose_mode(self)
        on, why = pm.decide(self)
        return {"on": on, "why": why, "switch": pm.switch, "limits": PROSE_LIMITS}

    def beat_running(self) -> bool:
        """Whether a beat (or an agent turn) is running now — :meth:`stop` would stop it."""
        return self.running is not None

    @notices(Changes.of("settings"))
    def set_linked_books(self, names: list[str]) -> None:
        """Link the card to the library world books ``names`` (file stems, primary first; [] = none) — stored beside
        the card (cards.meta ``world_books``), so every chat of the card reads them — and read this chat's books
        again. RuntimeError while a beat runs; ValueError for a card without a folder; OSError."""
        self._idle("改世界书")
        if not self.card.path:
            raise ValueError(message("chat.refuse.no_folder.books"))
        set_card_linked_books(Path(self.card.path).parent, names)
        self._reload_context()

    @notices(Changes.of("settings"))
    def set_trusted(self, trusted: bool) -> None:
        """Trust the card's status bars or not (stored beside the card; the view reloads its frames). Raises
        OSError; ValueError for a card without a folder."""
        if not self.card.path:
            raise ValueError(message("chat.refuse.no_folder.trust"))
        set_card_frames_trusted(Path(self.card.path).parent, trusted)

    @property
    def allowed_sites(self) -> list[str]:
        """The https hosts allowed for this card's status bars (``cards.meta.card_allowed_sites``; [] by default)."""
        return card_allowed_sites(self.card)

    @notices(Changes.of("settings"))
    def set_site_allowed(self, site: str, allowed: bool) -> list[str]:
        """Allow or revoke the https host ``site`` for this card's frames only (issue 26 §3: a status bar that
        embeds its author's remote page); never on by default. Returns the allowed hosts. ValueError for a site
        that is not an https host name or a card without a folder; OSError."""
        if not self.card.path:
            raise ValueError("no card folder")
        return set_card_site_allowed(Path(self.card.path).parent, site, allowed)

    # -- agent mode -----------------------------------------------------------------------------------------
    workspace = property(lambda self: self.agent.workspace, doc="The folder the agent's file paths are relative to.")
    story = property(lambda self: self.agent.story, doc="The chapter folder 正文/ (story.workspace.StoryFolder).")
    history_log = property(lambda self: self.agent.history_log, doc="The checkpoints (story.checkpoints).")

    def agent_system(self) -> str:
        """The agent system prompt of this chat (byte-stable)."""
        return self.agent.system()

    @notices(Changes.of("files", "checkpoints", "outline", "threads"))
    def import_chapters(self, chapters: list[tuple[str, str]], message: str = "") -> Optional[Checkpoint]:
        """Write chapters (file name, text) into 正文/ and make a user checkpoint labelled ``message`` (default 「导入章节」 in the story's language; None when nothing
        changed)."""
        return self.agent.import_chapters(chapters, message)

    def checkpoint_turn_text(self, checkpoint: Any) -> Optional[str]:
        """The user's words of the agent turn that ended in ``checkpoint``, or None (a user checkpoint)."""
        user = self.agent.turn_user(checkpoint)
        return user.text if user is not None else None

    @notices(EVERYTHING)
    def restore_checkpoint(self, checkpoint_id: str, with_conversation: bool = False) -> RestoreResult:
        """Restore a checkpoint: files only, or files and conversation back to before its turn (chat.agent)."""
        self._idle("恢复")
        done = self.agent.restore(checkpoint_id, with_conversation)
        self.write_meta()
        return done

    @notices(EVERYTHING)
    def undo_restore(self, checkpoint_id: str, old_leaf: Optional[str]) -> Any:
        """Undo a restore: files back to ``checkpoint_id``, the leaf back to ``old_leaf`` when given."""
        self._idle("恢复")
        done = self.agent.undo_restore(checkpoint_id, old_leaf)
        self.write_meta()
        return done

    # -- the writing room (issue 19; chat.writing) ------------------------------------------------------------
    @notices(Changes.of("outline"))
    def set_webnovel(self, *, chapter_min: Optional[int] = None, chapter_max: Optional[int] = None,
                     daily_target: Optional[int] = None, publish: Iterable[str] = (),
                     unpublish: Iterable[str] = ()) -> Any:
        """Change the book's web-novel settings (issue 28, ``story.webnovel``): the chapter length norm (字; 0 = no
        bound), the daily target (字; 0 = none), and which chapter files are published (the rest of the written
        ones are 存稿). Returns the settings. ValueError for a norm whose minimum exceeds its maximum or a
        negative number, or a file that is not a chapter of this book; OSError when the disk refuses."""
        from ..story.webnovel import WebNovelSettings, load_webnovel, save_webnovel

        cur = load_webnovel(self.dir)
        from ..story.links import chapter_files

        names = set(chapter_files(self.writing.story_dir))  # (names only: no chapter is read)
        bad = [f for f in (*publish, *unpublish) if f not in names]
        if bad:
            raise ValueError(message("webnovel.not_chapter", file=bad[0]))
        published = [f for f in cur.published if f not in set(unpublish)] + [f for f in publish]
        fields = {**cur.model_dump(), "published": published,
                  **{k: v for k, v in (("chapter_min", chapter_min), ("chapter_max", chapter_max),
                                       ("daily_target", daily_target)) if v is not None}}
        if any(fields[k] < 0 for k in ("chapter_min", "chapter_max", "daily_target")):
            raise ValueError(message("webnovel.negative"))
        if fields["chapter_min"] and fields["chapter_max"] and fields["chapter_min"] > fields["chapter_max"]:
            raise ValueError(message("webnovel.bad_norm", min=fields["chapter_min"], max=fields["chapter_max"]))
        new = WebNovelSettings.model_validate(fields)
        save_webnovel(self.dir, new)
        return new

    @notices(Changes.of("outline"))
    def save_outline(self, text: str) -> Any:
        """Write the outline ``大纲.md`` whole (the next checkpoint records it); returns it parsed. OSError."""
        self._idle("保存大纲")
        return self.writing.save_outline(text)

    @notices(Changes.of("outline"))
    def set_outline_chapter(self, ref: "str | int", *, status: Optional[str] = None, target: Optional[int] = None,
                            file: Optional[str] = None) -> Any:
        """Change one outline chapter (``ref``: 1-based number, title or file) — ``status`` planned | drafted |
        revised | done (or 计划/初稿/修订/定稿), ``target`` 字 (0 removes), ``file`` ("" unlinks). Returns the
        outline. Raises ToolError (no outline, unknown chapter, bad status), OSError."""
        self._idle("保存大纲")
        return self.writing.set_chapter(ref, status=status, target=target, file=file)

    @notices(Changes.of("threads"))
    def thread_event(self, event: Any) -> Any:
        """Apply a user change to a foreshadowing thread of the active branch (``ledger.threads.ThreadEvent``: add,
        edit title/note/due chapter, advance, intentional, close as paid_off/dropped, reopen), recorded as a user
        ledger snapshot (so it is per branch and goes back with the conversation). Returns the thread after it.
        Raises KeyError (unknown thread), RuntimeError while a beat runs, OSError."""
        self._idle("修改伏笔")
        t = self.writing.thread_event(event, self.current_state())
        self.write_meta()
        return t

    @notices(Changes.of("files"))
    def set_aliases(self, name: str, aliases: list[str]) -> None:
        """Set the codex aliases of roster ``name`` (they count as mentions of it); [] removes them. OSError."""
        self.writing.set_aliases(name, aliases)

    # -- the outline as a tree, chapter links, the written codex (issue 28; chat.writing) -----------------------
    @notices(Changes.of("outline"))
    def edit_outline_tree(self, op: str, **kw: Any) -> tuple[Any, str]:
        """One tree operation on the outline (``WritingRoom.outline_edit``: add / rename / move a volume, chapter
        or beat, set status and target, delete — ask first with :meth:`outline_deletion_preview`). Returns (the
        outline, the new node's id for add_volume / add_chapter, else ""). Raises ToolError, ValueError, OSError."""
        self._idle("保存大纲")
        return self.writing.outline_edit(op, **kw)

    @notices(Changes.of("outline", "files"))
    def link_chapter(self, ref: "str | int", file: str) -> Any:
        """Link outline chapter ``ref`` (stable id, number or title) to chapter file ``file`` ("" unlinks); the link
        is kept by id in 大纲链接.json, so renames keep it. Returns the outline. Raises ToolError, OSError."""
        self._idle("保存大纲")
        return self.writing.link(ref, file)

    @notices(Changes.of("outline", "files"))
    def unlink_chapter_file(self, file: str) -> Optional[str]:
        """Unlink chapter file ``file`` from its outline chapter; returns the chapter's id, or None. OSError."""
        return self.writing.unlink_file(file)

    @notices(Changes.of("files", "outline"))
    def rename_chapters(self, mapping: dict[str, str]) -> dict[str, str]:
        """Rename chapter files ``{old: new}`` at once (swaps work; no checkpoint); the outline's links follow.
        Returns what was renamed. Raises StoryPathError / ToolError / OSError (story.workspace.StoryFolder.rename)."""
        self._idle("改名")
        return self.agent.story.rename(mapping)

    @notices(Changes.of("files"))
    def codex_add(self, record: Any) -> Any:
        """Write a codex entry (``story.codex.CodexRecord``: name, kind, description, aliases, tags, relations,
        true_from). Raises CodexError (``exists``, ``damaged``), OSError."""
        return self.writing.codex_add(record)

    @notices(Changes.of("files"))
    def codex_set(self, name: str, **changes: Any) -> Any:
        """Change the codex entry ``name`` (a roster name gets a written entry first): kind, description, aliases,
        tags, relations, true_from, rename. Returns the entry. Raises CodexError, OSError."""
        return self.writing.codex_set(name, self.current_state(), **changes)

    @notices(Changes.of("files"))
    def codex_remove(self, name: str) -> bool:
        """Delete the written codex entry ``name`` (a roster name stays, as the ledger has it). CodexError, OSError."""
        return self.writing.codex_remove(name)

    # -- chapter review (issue 19 §4; chat.review) --------------------------------------------------------------
    @notices(Changes.of("files"))
    async def review_chapter(self, file: str, *, use_model: bool = True, model: Optional[ChatModel] = None) -> Any:
        """Review chapter ``file`` (a name in 正文/): local checks, then the model (``model``, else the chat's) unless
        ``use_model`` is False; never edits. Returns ``story.review.ChapterReviewResult`` (kept in 审稿.json).
        Raises ToolError (no such chapter), OSError; a failed model call is the result's ``model_error``."""
        return await self.review.run(file, model, use_model)

    def chapter_summaries(self) -> list[Any]:
        """Every chapter with its summary and whether it is stale (``story.summaries.SummaryRow``, book order)."""
        from ..story.summaries import rows

        return rows(self.dir, self.writing.story_dir)

    @notices(Changes.of("files"))
    def set_chapter_summary(self, file: str, text: str) -> Any:
        """The author's own summary of chapter ``file`` (fresh for the chapter as it is now; "" removes it).
        Returns ``story.summaries.ChapterSummary``. ValueError for a file that is not a chapter; OSError."""
        from ..story.summaries import set_summary

        self._idle("改章节摘要")
        return set_summary(self.dir, self.writing.story_dir, file, text, "user")

    @notices(Changes.of("files"))
    async def summarize_chapters(self, files: Optional[list[str]] = None,
                                 model: Optional[ChatModel] = None) -> tuple[list[str], list[str]]:
        """Have the model (``model``, else the chat's) summarise ``files`` (default: every chapter whose summary
        is missing or stale). Returns (files summarised, problems as sentences); a failed call is a problem, not
        an exception. RuntimeError while a beat runs."""
        from .chapter_summaries import summarize

        self._idle("改章节摘要")
        return await summarize(self, files, model)

    @notices(NOTHING)
    async def propose_rewrite(self, file: str, start: int, end: int, mode: str = "rewrite", instruction: str = "",
                              model: Optional[ChatModel] = None) -> Any:
        """Ask the model (``model``, else the chat's) to rewrite, expand or condense (``mode``) the passage [start,
        end) (UTF-16 offsets) of chapter ``file``; changes nothing. Returns ``chat.rewrite.RewriteProposal`` for
        :meth:`apply_rewrite`. Raises ToolError (bad selection or mode, no such chapter, the call failed)."""
        from .rewrite import propose

        return await propose(self, file, start, end, mode, instruction, model)  # type: ignore[arg-type]

    @notices(Changes.of("files", "checkpoints"))
    def apply_rewrite(self, proposal: Any) -> str:
        """Replace the proposal's passage in its chapter (only if the chapter still holds it there) and commit a
        user checkpoint 「改写 <file>」 (undone like any edit); returns its id. ToolError ``conflict`` when the
        chapter changed meanwhile (nothing written); RuntimeError while a beat runs; OSError."""
        from .rewrite import apply

        self._idle("改写")
        return apply(self, proposal)

    def last_review(self, file: str) -> Any:
        """The last review of chapter ``file`` (None when never reviewed), intentional findings left out."""
        return self.review.last(file)

    @notices(Changes.of("files"))
    def accept_finding(self, finding_id: str) -> Any:
        """Queue a review finding for the agent's next turn (its 【审稿意见】). Raises KeyError, OSError."""
        return self.review.accept(finding_id)

    @notices(Changes.of("files"))
    def mark_finding_intentional(self, finding_id: str, value: bool = True) -> Any:
        """Mark a review finding intentional (never reported again) or, ``value`` False, not any more. KeyError."""
        return self.review.intentional(finding_id, value)

    def pending_review(self) -> list[Any]:
        """Accepted findings the agent has not had on this branch yet (``story.review.ReviewFinding``)."""
        return self.review.pending()

    @notices(NOTHING)
    def export(self, fmt: str, output: Path) -> Path:
        """Export the chapters (正文/ or chapters/) as ``fmt`` md | epub | docx to ``output``, titled by the chat. Returns it."""
        return export_story(self.dir, fmt, output)


#: Chat.refresh_card declares its notice by hand (it joins the running beat's notice only when the card changed)
COMMAND_CHANGES["refresh_card"] = Changes.of("settings")
#: Chat.note_books_used likewise (it joins the beat's notice only when an update left alone was taken)
COMMAND_CHANGES["note_books_used"] = Changes.of("settings")
