"""Issue 26 §1 from the command line: ``liyuan card new NAME [--from-json FILE]``, ``liyuan card set NAME FIELD
VALUE`` (any field; greetings and tags by index; ``--value-file``; ``--remove``) and ``card preview --greeting N``'s
check — run in-process through ``liyuan_desktop.cli.main`` on real files, with one-line errors for unknown fields,
bad indexes and broken cards, in Chinese and English."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.cli.common import set_language
from liyuan_desktop.core.cards import library, load_card
from liyuan_desktop.core.cards.edit import list_versions


@pytest.fixture(autouse=True)
def chinese_cli():
    set_language("zh")
    yield
    set_language("zh")


def card_dir(name: str) -> Path:
    return library.cards_root() / name


def err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("liyuan: "), err
    return err[0]


def test_new_and_set_every_kind_of_field(tmp_path, capsys):
    assert cli_main(["card", "new", "白鹭"]) == 0
    assert capsys.readouterr().out.strip() == str(card_dir("白鹭"))
    long = tmp_path / "desc.txt"
    long.write_text("第一行\n第二行\n" * 100, "utf-8")
    for args in (["description", "--value-file", str(long)], ["first_mes", "白鹭落在河边。"],
                 ["alternate_greetings.0", "甲"], ["alternate_greetings.1", "乙"], ["alternate_greetings.0", "甲改"],
                 ["tags", "鸟,河"], ["tags.2", "夏"], ["depth_prompt.prompt", "保持安静"], ["depth_prompt.depth", "1"],
                 ["depth_prompt.role", "user"], ["talkativeness", "0.25"], ["system_prompt", "你是白鹭。"],
                 ["post_history_instructions", "短一点。"], ["creator", "我"], ["character_version", "1.1"],
                 ["creator_notes", "给玩家的话"], ["mes_example", "<START>\n{{char}}: 嗯。"], ["personality", "安静"],
                 ["scenario", "河边"]):
        assert cli_main(["card", "set", "白鹭", *args]) == 0, args
    assert cli_main(["card", "set", "白鹭", "alternate_greetings.0", "--remove"]) == 0
    card = load_card(card_dir("白鹭") / "card.json")
    assert card.description == long.read_text("utf-8") and card.first_mes == "白鹭落在河边。"
    assert card.alternate_greetings == ["乙"] and card.tags == ["鸟", "河", "夏"]
    assert card.extensions["depth_prompt"] == {"prompt": "保持安静", "depth": 1, "role": "user"}
    assert card.extensions["talkativeness"] == "0.25" and card.raw["talkativeness"] == "0.25"
    assert (card.system_prompt, card.post_history_instructions, card.creator, card.character_version) == \
        ("你是白鹭。", "短一点。", "我", "1.1")
    assert card.creator_notes == "给玩家的话" and card.raw["creatorcomment"] == "给玩家的话"
    assert len(list_versions(card_dir("白鹭"))) == 20  # one per save, the newest 20 kept
    out = capsys.readouterr().out
    assert "已保存「白鹭」的 scenario" in out


def test_set_on_an_imported_card_keeps_the_rest(tmp_path, capsys):
    src = tmp_path / "x.json"
    raw = {"spec": "chara_card_v2", "spec_version": "2.0", "mystery": {"a": [1, True]},
           "data": {"name": "谜", "description": "d", "first_mes": "f", "extensions": {"chub": {"x": 1}}, "odd": None}}
    src.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    assert cli_main(["card", "import", str(src)]) == 0
    capsys.readouterr()
    assert cli_main(["card", "set", "谜", "alternate_greetings", '["一", "二"]']) == 0
    out = json.loads((card_dir("谜") / "card.json").read_text("utf-8"))
    assert out["mystery"] == {"a": [1, True]} and out["data"]["odd"] is None
    assert out["data"]["extensions"] == {"chub": {"x": 1}} and out["data"]["alternate_greetings"] == ["一", "二"]
    assert (card_dir("谜") / "original.json").read_bytes() == src.read_bytes()  # the imported file is kept


def test_new_from_json(tmp_path, capsys):
    fields = tmp_path / "fields.json"
    fields.write_text(json.dumps({"description": "鸟", "tags": ["a"], "depth_prompt": {"depth": 3}}), "utf-8")
    assert cli_main(["card", "new", "灰鹭", "--from-json", str(fields)]) == 0
    card = load_card(card_dir("灰鹭") / "card.json")
    assert card.description == "鸟" and card.tags == ["a"] and card.extensions["depth_prompt"]["depth"] == 3
    whole = tmp_path / "card.json"
    whole.write_text(json.dumps({"spec": "chara_card_v3", "spec_version": "3.0",
                                 "data": {"name": "旧名", "first_mes": "嗨", "unknown": [1]}}), "utf-8")
    assert cli_main(["card", "new", "新名", "--from-json", str(whole)]) == 0
    raw = json.loads((card_dir("新名") / "card.json").read_text("utf-8"))
    assert raw["data"]["name"] == "新名" and raw["data"]["unknown"] == [1] and raw["data"]["first_mes"] == "嗨"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nope": 1}), "utf-8")
    capsys.readouterr()
    assert cli_main(["card", "new", "坏", "--from-json", str(bad)]) == 2
    assert "nope" in err_line(capsys) and not card_dir("坏").exists()
    bad.write_text("{broken", "utf-8")
    assert cli_main(["card", "new", "坏", "--from-json", str(bad)]) == 2
    assert "bad.json" in err_line(capsys)


def test_clear_errors(tmp_path, capsys):
    assert cli_main(["card", "new", "白鹭"]) == 0
    capsys.readouterr()
    before = (card_dir("白鹭") / "card.json").read_bytes()
    assert cli_main(["card", "set", "白鹭", "colour", "白"]) == 2
    assert "没有「colour」这个字段" in err_line(capsys)
    assert cli_main(["card", "set", "白鹭", "alternate_greetings.5", "x"]) == 2
    assert "没有第 5 项" in err_line(capsys)
    assert cli_main(["card", "set", "白鹭", "tags.0", "--remove"]) == 2
    assert "没有第 0 项" in err_line(capsys)
    assert cli_main(["card", "set", "白鹭", "description", "--remove"]) == 2
    assert "--remove" in err_line(capsys)
    assert cli_main(["card", "set", "白鹭", "description"]) == 2
    assert "--value-file" in err_line(capsys)
    assert cli_main(["card", "set", "没有这张", "description", "x"]) == 2
    assert "资料库里没有这张卡" in err_line(capsys)
    assert cli_main(["--lang", "en", "card", "set", "白鹭", "talkativeness", "lots"]) == 2
    assert "“talkativeness” takes a number" in err_line(capsys)
    assert (card_dir("白鹭") / "card.json").read_bytes() == before  # nothing written on an error
    (card_dir("白鹭") / "card.json").write_text("{broken", "utf-8")
    assert cli_main(["card", "set", "白鹭", "description", "x"]) == 2
    assert "card.json" in err_line(capsys)


def test_preview_greeting_out_of_range_is_said_before_any_window(capsys):
    assert cli_main(["card", "new", "白鹭"]) == 0
    assert cli_main(["card", "set", "白鹭", "alternate_greetings.0", "甲"]) == 0
    capsys.readouterr()
    assert cli_main(["card", "preview", "白鹭", "--greeting", "2"]) == 2
    assert "没有第 2 条开场白" in err_line(capsys)


def test_preview_shows_the_chosen_greeting(tmp_path):
    """A library card by name, its alternate greeting 1 (an HTML status block) rendered offscreen: the first
    message has no HTML, so the one frame is greeting 1's."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LIYUAN_HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "liyuan_desktop", "card", *args], capture_output=True,
                              text=True, env=env, timeout=120)

    greeting = tmp_path / "g.txt"
    greeting.write_text('河边的灯亮了。\n```html\n<html><body><div style="height:120px">状态栏</div></body></html>\n```\n',
                        "utf-8")
    assert run("new", "鹭").returncode == 0
    assert run("set", "鹭", "first_mes", "河边很安静。").returncode == 0
    assert run("set", "鹭", "alternate_greetings.0", "--value-file", str(greeting)).returncode == 0
    p = run("preview", "鹭", "--json", "--greeting", "1")
    assert p.returncode == 0, p.stderr[-2000:]
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert info["frames"] == 1 and info["errors"] == [] and info["height_px"] == [120]


def test_fields_lists_values_and_tokens(capsys):
    assert cli_main(["card", "new", "白鹭"]) == 0
    assert cli_main(["card", "set", "白鹭", "description", "一只白色的鸟，站在河边。"]) == 0
    capsys.readouterr()
    assert cli_main(["card", "fields", "白鹭", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["fields"]["description"] == "一只白色的鸟，站在河边。" and info["fields"]["depth_prompt.depth"] == 4
    assert info["tokens"]["fields"]["description"] > 0
    assert info["tokens"]["total"] == info["tokens"]["permanent"] > 0  # name and description, both sent every beat
    assert cli_main(["--lang", "en", "card", "fields", "白鹭"]) == 0
    out = capsys.readouterr().out
    assert "description" in out and f"Total {info['tokens']['total']} tokens" in out
