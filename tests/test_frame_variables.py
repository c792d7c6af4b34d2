"""Issue 13 §2: a status-bar frame's variable writes go through the chat (Chat.write_frame_variables) as user
snapshots on the branch, and survive reopening, branch switches and SillyTavern export."""

from __future__ import annotations

import json

import pytest

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel


def _w(t: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}


SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def _card(tmp_path, initvar: dict | None = {"好感": 10, "金币": 5}):
    data: dict = {"name": "测", "first_mes": "你好。"}
    if initvar is not None:
        data["character_book"] = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False,
                                               "content": json.dumps(initvar, ensure_ascii=False),
                                               "insertion_order": 100, "extensions": {}}]}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))


def _bar(chat: Chat) -> list:
    return [i["variables"]["stat_data"]["好感"] for i in chat.transcript() if "variables" in i]


def _with(variables: dict, **stat) -> dict:
    out = json.loads(json.dumps(variables))
    out["stat_data"].update(stat)
    return out


async def test_bar_write_on_newest_message_persists_and_the_scribe_continues_from_it(tmp_path):
    card = _card(tmp_path)
    model = ReplayModel(actor=[_w("一。"), SEAL, _w("二。"), SEAL],
                        scribe=['{"patch": {}, "mvu_patch": {"金币": 6}}', '{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    await chat.send("一")
    items = chat.transcript()
    assert [i["role"] for i in items] == ["opening", "user", "assistant"]
    new = _with(items[2]["variables"], 好感=12)
    assert chat.write_frame_variables("2", new, "message") is True
    assert chat.write_frame_variables("2", new, "message") is False  # the same table again: nothing written
    assert _bar(chat) == [10, 12]
    assert chat.current_mvu().stat_data == {"好感": 12, "金币": 6}
    e = chat.ledger_entry()
    assert e.source == "user"

    again = Chat.open(tmp_path / "c", card, model)
    assert [i["variables"]["stat_data"]["好感"] for i in again.transcript() if "variables" in i] == [10, 12]
    r = await again.send("二")
    assert '"好感": 12' in r.scribe.user or "12" in r.scribe.user
    assert again.current_mvu().stat_data["好感"] == 12


async def test_write_to_an_older_message_changes_that_message_only(tmp_path):
    card = _card(tmp_path)
    model = ReplayModel(actor=[_w("一。"), SEAL, _w("二。"), SEAL],
                        scribe=['{"patch": {}, "mvu_patch": {"好感": 15}}', '{"patch": {}, "mvu_patch": {"好感": 20}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    await chat.send("一")
    await chat.send("二")
    assert _bar(chat) == [10, 15, 20]
    items = chat.transcript()
    assert chat.write_frame_variables(2, _with(items[2]["variables"], 好感=99), "message")  # an int id works too
    assert _bar(chat) == [10, 99, 20]
    assert chat.current_mvu().stat_data["好感"] == 20
    # the page-by-page transcript the window uses agrees with the whole one
    assert [i.get("variables") for i in chat.transcript_items(1)] == [i.get("variables") for i in chat.transcript()]
    first, total, page = chat.transcript_page(3, 1)
    assert page[0]["variables"]["stat_data"]["好感"] == 99
    reopened = Chat.open(tmp_path / "c", card, model)
    assert [i["variables"]["stat_data"]["好感"] for i in reopened.transcript() if "variables" in i] == [10, 99, 20]
    # by entry id as well
    assert chat.write_frame_variables(items[0]["id"], _with(items[0]["variables"], 好感=1), "message")
    assert _bar(chat) == [1, 99, 20]


async def test_bar_writes_follow_the_branch(tmp_path):
    card = _card(tmp_path)
    model = ReplayModel(actor=[_w("一。"), SEAL, _w("一（重来）。"), SEAL],
                        scribe=['{"patch": {}, "mvu_patch": {}}', '{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    await chat.send("一")
    first = chat.transcript()[2]
    chat.write_frame_variables("2", _with(first["variables"], 好感=50))
    await chat.regenerate()
    assert _bar(chat) == [10, 10]
    chat.swipe(chat.transcript()[2]["id"], -1)
    assert _bar(chat) == [10, 50]
    assert chat.current_mvu().stat_data["好感"] == 50


async def test_chat_scope_and_raw_tables_of_a_card_without_mvu(tmp_path):
    card = _card(tmp_path, initvar=None)
    model = ReplayModel(actor=[_w("一。"), SEAL], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    assert "variables" not in chat.transcript()[0]
    assert chat.write_frame_variables("0", {"x": 2}, "message")
    assert chat.transcript()[0]["variables"] == {"x": 2}  # kept exactly as the bar wrote it
    assert chat.current_mvu() is None  # no variable tree for the scribe
    assert chat.write_frame_variables(None, {"回合": 3}, "chat")
    assert chat.write_frame_variables(None, {"设置": "暗色"}, "global")
    assert chat.frame_variables() == {"chat": {"回合": 3}, "global": {"设置": "暗色"}}
    await chat.send("一")
    reopened = Chat.open(tmp_path / "c", card, model)
    assert reopened.transcript()[0]["variables"] == {"x": 2}
    assert reopened.transcript()[2]["variables"] == {"x": 2}  # carried on to the next reply
    assert reopened.frame_variables()["chat"] == {"回合": 3}


def test_bad_writes_are_refused(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[], scribe=[]))
    with pytest.raises(ValueError):
        chat.write_frame_variables("0", {"x": 1}, "script")
    with pytest.raises(ValueError):
        chat.write_frame_variables("7", {"x": 1}, "message")
    with pytest.raises(ValueError):
        chat.write_frame_variables("0", [1], "message")  # type: ignore[arg-type]
    assert chat.ledger_entry() is None
