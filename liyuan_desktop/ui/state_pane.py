"""The ledger pane (账本): the active branch's world state and roster, the scribe's last applied list and warnings.

Editable: 「编辑」 opens the ledger as JSON; 「保存」 validates it and emits ``stateEdited`` — the main window appends a
new state snapshot from the user (seed 002: 用户在界面上手改账本，也是追加一条新的 rp-state), and the next beat's
injection uses it.
"""

from __future__ import annotations

import html
import json
from typing import Optional

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from ..core.ledger.state import WorldState, register_roster
from .i18n import tr


def ledger_html(state: WorldState, applied: list[str], warnings: list[str], source: str = "") -> str:
    """The ledger as HTML for the read view (all values escaped)."""
    e = html.escape
    out = ["<style>td{padding:2px 6px;vertical-align:top} th{text-align:left;padding:2px 6px;color:#555}"
           " h4{margin:10px 0 4px 0;color:#345} .w{color:#a15c00} .dim{color:#888}</style>"]
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
    r = state.roster
    if r is not None:
        out.append(f"<h4>{tr('ledger.roster')}</h4>")
        for label, table in ((tr("ledger.characters"), r.characters), (tr("ledger.places"), r.places),
                             (tr("ledger.items"), r.items), (tr("ledger.threads"), r.events)):
            if table:
                out.append(f"<b>{label}</b>{colon}" + tr("sep.list").join(
                    f"{e(k)}<span class=dim>{tr('paren', text=e(v))}</span>" if v else e(k) for k, v in table.items()) + "<br>")
    if applied:
        who = tr("ledger.applied.user") if source == "user" else tr("ledger.applied.scribe")
        out.append(f"<h4>{who}</h4>" + "<br>".join(e(a) for a in applied))
    if warnings:
        out.append(f"<h4 class=w>{tr('ledger.warnings')}</h4>" + "<br>".join(f"<span class=w>{e(w)}</span>" for w in warnings))
    return "".join(out)


class StatePane(QWidget):
    """Read view + JSON edit view. ``stateEdited(WorldState)`` on a valid save."""

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
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.editor)
        lay.addWidget(self.stack, 1)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #b00020;")
        self.error.setWordWrap(True)
        lay.addWidget(self.error)
        row = QHBoxLayout()
        self.edit_btn = QPushButton(tr("edit"))
        self.edit_btn.clicked.connect(self.start_edit)
        self.save_btn = QPushButton(tr("save"))
        self.save_btn.clicked.connect(self.save_edit)
        self.cancel_btn = QPushButton(tr("cancel"))
        self.cancel_btn.clicked.connect(self.cancel_edit)
        row.addStretch(1)
        row.addWidget(self.edit_btn)
        row.addWidget(self.save_btn)
        row.addWidget(self.cancel_btn)
        lay.addLayout(row)
        self._set_editing(False)

    def _set_editing(self, on: bool) -> None:
        self.stack.setCurrentIndex(1 if on else 0)
        self.edit_btn.setVisible(not on)
        self.save_btn.setVisible(on)
        self.cancel_btn.setVisible(on)
        self.error.setText("")

    def show_state(self, state: WorldState, applied: Optional[list[str]] = None, warnings: Optional[list[str]] = None,
                   source: str = "") -> None:
        """Show ``state`` (and the last snapshot's applied list and warnings)."""
        self.state = state
        self.view.setHtml(ledger_html(state, applied or [], warnings or [], source))

    def start_edit(self) -> None:
        """Open the ledger as JSON for editing."""
        self.editor.setPlainText(self.state.to_json(2))
        self._set_editing(True)

    def cancel_edit(self) -> None:
        self._set_editing(False)

    def save_edit(self) -> None:
        """Validate the JSON; on success emit ``stateEdited`` with the new state (roster updated for new names)."""
        try:
            data = json.loads(self.editor.toPlainText())
            state = WorldState.model_validate(data)
        except json.JSONDecodeError as e:
            self.error.setText(tr("ledger.err.json", line=e.lineno, col=e.colno, msg=e.msg))
            return
        except ValidationError as e:
            colon = tr("sep.colon")
            self.error.setText(tr("ledger.err.format", errors=tr("sep.semi").join(
                f"{'.'.join(map(str, x['loc']))}{colon}{x['msg']}" for x in e.errors()[:4])))
            return
        register_roster(state)
        self._set_editing(False)
        self.stateEdited.emit(state)
