"""How lore and card scripts reach the model through a real chat: keyed titles, constants in the system prompt,
@depth instructions placed in the chat, sticky entries that follow the branch, chat-level world info, and the
card's regex scripts (only when allowed) on what is shown and sent — the stored text never changes."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.session.tree import SessionTree


def _entry(i, title, keys, content, **kw):
    ext = {"position": kw.pop("pos", 0), "depth": kw.pop("depth", 4), "role": kw.pop("role", 0), "sticky": kw.pop("sticky", 0)}
    return {"id": i, "comment": title, "keys": keys, "content": content, "enabled": True, "constant": kw.pop("constant", False),
            "insertion_order": 100, "extensions": ext, **kw}


def _card(tmp_path, entries, scripts=None):
    data = {"name": "测试", "first_mes": "你好。", "description": "d", "character_book": {"entries": entries, "recursive_scanning": False},
            "extensions": {"regex_scripts": scripts or []}}
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    d = tmp_path / "card"
    d.mkdir()
    (d / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(d / "card.json")), d


def _beats(n):
    actor, scribe = [], []
    for i in range(n):
        actor += [{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": f"回{i}"}}]},
                  {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}]
        scribe.append('{"patch": {}}')
    return ReplayModel(actor=actor, scribe=scribe)


async def test_depth_instruction_constant_and_sticky(tmp_path):
    card, _ = _card(tmp_path, [
        _entry(0, "规矩", [], "永远用第三人称。", constant=True),
        _entry(1, "格式", ["状态"], "在结尾写状态栏。", pos=4, depth=0, role=0),
        _entry(2, "剑", ["剑"], "一把旧剑。", sticky=3),
    ])
    chat = Chat.create(tmp_path / "c", card, _beats(3))
    assert "永远用第三人称。" in chat.system
    r1 = await chat.send("拔剑，看看状态")
    assert "【相关设定】本拍命中 1 条：剑" in r1.injection  # the @depth instruction is placed, not listed
    sent = r1.messages_sent
    assert sent[-1] == {"role": "system", "content": "在结尾写状态栏。"}  # depth 0: after the user's message
    # sticky counts messages as SillyTavern does: activated at chat length 2 (greeting + words), it stays while the
    # length is below 2 + 3, so through the next beat (length 4) and not the one after (length 6)
    r2 = await chat.send("走吧")
    assert "剑" in r2.activated
    r3 = await chat.send("继续走")
    assert "剑" not in r3.activated
    assert all(b.model_dump().get("lore_timed") is not None for b in SessionTree.open(chat.tree.path).iter_type("beat"))


async def test_chat_world_info_and_allowed_scripts(tmp_path):
    scripts = [{"scriptName": "藏起标记", "findRegex": "/<tag>(.*?)<\\/tag>/g", "replaceString": "[$1]", "placement": [2],
                "markdownOnly": True, "promptOnly": False, "disabled": False},
               {"scriptName": "发给模型时去掉", "findRegex": "/（旁白）/g", "replaceString": "", "placement": [1, 2],
                "markdownOnly": False, "promptOnly": True, "disabled": False}]
    card, card_dir = _card(tmp_path, [], scripts)
    d = tmp_path / "c"
    (d / "世界书").mkdir(parents=True)
    (d / "世界书" / "w.json").write_text(json.dumps({"entries": {"0": {"uid": 0, "key": ["渡口"], "comment": "渡口", "content": "河边。", "constant": False, "disable": False, "order": 100, "position": 0}}}, ensure_ascii=False), "utf-8")
    model = ReplayModel(actor=[{"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "<tag>雨</tag>（旁白）好。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]},
                               {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "嗯。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}', '{"patch": {}}'])
    chat = Chat.create(d, card, model)
    assert chat.scripts == []  # not allowed yet
    r1 = await chat.send("去渡口")
    assert "渡口" in r1.activated
    set_card_scripts_allowed(card_dir, True)
    chat = Chat.open(d, card, model)
    assert len(chat.scripts) == 2
    r2 = await chat.send("然后呢")
    assert {"role": "assistant", "content": "<tag>雨</tag>好。"} in r2.messages_sent  # promptOnly script ran on the history
    items = chat.transcript()
    first = next(i for i in items if i["role"] == "assistant")
    assert first["text"] == "<tag>雨</tag>（旁白）好。"  # stored text unchanged
    assert chat.display_text(first, 2) == "[雨]（旁白）好。"  # display script


async def test_a_run_stopped_by_the_safety_bound_tells_the_user(tmp_path, monkeypatch):
    """lore.activation's hard bound on one run (issue 15: a book can never freeze a beat) reaches the player as a
    warning in the beat's activity, not only as a log line."""
    from liyuan_desktop.core.beat.events import Activity
    from liyuan_desktop.core.lore import activation

    monkeypatch.setattr(activation, "SAFETY_MAX_ENTRIES", 3)
    card, _ = _card(tmp_path, [_entry(i, f"条{i}", ["剑"], f"第{i}条。") for i in range(8)])
    chat = Chat.create(tmp_path / "c", card, _beats(1))
    seen = []
    await chat.send("拔剑", on_event=seen.append)
    notes = [e.text for e in seen if isinstance(e, Activity) and e.level == "warning"]
    assert any("世界书激活条目过多" in t for t in notes), notes
