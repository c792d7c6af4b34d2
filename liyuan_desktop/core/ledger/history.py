"""The ledger timeline (issue 33): what each beat on a branch changed in the ledger, and reverting one change.

The branch's ``rp-state`` snapshots are compared one after the other (seed 002: every beat, every user edit and
every status-bar write is a new snapshot, none is ever rewritten), so the history is exactly the snapshots'
differences. Each snapshot is flattened into leaves ``{path: value}``:

- the world state as ``WorldState.to_dict`` has it: ``time``, ``location``, ``characters.<name>.<field>``
  (``affinity``, ``status``, ``notes``, ``at``), ``inventory``, ``flags.<key>``, ``plot_threads``, and the roster
  ``roster.<table>.<name>`` (lists are one leaf: the scribe replaces them whole);
- the card's variable tree (MVU ``stat_data``) under ``vars.`` (``vars.好感``, ``vars.角色.阿棠.好感度``); a value
  of MVU's ``[value, description]`` form is one leaf. A snapshot that holds an older message's table
  (``for_message``) or a raw bar table (``vars_raw``) leaves the variables in force unchanged.

A :class:`LedgerChange` says who made it (``scribe``; ``bar``: a status-bar frame's write; ``user``: an edit or a
revert; ``script``: a greeting's or the card's initial values) and the scribe's reason when its reply gave one (a
top-level ``"reason"``: a string for the whole patch, or ``{path: text}``). Beats are numbered as the branch counts
user messages (beat 0: the opening's initial values), the numbering the window's navigator and ``liyuan`` use.

:func:`revert_plan` says what reverting a beat's change (one path, or every path the beat changed) sets back and
which later beats changed the same paths (conflicts the user sees before applying); :func:`reverted_values` builds
the ledger and variable tree the revert snapshot holds. The chat appends it as a user snapshot on the shown branch
(``Chat.revert_ledger_change``; other branches keep theirs) with the key ``reverts``, which 「撤销」 steps back over.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any, Iterable, Literal, Optional, Sequence

from pydantic import BaseModel, Field

from ..messages import Msg, message
from .mvu import MvuState
from .scribe import scribe_reasons
from .state import WorldState, js_json

Who = Literal["scribe", "bar", "user", "script"]
Area = Literal["world", "presence", "roster", "threads", "vars"]
#: the prefix of the variable tree's paths
VARS = "vars"
#: a leaf that does not exist (added: old absent; removed: new absent)
_ABSENT: Any = object()


class LedgerChange(BaseModel):
    """One leaf that changed between two consecutive snapshots (or, in a :class:`RevertPlan`, over a whole beat).

    ``path``: the leaf's segments joined by ``.`` (display and filtering); ``segments``: the same as a list (keys
    may contain dots). ``old``/``new``: the values (None when absent: see ``kind``). ``kind``: added | removed |
    changed. ``snapshot_id``: the session entry that made the change."""

    beat: int
    snapshot_id: str
    path: str
    segments: list[str]
    area: Area
    kind: Literal["added", "removed", "changed"]
    old: Any = None
    new: Any = None
    who: Who
    reason: str = ""


class BeatChanges(BaseModel):
    """What one beat changed: ``beat`` (0 = the opening), ``user_id``/``user_text`` of the beat's user message
    (None / "" for beat 0), ``changes`` in the order the snapshots made them."""

    beat: int
    user_id: Optional[str] = None
    user_text: str = ""
    changes: list[LedgerChange] = Field(default_factory=list)


class LedgerHistory(BaseModel):
    """The branch's ledger timeline: ``beats`` (only those with a change, oldest first) and ``series``: for each
    numeric leaf, ``[(beat, value)]`` at the end of every beat from the first one it has a number (for charts)."""

    beats: list[BeatChanges] = Field(default_factory=list)
    series: dict[str, list[tuple[int, float]]] = Field(default_factory=dict)


class RevertPlan(BaseModel):
    """What reverting ``beat``'s change to ``path`` (None: every path the beat changed) does: ``targets`` (per
    path the beat's net change, whose ``old`` is set back), ``conflicts`` (later beats' changes to the same paths, or
    paths above/below them; applying still sets ``old``, overwriting them) and ``current`` (``{path: value now}``,
    None when absent)."""

    beat: int
    path: Optional[str] = None
    targets: list[LedgerChange] = Field(default_factory=list)
    conflicts: list[LedgerChange] = Field(default_factory=list)
    current: dict[str, Any] = Field(default_factory=dict)


# ----------------------------------------------------------------------------------------------- flattening

def _flatten(value: Any, prefix: tuple[str, ...], out: dict[tuple[str, ...], Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, prefix + (str(k),), out)
    elif prefix:
        out[prefix] = value


def snapshot_leaves(state: dict[str, Any], stat_data: Optional[dict[str, Any]]) -> dict[tuple[str, ...], Any]:
    """``{segments: value}`` of a snapshot's ledger (a ``WorldState`` dict) and variable tree (``stat_data``, under
    ``vars``; None = no tree). Dicts are walked, everything else (lists too) is one leaf."""
    out: dict[tuple[str, ...], Any] = {}
    _flatten(WorldState.model_validate(state or {}).to_dict(), (), out)
    if stat_data is not None:
        _flatten(stat_data, (VARS,), out)
    return out


def area_of(segments: Sequence[str]) -> Area:
    """The timeline's area of a leaf: vars, roster, threads (``plot_threads``), presence (a character's ``at``),
    else world."""
    head = segments[0] if segments else ""
    if head == VARS:
        return "vars"
    if head == "roster":
        return "roster"
    if head == "plot_threads":
        return "threads"
    if head == "characters" and len(segments) == 3 and segments[2] == "at":
        return "presence"
    return "world"


def number_of(value: Any) -> Optional[float]:
    """The number a leaf holds for a chart: an int/float (not bool), MVU's ``[number, description]`` pair, or a
    string that is a plain number; None otherwise."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], str):
        value = value[0]
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


# ----------------------------------------------------------------------------------------------- the walk

def _who(e: Any, segments: tuple[str, ...]) -> Who:
    source = getattr(e, "source", "")
    if source == "scribe":
        return "scribe"
    if source == "init":
        return "script"
    if getattr(e, "reverts", None) or getattr(e, "sets", None):
        return "user"
    return "bar" if segments[0] == VARS else "user"


def _reason(reasons: Any, segments: tuple[str, ...]) -> str:
    if isinstance(reasons, str):
        return reasons
    if isinstance(reasons, dict):
        path = ".".join(segments)
        for key in (path, path[len(VARS) + 1:] if segments[0] == VARS else None, segments[0]):
            if key and isinstance(reasons.get(key), str):
                return str(reasons[key])
    return ""


def _diff(before: dict[tuple[str, ...], Any], after: dict[tuple[str, ...], Any], e: Any,
          beat: int) -> list[LedgerChange]:
    reasons = scribe_reasons(getattr(e, "raw", "") or "") if getattr(e, "source", "") == "scribe" else None
    out: list[LedgerChange] = []
    for seg in list(after) + [s for s in before if s not in after]:
        old, new = before.get(seg, _ABSENT), after.get(seg, _ABSENT)
        if old is not _ABSENT and new is not _ABSENT and old == new and type(old) is type(new):
            continue
        kind: Literal["added", "removed", "changed"] = "added" if old is _ABSENT else "removed" if new is _ABSENT else "changed"
        out.append(LedgerChange(beat=beat, snapshot_id=str(e.id), path=".".join(seg), segments=list(seg),
                                area=area_of(seg), kind=kind, old=None if old is _ABSENT else copy.deepcopy(old),
                                new=None if new is _ABSENT else copy.deepcopy(new), who=_who(e, seg),
                                reason=_reason(reasons, seg)))
    return out


def _vars_of(e: Any, current: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The variable tree in force after snapshot ``e`` (``current`` when it carries none for the branch)."""
    mvu = getattr(e, "mvu", None)
    if mvu is None or getattr(e, "for_message", None) or getattr(e, "vars_raw", False):
        return current
    return MvuState.from_any(mvu).stat_data


def _matches(path: str, prefix: Optional[str]) -> bool:
    return not prefix or path.startswith(prefix)


def build_history(path: Iterable[Any], initial_vars: Optional[dict[str, Any]] = None,
                  prefix: Optional[str] = None) -> LedgerHistory:
    """The timeline of a branch. ``path``: its session entries, root first (``SessionTree.path_to()``);
    ``initial_vars``: the card's initial variable tree (``stat_data`` before any snapshot; None when the card has
    none); ``prefix``: keep only changes whose path starts with it (the series are filtered the same way)."""
    beats: dict[int, BeatChanges] = {}
    series: dict[str, list[tuple[int, float]]] = {}
    beat, user_id, user_text = 0, None, ""
    state: dict[str, Any] = {}
    stat: Optional[dict[str, Any]] = copy.deepcopy(initial_vars) if initial_vars is not None else None
    leaves = snapshot_leaves(state, stat)

    def close_beat() -> None:
        for seg, v in leaves.items():
            p, n = ".".join(seg), number_of(v)
            if n is not None and _matches(p, prefix):
                series.setdefault(p, []).append((beat, n))

    for e in path:
        if e.type == "user":
            close_beat()
            beat, user_id, user_text = beat + 1, str(e.id), str(getattr(e, "text", "") or "")
        elif e.type == "rp-state":
            state = e.state if isinstance(getattr(e, "state", None), dict) else state
            stat = _vars_of(e, stat)
            after = snapshot_leaves(state, stat)
            found = [c for c in _diff(leaves, after, e, beat) if _matches(c.path, prefix)]
            if found:
                b = beats.setdefault(beat, BeatChanges(beat=beat, user_id=user_id, user_text=user_text))
                b.changes.extend(found)
            leaves = after
    close_beat()
    return LedgerHistory(beats=[beats[k] for k in sorted(beats)], series=series)


class PatchQuality(BaseModel):
    """How the scribe's patches fared on a branch (issue 33: patch quality measured): ``beats`` scribe snapshots,
    ``applied`` change lines applied (ledger, variables, panels), ``rejected`` lines refused by the guards
    (warnings), ``reverted`` paths the user set back with a revert, ``hand_set`` values the user set by hand."""

    beats: int = 0
    applied: int = 0
    rejected: int = 0
    reverted: int = 0
    hand_set: int = 0


def patch_quality(path: Iterable[Any]) -> PatchQuality:
    """Count :class:`PatchQuality` over a branch's session entries (root first)."""
    q = PatchQuality()
    for e in path:
        if e.type != "rp-state":
            continue
        if getattr(e, "source", "") == "scribe":
            q.beats += 1
            q.applied += sum(len(getattr(e, k, None) or []) for k in ("applied", "mvu_applied", "panel_applied"))
            q.rejected += sum(len(getattr(e, k, None) or []) for k in ("warnings", "mvu_warnings", "panel_warnings"))
        elif getattr(e, "reverts", None):
            q.reverted += len(getattr(e, "applied", None) or [])
        elif getattr(e, "sets", None):
            q.hand_set += 1
    return q


# ----------------------------------------------------------------------------------------------- reverting

def _under(path: Sequence[str], top: Sequence[str]) -> bool:
    return len(path) >= len(top) and list(path[:len(top)]) == list(top)


def _overlap(a: Sequence[str], b: Sequence[str]) -> bool:
    return _under(a, b) or _under(b, a)


def _net(changes: list[LedgerChange]) -> list[LedgerChange]:
    """Per path, the beat's first ``old`` and last ``new``; paths that end where they began are dropped."""
    by: dict[tuple[str, ...], list[LedgerChange]] = {}
    for c in changes:
        by.setdefault(tuple(c.segments), []).append(c)
    out: list[LedgerChange] = []
    for group in by.values():
        first, last = group[0], group[-1]
        old_absent, new_absent = first.kind == "added", last.kind == "removed"
        if (old_absent and new_absent) or (not old_absent and not new_absent and first.old == last.new):
            continue
        kind: Literal["added", "removed", "changed"] = "added" if old_absent else "removed" if new_absent else "changed"
        reason = next((c.reason for c in reversed(group) if c.reason), "")
        out.append(last.model_copy(update={"old": copy.deepcopy(first.old), "kind": kind, "reason": reason}, deep=True))
    return out


def revert_plan(history: LedgerHistory, beat: int, path: Optional[str], now: dict[tuple[str, ...], Any]) -> RevertPlan:
    """What reverting ``beat``'s change to ``path`` (exactly that leaf or everything below it; None = all the
    beat's changes) does, from the branch's unfiltered ``history`` and its leaves ``now``
    (:func:`snapshot_leaves` of the newest snapshot). ValueError when the beat changed nothing there."""
    top = None if path is None else path.split(".")
    b = next((x for x in history.beats if x.beat == beat), None)
    chosen = [c for c in (b.changes if b else []) if top is None or c.path == path or _under(c.segments, top)]
    targets = _net(chosen)
    if not targets:
        raise ValueError(message("ledger.history.nothing", beat=beat, path=path or message("ledger.history.any")))
    conflicts = [c for x in history.beats if x.beat > beat for c in x.changes
                 if any(_overlap(c.segments, t.segments) for t in targets)]
    current = {t.path: copy.deepcopy(now.get(tuple(t.segments))) for t in targets}
    return RevertPlan(beat=beat, path=path, targets=targets, conflicts=conflicts, current=current)


def _set_in(root: dict[str, Any], segs: Sequence[str], value: Any) -> None:
    node = root
    for s in segs[:-1]:
        nxt = node.get(s)
        if not isinstance(nxt, dict):
            nxt = node[s] = {}
        node = nxt
    node[segs[-1]] = copy.deepcopy(value)


def _delete_in(root: dict[str, Any], segs: Sequence[str]) -> None:
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = root
    for s in segs[:-1]:
        if not isinstance(node, dict) or not isinstance(node.get(s), dict):
            return
        trail.append((node, s))
        node = node[s]
    if isinstance(node, dict):
        node.pop(segs[-1], None)
    for parent, key in reversed(trail[1:]):  # a character whose every field went: the character goes
        if parent[key] != {}:
            break
        del parent[key]


def _rebuild(state: WorldState, mvu: Optional[MvuState],
             edits: list[tuple[Sequence[str], Any]]) -> tuple[WorldState, Optional[MvuState]]:
    """``state``/``mvu`` with each ``(segments, value)`` set (``_ABSENT``: removed; empty parents go too).
    ValidationError (a ValueError) when the ledger no longer validates."""
    root: dict[str, Any] = state.to_dict()
    if mvu is not None:
        root[VARS] = copy.deepcopy(mvu.stat_data)
    for segs, value in edits:
        if value is _ABSENT:
            _delete_in(root, segs)
        else:
            _set_in(root, segs, value)
    stat = root.pop(VARS, None)
    new_state = WorldState.model_validate(root)
    new_mvu = None
    if mvu is not None:
        new_mvu = mvu.model_copy(deep=True)
        new_mvu.stat_data = stat if isinstance(stat, dict) else {}
        new_mvu.display_data = copy.deepcopy(new_mvu.stat_data)
        new_mvu.delta_data = {}
    return new_state, new_mvu


def reverted_values(plan: RevertPlan, state: WorldState,
                    mvu: Optional[MvuState]) -> tuple[WorldState, Optional[MvuState], list[str]]:
    """The ledger and variable tree with ``plan``'s targets set back to their ``old`` values (an added leaf is
    removed), from the branch's current ``state`` and ``mvu``. Returns them with one line per path
    (``path：new → old``), the applied list of the revert snapshot. The variable tree's ``display_data`` follows
    ``stat_data``; its ``delta_data`` is emptied (this is no model update)."""
    targets = [t for t in plan.targets if not (t.segments[0] == VARS and mvu is None)]
    edits: list[tuple[Sequence[str], Any]] = [(t.segments, _ABSENT if t.kind == "added" else t.old) for t in targets]
    new_state, new_mvu = _rebuild(state, mvu, edits)
    return new_state, new_mvu, [f"{t.path}：{describe_value(t.new)} → {describe_value(t.old)}" for t in targets]


def set_value(path: str, value: Any, state: WorldState,
              mvu: Optional[MvuState]) -> tuple[WorldState, Optional[MvuState], str]:
    """The ledger and variable tree with the leaf ``path`` (dotted, as the timeline writes it: ``time``,
    ``characters.阿棠.affinity``, ``vars.好感``) set to ``value`` by the user (an MVU player's hand edit); returns
    them and the applied line ``path：old → new``. ValueError for a path outside the ledger and the variable tree
    (``vars`` without a tree included) or a value the ledger refuses (an affinity that is no number …)."""
    segs = [s for s in path.split(".") if s]
    if not segs or (segs[0] == VARS and (mvu is None or len(segs) < 2)) or \
            (segs[0] != VARS and segs[0] not in WorldState.model_fields):
        raise ValueError(message("ledger.set.bad_path", path=path))
    old = snapshot_leaves(state.to_dict(), mvu.stat_data if mvu is not None else None).get(tuple(segs))
    new_state, new_mvu = _rebuild(state, mvu, [(segs, value)])
    return new_state, new_mvu, f"{path}：{describe_value(old)} → {describe_value(value)}"


def value_now(history: LedgerHistory, path: str) -> Any:
    """The value leaf ``path`` has at the end of the branch ``history`` covers (its newest change's ``new``; the
    history has every snapshot), None when it never changed."""
    found = None
    for b in history.beats:
        for c in b.changes:
            if c.path == path:
                found = c.new
    return found


def value_from_text(text: str, current: Any) -> Any:
    """What a user typed for a leaf whose value is ``current``: a string leaf takes the text as is; any other takes
    it as JSON (a number, true/false, a list …) or, when it is none, as text."""
    if isinstance(current, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def value_as_text(value: Any) -> str:
    """The text a user edits for a leaf's ``value`` (the inverse of :func:`value_from_text`): a string as is, ""
    for an absent leaf, anything else as JSON."""
    return value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)


def describe_value(value: Any) -> str:
    """A leaf's value as the timeline prints it: a string as is (``""`` when empty), ``∅`` for an absent leaf,
    anything else as JavaScript's ``JSON.stringify`` writes it."""
    if value is None:
        return "∅"
    return (value or '""') if isinstance(value, str) else js_json(value)


def who_message(who: str) -> Msg:
    """Who made a change, as a message (场记 / 状态栏 / 你 / 卡的初始值; scribe, status bar, you, …)."""
    return message(f"ledger.who.{who}")


def beat_message(beat: BeatChanges) -> Msg:
    """A beat's title: 「第 4 拍 first words」 (``Opening`` for beat 0)."""
    if beat.beat == 0:
        return message("ledger.beat.opening")
    text = beat.user_text.strip().replace("\n", " ")
    return message("ledger.beat.title", beat=beat.beat, text=text[:30] + ("…" if len(text) > 30 else ""))


__all__ = ["BeatChanges", "LedgerChange", "LedgerHistory", "PatchQuality", "RevertPlan", "patch_quality", "area_of", "beat_message", "build_history",
           "describe_value", "number_of", "revert_plan", "reverted_values", "set_value", "snapshot_leaves",
           "value_as_text", "value_from_text", "value_now", "who_message"]
