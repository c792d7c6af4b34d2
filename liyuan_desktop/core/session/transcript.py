"""What the conversation view shows for the active branch (:class:`Transcript`), page by page, and a lazy
sequence over it (:class:`TranscriptItems`).

Items, oldest first: ``{"id", "role", "text", "beat"}`` with role opening | user | assistant | draft (an
unfinished beat's draft, with ``"outcome"`` and ``"error"``); revised replies carry their latest text and
``"revised": true``; a reply with alternatives carries ``"swipe": [index, count]`` (1-based), a user message with
alternatives ``"branch": [index, count]``; replies and openings carry ``"variables"`` (the card's variable tree in
force after them) when the card has one. A reply or draft whose beat asked the user (the ``ask`` tool; the ask
entries sit between the user message and the beat) carries ``"asks"``: ``[{"question", "options", "answer",
"by"}]`` in the order asked (``answer`` None when the user stopped, ``by`` user | stop | auto) — the conversation
shows them where they happened, above the reply (issue 24 §3). A reply the user edited into a new version
(``Chat.edit_reply``) carries ``"edited": true``.

Snapshots with variables (``rp-state`` with ``mvu``, see ``chat/ledger.py``) give them to the newest reply /
opening before them and to everything after, except a snapshot with ``for_message`` (a status bar rewrote an older
message's variables), which changes that message's item only; ``vars_raw`` marks a table kept exactly as a frame
wrote it (no MVU normal form).
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Sequence
from typing import Any, Callable, Optional

from .branches import Branches
from .tree import SessionTree


class Transcript:
    """The transcript of one tree. ``initial_vars``: the card's raw initial variable tree (None without one);
    ``variables``: raw tree → the dict an item carries (the ledger's normal form)."""

    def __init__(self, tree: SessionTree, branches: Branches, initial_vars: Any,
                 variables: Callable[[Any], Any]):
        self.tree, self.branches = tree, branches
        self.initial_vars, self._vars = initial_vars, variables
        self._layout: Optional[tuple[int, Optional[str], list[str], list[int], list[str], list[int], list[int],
                                     list[int]]] = None
        self._revised: tuple[int, Optional[str], dict[str, str]] = (0, None, {})

    def _table(self, e: Any) -> Any:
        """The dict an item carries for the snapshot ``e`` (module doc)."""
        return copy.deepcopy(e.mvu) if getattr(e, "vars_raw", False) else self._vars(e.mvu)

    def items(self, start: int = 0, stop: Optional[int] = None) -> list[dict[str, Any]]:
        """The items (module doc). ``start``/``stop``: read only the branch path's entries ``[start:stop]``
        (positions in ``tree.path_to()``), beat numbers and variables carried over from before ``start`` — for
        :meth:`page`, which picks cut points where that gives the same items."""
        items: list[dict[str, Any]] = []
        path = self.tree.path_to()
        revised = self._revisions(path)
        lay = self._layout
        if start and lay is not None and lay[0] == len(path) and path and path[-1].id == lay[1]:
            beat = bisect.bisect_left(lay[7], start)  # the layout knows where the user messages are
        else:
            beat = sum(1 for e in path[:start] if e.type == "user")
        mvu = self._vars_before(path, start)
        aimed: list[Any] = []  # snapshots that rewrote an older message's variables

        def vars_now() -> Any:
            if mvu is None:
                return None
            return self._table(mvu) if mvu is not self.initial_vars else self._vars(mvu)

        swipe_info = self.branches.swipe_info
        asks: list[dict[str, Any]] = []  # asked in the beat being read (before its reply or draft)
        for e in path[start:stop]:
            t = e.type
            if t == "ask":
                asks.append({"question": e.question, "options": list(e.options), "answer": e.answer, "by": e.by})
                continue
            if t == "rp-state" and getattr(e, "for_message", None):
                aimed.append(e)
            elif t == "rp-state" and getattr(e, "mvu", None) is not None:  # an extra key: absent on most snapshots
                mvu = e
                last = next((i for i in reversed(items) if i["role"] in ("assistant", "opening")), None)
                if last is not None:  # the scribe's snapshot belongs to the reply it followed
                    last["variables"] = vars_now()
            if t == "opening":
                item = {"id": e.id, "role": "opening", "text": e.text, "beat": 0, "variables": vars_now()}
                k, n_alt = swipe_info(e.id)
                if n_alt > 1:  # alternate greetings
                    item["swipe"] = [k, n_alt]
                items.append(item)
            elif t == "user":
                beat += 1
                asks = []
                if getattr(e, "group_nudge", False):  # a group chat's turn without user words: not shown
                    continue
                item = {"id": e.id, "role": "user", "text": e.text, "beat": beat}
                if self.branches.count_user_siblings(e) > 1:
                    item["branch"] = list(swipe_info(e.id))
                items.append(item)
            elif t == "assistant":
                item = {"id": e.id, "role": "assistant", "text": revised.get(e.id, e.text), "beat": beat, "variables": vars_now()}
                if e.id in revised:
                    item["revised"] = True
                if getattr(e, "edit_of", None):  # a version the user wrote (Chat.edit_reply): no beat of its own
                    item["edited"] = True
                who = getattr(e, "speaker", None) or getattr(self.tree.entries.get(getattr(e, "edit_of", None) or ""),
                                                                 "speaker", None)
                if who:  # a group chat's reply (or the user's version of one): the member who spoke (chat/group_play.py)
                    item["speaker"] = who
                k, n_alt = swipe_info(e.id)
                if n_alt > 1:
                    item["swipe"] = [k, n_alt]
                if len(items) >= 1 and items[-1]["role"] == "draft" and items[-1].get("asks"):
                    asks = items[-1]["asks"] + asks  # a continued draft's asks stay with the reply it became
                if asks:
                    item["asks"], asks = asks, []
                items.append(item)
            elif t == "beat" and e.outcome not in ("sealed", "revised_previous"):
                if items and items[-1]["role"] == "draft":
                    asks = items.pop().get("asks", []) + asks
                draft = {"id": e.id, "role": "draft", "text": e.draft, "beat": beat, "outcome": e.outcome,
                         "error": e.error}
                k, n_alt = swipe_info(e.id)
                if n_alt > 1:  # a failed attempt on screen: the replies of the other attempts are one swipe away
                    draft["swipe"] = [k, n_alt]
                if asks:
                    draft["asks"], asks = asks, []
                items.append(draft)
            if t in ("assistant", "revision") and items and len(items) >= 2 and items[-2]["role"] == "draft":
                items.pop(-2)
        lay = self._layout
        if stop is not None and lay is not None and lay[0] == len(path) and path and path[-1].id == lay[1]:
            aimed += [path[p] for p in lay[6] if p >= stop]  # aimed at this page from after it
        elif stop is not None:
            aimed += [e for e in path[stop:] if e.type == "rp-state" and getattr(e, "for_message", None)]
        by_id = {it["id"]: it for it in items}
        for e in aimed:
            if e.for_message in by_id:
                by_id[e.for_message]["variables"] = self._table(e)
        for it in items:
            if it.get("variables", 0) is None:
                del it["variables"]
        return items

    def _revisions(self, path: Any) -> dict[str, str]:
        """``{reply id: revised text}`` of the ``revision`` entries on ``path``, kept incrementally like
        :meth:`layout` (O(new entries) per call; rebuilt after a branch switch): a page of a 100,000-message chat
        no longer reads every entry of the branch (~50 ms on the UI thread per page). Read-only for callers."""
        n, last, revised = self._revised
        if not (n and len(path) >= n and path[n - 1].id == last):
            n, revised = 0, {}
        for p in range(n, len(path)):
            e = path[p]
            if e.type == "revision":
                revised[e.target] = e.text
        self._revised = (len(path), path[-1].id if path else None, revised)
        return revised

    def _vars_before(self, path: Sequence[Any], start: int) -> Any:
        """The variables in force just before ``path[start]``: the latest rp-state with ``mvu`` (and no
        ``for_message``) before it, else the card's initial tree (None without one)."""
        lay = self._layout
        if start and lay is not None and lay[0] == len(path) and path and path[-1].id == lay[1]:
            k = bisect.bisect_left(lay[5], start)  # the layout knows where the snapshots with variables are
            return path[lay[5][k - 1]] if k else self.initial_vars
        for e in reversed(path[:start]):
            if e.type == "rp-state" and getattr(e, "mvu", None) is not None and not getattr(e, "for_message", None):
                return e
        return self.initial_vars

    def layout(self) -> tuple[list[str], list[int]]:
        """Entry ids and path positions of the items :meth:`items` returns, in order — the same item rules read
        from entry types and beat outcomes only, kept incrementally (O(new entries) per call; rebuilt after a
        branch switch). Also notes the positions of snapshots with variables (and of those aimed at an older
        message) and of user messages (a page's first beat number without counting from the start)."""
        path = self.tree.path_to()
        lay = self._layout
        if lay is None or not (lay[0] and len(path) >= lay[0] and path[lay[0] - 1].id == lay[1]):
            lay = (0, None, [], [], [], [], [], [])
        n, _, ids, pos, roles, mvu_pos, aimed_pos, user_pos = lay
        for p in range(n, len(path)):
            e = path[p]
            t = e.type
            # a snapshot aimed at an older message always carries its table (chat.ledger), so ``for_message`` is
            # looked up only under ``mvu``: one lazy lookup per snapshot of a chat without variables
            if t == "rp-state" and getattr(e, "mvu", None) is not None:
                (aimed_pos if getattr(e, "for_message", None) else mvu_pos).append(p)
            if t in ("opening", "user", "assistant"):
                ids.append(e.id)
                pos.append(p)
                roles.append(t)
                if t == "user":
                    user_pos.append(p)
            elif t == "beat" and e.outcome not in ("sealed", "revised_previous"):
                if roles and roles[-1] == "draft":
                    ids.pop(), pos.pop(), roles.pop()
                ids.append(e.id)
                pos.append(p)
                roles.append("draft")
            if t in ("assistant", "revision") and len(roles) >= 2 and roles[-2] == "draft":
                del ids[-2], pos[-2], roles[-2]
        self._layout = (len(path), path[-1].id if path else None, ids, pos, roles, mvu_pos, aimed_pos, user_pos)
        return ids, pos

    def page(self, end: Optional[int] = None, count: int = 60) -> tuple[int, int, list[dict[str, Any]]]:
        """Items ``[first, end)`` of :meth:`items` (at most ``count``; ``end`` defaults to the total, i.e. the
        newest page) without building the others: ``(first, total, items)``. The read starts at the user message at
        or before the page and ends at the first reply after it (nothing outside changes these items)."""
        ids, pos = self.layout()
        total = len(ids)
        end = total if end is None else max(0, min(end, total))
        first = max(0, end - max(0, count))
        if first >= end:
            return first, total, []
        path = self.tree.path_to()
        start = pos[first]
        while start > 0 and path[start].type != "user":
            start -= 1
        stop = pos[end - 1] + 1
        while stop < len(path) and path[stop].type not in ("assistant", "opening"):
            stop += 1
        by_id = {it["id"]: it for it in self.items(start, stop + 1)}
        if all(i in by_id for i in ids[first:end]):
            return first, total, [by_id[i] for i in ids[first:end]]
        full = self.items()  # the layout rules fell behind items(): the slow way is always right
        first = max(0, min(end, len(full)) - count)
        return first, len(full), full[first:end]


class TranscriptItems:
    """A transcript as a read-only sequence of item dicts whose pages are built when first read: ``len()`` is the
    full count, ``items[i]``/slices/iteration give exactly what :meth:`Transcript.items` would. A snapshot of the
    branch when it was made: make a new one after a beat or a branch switch. Iterating builds every page still
    missing (O(chat length), once)."""

    def __init__(self, transcript: Transcript, page: int = 60):
        first, total, items = transcript.page(None, page)
        self._t, self._page, self._total = transcript, max(1, page), total
        self._have: dict[int, dict[str, Any]] = {first + k: it for k, it in enumerate(items)}

    def __len__(self) -> int:
        return self._total

    def _fill(self, lo: int, hi: int) -> None:
        """Build the items missing in ``[lo, hi)``."""
        missing = [k for k in range(lo, hi) if k not in self._have]
        if missing:
            first, _total, items = self._t.page(missing[-1] + 1, missing[-1] + 1 - missing[0])
            self._have.update((first + k, it) for k, it in enumerate(items))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            lo, hi, step = i.indices(self._total)
            if step == 1 and lo < hi:
                self._fill(lo, hi)
            return [self[k] for k in range(lo, hi, step)]
        k = i + self._total if i < 0 else i
        if not 0 <= k < self._total:
            raise IndexError("transcript index out of range")
        if k not in self._have:
            self._fill(max(0, k + 1 - self._page), k + 1)
            if k not in self._have:  # the branch shrank since this snapshot was made
                raise IndexError("transcript index out of range")
        return self._have[k]

    def __iter__(self) -> Any:
        self._fill(0, self._total)
        return (self._have[k] for k in range(self._total))

    def __reversed__(self) -> Any:
        return (self[k] for k in range(self._total - 1, -1, -1))
