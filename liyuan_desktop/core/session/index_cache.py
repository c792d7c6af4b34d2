"""The line index of a big session file, cached beside it (issue 15 item 11): what :meth:`SessionTree.open
<.tree.SessionTree.open>` learns from every line — where it is, its ``id``/``parent_id``/``ts``/``type`` (and a
beat's ``outcome``, a snapshot's ``source``, a leaf's ``target``) — and the warnings the lines gave, so opening a
100,000-message chat again reads the file's bytes but parses none of the lines it already knows. Each entry comes
back as a lazy entry (:func:`.lazy.lazy_from_head`) parsed on first use; only the lines appended since the cache was
written are read the usual way.

A cache, never the source of truth: ``session.jsonl`` is; the cache may be deleted at any time and is rebuilt at the
next open of a big file. It is used only for the bytes it was made from: it names the prefix length of the file it
indexed and that prefix's CRC-32 and the SHA-256 of its last 64 KiB (an append-only file keeps its prefix; any
other change — an edit, a repair, a truncation — makes it miss and the file is read in full). Written atomically;
a damaged, foreign or older-version cache file is ignored. The file is JSON lines: a first line with the stamp and
the warnings, then the rows in chunks of :data:`CHUNK` per line, so reading it never holds the interpreter for long
in one C call (a window opening the chat on a worker thread keeps painting). One file, ``.session-index.json`` in the chat folder (a
dot file, like the display cache). Only files of :data:`MIN_BYTES` or more get one (small files open fast anyway).
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from pathlib import Path
from typing import Any, Optional

from ..fsutil import atomic_write_bytes
from ..messages import Msg
from .entries import MessageRef

log = logging.getLogger(__name__)

__all__ = ["CACHE_NAME", "MIN_BYTES", "REWRITE_LINES", "IndexCache", "cache_path", "load", "save"]

#: The cache file beside ``session.jsonl``.
CACHE_NAME = ".session-index.json"
#: Session files smaller than this (bytes) are never indexed: they parse in well under 100 ms.
MIN_BYTES = 4_000_000
#: Re-write the cache when this many lines were parsed beyond it at an open.
REWRITE_LINES = 2_000
#: Bumped whenever the row layout or the entry models' cheap fields change (an old cache is then ignored). 3: the
#: warnings are kept as ``{key, params}`` (issue 32), so a reopened file's warnings render in the reader's language.
VERSION = 3
#: Rows per line of the cache file.
CHUNK = 2000
_TAIL = 65536


def cache_path(session: Path) -> Path:
    """Where the index of ``session`` is kept."""
    return Path(session).parent / CACHE_NAME


def _stamp(data: bytes, size: int) -> tuple[int, str]:
    """(CRC-32 of ``data[:size]``, SHA-256 hex of its last 64 KiB)."""
    return zlib.crc32(memoryview(data)[:size]), hashlib.sha256(memoryview(data)[max(0, size - _TAIL):size]).hexdigest()


class IndexCache:
    """A loaded index: ``size`` (bytes of the file it covers, a line boundary), ``lines`` (line number of the last
    line covered, 1-based), ``rows`` (one per indexed line, file order: ``[start, end, line, id, parent_id, ts,
    type, extra]`` — extra is a beat's outcome, a snapshot's source, a leaf's target, else null) and ``warnings``
    (what loading those lines reported)."""

    def __init__(self, size: int, lines: int, rows: list[list[Any]], warnings: list[str]):
        self.size, self.lines, self.rows, self.warnings = size, lines, rows, warnings


def load(session: Path, data: bytes) -> Optional[IndexCache]:
    """The cached index of ``session`` when it fits ``data`` (the file's bytes as read now, a BOM blanked as
    :meth:`SessionTree.open` does), else None (no cache, another file, a changed prefix, a damaged cache). Never
    raises."""
    p = cache_path(session)
    try:
        raw = p.read_bytes()
    except OSError:
        return None
    try:
        first = raw.find(b"\n")
        obj = json.loads(raw[:first] if first >= 0 else raw)
        if not isinstance(obj, dict) or obj.get("v") != VERSION or obj.get("name") != Path(session).name:
            return None
        size = int(obj["size"])
        if not 0 < size <= len(data) or data[size - 1:size] != b"\n":
            return None
        if [obj["crc"], obj["tail"]] != list(_stamp(data, size)):
            return None
        rows: list[list[Any]] = []
        start = first + 1
        while 0 < start < len(raw):
            end = raw.find(b"\n", start)
            end = len(raw) if end < 0 else end
            chunk = json.loads(raw[start:end])
            if not isinstance(chunk, list) or (chunk and not (isinstance(chunk[0], list) and len(chunk[0]) == 8)):
                return None
            rows += chunk
            start = end + 1
        if len(rows) != obj.get("count"):
            return None
        warnings = [MessageRef.model_validate(w).to_msg() if isinstance(w, dict) else str(w)
                    for w in obj.get("warnings", [])]
        return IndexCache(size, int(obj["lines"]), rows, warnings)
    except (ValueError, KeyError, TypeError) as e:
        log.info("session index cache %s ignored: %s", p, e)
        return None


def save(session: Path, data: bytes, size: int, lines: int, rows: list[list[Any]], warnings: list[str]) -> bool:
    """Write the index of ``data[:size]`` (``size`` at a line boundary; ``lines`` the last line number in it;
    ``rows``/``warnings`` as in :class:`IndexCache`). Returns False when the folder refuses (the cache is only an
    optimisation; logged, never raised)."""
    crc, tail = _stamp(data, size)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    parts = [dumps({"v": VERSION, "name": Path(session).name, "size": size, "lines": lines, "crc": crc, "tail": tail,
                    "count": len(rows),
                    "warnings": [MessageRef.of(w).model_dump() if isinstance(w, Msg) else w for w in warnings]})]
    parts += [dumps(rows[k:k + CHUNK]) for k in range(0, len(rows), CHUNK)]
    blob = ("\n".join(parts) + "\n").encode("utf-8", "surrogatepass")
    try:
        atomic_write_bytes(cache_path(session), blob)
    except OSError as e:
        log.info("session index cache not written (%s)", e)
        return False
    return True


def drop(session: Path) -> None:
    """Delete the cached index of ``session`` (when the file is rewritten); never raises."""
    try:
        cache_path(session).unlink()
    except OSError:
        pass
