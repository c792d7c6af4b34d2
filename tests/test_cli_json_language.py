"""The ``--json`` outputs' human-readable texts follow the reader's language (issue 32): the field names stay the
same in every language; the labels and messages the app chose (the ledger's 时间/地点/人物 …, catalog messages)
are English for an English reader; Chinese output is what it always was (golden: tests/test_golden.py)."""

from __future__ import annotations

import json
import re

import pytest

from liyuan_desktop import cli
from liyuan_desktop.cli import common
from liyuan_desktop.core.chat.results import BeatResult
from liyuan_desktop.core.messages import Msg, message

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")


@pytest.fixture(autouse=True)
def _fresh_language():
    yield
    common._LANG.clear()


def _demo(capsys, lang: str) -> list[dict]:
    assert cli.main(["--lang", lang, "chat", "--demo", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["beats"]


def test_demo_json_ledger_labels_follow_an_english_reader(capsys):
    beats = _demo(capsys, "en")
    assert len(beats) == 3
    for b in beats:
        # the English demo card's story values are English too: any CJK here would be the app's own label
        assert not CJK.search(b["state"]), b["state"]
        assert not CJK.search(b["roster"]), b["roster"]
    assert beats[0]["state"].startswith("Time: Dusk (raining)\nPlace: Rainsong Inn (raining)\nQingwu: affinity 5")
    assert "Characters: Qingwu" in beats[0]["roster"]
    assert set(beats[0]) >= {"user", "injection", "calls", "final", "state", "roster", "warnings", "outcome"}


def test_demo_json_ledger_stays_chinese_for_a_chinese_reader(capsys):
    beats = _demo(capsys, "zh")
    assert beats[0]["state"].startswith("时间：")
    assert beats[0]["roster"].startswith("人物：")


def test_json_says_the_apps_messages_in_the_readers_language():
    tree = {"名字": "青梧", "notes": [message("led.empty"), "plain 文本"], "n": 3, "t": (message("led.present"),)}
    common.set_language("en")
    assert json.loads(common.dumps(tree)) == {"名字": "青梧", "notes": ["(nothing recorded yet)", "plain 文本"],
                                              "n": 3, "t": ["present"]}
    common.set_language("zh")
    assert common.dumps(tree, indent=1) == json.dumps(tree, ensure_ascii=False, indent=1)  # Chinese: unchanged


def test_a_beats_error_keeps_its_catalog_key():
    r = BeatResult(user="u", injection="", error=message("led.empty"))
    assert isinstance(r.error, Msg) and r.error.key == "led.empty"


def test_preset_show_json_says_its_lines_in_english(capsys, tmp_path):
    """``preset show --json``: the report's lines are catalog messages, said in the reader's language (they were
    Chinese in English); the field names are the same in both languages."""
    from test_cli_english_output import _preset

    f = tmp_path / "House.json"
    f.write_text(json.dumps(_preset("Write well.", 0.8)), "utf-8")
    assert cli.main(["--lang", "en", "preset", "import", str(f)]) == 0
    capsys.readouterr()
    assert cli.main(["--lang", "en", "preset", "show", "House", "--json"]) == 0
    en = json.loads(capsys.readouterr().out)
    assert en["lines"] and not [x for x in en["lines"] if CJK.search(x)], en["lines"]
    common._LANG.clear()
    assert cli.main(["--lang", "zh", "preset", "show", "House", "--json"]) == 0
    zh = json.loads(capsys.readouterr().out)
    assert set(zh) == set(en) and any(CJK.search(x) for x in zh["lines"])
