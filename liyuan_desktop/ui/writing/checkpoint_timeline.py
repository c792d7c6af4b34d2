"""The checkpoint timeline of an agent chat (检查点): every checkpoint of ``正文/``, newest first, its diff, and the
two ways back (seed 000: 「只把正文文件恢复到某个检查点、讨论不动；或者文件和对话一起回到那一轮之前，前端的『撤销本轮』
就是后者」):

* 「只恢复正文」 — the chapter folder becomes exactly this checkpoint (:meth:`StoryHistory.restore`); the conversation
  stays where it is.
* 「正文和对话一起回到这一轮之前」 — for a checkpoint made by an agent turn (it has a ``turnId``): the folder becomes
  the checkpoint before it (the files as they were before the turn) and the chat's active leaf moves to the parent of
  the turn's user entry (``Chat.restore_checkpoint(…, with_conversation=True)``, the same command the CLI calls).
  The old conversation is not deleted: it stays in ``session.jsonl`` as a branch.

Both ask first (``confirm(title, text)``, an attribute tests replace) with a text that names every file that will be
rewritten, removed or added back. Both are undoable: :meth:`StoryHistory.restore` first records the folder as it is,
so the checkpoint just before the restore checkpoint is the pre-restore state — restore it to undo. Right after a
restore, 「撤销刚才的恢复」 does that and also moves the conversation back (the leaf before is remembered for this
window session).

The diff view (ui/writing/prose_diff.py) shows, per changed file, what the checkpoint changed against its predecessor as
prose — by sentence, then by word/character, the changed words highlighted, inline or side by side, unchanged
sentences folded unless 「全文」 is ticked (no ``@@`` hunks). After a restore, a card above the diff says what was
restored (the checkpoint's label and time, the files rewritten / removed / added back, what happened to the
conversation) and how to undo it — its 「撤销刚才的恢复」 button — so the pane never goes blank. ``restored()`` is
emitted after every restore.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..infra.i18n import register, show, tr
from ..infra.theme import mode, set_role
from .prose_diff import ProseDiffView
from .story_pane import KEY, StoryPane

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "desk.restored.files": {"zh": "已把正文恢复到检查点「{message}」（{time}）", "en": "The files were restored to the checkpoint “{message}” ({time})"},
    "desk.restored.turn": {"zh": "已撤销「{message}」这一轮（{time}）：正文回到这一轮之前",
                           "en": "The turn “{message}” ({time}) was undone: the files are back to before it"},
    "desk.restored.changed": {"zh": "这次恢复改动了：", "en": "This restore changed:"},
    "desk.restored.talk.kept": {"zh": "对话没动。", "en": "The conversation was not touched."},
    "desk.restored.talk.moved": {"zh": "对话回到了你说「{said}」之前（那一段没有删除，仍是一条分支）。",
                                 "en": "The conversation went back to before you said “{said}” (nothing deleted; it stays as a branch)."},
    "desk.restored.undo": {"zh": "想撤销：点「撤销刚才的恢复」，正文{talk}回到恢复之前。恢复前的正文也记在检查点「{pre}」里。",
                           "en": "To undo: press “Undo that restore” and the files{talk} go back to before the restore. They are also kept in the checkpoint “{pre}”."},
    "desk.restored.undo.talk": {"zh": "和对话", "en": " and the conversation"},
    "desk.restored.diff": {"zh": "下面是这次恢复对正文的改动。", "en": "Below: what the restore changed in the files."},
    "desk.restored.close": {"zh": "知道了", "en": "Got it"},
    "desk.restored.summary": {"zh": "{title}。改动：{files}。{talk} 要撤销：右侧「检查点」里点「撤销刚才的恢复」。",
                              "en": "{title}. Changed: {files}. {talk} To undo: “Undo that restore” under Checkpoints on the right."},
})

def changed_summary(cp: Any) -> str:
    """「改 001-x.md」 / 「改 2 · 新 1 · 删 1 · 改名 1」 for a checkpoint's ``changed``."""
    ch = cp.changed
    groups = [(tr("story.ch.modified"), list(ch.modified)), (tr("story.ch.added"), list(ch.added)),
              (tr("story.ch.removed"), list(ch.removed)),
              (tr("story.ch.renamed"), [f"{r['from']} → {r['to']}" for r in ch.renamed])]
    groups = [(k, v) for k, v in groups if v]
    if not groups:
        return tr("story.ch.none")
    total = sum(len(v) for _k, v in groups)
    if total == 1:
        k, v = groups[0]
        return f"{k} {v[0]}"
    return " · ".join(f"{k} {len(v)}" for k, v in groups)


def plan_restore(current: dict[str, str], target: dict[str, str]) -> dict[str, list[str]]:
    """What making the folder ``target`` does to ``current`` (both ``{name: hash}``): ``rewritten`` (in both, other
    content), ``removed`` (only now), ``added`` (added back: only in the target)."""
    return {"rewritten": sorted(n for n in target if n in current and current[n] != target[n]),
            "removed": sorted(n for n in current if n not in target),
            "added": sorted(n for n in target if n not in current)}


def _when(ts: int) -> str:
    return datetime.fromtimestamp(ts / 1000).strftime("%m-%d %H:%M:%S")


class CheckpointTimelinePane(StoryPane):
    """Checkpoints newest first; the selected one's diff; restore buttons. ``set_chat``, ``refresh``,
    ``set_busy``; ``restored()``."""

    restored = Signal()

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self._undo: Optional[tuple[str, Optional[str]]] = None  # (pre-restore checkpoint id, leaf before or None)
        self._summary = ""

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.list = self.make_list([tr("story.tl.time"), tr("story.tl.who"), tr("story.tl.message"),
                                    tr("story.tl.changed")], stretch=2)
        self.list.itemSelectionChanged.connect(self._selected_changed)

        btns = QHBoxLayout()
        self.files_btn = QPushButton(tr("story.restore.files"))
        self.files_btn.setToolTip(tr("story.restore.files.tip"))
        self.files_btn.clicked.connect(lambda _=False: self.restore_files())
        self.turn_btn = QPushButton(tr("story.restore.turn"))
        self.turn_btn.setToolTip(tr("story.restore.turn.tip"))
        self.turn_btn.clicked.connect(lambda _=False: self.restore_before_turn())
        self.undo_btn = QPushButton(tr("story.restore.undo"))
        self.undo_btn.clicked.connect(lambda _=False: self.undo_restore())
        self.undo_btn.hide()
        btns.addWidget(self.files_btn)
        btns.addWidget(self.turn_btn)
        btns.addStretch(1)

        # after a restore: what was restored and how to undo it (above the diff, so the pane never goes blank)
        self.card = QFrame()
        set_role(self.card, "notice")
        cl = QVBoxLayout(self.card)
        cl.setContentsMargins(8, 6, 8, 6)
        self.card_title = QLabel("")
        self.card_title.setWordWrap(True)
        self.card_title.setTextFormat(Qt.TextFormat.PlainText)
        set_role(self.card_title, "title")
        self.card_text = QLabel("")
        self.card_text.setWordWrap(True)
        self.card_text.setTextFormat(Qt.TextFormat.PlainText)
        cl.addWidget(self.card_title)
        cl.addWidget(self.card_text)
        cb = QHBoxLayout()
        cb.addWidget(self.undo_btn)
        self.card_close = QPushButton(tr("desk.restored.close"))
        self.card_close.clicked.connect(lambda _=False: self.card.hide())
        cb.addWidget(self.card_close)
        cb.addStretch(1)
        cl.addLayout(cb)
        self.card.hide()

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.list, 1)
        tl.addLayout(btns)
        self.diff = ProseDiffView()
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.card)
        bl.addWidget(self.diff, 1)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(top)
        self.split.addWidget(bottom)
        self.split.setSizes([170, 530])  # the diff gets the room
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)
        self.make_status(lay)
        self.set_chat(None)

    # -- chat -----------------------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat``'s checkpoints (agent chats; anything else or None shows an empty pane)."""
        if chat is not self.chat:
            self._undo = None
            self.card.hide()
        self._show_chat(chat)
        self.refresh()

    def checkpoints(self) -> list[Any]:
        """The chat's checkpoints, newest first (as listed)."""
        return list(reversed(self.history.checkpoints())) if self.chat is not None else []

    def refresh(self) -> None:
        """Re-read the checkpoints (keeps the selection when it still exists)."""
        self._fill(self._rows())
        self._selected_changed()

    def _rows(self) -> Iterator[QTreeWidgetItem]:
        """One row a checkpoint, newest first: when, who, the message (↩ a restore), what changed; keyed by id."""
        for cp in self.checkpoints():
            who = tr("conv.you") if cp.author == "user" else "agent"
            msg = cp.message.replace("\n", " ")
            if cp.restoredFrom:
                msg = "↩ " + msg
            if cp.aborted:
                msg += " " + tr("story.tl.aborted")
            it = QTreeWidgetItem([_when(cp.ts), who, msg, changed_summary(cp)])
            it.setData(0, KEY, cp.id)
            it.setToolTip(2, cp.message)
            it.setToolTip(3, "\n".join(self._changed_lines(cp)))
            if cp.author == "agent":
                it.setForeground(1, QColor("#b89ae0" if mode() == "dark" else "#6a3fa0"))
            yield it

    def _changed_lines(self, cp: Any) -> list[str]:
        ch = cp.changed
        return ([f"{tr('story.ch.modified')} {n}" for n in ch.modified] + [f"{tr('story.ch.added')} {n}" for n in ch.added]
                + [f"{tr('story.ch.removed')} {n}" for n in ch.removed]
                + [f"{tr('story.ch.renamed')} {r['from']} → {r['to']}" for r in ch.renamed])

    def selected_id(self) -> Optional[str]:
        """The selected checkpoint's id (None: none selected)."""
        return self.selected()

    def _selected_changed(self) -> None:
        cid = self.selected_id()
        if self.chat is None or cid is None:
            self.diff.show_note("")
        else:
            try:
                files = self.history.diff_text(cid)
            except Exception as e:  # a missing/damaged blob: say so instead of failing the pane
                self.diff.show_note(tr("story.diff.error", error=show(e)))
            else:
                if files:
                    self.diff.show_files(files)
                else:
                    self.diff.show_note(tr("story.diff.nochange"))
        self._update_buttons()

    def _update_buttons(self) -> None:
        ok = self.chat is not None and not self._busy
        cp, pred, user = self._selected_turn()
        self.files_btn.setEnabled(ok and cp is not None)
        self.turn_btn.setEnabled(ok and cp is not None and pred is not None and user is not None)
        self.undo_btn.setVisible(self._undo is not None)
        self.undo_btn.setEnabled(ok and self._undo is not None)
        self.list.setEnabled(self.chat is not None)

    # -- restore --------------------------------------------------------------------------------------------
    def _selected_turn(self) -> tuple[Any, Any, Any]:
        """(selected checkpoint, the one before it, its turn's user words) — each may be None."""
        cid = self.selected_id()
        if self.chat is None or cid is None:
            return None, None, None
        cps = self.history.checkpoints()
        idx = next((i for i, c in enumerate(cps) if c.id == cid), None)
        if idx is None:
            return None, None, None
        cp = cps[idx]
        pred = cps[idx - 1] if idx > 0 else None
        return cp, pred, self.chat.checkpoint_turn_text(cp)

    def _file_lines(self, target: dict[str, str]) -> list[str]:
        plan = plan_restore(self.history.snapshot(), target)
        out = []
        for key, label in (("rewritten", "story.plan.rewritten"), ("removed", "story.plan.removed"),
                           ("added", "story.plan.added")):
            if plan[key]:
                out.append(tr(label, names=tr("sep.list").join(plan[key])))
        return out or [tr("story.plan.same")]

    def confirm_text_files(self, cp: Any) -> str:
        """The confirmation text of 「只恢复正文」 to ``cp``: which files change; the conversation stays; undo."""
        return "\n".join([tr("story.confirm.files", message=cp.message, time=_when(cp.ts)), *self._file_lines(cp.files),
                          tr("story.confirm.files.talk"), "", tr("story.confirm.undo")])

    def confirm_text_turn(self, cp: Any, pred: Any, user: Any) -> str:
        """The confirmation text of 「正文和对话一起回到这一轮之前」 for ``cp``."""
        said = (user or "").replace("\n", " ")
        if len(said) > 40:
            said = said[:40] + "…"
        return "\n".join([tr("story.confirm.turn", message=cp.message, time=_when(cp.ts)), *self._file_lines(pred.files),
                          tr("story.confirm.turn.talk", said=said), "", tr("story.confirm.undo.turn")])

    def restore_files(self) -> Optional[Any]:
        """「只恢复正文」 for the selected checkpoint (after ``confirm``). Returns the restore checkpoint or None."""
        cp, _pred, _user = self._selected_turn()
        if cp is None or self._busy:
            return None
        if not self.confirm(tr("story.restore.files"), self.confirm_text_files(cp)):
            return None
        lines = self._file_lines(cp.files)
        try:
            done = self.shown_chat.restore_checkpoint(cp.id).checkpoint
        except Exception as e:
            self.inform(tr("story.restore.files"), tr("story.err.restore", error=show(e)))
            return None
        self._after_restore(done, None, tr("story.done.files", message=cp.message),
                            card=(tr("desk.restored.files", message=cp.message, time=_when(cp.ts)), lines, None))
        return done

    def restore_before_turn(self) -> Optional[Any]:
        """「正文和对话一起回到这一轮之前」 for the selected agent checkpoint (after ``confirm``): files to the
        checkpoint before it, the active leaf to the parent of the turn's user entry."""
        cp, pred, user = self._selected_turn()
        if cp is None or pred is None or user is None or self._busy:
            return None
        if not self.confirm(tr("story.restore.turn"), self.confirm_text_turn(cp, pred, user)):
            return None
        lines = self._file_lines(pred.files)
        try:
            res = self.shown_chat.restore_checkpoint(cp.id, with_conversation=True)
        except Exception as e:
            self.inform(tr("story.restore.turn"), tr("story.err.restore", error=show(e)))
            self.refresh()
            return None
        self._after_restore(res.checkpoint, res.old_leaf, tr("story.done.turn", message=cp.message),
                            card=(tr("desk.restored.turn", message=cp.message, time=_when(cp.ts)), lines, user))
        return res.checkpoint

    def _after_restore(self, done: Any, old_leaf: Optional[str], message: str,
                       card: Optional[tuple[str, list[str], Optional[str]]] = None) -> None:
        cps = self.history.checkpoints()
        idx = next((i for i, c in enumerate(cps) if c.id == done.id), None)
        pre = cps[idx - 1] if idx else None
        self._undo = (pre.id, old_leaf) if pre else None
        self.status.setText(message)
        if card is not None:
            self._show_card(*card, pre_label=pre.message if pre else None)
        self.refresh()
        self.select(done.id)
        self.restored.emit()

    def _show_card(self, title: str, lines: list[str], said: Optional[str], pre_label: Optional[str]) -> None:
        """The after-restore card: ``title`` (checkpoint and time), the files it changed, the conversation, undo."""
        if said is None:
            talk = tr("desk.restored.talk.kept")
        else:
            said = said.replace("\n", " ")
            talk = tr("desk.restored.talk.moved", said=said[:40] + ("…" if len(said) > 40 else ""))
        body = [tr("desk.restored.changed"), *lines, talk]
        if pre_label is not None:
            body += ["", tr("desk.restored.undo", pre=pre_label,
                            talk=tr("desk.restored.undo.talk") if said is not None else "")]
        body.append(tr("desk.restored.diff"))
        files = "；".join(x.lstrip("· ") for x in lines)
        self._summary = tr("desk.restored.summary", title=title, files=files, talk=talk)
        self.card_title.setText(title)
        self.card_text.setText("\n".join(body))
        self.card.show()

    def restore_summary(self) -> str:
        """One line for the window's centre pane after a restore (what, which files, the conversation, how to undo);
        "" when there is no restore to undo."""
        return self._summary if self._undo is not None and not self.card.isHidden() else ""

    def restore_card_text(self) -> str:
        """What the after-restore card says now ("" when it is hidden)."""
        return "" if self.card.isHidden() else self.card_title.text() + "\n" + self.card_text.text()

    def undo_restore(self) -> Optional[Any]:
        """Undo the last restore made here: files back to the checkpoint made just before it and, when the
        conversation was moved, the active leaf back to where it was."""
        if self._undo is None or self.chat is None or self._busy:
            return None
        pre_id, old_leaf = self._undo
        pre = self.history.get(pre_id)
        text = "\n".join([tr("story.confirm.undo.files", message=pre.message, time=_when(pre.ts)), *self._file_lines(pre.files)]
                         + ([tr("story.confirm.undo.talk")] if old_leaf else []))
        if not self.confirm(tr("story.restore.undo"), text):
            return None
        try:
            done = self.chat.undo_restore(pre_id, old_leaf)
        except Exception as e:
            self.inform(tr("story.restore.undo"), tr("story.err.restore", error=show(e)))
            return None
        self._undo = None
        self.card.hide()
        self.status.setText(tr("story.done.undo"))
        self.refresh()
        self.select(done.id)
        self.restored.emit()
        return done
