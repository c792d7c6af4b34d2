#!/usr/bin/env python3
"""The app's messages as gettext catalogs for translators (issue 32 §1), with Babel.

    scripts/catalog.py extract [--dir DIR]   the template liyuan.pot, the reference zh/en .po, translators' .po updated
    scripts/catalog.py init LANG [--dir DIR] a new translator's catalog LANG/LC_MESSAGES/liyuan.po from the template
    scripts/catalog.py compile [--dir DIR]   every LANG/LC_MESSAGES/liyuan.po → liyuan.mo (packaging/build.sh runs it)

DIR defaults to ``liyuan_desktop/resources/locale`` (shipped by every install form). Chinese and English are written
in the Python dicts beside the code (``core/messages.CATALOG``, the window's ``ui/infra/i18n`` registrations,
``cli/help_catalog.py``); ``extract`` imports every module of the app so that every registration has run, and writes
one entry per key: ``msgctxt`` = the key, ``msgid`` = the English text (``core/catalog_files.msgid_for``), the
Chinese and English texts as extracted comments (``#.``), the module that registered it as the location, and the
flag ``python-brace-format`` when it has ``{placeholders}``. A translator's existing ``LANG/LC_MESSAGES/liyuan.po``
is merged with the new template (Babel's update: new keys added, changed English marked fuzzy, removed keys kept as
obsolete). ``compile`` leaves out fuzzy entries and any translation whose placeholders differ from the English
(reported), so a translator's slip never breaks a sentence at run time. The template, the zh/en .po and every .mo
are build products (.gitignore): only translators' .po are committed.

Babel is needed here only (the ``test`` and ``build`` extras); the app reads the .mo with the standard library
(``core/catalog_files.py``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import string
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from babel.core import UnknownLocaleError  # noqa: E402
from babel.messages.catalog import Catalog, Message  # noqa: E402
from babel.messages.mofile import write_mo  # noqa: E402
from babel.messages.pofile import read_po, write_po  # noqa: E402

from liyuan_desktop.core.catalog_files import (  # noqa: E402
    BUILTIN,
    DOMAIN,
    is_language_code,
    msgid_for,
    package_locale_dir,
)

PROJECT = "Liyuan Desktop"
PACKAGES = ("liyuan_desktop.core", "liyuan_desktop.cli", "liyuan_desktop.ui")


@dataclass
class Entry:
    """One message key: its Chinese and English texts, where it comes from ("engine", "cli" or "ui") and the file
    of the module that registered it (relative to the repository)."""

    key: str
    zh: str
    en: str
    source: str
    module: str


def fields(text: str) -> set[str]:
    """The ``{placeholder}`` names of a ``str.format`` template (``{{`` and ``}}`` are literal braces); a template
    that does not parse has none."""
    try:
        return {f for _t, f, _s, _c in string.Formatter().parse(text) if f is not None}
    except ValueError:
        return set()


def _module_file(name: str) -> str:
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None) or ""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return name


def _import_all(owner: dict[str, str]) -> None:
    """Import every module of :data:`PACKAGES` (not ``__main__``), noting for each new key of the engine catalog or
    the window registry the module whose import added it (``owner``: key → module name)."""
    from liyuan_desktop.core.messages import CATALOG
    from liyuan_desktop.ui.infra.i18n import STRINGS

    for key in CATALOG:
        owner.setdefault(key, "liyuan_desktop.core.messages")
    for key in STRINGS:
        owner.setdefault(key, "liyuan_desktop.ui.infra.i18n")
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, pkg_name + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            before = set(CATALOG) | set(STRINGS)
            importlib.import_module(info.name)
            for key in (set(CATALOG) | set(STRINGS)) - before:
                owner.setdefault(key, info.name)


def gather() -> list[Entry]:
    """Every key of the three sources, sorted by key: the engine catalog (``core/messages.CATALOG``), the CLI's help
    texts (``cli/help_catalog.HELP``, which live in the engine catalog too) and the window's registry
    (``ui/infra/i18n.STRINGS``). A key in both the engine catalog and the window's registry is listed once, with the
    window's texts (``tr`` looks there first)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    owner: dict[str, str] = {}
    _import_all(owner)
    from liyuan_desktop.cli.help_catalog import HELP
    from liyuan_desktop.core.messages import CATALOG
    from liyuan_desktop.ui.infra.i18n import STRINGS

    out: dict[str, Entry] = {}
    for key, entry in CATALOG.items():
        source = "cli" if key in HELP else "engine"
        out[key] = Entry(key, entry.get("zh") or "", entry.get("en") or "", source, _module_file(owner[key]))
    for key, entry in STRINGS.items():
        out[key] = Entry(key, entry.get("zh") or "", entry.get("en") or "", "ui", _module_file(owner[key]))
    return [out[k] for k in sorted(out)]


def _comment(label: str, text: str) -> list[str]:
    lines = text.split("\n")
    return [f"{label}: {lines[0]}", *(f"{label}  {line}" for line in lines[1:])]


def template(entries: list[Entry]) -> Catalog:
    """The template catalog (.pot) of ``entries`` (module doc)."""
    cat = Catalog(project=PROJECT, domain=DOMAIN, fuzzy=False)
    for e in entries:
        flags = ["python-brace-format"] if fields(e.en) or fields(e.zh) else []
        comments = [f"{e.source} message", *_comment("zh", e.zh), *_comment("en", e.en)]
        cat.add(msgid_for(e.key, e.en), context=e.key, auto_comments=comments, locations=[(e.module, None)],
                flags=flags)
    return cat


def reference(entries: list[Entry], lang: str) -> Catalog:
    """The catalog of ``lang`` ("zh" or "en") as the dicts hold it: every entry translated."""
    cat = Catalog(locale=lang, project=PROJECT, domain=DOMAIN, fuzzy=False)
    by_key = {e.key: e for e in entries}
    for msg in template(entries):
        if not msg.id:
            continue
        e = by_key[str(msg.context)]
        cat[msg.id] = Message(msg.id, getattr(e, lang), context=msg.context, auto_comments=msg.auto_comments,
                              locations=msg.locations, flags=msg.flags)
    return cat


def _po_path(folder: Path, lang: str) -> Path:
    return folder / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def _write(path: Path, cat: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fp:
        write_po(fp, cat, width=120, omit_header=False)


def _read(path: Path, lang: str) -> Catalog:
    """A .po file; a language code Babel's locale data does not know (a new or private code) is read without
    locale data (its plural rule then comes from the file's header)."""
    for locale in (lang, None):
        try:
            with path.open("rb") as fp:
                return read_po(fp, locale=locale, domain=DOMAIN)
        except (UnknownLocaleError, ValueError):
            if locale is None:
                raise
    raise AssertionError("unreachable")


def translator_languages(folder: Path) -> list[str]:
    """The languages with a translator's .po in ``folder`` (not zh/en), sorted."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.name not in BUILTIN and _po_path(folder, p.name).is_file())


def extract(folder: Path) -> list[Entry]:
    """Write ``folder/liyuan.pot`` and ``folder/{zh,en}/LC_MESSAGES/liyuan.po`` from the dicts, and merge every
    translator's .po in ``folder`` with the new template. Returns the entries."""
    entries = gather()
    pot = template(entries)
    _write(folder / f"{DOMAIN}.pot", pot)
    for lang in BUILTIN:
        _write(_po_path(folder, lang), reference(entries, lang))
    for lang in translator_languages(folder):
        path = _po_path(folder, lang)
        cat = _read(path, lang)
        cat.update(template(entries), no_fuzzy_matching=True)
        _write(path, cat)
    return entries


def init(folder: Path, lang: str) -> Path:
    """Start a translator's catalog for ``lang`` from ``folder/liyuan.pot`` (run extract first). Refuses to
    overwrite one that exists."""
    if not is_language_code(lang):
        raise SystemExit(f"“{lang}” is not a language code (ja, fr, pt_BR…)")
    path = _po_path(folder, lang)
    if path.exists():
        raise SystemExit(f"{path} exists; run extract to update it")
    if not (folder / f"{DOMAIN}.pot").is_file():
        raise SystemExit(f"{folder / f'{DOMAIN}.pot'} is missing: run 'scripts/catalog.py extract' first")
    with (folder / f"{DOMAIN}.pot").open("rb") as fp:
        pot = read_po(fp)
    try:
        cat = Catalog(locale=lang, project=PROJECT, domain=DOMAIN, fuzzy=False)
    except (UnknownLocaleError, ValueError):
        cat = Catalog(project=PROJECT, domain=DOMAIN, fuzzy=False)
    cat.update(pot)
    _write(path, cat)
    return path


def compile_all(folder: Path) -> list[Path]:
    """Compile every ``folder/LANG/LC_MESSAGES/liyuan.po`` to ``liyuan.mo`` beside it (fuzzy entries and
    translations whose placeholders differ from the English left out, each reported on stderr). Returns the .mo
    paths written."""
    written = []
    for po in sorted(folder.glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        lang = po.parent.parent.name
        cat = _read(po, lang)
        for msg in list(cat):
            if msg.id and msg.string and isinstance(msg.string, str) and fields(msg.string) != fields(str(msg.id)):
                print(f"{po}: {msg.context}: placeholders differ from the English; left out", file=sys.stderr)
                msg.string = ""
        mo = po.with_suffix(".mo")
        with mo.open("wb") as fp:
            write_mo(fp, cat, use_fuzzy=False)
        written.append(mo)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["extract", "init", "compile"])
    parser.add_argument("lang", nargs="?", help="init: the new language's code (ja, fr, pt_BR…)")
    parser.add_argument("--dir", type=Path, default=package_locale_dir(), help="the locale folder")
    args = parser.parse_args(argv)
    if args.command == "extract":
        entries = extract(args.dir)
        print(f"{args.dir}: {len(entries)} keys; translators' catalogs updated: "
              f"{', '.join(translator_languages(args.dir)) or 'none'}")
    elif args.command == "init":
        if not args.lang:
            parser.error("init needs a language code")
        print(init(args.dir, args.lang))
    else:
        for mo in compile_all(args.dir):
            print(mo)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
