"""Chapters as text: splitting a long text at its chapter headings and naming chapter files (``NNN-标题.md``).

The chapter folder itself (paths, the four file tools, the index) is :mod:`core.story.workspace`; importing prose
files into it is :mod:`core.chat.prose_import`.
"""

from __future__ import annotations

import re
from typing import Optional

from ..paths import safe_name
from .checkpoint_model import BIDI_CONTROLS

#: Characters refused in chapter file names (not portable across file systems), besides ``/`` and ``\\``.
#: Bidi controls are refused too: such a name can display as another name (see checkpoint_model.BIDI_CONTROLS).
BAD_NAME_CHARS = set('<>:"|?*') | {chr(c) for c in range(32)} | {"\x7f"} | set(BIDI_CONTROLS)


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept (split after each ``"\\n"`` only); ``"".join(result) == text``."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


_NUM = r"[0-9０-９零〇一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟]+"
_HEADING = re.compile(
    rf"^[ \t\u3000]*(?:(第{_NUM}[章回])(?:[ \t\u3000:：、.．—\-]+(.*?))?"
    r"|((?:chapter|CHAPTER|Chapter)[ \t]+(?:\d+|[IVXLCDM]+)\b)(?:[ \t\u3000:：.．—\-]+(.*?))?)"
    r"[ \t\u3000]*$")
_HEADING_MAX = 60


def _heading(line: str) -> Optional[tuple[str, str]]:
    """(full heading, trailing title) when ``line`` is a chapter heading, else None."""
    s = line.rstrip("\r\n")
    if len(s.strip()) > _HEADING_MAX:
        return None
    m = _HEADING.match(s)
    if not m:
        return None
    rest = (m.group(2) if m.group(1) else m.group(4)) or ""
    return s.strip(" \t\u3000"), rest.strip()


def chapter_heading(line: str) -> Optional[tuple[str, str]]:
    """``(heading, title after it)`` when ``line`` is a chapter heading (``第三章 雨夜`` → ``("第三章 雨夜", "雨夜")``;
    the rule of :func:`split_text_into_chapters`), else None."""
    return _heading(line)


def split_text_into_chapters(text: str) -> list[tuple[str, str]]:
    """Split a long text at chapter headings: a line (≤ 60 characters) that is ``第X章``/``第X回`` (X in Chinese or
    Arabic numerals, full-width digits too) or ``Chapter N`` (Arabic or Roman), optionally followed by a title.

    Returns ``[(title, body)]`` in order; ``title`` is the heading line as written (``第一章 雨夜问名``), ``body`` the
    text up to the next heading with leading blank lines removed and trailing whitespace trimmed to one final newline
    (line endings inside are kept). Non-blank text before the first heading becomes ``("序", body)``. No heading at
    all: ``[("", text-trimmed)]``; empty text: ``[]``."""
    if not text or not text.strip():
        return []
    chapters: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] = ("序", [])
    for line in split_lines(text):
        h = _heading(line)
        if h:
            chapters.append(current)
            current = (h[0], [])
        else:
            current[1].append(line)
    chapters.append(current)

    def body_of(lines: list[str]) -> str:
        i = 0
        while i < len(lines) and not lines[i].strip():
            i += 1
        b = "".join(lines[i:]).rstrip()
        return b + "\n" if b else ""

    out = []
    for i, (title, lines) in enumerate(chapters):
        body = body_of(lines)
        if i == 0:
            if not body.strip():
                continue
            if len(chapters) == 1:
                title = ""
        out.append((title, body))
    return out


def chapter_filename(index: int, title: str, width: int = 3) -> str:
    """A safe chapter file name ``NNN-标题.md`` (``index`` zero-padded to ``width`` digits, used as given: the seed
    names the opening ``000-开场.md`` and the first chapter ``001-…``). A ``第X章``/``Chapter N`` prefix is dropped when a
    title follows it (``第一章 雨夜问名`` → ``001-雨夜问名.md``); runs of whitespace become one space; non-printable
    characters become ``_``, then :func:`core.paths.safe_name` applies the portable rules (forbidden characters,
    trailing dots and spaces, Windows device names) and cuts the title to 60 UTF-16 units. No usable title →
    ``NNN.md``. Pass ``width`` large enough for the whole book (e.g. 4 for ≥ 1000 chapters) so file-name order stays chapter order."""
    t = (title or "").strip()
    h = _heading(t) if t else None
    if h and h[1]:
        t = h[1]
    t = re.sub(r"\s+", " ", t)
    t = "".join("_" if not c.isprintable() and c != " " else c for c in t)
    t = safe_name(t, "", max_len=60).strip(" ._")  # the portable rules (Windows names, MAX_PATH) live in core.paths
    num = f"{index:0{width}d}"
    return f"{num}-{t}.md" if t else f"{num}.md"
