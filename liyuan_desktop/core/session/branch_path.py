"""A branch path as :meth:`SessionTree.path_to` returns it: a read-only, fixed-length view of the tree's cached path.

Appending a reply to a 10,000-beat chat used to copy the whole cached path (40,000 entries) once per new entry —
four times a beat, the largest part of what grew with the chat's length (bench/beat_overhead.py, issue 15). The
tree now extends one list in place and hands out views of its first ``n`` items: a view never changes after it
was taken (the list only grows at the end, and a rollback or branch switch starts a new list), so callers keep the
snapshot semantics they had, without the copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any, Iterator


class BranchPath(Sequence[Any]):
    """The first ``n`` entries of ``items`` (root first), read-only. Indexing (negative too), slicing (→ a list),
    ``len``, iteration and ``reversed`` run at list speed (iteration in C); ``==`` compares with any sequence by
    items; ``list(path)`` gives a plain list. ``items`` must only ever be extended at the end while views exist."""

    __slots__ = ("_items", "_n")

    def __init__(self, items: list[Any], n: int | None = None):
        self._items = items
        self._n = len(items) if n is None else n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            return self._items[start:stop:step]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("branch path index out of range")
        return self._items[i]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._n)

    def __reversed__(self) -> Iterator[Any]:
        return map(self._items.__getitem__, range(self._n - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (BranchPath, list, tuple)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # unhashable: mutable-looking, like a list

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other]

    def __repr__(self) -> str:
        return f"BranchPath({list(self)!r})"
