"""Issue 17 "Manage": rename, duplicate ("new chat from here"), delete to the 回收站 and restore, for chats and cards;
re-importing a card that exists is never a silent replace; the same from ``liyuan chats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat import manage
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def scribe(place: str) -> str:
    return json.dumps({"patch": {"location": place}}, ensure_ascii=False)


async def three_beats() -> tuple[library.CardRef, Chat]:
    card = library.ensure_demo_card()
    d = library.new_chat_dir(card, "原对话")
    chat = Chat.create(d, card.load(), ReplayModel(actor=[w("一。"), SEAL, w("二。"), SEAL, w("三。"), SEAL],
                                                   scribe=[scribe("茶馆"), scribe("渡口"), scribe("码头")]))
    for t in ("甲", "乙", "丙"):
        await chat.send(t)
    chat.set_preset(None)
    return card, chat


async def test_rename_and_duplicate_from_a_message(tmp_path):
    card, chat = await three_beats()
    items = chat.transcript()
    second_reply = [i for i in items if i["role"] == "assistant"][1]["id"]
    copy = manage.duplicate_chat(chat.dir, second_reply)
    assert copy.name == "原对话 的副本" and copy.parent == chat.dir.parent
    c2 = Chat.open(copy, card.load(), ReplayModel(actor=[]))
    assert [i["text"] for i in c2.transcript()] == [i["text"] for i in items[:5]]
    assert c2.current_state().location == "渡口"  # the ledger after that reply came along
    assert c2.load_warnings == [] and c2.ledger_gaps() == []
    again = manage.duplicate_chat(chat.dir)  # the whole shown branch; the name is numbered
    assert again.name == "原对话 的副本-2"
    assert [i["text"] for i in Chat.open(again, card.load(), ReplayModel(actor=[])).transcript()] == \
        [i["text"] for i in items]
    assert len(SessionTree.open(chat.dir / "session.jsonl").entries) > len(SessionTree.open(copy / "session.jsonl").entries)
    with pytest.raises(manage.ManageError):
        manage.duplicate_chat(chat.dir, "nope")
    # rename
    new = manage.rename_chat(copy, "渡口之后")
    assert new.name == "渡口之后" and not copy.exists()
    assert json.loads((new / "meta.json").read_text("utf-8"))["title"] == "渡口之后"
    assert "渡口之后" in [c.name for c in library.list_chats(card)]
    with pytest.raises(manage.ManageError):
        manage.rename_chat(new, "原对话")
    with pytest.raises(manage.ManageError):
        manage.rename_chat(new, "  ")


async def test_delete_to_trash_and_restore_chats_and_cards(tmp_path):
    card, chat = await three_beats()
    before = (chat.dir / "session.jsonl").read_bytes()
    item = manage.delete_chat(chat.dir)
    assert not chat.dir.exists() and item.kind == "chat" and item.card == card.name
    assert [i.id for i in manage.list_trash()] == [item.id]
    assert library.list_chats(card) == []
    back = manage.restore(item.id[:6])
    assert back == chat.dir and (back / "session.jsonl").read_bytes() == before
    assert manage.list_trash() == []
    # a name taken meanwhile: restored beside it
    it2 = manage.delete_chat(chat.dir)
    Chat.create(chat.dir, card.load(), ReplayModel(actor=[]))
    assert manage.restore(it2).name == "原对话-2"
    # a whole card
    ci = manage.delete_card(card)
    assert not Path(card.dir).exists() and card.name not in [c.name for c in library.list_cards()]
    assert manage.restore("青梧") == Path(card.dir) and len(library.list_chats(card)) == 2
    with pytest.raises(manage.ManageError):
        manage.restore(ci.id)  # already restored
    with pytest.raises(manage.ManageError):
        manage.delete_card(Path(card.dir) / "对话")
    manage.delete_chat(chat.dir)
    assert manage.empty_trash() == 1 and manage.list_trash() == []


def test_reimporting_a_card_asks_and_replace_keeps_the_old_files_in_the_trash(tmp_path):
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "白鹭", "first_mes": "旧开场"}}
    f = tmp_path / "bailu.json"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    ref = library.import_card(f)
    assert library.existing_card(f) is None  # the very same file again is no conflict
    raw["data"]["first_mes"] = "新开场"
    f.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    assert library.existing_card(f) == ref  # the window asks now
    kept = library.import_card(f)  # keep both (the default never replaces)
    assert kept.name == "白鹭-2" and ref.load().first_mes == "旧开场"
    Chat.create(Path(ref.dir) / "对话" / "一", ref.load(), ReplayModel(actor=[]))
    new, item = manage.replace_card(f)
    assert new == ref and ref.load().first_mes == "新开场"
    assert [c.name for c in library.list_chats(ref)] == ["一"]  # chats stay
    assert item is not None and item.kind == "card"
    old = manage.restore(item)
    assert old.name == "白鹭-3" and library.CardRef(name=old.name, dir=str(old)).load().first_mes == "旧开场"


async def test_cli_chats(tmp_path, capsys):
    card, chat = await three_beats()
    spec = f"{card.name}/{chat.dir.name}"
    assert cli_main(["chats", "list"]) == 0
    assert f"  {chat.dir.name}\troleplay" in capsys.readouterr().out
    first_user = chat.transcript()[1]["id"]
    assert cli_main(["chats", "duplicate", spec, "--from", first_user[:8], "--name", "岔路"]) == 0
    d = Path(capsys.readouterr().out.strip())
    assert d.name == "岔路" and len(Chat.open(d, card.load(), ReplayModel(actor=[])).transcript()) == 2
    assert cli_main(["chats", "rename", f"{card.name}/岔路", "小路"]) == 0
    assert Path(capsys.readouterr().out.strip()).name == "小路"
    assert cli_main(["chats", "delete", f"{card.name}/小路"]) == 0
    trash_id = capsys.readouterr().out.strip().split("：")[-1]
    assert cli_main(["chats", "trash"]) == 0
    assert trash_id in capsys.readouterr().out
    assert cli_main(["chats", "restore", trash_id]) == 0
    assert Path(capsys.readouterr().out.strip()).name == "小路"
    assert cli_main(["chats", "delete", f"{card.name}/没有"]) == 2
    assert "liyuan:" in capsys.readouterr().err
    assert cli_main(["chats", "delete-card", "没有"]) == 2


def test_chat_list_skips_hidden_import_folders_and_reads_only_headers(tmp_path, monkeypatch):
    """A chat import still running (or killed) lives in a hidden ``.liyuan-import-*`` folder: not a chat to list.
    A chat without meta.json is listed from its header line, never by loading the whole session."""
    card = library.ensure_demo_card()
    base = Path(card.dir) / "对话"
    hidden = base / ".liyuan-import-123"
    hidden.mkdir(parents=True)
    (hidden / "session.jsonl").write_text("", "utf-8")
    d = library.new_chat_dir(card, "无元数据")
    Chat.create(d, card.load(), ReplayModel(actor=[]), mode="agent")
    (d / "meta.json").unlink()
    monkeypatch.setattr(SessionTree, "open", classmethod(lambda cls, *a, **k: (_ for _ in ()).throw(AssertionError("loaded"))))
    refs = library.list_chats(card)
    assert [c.name for c in refs] == [d.name] and refs[0].mode == "agent"


def test_a_cli_demo_chat_is_listed_and_searchable(capsys):
    """`liyuan chat --demo` played on the shipped card but left the library without it: the chat was invisible to
    `liyuan chats list`, `liyuan search` and the card list until the window had run once."""
    assert cli_main(["chat", "--demo", "--json"]) == 0
    capsys.readouterr()
    assert cli_main(["chats", "list"]) == 0
    assert "演示-" in capsys.readouterr().out
    assert cli_main(["search", "客官"]) == 0
    assert "青梧 / 演示-" in capsys.readouterr().out
