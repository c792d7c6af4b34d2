"""Atomic file writes, shared by every module that replaces a file (settings, chapters, personas, chat exports,
meta caches): a temp file in the same folder, fsync, ``os.replace``, then an fsync of the folder where the platform
allows it. On failure the temp file is removed and the old file is untouched; a process killed mid-write leaves a
``.liyuan-<pid>-<random>.tmp`` that the next open of a chapter folder removes (``clean_leftover_tmp``).

Per OS (issue 32 §2):

* **Linux, macOS**: ``os.replace`` is ``rename(2)``, atomic even while another process has the target open (it
  keeps reading the old file). The folder is fsynced after the rename so the rename itself survives a power cut
  (on macOS ``fsync`` reaches the drive's cache, not its platters; ``F_FULLFSYNC`` would, at a large cost, and is
  not used).
* **Windows**: ``os.replace`` is ``MoveFileExW(MOVEFILE_REPLACE_EXISTING)``; it fails with ``PermissionError``
  (winerror 5 or 32) while another process holds the target open without ``FILE_SHARE_DELETE`` — an antivirus
  scan, the search indexer, a backup or sync client, an editor. :func:`replace_retrying` tries again for about a
  second before giving up. Folders cannot be opened for fsync there (:func:`can_fsync_folder` is False): NTFS
  journals the rename's metadata itself.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

TMP_PREFIX = ".liyuan-"
"""How our temp files start: ``.liyuan-<pid>-<random>.tmp`` (:func:`atomic_write_bytes`; the pid of the writer, so
that ``core.story.checkpoint_model.clean_leftover_tmp`` can remove what a killed process left without waiting)."""

REPLACE_DELAYS = (0.01, 0.02, 0.05, 0.1, 0.1, 0.2, 0.2, 0.3)
"""Seconds :func:`replace_retrying` waits between tries on Windows (about 1 s in all, then the error is raised)."""


def can_fsync_folder(platform: str = sys.platform) -> bool:
    """Whether a folder can be opened and fsynced on ``platform`` (a ``sys.platform`` value): POSIX only, not
    ``win32`` (a folder cannot be opened as a file there)."""
    return platform != "win32"


def replace_retrying(src: str | Path, dst: str | Path, platform: str = sys.platform,
                     replace: Optional[Callable[[str | Path, str | Path], None]] = None,
                     sleep: Callable[[float], None] = time.sleep) -> None:
    """``os.replace(src, dst)``; on ``win32`` a ``PermissionError`` (the target open in another process, see the
    module doc) is retried after each of :data:`REPLACE_DELAYS`, then raised. Elsewhere the first error is raised:
    POSIX renames over an open file. ``replace`` (default: ``os.replace`` as it is at call time) and ``sleep`` are
    the OS calls (tests give their own)."""
    do = replace or os.replace
    delays = REPLACE_DELAYS if platform == "win32" else ()
    for delay in delays:
        try:
            do(src, dst)
            return
        except PermissionError:
            sleep(delay)
    do(src, dst)


def _fsync_folder(folder: Path) -> None:
    if not can_fsync_folder() or not hasattr(os, "O_DIRECTORY"):
        return
    try:
        dfd = os.open(str(folder), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (the folder is created). Raises OSError; the old file survives."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # the writer's pid in the name (TMP_PREFIX): a temp file a killed writer left is known as such at once
    fd, tmp = tempfile.mkstemp(dir=str(p.parent), prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        replace_retrying(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_folder(p.parent)  # make the rename itself durable
    return p


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8, newlines kept exactly as given."""
    return atomic_write_bytes(path, text.encode("utf-8"))
