"""Opening, installing and closing a chat in the window, the demo, and the panes following the chat shown.

Moved out of ui/window/main_window.py (issue 25); :class:`~.main_window.MainWindow` inherits it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtWidgets import (
    QMessageBox,
)

from ...core.cards import CardError, library
from ...core.chat.changes import LIBRARY
from ...core.ledger.state import WorldState
from ...core.session.tree import SessionError
from ..frames.conversation import chat_frame_context
from ..frames.regex_worker import split_known
from ..infra.i18n import language, show, tr
from . import agent_desk, chat_work  # chat_work: the slow commands off the UI thread (its strings registered at import)

if TYPE_CHECKING:  # pragma: no cover
    # the engine's chat (and with it the beat loop, world info, the scribe…) is imported when the first chat opens
    # or by ui/window/warm.py while the page loads, not before the window can show (issue 15: start-up)
    from ...core.chat import Chat
    from ...core.llm.replay import ReplayModel
    from ...core.llm.types import ChatModel

log = logging.getLogger(__name__)
PAGE = 60  # transcript items handed to the view at a time
DEMO_DELAY_MS = 45  # pause between streamed pieces of the demo's replay, so the draft is seen growing

if TYPE_CHECKING:  # pragma: no cover - the type checker sees the window's face (ui/window/window_face.py)
    from .window_face import WindowFace as _Window
else:
    _Window = object


class ChatFlowMixin(_Window):
    """Opening, installing and closing a chat in the window, the demo, and the panes following the chat shown (a part of :class:`~.main_window.MainWindow`)."""

    def provider_models(self) -> tuple[Optional[ChatModel], Optional[ChatModel], str]:
        """The chat model, the scribe's model and why there is none, from the settings; on the UI thread before any
        chat is opened or created, so it also makes sure the engine is imported here (ui/window/warm.py), not on the worker
        that then opens the chat."""
        from ...core.chat.build import chat_models  # the one way from settings to models (the CLI's too)
        from . import warm

        warm.ensure_engine()
        models = chat_models(self.settings)
        return models.main, models.scribe, tr(models.why) if models.why else ""

    def _demo_model(self, chat_dir: Path, played: int) -> ReplayModel:
        replay = Path(self.card_ref.dir if self.card_ref else "") / "replay.json"
        from ...core.llm.replay import ReplayModel

        full = ReplayModel.from_file(replay, delay_ms=DEMO_DELAY_MS)
        beats = full.beats[played:]
        actor = [c for b in beats for c in b.actor]
        scribe = [s for b in beats for s in b.scribe]
        self.demo_lines = [b.user for b in beats]
        self.session.demo_answers = [a for b in beats for a in b.ask_answers]
        return ReplayModel(actor=actor, scribe=scribe, label=full.name.split(": ", 1)[-1], delay_ms=DEMO_DELAY_MS, beats=beats)

    def open_chat(self, card: library.CardRef, chat: library.ChatRef, quiet: bool = False) -> bool:
        """Open ``chat``; returns False (with a message unless ``quiet``) when it cannot be opened. Synchronous (the
        start-up restore, the demo, search hits); the chat list, new chats and imports open through
        :mod:`.chat_work`, which runs :meth:`load_chat` on a worker thread."""
        if not self.may_open(quiet):
            return False
        try:
            chat_obj, is_demo = self.load_chat(card, chat, self.provider_models())
        except (CardError, SessionError, OSError, ValueError) as e:
            if not quiet:
                QMessageBox.warning(self, tr("app.title"), tr("err.open.chat", error=e))
            return False
        return self.install_chat(card, chat, chat_obj, is_demo)

    def may_open(self, quiet: bool) -> bool:
        """Whether another chat may be opened now (no beat running; unsaved chapter edits confirmed)."""
        if self.session.task is not None and not self.session.task.done():
            return False
        editor = getattr(getattr(self, "chapter_pane", None), "editor", None)
        if editor is not None and getattr(editor, "dirty", False) and not quiet:
            from ..dialogs.dialogs import confirm  # No is the default: Enter or Esc keeps the unsaved chapter open

            if not confirm(self, tr("app.title"), tr("confirm.switch.unsaved")):
                return False
        return True

    def load_chat(self, card: library.CardRef, chat: library.ChatRef,
                   models: tuple[Optional[ChatModel], Optional[ChatModel], str]) -> tuple[Chat, bool]:
        """The engine half of opening a chat — card, session, books — touching no widget (safe on a worker thread;
        ``models``: :meth:`provider_models`, made on the UI thread). Returns (chat, is_demo). Raises CardError,
        SessionError, OSError, ValueError."""
        c = card.load()
        from ...core.chat.build import build_chat
        from ...core.chat.folder import chat_info

        is_demo = chat_info(Path(chat.dir)).demo
        model, scribe, why = models
        if is_demo:  # the replay is set up per beat (see send_clicked)
            model, scribe = None, None
        elif model is None:
            model = _NoModel(why)
        # the one way from settings to a chat (the CLI's too): world info, compaction share, the profile's sampling
        chat_obj = build_chat(Path(chat.dir), c, self.settings, model or _NoModel(""), scribe)
        # what the UI half asks first, computed here (on a worker, from chat_work) so that half stays quick: the
        # context meter (reads the whole history once; cached in the chat) and the transcript layout
        chat_obj.context_usage()
        chat_obj.warm_up()  # the book's matchers and key index: the first beat would build them on the UI thread
        chat_obj.transcript_page(None, 1)
        chat_obj.frame_variables()  # the frames' tables: a walk of the whole branch when none was ever written
        return chat_obj, is_demo

    def install_chat(self, card: library.CardRef, chat: library.ChatRef, chat_obj: Chat, is_demo: bool) -> bool:
        """The UI half of opening a chat: show ``chat_obj`` (made by :meth:`load_chat`). False when a beat started
        meanwhile (the new chat is dropped)."""
        if self.session.task is not None and not self.session.task.done():
            chat_work.release_chat(chat_obj)
            return False
        if self.chat_ref is not None:
            self.unsent_inputs[self.chat_ref.dir] = self.input.toPlainText()
        typed_before = self.input.toPlainText() if self.chat_ref is None else ""
        old = self.session.set_chat(card, chat, chat_obj, is_demo)
        self.display_worker.reset_issues()
        # each chat keeps its own unsent words; words typed before any chat was open go to the first one opened
        self.input.setPlainText(self.unsent_inputs.get(chat.dir, "") or typed_before)
        self._after_open()
        for w in chat_obj.load_warnings:  # kept in the activity list too: a status message is gone in 8 s
            self.statusBar().showMessage(show(w), 8000)  # an engine message (core/messages.py) in the window's language
            self.draft_pane.notice(w)  # kept as a message: the pane renders it again on a language switch
        if old is not chat_obj:
            chat_work.release_chat(old)  # freed off the UI thread, no collector pass (issue 15 item 12)
        return True

    def _after_open(self) -> None:
        """Another chat is shown: every pane follows it (module doc), the conversation covered until it is painted."""
        chat = self.chat
        assert chat is not None
        self.view.hold_until_painted()  # the old chat's messages are never seen beside the new chat's panes
        self.view.show_chat()
        self.view.set_card(Path(chat.card.path).parent if chat.card.path else None)  # frames' storage and trust
        self.view.set_user_label(chat.user_label)  # "" = no persona: 你 / You by the window
        agent = chat.mode == "agent"
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), agent)
            pane.set_chat(chat if agent else None)
        agent_desk.show_agent_desk(self, agent)  # an agent chat opens on 章节, not on the empty 稿纸
        self.writing_panes.set_chat(chat)  # issue 19: the writing room (agent chats only)
        demo = self.is_demo
        self.view.set_banner(tr("replay.banner") if demo or chat.model.is_replay else None)
        self.reload_transcript()
        self.refresh_state()
        self.draft_pane.beat_id = self.draft_pane.turn = None  # another chat: its beat shown afresh
        self._show_branch_beat()
        model_name = tr("model.replay.name") if demo else chat.model.name
        self.status_label.setText(tr("status.chat", card=chat.card.name, chat=self.chat_ref.name if self.chat_ref else "", model=model_name))
        self._prefill()
        self._panes_chat = chat
        self.set_busy(False)
        self._branches_changed()
        self._show_recovery()
        self.view.release_after_paint()
        self.session.announce_shown()

    def close_chat(self) -> None:
        """No chat is shown any more (the open one was deleted or moved): the conversation goes back to the card
        list and every pane empties — the draft, the ledger, the navigator, the agent panes, the find bar
        (:attr:`chatShown` with None). Safe to call when nothing is open."""
        old = self.chat
        if old is not None and self.chat_ref is not None:
            self.unsent_inputs.pop(self.chat_ref.dir, None)
        self.session.drop()
        self.display_worker.restart()
        self.view.set_transcript([], False)
        self.view.set_banner(tr("banner.pick"))
        self.status_label.setText("")
        self.set_busy(False)  # empties the panes (_panes_follow_none)

    def _panes_follow_none(self) -> None:
        """The panes of a chat, emptied (no chat shown)."""
        self._panes_chat = None
        self.draft_pane.reset()
        self.draft_pane.beat_id = self.draft_pane.turn = None
        self.draft_pane.set_context(None)
        self.draft_pane.show_recovery(0, None)
        self.state_pane.show_state(WorldState(), [], [], "")
        self.panels_view.refresh(None)  # the card's panels tab goes with its chat
        self.branch_nav.set_nodes([])
        for pane in (self.chapter_pane, self.timeline_pane):
            self.tabs.setTabVisible(self.tabs.indexOf(pane), False)
            pane.set_chat(None)
        if self.tabs.currentWidget() in (self.chapter_pane, self.timeline_pane):
            self.tabs.setCurrentWidget(self.draft_pane)
        self.writing_panes.set_chat(None)
        self.input.clear()
        self.session.announce_shown()

    def _show_branch_beat(self) -> None:
        """The draft pane shows the newest beat of the shown branch: an unfinished one with its banner, else the
        last beat's draft and cache share, else nothing. The pane is kept as it is — the beat's activity, the model's
        output — while the branch still ends in the turn it shows and either that beat is still the newest or the
        turn's reply is a version the user wrote (``Chat.edit_reply``: a new version without a beat of its own, the
        item's ``edited``); the draft then reads as the reply does now."""
        chat, pane = self.chat, self.draft_pane
        turn = self._last_user_id()
        if chat is None:
            pane.reset()
            pane.beat_id = pane.turn = None
            return
        pending = chat.pending_draft()
        beat = pending if pending is not None else chat.latest_beat()
        last = self.transcript.items[-1] if len(self.transcript.items) else None
        edited = last is not None and last["role"] == "assistant" and bool(last.get("edited"))
        if pending is None and pane.beat_id is not None and turn is not None and pane.turn == turn \
                and ((beat is not None and beat.id == pane.beat_id) or edited):
            if last is not None and last["role"] == "assistant" and last["text"] != pane.draft.toPlainText():
                pane.draft.setPlainText(last["text"])
            return
        if beat is None:
            pane.reset()
        elif pending is not None:
            pane.show_unfinished(pending.draft, pending.draft_version, pending.outcome)
        else:
            pane.show_beat(beat.draft, beat.draft_version, beat.outcome, chat.last_beat_tokens())
        pane.beat_id = beat.id if beat is not None else None
        pane.turn = turn

    def _last_user_id(self) -> Optional[str]:
        """The session id of the newest user message on the shown branch (from the page of items), or None."""
        items = self.transcript.items
        for i in range(len(items) - 1, max(-1, len(items) - 1 - PAGE), -1):
            if items[i]["role"] == "user":
                return items[i]["id"]
        return None

    def _demo_progress(self) -> int:
        """Demo beats finished on this branch (sealed or revised); a stopped beat is played again."""
        if self.chat is None:
            return 0
        return self.chat.sealed_beat_count()

    def _prefill(self) -> None:
        if self.is_demo and self.chat is not None:
            played = self._demo_progress()
            from ...core.llm.replay import ReplayModel

            full = ReplayModel.from_file(Path(self.card_ref.dir) / "replay.json") if self.card_ref else None
            lines = [b.user for b in full.beats] if full else []
            if played < len(lines):
                self.input.setPlainText(lines[played])
                # called from a beat's own clean-up too, while its task is still finishing: ask set_busy's flag,
                # not the task (which would keep Send greyed out after every demo beat)
                self.send_btn.setEnabled(not self.session.marked_busy)
            else:
                self.input.clear()
                self.send_btn.setEnabled(False)
                self.statusBar().showMessage(tr("demo.done"), 15000)

    def start_demo(self) -> None:
        """Create a new demo chat on the demo card of the window's language (core/paths.py ``demo_set``: 青梧 in
        Chinese, Qingwu in English; the chat's language is the card's) and open it on the replay model, input
        pre-filled."""
        if self.refuse_read_only():
            return
        try:
            card = library.ensure_demo_card(language())
            d = library.new_chat_dir(card, library.dated_chat_name("demo", language()))
            c = card.load()
            self.card_ref = card
            from ...core.chat.build import NewChat, build_chat

            build_chat(d, c, self.settings, _NoModel(""), new=NewChat(demo=True))
        except (CardError, SessionError, OSError) as e:
            QMessageBox.warning(self, tr("app.title"), tr("err.demo", error=e))
            return
        self.session.broadcast(LIBRARY)
        self.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))

    def _after_restore(self) -> None:
        self.chapter_pane.refresh()
        self.reload_transcript()
        self.refresh_state()
        self._branches_changed()
        agent_desk.after_restore(self)  # the conversation says what was restored and how to undo it

    def _on_changes(self, changes: Any) -> None:
        """Repaint only what a command's notice names (ui/infra/session.py ``changed``; docs/architecture.md "Change
        notices"): the transcript for messages, the ledger pane and panels for ledger or settings, the navigator and
        the context meter for branches, the chapter tree and timeline for files, checkpoints, outline or threads; the
        card and chat lists for the library."""
        if changes.library:
            self.refresh_tree()
        if self.chat is None:
            return
        if changes.messages:
            self.reload_transcript()
        if changes.ledger or changes.settings:
            self.refresh_state()
        if changes.branches or changes.summaries:  # the context meter counts the summaries
            focus, self._notice_focus = getattr(self, "_notice_focus", None), None
            self._branches_changed(focus)
        if self.chat.mode == "agent" and (changes.files or changes.checkpoints or changes.outline or changes.threads):
            self._story_changed()

    def _story_changed(self) -> None:
        for pane in (getattr(self, "chapter_pane", None), getattr(self, "timeline_pane", None)):
            if pane is not None:
                pane.refresh()

    def reload_transcript(self) -> None:
        """Hand the newest page of the active branch's transcript to the view. Only that page is built (a
        10,000-beat chat shows its last screen as fast as a short one); older pages are built as they are scrolled
        to (``_items`` is a :class:`core.chat.TranscriptItems`)."""
        if self.chat is None:
            return
        self.display_worker.restart()  # results for the old page would paint over newer text
        self.transcript.items = self.chat.transcript_items(PAGE)  # type: ignore[assignment]
        self.transcript.shown_from = max(0, len(self.transcript.items) - PAGE)
        self._frame_context()
        self.view.set_transcript(self.display_items(self.transcript.shown_from, len(self.transcript.items)), self.transcript.shown_from > 0)

    def display_items(self, start: int, end: int) -> list[dict[str, Any]]:
        """Items start..end as shown: the card's display regex scripts applied at each item's depth, and the item's
        place in the transcript as its id (SillyTavern's message index: 0 = the opening), which is what status-bar
        scripts expect from getCurrentMessageId(); the session entry id stays in ``entry_id``, the stored text in
        ``raw`` (what 复制 and 编辑 use) and ``hidden`` marks a message hidden from the prompt. Items whose display
        text needs a script run come back from their stored text marked ``scripting`` and are queued on the
        display worker (newest first), which fills them in (issue 13 §4)."""
        n = len(self.transcript.items)
        chat = self.chat
        items = [dict(it, id=str(i), entry_id=it["id"], raw=it.get("text", ""))
                 for i, it in enumerate(self.transcript.items[start:end], start)]
        if chat is None:
            return items
        hidden = chat.hidden_messages  # issue 26: shown, marked, not sent
        for it in items:
            if it["entry_id"] in hidden:
                it["hidden"] = True
        shown, todo = split_known(items, lambda it: chat.display_text_if_known(it, n - 1 - int(it["id"])))
        if todo:
            def run(it: dict[str, Any]) -> tuple[str, list[str]]:
                issues: list[str] = []
                return chat.display_text(it, n - 1 - int(it["id"]), issues), issues
            self.display_worker.submit(todo[::-1], run)
        return shown

    def _display_filled(self, _gen: int, item: dict[str, Any], text: str) -> None:
        """The display worker's result for one item: re-render it in place (if still shown)."""
        self.view.update_item(dict(item, text=text))

    def _older(self, _oldest_id: str) -> None:
        if self.transcript.shown_from <= 0:
            return
        start = max(0, self.transcript.shown_from - PAGE)
        chunk = self.display_items(start, self.transcript.shown_from)
        self.transcript.shown_from = start
        self.view.prepend(chunk, start > 0)

    def refresh_state(self) -> None:
        if self.chat is None:
            return
        e = self.chat.ledger_entry()
        state = WorldState.model_validate(e.state) if e else WorldState()
        self.state_pane.show_state(state, list(e.applied) if e else [], list(e.warnings) if e else [], e.source if e else "")
        self.panels_view.refresh(self.chat)  # issue 5: panels follow the scribe, the branch and ledger edits

    def _frame_context(self) -> None:
        """What the status bars built from now on see besides their message's variables (issue 13 §2): the persona
        and card names (SillyTavern.name1/name2, {{user}}/{{char}} in substitudeMacros) and the chat / character /
        global tables frames wrote on the active branch (empty when none)."""
        chat = self.chat
        if chat is None:
            return
        self.view.set_frame_context(**chat_frame_context(chat))

    def _frame_variables_written(self, frame_name: str, payload: dict) -> None:
        """A status bar wrote variables (± buttons, updateVariablesWith …): kept through the chat as a user
        snapshot on the branch, so the write survives reopening (Chat.write_frame_variables). While a beat runs the
        chat refuses; the bar keeps its value and the status bar says it was not saved."""
        chat = self.chat
        if chat is None:
            return
        try:
            chat.write_frame_variables(payload.get("message_id"), payload.get("variables") or {},
                                       str(payload.get("type") or "message"))
        except (RuntimeError, ValueError, OSError) as e:
            log.warning("status bar %s: variables not saved: %s", frame_name, e)
            self.statusBar().showMessage(tr("frame.vars.unsaved", error=e), 8000)


class _NoModel:
    """Stands in when no model is configured: any call explains what to do."""

    is_replay = False

    def __init__(self, why: str):
        self.why = why
        self.name = tr("model.none.name")

    async def complete(self, request, on_delta=None):
        from ...core.llm.types import ModelError

        raise ModelError("no_model", self.why or tr("model.none.settings"))
