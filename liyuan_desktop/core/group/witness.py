"""Who is in the scene and who knows what, read from a group chat's session tree (issue 31, "who knows what").

What it does (the simple version):

- **Speaker of a reply**: the ``speaker`` field Liyuan writes on each group reply (a new version made by editing
  takes its original's); a reply imported from SillyTavern names its speaker in its kept ``st.name``.
- **Presence**: going along the branch, a member is present from their first reply on; the ledger can take them
  out — their ``characters[<card name>].at`` set to a place other than the scene's ``location`` — or bring them in
  before they speak (``at`` equal to ``location``).
- **Witnesses**: each ledger snapshot on the branch (``rp-state`` entries with a world state) is compared with the
  one before it. Every flag (``flags`` key) whose value is new or changed and every plot thread (``plot_threads``
  item) that is new gets as witnesses the members present at that snapshot (the speaker of the reply it covers is
  present). A changed flag is known only to those present at its last change.
- **Roster**: the state block sent to a member lists every present member in the roster's characters
  (【登场名录】; added, with no first-seen time, when the scribe has not registered them yet).
- **Scoping**: the state block sent when member C speaks leaves out the flags and plot threads (and their names in
  the roster's ``events``) whose witnesses do not include C. Facts recorded before any member spoke (the opening,
  an imported ledger) have no witnesses and everyone knows them. Nothing else is scoped: time, place, characters,
  inventory are shared. The ledger itself (what the scribe reads and patches) is never cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..cards import Card
from ..ledger.state import Roster, WorldState
from .model import Group, find_member


def reply_speaker(entry: Any, entries: dict[str, Any]) -> Optional[str]:
    """The speaker recorded on a reply entry (module doc) or None."""
    seen = 0
    e = entry
    while e is not None and seen < 64:
        s = getattr(e, "speaker", None)
        if isinstance(s, str) and s:
            return s
        st = getattr(e, "st", None)
        if isinstance(st, dict) and isinstance(st.get("name"), str) and not st.get("is_user"):
            return str(st["name"])
        target = getattr(e, "edit_of", None)
        e = entries.get(target) if isinstance(target, str) else None
        seen += 1
    return None


def spoken(group: Group, cards: dict[str, Card], path: Sequence[Any], entries: dict[str, Any]) -> list[str]:
    """The members who replied on ``path`` (root first), oldest first (names not in the group are left out)."""
    out = []
    for e in path:
        if e.type == "assistant":
            s = reply_speaker(e, entries)
            m = find_member(group, s, cards) if s else None
            if m is not None:
                out.append(m)
    return out


@dataclass
class Knowledge:
    """What the branch's walk found: ``present`` (members in the scene at its end), ``flags``/``threads``
    (fact → its witnesses; a fact missing here is known to all)."""

    present: set[str] = field(default_factory=set)
    flags: dict[str, set[str]] = field(default_factory=dict)
    threads: dict[str, set[str]] = field(default_factory=dict)


def _presence(group: Group, cards: dict[str, Card], spoke: set[str], state: WorldState) -> set[str]:
    out = set(spoke)
    for m in group.members:
        c = state.characters.get(cards[m].name if m in cards else m)
        if c is None or not c.at:
            continue
        if state.location and c.at == state.location:
            out.add(m)
        elif state.location:
            out.discard(m)
    return out


def knowledge(group: Group, cards: dict[str, Card], path: Sequence[Any], entries: dict[str, Any]) -> Knowledge:
    """Walk ``path`` (the branch, root first) and record presence and witnesses (module doc)."""
    k = Knowledge()
    spoke: set[str] = set()
    prev = WorldState()
    for e in path:
        if e.type == "assistant":
            s = reply_speaker(e, entries)
            m = find_member(group, s, cards) if s else None
            if m is not None:
                spoke.add(m)
                k.present = _presence(group, cards, spoke, prev)
        elif e.type == "rp-state" and isinstance(getattr(e, "state", None), dict) and e.state:
            try:
                state = WorldState.model_validate(e.state)
            except ValueError:
                continue
            k.present = _presence(group, cards, spoke, state)
            if spoke:  # before anyone spoke, facts are common ground
                for key, value in state.flags.items():
                    if prev.flags.get(key) != value:
                        k.flags[key] = set(k.present)
                for t in state.plot_threads:
                    if t not in prev.plot_threads and t not in k.threads:
                        k.threads[t] = set(k.present)
            prev = state
    return k


def scoped_state(state: WorldState, known: Knowledge, member: str, present: Sequence[str] = ()) -> WorldState:
    """``state`` as member ``member`` is shown it (module doc): without the flags and plot threads it did not
    witness, with the present members' names (``present``: card names) in the roster; the same object when
    nothing changes."""
    hide_flags = {k for k, w in known.flags.items() if member not in w and k in state.flags}
    hide_threads = {t for t, w in known.threads.items() if member not in w and t in state.plot_threads}
    r = state.roster or Roster()
    missing = [n for n in present if n not in r.characters]
    if not hide_flags and not hide_threads and not missing:
        return state
    roster = Roster(characters={**r.characters, **{n: "" for n in missing}}, items=dict(r.items),
                    places=dict(r.places), events={k: v for k, v in r.events.items() if k not in hide_threads})
    return state.model_copy(update={
        "flags": {k: v for k, v in state.flags.items() if k not in hide_flags},
        "plot_threads": [t for t in state.plot_threads if t not in hide_threads],
        "roster": roster})


__all__ = ["Knowledge", "knowledge", "reply_speaker", "scoped_state", "spoken"]
