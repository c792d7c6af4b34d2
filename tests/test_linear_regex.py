"""Issue 15 item 7: a regex from a card or a model runs in linear time (RE2) or not at all.

The break-test's pattern ``(a+)+$`` on a line of ``a``s ending in another character doubles its backtracking time
per character (23.6 s at 28). Python's ``re`` holds the GIL while it backtracks, so the freezing cases are run in
a child process with a bound: the test fails (instead of hanging the suite) when the search is not linear.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.linear_regex import (
    LinearRegexRefused,
    compile_python_pattern,
    compile_re2,
    re2_safe_text,
    search,
)
from liyuan_desktop.core.lore.jsregex import JsRegexUnsupported, translate_js_regex_re2
from liyuan_desktop.core.lore.keys import _JsEval, _Regex, compile_key, key_matches
from liyuan_desktop.core.story.workspace import StoryFolder

ROOT = Path(__file__).resolve().parent.parent
#: a line the break-test used, made longer: hours of backtracking for `(a+)+$`, microseconds for RE2
EVIL_LINE = "a" * 48 + "!"
#: generous bound for the child process (start-up included); a backtracking search would need days
CHILD_BOUND = 60.0


def _run_child(code: str) -> str:
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                              text=True, timeout=CHILD_BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the search did not finish in {CHILD_BOUND:g} s: it is backtracking, not linear")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _folder(tmp_path: Path) -> StoryFolder:
    story = tmp_path / "ws" / "正文"
    story.mkdir(parents=True)
    (story / "001-雨夜.md").write_text(f"第一行\n{EVIL_LINE}\n她说：“雨停了。”\n", "utf-8")
    return StoryFolder(tmp_path / "ws", story)


def test_catastrophic_grep_pattern_finishes(tmp_path):
    _folder(tmp_path)
    out = _run_child(f"""
        from pathlib import Path
        from liyuan_desktop.core.story.workspace import StoryFolder
        ws = Path({str(tmp_path / 'ws')!r})
        f = StoryFolder(ws, ws / "正文")
        print(f.grep(r"(a+)+$", regex=True))
        print("----")
        print(f.grep(r"(a|aa)+!", regex=True))
    """)
    none, one = out.split("----\n")
    assert "001-雨夜.md" not in none  # the line ends in "!": no match
    assert one.splitlines()[0].startswith("001-雨夜.md:2: ") and "共 1 行命中" in one


def test_catastrophic_world_info_key_finishes():
    out = _run_child(f"""
        from liyuan_desktop.core.lore.keys import compile_key, key_matches
        print(type(compile_key("/(a+)+$/")).__name__)
        print(key_matches({EVIL_LINE!r}, "/(a+)+$/"), key_matches({EVIL_LINE!r}, "/^(a|aa)+!$/i"))
    """)
    assert out.split() == ["_Regex", "False", "True"]


def test_grep_refuses_what_re2_cannot_run_with_an_actionable_error(tmp_path):
    f = _folder(tmp_path)
    for pattern, word in [(r"(雨)\1", "反向引用"), (r"雨(?=停)", "前向查找"), (r"(?<=她)说", "后向查找")]:
        with pytest.raises(ToolError) as info:
            f.grep(pattern, regex=True)
        assert info.value.code == "bad_args"
        assert word in info.value.message and "regex=true" in info.value.message
    with pytest.raises(ToolError) as info:  # not a pattern at all: the old message
        f.grep("(雨", regex=True)
    assert "写错了" in info.value.message


def test_grep_keeps_python_unicode_classes(tmp_path):
    f = _folder(tmp_path)
    assert f.grep(r"雨\w了", regex=True).splitlines()[0] == "001-雨夜.md:3: 她说：“雨停了。”"
    assert f.grep(r"^\w+$", regex=True).splitlines()[0] == "001-雨夜.md:1: 第一行"
    assert f.grep(r"[\w]{3}\Z", regex=True).splitlines()[-1] == "共 1 行命中（1 个文件）"
    assert f.grep(r"[]a]!", regex=True).splitlines()[-1] == "共 1 行命中（1 个文件）"
    # same spans as Python's re on Unicode digits, spaces and letters (RE2's own \d \s \w are ASCII)
    for pattern in [r"\d+\s\S", r"\w+", r"\W+", r"[\d\s]+", r"\D\S\Z"]:
        rx = compile_python_pattern(pattern)
        for text in ["第３\u3000章 x", "abc_é٣", "  \u2003\x0b龙胆 ", "ok"]:
            mine, ref = search(rx, text), re.search(pattern, text)
            assert (mine.span() if mine else None) == (ref.span() if ref else None), (pattern, text)


def test_lone_surrogates_do_not_break_a_search():
    rx = compile_re2("b")
    text = "a\ud800b"
    assert search(rx, text).start() == 2
    assert re2_safe_text(text) == "a\ufffdb"
    assert key_matches("龙\udc00胆", "/胆/")


def test_world_info_keys_run_on_re2_and_fall_back_to_quickjs():
    assert isinstance(compile_key(r"/\bking\b/i"), _Regex)
    assert key_matches("the King", r"/\bking\b/i") and not key_matches("the kingdom", r"/\bking\b/i")
    assert key_matches("the end\nx", "/end$/m") and not key_matches("the end\n", "/end$/")
    assert key_matches("x{,3}", "/x{,3}/") and not key_matches("٣", r"/\d/")
    # what RE2 cannot express runs in QuickJS (JavaScript semantics, time-limited)
    for key in [r"/(?<w>ab)\k<w>/", "/end$/m", "/(?<=a)b/", r"/(a)\1/"]:
        with pytest.raises(JsRegexUnsupported):
            translate_js_regex_re2(key[1:key.rindex("/")], key[key.rindex("/") + 1:])
        assert isinstance(compile_key(key), _JsEval), key
    assert key_matches("xxababyy", r"/(?<w>ab)\k<w>/") and key_matches("ab", "/(?<=a)b/")
    # a catastrophic pattern that needs JavaScript still ends: QuickJS's time limit counts it as no match
    t0 = time.perf_counter()
    assert not key_matches("a" * 5000 + "!", r"/^(a+)+(?=\1)$/")
    assert time.perf_counter() - t0 < CHILD_BOUND


def test_refused_pattern_message_names_the_construct():
    with pytest.raises(LinearRegexRefused) as info:
        compile_python_pattern(r"(?P<x>a)(?P=x)")
    assert "反向引用" in str(info.value)
    with pytest.raises(LinearRegexRefused):
        compile_python_pattern("a{2000}")


def test_a_search_pattern_nested_too_deeply_is_a_clear_error_not_a_traceback(capsys):
    """Issue 29 §5: ``liyuan search --regex`` with 1,000 nested groups raised RecursionError out of Python's own
    pattern parser; it is now the catalogued refusal the CLI prints (exit 2)."""
    from liyuan_desktop.cli import main as cli_main
    from liyuan_desktop.core.messages import render

    deep = "(" * 1000 + "a" + ")" * 1000
    with pytest.raises(LinearRegexRefused) as exc:
        compile_python_pattern(deep)
    assert exc.value.args[0].key == "regex.too_deep" and "nested too deeply" in render(exc.value, "en")
    assert cli_main(["search", deep, "--regex"]) == 2
    assert "嵌套太深" in capsys.readouterr().err
