"""Where things live on disk: the user data folder (``LIYUAN_HOME`` overrides the platform's user data dir,
found with platformdirs), the sample cards shipped with the app, and the portable file-name rules (:func:`safe_name`,
:func:`name_taken`).

The data folder per OS (platformdirs, ``appauthor=False``, not roaming): Linux ``~/.local/share/liyuan``
(``$XDG_DATA_HOME``), macOS ``~/Library/Application Support/liyuan``, Windows ``%LOCALAPPDATA%\\liyuan``. Settings
live in it too (one folder to back up or copy); logs go to platformdirs' log folder (``runtime.log_path``).

The names of the folders the app makes in the data folder — Chinese (``对话/``, ``回收站/`` …) or English (``chats/``,
``trash/`` …), decided once per data folder — are resolved here too (:func:`home_layout`, :func:`home_folder`,
:func:`chats_dir`, :func:`chat_books_dir`; the rule is in the comment above :class:`HomeLayout`)."""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

APP_NAME = "liyuan"


def home() -> Path:
    """The data folder: ``$LIYUAN_HOME`` if set, else the platform user data dir (e.g. ~/.local/share/liyuan)."""
    env = os.environ.get("LIYUAN_HOME", "").strip()
    if env:
        p = Path(env).expanduser()
    else:
        import platformdirs  # only without LIYUAN_HOME (issue 15: start-up)

        p = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    p.mkdir(parents=True, exist_ok=True)
    return p


def cache_dir() -> Path:
    """Rebuildable caches: ``<home>/cache`` (created on first use). Anything in it may be deleted at any time; a
    damaged or old-format file in it is ignored and rebuilt by its owner (e.g. compiled world books, ``lore.bookcache``)."""
    p = home() / "cache"
    p.mkdir(parents=True, exist_ok=True)
    return p


def sample_cards_dir() -> Path:
    """The shipped sample cards: ``cards/`` next to the package in a source checkout, else the copy installed
    inside the package (``liyuan_desktop/sample_cards``)."""
    pkg = Path(__file__).resolve().parent.parent
    for cand in (pkg.parent / "cards", pkg / "sample_cards"):
        if cand.is_dir():
            return cand
    from .messages import message  # here, not at the top: paths is imported before pydantic is (messages needs it)

    raise FileNotFoundError(message("paths.no_sample_cards"))


@dataclass(frozen=True)
class DemoSet:
    """The offline demo shipped for one language (issue 32): the innkeeper Qingwu on a rainy night, played by the
    replay model. ``folder``: its sample-card folder; ``card``: the card file; ``replay``: the replay script of its
    three role-play beats; ``agent_plan`` / ``agent_replay``: the long-form (agent) demo's plan (``chat``, ``chapters``,
    ``message``) and its recorded agent turn; ``library_name``: the card's folder name in the user's library."""

    language: str
    folder: Path
    card: Path
    replay: Path
    agent_plan: Path
    agent_replay: Path
    library_name: str


#: The demo card's folder (under the sample cards) and library name per demo language: 青梧 (Chinese, the seed's
#: recorded run) and Qingwu (English, written for English readers, issue 32). Every other language gets English.
DEMO_FOLDERS = {"zh": "青梧", "en": "Qingwu"}


def demo_language(language: str) -> str:
    """The demo language for a UI or chat ``language`` code: ``"zh"`` for Chinese (``zh``, ``zh_CN``, ``zh-Hant`` …),
    else ``"en"`` (English is the fallback for every other language, as in the message catalogs)."""
    return "zh" if str(language or "").lower().replace("-", "_").split("_")[0] == "zh" else "en"


def demo_set(language: str = "zh") -> DemoSet:
    """The offline demo for ``language`` (any language code, :func:`demo_language`): the one place the demo is
    chosen — the welcome page's demo, ``liyuan --self-test``, ``liyuan chat --demo`` / ``--demo-agent`` and the
    library's copy of the demo card all come through here."""
    lang = demo_language(language)
    name = DEMO_FOLDERS[lang]
    folder = sample_cards_dir() / name
    return DemoSet(language=lang, folder=folder, card=folder / "default_Qingwu.json", replay=folder / "replay.json",
                   agent_plan=folder / "agent-demo.json", agent_replay=folder / "agent-replay.json",
                   library_name=name)


def demo_card_path(language: str = "zh") -> Path:
    """The offline demo card for ``language`` (:func:`demo_set`; 青梧 for Chinese, Qingwu otherwise)."""
    return demo_set(language).card


def demo_replay_path(language: str = "zh") -> Path:
    """The demo card's recorded game for ``language``, in our replay format (:func:`demo_set`)."""
    return demo_set(language).replay


# --- portable file names (issue 32 §2): one rule set on every OS, so a data folder copied between machines works ---

FORBIDDEN_NAME_CHARS = frozenset('<>:"/\\|?*') | frozenset(chr(c) for c in range(32)) | {"\x7f"} | frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
"""Characters :func:`safe_name` replaces with ``_``: the ones Windows refuses in a name (``< > : " / \\ | ? *``),
the C0 controls and DEL, and the bidirectional-text controls (a name holding one can display as another name)."""

WINDOWS_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$",
                              *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10)),
                              "COM\u00b9", "COM\u00b2", "COM\u00b3", "LPT\u00b9", "LPT\u00b2", "LPT\u00b3"})
"""Windows device names: a file whose name up to its first dot (trailing spaces dropped), in any case, is one of
these opens the device instead (``con``, ``Con.json``, ``NUL .md``, ``COM1.txt``)."""

WINDOWS_MAX_PATH = 260
"""Windows' MAX_PATH in UTF-16 code units, the terminating NUL included: a full path must stay at 259 or under,
or Explorer, Python 3.11 without the long-path registry setting, and most tools cannot open it."""

NAME_MAX_UTF16 = 48
"""The longest card or chat folder name :func:`safe_name` makes, in UTF-16 code units (an emoji outside the BMP
counts 2, as Windows counts it). Chosen with :data:`WINDOWS_HOME_BUDGET` so the deepest file we write,
``<home>/cards/<card>/对话/<chat>/正文/<chapter>.md`` (chapter names up to :data:`CHAPTER_NAME_MAX_UTF16`) or a temp
file beside it, stays under :data:`WINDOWS_MAX_PATH` even when a name is numbered (``-2`` …, up to ``-999``)."""

CHAPTER_NAME_MAX_UTF16 = 68
"""The longest chapter file name ``core.story.chapters.chapter_filename`` makes (``NNNN-`` + a 60-unit title +
``.md``), in UTF-16 code units."""

WINDOWS_HOME_BUDGET = 80
"""The data folder length (UTF-16 units) the name caps leave room for: ``C:\\Users\\<name up to 20>\\AppData\\Local\\
liyuan`` is 50; a ``LIYUAN_HOME`` longer than this can push the deepest chapter path past MAX_PATH."""


def utf16_units(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (how Windows measures names and paths)."""
    return len(text.encode("utf-16-le")) // 2


def _trim(s: str) -> str:
    """Without leading/trailing whitespace and dots (Windows drops trailing dots and spaces, so ``a.`` and ``a``
    would be one file there; a leading dot hides a file on Linux and macOS)."""
    while True:
        t = s.strip().strip(".")
        if t == s:
            return s
        s = t


def is_reserved_name(name: str) -> bool:
    """True when ``name`` is a Windows device name, with or without an extension, in any case (:data:`WINDOWS_RESERVED`)."""
    return name.split(".", 1)[0].rstrip(" ").upper() in WINDOWS_RESERVED


def safe_name(name: str, fallback: str = "未命名", max_len: int = NAME_MAX_UTF16) -> str:
    """A file or folder name that is valid and means the same on Windows, macOS and Linux — the one rule for names
    the app makes from user or card text (card and chat folders, presets, world books, chapter titles through
    ``chapter_filename``, export suggestions). The same result on every OS, so a data folder copied from Linux to
    Windows opens there:

    * :data:`FORBIDDEN_NAME_CHARS` (``<>:"/\\|?*``, control and bidi-control characters) become ``_``;
    * leading and trailing whitespace and dots are dropped (Windows strips trailing dots and spaces itself);
    * the name is cut to ``max_len`` UTF-16 code units (default :data:`NAME_MAX_UTF16`, which keeps the deepest path
      under Windows' MAX_PATH), then trimmed again;
    * a Windows device name (:func:`is_reserved_name`: ``CON``, ``nul.json``, ``COM1`` …) gets a leading ``_``.

    CJK, emoji and other printable text are kept. Returns ``fallback`` (used as given) when nothing usable is left.
    Case-insensitive clashes depend on the folder: see :func:`name_taken`."""
    s = _trim("".join("_" if c in FORBIDDEN_NAME_CHARS else c for c in name))
    while s and utf16_units(s) > max_len:
        s = _trim(s[:-1])
    if s and is_reserved_name(s):
        s = "_" + s
        while utf16_units(s) > max(max_len, 4):
            s = s[:-1]
    return s or fallback


def legacy_safe_name(name: str, fallback: str = "未命名") -> str:
    """The folder name releases before the portable rule made from ``name`` (``\\ / : * ? " < > |`` and control
    characters to ``_``, whitespace and dots stripped, cut to 80 characters). Only for finding a card folder made
    then (:func:`~liyuan_desktop.core.cards.library.card_folder`): a name between :data:`NAME_MAX_UTF16` and 80
    characters was cut later then than :func:`safe_name` cuts it now."""
    s = "".join("_" if c in '\\/:*?"<>|' or ord(c) < 0x20 else c for c in name).strip().strip(".")
    return s[:80] or fallback


def name_key(name: str) -> str:
    """How Windows (NTFS) and macOS (APFS, HFS+) compare names by default: case-insensitively and, on macOS, whatever
    the Unicode normalisation. Two names with one key are one file there."""
    return unicodedata.normalize("NFC", name).casefold()


def name_taken(folder: str | Path, name: str) -> bool:
    """True when ``folder`` already holds ``name`` or a name that would be the same file on Windows or macOS
    (:func:`name_key`: ``Alice`` and ``alice``) — so a folder made on Linux never holds two entries that clash when
    it is copied to those systems. A missing folder holds nothing. Raises nothing."""
    d = Path(folder)
    if (d / name).exists():
        return True
    key = name_key(name)
    try:
        return any(name_key(entry) == key for entry in os.listdir(d))
    except OSError:
        return False


def chat_dir(card_name: str, chat_name: str) -> Path:
    """``<home>/cards/<card>/对话/<chat>`` (ARCHITECTURE.md, data on disk; ``chats/`` in an English-layout data
    folder, :func:`chats_dir`)."""
    return chats_dir(home() / "cards" / safe_name(card_name)) / safe_name(chat_name)


# --- the data folder's layout (issue 32): the names of the folders the app makes in the data folder, the one home
# of the rule — no other module spells them.
#
# Two layouts:
#
# - Chinese (:data:`ZH_HOME`, the seed's; every data folder made before issue 32): ``cards/<card>/对话/<chat>/`` (and
#   ``groups/<group>/对话/``), ``导入记录/`` (SillyTavern import reports), ``回收站/`` (the trash), ``预设/`` (presets),
#   ``快速回复/`` (quick-reply sets), ``人设头像/`` (persona avatars), ``世界书/`` (the global world books, also
#   ``<chat>/世界书/`` for a chat's own), with ``未启用/`` (switched-off books) and ``历史版本/`` (book versions a chat
#   used) inside.
# - English (:data:`EN_HOME`): ``chats/``, ``import-reports/``, ``trash/``, ``presets/``, ``quick-replies/``,
#   ``persona-avatars/``, ``world-books/`` with ``disabled/`` and ``versions/`` inside.
#
# Which one a data folder uses (:func:`layout_of_home`) is decided once, by what is on disk — no marker file: the
# folders themselves are the record, so an existing data folder is never written to for this (read-only folders
# included) and cannot disagree with its marker. In order:
#
# 1. a Chinese-named folder at the top (:data:`ZH_HOME` ``top`` names) → Chinese, for ever (every existing user's data
#    keeps working, untouched: nothing is renamed or moved);
# 2. an English-named one at the top (``presets`` does not count: it is also the name of the pre-issue-14 preset
#    folder, ``core.prompt.presets.store``) → English;
# 3. a card or group folder holding ``对话/`` → Chinese; one holding ``chats/`` → English;
# 4. none of these (a new data folder, or one with nothing in either layout yet): the layout of the reader's language
#    *now* (:func:`reader_language`: English for every language but Chinese). The first such folder written records
#    the choice, so it is stable from then on whatever the reader switches to; until then nothing depends on it.
#
# The top-level folders are looked at before the card folders so that a card folder copied in from another data
# folder does not flip the whole folder. A card, group or chat folder keeps the chat / book folder it already has,
# under either name (:func:`chats_dir`, :func:`chat_books_dir`); code that recognises a chat folder by its parent's
# name accepts both (:data:`CHATS_NAMES`).
#
# The reader's language is what the front end chose (:func:`set_reader_language`): the window's
# ``ui.infra.i18n.set_language`` (its start-up and the live switch), the CLI's ``--lang`` or, without it, the CLI's own
# rule (``cli.common.language``: ``LIYUAN_LANG``, the saved language, the locale — asked only when a new data folder
# needs it). Core has no reader of its own: with no front end (a script, a test) it is Chinese, the names every data
# folder had before issue 32.

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
    return layout_of_home(home())


def home_folder(field: str) -> Path:
    """``<home>/<name>`` for a field of :class:`HomeLayout` (``"trash"``, ``"presets"``, ``"quick_replies"``,
    ``"persona_avatars"``, ``"world_books"``, ``"import_reports"``) in the data folder's layout; not created.
    AttributeError for another field."""
    root = home()
    return root / str(getattr(layout_of_home(root), field))


def _kept(folder: Path, names: tuple[str, ...], field: str) -> Path:
    """The first of ``names`` that exists in ``folder``, else the data folder's layout's name for ``field`` (asked
    only then: a folder that has its own name costs no look at the data folder)."""
    for name in names:
        if _exists(folder / name):
            return folder / name
    return folder / str(getattr(home_layout(), field))


def chats_dir(owner: PathLike) -> Path:
    """The folder of the chats of the card or group folder ``owner``: the one it already has (``对话/`` or
    ``chats/``, in that order), else the data folder's layout's name. Not created."""
    return _kept(Path(owner), CHATS_NAMES, "chats")


def chat_books_dir(chat_dir: PathLike) -> Path:
    """The folder of the world books attached to the chat folder ``chat_dir``: the one it already has (``世界书/`` or
    ``world-books/``, in that order), else the data folder's layout's name. Not created."""
    return _kept(Path(chat_dir), BOOKS_NAMES, "world_books")


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


