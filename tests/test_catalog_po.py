"""The messages as gettext catalogs for translators (issue 32 §1; scripts/catalog.py, core/catalog_files.py).

``extract`` writes a template with every key of the three sources (the engine catalog, the CLI's help texts, the
window's registry) and zh/en .po equal to the dicts; every key has both languages with the same placeholders; a
translator's catalog in a made-up language, written here, compiles and is used by ``render`` and the window's ``tr``
with English for what it lacks — also after its English changed (the stale translation is fuzzy, not shown). Babel
comes from the test extra; nothing here uses the network.
"""

from __future__ import annotations

import importlib.util
import string
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("babel")
from babel.messages.catalog import Catalog  # noqa: E402
from babel.messages.pofile import read_po, write_po  # noqa: E402

from liyuan_desktop.core import catalog_files  # noqa: E402
from liyuan_desktop.core.messages import CATALOG, message, render  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("liyuan_catalog_script", ROOT / "scripts" / "catalog.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


catalog = _script()


def _fields(text: str) -> set[str]:
    return {f for _t, f, _s, _c in string.Formatter().parse(text) if f is not None}


def _po(path: Path, lang: str | None = None) -> Catalog:
    with path.open("rb") as fp:
        return read_po(fp, locale=lang)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("locale")
    entries = catalog.extract(folder)
    return folder, entries


@pytest.fixture
def translator_dirs(tmp_path):
    yield tmp_path
    catalog_files.set_locale_dirs(None)
    from liyuan_desktop.ui.infra import i18n

    i18n.set_language("zh")


def test_template_has_every_key_of_the_three_sources(extracted):
    folder, _entries = extracted
    from liyuan_desktop.cli.help_catalog import HELP
    from liyuan_desktop.ui.infra.i18n import STRINGS

    pot = _po(folder / "liyuan.pot")
    contexts = {m.context for m in pot if m.id}
    assert set(CATALOG) <= contexts
    assert set(HELP) <= contexts
    assert set(STRINGS) <= contexts
    assert len(contexts) == len(set(CATALOG) | set(STRINGS))
    # a translator sees both languages, where the key comes from, and which texts are str.format templates
    persona = next(m for m in pot if m.context == "persona.unknown")
    assert persona.id == CATALOG["persona.unknown"]["en"]
    assert f"zh: {CATALOG['persona.unknown']['zh']}" in persona.auto_comments
    assert "python-brace-format" in persona.flags
    assert persona.locations and persona.locations[0][0] == "liyuan_desktop/core/messages.py"
    help_entry = next(m for m in pot if m.context == "cli.help.liyuan")
    assert "cli message" in help_entry.auto_comments
    assert "python-brace-format" not in next(m for m in pot if m.context == "send").flags


def test_zh_and_en_catalogs_equal_the_dicts(extracted):
    folder, entries = extracted
    for lang in ("zh", "en"):
        po = {m.context: m.string for m in _po(folder / lang / "LC_MESSAGES" / "liyuan.po", lang) if m.id}
        assert po == {e.key: getattr(e, lang) for e in entries}, lang


def test_every_key_has_both_languages_and_the_same_placeholders(extracted):
    folder, entries = extracted
    zh = {m.context: m for m in _po(folder / "zh" / "LC_MESSAGES" / "liyuan.po", "zh") if m.id}
    en = {m.context: m for m in _po(folder / "en" / "LC_MESSAGES" / "liyuan.po", "en") if m.id}
    problems = []
    for e in entries:
        if not e.zh.strip():
            problems.append(f"{e.key}: no Chinese")
        if not e.en.strip() and e.key != "welcome.sub":  # the English line under the intro, left out in English
            problems.append(f"{e.key}: no English")
        if _fields(e.zh) != _fields(e.en) and e.en:
            problems.append(f"{e.key}: placeholders differ: {_fields(e.zh)} / {_fields(e.en)}")
        if _fields(zh[e.key].string) != _fields(en[e.key].string) and e.en:
            problems.append(f"{e.key}: the .po placeholders differ")
        if _fields(str(en[e.key].id)) != _fields(en[e.key].string):
            problems.append(f"{e.key}: msgid and English differ in placeholders")
    assert not problems, "\n".join(problems)


def _translator_po(folder: Path, lang: str, texts: dict[str, tuple[str, str]]) -> Path:
    """A translator's .po: key → (the English it was translated from, the translation)."""
    cat = Catalog(locale=lang, project="Liyuan Desktop", domain="liyuan", fuzzy=False)
    for key, (source, text) in texts.items():
        cat.add(source, text, context=key)
    path = folder / lang / "LC_MESSAGES" / "liyuan.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fp:
        write_po(fp, cat)
    return path


def test_a_translators_catalog_is_used_with_english_for_what_it_lacks(translator_dirs):
    folder = translator_dirs
    persona = CATALOG["persona.unknown"]["en"]
    _translator_po(folder, "xx", {
        "persona.unknown": (persona, "Nul persona «{name}»"),
        "send": ("Send", "Ekspedi"),
        # placeholders that differ from the English would break the sentence: compile leaves it out
        "manage.chat_taken": (CATALOG["manage.chat_taken"]["en"], "Jam babil {nom}"),
        # translated from an English text the code no longer has: not shown
        "cancel": ("Cancel it", "Nuligi"),
    })
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "catalog.py"), "compile", "--dir", str(folder)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "manage.chat_taken" in out.stderr
    assert (folder / "xx" / "LC_MESSAGES" / "liyuan.mo").is_file()

    catalog_files.set_locale_dirs([folder])
    assert catalog_files.available() == ["xx"]
    assert message("persona.unknown", name="Ada").render("xx") == "Nul persona «Ada»"
    assert render(message("manage.chat_taken", name="Ada"), "xx") == "There is already a chat named “Ada”"
    assert message("manage.empty_name").render("xx") == CATALOG["manage.empty_name"]["en"]
    # a list parameter is joined with English's separator when the catalog has none
    assert message("tool.matches", m=["a", "b"]).render("xx") == "matched: a, b"
    # zh and en never read catalog files
    assert message("persona.unknown", name="Ada").render("en") == persona.format(name="Ada")

    from liyuan_desktop.ui.infra import i18n

    assert i18n.available_languages() == ["zh", "en", "xx"]
    i18n.set_language("xx")
    assert i18n.language() == "xx"
    assert i18n.tr("send") == "Ekspedi"
    assert i18n.tr("cancel") == "Cancel"
    assert i18n.tr("settings.err.save", error="disk full") == "Could not save: disk full"
    assert i18n.tr("persona.unknown", name="Bo") == "Nul persona «Bo»"  # the window's tr reaches the engine's too
    i18n.set_language("yy")  # no catalog: Chinese, as for any unknown language
    assert i18n.language() == "zh"

    # LIYUAN_LANG / liyuan --lang name it like zh and en
    from liyuan_desktop.cli import common
    from liyuan_desktop.core.settings import AppSettings, language_for_run

    assert language_for_run(AppSettings(), env={"LIYUAN_LANG": "xx"}) == "xx"
    assert language_for_run(AppSettings(), env={"LIYUAN_LANG": "yy", "LANG": "de_DE.UTF-8"}) == "en"
    # a first start on a desktop in that language picks it; Chinese and other locales as before
    assert language_for_run(AppSettings(), env={"LANG": "xx_YY.UTF-8"}) == "xx"
    assert language_for_run(AppSettings(), env={}, system_locale="xx_YY") == "xx"
    assert language_for_run(AppSettings(), env={"LANGUAGE": "de:xx", "LANG": "xx_YY.UTF-8"}) == "en"
    assert language_for_run(AppSettings(), env={"LANG": "zh_CN.UTF-8"}) == "zh"
    try:
        assert common.take_lang(["--lang", "xx", "chats"]) == ["chats"]
        assert common.language() == "xx"
        assert common.say(message("persona.unknown", name="Ada")) == "Nul persona «Ada»"
    finally:
        common.take_lang([])


def test_extract_merges_a_translators_catalog(translator_dirs, extracted):
    folder = translator_dirs
    reference, _entries = extracted
    (folder / "liyuan.pot").write_bytes((reference / "liyuan.pot").read_bytes())
    _translator_po(folder, "xx", {"send": ("Send", "Ekspedi"), "cancel": ("Cancel it", "Nuligi")})
    catalog.extract(folder)
    merged = {m.context: m for m in _po(folder / "xx" / "LC_MESSAGES" / "liyuan.po") if m.id}
    assert merged["send"].string == "Ekspedi" and not merged["send"].fuzzy
    assert set(merged) == {m.context for m in _po(reference / "liyuan.pot") if m.id}  # every key, most untranslated
    assert merged["persona.unknown"].string == ""
    catalog.compile_all(folder)
    catalog_files.set_locale_dirs([folder])
    assert catalog_files.lookup("send", "Send", "xx") == "Ekspedi"
    assert catalog_files.lookup("cancel", "Cancel", "xx") is None  # its English changed: English until updated


def test_init_starts_a_translators_catalog(tmp_path, extracted):
    reference, _entries = extracted
    (tmp_path / "liyuan.pot").write_bytes((reference / "liyuan.pot").read_bytes())
    path = catalog.init(tmp_path, "eo")
    cat = _po(path, "eo")
    assert cat.locale_identifier == "eo"
    assert {m.context for m in cat if m.id} == {m.context for m in _po(reference / "liyuan.pot") if m.id}
    with pytest.raises(SystemExit):
        catalog.init(tmp_path, "eo")


def test_a_damaged_catalog_is_treated_as_missing(translator_dirs):
    folder = translator_dirs
    mo = folder / "xx" / "LC_MESSAGES" / "liyuan.mo"
    mo.parent.mkdir(parents=True)
    mo.write_bytes(b"not a catalog")
    catalog_files.set_locale_dirs([folder])
    assert catalog_files.translation("xx") is None
    assert message("manage.empty_name").render("xx") == CATALOG["manage.empty_name"]["en"]
    assert catalog_files.language_name("ja") == "日本語" and catalog_files.language_name("xx") == "xx"


def test_compiled_catalogs_ship_with_the_build(tmp_path):
    """packaging/build.sh compiles into the staged source's resources/locale; PyInstaller's data files (slim.py)
    carry every file there, .mo included, and the slim build drops none of them."""
    spec = importlib.util.spec_from_file_location("liyuan_catalog_slim", ROOT / "packaging" / "slim.py")
    assert spec and spec.loader
    slim = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = slim
    spec.loader.exec_module(slim)
    mo = tmp_path / "liyuan_desktop" / "resources" / "locale" / "xx" / "LC_MESSAGES" / "liyuan.mo"
    mo.parent.mkdir(parents=True)
    mo.write_bytes(b"")
    (tmp_path / "cards").mkdir()
    datas = slim.source_datas(tmp_path)
    assert (str(mo), "liyuan_desktop/resources/locale/xx/LC_MESSAGES") in datas
    assert not slim.dropped("liyuan_desktop/resources/locale/xx/LC_MESSAGES/liyuan.mo")
    build = (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert '"$VPY" "$STAGE/scripts/catalog.py" compile' in build
    assert catalog_files.package_locale_dir() == ROOT / "liyuan_desktop" / "resources" / "locale"
