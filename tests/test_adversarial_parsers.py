"""Issue 29 §1: every parser in core/ of text a card, a model, a file or a user supplies finishes on 1 MB of
adversarial text — long runs of spaces, nested brackets, unclosed quotes and tags, a prefix repeated without its
end — in time linear in the text (or it bounds what it reads).

One long heading line in 大纲.md froze the window for minutes: ``^(#{1,2})(?!#)\\s*(.*?)\\s*$`` is quadratic on a
``#`` followed by many spaces. Python's ``re`` holds the GIL while it backtracks and cannot be interrupted, so
each parser runs in a worker process; a call that has not finished after :data:`CALL_LIMIT` seconds fails its test
(a linear parser takes well under a second here; a quadratic one, minutes) and the worker is replaced. Nothing here
measures speed: a call only has to finish. The list of parsers is docs/architecture.md's "Parsers of untrusted
text"; :data:`CASES` names each one with the text shapes that would make a backtracking pattern blow up.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

#: CPU seconds one call of a parser on one adversarial text may take before the test says it does not finish. CPU
#: time of the worker, not wall time: on a loaded machine (CI beside other jobs) a linear parser waits for a core
#: without spending any, and must not fail for it. Where the worker's CPU time can't be read (no /proc), wall time.
CALL_LIMIT = 10.0
#: Wall-clock backstop per call, whatever the CPU clock says (a worker starved of CPU that long is a broken machine).
WALL_LIMIT = 6 * CALL_LIMIT
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used (Linux /proc/PID/stat fields 14 and 15), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK
#: Characters of each adversarial text.
SIZE = 1_000_000


# ---- the adversarial texts ---------------------------------------------------------------------------------------

def _fill(unit: str, size: int = SIZE) -> str:
    return unit * max(1, size // max(1, len(unit)))


def shapes(*tokens: str) -> list[str]:
    """The texts one parser is fed: generic shapes, and for each of its trigger ``tokens`` (an opening tag, a
    heading mark, a key prefix …) that token followed by a long run of spaces and one more character, the token
    then text then spaces with no end, the token repeated with no end, and the token with a space repeated."""
    out = [_fill(" ") + "x", _fill("[") , _fill("{"), _fill("("), '"' + _fill("a"), _fill('\\"'), _fill("a "),
           _fill("\n"), _fill(" \n")]
    for t in tokens:
        out += [t + _fill(" ") + "x", t + "a" + _fill(" "), _fill(t), _fill(t + " "), _fill(t + "a" + " " * 50)]
    return out


def lines_of(*tokens: str) -> list[str]:
    """:func:`shapes` for a parser that works on single lines: the same runs with no newline in them."""
    return [s for s in shapes(*tokens) if "\n" not in s]


# ---- the parsers ---------------------------------------------------------------------------------------------------

def _macro_ctx() -> Any:
    from liyuan_desktop.core.macros import MacroContext

    return MacroContext(user="你", char="林")


def _outline(text: str) -> Any:
    from liyuan_desktop.core.story.outline import parse_outline

    o = parse_outline(text)
    o.due_chapters()
    return o


def _macros(text: str) -> Any:
    from liyuan_desktop.core.macros import apply_macros

    return apply_macros(text, _macro_ctx())


def _th_macros(text: str) -> Any:
    from liyuan_desktop.core.macros.tavernhelper import apply_th_macros, lodash_get

    lodash_get({"a": 1}, text[:100_000])
    return apply_th_macros(text, _macro_ctx(), lambda scope: {"a": {"b": 1}})


def _ejs_detect(text: str) -> Any:
    from liyuan_desktop.core.macros.ejs import TemplateEnv, has_template

    has_template(text)
    return TemplateEnv().label_of(text)


def _ejs_render(text: str) -> Any:
    from liyuan_desktop.core.macros.ejs import TemplateEnv

    return TemplateEnv().render(text)


def _lore_keys(text: str) -> Any:
    from liyuan_desktop.core.lore.keys import key_matches

    hay = "雨夜里她推门进来。" * 50
    key_matches(hay, text[:100_000])  # a key as long as a card may write one
    return key_matches(text, "雨夜") or key_matches(text, "/a+b/i")


def _lore_regex_key(text: str) -> Any:
    from liyuan_desktop.core.lore.jsregex import JsRegexUnsupported, parse_regex_key, translate_js_regex_re2

    key = "/" + text + "/i"
    parsed = parse_regex_key(key)
    try:
        translate_js_regex_re2(text, "i")
    except (JsRegexUnsupported, ValueError):
        pass
    return parsed


def _regex_script_find(text: str) -> Any:
    from liyuan_desktop.core.cards.regex_scripts import parse_find_regex

    return parse_find_regex(text)


def _regex_script_run(text: str) -> Any:
    from liyuan_desktop.core.cards.regex_scripts import RegexScript, apply_scripts

    sc = RegexScript(scriptName="t", findRegex=r"/(\w+)\s*$/g", replaceString="[$1]", placement=[2])
    return apply_scripts(text, [sc], placement=2, depth=0, macros_ctx=_macro_ctx())


def _mvu_commands(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu.commands import parse_update_blocks, strip_update_blocks

    parse_update_blocks(text)
    parse_update_blocks("<UpdateVariable>" + text)
    parse_update_blocks("<UpdateVariable>_.set(" + text)
    return strip_update_blocks(text)


def _era_commands(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu import apply_ops
    from liyuan_desktop.core.ledger.mvu.commands import parse_update_blocks, strip_update_blocks

    strip_update_blocks(text)
    apply_ops({"a": {"b": 1}}, parse_update_blocks("<VariableEdit>" + text))
    apply_ops({"a": {"b": 1}}, parse_update_blocks("<VariableInsert>" + text + "</VariableInsert><VariableDelete>" + text))


def _th_scripts(text: str) -> Any:
    from liyuan_desktop.core.cards.th_scripts import read_th_library

    read_th_library({"tavern_helper": {"scripts": [{"type": "script", "name": "ERA", "id": "x", "content": text}]}})


def _mvu_values(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu.commands import parse_value

    return parse_value(text[:100_000])


def _mvu_paths(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu.paths import get_path, split_path

    split_path(text)
    return get_path({"a": {"b": 1}}, text)


def _mvu_initvar(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu.greeting import strip_variable_blocks
    from liyuan_desktop.core.ledger.mvu.initvar import parse_data

    strip_variable_blocks(text)
    try:
        return parse_data(text)
    except (ValueError, RecursionError):
        return None


def _mvu_greeting(text: str) -> Any:
    from liyuan_desktop.core.ledger.mvu.greeting import greeting_variables

    return greeting_variables(text, {"a": 1}, [])


def _scribe(text: str) -> Any:
    from liyuan_desktop.core.ledger.scribe import parse_scribe_mvu, parse_scribe_output, parse_scribe_panels

    parse_scribe_mvu(text)
    parse_scribe_panels(text)
    return parse_scribe_output(text)


def _panels(text: str) -> Any:
    from liyuan_desktop.core.ledger.panels import render_template

    return render_template(text, {"a": {"b": 1}})


def _text_calls(text: str) -> Any:
    from liyuan_desktop.core.beat.tools.registry import get_tool
    from liyuan_desktop.core.beat.tools.sets import ROLEPLAY_TOOLS

    return _find_text_calls(text, {n: get_tool(n) for n in ROLEPLAY_TOOLS})


def _find_text_calls(text: str, offered: Any) -> Any:
    from liyuan_desktop.core.beat.text_calls import find_text_calls

    return find_text_calls(text, offered)


def _think_echo_merge(text: str) -> Any:
    from liyuan_desktop.core.beat.echo import strip_echo
    from liyuan_desktop.core.beat.merge import dedupe_identical_blocks, format_blocks, merge_final_text
    from liyuan_desktop.core.beat.think import split_think

    split_think(text)
    strip_echo(text, injection="【世界状态】", user="你好")
    format_blocks(text)
    dedupe_identical_blocks(text)
    return merge_final_text("她推门。", text)


def _repetition(text: str) -> Any:
    from liyuan_desktop.core.beat.repetition import RepetitionGuard, partial_content

    g = RepetitionGuard()
    for i in range(0, len(text), 4096):  # as a stream arrives
        if g.feed(text[i:i + 4096]):
            break
    return partial_content('{"content": "' + text)


def _draft_tools(text: str) -> Any:
    from liyuan_desktop.core.beat.draft import apply_edits, search_text

    search_text(text, 0, "雨夜")
    from liyuan_desktop.core.errors import ToolError

    try:
        return apply_edits(text, [{"old": text[:1000] + "不存在", "new": "x"}])
    except ToolError:  # not found: the refusal the edit documents
        return None


def _review_and_claims(text: str) -> Any:
    from liyuan_desktop.core.chat.agent import claims_edits, edit_call_in_text
    from liyuan_desktop.core.chat.review import parse_review_output

    claims_edits(text)
    edit_call_in_text(text)
    return parse_review_output(text)


def _chapter_checks(text: str) -> Any:
    from liyuan_desktop.core.story.review import check_dead_speakers, check_lost_items, check_repetition

    check_dead_speakers(text, "01.md", {"林": "第一章"})
    check_lost_items(text, "01.md", {"玉佩": "第一章"})
    return check_repetition(text[:200_000], "01.md")


def _chapters(text: str) -> Any:
    from liyuan_desktop.core.chat.prose_import import title_from_filename
    from liyuan_desktop.core.story.chapters import split_text_into_chapters

    title_from_filename(text[:10_000] + ".txt")
    return split_text_into_chapters(text)


def _count_words(text: str) -> Any:
    from liyuan_desktop.core.lore.budget import approx_tokens
    from liyuan_desktop.core.memory.search import terms
    from liyuan_desktop.core.text import count_words

    terms(text)
    approx_tokens(text)
    return count_words(text)


def _lore_layers(text: str) -> Any:
    from liyuan_desktop.core.prompt.lore_layers import empty_wrapper_indices, examples_kept

    empty_wrapper_indices([text, "</a>", text])
    return examples_kept(text, "你", "林")


def _st_chat(text: str) -> Any:
    from liyuan_desktop.core.cards.st_chat import StChatError, parse_st_chat, parse_st_time

    parse_st_time(text)
    head = '{"user_name":"你","character_name":"林","create_date":"%s"}\n' % text.replace('"', "'").replace("\\", "/")
    msg = '{"name":"林","is_user":false,"send_date":"%s","mes":"%s"}\n'
    body = msg % (text[:500_000].replace('"', "'").replace("\\", "/"), "雨")
    try:
        parse_st_chat((head + body + text).encode("utf-8"))
    except (StChatError, RecursionError):
        pass
    return None


def _llm_errors(text: str) -> Any:
    from liyuan_desktop.core.llm.errors import classify_error, mask_secrets, server_window

    mask_secrets(text, ["sk-secret"])
    server_window(text)
    return classify_error(400, text)


def _messages_render(text: str) -> Any:
    from liyuan_desktop.core.messages import render

    return render(text, "en")


def _export_markdown(text: str) -> Any:
    from liyuan_desktop.core.story import export

    return export._runs(text) if hasattr(export, "_runs") else None


def _sse_lines(text: str) -> Any:
    import asyncio

    from liyuan_desktop.core.llm.sse import stream_lines

    raw = ("data: " + text).encode("utf-8")

    async def chunks():  # as a server trickles it: small pieces of (mostly) one line that never ends
        for i in range(2, len(raw), 2):
            yield raw[i:i + 2]

    async def read() -> int:
        return sum([len(line) async for line in stream_lines(raw[:2], chunks())])

    return asyncio.run(read())


def _search_matcher(text: str) -> Any:
    from liyuan_desktop.core.chat.search import Matcher

    Matcher("雨夜").find(text)
    return Matcher(r"(\w+)\s*$", regex=True).find(text)


def _card_text(text: str) -> Any:
    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.cards.inspect import HTML_BLOCK

    HTML_BLOCK.search(text)
    return card_from_json({"spec": "chara_card_v3", "data": {"name": "林", "description": text, "first_mes": text}})


#: (name, parser, texts). A parser gets each text and must return (each case catches the refusals its parser
#: documents; any other exception, a RecursionError above all, fails).
CASES: list[tuple[str, Callable[[str], Any], Callable[[], Iterable[str]]]] = [
    ("outline 大纲.md", _outline, lambda: shapes("#", "##", "## 第一章 {", "- ", "1.", "- 回收：", "```")),
    ("macros (SillyTavern)", _macros, lambda: shapes("{{", "{{setvar::", "{{random:", "{{roll ", "{{//", "<USER")),
    ("TavernHelper macros", _th_macros, lambda: shapes("{{get_message_variable::", "[\"", "['", "a.")),
    ("EJS detection and labels", _ejs_detect, lambda: shapes("<%", "<%%")),
    ("EJS compile (time-limited)", _ejs_render, lambda: ["<%" + _fill(" "), "<%= '" + _fill("a"), _fill("<%")]),
    ("world-info keys", _lore_keys, lambda: shapes("/", "雨", "a")),
    ("world-info /regex/ keys", _lore_regex_key, lambda: shapes("/", "{1", "(?", "[", "\\")),
    ("regex-script find strings", _regex_script_find, lambda: lines_of("/", "//")),
    ("regex scripts (QuickJS, time-limited)", _regex_script_run, lambda: [_fill("a ") + "!", _fill(" ") + "x"]),
    ("MVU commands", _mvu_commands, lambda: shapes("<UpdateVariable>", "<JSONPatch>", "_.set(", "_.set('a', ", "'")),
    ("ERA variable commands", _era_commands, lambda: shapes("<VariableEdit>", "<VariableInsert>", "{\"a\":", "[")),
    ("TavernHelper script imports", _th_scripts, lambda: shapes("import", "import ", "import(", "<script src=",
                                                                 "from '", "try {", "// ", "/*")),
    ("MVU command values", _mvu_values, lambda: shapes("'", "{a:", "[1,")),
    ("MVU paths", _mvu_paths, lambda: lines_of(".", "[", "['", "[\"", "[0")),
    ("[InitVar] / JSONPatch bodies", _mvu_initvar, lambda: shapes("<initvar>", "```", "{", "[", "- ", "a: ")),
    ("greeting variables", _mvu_greeting, lambda: shapes("<initvar>", "<UpdateVariable>")),
    ("scribe output", _scribe, lambda: shapes("```json", "```", "{", "{\"patch\": ")),
    ("status-panel templates", _panels, lambda: shapes("{{", "{{a", "{{ a")),
    ("tool calls written as text", _text_calls, lambda: shapes("```json\n", "<tool_call>", "{\"name\"", "```")),
    ("think / echo / format blocks", _think_echo_merge, lambda: shapes("<think>", "<content>", "<a", "```", "【开场 ·")),
    ("repetition guard", _repetition, lambda: shapes("啊", "ab", "\"content\": \"")),
    ("draft search and edit", _draft_tools, lambda: shapes("雨", "\n\n")),
    ("review replies and edit claims", _review_and_claims, lambda: shapes("```json", "{", "改好了", "[")),
    ("chapter review checks", _chapter_checks, lambda: shapes("林说", "「", "（", "。", "玉佩")),
    ("chapter headings (prose import)", _chapters, lambda: shapes("第", "第一章", "Chapter ", "\n第")),
    ("word count, tokens, memory terms", _count_words, lambda: shapes("a'", "a-", "雨")),
    ("lore wrappers and examples", _lore_layers, lambda: shapes("<a", "<a ", "</a", "<START>")),
    ("SillyTavern chat files", _st_chat, lambda: lines_of("May 1, 2024 @", "2024-1-1 @", "a")),
    ("model-server error bodies", _llm_errors, lambda: shapes("http://", "tools", "context length of ", "n_ctx")),
    ("plain texts rendered as they are", _messages_render, lambda: shapes("：", "{", "世界书「")),
    ("model stream lines (SSE)", _sse_lines, lambda: shapes("data: ", "\r")),
    ("library search", _search_matcher, lambda: shapes("雨", "a")),
    ("card fields", _card_text, lambda: shapes("<div", "{{get_message_variable::")),
]


#: Parsers that do not finish yet on some shape (docs/architecture.md "Parsers of untrusted text" says which).
#: Listed, not run: each would spend CALL_LIMIT seconds per text to fail. Empty since issue 29 §1 was closed; a
#: parser added here needs an issue.
KNOWN_UNBOUNDED: set[str] = set()


# ---- the worker ------------------------------------------------------------------------------------------------------

def _worker() -> None:
    """Run cases named on stdin, one per line; after each text print ``ok`` (or ``crash <why>``), after each case
    ``done``."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    by_name = {name: (fn, texts) for name, fn, texts in CASES}
    for line in sys.stdin:
        name = line.rstrip("\n")
        fn, texts = by_name[name]
        for i, text in enumerate(texts()):
            try:
                fn(text)
                print(f"ok {i}", flush=True)
            except (RecursionError, MemoryError) as e:
                print(f"crash {i} {type(e).__name__}", flush=True)
            except Exception as e:  # noqa: BLE001 - each case catches the refusals its parser documents
                print(f"error {i} {type(e).__name__}: {str(e)[:200]!r}", flush=True)
        print("done", flush=True)


class _Worker:
    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, bufsize=1)
        self.buf = ""
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]

    def run(self, name: str) -> list[str]:
        """The lines the worker printed for case ``name``; raises TimeoutError naming the text index that did not
        finish within CALL_LIMIT."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        out: list[str] = []
        while True:
            line = self._line(name, len(out))  # each text gets its own limit
            if line == "done":
                return out
            out.append(line)

    def _line(self, name: str, index: int) -> str:
        """The worker's next output line (read from the pipe itself: a buffered reader would hold lines the
        selector no longer sees); TimeoutError when the worker spent CALL_LIMIT CPU seconds (or WALL_LIMIT
        seconds) on it."""
        cpu0 = _cpu_seconds(self.proc.pid)
        wall0 = time.monotonic()
        while "\n" not in self.buf:
            if not self.sel.select(timeout=0.25):
                cpu = _cpu_seconds(self.proc.pid)
                spent = cpu - cpu0 if cpu is not None and cpu0 is not None else time.monotonic() - wall0
                if spent > CALL_LIMIT or time.monotonic() - wall0 > WALL_LIMIT:
                    raise TimeoutError(f"text {index} of {name!r} did not finish within {CALL_LIMIT:g} s "
                                       f"(CPU {spent:.1f} s, wall {time.monotonic() - wall0:.1f} s)")
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                raise RuntimeError(f"the worker died on text {index} of {name!r}")
            self.buf += chunk.decode("utf-8", "replace")
        line, self.buf = self.buf.split("\n", 1)
        return line.strip()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def worker():
    box = [_Worker()]
    yield box
    box[0].close()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [
    pytest.param(c[0], marks=pytest.mark.xfail(run=False, reason="issue 29 §1: not bounded yet")) if c[0] in KNOWN_UNBOUNDED
    else c[0] for c in CASES])
def test_parser_finishes_on_a_megabyte_of_adversarial_text(worker, name, tmp_path):
    try:
        lines = worker[0].run(name)
    except (TimeoutError, RuntimeError):
        worker[0].close()
        worker[0] = _Worker()  # the next case gets a fresh worker
        raise
    bad = [ln for ln in lines if not ln.startswith("ok")]
    assert not bad, f"{name}: {bad}"


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
