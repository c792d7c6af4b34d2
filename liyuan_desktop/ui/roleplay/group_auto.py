"""Several replies per message and auto-mode in the window (issue 31), for the 成员 tab (group_members.py).

- **Several replies**: after the user's beat, every other member the message activated (SillyTavern: natural order
  plays everyone named or who rolled their talkativeness, list order every unmuted member) replies in turn, each
  in a beat of its own (``Chat.group_reply``), started from the window's ``beatFinished`` one after the other.
- **Auto-mode** (自动续聊): a check box, the delay in seconds between turns (SillyTavern's ``auto_mode_delay``) and
  the turn limit per run, saved in the group (``Group.auto_mode``/``auto_delay``/``auto_limit``). When it is on, a
  run (``core.group.auto.AutoRun``) starts after the replies to a message (or at once when the box is ticked): the
  member the strategy picks speaks, then the next, ``delay`` seconds apart, until the limit. Stop (停止, visible
  while a run or a chain of replies goes on), the window's own Stop, typing in the input box, another chat shown
  or a failed turn end it; the status bar says why.

Every turn is a normal beat command (``window.run_command``, the same path as Send: an asyncio task on the
window's loop, its model calls streamed, nothing blocking the UI thread); the waits are QTimer single shots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core.chat import group_play
from ...core.group import save_group
from ...core.group.auto import GOOD_OUTCOMES, AutoRun
from ..infra.i18n import register, show, tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

register({
    "groupauto.box": {"zh": "自动续聊", "en": "Auto-mode"},
    "groupauto.box.tip": {"zh": "成员们自己接着聊（不用你发言），直到你打字、按停止或到达轮数上限",
                          "en": "The members go on among themselves until you type, press Stop or the limit is reached"},
    "groupauto.delay": {"zh": "间隔", "en": "Delay"},
    "groupauto.delay.suffix": {"zh": " 秒", "en": " s"},
    "groupauto.limit": {"zh": "每次最多", "en": "At most"},
    "groupauto.limit.suffix": {"zh": " 轮", "en": " turns"},
    "groupauto.self": {"zh": "允许接自己的话", "en": "Allow self responses"},
    "groupauto.self.tip": {"zh": "自然顺序与自动续聊里，刚发言的成员也可以紧接着再说（SillyTavern 默认关闭）",
                           "en": "In natural order and auto-mode the member who just spoke may speak again "
                                 "(off by default, as in SillyTavern)"},
    "groupauto.stop": {"zh": "停止自动续聊", "en": "Stop auto-mode"},
    "groupauto.running": {"zh": "自动续聊中：第 {n}/{limit} 轮", "en": "Auto-mode: turn {n} of {limit}"},
    "groupauto.queued": {"zh": "还有 {n} 位成员要回复", "en": "{n} more members to reply"},
})


class GroupAutoRow(QWidget):
    """The auto-mode controls of the 成员 tab: the check box, delay, limit, "allow self responses", Stop and what
    is going on."""

    def __init__(self) -> None:
        super().__init__()
        self.box = QCheckBox(tr("groupauto.box"))
        self.box.setObjectName("groupAuto")
        self.box.setToolTip(tr("groupauto.box.tip"))
        self.delay = QDoubleSpinBox()
        self.delay.setObjectName("groupAutoDelay")
        self.delay.setRange(0.0, 600.0)
        self.delay.setDecimals(1)
        self.delay.setSuffix(tr("groupauto.delay.suffix"))
        self.limit = QSpinBox()
        self.limit.setObjectName("groupAutoLimit")
        self.limit.setRange(1, 100)
        self.limit.setSuffix(tr("groupauto.limit.suffix"))
        self.self_box = QCheckBox(tr("groupauto.self"))
        self.self_box.setObjectName("groupAllowSelf")
        self.self_box.setToolTip(tr("groupauto.self.tip"))
        self.stop = QPushButton(tr("groupauto.stop"))
        self.stop.setObjectName("groupAutoStop")
        self.stop.setVisible(False)
        self.state = QLabel()
        self.state.setObjectName("groupAutoState")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        for w in (self.box, QLabel(tr("groupauto.delay")), self.delay, QLabel(tr("groupauto.limit")), self.limit,
                  self.self_box):
            row.addWidget(w)
        row.addStretch(1)
        lay.addLayout(row)
        under = QHBoxLayout()
        under.addWidget(self.stop)
        under.addWidget(self.state, 1)
        lay.addLayout(under)


class GroupAutoPlayer(QObject):
    """Plays the replies a message activated and the auto-mode runs of the shown group chat (module doc).
    ``run``: the auto-mode run going on (None when none); ``last_end``: why the last run ended (a catalog
    message)."""

    def __init__(self, win: Any, row: GroupAutoRow):
        super().__init__(row)
        self.win, self.row = win, row
        self.run: Optional[AutoRun] = None
        self.chat: Optional["Chat"] = None  # the chat the run / the chain belongs to
        self.turn_pending = False  # the command running is an auto-mode turn
        self.last_end: Any = None
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(lambda: self.next_turn())
        win.beatFinished.connect(lambda res: self.after_beat(res))
        win.input.textChanged.connect(lambda: self.user_typing())
        win.stop_btn.clicked.connect(lambda: self.stop())
        win.session.chatShown.connect(lambda *_a: self.stop(quiet=True))
        row.stop.clicked.connect(lambda: self.stop_clicked())
        row.box.toggled.connect(lambda on: self.set_auto(bool(on)))
        row.self_box.toggled.connect(lambda on: self.save(allow_self_responses=bool(on)))
        row.delay.editingFinished.connect(lambda: self.save(auto_delay=float(row.delay.value())))
        row.limit.editingFinished.connect(lambda: self.save(auto_limit=int(row.limit.value())))

    # -- the group's settings ------------------------------------------------------------------------------------
    def show_group(self, group: Any) -> None:
        """Show ``group``'s auto-mode settings (no signal fired)."""
        for w, value in ((self.row.box, group.auto_mode), (self.row.delay, group.auto_delay),
                         (self.row.limit, group.auto_limit), (self.row.self_box, group.allow_self_responses)):
            w.blockSignals(True)
            w.setChecked(value) if isinstance(w, QCheckBox) else w.setValue(value)
            w.blockSignals(False)
        self.sync()

    def save(self, **update: Any) -> None:
        """Save these auto-mode settings in the shown chat's group (every chat of the group follows them)."""
        chat = self.win.chat
        group = group_play.chat_group(chat) if chat is not None else None
        if group is None:
            return
        try:
            save_group(group.model_copy(update=update))
        except OSError as e:
            self.win.statusBar().showMessage(show(e), 8000)

    def set_auto(self, on: bool) -> None:
        """The check box: save it; ticked while the chat is idle starts a run at once, unticked stops one."""
        self.save(auto_mode=on)
        if not on:
            self.stop()
        elif self.run is None and not self.win.busy and self.win.chat is not None:
            self.start_run()

    # -- the turns -----------------------------------------------------------------------------------------------
    def start_run(self) -> None:
        """A new auto-mode run with the group's limit and delay (the first turn at once)."""
        group = group_play.chat_group(self.win.chat) if self.win.chat is not None else None
        if group is None:
            return
        self.chat, self.run = self.win.chat, AutoRun(group.auto_limit, group.auto_delay)
        self.schedule(0.0)

    def schedule(self, seconds: float) -> None:
        """The next turn in ``seconds`` (a QTimer single shot; 0 = as soon as the loop is free)."""
        self.timer.start(int(seconds * 1000))
        self.sync()

    def after_beat(self, res: Any) -> None:
        """A command finished: the next member the message activated, else the next auto-mode turn (a run starts
        after the replies to a message when the group's auto-mode is on), else the run is over."""
        chat = self.win.chat
        group = group_play.chat_group(chat) if chat is not None else None
        was_auto, self.turn_pending = self.turn_pending, False
        outcome = str(getattr(res, "outcome", "")) if res is not None else "error"
        if self.run is not None and was_auto:
            self.run.played_one(outcome)
        if group is None or outcome not in GOOD_OUTCOMES:
            if chat is not None:
                group_play.drop_waiting(chat)
            self.finish(nobody=res is None and self.run is not None)
            return
        if group_play.waiting(chat):
            self.chat = chat
            self.schedule(0.0)
        elif self.run is None and group.auto_mode and not was_auto:
            self.start_run()
        elif self.run is not None and self.run.want():
            self.schedule(self.run.pause())
        else:
            self.finish()

    def next_turn(self) -> None:
        """The timer fired: play the next reply (a member still waiting, or an auto-mode turn)."""
        chat: Optional["Chat"] = self.chat
        if chat is None or self.win.chat is not chat:
            self.finish()
            return
        if self.win.busy:  # the user started something: its end calls after_beat
            return
        auto = not group_play.waiting(chat)
        if auto and (self.run is None or not self.run.want()):
            self.finish()
            return
        self.turn_pending = auto
        task = self.win.run_command(lambda: chat.group_reply(ask=self.win.ask_user, on_event=self.on_event))
        if task is None:
            self.turn_pending = False
            self.finish()
        self.sync()

    def on_event(self, ev: Any) -> None:
        """The window's event sink, without the user bubble of a beat that has no user words."""
        self.win.on_event(ev)
        if getattr(ev, "kind", "") == "beat_started" and getattr(ev, "how", "") == "send":
            self.win.view.remove_item(f"pending-user-{ev.beat}")

    # -- ending --------------------------------------------------------------------------------------------------
    def user_typing(self) -> None:
        """Words in the input box end an auto-mode run (SillyTavern's auto-mode waits while the user types)."""
        if self.run is not None and self.win.input.toPlainText().strip():
            self.stop()

    def stop_clicked(self) -> None:
        """停止: the run and the waiting replies end, a turn being written is stopped (its prose kept)."""
        self.stop()
        if self.win.busy:
            self.win.stop_clicked()

    def stop(self, quiet: bool = False) -> None:
        """End the run (if any) and forget the members still waiting to reply."""
        if self.chat is not None:
            group_play.drop_waiting(self.chat)
        if self.run is not None:
            self.run.stop()
        self.finish(quiet=quiet)

    def finish(self, nobody: bool = False, quiet: bool = False) -> None:
        """The run is over: say why in the status bar, hide Stop."""
        self.timer.stop()
        self.chat = None  # a chat the window replaced is freed, not kept alive here
        run, self.run = self.run, None
        if run is not None:
            if nobody:
                run.nobody()
            run.want()  # at the limit: says so
            self.last_end = run.ended
            if self.last_end is not None and not quiet:
                self.win.statusBar().showMessage(show(self.last_end), 10000)
        self.sync()

    def running(self) -> bool:
        """True while a run or a chain of replies goes on (Stop is shown)."""
        chat = self.chat
        return self.run is not None or self.timer.isActive() or (chat is not None and bool(group_play.waiting(chat)))

    def sync(self) -> None:
        """Stop's visibility and the line saying what goes on."""
        on = self.running()
        self.row.stop.setVisible(on)
        if self.run is not None:
            self.row.state.setText(tr("groupauto.running", n=self.run.played + 1, limit=self.run.limit))
        elif on and self.chat is not None:
            self.row.state.setText(tr("groupauto.queued", n=len(group_play.waiting(self.chat))))
        else:
            self.row.state.setText("")


__all__ = ["GroupAutoPlayer", "GroupAutoRow"]
