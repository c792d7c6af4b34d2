"""The ledger as the active branch has it (seed 002: the status bar, the panels and the ledger share one
snapshot): the latest ``rp-state`` entry's world state, variable tree (MVU) and panel data.

A snapshot never changes once written, so the variable and panel look-ups walk back only over what the branch
gained since the last call (once per beat); a branch switch starts over. ``mvu``, ``panels`` and the
``*_warnings`` lists are optional extra keys of a snapshot (absent on most), read with a default.
"""

from __future__ import annotations

from typing import Any, Optional

from ..cards import Card
from ..ledger.mvu import MvuState
from ..ledger.panels import Panel, panels_from_card, panels_with_data
from ..ledger.state import WorldState
from ..session.tree import SessionTree


class _Scan:
    """The newest entry on the branch that satisfies a test, found incrementally."""

    def __init__(self, key: str, want_dict: bool = False):
        self.key, self.want_dict = key, want_dict
        self.at: tuple[int, Optional[str], Any] = (0, None, None)

    def find(self, path: list[Any]) -> Any:
        n, last_id, found = self.at
        if not (n and len(path) >= n and path[n - 1].id == last_id):
            n, found = 0, None
        for e in reversed(path[n:]):
            if e.type == "rp-state":
                v = getattr(e, self.key, None)
                if (isinstance(v, dict) if self.want_dict else v is not None):
                    found = e
                    break
        self.at = (len(path), path[-1].id if path else None, found)
        return found


class BranchLedger:
    """Ledger look-ups for one tree and card. ``mvu_initial``: the card's raw initial variable tree (None when the
    card has none)."""

    def __init__(self, tree: SessionTree, card: Card, mvu_initial: Any):
        self.tree, self.card, self.mvu_initial = tree, card, mvu_initial
        self._mvu, self._panels = _Scan("mvu"), _Scan("panels", want_dict=True)

    def latest(self) -> Optional[Any]:
        """The newest ``rp-state`` entry on the branch (``state``, ``applied``, ``warnings``, ``source``), or None."""
        return self.tree.latest("rp-state")

    def state(self) -> WorldState:
        """The world state of the active branch (its latest snapshot), or an empty one."""
        e = self.latest()
        return WorldState.model_validate(e.state) if e else WorldState()

    def previous_warnings(self, with_panels: bool = False) -> list[str]:
        """Warnings of the latest scribe snapshot (ledger and variables; panels too with ``with_panels``), fed back
        to the scribe; [] when the latest snapshot is not the scribe's."""
        e = self.latest()
        if not e or e.source != "scribe":
            return []
        out = list(e.warnings) + list(getattr(e, "mvu_warnings", None) or [])
        return out + list(getattr(e, "panel_warnings", None) or []) if with_panels else out

    def mvu(self) -> Optional[MvuState]:
        """The card's variable tree on the branch: the latest snapshot with ``mvu``, else the card's initial tree,
        else None (the card has no variable tree)."""
        found = self._mvu.find(self.tree.path_to())
        if found is not None:
            return MvuState.from_any(found.mvu)
        return MvuState.initial(self.mvu_initial) if self.mvu_initial is not None else None

    def panels(self) -> list[Panel]:
        """The card's panels with their data on the branch (the latest snapshot with ``panels``, else the card's
        initial data); [] when the card declares none. Templates and titles always come from the card."""
        card_panels, _ = panels_from_card(self.card)
        if not any(p.data for p in card_panels):  # ledger-only panels: no snapshot carries data for them
            return card_panels
        found = self._panels.find(self.tree.path_to())
        return panels_with_data(card_panels, found.panels) if found is not None else card_panels

    def edit(self, state: WorldState) -> None:
        """The user edited the ledger: a new snapshot (source user), the variable tree carried over unchanged; the
        leaf is persisted. Raises OSError when the disk refuses."""
        mvu = self.mvu()
        extra = {"mvu": mvu.to_dict()} if mvu is not None else {}
        self.tree.append("rp-state", state=state.to_dict(), source="user", **extra)
        self.tree.persist_leaf()
