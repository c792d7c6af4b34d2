"""Issue 16 §2: keys that stay without a keyring — the user-only key file (core/secrets.py). A key saved with the
keyring backend set to fail survives a restart (a new process), in a file of mode 0600; environment variables still
win for a run; a working keyring keeps the key out of the file."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyring_memory import MemoryKeyring

from liyuan_desktop.core import secrets
from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm import resolve_api_key
from liyuan_desktop.core.llm.providers import preset

KEY = "sk-file-SECRET-0123456789abcdef"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_keyring(monkeypatch):
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    secrets.session_clear()
    for var in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield
    secrets.session_clear()
    keyring.set_keyring(old)


def _run(code: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(LIYUAN_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_key_saved_without_keyring_survives_a_restart_with_mode_0600(tmp_path):
    home = tmp_path / "home"
    save = _run("from liyuan_desktop.core.settings import store_key, key_storage_status\n"
                "assert key_storage_status()[0] is False\n"
                f"print(store_key('deepseek', {KEY!r}))", home)
    assert save.returncode == 0, save.stderr
    assert save.stdout.strip() == "file"
    assert KEY not in save.stderr
    f = home / secrets.KEYS_FILE
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert not [p for p in home.iterdir() if p.name.startswith(".liyuan-")]  # no temp file left
    # a new process (the restart): the key is there, from the file
    again = _run("from liyuan_desktop.core.settings import lookup_key\n"
                 "from liyuan_desktop.core.llm import resolve_api_key\n"
                 "from liyuan_desktop.core.llm.providers import preset\n"
                 "p = preset('deepseek')\n"
                 "src, key = lookup_key(p)\n"
                 f"print(src, key == {KEY!r}, resolve_api_key(p) == {KEY!r})", home)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split() == ["file", "True", "True"]
    assert KEY not in (home / "settings.json").read_text("utf-8") if (home / "settings.json").exists() else True


def test_the_file_is_0600_even_under_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        assert secrets.store("openai", KEY) == "file"
    finally:
        os.umask(old)
    assert stat.S_IMODE(secrets.keys_file_path().stat().st_mode) == 0o600


def test_environment_variable_wins_for_a_run(monkeypatch):
    p = preset("deepseek")
    secrets.store("deepseek", KEY)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    assert S.lookup_key(p) == ("env", "sk-env") and resolve_api_key(p) == "sk-env"
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    assert S.lookup_key(p) == ("file", KEY)


def test_order_keyring_before_file_and_keyring_store_drops_the_file_copy():
    p = preset("openai")
    secrets.store("openai", "sk-from-file")
    kr = MemoryKeyring()
    keyring.set_keyring(kr)
    assert S.lookup_key(p) == ("file", "sk-from-file")
    kr.set_password(secrets.DEFAULT_KEYRING_SERVICE, "openai", "sk-keyring")
    assert S.lookup_key(p) == ("keyring", "sk-keyring")
    assert secrets.store("openai", KEY) == "keyring"
    assert secrets.file_get(secrets.DEFAULT_KEYRING_SERVICE, "openai") is None
    assert not secrets.keys_file_path().exists()  # the last key gone: no file left


def test_forget_and_rename_cover_the_file():
    secrets.store("deepseek", KEY)
    secrets.store("openai", "sk-other")
    S.rename_key("deepseek", "ds-work")
    assert S.lookup_key(S.KeyProbe("ds-work", None)) == ("file", KEY)
    assert S.lookup_key(S.KeyProbe("deepseek", None)) == ("none", None)
    S.forget_key("ds-work")
    assert S.lookup_key(S.KeyProbe("ds-work", None)) == ("none", None)
    data = json.loads(secrets.keys_file_path().read_text("utf-8"))
    assert data == {"version": 1, "keys": {"liyuan-desktop": {"openai": "sk-other"}}}


def test_a_damaged_key_file_is_no_key_and_never_raises():
    secrets.keys_file_path().write_text("{not json", encoding="utf-8")
    assert S.lookup_key(preset("openai")) == ("none", None)
    assert secrets.store("openai", KEY) == "file"  # rewritten whole
    assert S.lookup_key(preset("openai")) == ("file", KEY)


def test_storage_status_names_the_file():
    ok, msg = S.key_storage_status()
    assert ok is False and "不在系统钥匙串中" in msg and str(secrets.keys_file_path()) in msg


def test_keys_never_reach_the_log(caplog):
    caplog.set_level(logging.DEBUG)

    class Refusing(MemoryKeyring):
        def set_password(self, service, username, password):
            raise RuntimeError(f"refused {password}")  # a backend that echoes the secret

    keyring.set_keyring(Refusing())
    assert secrets.store("openai", KEY) == "file"
    secrets.keys_file_path().write_text("{broken " + KEY, encoding="utf-8")
    assert S.lookup_key(preset("openai")) == ("none", None)
    assert KEY not in caplog.text
