"""The first start picks the language from the system locale (issue 32): English unless the locale is Chinese,
read from LANGUAGE, LC_ALL, LC_MESSAGES, LANG, then the desktop's own locale (Windows/macOS set none of these);
a language chosen in Settings wins, ``LIYUAN_LANG`` / ``--lang`` win over that for one run; a language never chosen
is not written to settings.json, so the next start still follows the locale. ``liyuan --help`` documents both."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from liyuan_desktop.cli import common
from liyuan_desktop.core import settings as S

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def test_system_language_from_the_environment():
    assert S.system_language({"LANG": "en_US.UTF-8"}) == "en"
    assert S.system_language({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert S.system_language({"LANG": "zh_TW.UTF-8"}) == "zh"
    assert S.system_language({"LANG": "de_DE.UTF-8"}) == "en"
    assert S.system_language({"LANG": "en_US.UTF-8", "LC_ALL": "zh_CN.UTF-8"}) == "zh"
    assert S.system_language({"LANG": "zh_CN.UTF-8", "LANGUAGE": "en_GB:zh_CN"}) == "en"
    assert S.system_language({"LANG": "C.UTF-8"}) == "en"  # no real locale: English
    assert S.system_language({}, system_locale="zh_CN") == "zh"  # Windows/macOS: the desktop's locale
    assert S.system_language({"LANG": "C"}, system_locale="en_US") == "en"


def test_run_language_order():
    fresh = S.AppSettings()
    assert S.language_for_run(fresh, {"LANG": "en_US.UTF-8"}) == "en"
    assert S.language_for_run(fresh, {"LANG": "zh_CN.UTF-8"}) == "zh"
    chosen = S.AppSettings(ui_language="zh")
    assert S.language_for_run(chosen, {"LANG": "en_US.UTF-8"}) == "zh"
    assert S.language_for_run(chosen, {"LANG": "zh_CN.UTF-8", "LIYUAN_LANG": "en"}) == "en"
    assert S.language_for_run(fresh, {"LANG": "en_US.UTF-8", "LIYUAN_LANG": "xx"}) == "en"


def test_a_language_never_chosen_is_not_saved():
    S.save_settings(S.AppSettings(theme="dark"))
    data = json.loads(S.settings_path().read_text("utf-8"))
    assert "ui_language" not in data and data["theme"] == "dark"
    loaded = S.load_settings()
    assert "ui_language" not in loaded.model_fields_set
    assert S.language_for_run(loaded, {"LANG": "en_US.UTF-8"}) == "en"
    S.save_settings(S.AppSettings(ui_language="zh"))
    assert json.loads(S.settings_path().read_text("utf-8"))["ui_language"] == "zh"
    assert S.language_for_run(S.load_settings(), {"LANG": "en_US.UTF-8"}) == "zh"


def test_cli_language_follows_the_locale_without_settings(monkeypatch):
    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    monkeypatch.setenv("LANGUAGE", "en_US")
    try:
        assert common.take_lang(["branches"]) == ["branches"] and common.language() == "en"
        monkeypatch.setenv("LANGUAGE", "zh_CN")
        common.take_lang([])
        assert common.language() == "zh"
    finally:
        common._LANG.clear()


def _help(*args: str, **env: str) -> str:
    e = {**os.environ, **env}
    e.pop("LIYUAN_LANG", None)
    e.update(env)
    r = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", *args, "--help"], cwd=str(ROOT), env=e,
                       capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_help_documents_lang_and_liyuan_lang():
    en = _help("--lang", "en")
    assert "--lang {zh,en}" in en and "LIYUAN_LANG" in en and not CJK.search(en.split("positional")[0])
    assert "LIYUAN_LANG" in _help(LANGUAGE="zh_CN")
    assert "Liyuan Desktop — role-play" in _help(LANGUAGE="en_US", LANG="en_US.UTF-8")


def test_no_display_message_in_the_locale_language(monkeypatch, capsys):
    from liyuan_desktop import app

    monkeypatch.setattr(app, "has_display", lambda: False)
    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    monkeypatch.setenv("LANGUAGE", "en_US")
    assert app.main([]) == 2
    err = capsys.readouterr().err
    assert "no graphical display" in err and not CJK.search(err)
    assert app.main(["--lang", "zh"]) == 2
    assert "没有图形界面" in capsys.readouterr().err


def test_an_unknown_language_warns_once_in_english_and_follows_the_locale(monkeypatch, capsys):
    """``liyuan --lang fr`` / ``LIYUAN_LANG=fr`` (issue 32): one English line naming the languages there are, then
    the system locale's rule (English unless the locale is Chinese) — never a silent Chinese."""
    for var in S.LANGUAGE_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    try:
        assert common.take_lang(["--lang", "fr", "chats", "list"]) == ["chats", "list"]
        assert common.language() == "en"
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and "'fr'" in err[0] and "zh, en" in err[0] and not CJK.search(err[0])
        monkeypatch.setenv("LANG", "zh_CN.UTF-8")
        common.take_lang(["--lang=fr"])
        assert common.language() == "zh" and len(capsys.readouterr().err.splitlines()) == 1
        monkeypatch.setenv("LANG", "en_GB.UTF-8")
        monkeypatch.setenv("LIYUAN_LANG", "fr")
        common.take_lang(["chats", "list"])
        assert common.language() == "en"
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and "'fr'" in err[0]
    finally:
        common._LANG.clear()
    # the window's rule: LIYUAN_LANG=fr is the locale's language, not the settings' and not Chinese
    chosen = S.AppSettings(ui_language="zh")
    assert S.language_for_run(chosen, {"LIYUAN_LANG": "fr", "LANG": "en_US.UTF-8"}) == "en"
    assert S.language_for_run(chosen, {"LIYUAN_LANG": "fr", "LANG": "zh_TW.UTF-8"}) == "zh"


def test_the_window_warns_about_an_unknown_liyuan_lang():
    """The window's start-up (``app.py``) prints the same one line before it picks the language."""
    source = (ROOT / "liyuan_desktop" / "app.py").read_text("utf-8")
    assert "unknown_language_warning(forced)" in source and "is_known_language(forced)" in source
    from liyuan_desktop.ui.infra import i18n

    before = i18n.language()
    try:
        i18n.set_language("fr")
        assert i18n.language() == S.fallback_language()
    finally:
        i18n.set_language(before)
