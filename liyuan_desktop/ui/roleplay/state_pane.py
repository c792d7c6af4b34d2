"""The ledger pane (账本): the active branch's world state and roster, the scribe's last applied list and warnings.

Editable: 「编辑」 opens the ledger as a form (``ui/roleplay/ledger_form.py``: characters, inventory, flags, plot threads);
「高级（JSON）」 switches to the raw JSON and back; 「保存」 validates whichever is shown and emits ``stateEdited`` — the
main window appends a new state snapshot from the user (seed 002: 用户在界面上手改账本，也是追加一条新的 rp-state),
and the next beat's injection uses it. Colours come from the one theme (``ui/infra/theme.py``) and follow it live.
"""

from __future__ import annotations

import html
import json
from typing import Optional

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...core.ledger.state import WorldState, register_roster
from ...core.ledger.wording import applied_in_words, first_seen_runs
from ..infra import i18n, theme
from ..infra.i18n import show, tr
from .ledger_form import LedgerForm, LedgerFormError

i18n.register({
    # a32misc: a run of roster names first seen at one time, said once after them (not in Chinese: _roster_html)
    "ledger.first_seen": {"zh": "（{t}）", "en": " — first seen {t}"},
})


def ledger_html(state: WorldState, applied: list[str], warnings: list[str], source: str = "") -> str:
    """The ledger as HTML for the read view (all values escaped)."""
    e = html.escape
    c = theme.colors()
    out = [f"<style>td{{padding:2px 6px;vertical-align:top}} th{{text-align:left;padding:2px 6px;color:{c['muted']}}}"
           f" h4{{margin:10px 0 4px 0;color:{c['heading']}}} .w{{color:{c['warn']}}} .dim{{color:{c['muted']}}}</style>"]
    colon, unset = tr("sep.colon"), f"<span class=dim>{tr('ledger.unset')}</span>"
    out.append(f"<p><b>{tr('ledger.time')}</b>{colon}{e(state.time) or unset}<br>"
               f"<b>{tr('ledger.place')}</b>{colon}{e(state.location) or unset}</p>")
    if state.characters:
        heads = "".join(f"<th>{tr(k)}</th>" for k in ("ledger.col.name", "ledger.col.affinity", "ledger.col.status",
                                                       "ledger.col.at", "ledger.col.notes"))
        out.append(f"<h4>{tr('ledger.characters')}</h4><table><tr>{heads}</tr>")
        for name, c in state.characters.items():
            where = tr("ledger.here") if c.at and c.at == state.location else (e(c.at) if c.at else "")
            out.append(f"<tr><td>{e(name)}</td><td>{c.affinity}</td><td>{e(c.status)}</td><td>{where}</td><td>{e(c.notes)}</td></tr>")
        out.append("</table>")
    if state.inventory:
        out.append(f"<h4>{tr('ledger.items')}</h4>" + "<br>".join(e(i) for i in state.inventory))
    if state.flags:
        out.append(f"<h4>{tr('ledger.flags')}</h4><table>" + "".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in state.flags.items()) + "</table>")
    if state.plot_threads:
        out.append(f"<h4>{tr('ledger.threads')}</h4>" + "<br>".join(tr("quote", text=e(t)) for t in state.plot_threads))
    if state.roster is not None:
        out += _roster_html(state, colon)
    if applied:
        who = tr("ledger.applied.user") if source == "user" else tr("ledger.applied.scribe")
        out.append(f"<h4>{who}</h4>" + "<br>".join(e(show(applied_in_words(a))) for a in applied))
    if warnings:
        out.append(f"<h4 class=w>{tr('ledger.warnings')}</h4>" + "<br>".join(f"<span class=w>{e(show(w))}</span>" for w in warnings))
    return "".join(out)


def _roster_html(state: WorldState, colon: str) -> list[str]:
    """The roster's heading and one line per section (escaped). Chinese: each name with its first-seen time in
    brackets (「青梧（傍晚）、旅人（傍晚）」, as ever). Other languages: each run of names first seen at one time
    followed once by that time (``core.ledger.wording.first_seen_runs``; plot threads quoted, they are sentences) —
    "Rainsong Inn (raining), Rainsong Inn — first seen Dusk (raining)", not "Rainsong Inn (raining) (Dusk (raining))"."""
    e = html.escape
    r = state.roster
    assert r is not None
    out = [f"<h4>{tr('ledger.roster')}</h4>"]
    for label, table in ((tr("ledger.characters"), r.characters), (tr("ledger.places"), r.places),
                         (tr("ledger.items"), r.items), (tr("ledger.threads"), r.events)):
        if not table:
            continue
        if i18n.language() == "zh":
            out.append(f"<b>{label}</b>{colon}" + tr("sep.list").join(
                f"{e(k)}<span class=dim>{tr('paren', text=e(v))}</span>" if v else e(k) for k, v in table.items()) + "<br>")
            continue
        runs = []
        for names, seen in first_seen_runs(table):
            shown = tr("sep.list").join(tr("quote", text=e(n)) if table is r.events else e(n) for n in names)
            runs.append(shown + (f"<span class=dim>{tr('ledger.first_seen', t=e(seen))}</span>" if seen else ""))
        out.append(f"<b>{label}</b>{colon}" + tr("sep.semi").join(runs) + "<br>")
    return out


class StatePane(QWidget):
    """Read view, form editor and JSON editor (advanced). ``stateEdited(WorldState)`` on a valid save."""

    stateEdited = Signal(object)

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.state = WorldState()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.stack = QStackedWidget()
        self.view = QTextBrowser()
        self.view.setObjectName("ledgerView")
        self.view.setOpenLinks(False)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("ledgerEditor")
        self.form = LedgerForm()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.editor)
        self.stack.addWidget(self.form)
        self._last: tuple[list[str], list[str], str] = ([], [], "")
        lay.addWidget(self.stack, 1)
        self.error = QLabel("")
        theme.set_role(self.error, "error")
        self.error.setWordWrap(True)
        lay.addWidget(self.error)
        row = QHBoxLayout()
        self.edit_btn = QPushButton(tr("edit"))
        self.edit_btn.clicked.connect(lambda: self.start_edit())
        self.save_btn = QPushButton(tr("save"))
        self.save_btn.clicked.connect(self.save_edit)
        self.cancel_btn = QPushButton(tr("cancel"))
        self.cancel_btn.clicked.connect(self.cancel_edit)
        self.json_btn = QPushButton(tr("lform.advanced"))
        self.json_btn.setObjectName("ledgerJsonToggle")
        self.json_btn.clicked.connect(self.toggle_json)
        row.addWidget(self.json_btn)
        row.addStretch(1)
        row.addWidget(self.edit_btn)
        row.addWidget(self.save_btn)
        row.addWidget(self.cancel_btn)
        lay.addLayout(row)
        self._set_editing(False)
        theme.notifier.changed.connect(self._theme_changed)  # a bound slot: disconnected when the pane goes

    def _set_editing(self, on: bool, json_view: bool = False) -> None:
        self.stack.setCurrentIndex((1 if json_view else 2) if on else 0)
        self.edit_btn.setVisible(not on)
        self.save_btn.setVisible(on)
        self.cancel_btn.setVisible(on)
        self.json_btn.setVisible(on)
        self.json_btn.setText(tr("lform.form") if json_view else tr("lform.advanced"))
        self.error.setText("")

    def editing(self) -> str:
        """"" (reading), "form" or "json"."""
        return {0: "", 1: "json", 2: "form"}[self.stack.currentIndex()]

    def _theme_changed(self, _mode: str) -> None:
        self._rerender()

    def _rerender(self) -> None:
        self.view.setHtml(ledger_html(self.state, *self._last))

    def show_state(self, state: WorldState, applied: Optional[list[str]] = None, warnings: Optional[list[str]] = None,
                   source: str = "") -> None:
        """Show ``state`` (and the last snapshot's applied list and warnings)."""
        self.state = state
        self._last = (list(applied or []), list(warnings or []), source)
        self._rerender()

    def start_edit(self, advanced: bool = False) -> None:
        """Open the ledger for editing: as the form, or as JSON when ``advanced``."""
        self.form.set_state(self.state)
        self.editor.setPlainText(self.state.to_json(2))
        self._set_editing(True, json_view=advanced)

    def toggle_json(self) -> None:
        """Form ⇄ JSON while editing, carrying the edits across (an invalid side stays with its error shown)."""
        if self.editing() == "form":
            try:
                st = self.form.state()
            except LedgerFormError as e:
                self.error.setText(str(e))
                return
            self.editor.setPlainText(st.to_json(2))
            self._set_editing(True, json_view=True)
        elif self.editing() == "json":
            st = self._parse_json()
            if st is None:
                return
            self.form.set_state(st)
            self._set_editing(True, json_view=False)

    def cancel_edit(self) -> None:
        self._set_editing(False)

    def _parse_json(self) -> Optional[WorldState]:
        try:
            data = json.loads(self.editor.toPlainText())
            return WorldState.model_validate(data)
        except json.JSONDecodeError as e:
            self.error.setText(tr("ledger.err.json", line=e.lineno, col=e.colno, msg=e.msg))
        except ValidationError as e:
            colon = tr("sep.colon")
            self.error.setText(tr("ledger.err.format", errors=tr("sep.semi").join(
                f"{'.'.join(map(str, x['loc']))}{colon}{x['msg']}" for x in e.errors()[:4])))
        return None

    def save_edit(self) -> None:
        """Validate the form (or the JSON); on success emit ``stateEdited`` with the new state (roster updated for
        new names)."""
        if self.editing() == "form":
            try:
                state: Optional[WorldState] = self.form.state()
            except LedgerFormError as e:
                self.error.setText(str(e))
                return
        else:
            state = self._parse_json()
        if state is None:
            return
        register_roster(state)
        self._set_editing(False)
        self.stateEdited.emit(state)
