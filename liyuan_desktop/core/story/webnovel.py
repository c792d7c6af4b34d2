"""For web-novel authors (issue 28): chapter length norms, a daily target with its streak (日更), and the buffer of
written-but-unpublished chapters (存稿).

Chinese web-novel platforms expect chapters of a steady length (2,000–3,000 字 is the common norm, set per book),
authors keep a daily target (日更 4,000 字, say) and count the days in a row they met it, and they write ahead: the
chapters written but not yet published are the 存稿 that carries them through a bad week. None of this needs a log
of its own: the daily counts come from the checkpoints (``story.progress.daily_counts``), the chapters and their
字数 from the folder, and the only thing the author says is which chapters are published — kept with the book's
settings in ``<chat>/网文.json`` (a small settings file beside 大纲.md, like it edited by the author; the session
tree is not involved).

Counting rule: :func:`core.text.count_words` (CJK characters one each, a Latin word one), as everywhere.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Iterable, Literal, Optional

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..fsutil import atomic_write_text
from ..jsonfile import read_json_file
from .layout import side_file

SETTINGS_FILE = "网文.json"
"""The book's web-novel settings, in the chat folder."""

DEFAULT_MIN, DEFAULT_MAX = 2000, 3000
"""The default chapter length norm, in 字 (the common web-novel platform norm)."""


class WebNovelSettings(BaseModel):
    """A book's web-novel settings: ``chapter_min``/``chapter_max`` (字; the length norm a chapter is checked
    against, 0 = no bound), ``daily_target`` (字 a day for the 日更 streak; 0 = none: then any day with words
    counts), ``published`` (chapter file names the author has published; the rest of the written ones are 存稿)."""

    chapter_min: int = Field(default=DEFAULT_MIN, ge=0, le=1_000_000)
    chapter_max: int = Field(default=DEFAULT_MAX, ge=0, le=1_000_000)
    daily_target: int = Field(default=0, ge=0, le=1_000_000)
    published: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ordered(self) -> "WebNovelSettings":
        if self.chapter_min and self.chapter_max and self.chapter_min > self.chapter_max:
            raise ValueError(f"chapter_min {self.chapter_min} > chapter_max {self.chapter_max}")
        self.published = list(dict.fromkeys(p for p in self.published if p))
        return self


class WebNovelStatus(BaseModel):
    """What the writing room shows: the settings' norm and target; ``today`` (字 written today), ``streak`` (days
    in a row, ending today — or yesterday while today is not yet met — that met the target), ``best_streak``;
    ``buffer_chapters``/``buffer_words`` (written chapters not published: 存稿), ``published`` (how many chapters
    are); ``short``/``long`` (titles of written chapters outside the norm, book order)."""

    chapter_min: int = DEFAULT_MIN
    chapter_max: int = DEFAULT_MAX
    daily_target: int = 0
    today: int = 0
    streak: int = 0
    best_streak: int = 0
    buffer_chapters: int = 0
    buffer_words: int = 0
    published: int = 0
    short: list[str] = Field(default_factory=list)
    long: list[str] = Field(default_factory=list)


def settings_path(chat_dir: Path) -> Path:
    """``<chat_dir>/网文.json`` (``webnovel.json`` in the English layout, :func:`.layout.side_file`)."""
    return side_file(chat_dir, SETTINGS_FILE)


def load_webnovel(chat_dir: Path) -> WebNovelSettings:
    """The book's settings; the defaults when the file is missing, unreadable or invalid (a hand edit gone wrong
    never stops the room)."""
    try:
        return WebNovelSettings.model_validate(read_json_file(settings_path(chat_dir)))
    except (OSError, ValueError, ValidationError):
        return WebNovelSettings()


def save_webnovel(chat_dir: Path, settings: WebNovelSettings) -> None:
    """Write the settings atomically. OSError when the disk refuses."""
    atomic_write_text(settings_path(chat_dir), json.dumps(settings.model_dump(), ensure_ascii=False, indent=1))


def norm_of(words: int, settings: WebNovelSettings) -> Literal["", "short", "long"]:
    """Where a written chapter of ``words`` 字 stands against the norm: "short", "long" or "" (within, or no
    bound on that side)."""
    if settings.chapter_min and words < settings.chapter_min:
        return "short"
    if settings.chapter_max and words > settings.chapter_max:
        return "long"
    return ""


def streaks(days: Iterable[tuple[str, int]], target: int, today: _dt.date) -> tuple[int, int]:
    """(current streak, best streak) from ``days`` ((YYYY-MM-DD, 字 that day), any order; days not listed wrote
    nothing). A day counts when it wrote ``target`` 字 or more (any positive count when ``target`` is 0). The
    current streak ends today when today counts, else yesterday (today is not over yet)."""
    good = {d for d, w in days if (w >= target if target > 0 else w > 0)}
    best = run = 0
    prev: Optional[_dt.date] = None
    for d in sorted(_dt.date.fromisoformat(x) for x in good):
        run = run + 1 if prev is not None and (d - prev).days == 1 else 1
        best = max(best, run)
        prev = d
    end = today if today.isoformat() in good else today - _dt.timedelta(days=1)
    cur = 0
    while (end - _dt.timedelta(days=cur)).isoformat() in good:
        cur += 1
    return cur, best


def status(chapters: Iterable[tuple[str, str, int]], days: Iterable[tuple[str, int]], today_words: int,
           settings: WebNovelSettings, today: Optional[_dt.date] = None) -> WebNovelStatus:
    """The room's web-novel line. ``chapters``: (file, title, 字) of each written chapter in book order; ``days``:
    (YYYY-MM-DD, 字) as ``story.progress`` counts them; ``today_words``: 字 today."""
    published = set(settings.published)
    st = WebNovelStatus(chapter_min=settings.chapter_min, chapter_max=settings.chapter_max,
                        daily_target=settings.daily_target, today=today_words)
    for file, title, words in chapters:
        where = norm_of(words, settings)
        if where:
            getattr(st, where).append(title)
        if file in published:
            st.published += 1
        else:
            st.buffer_chapters += 1
            st.buffer_words += words
    st.streak, st.best_streak = streaks(days, settings.daily_target, today or _dt.date.today())
    return st
