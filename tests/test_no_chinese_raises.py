"""No plain Chinese is raised in core or the CLI (issue 32: English as a first language).

Since the reverse matcher is gone (``tests/test_no_reverse_matching.py``), a Chinese sentence raised as a plain
``str`` reaches an English reader as Chinese. So every ``raise`` in ``liyuan_desktop/core`` and
``liyuan_desktop/cli`` builds a catalog message (``core/messages.message``) instead. The static check (an AST scan,
not a grep: multi-line raises, f-strings and messages built into a local variable first are all seen) fails on a
raise whose exception call has a CJK string literal anywhere among its arguments — or a local variable assigned
from an expression holding one — unless the call also passes ``en=``: a model-facing refusal
(``ToolError``/``StoryPathError``/``ArgError``) that carries both languages for the model, not for the reader.

The behaviour tests raise a few of the errors keyed here and render them: English with no CJK character, Chinese
byte-identical to the text raised before.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.messages import Msg, joined_semi, render

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
PKG = Path(__file__).resolve().parents[1] / "liyuan_desktop"
ROOTS = (PKG / "core", PKG / "cli")

#: Raises still holding plain Chinese, as (file under liyuan_desktop/, the raise's first line stripped).
#: (none left: keep it empty)
PENDING: set[tuple[str, str]] = set()


def _has_cjk_literal(node: ast.AST) -> bool:
    """A CJK character in any string literal under ``node`` (an f-string's literal parts included)."""
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and CJK.search(n.value)
               for n in ast.walk(node))


def _chinese_locals(fn: ast.AST) -> set[str]:
    """Names a function assigns from an expression holding a CJK literal (``msg = f"…中文…"``, ``where = "；".join(…)``)."""
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None and _has_cjk_literal(n.value):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _offences(path: Path) -> list[tuple[int, str]]:
    """(line, the raise's first line stripped) of every raise in ``path`` that passes plain Chinese."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    lines = src.splitlines()
    scopes: list[tuple[ast.AST, set[str]]] = [(tree, set())]
    scopes += [(fn, _chinese_locals(fn)) for fn in ast.walk(tree)
               if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    found: dict[int, str] = {}
    for scope, chinese in scopes:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                continue
            call = node.exc
            if any(k.arg == "en" for k in call.keywords):
                continue  # a model-facing refusal in both languages
            args = [*call.args, *(k.value for k in call.keywords)]
            literal = any(_has_cjk_literal(a) for a in args)
            via_local = any(isinstance(n, ast.Name) and n.id in chinese for a in args for n in ast.walk(a))
            if literal or via_local:
                found[node.lineno] = lines[node.lineno - 1].strip()
    return sorted(found.items())


def test_the_scan_sees_every_form_of_a_chinese_raise(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('def a(x):\n    raise ValueError("不能为空")\n'
                 'def b(x):\n    raise ValueError(\n        f"第 {x} 行"\n    ) from None\n'
                 'def c(x):\n    why = f"坏了：{x}"\n    raise RuntimeError(why)\n'
                 'def d(x):\n    raise KeyError(message("k", sep="、"))\n'
                 'def e(x):\n    raise ToolError("bad_args", "中文", en="English")\n'
                 'def f(x):\n    raise ValueError(message("k", name=x))\n', encoding="utf-8")
    assert [line for line, _ in _offences(f)] == [2, 4, 9, 11]


def test_no_raise_in_core_or_cli_passes_plain_chinese():
    found = {(p.relative_to(PKG).as_posix(), text): line
             for root in ROOTS for p in sorted(root.rglob("*.py")) for line, text in _offences(p)}
    new = sorted(f"{path}:{line}: {text}" for (path, text), line in found.items() if (path, text) not in PENDING)
    assert not new, "raise a catalog message (core/messages.py) instead of plain Chinese:\n" + "\n".join(new)
    stale = PENDING - set(found)
    assert not stale, f"no longer raised as plain Chinese, remove from PENDING: {sorted(stale)}"


# -- behaviour: the keyed errors in both languages -------------------------------------------------------------------

def _both(value: object) -> tuple[str, str]:
    """(Chinese, English) of an exception or message; the English has no CJK character."""
    carried = value.args[0] if isinstance(value, BaseException) else value
    assert isinstance(carried, Msg), f"not a catalog message: {value!r}"
    zh, en = render(value, "zh"), render(value, "en")
    assert zh == str(carried)
    assert not CJK.search(en), en
    return zh, en


def test_provider_validators_are_keyed():
    from liyuan_desktop.core.llm.profiles import ConnectionProfile
    from liyuan_desktop.core.llm.providers import ProviderSettings

    with pytest.raises(ValidationError) as got:
        ProviderSettings(name="x", base_url="ftp://example.org", model="m")
    assert _both(got.value.errors()[0]["ctx"]["error"]) == ("base_url 必须以 http:// 或 https:// 开头",
                                                            "The base URL must start with http:// or https://")
    with pytest.raises(ValidationError) as got:
        ConnectionProfile(name="  ", provider="deepseek")
    assert _both(got.value.errors()[0]["ctx"]["error"]) == ("不能为空", "Required")


def test_chat_models_override_lists_the_refusals_with_the_readers_separator():
    from liyuan_desktop.core.chat.build import chat_models
    from liyuan_desktop.core.llm.providers import preset
    from liyuan_desktop.core.settings import AppSettings

    settings = AppSettings(providers=[preset("deepseek")], active_provider="deepseek")
    with pytest.raises(ValueError) as got:
        chat_models(settings, base_url="ftp://example.org", model=" ")
    zh, en = _both(got.value)
    assert zh == "base_url 必须以 http:// 或 https:// 开头；不能为空"
    assert en == "The base URL must start with http:// or https://; Required"


def test_joined_semi_is_the_old_chinese_join():
    parts = ["a: x", Msg("undo.nothing"), ValueError(Msg("field.required"))]
    m = joined_semi(parts)
    assert m == "；".join(str(p) for p in parts)
    assert m.render("en") == "a: x; There is no beat to undo; Required"
    assert joined_semi([]) == ""


def test_regex_refusals_are_keyed():
    from liyuan_desktop.core.linear_regex import LinearRegexRefused, compile_python_pattern

    with pytest.raises(LinearRegexRefused) as got:
        compile_python_pattern(r"(a)\1")
    zh, en = _both(got.value)
    assert zh.startswith("正则里用了反向引用 \\1 / (?P=name)，这类写法可能让搜索卡死，不支持（线性时间正则引擎（RE2）不支持：")
    assert en.startswith("The pattern uses a backreference \\1 / (?P=name), which can make a search hang")


def test_outline_binder_refusals_are_keyed():
    from liyuan_desktop.core.story import outline_tree

    with pytest.raises(ToolError) as got:
        outline_tree.add_chapter("# 第一卷\n", "  ")
    assert _both(got.value.message) == ("标题不能是空的。", "The title cannot be empty.")
    with pytest.raises(ToolError) as got:
        outline_tree.add_chapter("# 第一卷\n", "进城", volume=3)
    assert _both(got.value.message) == ("大纲里没有第 4 卷（共 1 卷）。", "The outline has no volume 4 (it has 1).")
    assert str(got.value) == "大纲里没有第 4 卷（共 1 卷）。"


def test_undo_and_codex_name_are_keyed(tmp_path):
    from liyuan_desktop.core.session.branches import Branches
    from liyuan_desktop.core.session.tree import SessionTree
    from liyuan_desktop.core.story.codex import CodexRecord

    with pytest.raises(ValueError) as got:
        Branches(SessionTree.create(tmp_path / "s.jsonl")).undo_target()
    assert _both(got.value) == ("没有可以撤销的一拍", "There is no beat to undo")
    with pytest.raises(ValidationError) as got:
        CodexRecord(name="两\n行", kind="people")
    assert _both(got.value.errors()[0]["ctx"]["error"]) == ("名字要是一行非空文字",
                                                            "The name must be one line of text, not empty")


def test_keyring_refusal_is_keyed(monkeypatch):
    import keyring

    from liyuan_desktop.core import secrets

    def refuse(*_a):
        raise OSError("locked")

    monkeypatch.setattr(keyring, "set_password", refuse)
    with pytest.raises(RuntimeError) as got:
        secrets.keyring_set("liyuan", "deepseek", "sk-1")
    zh, en = _both(got.value)
    assert zh == "无法把 deepseek 的 API key 存进系统钥匙串（OSError）：可以改用环境变量提供密钥。"
    assert "sk-1" not in zh + en and en.startswith("Could not store the API key of deepseek")


def test_the_scribes_unread_chapter_note_is_keyed():
    from liyuan_desktop.core.chat.turn import _chapter_for_scribe

    class Story:
        def read(self, name):
            raise ToolError("not_found", "没有这一章。", en="No such chapter.")

    result = SimpleNamespace(warnings=[])
    assert _chapter_for_scribe(Story(), "ch1.md", result, None) == ""
    assert _both(result.warnings[0]) == ('场记没有读到章节 "ch1.md"：没有这一章。',
                                         'The scribe could not read the chapter "ch1.md" and skipped it: No such chapter.')


def test_preset_macro_warnings_and_notes_are_keyed():
    from liyuan_desktop.core.cards import card_from_json
    from liyuan_desktop.core.macros import MacroContext
    from liyuan_desktop.core.messages import message
    from liyuan_desktop.core.prompt.presets.mapping import plan
    from liyuan_desktop.core.prompt.presets.model import Preset
    from liyuan_desktop.core.prompt.presets.prompter import PresetPrompter

    preset = Preset.from_json({"prompts": [{"identifier": "charDescription", "name": "Char Description", "marker": True}],
                               "prompt_order": [{"character_id": 100001,
                                                 "order": [{"identifier": "charDescription", "enabled": True}]}]}, "mini")
    card = card_from_json({"spec": "chara_card_v2", "spec_version": "2.0",
                           "data": {"name": "A", "description": "{{random::x::y}} {{lastMessage}}"}})
    warnings = PresetPrompter(plan(preset), card, ctx=MacroContext(char="A", user="B"), seed="s").warnings
    assert [_both(w) for w in warnings] == [
        ("角色设定：{{lastmessage}} 随对话变化，系统提示里展开为空（要逐字节稳定）",
         "description: {{lastmessage}} changes with the chat, so it is empty in the system prompt (which must stay "
         "byte-stable); move it to a prompt sent in the chat"),
        ("角色设定：{{random}} 在系统提示里每个对话只抽一次（固定）",
         "description: {{random}} in the system prompt is drawn once per chat (fixed)"),
    ]
    assert _both(message("prompts.note.duplicate")) == ("顺序表里重复出现，只用第一次",
                                                        "Listed more than once in the order: only the first is used")


def test_every_refused_action_has_its_words():
    """``Chat._idle("<verb>")`` refuses with chat.busy naming the action: every verb has an ``act.<verb>`` key, or
    an English reader would read the Chinese verb."""
    from liyuan_desktop.core.messages import CATALOG

    tree = ast.parse((PKG / "core" / "chat" / "facade.py").read_text(encoding="utf-8"))
    verbs = {n.args[0].value for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "_idle"
             and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)}
    assert len(verbs) > 20
    assert sorted(v for v in verbs if "act." + v not in CATALOG) == []


def test_key_storage_status_and_recovered_draft_are_keyed():
    from liyuan_desktop.core import secrets

    ok, note = secrets.storage_status()
    _both(note)
    from liyuan_desktop.core.messages import message

    assert _both(message("beat.recovered", n=12)) == (
        "程序上次在写稿时意外退出：稿件已从草稿记录恢复（本拍尚未收笔）：12 字，可以继续写或按现稿收笔",
        "The app quit unexpectedly while drafting last time: the draft was recovered from the draft log (not sealed): "
        "12 chars; continue writing or seal it as is")


def test_a_validators_message_in_pydantics_complaint():
    """pydantic's own "Value error, …" stays in Chinese (the profile form and a damaged settings.json said so
    before); the English reader gets the reason alone."""
    from liyuan_desktop.core.llm.profiles import ConnectionProfile
    from liyuan_desktop.core.messages import validation_reason

    with pytest.raises(ValidationError) as got:
        ConnectionProfile(name="", provider="deepseek")
    err = got.value.errors()[0]
    assert _both(validation_reason(err)) == (err["msg"], "Required")
    assert err["msg"] == "Value error, 不能为空"
    assert validation_reason({"type": "missing", "msg": "Field required"}) == "Field required"


def test_a_damaged_settings_file_says_what_it_lost_in_both_languages(tmp_path, monkeypatch):
    import json

    from liyuan_desktop.core import settings as S

    monkeypatch.setattr(S, "settings_path", lambda: tmp_path / "settings.json")
    (tmp_path / "settings.json").write_text(json.dumps({"providers": [
        {"name": "a", "base_url": "ftp://x", "model": "m"},
        {"name": "b", "base_url": "https://x", "model": "m"}, {"name": "b", "base_url": "https://y", "model": "m"}]}),
        encoding="utf-8")
    zh, en = _both(S.load_settings().load_warning)
    assert zh.startswith("设置文件 settings.json 有无效内容，已忽略：providers.0（base_url: Value error, base_url 必须以 "
                         "http:// 或 https:// 开头）；providers.2: 名称重复 b。")
    assert en.startswith("The settings file settings.json has invalid content, ignored: providers.0 (base_url: The base "
                         "URL must start with http:// or https://); providers.2: the name b is used twice.")


def test_liyuan_story_codex_add_says_which_field_is_wrong(capsys):
    """``liyuan story codex add`` with a bad entry names the field and the reason (it used to print pydantic's
    "For further information visit …" line), in the reader's language."""
    from helpers import DEMO_CARD

    from liyuan_desktop import cli
    from liyuan_desktop.core.cards import load_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.paths import chat_dir

    card = load_card(DEMO_CARD)
    Chat.create(chat_dir(card.name, "book"), card, ReplayModel(actor=[]), mode="agent").close()
    spec = f"{card.name}/book"
    assert cli.main(["--lang", "en", "story", "codex", spec, "add", "  "]) == 2
    assert capsys.readouterr().err.strip() == \
        "liyuan: Bad codex entry: name: The name must be one line of text, not empty"
    assert cli.main(["--lang", "zh", "story", "codex", spec, "add", "  "]) == 2
    assert capsys.readouterr().err.strip() == "liyuan: 名录条目不对：name: Value error, 名字要是一行非空文字"


def test_an_era_block_not_run_says_why_in_both_languages():
    from liyuan_desktop.core.ledger.mvu.era import parse_era_blocks

    [op] = parse_era_blocks("<VariableEdit>" + "x" * 300_000 + "</VariableEdit>")
    assert op.op == "era_invalid"
    assert _both(op.reason) == ("<VariableEdit> JSON 无法解析，没有执行", "<VariableEdit> its JSON cannot be parsed; not run")


def test_a_template_that_times_out_is_said_in_both_languages():
    from liyuan_desktop.core.macros.ejs import TemplateEnv

    env = TemplateEnv()
    env.update()
    assert env.render("<% while (true) {} %>") == ""
    [note] = env.take_notices()
    zh, en = _both(note)
    assert zh == "模板「<% while (true) {} %>」：模板出错（超时（超过 1.0 秒）），这段没有发给模型"
    assert en.startswith("Template “<% while (true) {} %>”: ") and "timed out after 1.0 s" in en
    [r] = env.take_renders()
    assert r.error == "超时（超过 1.0 秒）" and _both(r.error)[1] == "timed out after 1.0 s"


def test_the_authors_note_summary_is_keyed():
    from liyuan_desktop.core.prompt.authors_note import AuthorsNote

    assert _both(AuthorsNote(text="雨", depth=4, role="system", position="chat", interval=1).summary()) == (
        "作者注：对话中深度 4（system），每 1 条用户消息插入一次",
        "Author's Note: in the chat at depth 4 (system), inserted every 1 user messages")
    assert _both(AuthorsNote(text="").summary())[0] == "作者注：无"


def test_a_long_list_joins_without_deep_nesting():
    parts = [f"providers.{i}: x" for i in range(5000)]
    m = joined_semi(parts)
    assert m == "；".join(parts) and m.render("en") == "; ".join(parts)
