"""Progress (issue 19 §5): 字数 per chapter, volume and book, each chapter's target from the outline, and a daily
count from the checkpoints.

The one counting rule is :func:`core.text.count_words` (CJK characters one each, a Latin word one). The daily count
needs no log of its own: every checkpoint has a timestamp and a manifest of content hashes, so the book's total at
the end of each day is the total of that day's last checkpoint, and the day's count is the difference to the day
before (negative when text was cut). Word counts are cached by content hash (:class:`WordCache`, in memory; a
blob's count never changes), so a long history is counted once.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Callable, Iterable, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..fsutil import atomic_write_text
from ..text import count_words
from .checkpoint_model import Checkpoint, is_chapter_name
from .outline import Outline
from .webnovel import WebNovelSettings, WebNovelStatus, norm_of, status


class ChapterProgress(DeferredModel):
    """One chapter: ``id`` (the outline chapter's stable id; "" for a file the outline does not list or a chapter
    without one), ``file`` (None for an outline chapter not written yet; for an outline chapter, its linked file),
    ``title`` (the outline's title, else the
    file name), ``words`` (字), ``target`` (字 from the outline, None when not set), ``status`` (the outline's, None
    for a file the outline does not list), ``volume`` (the outline volume's title, "" when none)."""

    id: str = ""
    file: Optional[str] = None
    title: str = ""
    words: int = 0
    target: Optional[int] = None
    status: Optional[str] = None
    volume: str = ""
    norm: str = ""
    """Against the book's length norm (``story.webnovel``): "short", "long" or "" (within, or not written)."""
    published: bool = False
    """The author marked this chapter published (``story.webnovel``); written and not published = 存稿."""


class VolumeProgress(DeferredModel):
    """One volume: ``title``, ``words``, ``target`` (sum of its chapters' targets; 0 when none set), ``chapters``."""

    title: str = ""
    words: int = 0
    target: int = 0
    chapters: int = 0


class DayCount(DeferredModel):
    """The book's change on one local day: ``day`` (YYYY-MM-DD), ``words`` (字 added, negative when cut), ``total``
    (the book at the day's last checkpoint)."""

    day: str
    words: int
    total: int


class Progress(DeferredModel):
    """The whole picture: ``chapters`` (book order: the outline's chapters first, in its order, then files the
    outline does not list), ``volumes``, ``words`` (the book), ``target`` (sum of chapter targets), ``days`` (oldest
    first), ``today`` (字 written today)."""

    chapters: list[ChapterProgress] = Field(default_factory=list)
    volumes: list[VolumeProgress] = Field(default_factory=list)
    words: int = 0
    target: int = 0
    days: list[DayCount] = Field(default_factory=list)
    today: int = 0
    webnovel: Optional[WebNovelStatus] = None
    """Norms, 日更 streak and 存稿 (``story.webnovel.status``)."""


class WordCache:
    """字数 by content hash (a blob's count never changes). With ``path`` it is also kept on disk (a JSON object
    ``{sha256: count}``; a cache — deleted or damaged, it is rebuilt): reopening a long book counts nothing again."""

    def __init__(self, path: Optional[Path] = None) -> None:
        self.path = path
        self._by_hash: dict[str, int] = {}
        self._dirty = False
        if path is not None:
            try:
                raw = json.loads(Path(path).read_text("utf-8"))
                if isinstance(raw, dict):
                    self._by_hash = {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, int)}
            except (OSError, ValueError):
                pass

    def save(self) -> None:
        """Write the cache to ``path`` when it gained counts (errors ignored: it is only a cache)."""
        if self.path is None or not self._dirty:
            return
        try:
            atomic_write_text(self.path, json.dumps(self._by_hash, separators=(",", ":")))
            self._dirty = False
        except OSError:
            pass

    def count(self, digest: str, text: Callable[[], str]) -> int:
        """The count of the content with hash ``digest``; ``text()`` is called only on a miss."""
        n = self._by_hash.get(digest)
        if n is None:
            n = self._by_hash[digest] = count_words(text())
            self._dirty = True
        return n


def book_progress(files: dict[str, int], outline: Optional[Outline]) -> Progress:
    """Progress from ``files`` ({chapter file: 字数}, the folder now) and the outline (None: no volumes/targets)."""
    chapters: list[ChapterProgress] = []
    volumes: list[VolumeProgress] = []
    listed: set[str] = set()
    if outline is not None:
        for v in outline.volumes:
            vp = VolumeProgress(title=v.title)
            for c in v.chapters:
                words = files.get(c.file, 0) if c.file else 0
                if c.file:
                    listed.add(c.file)
                chapters.append(ChapterProgress(id=c.id, file=c.file if c.file in files else None, title=c.title,
                                                words=words,
                                                target=c.target, status=c.status, volume=v.title))
                vp.words += words
                vp.target += c.target or 0
                vp.chapters += 1
            volumes.append(vp)
    for name in sorted(files):
        if name not in listed:
            chapters.append(ChapterProgress(file=name, title=name[:-3] if name.lower().endswith(".md") else name,
                                            words=files[name]))
    return Progress(chapters=chapters, volumes=volumes, words=sum(files.values()),
                    target=sum(c.target or 0 for c in chapters))


def daily_counts(checkpoints: Iterable[Checkpoint], words_of: Callable[[str], int],
                 today: Optional[_dt.date] = None) -> tuple[list[DayCount], int]:
    """The daily counts from ``checkpoints`` (oldest first; only chapter files of each manifest count, so the outline
    does not) with ``words_of(hash)`` giving a blob's 字数. Days are local calendar days. Returns (days, 字 today):
    a day's count is its last total minus the previous day's last total (the first day counts from 0)."""
    last_by_day: dict[str, int] = {}
    for c in checkpoints:
        day = _dt.datetime.fromtimestamp(c.ts / 1000).date().isoformat()
        last_by_day[day] = sum(words_of(h) for n, h in c.files.items() if is_chapter_name(n))
    days: list[DayCount] = []
    prev = 0
    for day in sorted(last_by_day):
        total = last_by_day[day]
        days.append(DayCount(day=day, words=total - prev, total=total))
        prev = total
    t = (today or _dt.date.today()).isoformat()
    return days, next((d.words for d in days if d.day == t), 0)


def with_webnovel(p: Progress, settings: WebNovelSettings, today: Optional[_dt.date] = None) -> Progress:
    """``p`` with each written chapter's norm and published mark and :attr:`Progress.webnovel` filled from the
    book's web-novel ``settings`` (issue 28). Returns ``p``."""
    published = set(settings.published)
    written = []
    for c in p.chapters:
        if c.file:
            c.norm = norm_of(c.words, settings)
            c.published = c.file in published
            written.append((c.file, c.title, c.words))
    p.webnovel = status(written, [(d.day, d.words) for d in p.days], p.today, settings, today)
    return p
