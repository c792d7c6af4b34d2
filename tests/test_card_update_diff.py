"""Issue 33 §4: a card replaced in the library while a chat plays it — the chat shows what changed (fields,
greetings, book entries added / removed / changed, regex scripts, initial variables) and either keeps the version it
plays or uses the new one from the next beat, whose prompt then carries exactly the new text."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.cards.update_diff import card_update_diff
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def card_json(desc: str, alts: list[str], entries: list[dict], scripts: list[dict], init: dict) -> dict:
    book = [{"id": 0, "comment": "[InitVar]", "keys": [], "content": json.dumps(init), "enabled": False,
             "insertion_order": 100, "extensions": {}}] + entries
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "阿棠", "description": desc, "first_mes": "雨夜，茶馆。", "alternate_greetings": alts,
        "character_book": {"entries": book}, "extensions": {"regex_scripts": scripts}}}


def entry(i: int, content: str) -> dict:
    return {"id": i, "comment": f"条目{i}", "keys": [f"键{i}"], "content": content, "enabled": True,
            "insertion_order": 100, "extensions": {}}


def script(sid: str, replace: str) -> dict:
    return {"id": sid, "scriptName": f"脚本{sid}", "findRegex": "/X/g", "replaceString": replace, "placement": [2],
            "disabled": False}


OLD = card_json("旧描述：她在茶馆。", ["甲"], [entry(1, "茶馆在镇北。"), entry(2, "渡口。")], [script("r1", "")],
                {"好感": 10})
NEW = card_json("新描述：她在渡口。", ["甲", "乙"], [entry(1, "茶馆在镇南。"), entry(3, "城门。")],
                [script("r1", "Y"), script("r2", "")], {"好感": 20, "金钱": 5})


def write(path, doc) -> None:
    path.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")


def test_the_diff_names_every_area(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write(a, OLD)
    write(b, NEW)
    d = card_update_diff(load_card(a), load_card(b))
    assert [(c.key, c.old, c.new) for c in d.fields] == [("description", "旧描述：她在茶馆。", "新描述：她在渡口。")]
    assert [(c.key, c.kind, c.new) for c in d.greetings] == [("alternate_greetings[1]", "added", "乙")]
    assert [(c.key, c.kind, c.label, c.parts) for c in d.entries] == [
        ("0", "changed", "[InitVar]", ["content"]), ("1", "changed", "条目1", ["content"]),
        ("2", "removed", "条目2", []), ("3", "added", "条目3", [])]
    assert [(c.key, c.kind, c.parts) for c in d.regex] == [("r1", "changed", ["replaceString"]), ("r2", "added", [])]
    assert [(c.key, c.kind, c.old, c.new) for c in d.variables] == [("好感", "changed", 10, 20), ("金钱", "added", None, 5)]
    assert d.counts() == {"fields": 1, "greetings": 1, "entries": 4, "regex": 2, "variables": 2}
    assert card_update_diff(load_card(a), load_card(a)).empty()


async def test_a_running_chat_keeps_or_takes_the_new_version(tmp_path):
    path = tmp_path / "card.json"
    write(path, OLD)
    model = ReplayModel(actor=[w("一。"), SEAL, w("二。"), SEAL, w("三。"), SEAL], scribe=['{"patch": {}}'] * 3)
    chat = Chat.create(tmp_path / "c", load_card(path), model)
    await chat.send("一")
    assert chat.card_update() is None
    write(path, NEW)
    d = chat.card_update()
    assert d is not None and [c.key for c in d.fields] == ["description"]
    # keep: the chat plays the version it read, also on the next beat
    chat.keep_card()
    assert chat.card_update() is None and chat.last_changes.names() == {"settings"}
    await chat.send("二")
    assert "旧描述：她在茶馆。" in chat.system and "新描述" not in chat.system
    # reopened: still the kept version, and no "card edited" notice
    chat.close()
    chat = Chat.open(tmp_path / "c", load_card(path), model)
    assert "旧描述：她在茶馆。" in chat.system and chat.card_update() is None
    assert not chat.pending_notices and (tmp_path / "c" / "kept-card.json").is_file()
    # another update, taken: the next prompt has exactly the new text
    doc = json.loads(json.dumps(NEW))
    doc["data"]["description"] = "第三版：她在城门。"
    write(path, doc)
    d = chat.card_update()
    assert d is not None and [(c.old, c.new) for c in d.fields] == [("旧描述：她在茶馆。", "第三版：她在城门。")]
    assert chat.refresh_card() is not None
    assert chat.card_update() is None and not (tmp_path / "c" / "kept-card.json").exists()
    assert "第三版：她在城门。" in chat.system and "旧描述" not in chat.system
    await chat.send("三")
    assert "第三版：她在城门。" in chat.system
    assert chat.current_mvu() is not None
    chat.close()
    chat = Chat.open(tmp_path / "c", load_card(path), model)
    assert "第三版：她在城门。" in chat.system
    chat.close()


async def test_take_only_some_changes(tmp_path):
    from liyuan_desktop.core.cards.update_diff import pick_key

    path = tmp_path / "card.json"
    write(path, OLD)
    chat = Chat.create(tmp_path / "c", load_card(path), ReplayModel(actor=[], scribe=[]))
    write(path, NEW)
    d = chat.card_update()
    picks = [pick_key("fields", d.fields[0]), pick_key("entries", d.entries[3]), pick_key("regex", d.regex[1])]
    assert picks == ["fields:description", "entries:3", "regex:r2"]
    chat.take_card_changes(picks)
    assert chat.last_changes.names() == {"settings"} and chat.card_update() is None

    def played(c):
        book = {str(e["id"]): e["content"] for e in c.card.character_book["entries"]}
        return c.card.description, book, [s["id"] for s in c.card.extensions["regex_scripts"]], c.card.alternate_greetings

    want = ("新描述：她在渡口。", {"0": json.dumps({"好感": 10}), "1": "茶馆在镇北。", "2": "渡口。", "3": "城门。"},
            ["r1", "r2"], ["甲"])
    assert played(chat) == want
    assert "新描述：她在渡口。" in chat.system
    chat.close()
    again = Chat.open(tmp_path / "c", load_card(path), ReplayModel(actor=[], scribe=[]))
    assert played(again) == want and again.card_update() is None
    again.close()
