"""``liyuan story export CHAT --format epub|docx|md|txt -o OUT [--title T] [--subtitle S] [--author A]
[--language L] [--cover IMG] [--chapters 1-3,5] [--no-toc] [--number-titles] [--no-indent] [--per-chapter-dir DIR]
[--words FILE] [--refuse-flagged] [--list]``: an agent chat's chapters as a book (issue 28), through
:mod:`core.story.export` — the same options the window's export dialog sets (:class:`BookOptions`).

``--per-chapter-dir DIR`` writes one plain-text file per chapter for a web-novel platform (instead of, or besides,
``-o``). The flagged-word check uses ``--words FILE``, else the book's own list (``屏蔽词.txt`` in the chat folder)
when there is one; each hit is printed to stderr; ``--refuse-flagged`` makes hits an error (nothing written, exit 2).
``--list`` prints the chapter list the export would use (number, title, where the title came from, 字数) and writes
nothing. Registered by ``cli/story.py``; errors: one ``liyuan: …`` line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import chat_folder, dumps, out, say, text

if TYPE_CHECKING:  # the engine is imported by the functions that use it: building the parser needs none of it
    from ..core.story.export import BookOptions


def add_arguments(sp: argparse.ArgumentParser) -> None:
    """The arguments of ``story export`` (module doc)."""
    sp.add_argument("chat", help=text("cli.help.story_export.0"))
    sp.add_argument("--format", choices=("epub", "docx", "md", "txt"), default="md")
    sp.add_argument("-o", "--output", help=text("cli.help.story_export.1"))
    sp.add_argument("--title", default="", help=text("cli.help.story_export.2"))
    sp.add_argument("--subtitle", default="", help=text("cli.help.story_export.3"))
    sp.add_argument("--author", default="", help=text("cli.help.story_export.4"))
    sp.add_argument("--language", default="", help=text("cli.help.story_export.5"))
    sp.add_argument("--cover", help=text("cli.help.story_export.6"))
    sp.add_argument("--chapters", help=text("cli.help.story_export.7"))
    sp.add_argument("--no-toc", action="store_true", help=text("cli.help.story_export.8"))
    sp.add_argument("--number-titles", action="store_true", help=text("cli.help.story_export.9"))
    sp.add_argument("--no-indent", action="store_true", help=text("cli.help.story_export.10"))
    sp.add_argument("--per-chapter-dir", help=text("cli.help.story_export.11"))
    sp.add_argument("--words", help=text("cli.help.story_export.12"))
    sp.add_argument("--refuse-flagged", action="store_true", help=text("cli.help.story_export.13"))
    sp.add_argument("--list", action="store_true", help=text("cli.help.story_export.14"))
    sp.add_argument("--json", action="store_true", help=text("cli.help.story_export.15"))


def _novel_info(chat_dir: Path) -> dict[str, Any]:
    """The book facts of the novel the chat at ``chat_dir`` belongs to (``core.chat.build.novel_info``: title,
    author, language), or {} for a chat of a character card or a card that cannot be read."""
    from ..core.cards import CardError, load_card
    from ..core.cards.library import card_of_chat
    from ..core.chat.build import novel_info

    ref = card_of_chat(chat_dir)
    if ref is None:
        return {}
    try:
        return novel_info(load_card(Path(ref.dir) / "card.json")) or {}
    except (CardError, OSError, ValueError):
        return {}


def _options(args: argparse.Namespace, chat_dir: Path) -> BookOptions:
    """The :class:`BookOptions` of ``args`` (the word list read here)."""
    from ..core.story.export import BookOptions, book_word_list, parse_chapter_spec, read_word_list

    words = read_word_list(Path(args.words)) if args.words else book_word_list(chat_dir)
    book = _novel_info(chat_dir)  # a novel's own title, author and language, as the window's export starts with
    return BookOptions(title=args.title or str(book.get("title") or ""), subtitle=args.subtitle,
                       author=args.author or str(book.get("author") or ""),
                       language=args.language or str(book.get("language") or ""),
                       cover=Path(args.cover) if args.cover else None,
                       chapters=parse_chapter_spec(args.chapters) if args.chapters else None,
                       toc=not args.no_toc, number_titles=args.number_titles, indent=not args.no_indent,
                       words=words, flagged="refuse" if args.refuse_flagged else "warn")


def _print_hits(hits: list[Any]) -> None:
    from ..core.messages import message

    for h in hits:
        print(f"liyuan: {say(message('export.flagged_hit', chapter=h.chapter, title=h.title, line=h.line, word=h.word, context=h.context))}",
              file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Run ``liyuan story export`` (module doc); returns the exit code. Raises ValueError / OSError for the caller's
    one-line report (a bad chat, chapter range, cover or word list; a file that cannot be written)."""
    from ..core.messages import message
    from ..core.story.export import FlaggedWordsError, export_book, export_chapter_files, preview_chapters
    from ..core.story.layout import story_dir

    d = chat_folder(args.chat)
    story = story_dir(d)  # 正文/ or chapters/ (core.story.layout)
    opts = _options(args, d)
    if args.list:
        rows = preview_chapters(story, opts)
        if args.json:
            out(dumps([r.model_dump() for r in rows], indent=1))
        for r in rows if not args.json else ():
            out(text("cli.out.export.row", mark="*" if r.selected else " ", n=r.number, title=r.title, source=r.source,
                     words=r.words, file=r.file))
        return 0
    if not args.output and not args.per_chapter_dir:
        raise ValueError(message("export.need_output"))
    try:
        hits: list[Any] = []
        if args.output:
            res = export_book(story, args.format, Path(args.output), opts)
            hits = res.hits
            out(args.output)
        if args.per_chapter_dir:
            res = export_chapter_files(story, Path(args.per_chapter_dir), opts)
            hits = hits or res.hits
            out(say(message("export.chapters_written", n=res.chapters, dir=args.per_chapter_dir)))
    except FlaggedWordsError as e:
        _print_hits(e.hits)
        print(f"liyuan: {say(e)}", file=sys.stderr)
        return 2
    if hits:
        _print_hits(hits)
        print(f"liyuan: {say(message('export.flagged_warned', n=len(hits)))}", file=sys.stderr)
    return 0
