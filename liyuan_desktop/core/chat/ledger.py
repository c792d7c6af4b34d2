"""The ledger as the active branch has it (seed 002: the status bar, the panels and the ledger share one
snapshot): the latest ``rp-state`` entry's world state, variable tree (MVU) and panel data.

A snapshot never changes once written, so the variable and panel look-ups walk back only over what the branch
gained since the last call (once per beat); a branch switch starts over. ``mvu``, ``panels`` and the
``*_warnings`` lists are optional extra keys of a snapshot (absent on most), read with a default.

Status-bar writes (issue 13 §2, :meth:`BranchLedger.write_frame`) are user snapshots with these extra keys:

- ``mvu``: the whole variable table a frame wrote for a message (TavernHelper's ``replaceVariables`` with
  ``{type: 'message'}``, MVU's ``replaceMvuData``) — an MvuData ``{stat_data, …}``, or any table when
  ``vars_raw`` is true (a bar of a card without MVU: the table is kept and shown exactly as written);
- ``for_message``: the entry id of an *older* reply / opening the table belongs to (absent when it belongs to the
  newest one). Such a snapshot changes that message only: the variables in force on the branch, which the scribe
  and later messages continue from, are untouched — as in SillyTavern, where writing message 3's variables leaves
  message 9's alone;
- ``frame_vars``: ``{"chat"|"character"|"global": table}``, the other scopes a frame wrote, all carried forward.
  SillyTavern keeps chat variables in the chat file's metadata (one per branch, since a branch is a copy of the
  chat file); character and global variables are kept here per branch too — narrower than SillyTavern's, which is
  what the card isolation of issue 13 §1 wants anyway.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Protocol, Sequence, TypedDict

from ..cards import Card
from ..cards.th_scripts import card_th_variables, preset_th_variables
from ..ledger.history import (
    LedgerHistory,
    PatchQuality,
    RevertPlan,
    build_history,
    patch_quality,
    revert_plan,
    reverted_values,
    set_value,
    snapshot_leaves,
)
from ..ledger.mvu import MvuState, greeting_variables
from ..ledger.panels import Panel, panels_from_card, panels_with_data
from ..ledger.state import WorldState
from ..macros.variables_scopes import with_initial_scopes
from ..messages import message
from ..session.tree import SessionTree

FRAME_SCOPES = ("message", "chat", "character", "preset", "global")
"""The variable scopes a status-bar frame writes (TavernHelper's ``VariableOption.type`` without ``script``)."""


class SnapshotExtras(TypedDict, total=False):
    """The optional extra keys of an ``rp-state`` snapshot (module doc), passed to ``SessionTree.append`` as
    keyword arguments: the variable tree (``mvu``, ``vars_raw``, ``for_message``, ``frame_vars``), what the scribe
    applied to it and to the panels, the reply a snapshot ``covers``, and the scribe call's usage, model and
    language."""

    mvu: dict[str, Any]
    vars_raw: bool
    for_message: str
    frame_vars: dict[str, dict[str, Any]]
    mvu_applied: list[str]
    mvu_warnings: list[str]
    mvu_actor_applied: list[str]
    panels: dict[str, dict[str, Any]]
    panel_applied: list[str]
    panel_warnings: list[str]
    covers: str
    scribe_usage: dict[str, Any]
    scribe_model: str
    language: str


class Items(Protocol):
    """The active branch's transcript items as :meth:`BranchLedger.write_frame` reads them: a list of item dicts or
    a ``session.transcript.TranscriptItems`` (indexing, ``len`` and ``reversed``)."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> dict[str, Any]: ...


def _never(e: Any) -> bool:
    """No snapshot is skipped."""
    return False


def _not_in_force(e: Any) -> bool:
    """A snapshot whose variables belong to an older message, or a raw (non-MVU) frame table: never the branch's
    variable tree."""
    return bool(getattr(e, "for_message", None) or getattr(e, "vars_raw", False))


class _Scan:
    """The newest entry on the branch that satisfies a test, found incrementally."""

    def __init__(self, key: str, want_dict: bool = False):
        self.key, self.want_dict = key, want_dict
        self.skip: Callable[[Any], bool] = _never if key != "mvu" else _not_in_force
        self.at: tuple[int, Optional[str], Any] = (0, None, None)

    def find(self, path: Sequence[Any]) -> Any:
        n, last_id, found = self.at
        if not (n and len(path) >= n and path[n - 1].id == last_id):
            n, found = 0, None
        for e in reversed(path[n:]):
            if e.type == "rp-state" and not self.skip(e):
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
        self._frame = _Scan("frame_vars", want_dict=True)
        #: the chat's preset (a callable, set by the chat; TavernHelper's preset-scope variables come from it)
        self.preset_of: Callable[[], Any] = lambda: None
        #: a group chat's look-up of the snapshot whose variable tree is in force (the speaking member's,
        #: chat/group_vars.py), given the branch path; None: the newest snapshot with a tree
        self.mvu_find: Optional[Callable[[Sequence[Any]], Any]] = None
        #: root keys of ``stat_data`` a tree lacks are added from this tree (a group's shared variables); None: none
        self.mvu_defaults: Optional[dict[str, Any]] = None

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
        """The card's variable tree on the branch: the latest snapshot with ``mvu`` (in a group chat the one
        :attr:`mvu_find` picks), else the card's initial tree, else None (the card has no variable tree); root keys
        it lacks are added from :attr:`mvu_defaults`."""
        path = self.tree.path_to()
        found = self.mvu_find(path) if self.mvu_find is not None else self._mvu.find(path)
        if found is not None:
            state = MvuState.from_any(found.mvu)
        elif self.mvu_initial is not None:
            state = MvuState.initial(self.mvu_initial)
        else:
            return None
        for k, v in (self.mvu_defaults or {}).items():
            if k not in state.stat_data:
                state.stat_data[k] = copy.deepcopy(v)
                state.display_data.setdefault(k, copy.deepcopy(v))
        return state

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
        extra: SnapshotExtras = {"mvu": mvu.to_dict()} if mvu is not None else {}
        self.tree.append("rp-state", state=state.to_dict(), source="user", **extra)
        self.tree.persist_leaf()

    def history(self, prefix: Optional[str] = None) -> LedgerHistory:
        """The shown branch's ledger timeline (core.ledger.history), changes filtered by path ``prefix``."""
        initial = MvuState.initial(self.mvu_initial).stat_data if isinstance(self.mvu_initial, dict) else None
        return build_history(self.tree.path_to(), initial, prefix)

    def patch_quality(self) -> PatchQuality:
        """How the scribe's patches fared on the shown branch (core.ledger.history.patch_quality)."""
        return patch_quality(self.tree.path_to())

    def revert_plan(self, beat: int, path: Optional[str] = None) -> RevertPlan:
        """What reverting ``beat``'s change to ``path`` (None: the whole beat) sets back and its conflicts.
        ValueError when the beat changed nothing there."""
        mvu = self.mvu()
        now = snapshot_leaves(self.state().to_dict(), mvu.stat_data if mvu is not None else None)
        return revert_plan(self.history(), beat, path, now)

    def revert(self, plan: RevertPlan) -> Any:
        """Apply ``plan``: a user snapshot on the leaf with the reverted ledger and variables and the key
        ``reverts`` (``{"beat", "path"}``; 撤销 steps back over it). Persisted; returns the entry. OSError."""
        state, mvu, lines = reverted_values(plan, self.state(), self.mvu())
        extra: SnapshotExtras = {"mvu": mvu.to_dict()} if mvu is not None else {}
        e = self.tree.append("rp-state", state=state.to_dict(), source="user", applied=lines,
                             reverts={"beat": plan.beat, "path": plan.path}, **extra)
        self.tree.persist_leaf()
        return e

    def set_value(self, path: str, value: Any) -> Any:
        """The user set the leaf ``path`` to ``value`` (core.ledger.history.set_value): a user snapshot on the leaf
        with the key ``sets`` (``{"path"}``; 撤销 steps back over it). Persisted; returns the entry. ValueError,
        OSError."""
        state, mvu, line = set_value(path, value, self.state(), self.mvu())
        extra: SnapshotExtras = {"mvu": mvu.to_dict()} if mvu is not None else {}
        e = self.tree.append("rp-state", state=state.to_dict(), source="user", applied=[line], sets={"path": path},
                             **extra)
        self.tree.persist_leaf()
        return e

    def add_opening(self, text: str, other_books: list[dict[str, Any]], parent_id: Optional[str] = "__leaf__") -> Any:
        """Append a greeting (``text``, macros applied) as an opening under ``parent_id`` (default: the leaf; the
        leaf does not move) with the variables it sets (ledger.mvu.greeting: its ``<initvar>`` override and
        commands): those make an ``init`` snapshot right below it, so each greeting swipe has its own opening values.
        The blocks are left out of the stored text. ``other_books``: the [InitVar] trees of the books other than
        the card's (ChatContext.mvu_other_books). Returns the opening entry (pending until the tree is committed)."""
        g = greeting_variables(text, self.mvu_initial, other_books)
        e = self.tree.append("opening", parent_id=parent_id, move_leaf=False, text=g.text)
        if g.state is not None:
            self.tree.append("rp-state", parent_id=e.id, move_leaf=False, state=WorldState().to_dict(), source="init",
                             mvu=g.state.to_dict(), warnings=g.warnings)
        return e

    def frame_variables(self) -> dict[str, dict[str, Any]]:
        """The chat / character / preset / global variable tables status-bar frames wrote on this branch (the newest
        snapshot with ``frame_vars``): ``{scope: table}``, a scope never written absent — except character and
        preset, which read the card's / preset's TavernHelper variables until written (macros.variables_scopes).
        Deep copies."""
        return with_initial_scopes(self._written_frames(), card_th_variables(self.card),
                                   preset_th_variables(self.preset_of()))

    def _written_frames(self) -> dict[str, dict[str, Any]]:
        """The tables frames wrote on this branch, without the card's / preset's initial ones (deep copies)."""
        found = self._frame.find(self.tree.path_to())
        return copy.deepcopy(found.frame_vars) if found is not None else {}

    def write_frame(self, scope: str, variables: dict[str, Any], message_id: Any, items: Items) -> bool:
        """Record a status-bar frame's write (module doc): ``scope`` one of :data:`FRAME_SCOPES`, ``variables``
        the whole new table of that scope; for scope message, ``message_id`` names the opening / reply it belongs
        to in ``items`` (the active branch's transcript items): its index there (SillyTavern's message id, what the
        view gives frames: an int or a string of digits) or its session entry id. The new snapshot (source
        ``user``) carries the ledger over unchanged and becomes the leaf; it is persisted. Returns False, writing
        nothing, when the table is already the one in force. Raises ValueError for a bad scope / table / message,
        OSError when the disk refuses."""
        if scope not in FRAME_SCOPES:
            raise ValueError(message("frame.bad_scope", scope=scope))
        if not isinstance(variables, dict):
            raise ValueError(message("frame.vars_not_object"))
        variables = copy.deepcopy(variables)
        extra: SnapshotExtras = {}
        if scope == "message":
            item = _item_of(items, message_id)
            if item is None or item.get("role") not in ("opening", "assistant"):
                raise ValueError(message("frame.vars_not_on_branch", id=message_id))
            raw = not isinstance(variables.get("stat_data"), dict)
            if item.get("variables") == (variables if raw else MvuState.from_any(variables).to_dict()):
                return False
            newest = next((it for it in reversed(items) if it.get("role") in ("opening", "assistant")), None)
            extra["mvu"] = variables
            if raw:
                extra["vars_raw"] = True
            if newest is not None and newest["id"] != item["id"]:
                extra["for_message"] = item["id"]
        else:
            if self.frame_variables().get(scope) == variables:
                return False
            tables = self._written_frames()  # a card's / preset's initial table is stored only once written
            tables[scope] = variables
            extra["frame_vars"] = tables
        e = self.latest()
        state = e.state if e is not None else WorldState().to_dict()
        self.tree.append("rp-state", state=copy.deepcopy(state), source="user", **extra)
        self.tree.persist_leaf()
        return True


def _item_of(items: Items, message_id: Any) -> Optional[dict[str, Any]]:
    """The transcript item a frame's ``message_id`` names (an index, as int or digits, or an entry id)."""
    if isinstance(message_id, bool) or message_id is None:
        return None
    key = str(message_id).strip()
    if key.isdigit():
        k = int(key)
        return items[k] if k < len(items) else None
    return next((it for it in reversed(items) if it.get("id") == key), None)
