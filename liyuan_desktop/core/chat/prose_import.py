"""Bringing existing prose into an agent-mode (写长篇) chat: a folder of chapter files, one long ``.txt``, or a
role-play chat's finals. No Qt; the window and the CLI call these.

Every import writes chapter files into the chat's ``正文/`` (through :attr:`Chat.story`, so names are checked and
writes are atomic) and then makes ONE user checkpoint (:meth:`Chat.import_chapters`), so the whole import can be
undone by restoring the checkpoint before it. Nothing is written when the source cannot be read.

Text is kept byte for byte apart from the encoding: a file is read as UTF-8 (a UTF-8 byte-order mark is dropped),
UTF-16 when it starts with a UTF-16 byte-order mark, else as GB18030 (the usual encoding of Chinese ``.txt`` files
on Windows, a superset of GBK/GB2312); the chapter is stored as UTF-8 with its line endings untouched.

Chapter names: ``chapter_filename(index, title)`` — ``NNN-标题.md``. Numbering starts at 1 in an empty story folder,
or right after the highest number already there (``000-开场.md`` alone → the first import is ``001-…``), so an
import never overwrites existing chapters. The number gets more digits when the book passes 999 chapters.

Role-play → agent (:func:`chapters_from_roleplay`): the active branch of the role-play chat becomes

* ``000-开场.md`` — the opening as shown (macros applied) without its ``【开场 · 名字】`` header line;
* ``001-第1拍.md``, ``002-第2拍.md``, … — one per sealed final, in order, with previous-beat revisions applied.
  The file number counts chapters (consecutive); the 「第N拍」 in the title is the beat (user turn) the final
  belongs to, which is the same number unless a beat ended without a sealed final.

Unsealed drafts (a beat that stopped before 收笔) are not story and are left out.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Union

from ..messages import message
from ..prompt.assemble import opening_body
from ..story.chapters import chapter_filename, split_text_into_chapters
from ..story.checkpoint_model import Checkpoint
from .facade import Chat

#: file suffixes :func:`import_folder` takes (case-insensitive)
PROSE_SUFFIXES = (".md", ".txt")

_LEADING_NUMBER = re.compile(r"^[0-9０-９]+(?:[ \t\u3000]*[-_.．、—:：][ \t\u3000]*|[ \t\u3000]+|$)")
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9, "壹": 1, "贰": 2, "叁": 3, "肆": 4, "伍": 5, "陆": 6, "柒": 7, "捌": 8, "玖": 9}
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_NUM = "零〇一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟"
_KEY_PART = re.compile(rf"([0-9０-９]+)|(?<=第)([{_CN_NUM}]+)")


class ProseImportError(ValueError):
    """A source could not be imported (unreadable, not text, nothing to import); ``message`` is Chinese text for
    the user. Nothing was written."""


# ---------------------------------------------------------------------------------------------------------------
# reading text


def decode_text(data: bytes, name: str = "") -> str:
    """Bytes of a text file → str: UTF-8 (BOM dropped), UTF-16 with a BOM, else GB18030. Raises
    :class:`ProseImportError` when none fits or the text contains NUL characters."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        encodings = ["utf-8"]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings = ["utf-16"]
    else:
        encodings = ["utf-8", "gb18030"]
    for enc in encodings:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        if enc == "utf-16" and text.startswith("\ufeff"):
            text = text[1:]
        if "\x00" in text:
            break
        return text
    raise ProseImportError(message("prose_import.not_text", label=message("prose_import.named", name=name) if name
                                   else message("prose_import.the_file")))


def read_text_file(path: Union[str, Path]) -> str:
    """The text of ``path`` (see :func:`decode_text`); OSError becomes :class:`ProseImportError`."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ProseImportError(message("prose_import.cannot_read", name=p.name, error=e.strerror or str(e))) from e
    return decode_text(data, p.name)


# ---------------------------------------------------------------------------------------------------------------
# names and order


def _cn_to_int(s: str) -> int:
    """Chinese numerals → int (``十二`` 12, ``一百零三`` 103, ``两千`` 2000, ``一二三`` 123, ``三万五千`` 35000)."""
    if all(c in _CN_DIGITS for c in s):  # digit by digit: 一二三, 二〇二四
        n = 0
        for c in s:
            n = n * 10 + _CN_DIGITS[c]
        return n
    total, section, digit = 0, 0, 0
    for c in s:
        if c in _CN_DIGITS:
            digit = _CN_DIGITS[c]
        elif c in _CN_UNITS:
            section += (digit or 1) * _CN_UNITS[c]
            digit = 0
        elif c == "万":
            total += (section + digit or 1) * 10000
            section, digit = 0, 0
    return total + section + digit


def natural_key(name: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """Sort key for file names in reading order: digit runs compare as numbers (``2`` before ``10``, full-width
    digits too), and so do Chinese numerals after 第 (``第二章`` before ``第十章``); ties by the name itself."""
    parts: list[tuple[int, int | str]] = []  # (0, number) or (1, text): a number never meets a text
    pos = 0
    for m in _KEY_PART.finditer(name):
        if m.start() > pos:
            parts.append((1, name[pos:m.start()].casefold()))
        if m.group(1):
            num = int(m.group(1).translate(str.maketrans("０１２３４５６７８９", "0123456789")))
        else:
            num = _cn_to_int(m.group(2))
        parts.append((0, num))
        pos = m.end()
    if pos < len(name):
        parts.append((1, name[pos:].casefold()))
    return (tuple(parts), name)


def title_from_filename(name: str) -> str:
    """A chapter title from a source file name: the extension and a leading ordering number (``01 ``, ``3-``,
    ``002_``) dropped — ``01-雨夜问名.txt`` → ``雨夜问名``, ``第一章 雨夜问名.md`` → ``第一章 雨夜问名`` (chapter_filename
    drops the 第X章 itself). A name that is only a number gives ``""``."""
    stem = Path(name).stem
    return _LEADING_NUMBER.sub("", stem).strip()


def _next_index(chat: Any) -> int:
    """The first free chapter number: 1 in an empty folder, else one past the highest ``NNN`` prefix there."""
    top = 0
    for c in chat.story.chapters():
        m = re.match(r"^(\d+)", c.name)
        if m:
            top = max(top, int(m.group(1)))
    return top + 1


def _named(chat: Any, titled: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(title, text) pairs → (chapter file name, text), numbered from :func:`_next_index`."""
    start = _next_index(chat)
    width = max(3, len(str(start + len(titled) - 1)))
    return [(chapter_filename(start + i, title, width=width), text) for i, (title, text) in enumerate(titled)]


def _commit(chat: Chat, chapters: list[tuple[str, str]], message: str) -> Optional[Checkpoint]:
    if not chapters:
        return None
    return chat.import_chapters(chapters, message=message)


# ---------------------------------------------------------------------------------------------------------------
# imports


def prose_files(folder: Union[str, Path]) -> list[Path]:
    """The ``.md``/``.txt`` files directly in ``folder`` (hidden files and sub-folders skipped), in natural order."""
    d = Path(folder)
    if not d.is_dir():
        raise ProseImportError(message("prose_import.not_folder", path=str(d)))
    files = [p for p in d.iterdir()
             if p.suffix.lower() in PROSE_SUFFIXES and not p.name.startswith(".") and p.is_file()]
    return sorted(files, key=lambda p: natural_key(p.name))


def import_folder(chat: Any, folder: Union[str, Path]) -> Optional[Checkpoint]:
    """Every ``.md``/``.txt`` file of ``folder`` (not recursive), in natural name order, becomes one chapter named
    ``chapter_filename(i, title_from_filename(file))``; then one user checkpoint 「导入 N 章」. Returns it, or None
    when the folder holds no such file (nothing written). All files are read before anything is written, so an
    unreadable one (:class:`ProseImportError`) leaves the story untouched."""
    titled = [(title_from_filename(p.name), read_text_file(p)) for p in prose_files(folder)]
    chapters = _named(chat, titled)
    return _commit(chat, chapters, chat.history_log.label("cp.label.imported_n", n=len(chapters)))


def import_long_text(chat: Any, path: Union[str, Path]) -> Optional[Checkpoint]:
    """One long text file split at its chapter headings (``第X章``/``第X回``/``Chapter N`` lines, see
    :func:`split_text_into_chapters`); each part becomes a chapter named after its heading (text before the first
    heading: 「序」; no heading at all: one chapter named after the file). One user checkpoint 「导入 N 章」; None
    when the file is empty."""
    p = Path(path)
    parts = split_text_into_chapters(read_text_file(p))
    titled = [(title or title_from_filename(p.name), body) for title, body in parts]
    chapters = _named(chat, titled)
    return _commit(chat, chapters, chat.history_log.label("cp.label.imported_n", n=len(chapters)))


def chapters_from_roleplay(rp_chat: Any) -> list[tuple[str, str]]:
    """The story of a role-play chat's active branch as chapters ``[(file name, text)]``: ``000-开场.md`` (the
    opening without its 【开场 · 名字】 line; left out when the chat has no opening) and ``NNN-第N拍.md`` for every
    sealed final, revisions applied (see the module doc for the numbering). Texts are kept exactly."""
    path = rp_chat.tree.path_to()
    revised: dict[str, str] = {}
    for e in path:
        if e.type == "revision":
            revised[e.target] = e.text
    opening: Optional[str] = None
    finals: list[tuple[int, str]] = []
    beat = 0
    for e in path:
        if e.type == "opening" and opening is None:
            opening = opening_body(e.text)
        elif e.type == "user":
            beat += 1
        elif e.type == "assistant" and getattr(e, "sealed", True):
            text = revised.get(e.id, e.text)
            if text.strip():
                finals.append((beat, text))
    width = max(3, len(str(len(finals))))
    out: list[tuple[str, str]] = []
    if opening is not None and opening.strip():
        out.append((chapter_filename(0, "开场", width=width), opening))
    for i, (b, text) in enumerate(finals, 1):
        out.append((chapter_filename(i, f"第{b}拍", width=width), text))
    return out


def roleplay_to_agent(rp_chat: Any, dest_dir: Union[str, Path], model: Any, *, title: str = "",
                      scribe_model: Any = None) -> Any:
    """Start an agent-mode chat at ``dest_dir`` (must not hold a session yet: SessionError) from a role-play chat:
    same card and persona, the role-play ledger as its first ``rp-state`` (source ``init``), the chapters of
    :func:`chapters_from_roleplay` written to ``正文/`` with one user checkpoint 「从扮演对话导入 N 章」 (none when
    there is nothing to import). Returns the new :class:`~liyuan_desktop.core.chat.facade.Chat` (opened on ``model``)."""
    chapters = chapters_from_roleplay(rp_chat)
    chat = Chat.create(Path(dest_dir), rp_chat.card, model, mode="agent", persona=rp_chat.persona, title=title,
                       scribe_model=scribe_model)
    chat.seed_ledger(rp_chat.current_state())
    if chapters:
        chat.import_chapters(chapters, message=chat.history_log.label("cp.label.from_roleplay", n=len(chapters)))
    return chat
