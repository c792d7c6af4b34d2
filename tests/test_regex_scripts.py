"""Regex scripts (core/regex_scripts.py): JavaScript semantics, SillyTavern's run rules, real scripts from the fixture
cards (read in place from ../shared/fixtures; skipped when absent)."""

from __future__ import annotations

import base64
import json
import logging
import re
import struct
import threading
import time
from pathlib import Path

import pytest
from helpers import shared_path

from liyuan_desktop.core.cards.regex_scripts import (
    Placement,
    RegexScript,
    apply_scripts,
    escape_regex_macro,
    parse_find_regex,
    run_script,
    scripts_from_card,
)
from liyuan_desktop.core.macros import MacroContext

FIXTURES = shared_path("fixtures")
AI = Placement.AI_OUTPUT
USER = Placement.USER_INPUT


def mctx(**kw) -> MacroContext:
    kw.setdefault("char", "理")
    kw.setdefault("user", "阿明")
    kw.setdefault("chat_id", "chat-1")
    return MacroContext(**kw)


def script(find: str, replace: str = "", **kw) -> RegexScript:
    kw.setdefault("placement", [2])
    return RegexScript(findRegex=find, replaceString=replace, **kw)


def run(s: RegexScript, text: str, **kw) -> str:
    return run_script(s, text, macros_ctx=kw.pop("ctx", mctx()), **kw)


# -- fixture loading ------------------------------------------------------------------------------------------------

def fixture(*parts: str) -> Path:
    p = FIXTURES.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"fixture {p} not found (the shared/ folder is not beside this checkout)")
    return p


def png_card(path: Path) -> dict:
    """The card JSON in a PNG's tEXt chunks (ccv3 preferred over chara) — a minimal reader for the tests."""
    data = path.read_bytes()
    pos, found = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            found[key.decode("latin-1").lower()] = value
    raw = found.get("ccv3") or found["chara"]
    return json.loads(base64.b64decode(raw))


def stagedog_scripts(path: Path) -> list[RegexScript]:
    """The StageDog template's regex block (a small YAML subset with Chinese keys) as RegexScripts."""
    items: list[dict] = []
    block_key = None
    block: list[str] = []
    block_indent = None

    def scalar(v: str):
        v = v.strip()
        if v.startswith("'") and v.endswith("'"):
            return v[1:-1].replace("''", "'")
        if v in ("true", "false"):
            return v == "true"
        if re.fullmatch(r"-?\d+", v):
            return int(v)
        return v

    def end_block():
        nonlocal block_key, block, block_indent
        if block_key is not None:
            items[-1][block_key] = "\n".join(block).rstrip("\n")  # '|-': trailing newlines stripped
        block_key, block, block_indent = None, [], None

    for line in path.read_text("utf-8").splitlines():
        if block_key is not None:
            indent = len(line) - len(line.lstrip(" "))
            if not line.strip():
                block.append("")
                continue
            if block_indent is None:
                block_indent = indent
            if indent >= block_indent:
                block.append(line[block_indent:])
                continue
            end_block()
        m = re.match(r"^(\s*)(- )?([^:]+):\s?(.*)$", line)
        if not m:
            continue
        if m.group(2):
            items.append({})
        key, value = m.group(3).strip(), m.group(4)
        if not items:
            continue
        if value.strip() == "|-":
            block_key = key
        elif value.strip():
            items[-1][key] = scalar(value)
    end_block()
    out = []
    for it in items:
        out.append(RegexScript(
            id=it["id"], scriptName=it["正则名称"], disabled=not it["启用"], findRegex=it["查找表达式"],
            replaceString=it.get("内容", ""),
            placement=[p for p, k in ((1, "用户输入"), (2, "AI输出")) if it.get(k)],
            markdownOnly=it.get("仅格式显示", False), promptOnly=it.get("仅格式提示词", False),
            minDepth=it.get("最小深度"), maxDepth=it.get("最大深度"), runOnEdit=True,
        ))
    return out


@pytest.fixture(scope="module")
def qingkong() -> tuple[dict, list[RegexScript]]:
    card = png_card(fixture("cards", "青空 理.png"))
    return card, scripts_from_card(card)


@pytest.fixture(scope="module")
def lilian() -> tuple[dict, list[RegexScript]]:
    card = json.loads(fixture("cards", "角色卡_修女与女忍的双面日常.json").read_text("utf-8"))
    return card, scripts_from_card(card)


@pytest.fixture(scope="module")
def stagedog() -> list[RegexScript]:
    return stagedog_scripts(fixture("statusbars", "stagedog-template-card-regexes.yaml"))


# -- the model ------------------------------------------------------------------------------------------------------

def test_model_fields_defaults_and_unknown_fields_kept():
    raw = {"id": "x", "scriptName": "n", "findRegex": "/a/g", "replaceString": "b", "trimStrings": None,
           "placement": [2, "1"], "disabled": 0, "markdownOnly": True, "promptOnly": False, "runOnEdit": True,
           "substituteRegex": True, "minDepth": "", "maxDepth": "3", "folder": "f1", "extra": {"k": 1}}
    s = RegexScript.model_validate(raw)
    assert (s.trimStrings, s.placement, s.disabled, s.substituteRegex, s.minDepth, s.maxDepth) == \
        ([], [2, 1], False, 1, None, 3)
    dumped = s.model_dump()
    assert dumped["folder"] == "f1" and dumped["extra"] == {"k": 1}
    empty = RegexScript()
    assert (empty.findRegex, empty.placement, empty.minDepth, empty.substituteRegex) == ("", [], None, 0)


def test_legacy_placements_are_migrated():
    md = RegexScript(findRegex="a", placement=[0])
    assert md.placement == [1, 2, 3, 5, 6] and md.markdownOnly and md.promptOnly
    md2 = RegexScript(findRegex="a", placement=[0, 2])
    assert md2.placement == [2] and md2.markdownOnly and md2.promptOnly
    assert RegexScript(findRegex="a", placement=[4]).placement == [3]
    assert RegexScript(findRegex="a", placement=[4, 1]).placement == [1]


def test_scripts_from_card_shapes():
    assert scripts_from_card({}) == []
    assert scripts_from_card({"data": {"extensions": {"regex_scripts": "nope"}}}) == []
    got = scripts_from_card({"data": {"extensions": {"regex_scripts": [{"findRegex": "a"}, 5]}}})
    assert [s.findRegex for s in got] == ["a"]
    assert [s.findRegex for s in scripts_from_card({"extensions": {"regex_scripts": [{"findRegex": "v1"}]}})] == ["v1"]


def test_parse_find_regex_like_sillytavern():
    assert parse_find_regex("/<b>(.*?)</b>/gi") == ("<b>(.*?)</b>", "gi")  # unescaped '/' inside is fine
    assert parse_find_regex("<StatusPlaceHolderImpl/>") == ("<StatusPlaceHolderImpl/>", "")
    assert parse_find_regex("/abc/") == ("abc", "")
    assert parse_find_regex("/abc/gg") == ("/abc/gg", "")   # duplicate flag → the whole string is the pattern
    assert parse_find_regex("/abc/q") == ("/abc/q", "")      # unknown flag → the same
    assert parse_find_regex("") is None


# -- replacement semantics ------------------------------------------------------------------------------------------

def test_capture_groups_match_and_named_groups():
    s = script(r"/(?<who>\w+) says (\w+)/g", "[$<who>|$2|$1|$0|{{match}}|{{MATCH}}|$&|$9|$<nope>]")
    assert run(s, "Ann says hi") == "[Ann|hi|Ann|Ann says hi|Ann says hi|Ann says hi|Ann says hi||]"


def test_dollar_forms_that_are_not_references_stay():
    s = script("/x/", "$$ $` $' $('body')")
    assert run(s, "x") == "$$ $` $' $('body')"


def test_bare_pattern_is_case_sensitive_first_match_only():
    s = script("ab", "X")
    assert run(s, "ab ab AB") == "X ab AB"
    assert run(script("/ab/gi", "X"), "ab ab AB") == "X X X"


def test_javascript_semantics():
    assert run(script(r"/(?<=\$)\d+/g", "N"), "$12 and 34") == "$N and 34"           # lookbehind
    assert run(script(r"/^b/gm", "B"), "a\nb\nb") == "a\nB\nB"                       # m flag
    assert run(script(r"/a.c/s", "X"), "a\nc") == "X"                                # s flag
    assert run(script(r"/./gu", "<$&>"), "a💖") == "<a><💖>"                          # u: code points
    assert run(script(r"/\p{Script=Han}+/gu", "汉"), "abc中文def") == "abc汉def"
    assert run(script(r"/[\s\S]*?END/", "-"), "x\ny END z END") == "- z END"          # lazy, first only
    assert run(script(r"/(?:)/g", "-"), "ab") == "-a-b-"                              # empty matches advance


def test_split_surrogate_pairs_do_not_break_the_text():
    out = run(script("/./g", "$&"), "a💖b")  # without u, '.' matches UTF-16 halves; reassembled afterwards
    assert out == "a💖b"


def test_macros_run_after_capture_substitution_including_captured_text():
    s = script(r"/<s>(.*?)<\/s>/g", "{{char}}: $1")
    assert run(s, "<s>hello {{user}}</s>") == "理: hello 阿明"
    assert run(script("/x/", "{{random::a}}{{unknown}}"), "x") == "a{{unknown}}"


def test_trim_strings_apply_to_inserted_groups_only():
    s = script(r"/<b>(.*?)<\/b>/g", "[$1]", trimStrings=["*", "{{char}}"])
    assert run(s, "* <b>*理*bold*</b> *") == "* [bold] *"


def test_substitute_regex_raw_and_escaped():
    c = mctx(char="A.c")
    assert run(script("/{{char}}/g", "X", substituteRegex=0), "A.c {{char}}", ctx=c) == "A.c X"
    assert run(script("/{{char}}/g", "X", substituteRegex=1), "A.c Abc", ctx=c) == "X X"   # '.' is a wildcard
    assert run(script("/{{char}}/g", "X", substituteRegex=2), "A.c Abc", ctx=c) == "X Abc"  # escaped
    assert escape_regex_macro("a.b*(c)\n/") == "a\\.b\\*\\(c\\)\\n\\/"
    c2 = mctx(char="(x")  # an unbalanced value would make the raw pattern invalid → skipped, not an error
    assert run(script("/{{char}}/", "X", substituteRegex=1), "(x", ctx=c2) == "(x"
    assert run(script("/{{char}}/", "X", substituteRegex=2), "(x", ctx=c2) == "X"


def test_invalid_patterns_are_skipped_with_a_warning(caplog):
    issues: list[str] = []
    with caplog.at_level(logging.WARNING):
        assert run(script("/a(/g", "X", scriptName="broken"), "a(", issues=issues) == "a("
        assert run(script("/a/x", "X"), "a") == "a"  # 'x' passes SillyTavern's flag check, JS rejects it
    assert issues and "broken" in issues[0]
    assert "broken" in caplog.text


def test_disabled_and_empty_scripts_do_nothing():
    assert run(script("/a/", "b", disabled=True), "a") == "a"
    assert run(script("", "b"), "a") == "a"


def test_catastrophic_pattern_is_stopped_within_the_time_limit(caplog):
    bad = script("/(a+)+$/", "X", scriptName="catastrophic")
    text = "a" * 5000 + "b"
    issues: list[str] = []
    start = time.monotonic()
    with caplog.at_level(logging.WARNING):
        out = apply_scripts(text, [bad, script("/b$/", "B")], placement=AI, depth=0, macros_ctx=mctx(),
                            time_limit=0.2, issues=issues)
    elapsed = time.monotonic() - start
    assert elapsed < 3.0
    assert out == "a" * 5000 + "B"  # skipped, and the next script still ran
    assert any("catastrophic" in i and "time limit" in i for i in issues)
    assert "catastrophic" in caplog.text
    # The same text again: skipped at once, without running the pattern.
    start = time.monotonic()
    again: list[str] = []
    assert run_script(bad, text, macros_ctx=mctx(), time_limit=0.2, issues=again) == text
    assert time.monotonic() - start < 0.1 and again
    # The engine is usable afterwards.
    assert run(script("/a+/", "A"), "aaab") == "Ab"


def test_runaway_output_fails_cleanly():
    # One match inserted a thousand times into a 300k text needs ~600 MB: the engine's memory limit stops it.
    s = script(r"/([\s\S]+)/", "$1" * 1000, scriptName="huge")
    issues: list[str] = []
    out = run_script(s, "a" * 300_000, macros_ctx=mctx(), time_limit=5.0, issues=issues)
    assert out == "a" * 300_000
    assert issues and "huge" in issues[0] and "memory" in issues[0]
    assert run(script("/a/", "b"), "a") == "b"


def test_threads_each_get_an_engine():
    results: list[str] = []

    def work():
        results.append(run(script(r"/(\d+)/g", "<$1>"), "1 22 333"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["<1> <22> <333>"] * 4


# -- when scripts run -----------------------------------------------------------------------------------------------

def matrix_scripts(**kw) -> list[RegexScript]:
    return [
        script("/$/", "|D", markdownOnly=True, **kw),
        script("/$/", "|P", promptOnly=True, **kw),
        script("/$/", "|B", markdownOnly=True, promptOnly=True, **kw),
        script("/$/", "|N", **kw),
    ]


def test_display_prompt_and_stored_matrix():
    ss = matrix_scripts()
    go = lambda **kw: apply_scripts("t", ss, placement=AI, depth=0, macros_ctx=mctx(), **kw)  # noqa: E731
    # "neither" scripts stand for SillyTavern's stored rewrite, so they run first, in every view.
    assert go(is_markdown=True) == "t|N|D|B"
    assert go(is_prompt=True) == "t|N|P|B"
    assert go() == "t|N"                        # what SillyTavern would have stored
    assert go(is_markdown=True, is_prompt=True) == "t|N|D|P|B"
    assert apply_scripts("t", ss, placement=USER, depth=0, macros_ctx=mctx(), is_markdown=True) == "t"


def test_run_on_edit():
    ss = [script("/$/", "|E", runOnEdit=True), script("/$/", "|X", runOnEdit=False)]
    assert apply_scripts("t", ss, placement=AI, depth=0, macros_ctx=mctx()) == "t|E|X"
    assert apply_scripts("t", ss, placement=AI, depth=0, macros_ctx=mctx(), is_edit=True) == "t|E"


def test_depth_windows():
    s_min = script("/$/", "|old", minDepth=1, markdownOnly=True)
    s_max = script("/$/", "|new", maxDepth=2, markdownOnly=True)
    s_cont = script("/$/", "|cont", minDepth=-1, maxDepth=0, markdownOnly=True)
    s_neg = script("/$/", "|any", maxDepth=-1, markdownOnly=True)   # negative maxDepth = no bound
    ss = [s_min, s_max, s_cont, s_neg]
    view = lambda d: apply_scripts("t", ss, placement=AI, depth=d, macros_ctx=mctx(), is_markdown=True)  # noqa
    assert view(-1) == "t|new|cont|any"
    assert view(0) == "t|new|cont|any"    # the minDepth script never touches the newest reply
    assert view(1) == "t|old|new|any"
    assert view(2) == "t|old|new|any"
    assert view(3) == "t|old|any"


def test_depth_is_required_for_chat_text():
    with pytest.raises(TypeError):
        apply_scripts("t", [], placement=AI, macros_ctx=mctx())  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        apply_scripts("t", [], placement=AI, depth=None, macros_ctx=mctx())
    with pytest.raises(ValueError):
        apply_scripts("t", [], placement=9, depth=0, macros_ctx=mctx())
    # world info not inserted at a depth: the window does not apply
    s = script("/$/", "|wi", placement=[5], promptOnly=True, minDepth=3)
    assert apply_scripts("t", [s], placement=Placement.WORLD_INFO, depth=None, macros_ctx=mctx(),
                         is_prompt=True) == "t|wi"
    assert apply_scripts("t", [s], placement=Placement.WORLD_INFO, depth=1, macros_ctx=mctx(),
                         is_prompt=True) == "t"


def test_variables_in_replacements_mutate_the_context():
    c = mctx(variables={})
    s = script(r"/<hp>(\d+)<\/hp>/g", "{{setvar::hp::$1}}HP {{getvar::hp}}")
    assert apply_scripts("<hp>7</hp>", [s], placement=AI, depth=0, macros_ctx=c) == "HP 7"
    assert c.variables == {"hp": "7"}


# -- real scripts: 青空 理 (MVU classic) -------------------------------------------------------------------------------

QK_MESSAGE = ("理看着你。\n<summary>理和{{user}}在教室里聊天。</summary>\n"
              "<UpdateVariable>\n_.set('理.好感度', 10, 15);\n</UpdateVariable>\n<StatusPlaceHolderImpl/>")


def test_qingkong_scripts_loaded(qingkong):
    _, ss = qingkong
    assert [s.scriptName for s in ss] == ["去除变量更新", "去除10楼内摘要", "去除10层以上除摘要以外部分",
                                          "对ai隐藏状态栏", "状态栏", "状态栏-纯文本"]
    assert ss[1].maxDepth == 10 and ss[2].minDepth == 11 and ss[4].maxDepth == 2 and ss[5].disabled


def test_qingkong_display_newest(qingkong):
    _, ss = qingkong
    bar = ss[4].replaceString
    out = apply_scripts(QK_MESSAGE, ss, placement=AI, depth=0, macros_ctx=mctx(), is_markdown=True)
    # update block removed (both flags), placeholder → the status bar page verbatim (it holds no macros),
    # summary kept (its scripts are prompt-only); the display's own {{user}} is left to the display layer.
    assert out == "理看着你。\n<summary>理和{{user}}在教室里聊天。</summary>\n\n" + bar
    assert bar.startswith("```\n\n<!DOCTYPE html>") and "getChatMessages" in bar


def test_qingkong_display_older_than_max_depth(qingkong):
    _, ss = qingkong
    out = apply_scripts(QK_MESSAGE, ss, placement=AI, depth=3, macros_ctx=mctx(), is_markdown=True)
    assert out == "理看着你。\n<summary>理和{{user}}在教室里聊天。</summary>\n\n<StatusPlaceHolderImpl/>"


def test_qingkong_prompt_recent_drops_summary_and_placeholder(qingkong):
    _, ss = qingkong
    for depth in (0, 10):
        out = apply_scripts(QK_MESSAGE, ss, placement=AI, depth=depth, macros_ctx=mctx(), is_prompt=True)
        assert out == "理看着你。\n\n\n"


def test_qingkong_prompt_old_keeps_only_the_summary(qingkong):
    _, ss = qingkong
    for depth in (11, 40):
        out = apply_scripts(QK_MESSAGE, ss, placement=AI, depth=depth, macros_ctx=mctx(), is_prompt=True)
        assert out == "理和阿明在教室里聊天。"  # $1, then macros over the replacement


def test_qingkong_user_messages_untouched(qingkong):
    _, ss = qingkong
    assert apply_scripts(QK_MESSAGE, ss, placement=USER, depth=0, macros_ctx=mctx(), is_prompt=True) == QK_MESSAGE


def test_qingkong_plain_text_bar_keeps_tavernhelper_macros(qingkong):
    _, ss = qingkong
    plain = ss[5].model_copy(update={"disabled": False})
    out = apply_scripts("<StatusPlaceHolderImpl/>", [plain], placement=AI, depth=0, macros_ctx=mctx(),
                        is_markdown=True)
    assert out == plain.replaceString  # {{get_message_variable::…}} kept for the status-bar layer
    assert "{{get_message_variable::stat_data.理.好感度[0]}}" in out


# -- real scripts: 修女与女忍 (modern MVU) -------------------------------------------------------------------------------

def test_lilian_scripts(lilian):
    _, ss = lilian
    assert [s.scriptName for s in ss] == ["MVU·去除变量更新", "状态栏渲染"]
    msg = "莉莉安微笑。<UpdateVariable>\n_.set('x', 1);\n</UpdateVariable>\n<StatusPlaceHolderImpl/>"
    shown = apply_scripts(msg, ss, placement=AI, depth=5, macros_ctx=mctx(), is_markdown=True)
    assert shown == "莉莉安微笑。\n" + ss[1].replaceString
    assert shown.count("```html") == 1
    sent = apply_scripts(msg, ss, placement=AI, depth=5, macros_ctx=mctx(), is_prompt=True)
    assert sent == "莉莉安微笑。\n<StatusPlaceHolderImpl/>"  # the card hides no placeholder from the model


# -- real scripts: StageDog template ----------------------------------------------------------------------------------

SD_DONE = "她点了点头。\n<UpdateVariable>\n_.set('好感度', 1, 2);\n</UpdateVariable>\n<StatusPlaceHolderImpl/>"
SD_STREAMING = "她点了点头。\n<UpdateVariable>\n_.set('好感度', 1"


def test_stagedog_scripts_loaded(stagedog):
    assert [s.scriptName for s in stagedog] == ["[不发送]去除变量更新", "[折叠]变量更新中", "[折叠]完整变量更新",
                                                "[界面]美化状态栏", "[界面]前端界面状态栏"]
    assert stagedog[0].placement == [1, 2] and stagedog[0].maxDepth == 3 and stagedog[0].promptOnly
    assert stagedog[3].disabled and stagedog[4].placement == [2]


def test_stagedog_display_folds_the_finished_update(stagedog):
    out = apply_scripts(SD_DONE, stagedog, placement=AI, depth=0, macros_ctx=mctx(), is_markdown=True)
    loader = ("```\n<body>\n<script>\n$('body').load('https://testingcf.jsdelivr.net/gh/StageDog/"
              "tavern_helper_template/dist/角色卡示例/界面/状态栏/index.html')\n</script>\n</body>\n```")
    assert out == ("她点了点头。\n\n<details>\n<summary>变量更新情况</summary>\n_.set('好感度', 1, 2);\n\n</details>\n"
                   + loader)


def test_stagedog_display_folds_an_unfinished_update(stagedog):
    out = apply_scripts(SD_STREAMING, stagedog, placement=AI, depth=0, macros_ctx=mctx(), is_markdown=True)
    m = re.fullmatch(r"她点了点头。\n\n<details>\n<summary>变量更新中(\.{1,3})</summary>\n_\.set\('好感度', 1\n</details>",
                     out)
    assert m, out
    # {{random}} in the replacement is deterministic per chat and text by default
    assert apply_scripts(SD_STREAMING, stagedog, placement=AI, depth=0, macros_ctx=mctx(), is_markdown=True) == out


def test_stagedog_prompt_removes_updates_within_max_depth(stagedog):
    sent = apply_scripts(SD_DONE, stagedog, placement=AI, depth=0, macros_ctx=mctx(), is_prompt=True)
    assert sent == "她点了点头。\n\n<StatusPlaceHolderImpl/>"
    streaming = apply_scripts(SD_STREAMING, stagedog, placement=AI, depth=3, macros_ctx=mctx(), is_prompt=True)
    assert streaming == "她点了点头。\n"
    assert apply_scripts(SD_DONE, stagedog, placement=AI, depth=4, macros_ctx=mctx(), is_prompt=True) == SD_DONE
    user = "好的<update>x</update>!"
    assert apply_scripts(user, stagedog, placement=USER, depth=1, macros_ctx=mctx(), is_prompt=True) == "好的!"
