"""The names of the folders the app makes in the data folder (issue 32): the one home of the rule — no other module
spells them.

Two layouts:

- Chinese (:data:`ZH_HOME`, the seed's; every data folder made before issue 32): ``cards/<card>/对话/<chat>/`` (and
  ``groups/<group>/对话/``), ``导入记录/`` (SillyTavern import reports), ``回收站/`` (the trash), ``预设/`` (presets),
  ``快速回复/`` (quick-reply sets), ``人设头像/`` (persona avatars), ``世界书/`` (the global world books, also
  ``<chat>/世界书/`` for a chat's own), with ``未启用/`` (switched-off books) and ``历史版本/`` (book versions a chat
  used) inside.
- English (:data:`EN_HOME`): ``chats/``, ``import-reports/``, ``trash/``, ``presets/``, ``quick-replies/``,
  ``persona-avatars/``, ``world-books/`` with ``disabled/`` and ``versions/`` inside.

Which one a data folder uses (:func:`layout_of_home`) is decided once, by what is on disk — no marker file: the
folders themselves are the record, so an existing data folder is never written to for this (read-only folders
included) and cannot disagree with its marker. In order:

1. a Chinese-named folder at the top (:data:`ZH_HOME` ``top`` names) → Chinese, for ever (every existing user's data
   keeps working, untouched: nothing is renamed or moved);
2. an English-named one at the top (``presets`` does not count: it is also the name of the pre-issue-14 preset
   folder, ``core.prompt.presets.store``) → English;
3. a card or group folder holding ``对话/`` → Chinese; one holding ``chats/`` → English;
4. none of these (a new data folder, or one with nothing in either layout yet): the layout of the reader's language
   *now* (:func:`reader_language`: English for every language but Chinese). The first such folder written records
   the choice, so it is stable from then on whatever the reader switches to; until then nothing depends on it.

The top-level folders are looked at before the card folders so that a card folder copied in from another data
folder does not flip the whole folder. A card, group or chat folder keeps the chat / book folder it already has,
under either name (:func:`chats_dir`, :func:`chat_books_dir`); code that recognises a chat folder by its parent's
name accepts both (:data:`CHATS_NAMES`).

The reader's language is what the front end chose (:func:`set_reader_language`): the window's
``ui.infra.i18n.set_language`` (its start-up and the live switch), the CLI's ``--lang`` or, without it, the CLI's own
rule (``cli.common.language``: ``LIYUAN_LANG``, the saved language, the locale — asked only when a new data folder
needs it). Core has no reader of its own: with no front end (a script, a test) it is Chinese, the names every data
folder had before issue 32.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

PathLike = Union[str, Path]


@dataclass(frozen=True)
class HomeLayout:
    """The folder names of one layout (all single names): ``chats`` (a card's or group's chat folders), ``import_reports``
    (``<home>/…``: SillyTavern import reports and index), ``trash`` (``<home>/…``: deleted chats and cards),
    ``presets``, ``quick_replies``, ``persona_avatars``, ``world_books`` (``<home>/…`` global books; a chat's own books
    too), ``books_off`` (switched-off books inside a world-books folder), ``book_versions`` (book versions a chat used,
    inside the global world-books folder), ``language`` ("zh" / "en": whose names)."""

    language: str
    chats: str
    import_reports: str
    trash: str
    presets: str
    quick_replies: str
    persona_avatars: str
    world_books: str
    books_off: str
    book_versions: str

    @property
    def top(self) -> tuple[str, ...]:
        """The folders of this layout directly in the data folder."""
        return (self.import_reports, self.trash, self.presets, self.quick_replies, self.persona_avatars,
                self.world_books)


ZH_HOME = HomeLayout(language="zh", chats="对话", import_reports="导入记录", trash="回收站", presets="预设",
                     quick_replies="快速回复", persona_avatars="人设头像", world_books="世界书", books_off="未启用",
                     book_versions="历史版本")
EN_HOME = HomeLayout(language="en", chats="chats", import_reports="import-reports", trash="trash", presets="presets",
                     quick_replies="quick-replies", persona_avatars="persona-avatars", world_books="world-books",
                     books_off="disabled", book_versions="versions")
#: Every name a card's or group's chat folder has in some layout (the Chinese one first).
CHATS_NAMES = (ZH_HOME.chats, EN_HOME.chats)
#: Every name a world-books folder has in some layout (the Chinese one first).
BOOKS_NAMES = (ZH_HOME.world_books, EN_HOME.world_books)
#: Top-level English names that mark a data folder as English (``presets`` is left out: module doc, rule 2).
_EN_MARKS = tuple(n for n in EN_HOME.top if n != "presets")

_reader: list[Union[None, str, Callable[[], str]]] = [None]
#: decided layouts by data folder, with the folder that decided it (checked still there on every use)
_decided: dict[Path, tuple[HomeLayout, Path]] = {}


def set_reader_language(language: Union[None, str, Callable[[], str]]) -> None:
    """The reader's language as the front end chose it: a code ("zh", "en", "ja" …), or a function giving it when
    first needed (the CLI without ``--lang``: its language costs a settings read); None forgets it. Only a data
    folder with nothing in either layout yet depends on it (module doc)."""
    _reader[0] = language or None


def reader_language() -> str:
    """The reader's language: what :func:`set_reader_language` was given (a function is called; one that raises
    counts as none), else "zh" (no front end: the names of every data folder before issue 32)."""
    got = _reader[0]
    if callable(got):
        try:
            got = got()
        except Exception:  # noqa: BLE001 - a front end's language that cannot be found never stops a path
            got = None
    return got or "zh"


def layout_for_language(language: Optional[str]) -> HomeLayout:
    """The layout a new data folder gets for a reader of ``language``: Chinese for Chinese (``zh``, ``zh_CN`` …),
    English for every other language (as the message catalogs fall back)."""
    from .paths import demo_language

    return ZH_HOME if demo_language(language or "") == "zh" else EN_HOME


def _exists(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:
        return False


def _on_disk(root: Path) -> Optional[tuple[HomeLayout, Path]]:
    """The layout ``root``'s folders decide (rules 1–3 of the module doc) and the folder that decides it, or None."""
    for lay, names in ((ZH_HOME, ZH_HOME.top), (EN_HOME, _EN_MARKS)):
        for name in names:
            if _exists(root / name):
                return lay, root / name
    for lay in (ZH_HOME, EN_HOME):
        for owners in ("cards", "groups"):
            try:
                entries = sorted((root / owners).iterdir()) if _exists(root / owners) else []
            except OSError:
                entries = []
            for owner in entries:
                if _exists(owner / lay.chats):
                    return lay, owner / lay.chats
    return None


def layout_of_home(root: PathLike) -> HomeLayout:
    """The layout of the data folder ``root`` (module doc): decided by its folders, else the reader's language.
    A decided folder is remembered (one ``stat`` per call after that, while the folder that decided it is there).
    Never raises (an unreadable folder counts as empty)."""
    d = Path(root)
    hit = _decided.get(d)
    if hit is not None and _exists(hit[1]):
        return hit[0]
    found = _on_disk(d)
    if found is None:
        _decided.pop(d, None)
        return layout_for_language(reader_language())
    _decided[d] = found
    return found[0]


def home_layout() -> HomeLayout:
    """The layout of the data folder (``core.paths.home``: ``LIYUAN_HOME`` or the platform's), :func:`layout_of_home`."""
    from .paths import home

    return layout_of_home(home())


def home_folder(field: str) -> Path:
    """``<home>/<name>`` for a field of :class:`HomeLayout` (``"trash"``, ``"presets"``, ``"quick_replies"``,
    ``"persona_avatars"``, ``"world_books"``, ``"import_reports"``) in the data folder's layout; not created.
    AttributeError for another field."""
    from .paths import home

    root = home()
    return root / str(getattr(layout_of_home(root), field))


def _kept(folder: Path, names: tuple[str, ...], new: str) -> Path:
    for name in names:
        if _exists(folder / name):
            return folder / name
    return folder / new


def chats_dir(owner: PathLike) -> Path:
    """The folder of the chats of the card or group folder ``owner``: the one it already has (``对话/`` or
    ``chats/``, in that order), else the data folder's layout's name. Not created."""
    return _kept(Path(owner), CHATS_NAMES, home_layout().chats)


def chat_books_dir(chat_dir: PathLike) -> Path:
    """The folder of the world books attached to the chat folder ``chat_dir``: the one it already has (``世界书/`` or
    ``world-books/``, in that order), else the data folder's layout's name. Not created."""
    return _kept(Path(chat_dir), BOOKS_NAMES, home_layout().world_books)


def books_off_name(books: PathLike) -> str:
    """The name of the switched-off subfolder of the world-books folder ``books``, by the folder's own name:
    ``disabled`` in ``world-books/``, ``未启用`` in any other (``世界书/`` included)."""
    return EN_HOME.books_off if Path(books).name == EN_HOME.world_books else ZH_HOME.books_off


def book_versions_name(books: PathLike) -> str:
    """The name of the book-versions subfolder of the world-books folder ``books``, by the folder's own name:
    ``versions`` in ``world-books/``, ``历史版本`` in any other."""
    return EN_HOME.book_versions if Path(books).name == EN_HOME.world_books else ZH_HOME.book_versions


def is_chats_folder(name: str) -> bool:
    """Is ``name`` the name of a chats folder in some layout (``对话`` / ``chats``)? For code that recognises a chat
    folder by where it sits (``<card>/对话/<chat>``)."""
    return name in CHATS_NAMES


__all__ = ["BOOKS_NAMES", "CHATS_NAMES", "EN_HOME", "HomeLayout", "ZH_HOME", "book_versions_name", "books_off_name", "chat_books_dir",
           "chats_dir", "home_folder", "home_layout", "is_chats_folder", "layout_for_language", "layout_of_home",
           "reader_language", "set_reader_language"]
