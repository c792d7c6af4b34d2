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


# ------------------------------------------------------------------------------------------ greetings set variables
def _greeting_card(tmp_path, first: str, alts: list[str], scripts: bool = False):
    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "enabled": False,
                         "content": json.dumps({"好感": 10, "地点": "茶馆", "背包": {"钱": 1}}, ensure_ascii=False),
                         "insertion_order": 100, "extensions": {}}]}
    data = {"name": "测", "first_mes": first, "alternate_greetings": alts, "character_book": book}
    if scripts:  # a card regex that would hide the blocks, if it were allowed to run
        data["extensions"] = {"regex_scripts": [{"scriptName": "hide", "findRegex": "/<UpdateVariable>[\\s\\S]*?</UpdateVariable>/g",
                                                  "replaceString": "", "placement": [2], "disabled": False}]}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}, str(tmp_path / "card.json"))


def test_each_greeting_swipe_gets_its_own_opening_values(tmp_path):
    first = "清晨的茶馆。\n<UpdateVariable>\n_.set('好感', 10, 20);//初见\n</UpdateVariable>"
    alt1 = ("雨夜的渡口。\n<initvar>\n```yaml\n好感: 3\n地点: 渡口\n```\n</initvar>\n"
            "<UpdateVariable>\n<JSONPatch>[{\"op\": \"replace\", \"path\": \"/好感\", \"value\": 5}]</JSONPatch>\n</UpdateVariable>")
    alt2 = "平常的一天。"
    card = _greeting_card(tmp_path, first, [alt1, alt2], scripts=True)
    model = ReplayModel(actor=[_w("一。"), SEAL], scribe=['{"patch": {}, "mvu_patch": {}}'])
    chat = Chat.create(tmp_path / "c", card, model)
    opening = chat.transcript()[0]
    assert opening["text"] == "【开场 · 测】\n清晨的茶馆。"  # hidden although the card's scripts are not allowed
    assert opening["variables"]["stat_data"] == {"好感": 20, "地点": "茶馆", "背包": {"钱": 1}}
    assert opening["variables"]["display_data"]["好感"] == "10->20"
    assert chat.current_mvu().stat_data["好感"] == 20
    assert opening["swipe"] == [1, 3]
    chat.swipe(opening["id"], +1)
    o2 = chat.transcript()[0]
    assert o2["text"] == "【开场 · 测】\n雨夜的渡口。"
    assert o2["variables"]["stat_data"] == {"好感": 5, "地点": "渡口"}  # <initvar> replaces the card's tree
    assert chat.current_mvu().stat_data == {"好感": 5, "地点": "渡口"}
    chat.swipe(o2["id"], +1)
    o3 = chat.transcript()[0]
    assert o3["variables"]["stat_data"] == {"好感": 10, "地点": "茶馆", "背包": {"钱": 1}}
    chat.swipe(o3["id"], +1)
    assert chat.transcript()[0]["variables"]["stat_data"]["好感"] == 20
    # the prompt never sees the blocks
    _inj, _titles, messages, _state, _prev = chat.prepare("你好")
    assert not any("UpdateVariable" in (m.content or "") or "initvar" in (m.content or "") for m in messages)
    assert any("清晨的茶馆" in (m.content or "") for m in messages)
    reopened = Chat.open(tmp_path / "c", card, model)
    assert reopened.transcript()[0]["variables"]["stat_data"]["好感"] == 20


def test_initvar_from_every_attached_book_in_book_order(tmp_path, monkeypatch):
    """The card's [InitVar], then the chat's attached books, then the global ones: root keys merge shallowly and
    the first book that has a key keeps it (MVU's loadInitVarData)."""
    home = tmp_path / "home"
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    from liyuan_desktop.core.lore.books import global_books_dir
    gdir = global_books_dir()
    gdir.mkdir(parents=True, exist_ok=True)

    def wi(tree: dict) -> str:
        return json.dumps({"entries": {"0": {"uid": 0, "comment": "[initvar]全局", "key": [], "disable": True,
                                             "content": json.dumps(tree, ensure_ascii=False)}}}, ensure_ascii=False)

    (gdir / "g.json").write_text(wi({"天气": "晴", "好感": 99, "金币": 7}), "utf-8")
    card = _card(tmp_path)  # 好感 10, 金币 5
    chat_dir = tmp_path / "c"
    (chat_dir / "世界书").mkdir(parents=True)
    (chat_dir / "世界书" / "a.json").write_text(wi({"天气": "雨", "任务": {"主线": 1}}), "utf-8")
    chat = Chat.create(chat_dir, card, ReplayModel(actor=[], scribe=[]))
    assert chat.current_mvu().stat_data == {"好感": 10, "金币": 5, "天气": "雨", "任务": {"主线": 1}}
    assert chat.transcript()[0]["variables"]["stat_data"]["天气"] == "雨"
    # a card without [InitVar] of its own still gets the books' tree
    bare = _card(tmp_path, initvar=None)
    chat2 = Chat.create(tmp_path / "c2", bare, ReplayModel(actor=[], scribe=[]))
    assert chat2.current_mvu().stat_data == {"天气": "晴", "好感": 99, "金币": 7}
