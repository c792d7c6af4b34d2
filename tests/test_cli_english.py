"""The CLI in English (issue 32 §1): ``liyuan --lang en <every subcommand, nested ones too> --help`` prints no CJK
ideograph — argparse's help, descriptions and epilogs come from the catalog (``cli/help_catalog.py``) in the chosen
language; with ``--lang zh`` they are Chinese. One fresh interpreter checks the real entry point end to end."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from liyuan_desktop import cli
from liyuan_desktop.cli import common

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*path, name))
    return out


def _help(capsys, lang: str, path: tuple[str, ...]) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main(["--lang", lang, *path, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.fixture
def fresh_lang():
    yield
    common._LANG.clear()


def test_every_help_in_english_has_no_cjk(capsys, fresh_lang):
    common.take_lang(["--lang", "en"])
    commands = _commands(cli.build_parser())
    assert len(commands) > 40, commands
    bad = {}
    for path in commands:
        text = _help(capsys, "en", path)
        assert "usage: liyuan" in text
        found = sorted({line.strip() for line in text.splitlines() if CJK.search(line)})
        if found:
            bad[" ".join(path) or "liyuan"] = found
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


def test_help_in_chinese_stays_chinese(capsys, fresh_lang):
    assert "在终端里演几拍" in _help(capsys, "zh", ())
    assert "角色卡文件或示例卡名" in _help(capsys, "zh", ("import-chat",))


def test_entry_point_help_in_english():
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("LIYUAN_LANG", None)
    r = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "--lang", "en", "story", "export", "--help"],
                       cwd=str(ROOT), env=env, capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert r.returncode == 0, r.stderr
    assert "no table of contents" in r.stdout and not CJK.search(r.stdout)


def test_branches_and_memory_print_english(capsys, fresh_lang):
    assert cli.main(["--lang", "en", "chat", "--demo", "--delay-ms", "0", "--auto", "--chat", "tour"]) == 0
    capsys.readouterr()
    chat = "Qingwu/tour"  # in English, the English demo card (core/paths.py demo_set)
    assert cli.main(["--lang", "en", "branches", chat]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [ln for ln in lines if ln.startswith("* ") and not ln.startswith("* = ")]
    assert rows and all(re.match(r"\* \w+  beat +\d+  ", ln) for ln in rows), rows  # the rest is the story
    assert lines[-1].startswith("* = the branch shown")
    assert not [ln for ln in lines if CJK.search(ln)], lines  # the English demo's story is English too
    assert cli.main(["--lang", "en", "memory", chat, "zzzqxv"]) == 0
    assert capsys.readouterr().out.strip() == "Nothing found."
