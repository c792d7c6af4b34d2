"""Reopening a chat re-reads everything its header stored (issue 12): the SillyTavern preset (kept in the preset
library at creation; the system prompt is the same after reopening), the persona, the attached world books — and a
preset that went missing is a load warning, not a crash."""

from __future__ import annotations

import json

from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.cards.personas import Persona
from liyuan_desktop.core.chat import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.prompt.presets.model import Preset
from liyuan_desktop.core.prompt.presets.store import presets_dir

#: a small preset in SillyTavern's OpenAI shape: main prompt, a marker, a post-history instruction, the 100001 order
PRESET = {
    "temperature": 0.8,
    "prompts": [
        {"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system",
         "content": "你是{{char}}，和{{user}}在雨夜的客栈里说话。预设标记：梨花。"},
        {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
        {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
        {"identifier": "jailbreak", "name": "Post-History Instructions", "system_prompt": True, "role": "system",
         "content": "保持第三人称。"},
    ],
    "prompt_order": [{"character_id": 100001, "order": [
        {"identifier": "main", "enabled": True}, {"identifier": "charDescription", "enabled": True},
        {"identifier": "chatHistory", "enabled": True}, {"identifier": "jailbreak", "enabled": True}]}],
}


def _card(tmp_path):
    data = {"name": "青梧", "description": "{{char}}是栖水镇客栈的掌柜。", "first_mes": "「客官请进。」"}
    folder = tmp_path / "cards" / "青梧"
    folder.mkdir(parents=True)
    path = folder / "card.json"
    obj = {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}
    path.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return card_from_json(obj, str(path))


def _preset() -> Preset:
    return Preset.from_json(json.loads(json.dumps(PRESET)), name="雨夜")


def test_a_preset_survives_reopening(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[]), preset=_preset())
    assert "预设标记：梨花" in chat.system and chat.prompter is not None
    assert (presets_dir() / "雨夜.json").is_file()  # kept in the preset library under the name the header stores
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert again.system == chat.system
    assert again.prompter is not None and again.load_warnings == []
    assert again.prepare("你好")[2][-1].content == chat.prepare("你好")[2][-1].content  # the tail too


def test_a_missing_preset_is_a_warning_not_a_crash(tmp_path):
    card = _card(tmp_path)
    chat = Chat.create(tmp_path / "chat", card, ReplayModel(actor=[]), preset=_preset())
    (presets_dir() / "雨夜.json").unlink()
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert again.prompter is None and "预设标记" not in again.system and len(again.system) < len(chat.system)
    assert any("雨夜" in w for w in again.load_warnings)


def test_persona_and_world_books_survive_reopening(tmp_path):
    card = _card(tmp_path)
    persona = Persona(name="阿梨", description="{{user}}是远行的画师。", position="in_prompt")
    Chat.create(tmp_path / "chat", card, ReplayModel(actor=[]), preset=_preset(), persona_obj=persona)
    book = {"entries": {"0": {"uid": 0, "key": ["灯笼"], "content": "客栈门口挂着一盏红灯笼。", "comment": "灯笼",
                              "constant": True, "position": 0}}}
    (tmp_path / "chat" / "世界书").mkdir()
    (tmp_path / "chat" / "世界书" / "客栈.json").write_text(json.dumps(book, ensure_ascii=False), "utf-8")
    again = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]))
    assert again.persona == "阿梨" and again.ctx.persona == persona.description
    assert again.context.persona_obj is not None and again.context.persona_obj.position == "in_prompt"
    assert "灯笼" in [e.display_title for e in again.book.entries]
    created = Chat.open(tmp_path / "chat", card, ReplayModel(actor=[]), preset=_preset(), persona_obj=persona)
    assert again.system == created.system  # the header gives what the caller gave at creation
