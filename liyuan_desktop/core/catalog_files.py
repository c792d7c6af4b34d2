"""Translators' catalogs: languages beyond Chinese and English, read from compiled gettext files (issue 32 §1).

Chinese and English live in the Python dicts beside the code that uses them (``core/messages.CATALOG``, the
window's ``ui/infra/i18n`` registry, ``cli/help_catalog.py``). Every other language comes from a translator's
gettext catalog: ``scripts/catalog.py extract`` writes the template ``liyuan.pot`` (one entry per key: ``msgctxt`` =
the key, ``msgid`` = the English text, the Chinese text as a comment), a translator fills ``<lang>/LC_MESSAGES/
liyuan.po`` with any .po editor, and ``scripts/catalog.py compile`` (run by ``packaging/build.sh``) turns it into
``liyuan.mo``, which this module reads with the standard library's :mod:`gettext` (Babel is needed only to extract
and compile, never at run time).

Where compiled catalogs are looked for, first hit wins per language: the app's own
``liyuan_desktop/resources/locale`` (shipped by every install form) and ``<data folder>/locale`` (a translator tries
a catalog without rebuilding the app). A translation is used only while its ``msgid`` is the English text the code
has now: when the English changes, the old translation is no longer found and English is shown until the
translator updates the entry (``scripts/catalog.py extract`` marks it fuzzy in their .po).
"""

from __future__ import annotations

import gettext
import re
import struct
from pathlib import Path
from typing import Optional, Sequence

DOMAIN = "liyuan"
BUILTIN = ("zh", "en")  # the languages the dicts hold; never read from a catalog file

#: Names of languages in their own language, for the Settings list (a code not here is shown as the code).
LANGUAGE_NAMES = {
    "zh": "中文", "en": "English", "ja": "日本語", "ko": "한국어", "fr": "Français", "de": "Deutsch",
    "es": "Español", "it": "Italiano", "pt": "Português", "pt_BR": "Português (Brasil)", "ru": "Русский",
    "uk": "Українська", "pl": "Polski", "nl": "Nederlands", "tr": "Türkçe", "vi": "Tiếng Việt", "th": "ไทย",
    "id": "Bahasa Indonesia", "ar": "العربية", "zh_TW": "繁體中文", "zh_Hant": "繁體中文",
}

_CODE = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]{2,8})*$")
_dirs_override: list[Optional[list[Path]]] = [None]
_loaded: dict[str, Optional[gettext.NullTranslations]] = {}


def package_locale_dir() -> Path:
    """The catalogs shipped with the app: ``liyuan_desktop/resources/locale`` (``<lang>/LC_MESSAGES/liyuan.po``
    from translators, the ``.mo`` compiled from them at build time)."""
    return Path(__file__).resolve().parent.parent / "resources" / "locale"


def locale_dirs() -> list[Path]:
    """The folders searched for compiled catalogs, in order: :func:`set_locale_dirs`'s when given, else the
    shipped one and ``<data folder>/locale``."""
    if _dirs_override[0] is not None:
        return list(_dirs_override[0])
    from .paths import home

    return [package_locale_dir(), home() / "locale"]


def set_locale_dirs(dirs: Optional[Sequence[Path]]) -> None:
    """Search only ``dirs`` for compiled catalogs (tests, tools); None restores the default folders. Forgets the
    catalogs read so far."""
    _dirs_override[0] = None if dirs is None else [Path(d) for d in dirs]
    _loaded.clear()


def _mo_file(folder: Path, lang: str) -> Path:
    return folder / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"


def available() -> list[str]:
    """The language codes (``ja``, ``pt_BR``…) that have a compiled catalog in :func:`locale_dirs`, sorted; Chinese
    and English are not listed (they come from the dicts)."""
    found: set[str] = set()
    for folder in locale_dirs():
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for sub in entries:
            if sub.name not in BUILTIN and _CODE.match(sub.name) and _mo_file(folder, sub.name).is_file():
                found.add(sub.name)
    return sorted(found)


def language_name(lang: str) -> str:
    """``lang``'s name in its own language (:data:`LANGUAGE_NAMES`), else the code itself."""
    return LANGUAGE_NAMES.get(lang) or LANGUAGE_NAMES.get(lang.split("_")[0]) or lang


def is_language_code(lang: str) -> bool:
    """True when ``lang`` can name a translator's language (``ja``, ``fr``, ``pt_BR``: a folder name, never a
    path)."""
    return bool(_CODE.match(lang))


def translation(lang: str) -> Optional[gettext.NullTranslations]:
    """The compiled catalog of ``lang`` (read once, from the first folder that has it), or None when there is none
    or it cannot be read (a damaged .mo is treated as missing)."""
    if lang in BUILTIN or not _CODE.match(lang):
        return None
    if lang not in _loaded:
        found: Optional[gettext.NullTranslations] = None
        for folder in locale_dirs():
            path = _mo_file(folder, lang)
            if path.is_file():
                try:
                    with path.open("rb") as fp:
                        found = gettext.GNUTranslations(fp)
                except (OSError, ValueError, UnicodeDecodeError, struct.error):  # struct.error: a truncated .mo
                    found = None
                break
        _loaded[lang] = found
    return _loaded[lang]


def msgid_for(key: str, english: Optional[str]) -> str:
    """The ``msgid`` a key's entry has in the catalogs: its English text, or the key when the English is empty
    (an entry left empty on purpose, e.g. the window's ``welcome.sub``; an empty msgid is the catalog header)."""
    return english or key


def lookup(key: str, english: Optional[str], lang: str) -> Optional[str]:
    """``key``'s text in ``lang`` from its compiled catalog (``msgctxt`` = key, ``msgid`` = :func:`msgid_for`), or
    None when the language has no catalog, the key no translation, or the translation was made for another English
    text."""
    t = translation(lang)
    if t is None:
        return None
    source = msgid_for(key, english)
    text = t.pgettext(key, source)
    return text if text and text != source else None
