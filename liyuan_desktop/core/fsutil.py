"""Atomic file writes, shared by every module that replaces a file (settings, chapters, personas, chat exports,
meta caches): a temp file in the same folder, fsync, ``os.replace``, then an fsync of the folder where the platform
allows it. On failure the temp file is removed and the old file is untouched; a process killed mid-write leaves a
``.liyuan-<pid>-<random>.tmp`` that the next open of a chapter folder removes (``clean_leftover_tmp``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TMP_PREFIX = ".liyuan-"
"""How our temp files start: ``.liyuan-<pid>-<random>.tmp`` (:func:`atomic_write_bytes`; the pid of the writer, so
that ``core.story.checkpoint_model.clean_leftover_tmp`` can remove what a killed process left without waiting)."""


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
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        try:
            dfd = os.open(str(p.parent), os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
    return p


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8, newlines kept exactly as given."""
    return atomic_write_bytes(path, text.encode("utf-8"))
