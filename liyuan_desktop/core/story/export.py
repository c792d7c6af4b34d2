"""Export an agent-mode book: one Markdown file, EPUB (ebooklib) or DOCX (python-docx), chapters in file-name
order, titles from the file names (``NNN-标题.md`` → 标题). Markdown inside chapters is rendered with the
``markdown`` library for EPUB; DOCX gets paragraphs with *italic* and **bold** runs.

The book's title and author (issue 17): a chat made without a title is named after the time it was made
(「对话-20261201-215600」), which is no title for a book. :func:`book_meta` reads the chat's header beside the
chapter folder: a title the user gave is kept, a generated one (or none) becomes the card's name; the author is the
persona the chat was written as (none for the anonymous 「你」). Every writer applies it, so the window, ``Chat.export``
and ``liyuan story export`` agree."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..session.tree import SessionError, SessionTree
from .checkpoint_model import scan_chapters, warn_ignored_once
from .checkpoints import read_nofollow

_NAME = re.compile(r"^\d+[-_ ]*")
#: the names a chat gets when none is given (library.new_chat_dir, numbered when taken)
_GENERATED = re.compile(r"^对话-\d{8}-\d{6}(?:-\d+)?$")


def book_meta(story_dir: Path, title: str = "", author: str = "") -> tuple[str, str]:
    """``(title, author)`` for the book of the chat whose chapter folder is ``story_dir`` (module doc): ``title``
    unless it is empty or a generated chat name — then the card's name from the chat's header (``title`` as given
    when there is no readable header); ``author`` unless empty — then the header's persona (empty for 「你」)."""
    header = None
    if not title.strip() or _GENERATED.match(title.strip()) or not author.strip():
        try:
            header = SessionTree.read_header(Path(story_dir).parent / "session.jsonl")
        except (SessionError, OSError):
            header = None
    if header is not None:
        if (not title.strip() or _GENERATED.match(title.strip())) and header.card_name:
            title = header.card_name
        if not author.strip() and header.persona and header.persona != "你":
            author = header.persona
    return title.strip() or Path(story_dir).parent.name, author.strip()


def chapter_title(file_name: str) -> str:
    """``001-雨夜问名.md`` → ``雨夜问名`` (the number prefix and extension dropped; the name itself if nothing is left)."""
    stem = Path(file_name).stem
    return _NAME.sub("", stem) or stem


def _chapters(story_dir: Path) -> list[tuple[str, str]]:
    """``[(title, text)]`` of the chapters in file-name order — the same files the checkpoints see
    (:func:`.checkpoint_model.scan_chapters`: links are never followed, hidden and bidi-control names are left out;
    each left-out ``.md`` entry is logged once). Undecodable bytes become U+FFFD."""
    entries, ignored = scan_chapters(story_dir)
    warn_ignored_once(story_dir, ignored)
    out = []
    for e in entries:
        try:
            data = read_nofollow(e.path)
        except OSError:  # vanished or swapped for a link since the listing
            continue
        out.append((chapter_title(e.name), data.decode("utf-8", errors="replace")))
    return out


def export_markdown(story_dir: Path, out: Path, title: str, author: str = "") -> Path:
    """One Markdown file: ``# title`` (and 「作者：author」 when there is one; :func:`book_meta`), then
    ``## chapter`` + text for each chapter."""
    title, author = book_meta(story_dir, title, author)
    parts = [f"# {title}\n"] + ([f"作者：{author}\n"] if author else [])
    for t, text in _chapters(story_dir):
        parts.append(f"## {t}\n\n{text.strip()}\n")
    Path(out).write_text("\n".join(parts), "utf-8")
    return Path(out)


def export_epub(story_dir: Path, out: Path, title: str, author: str = "") -> Path:
    """An EPUB 3 book (ebooklib), one XHTML document per chapter, with a table of contents; title and author as
    :func:`book_meta` gives them (dc:title, dc:creator)."""
    import markdown  # late: the EPUB/DOCX writers are loaded only when a book is exported (start-up time)
    from ebooklib import epub

    title, author = book_meta(story_dir, title, author)
    book = epub.EpubBook()
    book.set_identifier("liyuan-" + hashlib.sha256(f"{title}\n{Path(story_dir).resolve()}".encode()).hexdigest()[:16])
    book.set_title(title)
    book.set_language("zh")
    if author:
        book.add_author(author)
    items = []
    for i, (t, text) in enumerate(_chapters(story_dir), 1):
        c = epub.EpubHtml(title=t, file_name=f"chap_{i:03d}.xhtml", lang="zh")
        c.content = f"<h2>{t}</h2>" + markdown.markdown(text)
        book.add_item(c)
        items.append(c)
    book.toc = items
    book.spine = ["nav", *items]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(out), book)
    return Path(out)


_RUN = re.compile(r"(\*\*[^*]+\*\*|\*[^*]+\*)")


def export_docx(story_dir: Path, out: Path, title: str, author: str = "") -> Path:
    """A DOCX (python-docx): the title (and the author under it; both in the document properties too, see
    :func:`book_meta`), a heading per chapter, one paragraph per blank-line-separated block with *italic* and
    **bold** runs."""
    import docx  # late: loaded only when a book is exported (start-up time)

    title, author = book_meta(story_dir, title, author)
    d = docx.Document()
    d.core_properties.title = title
    d.core_properties.author = author
    d.add_heading(title, 0)
    if author:
        d.add_paragraph(f"作者：{author}")
    for t, text in _chapters(story_dir):
        d.add_heading(t, 1)
        for block in re.split(r"\n\s*\n", text.strip()):
            p = d.add_paragraph()
            for piece in _RUN.split(block.replace("\n", " ")):
                if piece.startswith("**") and piece.endswith("**") and len(piece) > 4:
                    p.add_run(piece[2:-2]).bold = True
                elif piece.startswith("*") and piece.endswith("*") and len(piece) > 2:
                    p.add_run(piece[1:-1]).italic = True
                elif piece:
                    p.add_run(piece)
    d.save(str(out))
    return Path(out)
