"""What a story checkpoint is: :class:`Checkpoint` (one line of ``历史/检查点.jsonl``: a manifest ``{file name: sha256}``
plus who/when/why), :class:`Changed` (the diff of two manifests, renames detected by hash), :class:`FileDiff` (one
file's before/after text for the timeline), the errors, the file-name constants of the ``历史/`` layout and the pure
helpers (hashing, ids, :func:`diff_manifests`, :func:`is_chapter_name`). The store and its durability rules are in
:mod:`.checkpoints`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from .layout import ZH_LAYOUT

OBJECTS_DIRNAME = ZH_LAYOUT.objects  # "对象" (the Chinese layout's; history/objects in the English one, .layout)
LOG_FILENAME = ZH_LAYOUT.log  # "检查点.jsonl" (history/checkpoints.jsonl in the English layout)
HASHCACHE_FILENAME = ".hashcache.json"
CHAPTER_SUFFIX = ".md"

log = logging.getLogger(__name__)

#: Bidirectional-text controls (Unicode UAX #9: LRE RLE PDF LRO RLO, LRI RLI FSI PDI, LRM RLM ALM). A file name with
#: one of them can display as a different name (``001-\u202edm.exe`` shows reversed), so agent mode never treats such
#: a file as a chapter and the tools refuse to create one (chapters.BAD_NAME_CHARS).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

class CheckpointError(Exception):
    """Base of this module's errors."""


class CheckpointNotFound(CheckpointError, KeyError):
    """No checkpoint with that id in ``检查点.jsonl``."""


class MissingObjectError(CheckpointError, FileNotFoundError):
    """A blob named by a checkpoint is not in ``历史/对象/`` (or its content no longer matches its hash)."""


# ----------------------------------------------------------------------------------------------------- models


class Changed(DeferredModel):
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

    def to_dict(self) -> dict[str, Any]:
        """Key order added, modified, renamed, removed (the seed's order); renamed items as ``{"from", "to"}``."""
        return {
            "added": list(self.added),
            "modified": list(self.modified),
            "renamed": [{"from": r["from"], "to": r["to"]} for r in self.renamed],
            "removed": list(self.removed),
        }


class Checkpoint(DeferredModel):
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

    def to_dict(self) -> dict[str, Any]:
        """The seed's key order: id, ts, author, turnId?, message, aborted?, restoredFrom?, files, changed; optional
        keys left out when empty/false (as the template's ``...(o.turnId ? {turnId} : {})``)."""
        d: dict[str, Any] = {"id": self.id, "ts": self.ts, "author": self.author}
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


class FileDiff(DeferredModel):
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


def has_bidi_control(name: str) -> bool:
    """Whether ``name`` contains a bidirectional-text control character (:data:`BIDI_CONTROLS`)."""
    return any(c in BIDI_CONTROLS for c in name)


def scan_chapters(story_dir: "os.PathLike[str] | str") -> tuple[list[os.DirEntry[str]], list[tuple[str, str]]]:
    """The chapter files of an agent-mode folder, never following a link — the one rule for snapshot, index,
    export and restore.

    Returns ``(chapters, ignored)``: ``chapters`` are the entries directly in ``story_dir`` with a chapter name
    (:func:`is_chapter_name`: ``.md``, not hidden — ``.liyuan-*`` names and temp files are hidden) that are regular
    files themselves (``is_file(follow_symlinks=False)``: a symlink, even to a file inside the folder, is not a
    chapter; neither is a folder, FIFO or socket) and whose name has no bidi control; sorted by name (code point).
    ``ignored`` lists ``(name, reason)`` for every entry with a visible ``.md`` name that was skipped (reason
    ``"symlink"``, ``"not_a_file"`` or ``"bidi_name"``), so a caller can say once what it left out. A missing
    folder (or a file where the folder should be) gives ``([], [])``."""
    try:
        it = os.scandir(story_dir)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    chapters: list[os.DirEntry[str]] = []
    ignored: list[tuple[str, str]] = []
    with it:
        for e in it:
            if not is_chapter_name(e.name):
                continue
            try:
                if e.is_symlink():
                    ignored.append((e.name, "symlink"))
                elif not e.is_file(follow_symlinks=False):
                    ignored.append((e.name, "not_a_file"))
                elif has_bidi_control(e.name):
                    ignored.append((e.name, "bidi_name"))
                else:
                    chapters.append(e)
            except OSError:
                ignored.append((e.name, "not_a_file"))
    chapters.sort(key=lambda e: e.name)
    ignored.sort()
    return chapters, ignored


_warned_ignored: set[tuple[str, str, str]] = set()


def warn_ignored_once(story_dir: "os.PathLike[str] | str", ignored: list[tuple[str, str]]) -> None:
    """Log each ignored entry of :func:`scan_chapters` once per process (per folder, name and reason)."""
    for name, why in ignored:
        key = (str(story_dir), name, why)
        if key not in _warned_ignored:
            _warned_ignored.add(key)
            log.warning("%s: ignoring %r (%s): agent mode never follows links or reads such names", story_dir,
                        name, why)


#: Temp files our atomic writers leave when killed mid-write: ``.<name>.<pid>.<hex>.tmp`` (checkpoints),
#: ``.liyuan-<pid>-<random>.tmp`` (core.fsutil.atomic_write_text) and ``.liyuan-<random>.tmp`` (its older names, no
#: pid: only age tells). Group ``pid``: the writer's pid when the name carries it. ``.liyuan-mv-….tmp`` is not a
#: leftover to delete: it is a chapter in the middle of a rename (:data:`_MOVE_TMP`).
_LEFTOVER_TMP = re.compile(r"^\.(?:liyuan-(?P<wpid>\d+)-[a-z0-9_]+|liyuan-(?!mv-).*|.*\.(?P<pid>\d+)\.[0-9a-f]{8})\.tmp$",
                           re.S)
#: A chapter ``StoryFolder.move`` had renamed to a temp name when the process was killed (its only copy): brought
#: back as ``恢复-<token>-<i>.md`` by :func:`clean_leftover_tmp`, never deleted.
_MOVE_TMP = re.compile(r"^\.liyuan-mv-([0-9a-f]+)-(\d+)\.tmp$")
#: A leftover temp file younger than this may belong to a write in progress in another process; it is kept.
LEFTOVER_TMP_MIN_AGE_S = 60.0


def clean_leftover_tmp(*dirs: "os.PathLike[str] | str", min_age_s: float = LEFTOVER_TMP_MIN_AGE_S) -> list[str]:
    """Delete the temp files a killed atomic write left in ``dirs`` (see :data:`_LEFTOVER_TMP`; our own names only,
    never a user's file): regular files (never links) older than ``min_age_s`` seconds, or of a pid that is no longer
    running. A chapter left under a rename's temp name (:data:`_MOVE_TMP`) older than ``min_age_s`` is renamed back
    to a visible ``恢复-<token>-<i>.md`` instead. Returns the paths deleted (or moved); errors are logged and
    skipped (a cleanup never fails an open)."""
    done: list[str] = []
    now = time.time()
    for d in dirs:
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                mv = _MOVE_TMP.match(e.name)
                if mv:
                    _restore_moved(e, mv, now - min_age_s, done)
                    continue
                m = _LEFTOVER_TMP.match(e.name)
                if not m:
                    continue
                try:
                    if not e.is_file(follow_symlinks=False):
                        continue
                    old = now - e.stat(follow_symlinks=False).st_mtime >= min_age_s
                    pid = m.group("pid") or m.group("wpid")
                    dead = pid is not None and int(pid) != os.getpid() and not _pid_alive(int(pid))
                    if old or dead:
                        os.unlink(e.path)
                        done.append(e.path)
                except OSError as err:
                    log.warning("could not remove leftover temp file %s: %s", e.path, err)
    if done:
        log.info("removed %d leftover temp file(s): %s", len(done), ", ".join(Path(p).name for p in done))
    return done


def _restore_moved(e: "os.DirEntry[str]", m: "re.Match[str]", before: float, done: list[str]) -> None:
    """Rename a chapter a killed rename left as ``.liyuan-mv-<token>-<i>.tmp`` (older than ``before``, a time) back
    to ``恢复-<token>-<i>.md`` when that name is free; appends its old path to ``done``."""
    try:
        if not e.is_file(follow_symlinks=False) or e.stat(follow_symlinks=False).st_mtime > before:
            return
        target = Path(e.path).with_name(f"恢复-{m.group(1)}-{m.group(2)}.md")
        if target.exists():
            return
        os.rename(e.path, target)
        done.append(e.path)
        log.warning("a chapter left mid-rename was brought back as %s", target.name)
    except OSError as err:
        log.warning("could not bring back %s: %s", e.path, err)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (POSIX ``kill(pid, 0)``; elsewhere assume it does, so only age decides)."""
    if os.name != "posix" or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
