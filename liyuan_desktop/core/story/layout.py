"""Where a novel lives in its chat folder (issue 32): the one home of the names of the chapter folder, the outline
file and the checkpoint history — no other module spells them.

Two layouts:

- Chinese (:data:`ZH_LAYOUT`, the seed's, every chat folder made before issue 32): ``正文/`` (one ``.md`` per
  chapter), ``大纲.md`` (the outline), ``历史/`` (the checkpoints: ``历史/对象/`` blobs, ``历史/检查点.jsonl`` log).
- English (:data:`EN_LAYOUT`): ``chapters/``, ``outline.md``, ``history/`` (``history/objects/``,
  ``history/checkpoints.jsonl``).

Which one a chat folder uses (:func:`novel_layout`): what is on disk wins — a folder holding any name of the Chinese
layout keeps it whatever the chat's language (so every existing chat, and the golden runs, work exactly as before);
else a folder holding any name of the English layout keeps that one; only a folder with neither (a new novel) gets
the layout of the chat's language: English when the engine's texts for that language are English
(:func:`core.text.prompt_language` — every language but Chinese), Chinese for Chinese or no language given.

The novel's other files beside them (:data:`SIDE_FILES`: the outline links, chapter summaries, codex, review notes,
web-novel settings, flagged words) follow the folder's layout too (:func:`side_file`), except that a file already
there under either name is the one used (a codex written before the novel's first chapter stays where it is).

The model may name the chapter folder either way (:data:`STORY_FOLDER_NAMES`): the story tools take
``chapters/001-x.md`` and ``正文/001-x.md`` as the same file (:class:`core.story.workspace.StoryFolder`), so a model
told one name never fails on the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..text import prompt_language


@dataclass(frozen=True)
class NovelLayout:
    """The names of one layout, all relative: ``story`` (the chapter folder in the chat folder), ``outline`` (the
    outline file in the chat folder), ``history`` (the checkpoint folder in the chat folder), ``objects`` (the blob
    folder in ``history``), ``log`` (the checkpoint log in ``history``), ``language`` ("zh" / "en": whose names)."""

    story: str
    outline: str
    history: str
    objects: str
    log: str
    language: str

    @property
    def names(self) -> tuple[str, str, str]:
        """The three names in the chat folder that mark a folder as using this layout."""
        return (self.story, self.outline, self.history)


ZH_LAYOUT = NovelLayout(story="正文", outline="大纲.md", history="历史", objects="对象", log="检查点.jsonl", language="zh")
EN_LAYOUT = NovelLayout(story="chapters", outline="outline.md", history="history", objects="objects",
                        log="checkpoints.jsonl", language="en")
#: The layouts in the order a folder is matched against them (the Chinese one first: an existing folder keeps it).
LAYOUTS = (ZH_LAYOUT, EN_LAYOUT)
#: Every name the chapter folder has in some layout: a model path may start with any of them.
STORY_FOLDER_NAMES = tuple(x.story for x in LAYOUTS)

PathLike = Union[str, Path]


def layout_for_language(language: Optional[str]) -> NovelLayout:
    """The layout a new novel in a chat of ``language`` gets: English for every language whose engine texts are
    English (:func:`core.text.prompt_language`), Chinese for Chinese or None."""
    return EN_LAYOUT if prompt_language(language) == "en" else ZH_LAYOUT


def novel_layout(chat_dir: PathLike, language: Optional[str] = None) -> NovelLayout:
    """The layout of the chat folder ``chat_dir`` (module doc): the first of :data:`LAYOUTS` one of whose names
    exists in it, else :func:`layout_for_language` of ``language``. Reads only the folder's entries (three ``stat``
    calls at most per layout); never raises (an unreadable folder counts as empty)."""
    d = Path(chat_dir)
    for lay in LAYOUTS:
        for name in lay.names:
            try:
                if (d / name).exists():
                    return lay
            except OSError:
                continue
    return layout_for_language(language)


def story_dir(chat_dir: PathLike, language: Optional[str] = None) -> Path:
    """The chapter folder of the chat folder ``chat_dir`` (``正文/`` or ``chapters/``, :func:`novel_layout`); it
    need not exist."""
    return Path(chat_dir) / novel_layout(chat_dir, language).story


def outline_file(chat_dir: PathLike, language: Optional[str] = None) -> Path:
    """The outline file of the chat folder ``chat_dir`` (``大纲.md`` or ``outline.md``, :func:`novel_layout`); it
    need not exist."""
    return Path(chat_dir) / novel_layout(chat_dir, language).outline


def history_dir(chat_dir: PathLike, language: Optional[str] = None) -> Path:
    """The checkpoint folder of the chat folder ``chat_dir`` (``历史/`` or ``history/``, :func:`novel_layout`); it
    need not exist."""
    return Path(chat_dir) / novel_layout(chat_dir, language).history


def layout_of_story_dir(story: PathLike) -> NovelLayout:
    """The layout a chapter folder belongs to, by its own name (``chapters`` → English; any other name, ``正文``
    included, → Chinese): what the checkpoints of that folder call the outline beside it."""
    return EN_LAYOUT if Path(story).name == EN_LAYOUT.story else ZH_LAYOUT


def layout_of_history_dir(history: PathLike) -> NovelLayout:
    """The layout a checkpoint folder belongs to, by its own name (``history`` → English; any other → Chinese):
    the names of its blob folder and log."""
    return EN_LAYOUT if Path(history).name == EN_LAYOUT.history else ZH_LAYOUT


#: The novel's other files in the chat folder: the Chinese layout's name → the English layout's (:func:`side_file`).
SIDE_FILES = {
    "大纲链接.json": "outline-links.json",    # core.story.links: outline chapter id → chapter file
    "章节摘要.json": "chapter-summaries.json",  # core.story.summaries (kept by the checkpoints too)
    "名录.json": "codex.json",                # core.story.codex
    "审稿.json": "review.json",               # core.story.review
    "网文.json": "webnovel.json",             # core.story.webnovel
    "屏蔽词.txt": "flagged-words.txt",        # core.story.export: the book's flagged-word list
}


def side_file(chat_dir: PathLike, zh_name: str) -> Path:
    """The path of the novel file ``zh_name`` (a key of :data:`SIDE_FILES`) in the chat folder ``chat_dir``: the
    file already there under its Chinese or its English name (in that order), else the name of the folder's layout
    (:func:`novel_layout`; a folder with no novel yet: the Chinese name, as before). Never raises for a missing
    folder; KeyError for a name that is not in :data:`SIDE_FILES`."""
    d = Path(chat_dir)
    en_name = SIDE_FILES[zh_name]
    for name in (zh_name, en_name):
        try:
            if (d / name).exists():
                return d / name
        except OSError:
            continue
    return d / (en_name if novel_layout(d) is EN_LAYOUT else zh_name)


def strip_story_prefix(name: str) -> str:
    """``name`` without a leading chapter-folder name of any layout (``正文/001-x.md`` and ``chapters/001-x.md``
    → ``001-x.md``); other names unchanged. Only the first component is looked at; ``\\`` is not a separator here
    (callers normalise it first)."""
    for folder in STORY_FOLDER_NAMES:
        if name.startswith(folder + "/"):
            return name[len(folder) + 1:]
    return name
