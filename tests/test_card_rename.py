"""Issue 17 "Manage", the last gaps: a card can be renamed and its chats keep working (a chat finds its card by the
folder it lives in, ``library.card_of_chat``; the append-only session file is never rewritten; the per-chat persona
choices follow), and ``liyuan card import`` never silently replaces a different card of the same name: it asks on
a terminal, keeps both and says so without one, replaces with ``--replace`` (the old files to the 回收站) — as the
window does."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path

import pytest

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.cli.common import set_language
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.cards.personas import chosen_for_chat, load_personas, save_personas
from liyuan_desktop.core.chat import manage
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

W = {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "白鹭飞过。"}}]}
SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def card_file(tmp_path: Path, first: str = "旧开场", name: str = "白鹭") -> Path:
    f = tmp_path / f"{name}-{first}.json"
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": name, "first_mes": first}}
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return f


@pytest.fixture(autouse=True)
def chinese_cli():
    set_language("zh")
    yield
    set_language("zh")


async def test_renamed_card_keeps_its_chats(tmp_path, capsys):
    ref = library.import_card(card_file(tmp_path))
    d = library.new_chat_dir(ref, "一")
    chat = Chat.create(d, ref.load(), ReplayModel(actor=[W, SEAL], scribe=['{"patch": {}}']))
    await chat.send("你好")
    store = load_personas()
    me = store.add("阿离")
    store.select_for_chat(d, me.id)
    save_personas(store)
    session = (d / "session.jsonl").read_bytes()

    new = manage.rename_card(ref, "白鹭（旧版）")
    assert new.name == "白鹭（旧版）" and not Path(ref.dir).exists()
    moved = Path(new.dir) / "对话" / "一"
    assert (moved / "session.jsonl").read_bytes() == session  # append-only: never rewritten
    assert [c.name for c in library.list_cards()] == ["白鹭（旧版）"]
    assert library.card_of_chat(moved) == new
    assert chosen_for_chat(moved) is not None and chosen_for_chat(moved).name == "阿离"  # the choice followed

    # the terminal opens the chat by its new place (the header still names cards/白鹭/card.json)
    assert cli_main(["branches", f"{new.name}/一", "--json"]) == 0
    assert "你好" in capsys.readouterr().out
    assert cli_main(["branches", str(moved)]) == 0
    capsys.readouterr()
    reopened = Chat.open(moved, library.card_of_chat(moved).load(), ReplayModel(actor=[]))
    assert [i["text"] for i in reopened.transcript()][-2:] == ["你好", "白鹭飞过。"]

    with pytest.raises(manage.ManageError) as taken:
        other = library.import_card(card_file(tmp_path, name="青鸟"))
        manage.rename_card(other, "白鹭（旧版）")
    assert taken.value.args[0].render("en") == "There is already a card named “白鹭（旧版）”"
    with pytest.raises(manage.ManageError):
        manage.rename_card(new, "  ")

    # liyuan card rename
    assert cli_main(["card", "rename", "白鹭（旧版）", "白鹭"]) == 0
    assert "白鹭" in capsys.readouterr().out
    assert (Path(library.cards_root()) / "白鹭" / "对话" / "一" / "session.jsonl").read_bytes() == session
    assert cli_main(["card", "rename", "没有这张", "x"]) == 2
    assert "liyuan:" in capsys.readouterr().err


def test_cli_import_asks_keeps_both_or_replaces(tmp_path, capsys, monkeypatch):
    first = card_file(tmp_path, "旧开场")
    assert cli_main(["card", "import", str(first)]) == 0
    old_dir = Path(capsys.readouterr().out.strip())
    assert cli_main(["card", "import", str(first)]) == 0  # the very same file: no question, the same card
    out = capsys.readouterr()
    assert Path(out.out.strip()) == old_dir and out.err == ""

    second = card_file(tmp_path, "新开场")
    assert cli_main(["card", "import", str(second)]) == 0  # no terminal (pytest's stdin): both kept, and said
    out = capsys.readouterr()
    assert Path(out.out.strip()).name == "白鹭-2" and "两个都保留" in out.err and "--replace" in out.err
    assert library.CardRef(name="白鹭", dir=str(old_dir)).load().first_mes == "旧开场"

    third = card_file(tmp_path, "第三版")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    asked: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": asked.append(prompt) or "c")
    assert cli_main(["card", "import", str(third)]) == 1  # cancelled: nothing imported
    assert asked and "替换" in asked[0] and "「白鹭」" in asked[0]
    assert sorted(c.name for c in library.list_cards()) == ["白鹭", "白鹭-2"]
    capsys.readouterr()
    monkeypatch.setattr(builtins, "input", lambda prompt="": "r")
    assert cli_main(["card", "import", str(third)]) == 0  # replace, answered on the terminal
    assert Path(capsys.readouterr().out.strip()) == old_dir
    assert library.CardRef(name="白鹭", dir=str(old_dir)).load().first_mes == "第三版"
    assert [t.kind for t in manage.list_trash()] == ["card"]  # the old files are in the 回收站

    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    fourth = card_file(tmp_path, "第四版")
    assert cli_main(["--lang", "en", "card", "import", "--replace", str(fourth)]) == 0
    out = capsys.readouterr()
    assert Path(out.out.strip()) == old_dir and "Replaced “白鹭”" in out.err
    assert library.CardRef(name="白鹭", dir=str(old_dir)).load().first_mes == "第四版"
    assert sorted(c.name for c in library.list_cards()) == ["白鹭", "白鹭-2"]
