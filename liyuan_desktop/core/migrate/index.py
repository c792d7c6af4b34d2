"""What earlier SillyTavern migrations imported, by content hash: ``<home>/导入记录/sillytavern-index.jsonl``, one JSON
line per imported item (appended the moment the item is complete, so a killed run is resumed by the next one).

A re-run skips a file whose SHA-256 is recorded here while the item it became still exists (a chat the user deleted
is imported again). Cards are recognised by :func:`core.cards.library.import_card` itself (same original file);
books, presets and chats are recognised here too, so a renamed 「名字-2」 is not imported a third time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field, ValidationError

from ..paths import home, home_folder

REPORTS_FOLDER = "导入记录"  # the Chinese layout's name; the reports are in home_folder("import_reports")
INDEX_FILE = "sillytavern-index.jsonl"


class IndexEntry(BaseModel):
    """One imported item: ``sha256`` of the source, ``kind`` (plan item kind), ``dest`` (path relative to the data
    folder), ``target`` (the name it got here)."""

    sha256: str
    kind: str
    dest: str
    target: str = ""


class MigrationIndex(BaseModel):
    """``items``: SHA-256 of the source → :class:`IndexEntry` (the last line for a hash wins)."""

    items: dict[str, IndexEntry] = Field(default_factory=dict)

    @staticmethod
    def path() -> Path:
        """``<home>/导入记录/sillytavern-index.jsonl`` (``import-reports/`` in an English-layout data folder,
        :mod:`core.paths`)."""
        return home_folder("import_reports") / INDEX_FILE

    @classmethod
    def load(cls) -> "MigrationIndex":
        """The index; lines that do not parse (a torn last line) are skipped, a missing file is an empty index (a
        damaged index only means identical items are recognised by name and content instead)."""
        out = cls()
        try:
            data = cls.path().read_bytes()
        except OSError:
            return out
        for line in data.splitlines():
            try:
                e = IndexEntry.model_validate_json(line)
            except (ValidationError, ValueError):
                continue
            out.items[e.sha256] = e
        return out

    def exists(self, digest: str) -> bool:
        """True when ``digest`` was imported and what it became is still in the data folder."""
        e = self.items.get(digest)
        return e is not None and (home() / e.dest).exists()

    def target(self, digest: str) -> Optional[str]:
        """The name the item with ``digest`` got here, or None."""
        e = self.items.get(digest)
        return e.target if e is not None else None

    def brought(self, kind: str, target: str) -> bool:
        """True when an earlier migration imported an item of ``kind`` under the name ``target`` here — a re-run
        may replace such an item by SillyTavern's newer version (issue 33); a same-named item the user made here
        is never replaced (the newcomer is imported under a new name instead)."""
        return any(e.kind == kind and e.target == target for e in self.items.values())

    def record(self, entry: IndexEntry) -> None:
        """Add ``entry`` and append its line to the file at once (one write; a crash can tear only that line).
        Raises OSError."""
        self.items[entry.sha256] = entry
        p = self.path()
        p.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(entry.model_dump(mode="json"), ensure_ascii=False) + "\n").encode("utf-8")
        with open(p, "ab") as f:
            if f.tell() and not _ends_with_newline(p):
                line = b"\n" + line  # after a torn line
            f.write(line)


def _ends_with_newline(p: Path) -> bool:
    with open(p, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
