"""Issue 14 §3: the preset library 预设/ (the old presets/ folder moved in), and ``liyuan preset …``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.store import (
    delete_preset,
    describe_preset,
    install_preset,
    list_presets,
    load_installed_preset,
    presets_dir,
)
from liyuan_desktop.core.settings import load_settings

PRESET = {"prompts": [{"identifier": "main", "name": "Main Prompt", "content": "写 {{char}} 的下一段。"},
                      {"identifier": "off", "name": "关掉的", "content": "不会发送"}],
          "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True},
                                                              {"identifier": "off", "enabled": False},
                                                              {"identifier": "chatHistory", "enabled": True}]}],
          "temperature": 0.9, "top_k": 50, "openai_max_tokens": 300, "reverse_proxy": "https://secret.example"}


def write(path: Path, obj: dict) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return path


def test_the_library_is_the_chinese_folder_and_the_old_one_moves_in():
    old = home() / "presets"
    old.mkdir()
    write(old / "旧预设.json", PRESET)
    d = presets_dir()
    assert d == home() / "预设" and (d / "旧预设.json").is_file() and not old.exists()
    assert list_presets() == ["旧预设"] and load_installed_preset("旧预设").temperature == 0.9


def test_a_file_that_could_not_move_is_still_read():
    presets_dir()  # the library exists (and the migration has run)
    old = home() / "presets"
    old.mkdir()
    write(old / "后来的.json", PRESET)  # e.g. written by an older copy of the app meanwhile
    (presets_dir() / "后来的.json").write_text("{}", "utf-8")  # a clash: the library's file wins, the old stays
    assert "后来的" in list_presets()


def test_import_show_delete(tmp_path):
    p = install_preset(write(tmp_path / "夜雨.json", PRESET))
    stored = json.loads((presets_dir() / "夜雨.json").read_text("utf-8"))
    assert "reverse_proxy" not in stored  # secrets are not copied into the library
    report = describe_preset(p, "deepseek")
    text = report.text()
    assert "关掉的——预设里是关闭的" in text  # what is dropped and why
    assert report.sampling == {"temperature": 0.9, "top_k": 50}
    assert any("openai_max_tokens" in n for n in report.sampling_notes)
    assert any("top_k" in n and "deepseek" in n for n in report.not_sent)
    assert delete_preset("夜雨") and list_presets() == [] and not delete_preset("夜雨")


def _cli(*args: str, env_home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, LIYUAN_HOME=str(env_home), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "preset", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)


def test_cli_preset_commands(tmp_path):
    h = Path(os.environ["LIYUAN_HOME"])
    src = write(tmp_path / "夜雨.json", PRESET)
    r = _cli("import", str(src), env_home=h)
    assert r.returncode == 0 and "已导入预设「夜雨」" in r.stdout, r.stderr
    r = _cli("list", "--json", env_home=h)
    assert json.loads(r.stdout) == {"presets": ["夜雨"], "default": None}
    r = _cli("default", "夜雨", env_home=h)
    assert r.returncode == 0 and load_settings().default_preset == "夜雨"
    r = _cli("list", env_home=h)
    assert "★ 夜雨" in r.stdout
    r = _cli("show", "夜雨", "--provider", "openai", env_home=h)
    assert r.returncode == 0 and "不用：关掉的——预设里是关闭的" in r.stdout and "top_k" in r.stdout
    r = _cli("show", "没有这个", env_home=h)
    assert r.returncode == 2 and r.stderr.startswith("liyuan: ")
    bad = write(tmp_path / "卡.json", {"spec": "chara_card_v2", "data": {"name": "x", "first_mes": "hi"}})
    r = _cli("import", str(bad), env_home=h)
    assert r.returncode == 2 and "角色卡" in r.stderr
    r = _cli("delete", "夜雨", env_home=h)
    assert r.returncode == 0 and list_presets() == [] and load_settings().default_preset is None
