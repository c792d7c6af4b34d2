"""Shared fixtures. Golden runs are read in place from ../shared/golden (never copied into the repository);
tests that need them skip with a clear reason when that folder is absent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Qt must see these before it is imported anywhere (UI tests run offscreen; CI runs as root).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--no-sandbox --disable-gpu --log-level=3")
os.environ.setdefault("LANG", "C.UTF-8")
# The tests expect the Chinese window and CLI unless they choose English (issue 32: a first start follows the system
# locale). LANGUAGE is read first by core.settings.system_language; LC_MESSAGES=C keeps glibc's own messages (strerror,
# which honours LANGUAGE under any other message locale, C.UTF-8 included, once Qt calls setlocale) in English.
os.environ["LANGUAGE"] = "zh_CN"
os.environ["LC_MESSAGES"] = "C"

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/ importable: helpers, sse_server, keyring_memory


def _bundled_fonts() -> None:
    """Chinese text and emoji laid out with real glyphs as in a user's run, without any apt font (issue 24 §1): the
    app's own start-up step (runtime.prepare_fontconfig) before Qt loads, its fonts.conf in a temp folder."""
    import tempfile

    from liyuan_desktop.runtime import prepare_fontconfig

    uid = getattr(os, "getuid", lambda: 0)()
    prepare_fontconfig(cache=Path(tempfile.gettempdir()) / f"liyuan-test-fonts-{uid}")


_bundled_fonts()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own data folder; nothing touches the user's real one. A language an earlier test chose
    for a new data folder's folder names (core.paths) is forgotten: the folder follows this test's choice."""
    from liyuan_desktop.core.paths import set_reader_language

    set_reader_language(None)
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
