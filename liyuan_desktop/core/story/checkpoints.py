"""Story checkpoints (检查点): the chapter folder can always go back to how it was.

Seed 000, 「检查点：改坏了能回去」 (template ``src/stage/story-history.ts``): at the end of every turn each chapter in
``正文/`` is stored by content hash in ``历史/对象/`` (the same content is stored once), and the whole manifest
``{file name: sha256}`` is compared with the latest checkpoint; only when it changed is one line appended to
``历史/检查点.jsonl``. "This is git's blob + tree, without git's branches / merges / remotes."

Layout (``history_dir`` is the story's ``历史/``; the records are in :mod:`.checkpoint_model`)::

    历史/对象/<sha256 hex>      one blob per distinct chapter content: the file's raw bytes (UTF-8 text)
    历史/检查点.jsonl           one checkpoint per line, oldest first, compact JSON (see Checkpoint.to_line)
    历史/.hashcache.json        {name: [size, mtime_ns, sha256, hashed_at_ns]} — a cache only, safe to delete

Chapters are the regular files directly inside ``story_dir`` whose name ends in ``.md`` (case-insensitive) and does
not start with ``.``; ``.txt`` and every other file, sub-folders and hidden/temporary files are not chapters and are
never touched by :meth:`StoryHistory.restore` (the agent prompt: "按文件名排序的 .md 文件，一个文件一章").
Links are never followed (:func:`.checkpoint_model.scan_chapters`): a symlink named ``x.md`` is no chapter, is never
read into ``对象/`` and is listed once as ignored (``StoryHistory.ignored``); names with bidi controls likewise.
Opening a history removes temp files a killed write left behind (:func:`.checkpoint_model.clean_leftover_tmp`).

Durability: a blob is written to a temp file, fsynced and renamed into place, and every blob of a checkpoint is
written BEFORE its log line is appended (append + fsync). A crash in between leaves unreferenced blobs, which are
harmless; the latest checkpoint is then still the previous one and the next commit simply records the change. A torn
(unparseable) last log line is skipped with a warning when reading and cut off before the next append.

Concurrency: one :class:`StoryHistory` per story in one process (commit/restore hold a lock); several processes
writing the same ``历史/`` at once are not supported.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import stat as _stat
import threading
import time
from pathlib import Path
from typing import Any, Callable, Literal, Optional

from ..messages import message, render
from .checkpoint_model import (
    HASHCACHE_FILENAME,
    Checkpoint,
    CheckpointNotFound,
    FileDiff,
    MissingObjectError,
    clean_leftover_tmp,
    diff_manifests,
    new_checkpoint_id,
    scan_chapters,
    sha256_hex,
    warn_ignored_once,
)
from .layout import layout_of_history_dir, layout_of_story_dir, side_file
from .summaries import SUMMARIES_FILE

log = logging.getLogger(__name__)

#: A cached hash is trusted only when the file's mtime is at least this much older than the moment it was hashed
#: (git's "racy clean" rule): a file rewritten with the same size within one mtime tick (up to 2 s on FAT/SMB)
#: would otherwise look unchanged. Such "racy" entries are simply re-hashed on the next snapshot.
RACY_WINDOW_NS = 2_000_000_000

_HEX64 = re.compile(r"[0-9a-f]{64}")

#: Test hook: called with the new checkpoint after its blobs are written and right before its log line is appended.
#: A test sets it to a function that raises to simulate a crash between the two steps. ``None`` in production.
_before_log_append: Optional[Callable[["Checkpoint"], None]] = None


def _fsync_dir(path: Path) -> None:
    """fsync a directory so a rename/unlink inside it is durable (no-op where unsupported, e.g. Windows)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Write ``data`` to a hidden temp file beside ``path`` (never a ``.md`` name), fsync, rename over ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def read_nofollow(path: "os.PathLike[str] | str") -> bytes:
    """The bytes of the regular file ``path``, refusing to follow a symlink at the last component (``O_NOFOLLOW``
    where the OS has it; elsewhere an ``lstat`` check first). Raises OSError (ELOOP / ``IsADirectoryError`` ...) for a
    link or a non-file, FileNotFoundError when gone."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):
        raise OSError(f"{path} is a symbolic link")
    fd = os.open(path, flags | nofollow | getattr(os, "O_NONBLOCK", 0))  # non-blocking: a FIFO must not hang us
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------------- history


class StoryHistory:
    """Checkpoints of one story's chapter folder.

    ``story_dir``: the chapter folder (``正文/`` or ``chapters/``, :mod:`.layout`; may not exist yet — then it has no
    chapters). ``history_dir``: the story's ``历史/`` or ``history/`` (created on the first commit). ``last_read_count`` is the number of chapter files actually read
    by the last :meth:`snapshot` (files whose (size, mtime_ns) matched the hash cache are not read)."""

    def __init__(self, story_dir: Path, history_dir: Path):
        self.story_dir = Path(story_dir)
        self.history_dir = Path(history_dir)
        names = layout_of_history_dir(self.history_dir)  # 对象/ + 检查点.jsonl, or objects/ + checkpoints.jsonl
        self.objects_dir = self.history_dir / names.objects
        self.log_file = self.history_dir / names.log
        #: the language of the labels this history writes for its own checkpoints ("zh" / "en", the layout's)
        self.language = names.language
        self.cache_file = self.history_dir / HASHCACHE_FILENAME
        self._lock = threading.RLock()
        self._hashcache: Optional[dict[str, list[Any]]] = None  # name -> [size, mtime_ns, hash, hashed_at_ns]
        self._cache_dirty = False
        self._objects: Optional[set[str]] = None
        self._log_cache: Optional[tuple[Optional[tuple[int, int]], list[Checkpoint]]] = None  # (log size+mtime, parsed)
        self._read_bytes: dict[str, bytes] = {}  # bytes read by the last snapshot, for writing blobs
        self.last_read_count = 0
        #: ``(name, reason)`` of the ``.md`` entries the last snapshot skipped (symlinks, non-files, bidi names)
        self.ignored: list[tuple[str, str]] = []
        #: temp files removed when this history was opened (paths)
        self.cleaned: list[str] = clean_leftover_tmp(self.story_dir, self.history_dir, self.objects_dir)

    def label(self, key: str, **params: Any) -> str:
        """A checkpoint label the app writes (``cp.label.*``: 恢复前自动保存, 恢复到「…」, 导入 N 章…) in this story's
        language — the layout's (issue 32: an English novel's timeline reads English; a Chinese one keeps the seed's
        labels byte for byte). Stored as plain text in the log, like the user's own labels."""
        return render(message(key, **params), self.language)

    # ------------------------------------------------------------------ snapshot

    def _load_hashcache(self) -> dict[str, list[Any]]:
        if self._hashcache is None:
            cache: dict[str, list[Any]] = {}
            try:
                raw = json.loads(self.cache_file.read_text("utf-8"))
                if isinstance(raw, dict):
                    for k, v in raw.items():
                        if (isinstance(v, list) and len(v) == 4 and isinstance(v[2], str) and _HEX64.fullmatch(v[2])
                                and all(isinstance(x, int) for x in (v[0], v[1], v[3]))):
                            cache[k] = v
            except FileNotFoundError:
                pass
            except (OSError, ValueError) as e:
                log.warning("hash cache %s unreadable (%s); rebuilding it", self.cache_file, e)
            self._hashcache = cache
        return self._hashcache

    def _save_hashcache(self) -> None:
        if not self._cache_dirty or self._hashcache is None or not self.history_dir.is_dir():
            return
        data = json.dumps(self._hashcache, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            _atomic_write(self.cache_file, data, fsync=False)  # a cache: losing it only costs re-reading
            self._cache_dirty = False
        except OSError as e:
            log.warning("could not save hash cache %s: %s", self.cache_file, e)

    def _chapter_entries(self) -> list[os.DirEntry[str]]:
        entries, self.ignored = scan_chapters(self.story_dir)
        warn_ignored_once(self.story_dir, self.ignored)
        return entries

    def snapshot(self) -> dict[str, str]:
        """``{chapter name: sha256 hex}`` of the folder now, sorted by name.

        A file is read and hashed only when its (size, mtime_ns) differ from the cached ones, or the cached hash is
        "racy" (see :data:`RACY_WINDOW_NS`). The cache lives in memory and in ``历史/.hashcache.json`` (saved when
        ``历史/`` exists)."""
        with self._lock:
            cache = self._load_hashcache()
            self._read_bytes = {}
            reads = 0
            files: dict[str, str] = {}
            seen = set()
            for e in self._chapter_entries():
                name = e.name
                seen.add(name)
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:  # vanished since the listing
                    continue
                c = cache.get(name)
                if (c is not None and c[0] == st.st_size and c[1] == st.st_mtime_ns
                        and st.st_mtime_ns < c[3] - RACY_WINDOW_NS):
                    files[name] = c[2]
                    continue
                hashed_at = time.time_ns()
                try:
                    data = read_nofollow(e.path)  # swapped for a link since the listing → OSError, skipped
                except OSError as err:
                    log.warning("%s: not snapshotting %r: %s", self.story_dir, name, err)
                    continue
                reads += 1
                h = sha256_hex(data)
                self._read_bytes[name] = data
                st2 = os.stat(e.path, follow_symlinks=False)  # the stat that belongs to the bytes we read (the file may have moved on)
                new_entry = [len(data), st2.st_mtime_ns, h, hashed_at]
                if st2.st_size != len(data):
                    new_entry[3] = 0  # changed while we read: never trust this entry
                if c != new_entry:
                    cache[name] = new_entry
                    self._cache_dirty = True
                files[name] = h
            for name in [n for n in cache if n not in seen]:
                del cache[name]
                self._cache_dirty = True
            for name, path in self._extras().items():  # the outline beside 正文/ (small: read every time)
                try:
                    data = read_nofollow(path)
                except OSError:
                    continue
                reads += 1
                files[name] = sha256_hex(data)
                self._read_bytes[name] = data
            self.last_read_count = reads
            self._save_hashcache()
            return {k: files[k] for k in sorted(files)}

    def _extras(self) -> dict[str, Path]:
        """Files beside the chapter folder that checkpoints keep too (issue 19): the outline ``大纲.md`` of the
        chat folder, under the manifest key :data:`.outline.OUTLINE_KEY` (``../大纲.md``; a chapter name never
        has a ``/``, and it is no chapter name, so export, the index and the scribe never see it) — ``outline.md``
        as ``../outline.md`` beside an English-layout ``chapters/`` (:mod:`.layout`) — and the chapter
        summaries ``章节摘要.json`` (``../章节摘要.json``, issue 28) — so a restore brings back both as they were."""
        outline = layout_of_story_dir(self.story_dir).outline
        summaries = side_file(self.story_dir.parent, SUMMARIES_FILE)  # 章节摘要.json / chapter-summaries.json
        return {"../" + outline: self.story_dir.parent / outline, "../" + summaries.name: summaries}  # the chapter summaries (summaries.py)

    def _file(self, name: str) -> Path:
        """The path of manifest entry ``name``: a chapter in the folder, or one of :meth:`_extras`."""
        return self._extras().get(name) or self.story_dir / name

    # ------------------------------------------------------------------ objects

    def _object_set(self) -> set[str]:
        if self._objects is None:
            try:
                self._objects = {n for n in os.listdir(self.objects_dir) if _HEX64.fullmatch(n)}
            except FileNotFoundError:
                self._objects = set()
        return self._objects

    def objects(self) -> list[str]:
        """Hashes of every blob in ``历史/对象/``, sorted (temp files ignored)."""
        with self._lock:
            self._objects = None
            return sorted(self._object_set())

    def has_object(self, h: str) -> bool:
        """Whether the blob with hash ``h`` is in ``历史/对象/`` (the cached listing, then the disk)."""
        return h in self._object_set() or (self.objects_dir / h).is_file()

    def _object_path(self, h: str) -> Path:
        if not isinstance(h, str) or not _HEX64.fullmatch(h):
            raise ValueError(f"not a sha256 hex digest: {h!r}")
        return self.objects_dir / h

    def object_bytes(self, h: str) -> bytes:
        """The raw bytes of blob ``h``. Raises ValueError for a malformed hash, MissingObjectError when absent or
        when its content does not hash to ``h`` (a damaged blob)."""
        p = self._object_path(h)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            raise MissingObjectError(message("checkpoint.object_missing", hash=h, folder=str(self.objects_dir))) from None
        if sha256_hex(data) != h:
            raise MissingObjectError(message("checkpoint.object_damaged", hash=h))
        return data

    def object_text(self, h: str) -> str:
        """Blob ``h`` decoded as UTF-8 (undecodable bytes replaced). Errors as :meth:`object_bytes`."""
        return self.object_bytes(h).decode("utf-8", errors="replace")

    def _store_object(self, data: bytes, h: Optional[str] = None) -> str:
        """Store ``data`` once under its hash (temp + fsync + rename); return the hash."""
        h = h or sha256_hex(data)
        objs = self._object_set()
        if h in objs:
            return h
        p = self._object_path(h)
        if not p.is_file():
            self.objects_dir.mkdir(parents=True, exist_ok=True)
            _atomic_write(p, data)
            _fsync_dir(self.objects_dir)
        objs.add(h)
        return h

    def _store_manifest(self, files: dict[str, str]) -> dict[str, str]:
        """Make sure every chapter of the manifest ``files`` (just taken by :meth:`snapshot`) has its blob. Content
        not read by that snapshot is read now; if a file changed meanwhile its new hash is used. Returns the
        manifest actually stored (sorted)."""
        out = dict(files)
        for name, h in files.items():
            if self.has_object(h):
                continue
            data = self._read_bytes.get(name)
            if data is None:
                try:
                    data = read_nofollow(self._file(name))
                except OSError:  # vanished (or became a link) since the snapshot
                    del out[name]
                    continue
            out[name] = self._store_object(data)
        self._read_bytes = {}
        return {k: out[k] for k in sorted(out)}

    # ------------------------------------------------------------------ log

    def _log_stat(self) -> Optional[tuple[int, int]]:
        try:
            st = self.log_file.stat()
        except FileNotFoundError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first. Unparseable lines (a torn last line after a crash) are skipped with a
        warning, never raised."""
        with self._lock:
            key = self._log_stat()
            if key is None:
                return []
            if self._log_cache is not None and self._log_cache[0] == key:
                return list(self._log_cache[1])
            raw = self.log_file.read_bytes()
            out: list[Checkpoint] = []
            lines = raw.split(b"\n")
            for i, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    out.append(Checkpoint.model_validate_json(line))
                except ValueError as e:
                    where = "torn last line" if i == len(lines) - 1 else f"line {i + 1}"
                    log.warning("%s: skipping %s (%d bytes): %s", self.log_file, where, len(line),
                                str(e).splitlines()[0])
            self._log_cache = (key, out)
            return list(out)

    def latest(self) -> Optional[Checkpoint]:
        """The newest checkpoint, or None when there is none."""
        cps = self.checkpoints()
        return cps[-1] if cps else None

    def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with that id; CheckpointNotFound otherwise."""
        for c in self.checkpoints():
            if c.id == checkpoint_id:
                return c
        raise CheckpointNotFound(checkpoint_id)

    def _repair_log_tail(self) -> None:
        """Before appending: if the file does not end in a newline, its last line was torn by a crash. A tail that
        still parses gets its newline; one that does not is cut off (it was never a committed checkpoint)."""
        try:
            size = self.log_file.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with open(self.log_file, "rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read()
            start = data.rfind(b"\n") + 1
            tail = data[start:]
            try:
                Checkpoint.model_validate_json(tail)
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
            except ValueError:
                log.warning("%s: cutting off a torn last line (%d bytes)", self.log_file, len(tail))
                f.truncate(start)
            f.flush()
            os.fsync(f.fileno())
        self._log_cache = None

    def _append(self, c: Checkpoint) -> None:
        self.history_dir.mkdir(parents=True, exist_ok=True)
        self._repair_log_tail()
        before = self.checkpoints()
        with open(self.log_file, "ab") as f:
            f.write((c.to_line() + "\n").encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        self._log_cache = (self._log_stat(), before + [c])

    # ------------------------------------------------------------------ commit

    def commit(self, author: Literal["user", "agent"], message: str, turn_id: Optional[str] = None,
               aborted: bool = False, restored_from: Optional[str] = None, force: bool = False
               ) -> Optional[Checkpoint]:
        """Record the folder as a new checkpoint (seed ``StoryHistory.commit``).

        Snapshot → store blobs of new contents → diff with the latest → if nothing changed and not ``force``,
        return None (no line written) → else append the line (fsync) and return the checkpoint. Blobs are written
        before the log line; ``_before_log_append`` runs between the two."""
        with self._lock:
            prev = self.latest()
            files = self._store_manifest(self.snapshot())
            changed = diff_manifests(prev.files if prev else {}, files)
            if changed.is_empty() and not force:
                return None
            now = int(time.time() * 1000)
            if prev is not None and now <= prev.ts:
                now = prev.ts + 1  # keep ts strictly increasing even on a coarse or stepped clock
            c = Checkpoint(
                id=new_checkpoint_id(files, now), ts=now, author=author, turnId=turn_id or None, message=message,
                aborted=True if aborted else None, restoredFrom=restored_from or None, files=files, changed=changed,
            )
            if _before_log_append is not None:
                _before_log_append(c)
            self._append(c)
            self._save_hashcache()
            return c

    # ------------------------------------------------------------------ restore

    def restore(self, checkpoint_id: str, author: Literal["user", "agent"] = "user",
                message: Optional[str] = None, save_current: bool = True) -> Checkpoint:
        """Make the chapter folder exactly the manifest of ``checkpoint_id`` (files only; the conversation is the
        caller's business — seed: 「只把正文文件恢复到某个检查点、讨论不动」), then commit a checkpoint with
        ``restoredFrom=checkpoint_id`` (forced, so it is recorded even when nothing changed) and return it.

        Nothing is lost: first every current chapter is stored as a blob and, when ``save_current`` and the folder
        differs from the latest checkpoint, committed as its own checkpoint (message 「恢复前自动保存」). So the
        checkpoint just before the returned one is always the pre-restore state, and undo = restore that one.
        Chapters not in the manifest are deleted; changed or missing ones are rewritten from their blobs atomically;
        non-chapter files are untouched. Raises CheckpointNotFound, or MissingObjectError before touching any
        file when a blob is missing/damaged."""
        with self._lock:
            target = self.get(checkpoint_id)
            contents = {h: self.object_bytes(h) for h in set(target.files.values())}  # verify all blobs first
            if save_current:
                self.commit(author, self.label("cp.label.autosave"))
            current = self._store_manifest(self.snapshot())  # even without save_current every byte is kept
            self.story_dir.mkdir(parents=True, exist_ok=True)
            cache = self._load_hashcache()
            for name, h in target.files.items():
                if current.get(name) == h:
                    continue
                p = self._file(name)
                _atomic_write(p, contents[h])
                if name in self._extras():
                    continue
                st = p.stat()
                cache[name] = [st.st_size, st.st_mtime_ns, h, time.time_ns()]
                self._cache_dirty = True
            for name in current:
                if name not in target.files:
                    try:
                        self._file(name).unlink()
                    except FileNotFoundError:
                        pass
                    cache.pop(name, None)
                    self._cache_dirty = True
            _fsync_dir(self.story_dir)
            c = self.commit(author, message or self.label("cp.label.restored_to_id", id=checkpoint_id), restored_from=checkpoint_id,
                            force=True)
            assert c is not None
            return c

    # ------------------------------------------------------------------ diffs

    def diff_text(self, checkpoint_id: str) -> list[FileDiff]:
        """The changed files of ``checkpoint_id`` vs the checkpoint before it (vs nothing for the first), with the
        old and new texts from the blobs, sorted by name. Renamed files carry both texts (they are equal). Raises
        CheckpointNotFound / MissingObjectError."""
        cps = self.checkpoints()
        idx = next((i for i, c in enumerate(cps) if c.id == checkpoint_id), None)
        if idx is None:
            raise CheckpointNotFound(checkpoint_id)
        cur = cps[idx]
        old = cps[idx - 1].files if idx > 0 else {}
        ch = diff_manifests(old, cur.files)
        out: list[FileDiff] = []
        for n in ch.added:
            out.append(FileDiff(name=n, status="added", new_text=self.object_text(cur.files[n])))
        for n in ch.modified:
            out.append(FileDiff(name=n, status="modified", old_text=self.object_text(old[n]),
                                new_text=self.object_text(cur.files[n])))
        for r in ch.renamed:
            t = self.object_text(cur.files[r["to"]])
            out.append(FileDiff(name=r["to"], status="renamed", old_name=r["from"], old_text=t, new_text=t))
        for n in ch.removed:
            out.append(FileDiff(name=n, status="removed", old_text=self.object_text(old[n])))
        out.sort(key=lambda d: d.name)
        return out
