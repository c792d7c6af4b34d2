"""Retrieval over a book's chapter text (issue 28, "long books stay consistent"): the agent writing chapter 200
finds what chapters 3 and 57 said about a name with ``memory_search``, as the role-play side finds old replies.

The chapters (``正文/*.md``, the checkpoints' rule: :func:`story.links.chapter_files`) are cut into passages —
paragraphs, short ones joined up to :data:`PASSAGE_CHARS` characters — and indexed with the same BM25 and the same
terms (CJK characters and pairs, Latin words) as the branch memory (:mod:`.search`). The index is a cache of the
folder: rebuilt when any chapter's (name, size, mtime) changed, never stored. Results name the file and its place in
the book's order (``chapter``: 1-based among the chapter files, sorted by name as the folder lists them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from ..story.links import chapter_files
from .search import MemoryDoc, MemoryIndex, snippet

PASSAGE_CHARS = 400
"""A passage is a paragraph, or consecutive short paragraphs joined up to about this many characters."""


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """``text`` cut into passages: paragraphs (non-empty lines), consecutive ones joined while the passage stays
    within ``size`` characters; a paragraph longer than ``size`` is its own passage (never cut mid-sentence)."""
    out: list[str] = []
    cur = ""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if cur and len(cur) + 1 + len(line) > size:
            out.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur:
        out.append(cur)
    return out


class ChapterMemory:
    """BM25 over the passages of the chapter files in ``story_dir`` (module doc). Not thread-safe on its own: the
    chat calls it from the beat (one at a time)."""

    def __init__(self, story_dir: Path) -> None:
        self.story_dir = Path(story_dir)
        self._key: Optional[tuple[tuple[str, int, int], ...]] = None
        self._idx = MemoryIndex()
        self._where: list[tuple[str, int]] = []  # per doc: (file, 1-based chapter number)

    def _stamp(self) -> tuple[tuple[str, int, int], ...]:
        out = []
        for name in chapter_files(self.story_dir):
            try:
                st = os.stat(self.story_dir / name, follow_symlinks=False)
            except OSError:
                continue
            out.append((name, st.st_size, st.st_mtime_ns))
        return tuple(out)

    def index(self) -> MemoryIndex:
        """The index, rebuilt when the folder's chapters changed since the last call."""
        key = self._stamp()
        if key == self._key:
            return self._idx
        idx, where = MemoryIndex(), []
        for no, (name, _size, _mtime) in enumerate(key, 1):
            try:
                text = (self.story_dir / name).read_text("utf-8", errors="replace")
            except OSError:
                continue
            for i, p in enumerate(passages(text)):
                idx.add(MemoryDoc(f"{name}#{i}", "chapter", no, p))
                where.append((name, no))
        self._idx, self._where, self._key = idx, where, key
        return idx

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """``[{"kind": "chapter", "chapter", "file", "snippet", "score"}]``, best first; [] without chapters."""
        idx = self.index()
        out = []
        for doc, score in idx.search(query, limit):
            file, no = self._where[idx.keys[doc.key]]
            out.append({"kind": "chapter", "chapter": no, "file": file, "snippet": snippet(doc.text, query),
                        "score": round(score, 3)})
        return out


def merge_results(branch: list[dict[str, Any]], chapters: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The branch memory's hits and the chapters' as one list of at most ``limit``, best first. Each list's scores
    are scaled by its own best (BM25 scores of two indexes do not compare); on a tie the chapter text wins — it is
    what the book says now."""
    def scaled(rows: list[dict[str, Any]], rank: int) -> list[tuple[float, int, int, dict[str, Any]]]:
        top = max((r["score"] for r in rows), default=0.0) or 1.0
        return [(r["score"] / top, rank, i, r) for i, r in enumerate(rows)]
    merged = sorted(scaled(chapters, 0) + scaled(branch, 1), key=lambda t: (-t[0], t[1], t[2]))
    return [r for *_, r in merged[:limit]]
