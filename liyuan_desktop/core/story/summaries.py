"""A summary per chapter (issue 28, "long books stay consistent"): a few sentences per chapter file — what happened,
who learned what, the names and things that appeared, the threads planted or paid off — made by the model after the
chapter is written or changed (``core/chat/chapter_summaries.py``), editable by the author, and kept with the
checkpoints (the file is one of the checkpoints' extra files beside 大纲.md, so a restore brings the summaries of
that moment back).

Storage: ``<chat>/章节摘要.json``, ``{"chapters": {file: {"text", "sha", "ts", "by"}}}`` — ``sha`` is the SHA-256 of
the chapter text the summary describes; a chapter whose file no longer has that hash is *stale* (its summary is
shown, marked, and remade on the next pass). ``by``: "model" or "user" (an edited summary is made fresh for the text
it was edited against). The agent's state block gets the summaries of the chapters before the one being written
(:func:`summaries_block`, bounded; at the end of the prompt, so the cached prefix stays byte-stable).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, Field, ValidationError

from ..fsutil import atomic_write_text
from ..jsonfile import read_json_file
from ..text import prompt_language
from .layout import side_file
from .links import chapter_files

SUMMARIES_FILE = "章节摘要.json"
SUMMARIES_KEY = "../" + SUMMARIES_FILE
"""The checkpoints' manifest key (beside ``../大纲.md``)."""
BLOCK_MAX_CHAPTERS = 40
"""At most this many chapter summaries in the state block (the nearest before the chapter being written)."""
BLOCK_SUMMARY_MAX = 240
"""Each summary in the state block is cut to this many characters."""


class ChapterSummary(BaseModel):
    """One chapter's summary: ``text``, ``sha`` (of the chapter text it describes), ``ts`` (ms), ``by``."""

    text: str
    sha: str = ""
    ts: int = 0
    by: Literal["model", "user"] = "model"


class SummaryStore(BaseModel):
    """``章节摘要.json``: ``chapters`` {file name: :class:`ChapterSummary`}."""

    chapters: dict[str, ChapterSummary] = Field(default_factory=dict)


class SummaryRow(BaseModel):
    """A chapter as the room lists it: ``file``, ``text`` ("" when none), ``stale`` (written for other text, or
    missing), ``by``."""

    file: str
    text: str = ""
    stale: bool = True
    by: str = ""


def text_sha(text: str) -> str:
    """SHA-256 (hex) of ``text`` as UTF-8 — the chapter file's bytes when it was written by the engine."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha(path: Path) -> str:
    """SHA-256 (hex) of the file's bytes; "" when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def summaries_path(chat_dir: Path) -> Path:
    """``<chat folder>/章节摘要.json`` (``chapter-summaries.json`` in the English layout, :func:`.layout.side_file`)."""
    return side_file(chat_dir, SUMMARIES_FILE)


def load_summaries(chat_dir: Path) -> SummaryStore:
    """The store; empty when the file is missing or unreadable (a damaged file never stops the room)."""
    try:
        return SummaryStore.model_validate(read_json_file(summaries_path(chat_dir)))
    except (OSError, ValueError, ValidationError):
        return SummaryStore()


def save_summaries(chat_dir: Path, store: SummaryStore) -> None:
    """Write the store atomically (chapters sorted by name). OSError when the disk refuses."""
    data = {"chapters": {k: store.chapters[k].model_dump() for k in sorted(store.chapters)}}
    atomic_write_text(summaries_path(chat_dir), json.dumps(data, ensure_ascii=False, indent=1))


def rows(chat_dir: Path, story_dir: Path) -> list[SummaryRow]:
    """Every chapter file in book order with its summary and whether it is stale."""
    store = load_summaries(chat_dir)
    out = []
    for f in chapter_files(story_dir):
        s = store.chapters.get(f)
        out.append(SummaryRow(file=f, text=s.text if s else "", by=s.by if s else "",
                              stale=s is None or s.sha != file_sha(Path(story_dir) / f)))
    return out


def set_summary(chat_dir: Path, story_dir: Path, file: str, text: str, by: Literal["model", "user"],
                sha: Optional[str] = None) -> ChapterSummary:
    """Store ``text`` as chapter ``file``'s summary (``sha``: of the text it describes; default the file now; an
    empty ``text`` removes it). ValueError for a file that is not a chapter; OSError."""
    if file not in chapter_files(story_dir):
        raise ValueError(f"not a chapter: {file!r}")
    store = load_summaries(chat_dir)
    s = ChapterSummary(text=text.strip(), sha=sha if sha is not None else file_sha(Path(story_dir) / file),
                       ts=int(time.time() * 1000), by=by)
    if s.text:
        store.chapters[file] = s
    else:
        store.chapters.pop(file, None)
    save_summaries(chat_dir, store)
    return s


def summaries_block(chat_dir: Path, story_dir: Path, writing: str = "", language: str = "zh") -> str:
    """【章节摘要】 for the agent's state block: the summaries of the chapters before ``writing`` (the file being
    written; all when "" or unknown), the nearest :data:`BLOCK_MAX_CHAPTERS`, each cut to
    :data:`BLOCK_SUMMARY_MAX` characters, stale ones marked (旧). "" when there are none. ``language``: the chat's
    (English for every language but Chinese)."""
    en = prompt_language(language) == "en"
    files = chapter_files(story_dir)
    if writing in files:
        files = files[:files.index(writing)]
    store = load_summaries(chat_dir)
    lines = []
    for f in files[-BLOCK_MAX_CHAPTERS:]:
        s = store.chapters.get(f)
        if s is None or not s.text:
            continue
        text = " ".join(s.text.split())
        cut = text[:BLOCK_SUMMARY_MAX] + ("…" if len(text) > BLOCK_SUMMARY_MAX else "")
        mark = "" if s.sha == file_sha(Path(story_dir) / f) else (" (stale)" if en else "（旧）")
        lines.append(f"- {f}{mark}: {cut}" if en else f"- {f}{mark}：{cut}")
    if not lines:
        return ""
    if en:
        return ("[Chapter summaries] The gist of the chapters before (look details up with memory_search):\n"
                + "\n".join(lines))
    return "【章节摘要】前面各章的要点（细节用 memory_search 查原文）：\n" + "\n".join(lines)
