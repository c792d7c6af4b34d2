"""The MVU snapshot (:class:`MvuState`: ``stat_data`` plus the ``display_data`` / ``delta_data`` a status bar
shows), the outcome of an update (:class:`MvuResult`) and the change tracking that builds the ``"old->new"`` display
strings.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from .paths import MISSING, Segment, get_at, is_pair, js_str, list_index


class MvuState(BaseModel):
    """One MVU snapshot as a status bar reads it (``chat[i].variables[swipe]`` in SillyTavern)."""

    stat_data: dict[str, Any] = Field(default_factory=dict)
    display_data: dict[str, Any] = Field(default_factory=dict)
    delta_data: dict[str, Any] = Field(default_factory=dict)
    initialized_lorebooks: dict[str, list[Any]] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (deep copies; the shape bars expect: ``{initialized_lorebooks, stat_data,
        display_data, delta_data}``)."""
        return {
            "initialized_lorebooks": copy.deepcopy(self.initialized_lorebooks),
            "stat_data": copy.deepcopy(self.stat_data),
            "display_data": copy.deepcopy(self.display_data),
            "delta_data": copy.deepcopy(self.delta_data),
        }

    @classmethod
    def from_any(cls, value: Any) -> "MvuState":
        """An :class:`MvuState` from an MvuState, a snapshot dict (has ``stat_data``) or a bare tree dict."""
        if isinstance(value, MvuState):
            return value.model_copy(deep=True)
        if isinstance(value, dict) and isinstance(value.get("stat_data"), dict):
            ib = value.get("initialized_lorebooks")
            if isinstance(ib, list):  # old MVU: string[]
                ib = {str(n): [] for n in ib}
            return cls(stat_data=copy.deepcopy(value["stat_data"]),
                       display_data=copy.deepcopy(value.get("display_data") or {}),
                       delta_data=copy.deepcopy(value.get("delta_data") or {}),
                       initialized_lorebooks=ib if isinstance(ib, dict) else {})
        if isinstance(value, dict):  # a bare tree (the [InitVar] values): MVU's first snapshot shows them as they are
            return cls.initial(value)
        return cls()

    @classmethod
    def initial(cls, tree: dict[str, Any]) -> "MvuState":
        """The snapshot of a fresh variable tree, as MVU initialises one: ``display_data`` is a copy of
        ``stat_data`` (bars that read display_data first must find values, not ``{}``), ``delta_data`` empty."""
        return cls(stat_data=copy.deepcopy(tree), display_data=copy.deepcopy(tree))


class MvuResult(NamedTuple):
    """Outcome of :func:`apply_mvu_patch` / :func:`apply_ops`: the new snapshot (``stat_data`` plus this update's
    ``display_data``/``delta_data``), applied lines and warnings (Chinese, fed back to the scribe)."""

    state: MvuState
    applied: list[str]
    warnings: list[str]

# ---------------------------------------------------------------------------------------------------------------
# change tracking → display_data / delta_data


class Changes:
    """The paths one update changed, against the tree ``before`` it: :meth:`mark` each written path, then
    :meth:`build` the display and delta trees MVU keeps beside ``stat_data``."""

    def __init__(self, before: dict[str, Any]):
        self.before = before
        self.paths: list[tuple[Segment, ...]] = []

    def mark(self, segs: list[Segment]) -> None:
        """Note a write to ``segs`` (a write into a ``[value, description]`` pair belongs to the pair; a path under a
        marked one is covered by it)."""
        if segs and not isinstance(segs[-1], str) or (segs and str(segs[-1]).lstrip("-").isdigit()):
            if is_pair(get_at(self.before, segs[:-1])):  # `日期[0]`: the change belongs to the pair
                segs = segs[:-1]
        t = tuple(segs)
        # a change under an already-marked ancestor is covered by it; a marked descendant is superseded
        if any(t[:len(p)] == p for p in self.paths):
            return
        self.paths = [p for p in self.paths if p[:len(t)] != t]
        self.paths.append(t)

    def build(self, after: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(display_data, delta_data) for the tree ``after``: the changed leaves shown as ``old->new``, as MVU does."""
        display = copy.deepcopy(after)
        delta: dict[str, Any] = {}
        for p in self.paths:
            old = get_at(self.before, list(p))
            new = get_at(after, list(p))
            if old == new and type(old) is type(new):
                continue
            # unwrap VWD pairs only when the leaf is a pair on both sides with the same description (a list of two
            # strings is ambiguous — MVU has the same ambiguity)
            both = is_pair(old) and is_pair(new) and old[1] == new[1]
            ov = old[0] if both or (is_pair(old) and new is MISSING) else old
            nv = new[0] if both or (is_pair(new) and old is MISSING) else new
            o = "" if ov is MISSING or ov in ("", None) else js_str(ov)
            nw = "" if nv is MISSING else js_str(nv)
            text = f"{o}->{nw}"
            if new is not MISSING:
                _set_display(display, list(p), text)
            _set_display(delta, list(p), text, create=True)
        return display, delta


def _set_display(root: Any, segs: list[Segment], text: str, create: bool = False) -> None:
    cur = root
    for s in segs[:-1]:
        key: Any = s
        if isinstance(cur, dict):
            key = s if isinstance(s, str) else str(s)
            if key not in cur or not isinstance(cur[key], (dict, list)):
                if not create:
                    return
                cur[key] = {}
            cur = cur[key]
        elif isinstance(cur, list):
            i = list_index(cur, s)
            if i is None:
                return
            cur = cur[i]
        else:
            return
    last = segs[-1] if segs else None
    if last is None:
        return
    if isinstance(cur, dict):
        cur[last if isinstance(last, str) else str(last)] = text
    elif isinstance(cur, list):
        i = list_index(cur, last)
        if i is not None:
            cur[i] = text


def make_result(state: MvuState, tree: dict[str, Any], changes: Changes, applied: list[str],
            warnings: list[str]) -> MvuResult:
    """The :class:`MvuResult` of an update: the new state (``tree`` with its display and delta trees from
    ``changes``), the commands applied and the warnings."""
    display, delta = changes.build(tree)
    new = MvuState(stat_data=tree, display_data=display, delta_data=delta,
                   initialized_lorebooks=copy.deepcopy(state.initialized_lorebooks))
    return MvuResult(new, applied, warnings)

