"""What a story checkpoint is: :class:`Checkpoint` (one line of ``历史/检查点.jsonl``: a manifest ``{file name: sha256}``
plus who/when/why), :class:`Changed` (the diff of two manifests, renames detected by hash), :class:`FileDiff` (one
file's before/after text for the timeline), the errors, the file-name constants of the ``历史/`` layout and the pure
helpers (hashing, ids, :func:`diff_manifests`, :func:`is_chapter_name`). The store and its durability rules are in
:mod:`.checkpoints`.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Literal, Optional

from pydantic import BaseModel, Field

OBJECTS_DIRNAME = "对象"
LOG_FILENAME = "检查点.jsonl"
HASHCACHE_FILENAME = ".hashcache.json"
CHAPTER_SUFFIX = ".md"

class CheckpointError(Exception):
    """Base of this module's errors."""


class CheckpointNotFound(CheckpointError, KeyError):
    """No checkpoint with that id in ``检查点.jsonl``."""


class MissingObjectError(CheckpointError, FileNotFoundError):
    """A blob named by a checkpoint is not in ``历史/对象/`` (or its content no longer matches its hash)."""


# ----------------------------------------------------------------------------------------------------- models


class Changed(BaseModel):
    """What a checkpoint changed relative to the previous one (file names; each list sorted by code point).

    ``renamed`` holds ``{"from": old name, "to": new name}`` dicts: a name that disappeared and a name that appeared
    with the same content hash. A renamed file is in neither ``added`` nor ``removed``."""

    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    renamed: list[dict[str, str]] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when nothing was added, modified, renamed or removed."""
        return not (self.added or self.modified or self.renamed or self.removed)

    def to_dict(self) -> dict:
        """Key order added, modified, renamed, removed (the seed's order); renamed items as ``{"from", "to"}``."""
        return {
            "added": list(self.added),
            "modified": list(self.modified),
            "renamed": [{"from": r["from"], "to": r["to"]} for r in self.renamed],
            "removed": list(self.removed),
        }


class Checkpoint(BaseModel):
    """One line of ``检查点.jsonl``.

    ``id``: base36 of the ms timestamp + ``-`` + 6 hex chars (random; not reproducible); ``ts``: Unix time in ms;
    ``author``: ``"user"`` or ``"agent"``; ``turnId``: the turn that produced it (optional); ``aborted``: the turn was
    stopped before it finished (only present when true); ``restoredFrom``: id of the checkpoint a restore went back
    to; ``files``: ``{chapter name: sha256 hex of its UTF-8 bytes}`` sorted by name; ``changed``: vs the previous
    checkpoint."""

    id: str
    ts: int
    author: Literal["user", "agent"]
    turnId: Optional[str] = None
    message: str
    aborted: Optional[bool] = None
    restoredFrom: Optional[str] = None
    files: dict[str, str]
    changed: Changed

    def to_dict(self) -> dict:
        """The seed's key order: id, ts, author, turnId?, message, aborted?, restoredFrom?, files, changed; optional
        keys left out when empty/false (as the template's ``...(o.turnId ? {turnId} : {})``)."""
        d: dict = {"id": self.id, "ts": self.ts, "author": self.author}
        if self.turnId:
            d["turnId"] = self.turnId
        d["message"] = self.message
        if self.aborted:
            d["aborted"] = True
        if self.restoredFrom:
            d["restoredFrom"] = self.restoredFrom
        d["files"] = {k: self.files[k] for k in sorted(self.files)}
        d["changed"] = self.changed.to_dict()
        return d

    def to_line(self) -> str:
        """One compact JSON line without the trailing newline, non-ASCII kept (= JavaScript ``JSON.stringify``)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))


class FileDiff(BaseModel):
    """One changed file of a checkpoint, for the caller to render. ``status`` is added / modified / renamed /
    removed; ``name`` is the file's name in this checkpoint (the old name for ``removed``), ``old_name`` is set for
    ``renamed``; ``old_text`` is None for added files, ``new_text`` None for removed ones."""

    name: str
    status: Literal["added", "modified", "renamed", "removed"]
    old_name: Optional[str] = None
    old_text: Optional[str] = None
    new_text: Optional[str] = None


# ------------------------------------------------------------------------------------------------- helpers


def sha256_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 of ``data``: the name of a blob in the object store."""
    return hashlib.sha256(data).hexdigest()


def new_checkpoint_id(files: dict[str, str], now_ms: int) -> str:
    """Seed: ``${Date.now().toString(36)}-${hashOf(JSON.stringify(files) + Math.random()).slice(0, 6)}``."""
    payload = json.dumps(files, ensure_ascii=False, separators=(",", ":")) + secrets.token_hex(8)
    return f"{_base36(now_ms)}-{sha256_hex(payload.encode('utf-8'))[:6]}"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def diff_manifests(old: dict[str, str], new: dict[str, str]) -> Changed:
    """Compare two manifests ``{name: hash}``.

    added = names only in ``new``; removed = names only in ``old``; modified = in both with another hash. Then a
    removed name and an added name with the same hash become one ``renamed`` pair: per hash, the removed names and
    the added names are each sorted and paired in order (deterministic; surplus names stay added/removed). All
    lists sorted by code point; ``renamed`` by (from, to)."""
    added = sorted(n for n in new if n not in old)
    removed = sorted(n for n in old if n not in new)
    modified = sorted(n for n in new if n in old and old[n] != new[n])
    by_hash_removed: dict[str, list[str]] = {}
    for n in removed:
        by_hash_removed.setdefault(old[n], []).append(n)
    by_hash_added: dict[str, list[str]] = {}
    for n in added:
        by_hash_added.setdefault(new[n], []).append(n)
    renamed: list[dict[str, str]] = []
    for h, gone in by_hash_removed.items():
        came = by_hash_added.get(h)
        if not came:
            continue
        for a, b in zip(gone, came):  # both already sorted
            renamed.append({"from": a, "to": b})
    if renamed:
        froms = {r["from"] for r in renamed}
        tos = {r["to"] for r in renamed}
        added = [n for n in added if n not in tos]
        removed = [n for n in removed if n not in froms]
        renamed.sort(key=lambda r: (r["from"], r["to"]))
    return Changed(added=added, modified=modified, renamed=renamed, removed=removed)



def is_chapter_name(name: str) -> bool:
    """A chapter file name: ends in ``.md`` (any case) and does not start with ``.`` (hidden / temp files)."""
    return name.lower().endswith(CHAPTER_SUFFIX) and not name.startswith(".")
