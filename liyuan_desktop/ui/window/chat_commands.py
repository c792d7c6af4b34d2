"""The window's chat commands: send, stop, regenerate, seal, continue, undo, swipe, edit, branches, inspect, recovery, ledger repair, summaries.

Moved out of ui/window/main_window.py (issue 25); :class:`~.main_window.MainWindow` inherits it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QMessageBox,
)

from ...core.ledger.state import WorldState
from ..infra.i18n import show, tr
from ..roleplay.branch_navigator import EditMessageDialog
from ..roleplay.inspector import InspectorDialog
from . import agent_desk
from .chat_flow import _NoModel

if TYPE_CHECKING:  # pragma: no cover
    # the engine's chat (and with it the beat loop, world info, the scribe…) is imported when the first chat opens
    # or by ui/window/warm.py while the page loads, not before the window can show (issue 15: start-up)
    from ...core.chat import BeatResult

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # pragma: no cover - the type checker sees the window's face (ui/window/window_face.py)
    from .window_face import WindowFace as _Window
else:
    _Window = object


class ChatCommandsMixin(_Window):
    """The window's chat commands (a part of :class:`~.main_window.MainWindow`)."""

    def on_event(self, ev: Any) -> None:
        """An engine event of the running beat (``core.chat`` events: ``kind`` beat_started, draft_changed,
        scribe_finished, …): the draft pane, the conversation's pending item and the ledger follow it."""
        self.draft_pane.on_event(ev)
        k = getattr(ev, "kind", "")
        if k == "beat_started":
            self.statusBar().clearMessage()  # a message about an earlier beat (an error) must not outlive it
            if ev.how in ("send", "edit"):
                self.view.append_item({"id": f"pending-user-{ev.beat}", "role": "user", "text": ev.user, "beat": ev.beat})
            elif self.transcript.items:  # regenerate / continue: the old reply or draft makes way for the new one
                last = self.transcript.items[-1]
                if last["role"] in ("assistant", "draft"):
                    self.view.remove_item(str(len(self.transcript.items) - 1))
            self.view.scroll_to_bottom()
            self.view.set_pending("", tr("conv.writing", name=self.chat.card.name if self.chat else ""))
            self.tabs.setCurrentWidget(self.draft_pane)
        elif k == "draft_changed":
            self.view.set_pending(ev.text, tr("pending.draft", v=ev.version))
        elif k == "scribe_finished":
            self.refresh_state()

    def run_command(self, make: Callable[[], Awaitable[BeatResult]], restore: str = "") -> Optional[asyncio.Task[Any]]:
        """Run one beat command as a task (one at a time). ``restore``: the words the input box gave up for it,
        put back when the disk or the chat refused them before anything was played."""
        if self.chat is None or self.busy or self.refuse_read_only():
            return None

        async def go() -> None:
            self.set_busy(True)
            res: Optional[BeatResult] = None
            from ...core.chat import BeatSaveError, SessionWriteError

            try:
                res = await make()
                self.last_result = res
                self.results.append(res)
                if res.outcome == "error" and res.error:
                    self.statusBar().showMessage(tr("err.beat", error=res.error), 15000)
            except ValueError as e:  # refused before it was played (e.g. a group chat nobody can answer)
                self.statusBar().showMessage(show(e), 8000)
                if restore and not self.input.toPlainText().strip():
                    self.input.setPlainText(restore)  # the words go back to the box
            except OSError as e:
                if isinstance(e, SessionWriteError):
                    if restore and not self.input.toPlainText().strip():
                        self.input.setPlainText(restore)  # nothing was played: the words go back to the box
                    QMessageBox.critical(self, tr("app.title"), tr("err.disk.refused", error=e.strerror))
                elif isinstance(e, BeatSaveError):
                    self._offer_retry_save(e)
                else:
                    QMessageBox.critical(self, tr("app.title"), tr("err.disk.write", error=e))
            except Exception as e:  # never let a beat take the window down
                log.exception("beat failed")
                QMessageBox.critical(self, tr("app.title"), tr("err.beat.unexpected", error=f"{type(e).__name__}: {e}"))
            finally:
                self.view.set_pending(None)
                self.session.broadcast(self.chat.last_changes if self.chat is not None else None)
                beat = self.chat.pending_draft() or self.chat.latest_beat() if self.chat is not None else None
                self.draft_pane.beat_id = beat.id if beat is not None else None  # what the pane shows now
                self.draft_pane.turn = self._last_user_id()
                self._show_recovery()
                self.set_busy(False)
                self._prefill() if self.is_demo else None
                self.beatFinished.emit(res)
                if self._closing:
                    QTimer.singleShot(0, self.close)

        self.session.task = asyncio.ensure_future(go())
        return self.session.task

    def _offer_retry_save(self, e: Any) -> None:
        """The beat ran but the disk refused (part of) it: offer 「重试保存」 until it works or the user gives up
        (the lines stay in memory either way; the next successful save writes them)."""
        chat = self.chat
        while chat is not None:
            box = QMessageBox(QMessageBox.Icon.Critical, tr("app.title"), f"{e.strerror}", parent=self)
            retry = box.addButton(tr("save.retry"), QMessageBox.ButtonRole.AcceptRole)
            box.addButton(tr("save.later"), QMessageBox.ButtonRole.RejectRole)
            box.exec()
            if box.clickedButton() is not retry:
                return
            try:
                chat.retry_save()
                self.statusBar().showMessage(tr("saved"), 5000)
                if chat.needs_scribe:  # the beat was saved late: the scribe keeps its ledger now
                    QTimer.singleShot(0, lambda: self.run_command(lambda: chat.finish_pending(on_event=self.on_event)))
                return
            except OSError as again:
                e = again

    def refuse_read_only(self) -> bool:
        """True (and says so in the status bar) when the data folder cannot be written: nothing that cannot be saved
        is started (issue 15 item 8)."""
        if not self.read_only_reason:
            return False
        self.statusBar().showMessage(tr("home.readonly.blocked"), 15000)
        return True

    def send_clicked(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or self.chat is None or self.busy or self.refuse_read_only():
            return
        if self.is_demo:
            # each demo beat replays its own recording, so a stopped beat is simply played again
            self.chat.model = self._demo_model(Path(self.chat.dir), self._demo_progress())
        if isinstance(self.chat.model, _NoModel):
            QMessageBox.information(self, tr("app.title"), self.chat.model.why or tr("model.none"))
            self.open_settings()
            return
        self.input.clear()
        chat = self.chat
        chapter = self.session.reply_chapter if chat.mode == "agent" else None  # ui/writing/reply_chapter.py
        self.run_command(lambda: chat.send(text, ask=self.ask_user, on_event=self.on_event, chapter=chapter),
                         restore=text)

    def stop_clicked(self) -> None:
        if self.chat is not None:
            self.chat.stop()
        if self.ask_dialog.isVisible():
            self.ask_dialog.stop()

    def regenerate_clicked(self) -> None:
        if self.chat is None:
            return
        if self.is_demo:
            self.statusBar().showMessage(tr("demo.no.regen"), 8000)
            return
        if self.chat.last_user_text() is None:
            self.statusBar().showMessage(tr("regen.none"), 6000)
            return
        chat = self.chat
        self.run_command(lambda: chat.regenerate(ask=self.ask_user, on_event=self.on_event))

    def seal_as_is(self) -> None:
        chat = self.chat
        if chat is not None:
            self.run_command(lambda: chat.seal_as_is(on_event=self.on_event))

    def continue_beat(self) -> None:
        chat = self.chat
        if chat is not None:
            self.run_command(lambda: chat.continue_beat(ask=self.ask_user, on_event=self.on_event))

    def _show_recovery(self) -> None:
        """The draft pane's notices for ledger gaps and unanswered words on the shown branch."""
        chat = self.chat
        if chat is None or chat.mode == "agent":
            self.draft_pane.show_recovery(0, None)
            return
        left = chat.unanswered()
        self.draft_pane.show_recovery(len(chat.ledger_gaps()), left.text if left is not None else None, chat.cut_turn())

    def repair_ledger(self) -> None:
        """「补记账」: the scribe for every reply a crash left without its ledger, oldest first."""
        chat = self.chat
        if chat is None:
            return

        async def repair() -> BeatResult:
            done = await chat.repair_ledger(on_event=self.on_event)
            from ...core.chat import BeatResult

            return done[-1] if done else BeatResult(user="", injection="", outcome="sealed")

        self.run_command(repair)

    def _edit_unanswered(self) -> None:
        """「改了再发」: the unanswered words go to the input box; sending them puts them beside the old ones."""
        left = self.chat.unanswered() if self.chat is not None else None
        if left is not None:
            self.input.setPlainText(left.text)
            self.input.setFocus()

    def _drop_unanswered(self) -> None:
        """「撤下」: the unanswered words leave the branch (kept on their own)."""
        if self.chat is None:
            return
        try:
            self.chat.drop_unanswered()
        except (ValueError, RuntimeError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        except OSError as e:
            QMessageBox.critical(self, tr("app.title"), tr("err.disk.write", error=e))
            return
        self.after_branch_switch()

    def ledger_edited(self, state: WorldState) -> None:
        """Append the user's ledger as a new snapshot; the next beat uses it."""
        if self.chat is None:
            return
        try:
            self.chat.edit_state(state)
        except OSError as e:
            QMessageBox.critical(self, tr("app.title"), tr("err.ledger.save", error=e))
            return
        self.session.broadcast(self.chat.last_changes)
        self.statusBar().showMessage(tr("ledger.updated"), 6000)

    def _branches_changed(self, focus: Optional[str] = None) -> None:
        """After anything that moves the branch: the navigator (now or when its tab is shown; ``focus`` a node to
        keep in view), 撤销本轮, the context meter."""
        self._nav_stale = True
        self._nav_focus = focus
        self._refresh_branches()
        agent_desk.update_undo(self)
        usage = None
        if self.chat is not None:
            try:
                usage = self.chat.context_usage()
            except Exception:  # the meter must never take the window down
                log.exception("context_usage failed")
        self.draft_pane.set_context(usage)

    def _can_undo(self) -> bool:
        """撤销本轮 applies to role-play chats with a user message on the branch (an agent chat undoes a turn in its
        checkpoint timeline, where the chapter files go back too)."""
        return self.chat is not None and self.chat.mode != "agent" and self.chat.last_user_text() is not None

    def _refresh_branches(self, force: bool = False) -> None:
        """Rebuild the navigator when it is the tab shown (else later, when it is shown)."""
        if self.chat is None:
            self.branch_nav.set_nodes([])
            return
        if not force and (not self._nav_stale or self.tabs.currentWidget() is not self.branch_nav):
            return
        self._nav_stale = False
        self.branch_nav.set_nodes(self.chat.branch_tree(), focus=getattr(self, "_nav_focus", None))

    def show_branches(self) -> None:
        """「分支」: show the navigator tab."""
        self.tabs.setCurrentWidget(self.branch_nav)
        self._refresh_branches(force=True)

    def after_branch_switch(self, message: str = "", focus: Optional[str] = None) -> None:
        """After anything that changes the shown branch (a swipe, the navigator, undo, an edited reply): the
        transcript, the ledger and the draft pane follow it (the newest beat shown, not the newest beat played)."""
        self._notice_focus = focus
        self.session.broadcast(self.chat.last_changes if self.chat is not None else None)
        self._show_branch_beat()
        self._show_recovery()
        self.set_busy(self.busy)  # what can be done follows the branch (重来, 续写)
        if self.is_demo:
            self._prefill()
        if message:
            self.statusBar().showMessage(message, 5000)

    def swipe_clicked(self, entry_id: str, delta: int) -> None:
        """「◀ / ▶」 on a reply or user message: show its previous / next alternative."""
        if self.chat is None or self.busy:
            return
        try:
            self.chat.swipe(entry_id, delta)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        self.after_branch_switch()

    def select_node(self, node_id: str) -> None:
        """A navigator row was clicked: show the branch through that user message."""
        if self.chat is None or self.busy:
            return
        try:
            self.chat.select(node_id)
        except (KeyError, ValueError, RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        self.after_branch_switch(tr("nav.switched"), focus=node_id)

    def undo_clicked(self) -> None:
        """「撤销本轮」: the branch moves back before its last user message (nothing is deleted)."""
        if self.chat is None or self.busy:
            return
        if self.chat.mode == "agent":
            self.statusBar().showMessage(tr("undo.agent"), 8000)
            return
        last = self.chat.last_user_text()
        try:
            self.chat.undo()
        except ValueError:
            self.statusBar().showMessage(tr("undo.none"), 6000)
            return
        except (RuntimeError, OSError) as e:
            self.statusBar().showMessage(show(e), 6000)
            return
        if last is not None and not self.input.toPlainText().strip() and not self.is_demo:
            self.input.setPlainText(last)  # the undone words come back to the box, to send again or change
        self.after_branch_switch(tr("undo.done"))

    def edit_user_clicked(self, entry_id: str) -> Optional[EditMessageDialog]:
        """「编辑」 on a user message: a small box with its text; OK plays it again on a new branch."""
        if self.chat is None or self.busy:
            return None
        if self.is_demo:
            self.statusBar().showMessage(tr("branch.demo"), 8000)
            return None
        try:
            text = self.chat.entry_text(entry_id)
        except KeyError:
            return None
        dlg = EditMessageDialog(entry_id, text, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.submitted.connect(self.edit_user_submitted)
        dlg.open()
        self._edit_dialog = dlg
        return dlg

    def edit_user_submitted(self, entry_id: str, text: str) -> None:
        """Play the edited message: the view keeps what came before it, the beat runs like any other."""
        chat = self.chat
        if chat is None or self.busy:
            return
        if isinstance(chat.model, _NoModel):
            QMessageBox.information(self, tr("app.title"), chat.model.why or tr("model.none"))
            return
        # the edited message is on screen: look in the shown page only (older pages are built lazily)
        idx = next((i for i in range(len(self.transcript.items) - 1, self.transcript.shown_from - 1, -1) if self.transcript.items[i]["id"] == entry_id), None)
        if idx is not None:
            self.view.set_transcript(self.display_items(self.transcript.shown_from, idx), self.transcript.shown_from > 0)
        self.run_command(lambda: chat.edit_user(entry_id, text, ask=self.ask_user, on_event=self.on_event))

    def inspect_entry(self, entry_id: str) -> Optional[InspectorDialog]:
        """「查看提示词」 for the beat of a transcript item: every model call as sent, in a dialog."""
        if self.chat is None:
            return None
        try:
            calls = self.chat.inspect_beat(entry_id)
        except (KeyError, ValueError, OSError) as e:
            self.statusBar().showMessage(show(e), 8000)
            return None
        except Exception as e:  # a look at the record must never take the window down
            log.exception("inspect_beat failed")
            self.statusBar().showMessage(f"{tr('inspect.title')}{tr('sep.colon')}{type(e).__name__}: {e}", 8000)
            return None
        beat = next((it.get("beat") for it in self.transcript.items if it["id"] == entry_id), None)
        title = tr("inspect.title") + (f" · {tr('nav.beat', n=beat)}" if beat else "")
        dlg = InspectorDialog(calls, title, self)
        from ..dialogs.authors_note import notes_line  # issue 17: the Author's / Character's Note are shown here

        dlg.set_notes(notes_line(self.chat))
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self._inspector = dlg
        return dlg

    def inspect_latest(self) -> Optional[InspectorDialog]:
        """「查看提示词」 for the latest beat on the shown branch."""
        if self.chat is None:
            return None
        items = self.transcript.items or self.chat.transcript()
        last = next((it for it in reversed(items) if it["role"] in ("assistant", "draft", "user")), None)
        if last is None:
            self.statusBar().showMessage(tr("inspect.nobeat"), 6000)
            return None
        return self.inspect_entry(last["id"])

    def open_summaries(self):
        """「前情提要」: read and edit the relay summaries of the shown branch."""
        from ..roleplay.summaries import SummariesDialog

        if self.chat is None:
            return None
        dlg = SummariesDialog(self.chat, self, self.session)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self._summaries_dialog = dlg
        return dlg
