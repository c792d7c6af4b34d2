"""Issue 15 (start-up): the ``liyuan`` entry point and the window's modules import only what start-up needs.

Each check runs in a fresh interpreter (``sys.modules`` of the test process holds everything the suite imported).
Warm module loads cost ~0.3 ms each on a slow disk and the engine's modules tens of MB, so besides the named heavy
libraries and engine rooms that must stay out, the number of modules has a ceiling: today's count plus ~10 %.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: third-party and standard-library modules the start never needs: the HTTP client (httpx, and what its __init__
#: pulls in when installed: rich, click, pygments), retries, YAML, JSON repair, SQLite (the display cache), diffs
HEAVY = ("httpx", "rich", "click", "pygments", "tenacity", "yaml", "json_repair", "sqlite3", "difflib",
         "platformdirs", "h11", "httpcore", "anyio")
#: engine rooms the demo chat does not use at start (imported when their feature runs)
ROOMS = ("liyuan_desktop.core.migrate", "liyuan_desktop.core.chat.st_import", "liyuan_desktop.core.cards.charx",
         "liyuan_desktop.core.cards.export", "liyuan_desktop.core.cards.inspect",
         "liyuan_desktop.core.cards.st_chat_export", "liyuan_desktop.core.story.export",
         "liyuan_desktop.core.llm.openai_client", "liyuan_desktop.core.llm.client_messages",
         "liyuan_desktop.core.llm.discovery")

_PROBE = """
import json, sys
for name in sys.argv[1:]:
    __import__(name)
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(*names: str) -> list[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", _PROBE, *names], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    return json.loads(out.stdout)


def _loaded(modules: list[str], wanted: tuple[str, ...]) -> list[str]:
    return [w for w in wanted if any(m == w or m.startswith(w + ".") for m in modules)]


def test_the_liyuan_command_imports_no_engine_until_a_subcommand_runs():
    mods = _modules_after("liyuan_desktop.cli")
    # zipfile too: importlib.metadata (which pydantic's plugin loader imports when a model is first built) needs it
    assert _loaded(mods, HEAVY + ROOMS + ("zipfile", "pydantic", "liyuan_desktop.core.chat")) == []
    assert len(mods) <= 165, len(mods)  # 151 on 2026-12-02 (was 627 before issue 15)


def test_the_window_modules_import_only_what_start_up_needs():
    mods = _modules_after("liyuan_desktop.cli", "liyuan_desktop.app", "liyuan_desktop.ui.window.main_window")
    # zipfile is not checked here: shiboken6 (PySide6) imports it itself
    assert _loaded(mods, HEAVY + ROOMS) == []
    assert len(mods) <= 460, len(mods)  # 420 on 2026-12-02 (was 702 before issue 15)


def test_the_chat_engine_itself_loads_no_http_client_and_no_unused_room():
    """What the window imports to open the demo chat (the Chat facade, replay model, library) stays clear too: the
    HTTP client loads when a real model is built, the rest when its feature runs."""
    mods = _modules_after("liyuan_desktop.cli", "liyuan_desktop.app", "liyuan_desktop.ui.window.main_window",
                          "liyuan_desktop.core.chat.facade", "liyuan_desktop.core.llm.replay",
                          "liyuan_desktop.core.cards.library")
    assert _loaded(mods, HEAVY + ROOMS) == []


@pytest.mark.parametrize("argv", [["--help"], ["chat", "--help"]])
def test_the_help_text_is_still_complete(argv):
    out = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", *argv], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    if argv == ["--help"]:
        for cmd in ("chat", "card", "story", "import-chat", "export-chat", "chats", "branches", "inspect", "memory",
                    "preset", "settings", "import-sillytavern", "search", "models"):
            assert cmd in out.stdout
    else:
        assert "--demo" in out.stdout
