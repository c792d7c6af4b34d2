"""What earlier SillyTavern migrations imported, by content hash: ``<home>/导入记录/sillytavern-index.json``.

A re-run skips a file whose SHA-256 is recorded here while the item it became still exists (a chat the user deleted
is imported again). Cards are recognised by :func:`core.cards.library.import_card` itself (same original file);
books, presets, chats are recognised here too, so a renamed 「名字 (2)」 is not imported a third time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field, ValidationError

from ..fsutil import atomic_write_text
from ..paths import home

REPORTS_FOLDER = "导入记录"
INDEX_FILE = "sillytavern-index.json"


class IndexEntry(BaseModel):
    """One imported item: ``kind`` (plan item kind), ``dest`` (path relative to the data folder), ``target`` (the
    name it got here)."""

    kind: str
    dest: str
    target: str = ""


class MigrationIndex(BaseModel):
    """``items``: SHA-256 of the source → :class:`IndexEntry`."""

    version: int = 1
    items: dict[str, IndexEntry] = Field(default_factory=dict)

    @staticmethod
    def path() -> Path:
        """``<home>/导入记录/sillytavern-index.json``."""
        return home() / REPORTS_FOLDER / INDEX_FILE

    @classmethod
    def load(cls) -> "MigrationIndex":
        """The index; an empty one when the file is missing or damaged (a damaged index only means identical items
        are recognised by name and content instead)."""
        try:
            return cls.model_validate_json(cls.path().read_bytes())
        except (OSError, ValueError, ValidationError):
            return cls()

    def exists(self, digest: str) -> bool:
        """True when ``digest`` was imported and what it became is still in the data folder."""
        e = self.items.get(digest)
        return e is not None and (home() / e.dest).exists()

    def target(self, digest: str) -> Optional[str]:
        """The name the item with ``digest`` got here, or None."""
        e = self.items.get(digest)
        return e.target if e is not None else None

    def save(self) -> None:
        """Write the index atomically. Raises OSError."""
        atomic_write_text(self.path(), json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=1))
