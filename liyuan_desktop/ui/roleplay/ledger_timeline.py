"""The ledger timeline tab (账本历史, issue 33), beside 账本: what each beat on the shown branch changed.

- A tree: one row per beat (「第 4 拍 first words」), under it one row per change — path, ``old → new``, who made it
  (场记 / 状态栏 / 你 / 卡的初始值) and the scribe's reason when its reply gave one (``Chat.ledger_history``). A path
  filter box above keeps the changes whose path starts with what is typed (``characters.阿棠``, ``vars.``).
- 「撤回这处改动」 / 「撤回整拍」: asks first (default No), listing what is set back and, before that, the later beats'
  changes to the same paths it overwrites (``Chat.ledger_revert_plan``); Yes appends a user snapshot on the shown
  branch (``Chat.revert_ledger_change``), which 撤销本轮 steps back over. The pane repaints from the change notice.
- 「改这个值…」: the selected path set to a typed value (``Chat.set_ledger_value``, a user snapshot 撤销 steps back
  over) — the hand edit an MVU card player makes in a variables panel, here with its history.
- A small line chart (QtCharts) of one numeric leaf over the beats (好感度, HP, money: a combo box lists them), the
  beat and value under the cursor said below it; a click on a point selects that beat in the tree and shows its
  user message in the conversation (``beatChosen``).

The history is computed on a worker (``ui/infra/tasks.py``) when the tab is shown and after a notice that names the
ledger, the messages or the branches; hidden, it only marks itself stale. Strings here (prefix ``lt.``); the who /
beat texts are the engine's messages (``core/ledger/history.py``).
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.ledger.history import (
    LedgerHistory,
    RevertPlan,
    beat_message,
    describe_value,
    value_as_text,
    value_from_text,
    value_now,
    who_message,
)
from ..dialogs.dialogs import confirm
from ..infra import theme
from ..infra.i18n import register, show, tr
from ..infra.tasks import WorkCancelled, run_in_worker

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat
    from ..infra.session import Session

log = logging.getLogger(__name__)

register({
    "lt.tab": {"zh": "账本历史", "en": "Ledger history"},
    "lt.filter": {"zh": "按路径筛选，如 characters.阿棠 或 vars.", "en": "Filter by path, e.g. characters.Ann or vars."},
    "lt.col.path": {"zh": "路径", "en": "Path"},
    "lt.col.change": {"zh": "旧 → 新", "en": "Old → new"},
    "lt.col.who": {"zh": "谁改的", "en": "Who"},
    "lt.col.reason": {"zh": "理由", "en": "Reason"},
    "lt.revert.change": {"zh": "撤回这处改动", "en": "Revert this change"},
    "lt.revert.beat": {"zh": "撤回整拍", "en": "Revert this beat"},
    "lt.empty": {"zh": "这条分支上的账本还没有改动。", "en": "The ledger has no changes on this branch yet."},
    "lt.chart.none": {"zh": "（没有数值可画）", "en": "(no numbers to chart)"},
    "lt.chart.at": {"zh": "第 {beat} 拍：{value}", "en": "Beat {beat}: {value}"},
    "lt.ask.title": {"zh": "撤回账本改动", "en": "Revert a ledger change"},
    "lt.ask.targets": {"zh": "把第 {beat} 拍的这些改动撤回（作为你的一条新快照，可用「撤销本轮」撤销）：",
                       "en": "Set beat {beat}'s changes back (as a new snapshot from you; Undo undoes it):"},
    "lt.ask.conflicts": {"zh": "注意：之后的拍也改过这些路径，撤回会覆盖它们：",
                         "en": "Careful: later beats changed these paths too; the revert overwrites them:"},
    "lt.ask.yes": {"zh": "撤回", "en": "Revert"},
    "lt.done": {"zh": "已撤回第 {beat} 拍的改动。", "en": "Reverted beat {beat}'s changes."},
    "lt.more": {"zh": "……还有 {n} 处", "en": "… and {n} more"},
    "lt.older": {"zh": "（更早的 {n} 处改动没有列出：用路径筛选，或 liyuan ledger history）",
                 "en": "({n} older changes not listed: filter by path, or use liyuan ledger history)"},
    "lt.edit": {"zh": "改这个值…", "en": "Edit this value…"},
    "lt.edit.title": {"zh": "改账本的值", "en": "Set a ledger value"},
    "lt.edit.label": {"zh": "{path} 的新值（数字、true/false、JSON 或文字）：",
                      "en": "New value of {path} (a number, true/false, JSON or text):"},
    "lt.edit.done": {"zh": "已改：{path}", "en": "Set: {path}"},
})

#: the changes the tree lists at most (the newest; a long chat's whole history is a few thousand beats)
MAX_ROWS = 3000
#: data roles of the tree's rows
BEAT_ROLE = Qt.ItemDataRole.UserRole
PATH_ROLE = Qt.ItemDataRole.UserRole + 1


class ValueChart(QWidget):
    """One numeric leaf over the beats as a line chart with its points shown. ``pointClicked(beat)`` when a point
    is clicked; the beat and value under the cursor are said in :attr:`under`."""

    pointClicked = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None):
        from PySide6.QtCharts import QChart, QChartView  # (QtCharts loads when the pane is made, not at start-up)

        super().__init__(parent)
        self.chart = QChart()
        self.chart.legend().hide()
        self.chart.setMargins(self.chart.margins() * 0)
        self.view = QChartView(self.chart)
        self.view.setObjectName("ledgerChart")
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setMinimumHeight(160)
        self.under = QLabel("")
        self.under.setObjectName("ledgerChartUnder")
        self.points: list[tuple[int, float]] = []
        self.series: Optional[Any] = None  # the QLineSeries drawn
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.under)

    def set_points(self, path: str, points: list[tuple[int, float]]) -> None:
        """Draw ``points`` (``[(beat, value)]``) titled ``path``; nothing for an empty list."""
        from PySide6.QtCharts import QLineSeries, QValueAxis

        self.chart.removeAllSeries()
        for axis in self.chart.axes():
            self.chart.removeAxis(axis)
        self.points, self.series = list(points), None
        self.under.setText("" if points else tr("lt.chart.none"))
        if not points:
            return
        c = theme.colors()
        s = QLineSeries()
        s.setName(path)
        s.setPointsVisible(True)
        for b, v in points:
            s.append(QPointF(b, v))
        self.chart.addSeries(s)
        ax, ay = QValueAxis(), QValueAxis()
        xs, ys = [b for b, _ in points], [v for _, v in points]
        ax.setRange(min(xs) - 0.5, max(xs) + 0.5)
        ax.setLabelFormat("%d")
        ax.setTickType(QValueAxis.TickType.TicksDynamic)  # a tick on every beat (every n-th on a long chat)
        ax.setTickAnchor(0)
        ax.setTickInterval(max(1, math.ceil((max(xs) - min(xs) + 1) / 12)))
        pad = max(1.0, (max(ys) - min(ys)) * 0.1)
        ay.setRange(min(ys) - pad, max(ys) + pad)
        if all(v.is_integer() for v in ys):
            ay.setLabelFormat("%.0f")
        for axis, side in ((ax, Qt.AlignmentFlag.AlignBottom), (ay, Qt.AlignmentFlag.AlignLeft)):
            self.chart.addAxis(axis, side)
            s.attachAxis(axis)
        self.chart.setTitle(path)
        self.chart.setBackgroundBrush(QColor(c["base"]))
        for axis in (ax, ay):
            axis.setLabelsColor(QColor(c["text"]))
        self.chart.setTitleBrush(QColor(c["text"]))
        s.clicked.connect(lambda p: self.pointClicked.emit(self.nearest(p.x())))
        s.hovered.connect(lambda p, on: self.say_under(self.nearest(p.x())) if on else None)
        self.series = s

    def nearest(self, x: float) -> int:
        """The beat of the point nearest to ``x`` on the beat axis."""
        return min(self.points, key=lambda bv: abs(bv[0] - x))[0] if self.points else 0

    def say_under(self, beat: int) -> None:
        """Say the beat and value of the point at ``beat`` below the chart."""
        value = next((v for b, v in self.points if b == beat), None)
        if value is not None:
            shown = int(value) if value.is_integer() else value
            self.under.setText(tr("lt.chart.at", beat=beat, value=shown))

    def position_of(self, beat: int) -> Any:
        """Where the point of ``beat`` is drawn, in the chart view's viewport coordinates (tests click there)."""
        value = next(v for b, v in self.points if b == beat)
        scene = self.chart.mapToPosition(QPointF(beat, value), self.series)
        return self.view.mapFromScene(scene)


class LedgerTimelinePane(QWidget):
    """The timeline tab (module doc). ``beatChosen(user_id)``: the user asked to see a beat's message."""

    beatChosen = Signal(str)
    status = Signal(str)

    def __init__(self, session: Session, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.session = session
        self.chat: Optional[Chat] = None
        self.history: Optional[LedgerHistory] = None
        self.stale = True
        self._task: Optional[asyncio.Future[Any]] = None
        self.filter = QLineEdit()
        self.filter.setObjectName("ledgerPathFilter")
        self.filter.setPlaceholderText(tr("lt.filter"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(lambda _t: self.fill())
        self.tree = QTreeWidget()
        self.tree.setObjectName("ledgerTimeline")
        self.tree.setHeaderLabels([tr(k) for k in ("lt.col.path", "lt.col.change", "lt.col.who", "lt.col.reason")])
        self.tree.itemSelectionChanged.connect(self.update_buttons)
        self.revert_change_btn = QPushButton(tr("lt.revert.change"))
        self.revert_change_btn.setObjectName("revertChangeButton")
        self.revert_change_btn.clicked.connect(lambda _=False: self.revert_selected(whole_beat=False))
        self.revert_beat_btn = QPushButton(tr("lt.revert.beat"))
        self.revert_beat_btn.setObjectName("revertBeatButton")
        self.revert_beat_btn.clicked.connect(lambda _=False: self.revert_selected(whole_beat=True))
        self.edit_btn = QPushButton(tr("lt.edit"))
        self.edit_btn.setObjectName("editValueButton")
        self.edit_btn.clicked.connect(lambda _=False: self.edit_selected())
        self.series_box = QComboBox()
        self.series_box.setObjectName("ledgerSeriesBox")
        self.series_box.currentTextChanged.connect(self._draw)
        self.chart = ValueChart()
        self.chart.pointClicked.connect(self.choose_beat)
        self._layout()
        self.update_buttons()

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.revert_change_btn)
        buttons.addWidget(self.revert_beat_btn)
        buttons.addWidget(self.edit_btn)
        buttons.addStretch(1)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.filter)
        tl.addWidget(self.tree, 1)
        tl.addLayout(buttons)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.series_box)
        bl.addWidget(self.chart, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([320, 200])
        lay = QVBoxLayout(self)
        lay.addWidget(split)

    def adopt(self, old: "LedgerTimelinePane") -> None:
        """Show what ``old`` shows — its gathered timeline (when it is of the same chat), filter, series and
        selected row — painted in the current language. The language switch builds a new window and this pane
        takes over the old one's (ui/window/language_switch.py)."""
        if old.chat is None or old.chat is not self.chat:
            return
        was, series = old.selected(), old.series_box.currentText()
        self.filter.blockSignals(True)
        self.filter.setText(old.filter.text())
        self.filter.blockSignals(False)
        if old.history is not None:
            self.history, self.stale = old.history, old.stale
        self.fill()
        if series:
            self.series_box.setCurrentText(series)
        self.reselect(*was)
        self.update_buttons()

    # -- following the chat --------------------------------------------------------------------------------
    def set_chat(self, chat: Optional[Chat]) -> None:
        """Show ``chat``'s timeline (None: empty)."""
        self.chat = chat if chat is not None and chat.mode != "agent" else None
        self.history = None
        self.stale = True
        self.fill()
        self.schedule()

    def on_changes(self, changes: Any) -> None:
        """A change notice: gather again when it names the ledger, the messages or the branches."""
        if changes.ledger or changes.messages or changes.branches:
            self.stale = True
            self.schedule()

    def schedule(self) -> None:
        """Gather now when the tab is shown and the history is stale (on the task runner), else later."""
        if self.chat is None or not self.stale or not self.isVisible():
            return
        if self._task is not None and not self._task.done():
            return
        try:
            self._task = asyncio.ensure_future(self.gather())
        except RuntimeError:  # no running loop (a synchronous caller): gather right here
            self.show_history(self.chat.ledger_history())

    async def gather(self) -> None:
        """The shown branch's timeline, computed on a worker, then shown (again when it went stale meanwhile)."""
        while self.chat is not None and self.stale:
            chat, self.stale = self.chat, False
            try:
                h = await run_in_worker(self, lambda _w: chat.ledger_history())
            except WorkCancelled:
                return
            except Exception:  # noqa: BLE001 - a pane that cannot be filled must not take the window down
                log.exception("ledger timeline: gathering failed")
                return
            if chat is self.chat and not self.stale:
                self.show_history(h)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        """Shown: gather when stale."""
        super().showEvent(event)
        self.schedule()

    # -- painting ------------------------------------------------------------------------------------------
    def show_history(self, history: LedgerHistory) -> None:
        """Paint ``history`` (the whole branch's; the filter box applies here)."""
        self.history = history
        self.fill()

    def fill(self) -> None:
        """The tree and the chart from :attr:`history` with the filter applied; the newest :data:`MAX_ROWS`
        changes at most (a line says how many older ones the filter or ``liyuan ledger history`` shows)."""
        prefix = self.filter.text().strip()
        was = self.selected()
        self.tree.clear()
        h = self.history
        picked: list[tuple[Any, list[Any]]] = []
        total = budget = 0
        for b in reversed([] if h is None else h.beats):
            rows = [c for c in b.changes if c.path.startswith(prefix)]
            total += len(rows)
            if rows and budget < MAX_ROWS:
                picked.append((b, rows))
                budget += len(rows)
        items = [self._beat_item(b, rows) for b, rows in reversed(picked)]
        if total > budget:
            items.insert(0, QTreeWidgetItem([tr("lt.older", n=total - budget)]))
        self.tree.addTopLevelItems(items)
        for it in items:
            it.setExpanded(True)
        if not items and h is not None:
            self.tree.addTopLevelItem(QTreeWidgetItem([tr("lt.empty")]))
        self.tree.resizeColumnToContents(0)
        self._fill_series(prefix)
        self.reselect(*was)
        self.update_buttons()

    def reselect(self, beat: Optional[int], path: Optional[str]) -> None:
        """Select the row of ``beat`` / ``path`` again after a repaint (nothing when it is gone)."""
        for i in range(self.tree.topLevelItemCount() if beat is not None else 0):
            top = self.tree.topLevelItem(i)
            if top is None or top.data(0, BEAT_ROLE) != beat:
                continue
            kids = [top.child(k) for k in range(top.childCount())]
            hit = next((k for k in kids if k is not None and k.data(0, PATH_ROLE) == path), top if path is None else None)
            if hit is not None:
                self.tree.setCurrentItem(hit)
            return

    @staticmethod
    def _beat_item(b: Any, rows: list[Any]) -> QTreeWidgetItem:
        top = QTreeWidgetItem([show(beat_message(b))])
        top.setData(0, BEAT_ROLE, b.beat)
        top.setData(0, PATH_ROLE, b.user_id or "")
        for c in rows:
            row = QTreeWidgetItem([c.path, f"{describe_value(c.old)} → {describe_value(c.new)}",
                                   show(who_message(c.who)), c.reason])
            row.setData(0, BEAT_ROLE, b.beat)
            row.setData(0, PATH_ROLE, c.path)
            row.setToolTip(1, row.text(1))
            top.addChild(row)
        return top

    def _fill_series(self, prefix: str) -> None:
        keep = self.series_box.currentText()
        names = sorted(p for p in (self.history.series if self.history else {}) if p.startswith(prefix))
        self.series_box.blockSignals(True)
        self.series_box.clear()
        self.series_box.addItems(names)
        if keep in names:
            self.series_box.setCurrentText(keep)
        self.series_box.blockSignals(False)
        self._draw(self.series_box.currentText())

    def _draw(self, path: str) -> None:
        points = (self.history.series.get(path) or []) if self.history is not None and path else []
        self.chart.set_points(path, points)

    # -- selecting, jumping --------------------------------------------------------------------------------
    def selected(self) -> tuple[Optional[int], Optional[str]]:
        """(beat, path) of the row selected: path None on a beat row; (None, None) without a selection."""
        items = self.tree.selectedItems()
        if not items or items[0].data(0, BEAT_ROLE) is None:
            return None, None
        it = items[0]
        return int(it.data(0, BEAT_ROLE)), (it.data(0, PATH_ROLE) if it.parent() is not None else None)

    def update_buttons(self) -> None:
        """The revert buttons: on for a selected change / beat while no beat runs."""
        beat, path = self.selected()
        busy = self.chat is None or self.chat.beat_running()
        self.revert_change_btn.setEnabled(not busy and path is not None)
        self.revert_beat_btn.setEnabled(not busy and beat is not None)
        self.edit_btn.setEnabled(not busy and path is not None)

    def choose_beat(self, beat: int) -> None:
        """Select beat ``beat``'s row and ask to show its user message (a chart point was clicked)."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is not None and top.data(0, BEAT_ROLE) == beat:
                self.tree.setCurrentItem(top)
                self.tree.scrollToItem(top)
                if top.data(0, PATH_ROLE):
                    self.beatChosen.emit(str(top.data(0, PATH_ROLE)))
                self.chart.say_under(beat)
                return

    # -- reverting -----------------------------------------------------------------------------------------
    def revert_selected(self, whole_beat: bool, ask: Any = None) -> bool:
        """Revert the selected change (or its whole beat) after asking (``ask(title, text) -> bool``; default the
        real box, No by default). True when a revert was written."""
        beat, path = self.selected()
        chat = self.chat
        if chat is None or beat is None or (path is None and not whole_beat):
            return False
        target = None if whole_beat else path
        try:
            plan = chat.ledger_revert_plan(beat, target)
        except ValueError as e:
            self.status.emit(show(e))
            return False
        asker = ask or (lambda title, text: confirm(self, title, text, yes=tr("lt.ask.yes")))
        if not asker(tr("lt.ask.title"), plan_text(plan)):
            return False
        try:
            chat.revert_ledger_change(beat, target)
        except (ValueError, RuntimeError, OSError) as e:
            self.status.emit(show(e))
            return False
        self.session.broadcast(chat.last_changes)
        self.status.emit(tr("lt.done", beat=beat))
        return True

    def edit_selected(self, ask: Any = None) -> bool:
        """Set the selected change's path to a value the user types (``ask(title, label, text) -> str | None``;
        default a real input box filled with the current value; read as core.ledger.history.value_from_text says).
        True when written."""
        _beat, path = self.selected()
        chat = self.chat
        if chat is None or path is None:
            return False
        now = value_now(self.history, path) if self.history is not None else None
        asker = ask or (lambda title, label, text: _ask_text(self, title, label, text))
        typed = asker(tr("lt.edit.title"), tr("lt.edit.label", path=path), value_as_text(now))
        if typed is None:
            return False
        try:
            chat.set_ledger_value(path, value_from_text(typed, now))
        except (ValueError, RuntimeError, OSError) as e:
            self.status.emit(show(e))
            return False
        self.session.broadcast(chat.last_changes)
        self.status.emit(tr("lt.edit.done", path=path))
        return True


def _ask_text(parent: QWidget, title: str, label: str, text: str) -> Optional[str]:
    """A one-line input box (named ``ledgerValueInput``); None when cancelled."""
    dlg = QInputDialog(parent)
    dlg.setObjectName("ledgerValueInput")
    dlg.setWindowTitle(title)
    dlg.setLabelText(label)
    dlg.setTextValue(text)
    return dlg.textValue() if dlg.exec() == QInputDialog.DialogCode.Accepted else None


def _lines(changes: list[Any], flip: bool, limit: int = 12) -> list[str]:
    out = []
    for c in changes[:limit]:
        old, new = (c.new, c.old) if flip else (c.old, c.new)
        who = "" if flip else f"（{show(who_message(c.who))}）"
        out.append(f"  {'' if flip else f'#{c.beat} '}{c.path}: {describe_value(old)} → {describe_value(new)}{who}")
    if len(changes) > limit:
        out.append("  " + tr("lt.more", n=len(changes) - limit))
    return out


def plan_text(plan: RevertPlan) -> str:
    """The question the revert asks: the conflicts first (later beats' changes it overwrites), then what it sets
    back (``path: now → then``)."""
    parts: list[str] = []
    if plan.conflicts:
        parts += [tr("lt.ask.conflicts"), *_lines(plan.conflicts, flip=False), ""]
    parts += [tr("lt.ask.targets", beat=plan.beat), *_lines(plan.targets, flip=True)]
    return "\n".join(parts)


def install(window: Any) -> LedgerTimelinePane:
    """Add the timeline tab after 账本 in ``window`` (kept as ``window.ledger_timeline``): it follows the session's
    chat and change notices, shows a chosen beat's message in the conversation and says results in the status
    bar."""
    from ..frames.find_bar import show_message

    pane = LedgerTimelinePane(window.session)
    pane.setObjectName("ledgerTimelinePane")
    tabs = window.tabs
    tabs.insertTab(tabs.indexOf(window.state_pane) + 1, pane, tr("lt.tab"))
    window.session.chatShown.connect(pane.set_chat)
    window.session.changed.connect(pane.on_changes)
    window.session.busyChanged.connect(lambda _b: pane.update_buttons())
    pane.status.connect(lambda text: window.statusBar().showMessage(text, 8000))

    def goto(user_id: str) -> None:
        items = window.session.transcript.items
        k = next((i for i, it in enumerate(items) if it.get("id") == user_id), None)
        if k is not None:
            show_message(window, k)

    pane.beatChosen.connect(goto)
    window.ledger_timeline = pane
    return pane


__all__ = ["LedgerTimelinePane", "ValueChart", "install", "plan_text"]
