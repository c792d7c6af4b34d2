"""Export an agent-mode book (issue 28 "Export"): EPUB 3 (ebooklib), DOCX (python-docx), Markdown, plain text, and a
plain-text file per chapter for web-novel platforms, with a check against the author's word list.

**The public API** (what the window's export dialog and ``liyuan story export`` call):

* :class:`BookOptions` — title, subtitle, author, language, cover image, which chapters, numbered titles, table of
  contents, full-width indentation, what to do about flagged words;
* :func:`preview_chapters` — the chapter list the dialog shows (number, file, title and where the title came from,
  字数, selected or not);
* :func:`export_book` (``fmt`` = ``epub`` | ``docx`` | ``md`` | ``txt``), or one function per format:
  :func:`export_epub`, :func:`export_docx`, :func:`export_markdown`, :func:`export_text`, and
  :func:`export_chapter_files` (one ``.txt`` per chapter into a folder);
* the word list: :func:`word_list_path` (per book: ``屏蔽词.txt`` in the chat folder), :func:`book_word_list`,
  :func:`read_word_list`,
  :func:`find_flagged_words` (every hit: chapter, line, word, context; Aho–Corasick, linear in the text).

**Chapters** are the files of ``正文/`` in file-name order — the same files the checkpoints see
(:func:`.checkpoint_model.scan_chapters`) — numbered 1… in that order (the numbers :attr:`BookOptions.chapters`
and ``--chapters 1-3,5`` pick by). **A chapter's title** is, first found: the outline's title for the file
(:func:`outline_titles`), the file's own first heading, the title in its file name (``001-雨夜.md`` → 雨夜), else
第N章 / Chapter N. **No doubled headings**: a chapter file whose first non-blank line is a heading of its own — a
Markdown ``#`` … ``###`` line or a 第N章 / Chapter N line (:func:`.chapters.split_text_into_chapters`'s rule) — has
that line taken as its heading, so the book shows one heading per chapter, never 「## 第1章」 then 「第1章 雨夜」.

**The book's title and author** (issue 17): a chat made without a title is named after the time it was made
(「对话-20261201-215600」), which is no title for a book. :func:`book_meta` reads the chat's header beside the chapter
folder: a title given in the options wins, then the chat's title when the user gave one, then the card's name; the
author is the one given, else the persona the chat was written as (none for the anonymous 「你」).

**Hostile text**: chapter text is the model's. EPUB and DOCX never carry it as markup: every block is escaped text
with only *italic* / **bold** runs, ``###`` sub-headings and ``---`` scene breaks made from it (:func:`text_blocks`),
so a ``<script>`` or ``<img src=http…>`` in a chapter is shown as the characters it is and nothing loads. Markdown and
plain text are text files and keep the chapter's text as written.

The book's own labels (作者 / by, 目录 / Contents, 第N章 / Chapter N) follow the *book's* language, not the window's
(:data:`BOOK_LABELS`); errors are catalog messages (``export.*`` in core/messages.py).
"""

from __future__ import annotations

import hashlib
import html
import logging
import re
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..fsutil import atomic_write_bytes, atomic_write_text
from ..messages import message
from ..session.tree import SessionError, SessionTree
from ..text import count_words
from .chapters import chapter_filename, split_text_into_chapters
from .checkpoint_model import scan_chapters, warn_ignored_once
from .checkpoints import read_nofollow
from .layout import side_file
from .outline import read_outline

log = logging.getLogger(__name__)

_NAME = re.compile(r"^\d+[-_ ]*")
#: the names a chat gets when none is given (library.new_chat_dir, numbered when taken)
_GENERATED = re.compile(r"^(?:对话|Chat)-\d{8}-\d{6}(?:-\d+)?$")  # name.chat, either language

#: The formats :func:`export_book` writes (file extension = format name).
BOOK_FORMATS = ("epub", "docx", "md", "txt")
#: The per-book word list's file name in the chat folder (beside ``大纲.md``; :func:`word_list_path`).
WORD_LIST_FILE = "屏蔽词.txt"
#: Bounds of a word list: file size (bytes), number of words, characters of one word.
WORD_LIST_MAX_BYTES = 2 * 1024 * 1024
WORD_LIST_MAX_WORDS = 100_000
WORD_MAX_CHARS = 100
#: Largest cover image accepted (bytes).
COVER_MAX_BYTES = 20 * 1024 * 1024
#: Characters of context either side of a flagged word.
HIT_CONTEXT = 12
#: The full-width indentation of a web-novel paragraph.
INDENT = "\u3000\u3000"

#: The book's own words in the book's language (``zh`` for Chinese, ``en`` for every other language).
BOOK_LABELS: dict[str, dict[str, str]] = {
    "zh": {"by": "作者：{author}", "toc": "目录", "chapter": "第{n}章", "cover": "封面", "title_page": "书名页"},
    "en": {"by": "by {author}", "toc": "Contents", "chapter": "Chapter {n}", "cover": "Cover", "title_page": "Title page"},
}


# -- options and the chapter list ---------------------------------------------------------------------------------
class BookOptions(BaseModel):
    """How to export a book. Every field has a default, so ``BookOptions()`` is the whole book as before.

    * ``title`` / ``subtitle`` / ``author``: "" = from the chat (:func:`book_meta`; no subtitle);
    * ``language``: a BCP 47 tag (``zh``, ``zh-Hans``, ``en``…; anything else is a ValueError,
      ``export.bad_language``); "" = guessed from the chapters' text (CJK → zh);
    * ``cover``: a PNG or JPEG file (≤ :data:`COVER_MAX_BYTES`), None = no cover;
    * ``chapters``: 1-based chapter numbers (:func:`preview_chapters` order) to include; None = all
      (:func:`parse_chapter_spec` reads ``1-3,5``);
    * ``number_titles``: put 第N章 / Chapter N in front of a title that does not already start with one;
    * ``toc``: a table of contents (EPUB: the nav page in the reading order; DOCX: a TOC field Word fills in;
      Markdown / text: a list of titles). The EPUB nav and NCX documents are written either way (EPUB 3 needs them);
    * ``indent``: plain text and the per-chapter files start each paragraph with 「　　」;
    * ``words``: the author's flagged words (:func:`read_word_list`); ``flagged``: what an export does when a chosen
      chapter contains one — ``warn`` (write, and :func:`export_book` returns the hits) or ``refuse``
      (:class:`FlaggedWordsError`, nothing written)."""

    model_config = ConfigDict(extra="forbid")

    title: str = ""
    subtitle: str = ""
    author: str = ""
    language: str = ""
    cover: Optional[Path] = None
    chapters: Optional[list[int]] = None
    number_titles: bool = False
    toc: bool = True
    indent: bool = True
    words: list[str] = Field(default_factory=list)
    flagged: Literal["warn", "refuse"] = "warn"


TitleSource = Literal["outline", "heading", "file", "number"]


class ChapterPreview(BaseModel):
    """One chapter as the export dialog lists it: ``number`` (1-based, file-name order), ``file`` (name in
    ``正文/``), ``title`` (as exported, numbered when the options say so), ``source`` (where the title came from:
    outline | heading | file | number), ``own_heading`` (the file starts with its own heading, which becomes the
    chapter heading), ``words`` (字数, :func:`core.text.count_words`, heading excluded), ``selected``."""

    number: int
    file: str
    title: str
    source: TitleSource
    own_heading: bool = False
    words: int = 0
    selected: bool = True


class BookChapter(BaseModel):
    """A chapter ready to write: its :class:`ChapterPreview` fields plus ``body`` (the text without its own heading,
    trimmed)."""

    number: int
    file: str
    title: str
    source: TitleSource
    body: str


class Book(BaseModel):
    """What every writer writes: the resolved metadata and the chosen chapters (:func:`load_book`)."""

    title: str
    subtitle: str = ""
    author: str = ""
    language: str = "zh"
    identifier: str
    cover: Optional[Path] = None
    toc: bool = True
    indent: bool = True
    chapters: list[BookChapter] = Field(default_factory=list)

    def label(self, key: str, **params: object) -> str:
        """A :data:`BOOK_LABELS` word in the book's language."""
        table = BOOK_LABELS["zh" if self.language.lower().startswith("zh") else "en"]
        return table[key].format(**params)


class WordHit(BaseModel):
    """One flagged word found: ``chapter`` (1-based number), ``file``, ``title``, ``line`` (1-based line of the
    chapter file), ``column`` (0-based, characters — code points), ``word`` (as listed), ``context`` (the line around
    it, :data:`HIT_CONTEXT` characters either side)."""

    chapter: int
    file: str
    title: str
    line: int
    column: int
    word: str
    context: str


class BookExport(BaseModel):
    """What :func:`export_book` / :func:`export_chapter_files` did: the ``files`` written, the ``chapters`` count and
    the flagged-word ``hits`` found in them (empty without a word list)."""

    files: list[Path]
    chapters: int
    hits: list[WordHit] = Field(default_factory=list)


class FlaggedWordsError(ValueError):
    """The export was refused (``flagged="refuse"``) because chosen chapters contain flagged words; ``hits`` lists
    them. Its first argument is a catalog message (``export.flagged_refused``)."""

    def __init__(self, hits: list[WordHit]):
        words = sorted({h.word for h in hits})
        super().__init__(message("export.flagged_refused", n=len(hits), words=words[:10]))
        self.hits = hits


def parse_chapter_spec(spec: str) -> list[int]:
    """``"1-3,5"`` → ``[1, 2, 3, 5]`` (1-based chapter numbers, sorted, no duplicates; spaces and 、，, as separators;
    ``-`` / ``~`` / ``–`` for ranges). Raises ValueError (``export.bad_chapters``) for anything else, a range that
    runs backwards, or more than 100,000 numbers."""
    out: set[int] = set()
    parts = [p.strip() for p in re.split(r"[,，、\s]+", spec or "") if p.strip()]
    if not parts:
        raise ValueError(message("export.bad_chapters", spec=spec))
    for p in parts:
        m = re.fullmatch(r"(\d{1,6})(?:\s*[-~–—]\s*(\d{1,6}))?", p)
        if not m:
            raise ValueError(message("export.bad_chapters", spec=spec))
        a = int(m[1])
        b = int(m[2]) if m[2] else a
        if a < 1 or b < a or len(out) + (b - a) > 100_000:
            raise ValueError(message("export.bad_chapters", spec=spec))
        out.update(range(a, b + 1))
    return sorted(out)


# -- metadata -----------------------------------------------------------------------------------------------------
def book_meta(story_dir: Path, title: str = "", author: str = "") -> tuple[str, str]:
    """``(title, author)`` for the book of the chat whose chapter folder is ``story_dir`` (module doc): ``title``
    unless it is empty or a generated chat name — then the chat's title when the user gave one, else the card's name
    from the chat's header (``title`` as given, else the chat folder's name, when there is no readable header);
    ``author`` unless empty — then the header's persona (empty for 「你」)."""
    header = None
    if not title.strip() or _GENERATED.match(title.strip()) or not author.strip():
        try:
            header = SessionTree.read_header(Path(story_dir).parent / "session.jsonl")
        except (SessionError, OSError):
            header = None
    if header is not None:
        if not title.strip() and header.title and not _GENERATED.match(header.title.strip()):
            title = header.title
        if (not title.strip() or _GENERATED.match(title.strip())) and header.card_name:
            title = header.card_name
        if not author.strip() and header.persona and header.persona != "你":
            author = header.persona
    return title.strip() or Path(story_dir).parent.name, author.strip()


def chapter_title(file_name: str) -> str:
    """``001-雨夜问名.md`` → ``雨夜问名`` (the number prefix and extension dropped; the name itself if nothing is left)."""
    stem = Path(file_name).stem
    return _NAME.sub("", stem) or stem


def outline_titles(chat_dir: Path) -> dict[str, str]:
    """``{chapter file name: title}`` for the outline chapters linked to a file — by stable id through the links
    sidecar ``大纲链接.json`` (so a renamed file keeps its outline title), else a hand-written ``file=`` attribute of
    ``大纲.md`` (:func:`.links.resolve`); {} without an outline. The one place the export maps files to outline
    entries. Reads only (a link healed by hash is not written back here)."""
    from .layout import story_dir
    from .links import load_links, resolve

    try:
        o = read_outline(Path(chat_dir))
        if o is None:
            return {}
        files, _links, _healed = resolve(o, load_links(Path(chat_dir)), story_dir(chat_dir))
    except OSError:
        return {}
    out: dict[str, str] = {}
    for c in o.chapters():
        f = files.get(c.id or f"#{c.index}")
        if f and c.title.strip():
            out.setdefault(f, c.title.strip())
    return out


_MD_HEADING = re.compile(r"^[ \t]{0,3}(#{1,3})[ \t]+(.*?)[ \t]*#*[ \t]*$")


def own_heading(text: str) -> tuple[Optional[str], str]:
    """``(heading, rest)`` when the first non-blank line of a chapter's ``text`` is a heading of its own — a Markdown
    ``#``/``##``/``###`` line (the marks dropped) or a 第N章 / Chapter N line (as written) — with ``rest`` the text
    after it; ``(None, text)`` otherwise."""
    stripped = text.lstrip("\ufeff")
    lines = stripped.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None, text
    first = lines[i].rstrip("\r")
    m = _MD_HEADING.match(first)
    heading: Optional[str] = None
    if m and m[2].strip():
        heading = m[2].strip()
    elif len(first) <= 80:
        parts = split_text_into_chapters(first)
        if len(parts) == 1 and parts[0][0] and not parts[0][1].strip():
            heading = parts[0][0]
    if heading is None:
        return None, text
    return heading, "\n".join(lines[i + 1:])


def _is_numbered(title: str) -> bool:
    parts = split_text_into_chapters(title)
    return len(parts) == 1 and bool(parts[0][0]) and not parts[0][1].strip()


def _raw_chapters(story_dir: Path) -> list[tuple[str, str]]:
    """``[(file name, text)]`` of the chapters in file-name order — the same files the checkpoints see
    (:func:`.checkpoint_model.scan_chapters`: links are never followed, hidden and bidi-control names are left out;
    each left-out ``.md`` entry is logged once). Undecodable bytes become U+FFFD; line ends become ``\\n``."""
    entries, ignored = scan_chapters(story_dir)
    warn_ignored_once(story_dir, ignored)
    out = []
    for e in entries:
        try:
            data = read_nofollow(e.path)
        except OSError:  # vanished or swapped for a link since the listing
            continue
        out.append((e.name, data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")))
    return out


def _guess_language(texts: list[str]) -> str:
    sample = "".join(t[:4000] for t in texts[:20])
    cjk = sum(1 for c in sample if "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff")
    latin = sum(1 for c in sample if c.isascii() and c.isalpha())
    return "zh" if cjk * 3 >= latin or not sample.strip() else "en"


_Resolved = tuple[str, list[tuple[ChapterPreview, str, str]]]


def _resolve(story_dir: Path, options: BookOptions) -> _Resolved:
    """The book's language and every chapter as ``(preview, body, text as read)`` — the chapter files are read once
    per export; raises ValueError for a chapter number that does not exist."""
    raw = _raw_chapters(story_dir)
    language = options.language.strip() or _guess_language([t for _, t in raw])
    if not re.fullmatch(r"[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8}){0,6}", language):
        raise ValueError(message("export.bad_language", language=language))
    zh = language.lower().startswith("zh")
    titles = outline_titles(Path(story_dir).parent)
    wanted = None if options.chapters is None else set(options.chapters)
    if wanted is not None:
        missing = sorted(n for n in wanted if n < 1 or n > len(raw))
        if missing:
            raise ValueError(message("export.no_such_chapter", numbers=[str(n) for n in missing[:10]], total=len(raw)))
    out: list[tuple[ChapterPreview, str, str]] = []
    for n, (name, text) in enumerate(raw, 1):
        heading, body = own_heading(text)
        from_file = chapter_title(name)
        source: TitleSource
        if titles.get(name):
            title, source = titles[name], "outline"
        elif heading:
            title, source = heading, "heading"
        elif from_file and not from_file.isdigit():
            title, source = from_file, "file"
        else:
            title, source = (f"第{n}章" if zh else f"Chapter {n}"), "number"
        title = " ".join(_XML_BAD.sub("", title).split())  # one line, nothing XML refuses
        if options.number_titles and source != "number" and not _is_numbered(title):
            title = (f"第{n}章 " if zh else f"Chapter {n}: ") + title
        body = body.strip("\n").rstrip()
        out.append((ChapterPreview(number=n, file=name, title=title, source=source, own_heading=heading is not None,
                                   words=count_words(body), selected=wanted is None or n in wanted), body, text))
    return language, out


def preview_chapters(story_dir: Path, options: Optional[BookOptions] = None) -> list[ChapterPreview]:
    """Every chapter of ``story_dir`` (``<chat>/正文``) as the export would title it, with ``selected`` after
    ``options.chapters`` (module doc). Raises ValueError (``export.no_such_chapter``) when the options name a chapter
    number that does not exist."""
    return [p for p, _b, _t in _resolve(Path(story_dir), options or BookOptions())[1]]


def load_book(story_dir: Path, options: Optional[BookOptions] = None) -> Book:
    """The book every writer writes: metadata resolved (:func:`book_meta`, language guessed when not given) and the
    selected chapters with their titles and bodies (own heading taken out). Raises ValueError for a bad chapter
    number, no chapter to export (``export.no_chapters``) or a bad cover (``export.bad_cover``)."""
    options = options or BookOptions()
    return _book(Path(story_dir), options, _resolve(Path(story_dir), options))


def _book(story_dir: Path, options: BookOptions, resolved: _Resolved) -> Book:
    """:func:`load_book` from chapters already read."""
    title, author = (" ".join(_XML_BAD.sub("", t).split()) for t in book_meta(story_dir, options.title, options.author))
    language, chapters = resolved
    chosen = [BookChapter(number=p.number, file=p.file, title=p.title, source=p.source, body=b)
              for p, b, _t in chapters if p.selected]
    if not chosen:
        raise ValueError(message("export.no_chapters", dir=str(story_dir)))
    if options.cover is not None:
        cover_bytes(options.cover)  # fails before anything is written
    ident = "liyuan-" + hashlib.sha256(f"{title}\n{story_dir.resolve()}".encode()).hexdigest()[:16]
    return Book(title=title, subtitle=" ".join(_XML_BAD.sub("", options.subtitle).split()), author=author, language=language, identifier=ident,
                cover=options.cover, toc=options.toc, indent=options.indent, chapters=chosen)


def cover_bytes(path: Path) -> tuple[bytes, str]:
    """``(data, media type)`` of a cover image: PNG or JPEG by its first bytes (not its name), at most
    :data:`COVER_MAX_BYTES`. Raises ValueError (``export.bad_cover``) otherwise, OSError when it cannot be read."""
    p = Path(path)
    if p.stat().st_size > COVER_MAX_BYTES:
        raise ValueError(message("export.bad_cover", path=str(p)))
    data = p.read_bytes()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data, "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return data, "image/jpeg"
    raise ValueError(message("export.bad_cover", path=str(p)))


# -- text into blocks ---------------------------------------------------------------------------------------------
_RUN = re.compile(r"(\*\*[^*\n]+\*\*|\*[^*\n]+\*)")
#: characters XML 1.0 refuses (C0 controls but tab and line feed, and the two non-characters U+FFFE/U+FFFF)
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SCENE_BREAK = re.compile(r"^\s*(?:[-*_]\s*){3,}$")

Run = tuple[str, bool, bool]  # (text, bold, italic)


class Block(BaseModel):
    """One block of a chapter: ``kind`` p (a paragraph; ``lines`` kept apart) | h (a ``###`` sub-heading) | hr (a
    scene break), ``runs`` per line as ``(text, bold, italic)``."""

    kind: Literal["p", "h", "hr"]
    lines: list[list[Run]] = Field(default_factory=list)


def runs(line: str) -> list[Run]:
    """``*italic*`` and ``**bold**`` runs of one line (the marks dropped); everything else plain text."""
    out: list[Run] = []
    for piece in _RUN.split(line):
        if piece.startswith("**") and piece.endswith("**") and len(piece) > 4:
            out.append((piece[2:-2], True, False))
        elif piece.startswith("*") and piece.endswith("*") and len(piece) > 2:
            out.append((piece[1:-1], False, True))
        elif piece:
            out.append((piece, False, False))
    return out


def text_blocks(text: str) -> list[Block]:
    """A chapter's (or a message's) text as blocks: blank lines separate paragraphs, a line of ``---`` / ``***`` is a
    scene break, a ``#``… line a sub-heading; characters XML refuses are dropped. The writers build their markup
    from these only, so no markup in ``text`` survives as markup."""
    blocks: list[Block] = []
    cur: list[list[Run]] = []

    def flush() -> None:
        if cur:
            blocks.append(Block(kind="p", lines=list(cur)))
            cur.clear()

    for raw in _XML_BAD.sub("", text).split("\n"):
        line = raw.rstrip()
        if not line.strip():
            flush()
        elif _SCENE_BREAK.match(line):
            flush()
            blocks.append(Block(kind="hr"))
        elif (m := _MD_HEADING.match(line)) and m[2].strip():
            flush()
            blocks.append(Block(kind="h", lines=[runs(m[2].strip())]))
        else:
            cur.append(runs(line.strip(" \t")))
    flush()
    return blocks


def blocks_html(blocks: list[Block], heading_tag: str = "h3") -> str:
    """XHTML for :func:`text_blocks` output: every text escaped, ``<p>`` with ``<br/>`` between lines,
    ``<strong>``/``<em>`` runs, ``<hr/>``, sub-headings as ``heading_tag``."""
    def line_html(line: list[Run]) -> str:
        parts = []
        for t, bold, italic in line:
            e = html.escape(t, quote=False)
            parts.append(f"<strong>{e}</strong>" if bold else f"<em>{e}</em>" if italic else e)
        return "".join(parts)

    out = []
    for b in blocks:
        if b.kind == "hr":
            out.append('<hr class="scene"/>')
        elif b.kind == "h":
            out.append(f"<{heading_tag}>{line_html(b.lines[0])}</{heading_tag}>")
        else:
            out.append("<p>" + "<br/>".join(line_html(ln) for ln in b.lines) + "</p>")
    return "\n".join(out)


def plain_paragraphs(text: str) -> list[str]:
    """A chapter's text as web-novel paragraphs: every non-blank line is one paragraph, its leading spaces and
    full-width spaces dropped and its ``*``/``**`` emphasis marks removed; a scene break line becomes ``* * *``."""
    out = []
    for raw in _XML_BAD.sub("", text).split("\n"):
        line = raw.strip(" \t\u3000")
        if not line:
            continue
        if _SCENE_BREAK.match(line):
            out.append("* * *")
            continue
        m = _MD_HEADING.match(line)
        if m and m[2].strip():
            line = m[2].strip()
        out.append("".join(t for t, _b, _i in runs(line)))
    return out


# -- flagged words ------------------------------------------------------------------------------------------------
def word_list_path(chat_dir: Path) -> Path:
    """Where a book keeps its flagged-word list: ``<chat folder>/屏蔽词.txt``, beside ``大纲.md`` — per book, because
    each book is published on its own platform, whose rules differ (one platform flags what another allows), and
    the list travels with the book's folder; it is no chapter (not in ``正文/``). ``flagged-words.txt`` in the
    English layout (:func:`.layout.side_file`)."""
    return side_file(chat_dir, WORD_LIST_FILE)


def book_word_list(chat_dir: Path) -> list[str]:
    """The book's own flagged words (:func:`word_list_path`, read by :func:`read_word_list`); [] when it has none.
    Raises as :func:`read_word_list` for a list that is there but unreadable or too big."""
    p = word_list_path(chat_dir)
    return read_word_list(p) if p.is_file() else []


def read_word_list(path: Path) -> list[str]:
    """The words of a word-list file: one per line (a line may also hold several separated by ``,`` ``，`` ``、``
    or ``|``), blank lines and lines starting with ``#`` skipped, words trimmed, duplicates dropped, order kept.
    Bounded: at most :data:`WORD_LIST_MAX_BYTES` bytes, :data:`WORD_LIST_MAX_WORDS` words, a word longer than
    :data:`WORD_MAX_CHARS` characters is skipped. Raises ValueError (``export.words_too_big``) for a bigger file,
    OSError when it cannot be read."""
    p = Path(path)
    if p.stat().st_size > WORD_LIST_MAX_BYTES:
        raise ValueError(message("export.words_too_big", path=str(p), max=WORD_LIST_MAX_BYTES // (1024 * 1024)))
    text = p.read_bytes().decode("utf-8-sig", errors="replace")
    seen: dict[str, None] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        for w in re.split(r"[,，、|]", s):
            w = w.strip()
            if w and len(w) <= WORD_MAX_CHARS:
                seen.setdefault(w, None)
                if len(seen) >= WORD_LIST_MAX_WORDS:
                    return list(seen)
    return list(seen)


def _fold(text: str) -> str:
    """Lower case, one character for one (so offsets stay those of ``text``)."""
    return "".join(c if len(lc := c.lower()) != 1 else lc for c in text)


class WordMatcher:
    """Every occurrence of any of ``words`` in a text, in one pass (Aho–Corasick, ``pyahocorasick``): case-insensitive
    for letters with a lower case; a word that starts / ends with an ASCII letter or digit matches only on a word
    boundary there ("ass" is not in "class"), CJK words match anywhere. Overlapping hits are all reported."""

    def __init__(self, words: list[str]):
        import ahocorasick  # late: loaded only when a word list is checked

        self.words = [w for w in dict.fromkeys(w.strip() for w in words) if w]
        self._a = ahocorasick.Automaton()
        for w in self.words:
            key = _fold(w)
            if self._a.exists(key):
                continue
            self._a.add_word(key, w)
        self._empty = not self.words
        if not self._empty:
            self._a.make_automaton()

    def find(self, text: str) -> list[tuple[int, str]]:
        """``[(start, word)]`` (start in characters) in order of their end."""
        if self._empty:
            return []
        folded = _fold(text)
        out = []
        for end, word in self._a.iter(folded):
            start = end - len(word) + 1
            if word[0].isascii() and word[0].isalnum() and start > 0 and folded[start - 1].isascii() \
                    and folded[start - 1].isalnum():
                continue
            if word[-1].isascii() and word[-1].isalnum() and end + 1 < len(folded) and folded[end + 1].isascii() \
                    and folded[end + 1].isalnum():
                continue
            out.append((start, word))
        return out


def find_flagged_words(story_dir: Path, words: list[str], options: Optional[BookOptions] = None) -> list[WordHit]:
    """Every flagged word in the chapters ``options`` selects (all by default), titles included, in book order:
    :class:`WordHit` per occurrence (line 1 = the chapter file's first line; a title from the outline or the file
    name is checked as line 0). Linear in the text (:class:`WordMatcher`). [] when ``words`` is empty."""
    matcher = WordMatcher(words)
    if not matcher.words:
        return []
    return _hits(matcher, _resolve(Path(story_dir), options or BookOptions()))


def _hits(matcher: WordMatcher, resolved: _Resolved) -> list[WordHit]:
    hits: list[WordHit] = []
    for p, _body, text in resolved[1]:
        if not p.selected:
            continue
        if not p.own_heading:
            for start, w in matcher.find(p.title):
                hits.append(_hit(p, 0, start, w, p.title))
        for ln, line in enumerate(text.split("\n"), 1):
            for start, w in matcher.find(line):
                hits.append(_hit(p, ln, start, w, line))
    return hits


def _hit(p: ChapterPreview, line_no: int, start: int, word: str, line: str) -> WordHit:
    a, b = max(0, start - HIT_CONTEXT), min(len(line), start + len(word) + HIT_CONTEXT)
    ctx = ("…" if a > 0 else "") + line[a:b].strip() + ("…" if b < len(line) else "")
    return WordHit(chapter=p.number, file=p.file, title=p.title, line=line_no, column=start, word=word, context=ctx)


def _prepare(story_dir: Path, options: BookOptions) -> tuple[Book, list[WordHit]]:
    """The book (:func:`load_book`) and the hits of ``options.words``, the chapters read once; raises
    :class:`FlaggedWordsError` when there are hits and the options refuse (before anything is written)."""
    resolved = _resolve(Path(story_dir), options)
    hits = _hits(WordMatcher(options.words), resolved) if options.words else []
    if hits and options.flagged == "refuse":
        raise FlaggedWordsError(hits)
    return _book(Path(story_dir), options, resolved), hits


def _opts(options: Optional[BookOptions], title: str, author: str) -> BookOptions:
    o = options or BookOptions()
    upd = {k: v for k, v in (("title", title), ("author", author)) if v and not getattr(o, k)}
    return o.model_copy(update=upd) if upd else o


# -- the writers --------------------------------------------------------------------------------------------------
def export_markdown(story_dir: Path, out: Path, title: str = "", author: str = "", *,
                    options: Optional[BookOptions] = None) -> Path:
    """One Markdown file: ``# title``, the subtitle, 「作者：author」 / "by author" when there is one, a contents list
    when ``toc``, then ``## chapter title`` + the chapter's text as written (its own heading taken out) for each
    chosen chapter. ``title``/``author``: shorthands for the options' fields (the options win when they set them).
    Raises ValueError (bad options, no chapters, flagged words refused), OSError (disk)."""
    o = _opts(options, title, author)
    return _write_markdown(_prepare(Path(story_dir), o)[0], Path(out))


def _write_markdown(book: Book, out: Path) -> Path:
    parts = [f"# {book.title}\n"]
    if book.subtitle:
        parts.append(f"{book.subtitle}\n")
    if book.author:
        parts.append(book.label("by", author=book.author) + "\n")
    if book.toc and len(book.chapters) > 1:
        parts.append("\n".join(f"- {c.title}" for c in book.chapters) + "\n")
    for c in book.chapters:
        parts.append(f"## {c.title}\n\n{c.body}\n" if c.body else f"## {c.title}\n")
    atomic_write_text(out, "\n".join(parts))
    return Path(out)


def _text_chapter(c: BookChapter, indent: bool) -> str:
    pre = INDENT if indent else ""
    paras = [p if p == "* * *" else pre + p for p in plain_paragraphs(c.body)]
    return c.title + "\n\n" + "\n\n".join(paras) + "\n"


def export_text(story_dir: Path, out: Path, title: str = "", author: str = "", *,
                options: Optional[BookOptions] = None) -> Path:
    """One plain-text file (UTF-8): the title, subtitle and author lines, a contents list when ``toc``, then each
    chosen chapter as its title line and its paragraphs (:func:`plain_paragraphs`) separated by a blank line,
    indented with 「　　」 when ``indent``. Errors as :func:`export_markdown`."""
    o = _opts(options, title, author)
    return _write_text(_prepare(Path(story_dir), o)[0], Path(out))


def _write_text(book: Book, out: Path) -> Path:
    head = [book.title] + ([book.subtitle] if book.subtitle else []) + (
        [book.label("by", author=book.author)] if book.author else [])
    parts = ["\n".join(head) + "\n"]
    if book.toc and len(book.chapters) > 1:
        parts.append(book.label("toc") + "\n" + "\n".join(c.title for c in book.chapters) + "\n")
    parts += [_text_chapter(c, book.indent) for c in book.chapters]
    atomic_write_text(out, "\n\n".join(parts))
    return Path(out)


def export_chapter_files(story_dir: Path, out_dir: Path, options: Optional[BookOptions] = None) -> BookExport:
    """One ``.txt`` per chosen chapter in ``out_dir`` (made when missing), ready to paste into a web-novel platform's
    editor: the title line, a blank line, then the paragraphs separated by a blank line, each indented with 「　　」
    when ``indent``. Files are named ``NNN-title.txt`` (:func:`.chapters.chapter_filename`, the chapter number);
    an existing file of that name is replaced. Returns the files and the flagged-word hits (``warn``); raises
    :class:`FlaggedWordsError` (``refuse``, nothing written) and errors as :func:`export_markdown`."""
    book, hits = _prepare(Path(story_dir), options or BookOptions())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    width = max(3, len(str(book.chapters[-1].number)))
    files = []
    for c in book.chapters:
        p = out_dir / (chapter_filename(c.number, c.title, width)[:-3] + ".txt")
        atomic_write_text(p, _text_chapter(c, book.indent))
        files.append(p)
    return BookExport(files=files, chapters=len(book.chapters), hits=hits)


_EPUB_CSS = ("body{line-height:1.7;margin:0 4%}h1,h2{text-align:center;margin:2em 0 1em}"
             "p{margin:0 0 .6em}hr.scene{border:0;text-align:center;margin:1.2em 0}"
             ".title-page{text-align:center;margin-top:25%}.subtitle{font-size:1.2em}.author{margin-top:2em}"
             ".cover{text-align:center;margin:0;padding:0}.cover img{max-width:100%;max-height:100%}")


def export_epub(story_dir: Path, out: Path, title: str = "", author: str = "", *,
                options: Optional[BookOptions] = None) -> Path:
    """An EPUB 3 book (ebooklib) that passes epubcheck: metadata (dc:title, dc:creator, dc:language, dc:identifier,
    the subtitle as a second dc:title refined as ``subtitle``), the cover image (manifest property ``cover-image``,
    a cover page first in the reading order), a title page, the nav document (in the reading order when ``toc``)
    and the NCX, one XHTML document per chosen chapter (``<h2>`` title, then :func:`text_blocks` as escaped XHTML),
    a small stylesheet. Errors as :func:`export_markdown`."""
    o = _opts(options, title, author)
    return _write_epub(_prepare(Path(story_dir), o)[0], Path(out))


def _write_epub(book: Book, out: Path) -> Path:
    from ebooklib import epub  # late: the EPUB/DOCX writers are loaded only when a book is exported (start-up time)

    lang = book.language
    eb = epub.EpubBook()
    eb.set_identifier(book.identifier)
    eb.set_title(book.title)
    eb.set_language(lang)
    if book.subtitle:
        eb.add_metadata("DC", "title", book.subtitle, {"id": "subtitle"})
        eb.add_metadata(None, "meta", "subtitle", {"refines": "#subtitle", "property": "title-type"})
    if book.author:
        eb.add_author(book.author)
    css = epub.EpubItem(uid="style", file_name="style/book.css", media_type="text/css", content=_EPUB_CSS.encode())
    eb.add_item(css)
    spine: list[object] = []
    if book.cover is not None:
        data, media = cover_bytes(book.cover)
        name = "cover.png" if media == "image/png" else "cover.jpg"
        eb.set_cover(name, data, create_page=False)
        page = epub.EpubHtml(title=book.label("cover"), file_name="cover.xhtml", lang=lang)
        page.content = f'<div class="cover"><img src="{name}" alt="{html.escape(book.title)}"/></div>'
        page.add_item(css)
        eb.add_item(page)
        spine.append(page)
    tp = epub.EpubHtml(title=book.label("title_page"), file_name="title.xhtml", lang=lang)
    tp.content = ('<div class="title-page">' f"<h1>{html.escape(book.title)}</h1>"
                  + (f'<p class="subtitle">{html.escape(book.subtitle)}</p>' if book.subtitle else "")
                  + (f'<p class="author">{html.escape(book.author)}</p>' if book.author else "") + "</div>")
    tp.add_item(css)
    eb.add_item(tp)
    spine.append(tp)
    if book.toc:
        spine.append("nav")
    items = []
    for i, c in enumerate(book.chapters, 1):
        ch = epub.EpubHtml(title=c.title, file_name=f"chap_{i:03d}.xhtml", lang=lang)
        ch.content = f"<h2>{html.escape(c.title, quote=False)}</h2>\n" + blocks_html(text_blocks(c.body))
        ch.add_item(css)
        eb.add_item(ch)
        items.append(ch)
    eb.toc = items
    eb.spine = spine + items
    eb.add_item(epub.EpubNcx())
    nav = epub.EpubNav()
    nav.title = book.label("toc")
    eb.add_item(nav)
    tmp = Path(out).with_name(f".{Path(out).name}.part")
    epub.write_epub(str(tmp), eb, {"epub3_pages": False})
    atomic_write_bytes(out, tmp.read_bytes())
    tmp.unlink(missing_ok=True)
    return Path(out)


def _docx_toc(doc: object) -> None:
    """A Word table-of-contents field over Heading 1 (Word fills it in when the file opens: ``updateFields``)."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    par = doc.add_paragraph()  # type: ignore[attr-defined]
    run = par.add_run()
    for kind, text in (("begin", None), (None, 'TOC \\o "1-1" \\h \\z \\u'), ("separate", None), ("end", None)):
        if kind is None:
            instr = OxmlElement("w:instrText")
            instr.set(qn("xml:space"), "preserve")
            instr.text = text
            run._r.append(instr)
        else:
            fld = OxmlElement("w:fldChar")
            fld.set(qn("w:fldCharType"), kind)
            run._r.append(fld)
    settings = doc.settings.element  # type: ignore[attr-defined]
    upd = OxmlElement("w:updateFields")
    upd.set(qn("w:val"), "true")
    settings.append(upd)


def export_docx(story_dir: Path, out: Path, title: str = "", author: str = "", *,
                options: Optional[BookOptions] = None) -> Path:
    """A DOCX (python-docx): a title page (the cover image when given, the title as *Title*, the subtitle as
    *Subtitle*, the author line; title, subtitle and author in the document properties too), a table-of-contents
    field when ``toc`` (Word fills it in on opening), then each chosen chapter on a new page with its title as
    *Heading 1* and one paragraph per :func:`text_blocks` paragraph (lines joined by line breaks, *italic* and
    **bold** runs, ``###`` as *Heading 2*). Errors as :func:`export_markdown`."""
    o = _opts(options, title, author)
    return _write_docx(_prepare(Path(story_dir), o)[0], Path(out))


def _write_docx(book: Book, out: Path) -> Path:
    import docx  # late: loaded only when a book is exported (start-up time)
    from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
    from docx.shared import Inches

    d = docx.Document()
    d.core_properties.title = book.title
    d.core_properties.subject = book.subtitle
    d.core_properties.author = book.author
    d.core_properties.language = book.language
    if book.cover is not None:
        import io

        d.add_picture(io.BytesIO(cover_bytes(book.cover)[0]), width=Inches(4.5))
    d.add_heading(book.title, 0)
    if book.subtitle:
        d.add_paragraph(book.subtitle, style="Subtitle")
    if book.author:
        d.add_paragraph(book.label("by", author=book.author))
    if book.toc:
        d.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
        d.add_paragraph(book.label("toc"), style="TOC Heading" if "TOC Heading" in [s.name for s in d.styles]
                        else None)
        _docx_toc(d)
    for c in book.chapters:
        h = d.add_heading(_XML_BAD.sub("", c.title), 1)
        h.paragraph_format.page_break_before = True
        for b in text_blocks(c.body):
            if b.kind == "hr":
                d.add_paragraph("* * *").alignment = WD_ALIGN_PARAGRAPH.CENTER
                continue
            p = d.add_heading(level=2) if b.kind == "h" else d.add_paragraph()
            for k, line in enumerate(b.lines):
                if k:
                    p.add_run().add_break()
                for t, bold, italic in line:
                    r = p.add_run(t)
                    r.bold = bold or None
                    r.italic = italic or None
    tmp = Path(out).with_name(f".{Path(out).name}.part")
    d.save(str(tmp))
    atomic_write_bytes(out, tmp.read_bytes())
    tmp.unlink(missing_ok=True)
    return Path(out)


_WRITERS = {"epub": _write_epub, "docx": _write_docx, "md": _write_markdown, "txt": _write_text}


def export_book(story_dir: Path, fmt: str, out: Path, options: Optional[BookOptions] = None) -> BookExport:
    """Write the book of ``story_dir`` (``<chat>/正文``) as ``fmt`` (:data:`BOOK_FORMATS`: epub | docx | md | txt) to
    ``out``, after the flagged-word check: returns the file, the chapter count and the hits (``warn``). Raises
    KeyError for an unknown format, :class:`FlaggedWordsError` (``refuse``; nothing written), ValueError for bad
    options (chapter numbers, cover) or no chapters, OSError when a file cannot be read or written."""
    writer = _WRITERS[fmt]
    book, hits = _prepare(Path(story_dir), options or BookOptions())
    return BookExport(files=[writer(book, Path(out))], chapters=len(book.chapters), hits=hits)


__all__ = ["BOOK_FORMATS", "BOOK_LABELS", "Block", "Book", "BookChapter", "BookExport", "BookOptions",
           "ChapterPreview", "FlaggedWordsError", "WORD_LIST_FILE", "WordHit", "WordMatcher", "blocks_html",
           "book_meta", "book_word_list", "chapter_title", "cover_bytes", "export_book", "export_chapter_files", "export_docx",
           "export_epub", "export_markdown", "export_text", "find_flagged_words", "load_book", "outline_titles",
           "own_heading", "parse_chapter_spec", "plain_paragraphs", "preview_chapters", "read_word_list", "runs",
           "text_blocks", "word_list_path"]
