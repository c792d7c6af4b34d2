"""Where things live on disk: the user data folder (``LIYUAN_HOME`` overrides the platform's user data dir,
found with platformdirs), the sample cards shipped with the app, and the portable file-name rules (:func:`safe_name`,
:func:`name_taken`).

The data folder per OS (platformdirs, ``appauthor=False``, not roaming): Linux ``~/.local/share/liyuan``
(``$XDG_DATA_HOME``), macOS ``~/Library/Application Support/liyuan``, Windows ``%LOCALAPPDATA%\\liyuan``. Settings
live in it too (one folder to back up or copy); logs go to platformdirs' log folder (``runtime.log_path``)."""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

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
    folder, :mod:`core.home_layout`)."""
    from .home_layout import chats_dir  # here: home_layout uses this module

    return chats_dir(home() / "cards" / safe_name(card_name)) / safe_name(chat_name)
