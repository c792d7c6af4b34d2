"""The per-OS code paths, tested here on Linux (issue 32 §2): the data and log folders platformdirs gives on each
OS, the OS keyring each platform uses (and that the build bundles it), atomic replace and fsync per OS, and the
Chromium switches per OS (a pure function of the platform name)."""

from __future__ import annotations

import importlib
import os
import stat
import sys
from pathlib import Path

import platformdirs.macos
import platformdirs.unix
import platformdirs.windows
import pytest
from keyring.backend import KeyringBackend

from liyuan_desktop import runtime
from liyuan_desktop.core import fsutil, secrets
from liyuan_desktop.core.paths import APP_NAME

ROOT = Path(__file__).resolve().parent.parent


# --- data and log folders -------------------------------------------------------------------------------------------

def test_data_and_log_folders_per_os(monkeypatch):
    monkeypatch.setenv("HOME", "/home/ann")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    unix = platformdirs.unix.Unix(APP_NAME, appauthor=False)
    assert unix.user_data_dir == "/home/ann/.local/share/liyuan"
    assert unix.user_log_dir == "/home/ann/.local/state/liyuan/log"
    mac = platformdirs.macos.MacOS(APP_NAME, appauthor=False)
    assert mac.user_data_dir == "/home/ann/Library/Application Support/liyuan"
    assert mac.user_log_dir == "/home/ann/Library/Logs/liyuan"
    # Windows asks the shell for its known folders; stand in for that call with the values a real profile has
    folders = {"CSIDL_LOCAL_APPDATA": r"C:\Users\ann\AppData\Local", "CSIDL_APPDATA": r"C:\Users\ann\AppData\Roaming"}
    monkeypatch.setattr(platformdirs.windows, "get_win_folder", folders.__getitem__)
    win = platformdirs.windows.Windows(APP_NAME, appauthor=False)
    # not roaming: chats can be large and a roaming profile copies them at every log-on
    assert win.user_data_dir.replace("/", "\\") == r"C:\Users\ann\AppData\Local\liyuan"
    assert win.user_log_dir.replace("/", "\\") == r"C:\Users\ann\AppData\Local\liyuan\Logs"


def test_liyuan_home_moves_the_data_folder_on_every_os(tmp_path, monkeypatch):
    from liyuan_desktop.core.paths import home

    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "数据"))
    assert home() == tmp_path / "数据" and home().is_dir()


# --- the OS keyring -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("platform", ["linux", "win32", "darwin"])
def test_each_os_keyring_backend_exists_and_the_build_bundles_it(platform):
    module, cls = secrets.KEYRING_BACKENDS[platform]
    backend = getattr(importlib.import_module(module), cls)
    assert issubclass(backend, KeyringBackend)
    spec = (ROOT / "packaging" / "liyuan.spec").read_text(encoding="utf-8")
    assert f'"{module}"' in spec, f"liyuan.spec does not bundle {module}"
    if platform != sys.platform:  # off its OS a backend refuses (priority raises), which is how keyring passes it over
        try:
            viable = backend.priority > 0
        except Exception:  # noqa: BLE001 - RuntimeError, ImportError …: each backend says it its own way
            viable = False
        assert not viable


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no mode bits: the key file inherits its folder's ACL")
def test_without_a_keyring_the_key_file_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    import keyring.core

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    assert secrets.store("deepseek", "sk-test-0123456789") == "file"
    assert stat.S_IMODE(secrets.keys_file_path().stat().st_mode) == 0o600
    assert "icacls" in secrets.__doc__  # the Windows equivalent is written down


# --- atomic replace and fsync ---------------------------------------------------------------------------------------

def test_fsync_of_a_folder_is_posix_only():
    assert fsutil.can_fsync_folder("linux") and fsutil.can_fsync_folder("darwin")
    assert not fsutil.can_fsync_folder("win32")


def test_windows_retries_a_replace_while_the_target_is_open(tmp_path):
    src, dst = tmp_path / "new", tmp_path / "old"
    src.write_text("new", encoding="utf-8")
    dst.write_text("old", encoding="utf-8")
    refusals, waits = [PermissionError(13, "used by another process")] * 3, []

    def replace(a, b):  # MoveFileExW while an antivirus holds the target open: refused a few times, then done
        if refusals:
            raise refusals.pop()
        os.replace(a, b)

    fsutil.replace_retrying(src, dst, platform="win32", replace=replace, sleep=waits.append)
    assert dst.read_text(encoding="utf-8") == "new" and not src.exists()
    assert waits == list(fsutil.REPLACE_DELAYS[:3])


def test_a_target_open_for_good_fails_after_the_retries_and_posix_never_retries(tmp_path):
    waits: list[float] = []

    def refuse(a, b):
        raise PermissionError(13, "used by another process")

    with pytest.raises(PermissionError):
        fsutil.replace_retrying(tmp_path / "a", tmp_path / "b", platform="win32", replace=refuse, sleep=waits.append)
    assert waits == list(fsutil.REPLACE_DELAYS)
    waits.clear()
    with pytest.raises(PermissionError):
        fsutil.replace_retrying(tmp_path / "a", tmp_path / "b", platform="linux", replace=refuse, sleep=waits.append)
    assert waits == []


def test_replacing_a_file_another_handle_has_open_works_here(tmp_path):
    p = tmp_path / "settings.json"
    p.write_text("old", encoding="utf-8")
    with open(p, encoding="utf-8") as reader:  # POSIX: the reader keeps the old file
        fsutil.atomic_write_text(p, "new")
        assert reader.read() == "old"
    assert p.read_text(encoding="utf-8") == "new"
    assert [x.name for x in tmp_path.iterdir()] == ["settings.json"]  # no temp file left


# --- Chromium switches per OS ---------------------------------------------------------------------------------------

def test_linux_switches():
    c = runtime.chromium_choice("linux")
    assert c.sandbox == "on" and c.sandbox_flags == []
    assert c.window_flags == [runtime.NO_GPU_FLAG, runtime.NO_UNSANDBOXED_ZYGOTE_FLAG]
    assert runtime.chromium_choice("linux", root=True).sandbox == "root"
    assert runtime.chromium_choice("linux", userns_ok=False).sandbox == "userns"
    assert runtime.chromium_choice("linux", userns_ok=False).sandbox_flags == ["--no-sandbox"]
    assert runtime.chromium_choice("linux", gpu=True).window_flags == [runtime.NO_UNSANDBOXED_ZYGOTE_FLAG]


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_windows_and_macos_keep_the_sandbox_for_administrators_and_have_no_zygote(platform):
    for facts in ({}, {"root": True}, {"userns_ok": False}, {"root": True, "userns_ok": False}):
        c = runtime.chromium_choice(platform, **facts)
        assert c.sandbox == "on" and c.sandbox_flags == [], facts
        assert runtime.NO_UNSANDBOXED_ZYGOTE_FLAG not in c.window_flags
    off = runtime.chromium_choice(platform, user_off=True)
    assert off.sandbox == "user" and off.sandbox_flags == ["--no-sandbox"]


def test_gpu_defaults_per_os_and_the_users_choice_wins():
    assert runtime.NO_GPU_FLAG in runtime.chromium_choice("win32").window_flags
    assert runtime.NO_GPU_FLAG not in runtime.chromium_choice("darwin").window_flags
    for platform in ("linux", "win32", "darwin"):
        assert runtime.NO_GPU_FLAG not in runtime.chromium_choice(platform, gpu=True).window_flags
        assert runtime.NO_GPU_FLAG in runtime.chromium_choice(platform, gpu=False).window_flags


def test_the_window_reads_liyuan_gpu(monkeypatch):
    monkeypatch.setenv("LIYUAN_GPU", "1")
    assert runtime.NO_GPU_FLAG not in runtime.window_chromium_flags()
    monkeypatch.setenv("LIYUAN_GPU", "0")
    assert runtime.NO_GPU_FLAG in runtime.window_chromium_flags()
