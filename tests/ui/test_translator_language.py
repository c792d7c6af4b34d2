"""A translator's language in the window (issue 32 §1; core/catalog_files.py): the Settings language list offers
every language with a compiled catalog; choosing it re-sets the window at once, with English for the keys the
catalog lacks; the choice is saved; back to Chinese gives the texts the window started with."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("babel")
from babel.messages.catalog import Catalog  # noqa: E402
from babel.messages.mofile import write_mo  # noqa: E402

from liyuan_desktop.core import catalog_files  # noqa: E402
from liyuan_desktop.core.settings import AppSettings, language_for_run  # noqa: E402
from liyuan_desktop.ui.infra import i18n  # noqa: E402
from liyuan_desktop.ui.window.language_switch import current  # noqa: E402
from liyuan_desktop.ui.window.main_window import MainWindow  # noqa: E402


def _compiled(folder: Path, lang: str, texts: dict[str, str]) -> None:
    cat = Catalog(locale=lang, domain="liyuan", fuzzy=False)
    for key, text in texts.items():
        entry = i18n.STRINGS[key]
        cat.add(catalog_files.msgid_for(key, entry["en"]), text, context=key)
    mo = folder / lang / "LC_MESSAGES" / "liyuan.mo"
    mo.parent.mkdir(parents=True)
    with mo.open("wb") as fp:
        write_mo(fp, cat)


@pytest.fixture
def xx_catalog(tmp_path):
    _compiled(tmp_path, "xx", {"send": "Ekspedi", "ledger": "Libro", "settings.language": "Lingvo"})
    catalog_files.set_locale_dirs([tmp_path])
    yield tmp_path
    catalog_files.set_locale_dirs(None)
    i18n.set_language("zh")


def test_settings_offers_a_translators_language_and_switches_to_it(qtbot, xx_catalog):
    win = MainWindow(AppSettings())
    qtbot.addWidget(win)
    win.show()
    start = (win.send_btn.text(), win.stop_btn.text(), win.tabs.tabText(1))
    assert start == ("发送", "停止", "账本")
    win.open_settings()
    dlg = win.settings_dialog
    combo = dlg.language_combo
    assert [combo.itemData(i) for i in range(combo.count())] == ["zh", "en", "xx"]
    assert [combo.itemText(i) for i in range(2)] == ["中文", "English"]
    assert combo.itemText(2) == "xx"  # a code with no known name is shown as the code
    combo.setCurrentIndex(combo.findData("xx"))
    assert i18n.language() == "xx"
    win = current(win)  # built again in the new language (ui/window/language_switch.py)
    qtbot.addWidget(win)
    assert (win.send_btn.text(), win.stop_btn.text(), win.tabs.tabText(1)) == ("Ekspedi", "Stop", "Libro")
    assert "English" in win.statusBar().currentMessage()  # a key the catalog lacks: English
    saved = dlg.collect()
    assert saved.ui_language == "xx"
    assert language_for_run(saved, env={}) == "xx"
    catalog_files.set_locale_dirs([xx_catalog / "gone"])
    assert language_for_run(saved, env={}) == "en"  # the catalog removed later: English, not an error
    catalog_files.set_locale_dirs([xx_catalog])
    combo.setCurrentIndex(combo.findData("zh"))
    win = current(win)
    qtbot.addWidget(win)
    assert (win.send_btn.text(), win.stop_btn.text(), win.tabs.tabText(1)) == start
