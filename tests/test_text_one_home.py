"""One home per concept (issue 25): the UTF-16 surrogate repair lives in core/text.py (the model's stream, tool
arguments and the regex scripts use it), the 「【开场 · 名字】」 opening label's pattern in core/cards/st_chat.py
(the prompt, the SillyTavern export, the echo check and the role-play → book conversion use it)."""

from __future__ import annotations

import re

from helpers import ROOT

from liyuan_desktop.core.cards.regex_engine import pair_surrogates
from liyuan_desktop.core.cards.st_chat import OPENING_HEADER
from liyuan_desktop.core.llm.sse import fix_surrogates_in
from liyuan_desktop.core.prompt.assemble import opening_body
from liyuan_desktop.core.text import fix_surrogates, utf16_len

HIGH, LOW = "\ud83c", "\udf19"  # 🌙 as two halves


def test_fix_surrogates_pairs_halves_and_replaces_lone_ones():
    assert fix_surrogates("月亮") == ("月亮", 0)
    assert fix_surrogates(f"a{HIGH}{LOW}b") == ("a🌙b", 0)
    assert fix_surrogates(f"a{HIGH}b{LOW}") == ("a\ufffdb\ufffd", 2)
    assert fix_surrogates("已有\ufffd" + HIGH) == ("已有\ufffd\ufffd", 1)  # a U+FFFD already there is not counted
    fixed, _ = fix_surrogates(f"{LOW}{HIGH}")
    assert fixed.encode("utf-8") and utf16_len(fixed) == 2


def test_the_regex_engine_and_the_stream_use_the_one_repairer():
    for text in (f"x{HIGH}{LOW}", f"{HIGH}", "plain", f"{LOW}y{HIGH}"):
        assert pair_surrogates(text) == fix_surrogates(text)[0]
    value, n = fix_surrogates_in({f"k{HIGH}": [f"{HIGH}{LOW}", f"{LOW}", 3]})
    assert value == {"k\ufffd": ["🌙", "\ufffd", 3]} and n == 2


def test_no_second_surrogate_repairer_or_opening_pattern_in_the_engine():
    repair = re.compile(r"""decode\(\s*["']utf-16(-le)?["']\s*,\s*["']replace["']""")
    header = re.compile(r"开场 · \[")
    found_repair, found_header = [], []
    for p in sorted((ROOT / "liyuan_desktop" / "core").rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        rel = p.relative_to(ROOT).as_posix()
        if repair.search(text):
            found_repair.append(rel)
        if header.search(text):
            found_header.append(rel)
    assert found_repair == ["liyuan_desktop/core/text.py"]
    assert found_header == ["liyuan_desktop/core/cards/st_chat.py"]


def test_the_opening_label_is_stripped_once():
    assert opening_body("【开场 · 青梧】\n雨夜。") == "雨夜。"
    assert opening_body("【开场 · 青梧】\n【开场 · 青梧】\n雨") == "【开场 · 青梧】\n雨"
    assert opening_body("没有标签") == "没有标签"
    assert OPENING_HEADER.match("【开场 · 青梧】\n") is not None
