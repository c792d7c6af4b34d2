"""What the engine itself writes into a prompt, per chat language (issue 32 §1: every prompt the engine writes to
the model follows the chat's language).

One home for the prompt parts' own words — the card layers' section titles, the data blocks' headers and lines
(【世界状态】…【语言】, the agent's state block, the relay summaries), the agent prompt's folder lines and the shipped
rules files (the opening's header lives with its pattern: ``cards.st_chat.opening_header``) — in Chinese (byte for byte the seed's and the golden runs') and English. A chat's language is
``ChatContext.language`` (the card's ``extensions.liyuan.language``, else guessed from its text,
``Card.language``); :func:`lang_of` maps it to the texts' language: Chinese for "zh" (or none), English for every
other (a Japanese card keeps its Japanese 【语言】 line in :data:`..assemble.LANGUAGE_LINES`, the frame in English).

The English block headers are ASCII ("[World state]"); the Chinese ones are what the golden runs hold. Texts the
engine reads back from model output are not here (the scribe's format lives with the scribe).
"""

from __future__ import annotations

from typing import Literal

from ..text import prompt_language

Lang = Literal["zh", "en"]


def lang_of(language: str | None) -> Lang:
    """The language the engine's prompt texts are written in for a chat in ``language``
    (:func:`...text.prompt_language`: "zh" for Chinese or none, "en" for every other language)."""
    return "en" if prompt_language(language) == "en" else "zh"


#: The shipped rules files per language (``resources/prompts``): tool play, prose-only play, the compact rules for
#: small models, agent mode, the summary call.
RULES_FILES: dict[str, dict[Lang, str]] = {
    "roleplay": {"zh": "roleplay_system.md", "en": "roleplay_system.en.md"},
    "prose": {"zh": "roleplay_system_prose.md", "en": "roleplay_system_prose.en.md"},
    "compact": {"zh": "roleplay_system_compact.md", "en": "roleplay_system_compact.en.md"},
    "agent": {"zh": "agent_system.md", "en": "agent_system.en.md"},
    "summary": {"zh": "compact.md", "en": "compact.en.md"},
}

#: Section titles of the card's part of the system prompt (:func:`..assemble.card_layers`).
CARD_TITLES: dict[Lang, dict[str, str]] = {
    "zh": {"card": "# 角色卡：{name}", "before": "常驻设定", "after_more": "常驻设定（续）", "description": "角色设定",
           "personality": "性格", "scenario": "场景", "system": "卡作者的系统提示", "examples": "对话示例",
           "post": "卡作者的补充要求", "user": "## 用户的角色\n用户扮演「{user}」。", "user_title": "用户的角色",
           "user_line": "用户扮演「{user}」。", "preset": "预设 · {name}"},
    "en": {"card": "# Character card: {name}", "before": "Constant lore", "after_more": "Constant lore (continued)",
           "description": "Character description", "personality": "Personality", "scenario": "Scenario",
           "system": "The card author's system prompt", "examples": "Example dialogue",
           "post": "The card author's further instructions", "user": "## The user's character\nThe user plays \"{user}\".",
           "user_title": "The user's character", "user_line": "The user plays \"{user}\".", "preset": "Preset · {name}"},
}

#: The data blocks before the user's words (role-play injection, agent state block, relay summaries).
BLOCKS: dict[Lang, dict[str, str]] = {
    "zh": {"summaries": "【前情提要】以下是更早剧情的接力摘要，是既定事实：\n\n",
           "state": "【世界状态】\n", "roster": "【登场名录】",
           "memory_hint": "\n名录里的人和事，细节可用 memory_search 查原文。",
           "constants": "【本拍常驻设定】以下设定本拍生效：\n\n{text}",
           "lore": "【相关设定】本拍命中的世界书条目原文：\n\n{text}",
           "lore_near": ("【相关设定】本拍命中的世界书条目原文（这一拍用到的事实以此为准，用你自己的话写进正文，不要照抄；"
                         "只写角色和旁白，不替用户说话或行动）：\n\n{text}"),
           "hits": "【相关设定】本拍命中 {n} 条：{titles}",
           "index": "【设定集索引】共 {n} 条：{titles}",
           "index_big": ("【设定集索引】共 {n} 条，条目太多，这里只列 {shown} 条（本拍命中的在前）：{titles}\n另有 {more} 条"
                         "没有列出：用 lorebook_search 按名字或关键词查（lorebook_list 列出书中顺序的前 2000 条标题）。"),
           "language": "【语言】", "list": "、",
           "agent_dirs": "工作目录：{cwd}\n当前角色卡：{card}\n稿子目录：{story}"},
    "en": {"summaries": "[Story so far] Relay summaries of the earlier story; they are established fact:\n\n",
           "state": "[World state]\n", "roster": "[Roster] ",
           "memory_hint": "\nFor details of the people and things on the roster, look the original text up with "
                          "memory_search.",
           "constants": "[Lore this beat] These entries are in effect this beat:\n\n{text}",
           "lore": "[Relevant lore] The text of the world-book entries this beat matched:\n\n{text}",
           "lore_near": ("[Relevant lore] The text of the world-book entries this beat matched (the facts this beat "
                         "uses are as given here; work them into the prose in your own words, do not copy them "
                         "out; write only the characters and the narration, never the user's words or actions):"
                         "\n\n{text}"),
           "hits": "[Relevant lore] This beat matched {n}: {titles}",
           "index": "[Lore index] {n} entries: {titles}",
           "index_big": ("[Lore index] {n} entries, too many to list: {shown} shown here (this beat's matches "
                         "first): {titles}\n{more} more are not listed: look them up by name or keyword with "
                         "lorebook_search (lorebook_list lists the first 2000 titles in book order)."),
           "language": "[Language] ", "list": ", ",
           "agent_dirs": ("Working folder: {cwd}\nCharacter card: {card}\nChapter folder: this story's chapter files, "
                          "named by their bare file names (such as 001-Title.md)")},
}
