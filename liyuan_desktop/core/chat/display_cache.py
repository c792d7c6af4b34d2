"""The display-text cache beside a chat (issue 13 §4): what the card's display regex scripts made of a message,
kept on disk so reopening a chat shows it at once instead of running the scripts again.

A cache, never the source of truth: the stored message text is never rewritten, every entry can be rebuilt by
running the scripts again, and the file may be deleted at any time. One SQLite file, ``.display-cache.sqlite`` in
the chat folder (a dot file: not a chapter, not part of an export). Keys are digests of (script set fingerprint,
placement, view, depth bucket, message text) — see :func:`display_key`; values are the scripted text.

Threads: one connection shared under a lock (the view's worker thread writes, the UI thread reads; each call is one
short statement). ``synchronous=OFF``: losing the newest entries in a crash only costs running the scripts again.
A damaged file is deleted and started afresh; a folder that refuses writes leaves the cache in memory only.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # sqlite3 is imported when the cache file is first opened (issue 15: start-up)
    import sqlite3

log = logging.getLogger(__name__)

__all__ = ["DisplayCache", "display_key", "CACHE_FILENAME", "MAX_ROWS"]

#: The cache file's name inside the chat folder.
CACHE_FILENAME = ".display-cache.sqlite"
#: Entries kept; past this the oldest written are dropped.
MAX_ROWS = 20_000


def display_key(fingerprint: str, placement: int, view: str, depth_bucket: object, text: str) -> str:
    """The cache key of one scripted text: a hex digest of the script set ``fingerprint`` (scripts and the macro
    values their replacements read), ``placement`` (1 user, 2 reply), ``view`` ("display"|"prompt"), the depth
    bucket (an int, or "deep" past every script's depth window) and the message ``text``."""
    h = hashlib.blake2b(digest_size=20)
    for part in (fingerprint, str(placement), view, str(depth_bucket)):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


class DisplayCache:
    """Scripted display texts of one chat, on disk (module doc). ``get`` → str or None; ``put`` stores. Never
    raises for disk trouble: the cache falls back to memory only and logs one warning."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / CACHE_FILENAME
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        self._memory: dict[str, str] = {}
        self._broken = False

    def _conn(self) -> Optional[sqlite3.Connection]:
        if self._db is not None or self._broken:
            return self._db
        import sqlite3

        for attempt in (1, 2):
            try:
                db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=2.0)
                db.execute("PRAGMA synchronous=OFF")
                db.execute("PRAGMA journal_mode=MEMORY")
                db.execute("CREATE TABLE IF NOT EXISTS display (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
                db.execute("SELECT count(*) FROM display").fetchone()
                self._db = db
                return db
            except sqlite3.DatabaseError as e:  # damaged: a cache can simply start again
                if attempt == 1 and self.path.exists():
                    log.warning("display cache %s unreadable (%s); starting it again", self.path, e)
                    try:
                        self.path.unlink()
                        continue
                    except OSError:
                        pass
                log.warning("display cache %s unavailable (%s); kept in memory only", self.path, e)
            except OSError as e:
                log.warning("display cache %s unavailable (%s); kept in memory only", self.path, e)
            break
        self._broken = True
        return None

    def get(self, key: str) -> Optional[str]:
        """The cached text for ``key`` (:func:`display_key`), or None."""
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                return hit
            db = self._conn()
            if db is None:
                return None
            import sqlite3

            try:
                row = db.execute("SELECT v FROM display WHERE k = ?", (key,)).fetchone()
            except sqlite3.Error as e:
                log.warning("display cache read failed (%s)", e)
                return None
            return row[0] if row else None

    def put(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``; the oldest entries go past :data:`MAX_ROWS`."""
        with self._lock:
            db = self._conn()
            if db is None:
                if len(self._memory) > MAX_ROWS:
                    self._memory.clear()
                self._memory[key] = value
                return
            import sqlite3

            try:
                db.execute("INSERT OR REPLACE INTO display (k, v) VALUES (?, ?)", (key, value))
                row = db.execute("SELECT max(rowid) FROM display").fetchone()
                if row and row[0] and row[0] % 1000 == 0:
                    db.execute("DELETE FROM display WHERE rowid <= (SELECT max(rowid) FROM display) - ?", (MAX_ROWS,))
            except sqlite3.Error as e:
                log.warning("display cache write failed (%s)", e)

    def close(self) -> None:
        """Close the file (a later call opens it again)."""
        with self._lock:
            if self._db is not None:
                import sqlite3

                try:
                    self._db.close()
                except sqlite3.Error:
                    pass
                self._db = None
