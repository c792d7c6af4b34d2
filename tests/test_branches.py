"""Issue 7, branches: regenerate twice (swipes), edit a past user message, undo, the navigator; each branch keeps
its own ledger, roster, variables and transcript, and reloading from disk restores the same active branch."""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD

from liyuan_desktop.core.cards import card_from_json, load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}


def scribe(place: str, who: str, fav: int) -> str:
    return json.dumps({"patch": {"location": place, "characters": {who: {"status": "在场"}}}, "mvu_patch": {"好感": fav}},
                      ensure_ascii=False)


def card(tmp_path):
    book = {"entries": [{"id": 0, "comment": "[InitVar]", "keys": [], "content": json.dumps({"好感": 10}),
                         "enabled": False, "insertion_order": 100, "extensions": {}}]}
    return card_from_json({"spec": "chara_card_v3", "spec_version": "3.0",
                           "data": {"name": "青梧", "first_mes": "雨夜，茶馆。", "character_book": book}},
                          str(tmp_path / "card.json"))


def finals(chat: Chat) -> list[str]:
    return [i["text"] for i in chat.transcript() if i["role"] == "assistant"]


async def test_swipes_edit_undo_each_branch_keeps_its_own(tmp_path):
    model = ReplayModel(
        actor=[w("一。"), SEAL, w("二甲。"), SEAL, w("二乙。"), SEAL, w("二丙。"), SEAL, w("改后的二。"), SEAL],
        scribe=[scribe("茶馆", "掌柜", 15), scribe("渡口", "船夫", 20), scribe("后院", "猫", 30),
                scribe("屋顶", "夜枭", 40), scribe("码头", "渔女", 50)])
    chat = Chat.create(tmp_path / "c", card(tmp_path), model)
    await chat.send("一")
    await chat.send("二")
    a = chat.tree.leaf_id
    await chat.regenerate()
    b = chat.tree.leaf_id
    await chat.regenerate()
    c = chat.tree.leaf_id
    assert finals(chat) == ["一。", "二丙。"]
    last = chat.transcript()[-1]
    assert last["swipe"] == [3, 3]
    assert "swipe" not in chat.transcript()[2]  # beat 1 has one reply
    assert chat.current_state().location == "屋顶" and "夜枭" in chat.current_state().characters
    assert chat.current_mvu().stat_data["好感"] == 40

    # ◀: the previous alternative; only a leaf line is written
    size = chat.tree.path.stat().st_size
    chat.swipe(last["id"], -1)
    assert chat.tree.leaf_id == b and finals(chat) == ["一。", "二乙。"]
    assert chat.current_state().location == "后院" and chat.current_mvu().stat_data["好感"] == 30
    assert "夜枭" not in chat.current_state().characters  # the roster is the branch's own
    lines = chat.tree.path.read_bytes()[size:].decode().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["leaf"]
    chat.swipe(chat.transcript()[-1]["id"], -1)
    assert chat.tree.leaf_id == a and finals(chat) == ["一。", "二甲。"]
    chat.swipe(chat.transcript()[-1]["id"], -1)  # wraps around
    assert chat.tree.leaf_id == c

    # edit the first user message: a new branch from the opening
    user1 = next(i for i in chat.transcript() if i["role"] == "user")
    r = await chat.edit_user(user1["id"], "一（改）")
    assert r.final == "改后的二。"
    items = chat.transcript()
    assert [i["text"] for i in items if i["role"] == "user"] == ["一（改）"]
    assert items[1]["branch"] == [2, 2]
    assert chat.current_state().location == "码头" and set(chat.current_state().characters) == {"渔女"}
    assert chat.current_mvu().stat_data["好感"] == 50
    edited_leaf = chat.tree.leaf_id

    # reload from disk: the same active branch
    again = Chat.open(tmp_path / "c", card(tmp_path), model)
    assert again.tree.leaf_id == edited_leaf and finals(again) == ["改后的二。"]
    assert again.current_state().location == "码头"

    # back to the old user message: its newest tip
    chat.swipe(items[1]["id"], -1)
    assert [i["text"] for i in chat.transcript() if i["role"] == "user"] == ["一", "二"]
    assert finals(chat) == ["一。", "二丙。"]

    # undo: the leaf moves before the last beat, nothing deleted
    n_entries = len(chat.tree.order)
    chat.undo()
    assert finals(chat) == ["一。"] and len(chat.tree.order) == n_entries
    assert chat.current_state().location == "茶馆" and chat.current_mvu().stat_data["好感"] == 15
    reopened = SessionTree.open(chat.tree.path)
    assert reopened.leaf_id == chat.tree.leaf_id


async def test_navigator_lists_every_branch(tmp_path):
    model = ReplayModel(actor=[w("一。"), SEAL, w("二。"), SEAL, w("二又。"), SEAL, w("改。"), SEAL],
                        scribe=['{"patch": {}}'] * 4)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    await chat.send("第一句话")
    await chat.send("第二句话")
    await chat.regenerate()
    u2 = [i for i in chat.transcript() if i["role"] == "user"][-1]
    await chat.edit_user(u2["id"], "第二句话（改）")
    nodes = chat.branch_tree()
    assert [(n["beat"], n["text"], n["siblings"]) for n in nodes] == [
        (1, "第一句话", 1), (2, "第二句话", 2), (2, "第二句话（改）", 2)]
    assert nodes[1]["replies"] == 2 and nodes[1]["reply"] == "二又。"
    assert [n["active"] for n in nodes] == [True, False, True]
    assert nodes[1]["parent"] == nodes[0]["id"] and nodes[0]["parent"] is None
    chat.select(nodes[1]["id"])
    assert finals(chat)[-1] == "二又。"
    assert [n["active"] for n in chat.branch_tree()] == [True, True, False]


async def test_undo_with_nothing_to_undo(tmp_path):
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    with pytest.raises(ValueError):
        chat.undo()


async def test_alternate_greetings_are_swipes_of_the_opening(tmp_path):
    raw = {"spec": "chara_card_v3", "spec_version": "3.0",
           "data": {"name": "青梧", "first_mes": "雨夜。", "alternate_greetings": ["晴天。", "  ", "雪夜，{{user}}来了。"]}}
    c = card_from_json(raw, str(tmp_path / "card.json"))
    model = ReplayModel(actor=[w("一。"), SEAL], scribe=['{"patch": {}}'])
    chat = Chat.create(tmp_path / "c", c, model, persona="阿九")
    opening = chat.transcript()[0]
    assert opening["text"] == "【开场 · 青梧】\n雨夜。" and opening["swipe"] == [1, 3]
    chat.swipe(opening["id"], -1)
    assert chat.transcript()[0]["text"] == "【开场 · 青梧】\n雪夜，阿九来了。"
    r = await chat.send("你好")
    assert r.sent[1].content == "【开场 · 青梧】\n雪夜，阿九来了。"  # the prompt starts from the chosen greeting
    assert SessionTree.open(chat.tree.path).path_to()[1].text.endswith("雪夜，阿九来了。")


class _Flaky:
    """Replays the wrapped model but fails every call while ``down`` is set (a server returning 500s)."""

    name, is_replay = "flaky", False

    def __init__(self, inner):
        self.inner, self.down = inner, False

    async def complete(self, request, on_delta=None):
        from liyuan_desktop.core.llm.types import ModelError

        if self.down:
            raise ModelError("server", "服务器出错（HTTP 500）")
        return await self.inner.complete(request, on_delta)


async def test_failed_attempts_are_not_swipes(tmp_path):
    model = _Flaky(ReplayModel(actor=[w("一。"), SEAL, w("一又。"), SEAL], scribe=['{"patch": {}}'] * 2))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    await chat.send("你好")
    model.down = True
    for _ in range(3):
        r = await chat.regenerate()
        assert r.outcome == "error"
    shown = chat.transcript()[-1]
    assert shown["role"] == "draft" and shown["outcome"] == "error"
    assert shown["swipe"] == [2, 2]  # the failed attempt on screen: the good reply is one swipe away, not 4
    chat.swipe(shown["id"], -1)
    assert [i["text"] for i in chat.transcript() if i["role"] == "assistant"] == ["一。"]
    assert "swipe" not in chat.transcript()[-1]  # one reply, no dead ends to swipe to
    model.down = False
    await chat.regenerate()
    last = chat.transcript()[-1]
    assert last["text"] == "一又。" and last["swipe"] == [2, 2]
    chat.swipe(last["id"], -1)
    assert chat.transcript()[-1]["text"] == "一。"
    node = chat.branch_tree()[0]
    assert node["replies"] == 2 and node["reply"] == "一。"  # the reply on screen, not the newest
    assert chat.tree.get(node["reply_id"]).text == "一。"
