"""The engine's message catalog (core/messages.py, issue 17): every key has Chinese and English with the same
placeholders; a message is its Chinese text as before (so nothing that logs or stores it changes) and renders in
English when asked; engine errors and load warnings come out in English; the window's ``tr`` falls back to it."""

from __future__ import annotations

import pickle
import re
import string
from pathlib import Path

import pytest

from liyuan_desktop.core.messages import CATALOG, Msg, action, message, render


def _fields(template: str) -> set[str]:
    return {f for _t, f, _s, _c in string.Formatter().parse(template) if f}


def test_every_key_has_zh_and_en_with_the_same_placeholders():
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for key, entry in CATALOG.items():
        assert set(entry) >= {"zh", "en"}, key
        assert entry["zh"].strip() and entry["en"].strip(), key
        assert _fields(entry["zh"]) == _fields(entry["en"]), key
        assert not cjk.search(entry["en"]), f"{key}: English text with Chinese in it"


def test_a_message_is_its_chinese_text_and_renders_in_english():
    m = message("load.dup_id", file="session.jsonl", line=7, id="abc")
    assert isinstance(m, str) and m == "session.jsonl：第 7 行 id 重复（abc），已跳过"
    assert m.render("en") == "session.jsonl: line 7 repeats an id (abc); skipped"
    assert render(m, "zh") == m and render("plain", "en") == "plain"
    assert pickle.loads(pickle.dumps(m)).render("en") == m.render("en")
    assert message("no.such.key") == "no.such.key"
    nested = message("chat.busy", what=action("切换分支"))
    assert nested == "本拍还在进行，先停下再切换分支"
    assert nested.render("en") == "A beat is still running: stop it before you switch branches"
    assert action("不认识的动作") == "不认识的动作"


def test_engine_error_in_english_when_asked(tmp_path: Path):
    """A command refused while a beat runs: the same Chinese text as before, English through render()."""
    from liyuan_desktop.core.cards.library import ensure_demo_card
    from liyuan_desktop.core.chat.facade import Chat

    class _M:
        name = "none"
        is_replay = False

        async def complete(self, request, on_delta=None):  # pragma: no cover - never called
            raise AssertionError

    card = ensure_demo_card().load()
    chat = Chat.create(tmp_path / "c", card, _M())
    chat.running = object()  # what a running beat sets
    with pytest.raises(RuntimeError) as ei:
        chat.select(chat.tree.leaf_id)
    e = ei.value
    assert str(e) == "本拍还在进行，先停下再切换分支"
    assert render(e, "en") == "A beat is still running: stop it before you switch branches"
    assert isinstance(e.args[0], Msg)


def test_load_warning_in_english(tmp_path: Path):
    """A session file saved with a BOM opens with a warning the window can show in English."""
    from liyuan_desktop.core.cards.library import ensure_demo_card
    from liyuan_desktop.core.chat.facade import Chat
    from liyuan_desktop.core.session.tree import SessionTree

    class _M:
        name = "none"
        is_replay = False

    card = ensure_demo_card().load()
    chat = Chat.create(tmp_path / "c", card, _M())
    p = chat.tree.path
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    tree = SessionTree.open(p)
    w = [x for x in tree.load_warnings if "BOM" in x]
    assert w and w[0] == f"{p.name}：开头有 BOM（记事本保存过？），已忽略"
    assert render(w[0], "en") == f"{p.name}: starts with a BOM (saved by Notepad?); ignored"


def test_window_tr_falls_back_to_the_engine_catalog():
    from liyuan_desktop.ui.infra import i18n

    try:
        i18n.set_language("en")
        assert i18n.tr("load.head_cycle", file="s.jsonl") == "s.jsonl: the first record pointed at a parent (a cycle); cut"
        err = RuntimeError(message("chat.busy", what=action("撤销")))
        assert i18n.show(err) == "A beat is still running: stop it before you undo"
        assert i18n.tr("err.open.chat", error=err).endswith("stop it before you undo")
    finally:
        i18n.set_language("zh")
    assert i18n.tr("load.head_cycle", file="s.jsonl") == "s.jsonl：开头记录指向了上级记录（环），已断开"


def test_cli_lang_renders_engine_errors(tmp_path: Path, capsys, monkeypatch):
    """``liyuan --lang en …``: an engine refusal on stderr in English (the same text in Chinese by default)."""
    from liyuan_desktop.cli import common
    from liyuan_desktop.core.cards.library import ensure_demo_card
    from liyuan_desktop.core.chat.facade import Chat

    class _M:
        name = "none"
        is_replay = False

    chat = Chat.create(tmp_path / "c", ensure_demo_card().load(), _M())

    def body(c):
        c.running = object()
        c.select(c.tree.leaf_id)
        return 0

    monkeypatch.delenv("LIYUAN_LANG", raising=False)
    try:
        assert common.take_lang(["branches", "--lang", "en", "x"]) == ["branches", "x"]
        assert common.language() == "en"
        assert common.run_on_chat(str(chat.dir), body) == 2
        assert "liyuan: A beat is still running: stop it before you switch branches" in capsys.readouterr().err
        assert common.take_lang(["--lang=zh"]) == [] and common.language() == "zh"
        assert common.run_on_chat(str(chat.dir), body) == 2
        assert "liyuan: 本拍还在进行，先停下再切换分支" in capsys.readouterr().err
    finally:
        common._LANG.clear()
