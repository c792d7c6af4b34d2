"""A SillyTavern user data folder (``data/<user>/``, 1.12+ layout) built in a test from literal JSON, for the
migration tests (tests/test_st_migration.py, tests/ui/test_st_migration_window.py).

What it holds (names are what the tests assert on):

* ``characters/alice.json`` — card 「阿梨」 with an embedded book (entry 「梨园」) linked to the world book
  「阿梨的世界」 (``extensions.world``); ``characters/bob.png`` — PNG card 「阿柏」, linked through
  ``settings.json`` ``world_info.charLore`` to 「额外之书」; ``characters/broken.png`` — not a card.
* ``chats/alice/第一局.jsonl`` (greeting with two swipes and MVU variables, a reply with three swipes and variables,
  ``chat_metadata.world_info`` = 「聊天之书」, locked to persona ``user2.png``), ``chats/alice/第二局.jsonl``,
  ``chats/bob/柏的一局.jsonl`` (swipes + variables), ``chats/alice/断了.jsonl`` (its last line cut),
  ``chats/alice/不是聊天.jsonl`` (a card pasted into a .jsonl), ``chats/ghost/x.jsonl`` (no such card),
  ``chats/alice/空的.jsonl`` (0 bytes), ``chats/alice/乱码.jsonl`` (a first line that is not JSON).
  第一局 also carries an Author's Note in its ``chat_metadata`` (``note_prompt`` 「{{char}}说话要简短。」, depth 2,
  interval 3, position 1 = in the chat, role 1 = user), as SillyTavern's Author's Note extension writes it.
* ``worlds/``: 阿梨的世界, 额外之书, 聊天之书, 全局之书 (globally selected), 坏书 (not JSON).
* ``OpenAI Settings/``: 梨园预设 (active), 备用预设.
* ``User Avatars/user1.png``, ``user2.png``; personas 旅人 / 侠客, default ``user2.png``.
* ``settings.json`` as SillyTavern 1.12–1.13 writes it: user name, ``world_info_settings`` (depth 4, budget 40, and
  its ``world_info`` = ``{globalSelect: [全局之书], charLore: [{name: "bob", extraBooks: [额外之书]}]}`` — charLore
  names a card by its avatar file without the extension), ``power_user.personas``/``persona_descriptions``, a custom
  OpenAI-compatible API;
  ``secrets.json`` (must never be opened), group chats, Quick Replies, an extension, a theme.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from liyuan_desktop.core.cards import card_from_json, export_png


def _mvu(n: int) -> dict[str, Any]:
    return {"stat_data": {"好感": n, "地点": "渡口"}, "display_data": {}, "delta_data": {}}


def _msg(name: str, text: str, *, user: bool = False, **extra: Any) -> dict[str, Any]:
    d = {"name": name, "is_user": user, "is_system": False, "send_date": "October 18, 2024 8:52pm", "mes": text,
         "extra": {}}
    d.update(extra)
    return d


def _swiped(name: str, texts: list[str], sid: int, variables: list[dict[str, Any]]) -> dict[str, Any]:
    info = [{"send_date": f"October 18, 2024 9:0{i}pm", "extra": {}} for i in range(len(texts))]
    return _msg(name, texts[sid], swipes=list(texts), swipe_id=sid, swipe_info=info, variables=variables)


def _header(char: str, user: str = "旅人", **meta: Any) -> dict[str, Any]:
    return {"user_name": user, "character_name": char, "create_date": "2024-10-18@20h52m17s",
            "chat_metadata": {"chat_id_hash": 1, **meta}}


def _lines(lines: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


def _world(*entries: tuple[str, str], **extra: Any) -> dict[str, Any]:
    out = {}
    for i, (key, content) in enumerate(entries):
        out[str(i)] = {"uid": i, "key": [key], "keysecondary": [], "comment": key, "content": content,
                       "constant": False, "selective": True, "order": 100, "position": 0, "disable": False,
                       "displayIndex": i, "probability": 100, "useProbability": True, "depth": 4}
    return {"entries": out, **extra}


def _card(name: str, greeting: str, **data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": name, "description": f"{name}的描述", "personality": "", "scenario": "",
                     "first_mes": greeting, "mes_example": "", "creator_notes": "", "system_prompt": "",
                     "post_history_instructions": "", "alternate_greetings": [], "tags": [], "creator": "test",
                     "character_version": "1", **data}}


def _preset(main: str, temperature: float) -> dict[str, Any]:
    return {"temperature": temperature, "openai_max_context": 8000, "openai_max_tokens": 500,
            "prompts": [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system",
                         "content": main},
                        {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}],
            "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True},
                                                                {"identifier": "chatHistory", "enabled": True}]}],
            "reverse_proxy": "https://secret-proxy.invalid/v1", "proxy_password": "hunter2"}


SETTINGS: dict[str, Any] = {
    "username": "旅人",
    "main_api": "openai",
    "extension_settings": {"character_allowed_regex": ["bob.png"], "regex": [{"scriptName": "全局美化"}]},
    "world_info_settings": {"world_info": {"globalSelect": ["全局之书"],
                                           "charLore": [{"name": "bob", "extraBooks": ["额外之书"]}]},
                            "world_info_depth": 4, "world_info_budget": 40, "world_info_recursive": True},
    "oai_settings": {"chat_completion_source": "custom", "custom_url": "http://127.0.0.1:5001/v1",
                     "custom_model": "my-local-model", "preset_settings_openai": "梨园预设"},
    "power_user": {"personas": {"user1.png": "旅人", "user2.png": "侠客"},
                   "persona_descriptions": {"user1.png": {"description": "一个赶路的人", "position": 0},
                                            "user2.png": {"description": "{{user}}是江湖侠客", "position": 0}},
                   "default_persona": "user2.png"},
}


def build_st_folder(base: Path) -> Path:
    """Write the SillyTavern user folder (module doc) as ``base/data/default-user`` and return that folder."""
    d = base / "data" / "default-user"
    for sub in ("characters", "chats/alice", "chats/bob", "chats/ghost", "worlds", "OpenAI Settings",
                "User Avatars", "group chats", "groups", "QuickReplies", "extensions/some-extension", "themes"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    book = {"name": "阿梨的卡内书", "entries": [{"id": 0, "keys": ["梨园"], "content": "梨园是阿梨长大的地方。",
                                            "enabled": True, "insertion_order": 100}]}
    alice = _card("阿梨", "「你来了。」", character_book=book, extensions={"world": "阿梨的世界"})
    (d / "characters" / "alice.json").write_text(json.dumps(alice, ensure_ascii=False), "utf-8")
    bob = card_from_json(_card("阿柏", "「又见面了。」"), "bob.json")
    (d / "characters" / "bob.png").write_bytes(export_png(bob))
    (d / "characters" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nthis is not a card at all")
    chat1 = [_header("阿梨", world_info="聊天之书", persona="user2.png", note_prompt="{{char}}说话要简短。",
                     note_interval=3, note_depth=2, note_position=1, note_role=1),
             _swiped("阿梨", ["「你来了。」", "「又是你。」"], 0, [_mvu(1), _mvu(2)]),
             _msg("旅人", "我来了。", user=True),
             _swiped("阿梨", ["回答一", "回答二", "回答三"], 2, [_mvu(10), _mvu(20), _mvu(30)]),
             _msg("旅人", "再说一句。", user=True),
             _msg("阿梨", "好。", variables=[_mvu(31)])]
    (d / "chats/alice/第一局.jsonl").write_text(_lines(chat1), "utf-8")
    chat2 = [_header("阿梨"), _msg("阿梨", "「你来了。」"), _msg("旅人", "第二局开始。", user=True), _msg("阿梨", "嗯。")]
    (d / "chats/alice/第二局.jsonl").write_text(_lines(chat2), "utf-8")
    chat3 = [_header("阿柏", user="侠客"), _swiped("阿柏", ["「又见面了。」", "「是你啊。」"], 1, [_mvu(5), _mvu(6)]),
             _msg("侠客", "走吧。", user=True), _swiped("阿柏", ["去哪？", "好。"], 0, [_mvu(7), _mvu(8)])]
    (d / "chats/bob/柏的一局.jsonl").write_text(_lines(chat3), "utf-8")
    torn = _lines(chat2[:3]) + json.dumps(_msg("阿梨", "这一行断在中间"), ensure_ascii=False)[:25]
    (d / "chats/alice/断了.jsonl").write_text(torn, "utf-8")
    (d / "chats/alice/不是聊天.jsonl").write_text(json.dumps(alice, ensure_ascii=False), "utf-8")
    (d / "chats/ghost/x.jsonl").write_text(_lines(chat2), "utf-8")
    (d / "chats/alice/空的.jsonl").write_bytes(b"")
    (d / "chats/alice/乱码.jsonl").write_text("this is not json\n" + _lines(chat2[1:]), "utf-8")
    worlds = {"阿梨的世界": _world(("渡口", "渡口在镇子东边。")), "额外之书": _world(("剑", "阿柏的剑叫长风。")),
              "聊天之书": _world(("灯笼", "第一局里灯笼是红的。")), "全局之书": _world(("天下", "天下分九州。"))}
    for name, w in worlds.items():
        (d / "worlds" / f"{name}.json").write_text(json.dumps(w, ensure_ascii=False, indent=2), "utf-8")
    (d / "worlds" / "坏书.json").write_text("{ not json", "utf-8")
    (d / "OpenAI Settings" / "梨园预设.json").write_text(json.dumps(_preset("写得细一点。", 0.8), ensure_ascii=False), "utf-8")
    (d / "OpenAI Settings" / "备用预设.json").write_text(json.dumps(_preset("备用。", 1.0), ensure_ascii=False), "utf-8")
    (d / "User Avatars" / "user1.png").write_bytes(b"\x89PNG\r\n\x1a\navatar-one")
    (d / "User Avatars" / "user2.png").write_bytes(b"\x89PNG\r\n\x1a\navatar-two")
    (d / "settings.json").write_text(json.dumps(SETTINGS, ensure_ascii=False, indent=2), "utf-8")
    (d / "secrets.json").write_text('{"api_key_custom": "sk-never-read"}', "utf-8")
    (d / "group chats" / "g1.jsonl").write_text(_lines(chat2), "utf-8")
    (d / "groups" / "g1.json").write_text("{}", "utf-8")
    (d / "QuickReplies" / "qr.json").write_text("{}", "utf-8")
    (d / "QuickReplies" / "qr2.json").write_text("{}", "utf-8")
    (d / "extensions" / "some-extension" / "index.js").write_text("// extension", "utf-8")
    (d / "themes" / "Dark.json").write_text("{}", "utf-8")
    return d
