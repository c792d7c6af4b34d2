"""Every prompt the engine writes to the model follows the chat's language (issue 32 §1), over real HTTP on
loopback (tests/sse_server.py) and through the inspector's data.

An English chat — the card, persona, book and the model's replies all supplied here in English, so any CJK
character in what is sent is the engine's own — plays role-play beats (with a failed tool call, an unknown tool,
an ask, stray text, the scribe), an agent turn (the file tools, a refused edit, the scribe over the chapter), the
compact prompt for local models and a compaction; every request the server received, and every call the inspector
rebuilds, is checked for CJK. Two beats of the same English chat send the identical tools + system prefix. A
Chinese chat still sends the Chinese texts (the golden runs check them byte for byte: tests/test_golden.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import DEMO_CARD, ROOT
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.beat.events import AskAnswer
from liyuan_desktop.core.beat.tools.registry import tool_specs
from liyuan_desktop.core.beat.tools.sets import AGENT_TOOLS, ROLEPLAY_TOOLS, WRITING_TOOLS
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import ProviderSettings, build_model
from liyuan_desktop.core.memory.compaction import compact_system
from liyuan_desktop.core.prompt.assemble import HistoryCache, summary_block

# CJK ideographs, kana, hangul, CJK punctuation (「」【】、。), full-width forms
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


#: The one engine text still allowed: the brackets around a world-book entry's title where its text is inlined
#: (``prompt/lore_layers.render_lore``, 「【title】body」: the lore inlining and the echo filter that reads it back
#: belong to another change, issue 30; the titles themselves are the book's).
LORE_TITLES = ("【The lamp】", "【Captain the gull】")


def cjk_in(obj: Any) -> list[str]:
    """Every CJK stretch (with some context) in ``obj`` serialised as JSON with its characters as they are."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    for t in LORE_TITLES:
        text = text.replace(t, "[lore title]")
    return [text[max(0, m.start() - 40):m.end() + 40] for m in CJK.finditer(text)]


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def english_card(tmp_path: Path, **extra: Any) -> Path:
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Mira", "description": "Mira keeps the lighthouse on a windy northern island and talks to gulls.",
        "personality": "dry, kind", "scenario": "A storm night at the lighthouse.",
        "first_mes": "*The door bangs open in the wind.* Well, you picked a fine night to visit, stranger.",
        "mes_example": "<START>\n{{user}}: Hello?\n{{char}}: *She squints.* Who's asking?", "tags": [],
        "system_prompt": "Keep the storm present in every scene.",
        "post_history_instructions": "Write two paragraphs at most.",
        "character_book": {"entries": [
            {"keys": ["lamp"], "content": "The lamp is an old Fresnel lens that Mira polishes every dusk.",
             "comment": "The lamp", "enabled": True, "insertion_order": 10, "id": 0},
            {"keys": ["gull"], "content": "Captain is a one-legged gull who steals biscuits.",
             "comment": "Captain the gull", "enabled": True, "insertion_order": 20, "id": 1}]},
        "extensions": {"liyuan": {"language": "en"}, **extra}}}
    p = tmp_path / "mira.json"
    p.write_text(json.dumps(card), "utf-8")
    return p


def call(i: int, name: str, args: Any) -> list:
    raw = args if isinstance(args, str) else json.dumps(args)
    return [chunk(tool_calls=[{"index": 0, "id": f"c{i}", "type": "function",
                               "function": {"name": name, "arguments": raw}}]),
            chunk(finish="tool_calls")]


def text(t: str) -> list:
    return [chunk(t), chunk(finish="stop")]


SCRIBE = text('{"patch": {"time": "night", "characters": {"Mira": {"affinity": 5, "status": "wary"}}, '
              '"inventory": ["towel (held by User)"], "plot_threads": ["the missing keeper"]}}')


def assert_english(requests: list[Any], what: str) -> None:
    for k, r in enumerate(requests):
        found = cjk_in({"messages": r.get("messages"), "tools": r.get("tools", [])})
        assert not found, f"{what}, request {k} ({r.get('purpose', '')}) sends CJK: {found[:5]}"


async def answer(_req: Any) -> AskAnswer:
    return AskAnswer(answer="Let her in", by="user")


async def test_english_roleplay_sends_no_chinese_and_keeps_its_prefix(tmp_path, server):
    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "c", load_card(english_card(tmp_path)), model)
    assert chat.context.language == "en"
    server.script(
        sse_reply(*call(1, "lorebook_search", {"query": "lamp", "limit": "many"})),  # refused: not a number
        sse_reply(*call(2, "no_such_tool", {})),  # an unknown tool
        sse_reply(*call(3, "ask", {"question": "Someone knocks. Open?", "options": ["Let her in", "Wait"]})),
        sse_reply(*call(4, "draft_write", {"version": 0, "content": "Mira lifts the lamp. \"Inside, quick.\""})),
        sse_reply(*call(5, "draft_edit", {"version": 1, "edits": [{"old": "not there", "new": "x"}]})),  # not found
        sse_reply(*call(6, "draft_seal", {"version": 5})),  # stale version
        sse_reply(*call(7, "draft_seal", {"version": 1})),
        # a patch with mistakes: the warnings go back to the scribe next beat, in English
        sse_reply(*text('{"patch": {"mood": "tense", "inventory": "towel", "characters": {"Mira": {"affinity": "high"}}}}')),
        # beat 2: the model writes its prose as plain text (captured and sealed), then a list of all titles
        sse_reply(*call(8, "lorebook_list", {})),
        sse_reply(*call(9, "world_state_get", {})),
        sse_reply(*text("The gull Captain hops onto the sill and eyes your biscuit.")),
        sse_reply(*SCRIBE),
    )
    first = await chat.send("I knock on the lighthouse door and mention the lamp.", ask=answer)
    assert first.sealed
    second = await chat.send("I offer the gull a biscuit.")
    assert second.sealed
    reqs = [r.json for r in server.requests]
    assert len(reqs) == 12
    assert_english(reqs, "role-play")
    actor = [r for r in reqs if r.get("tools")]
    # the tool results the model read back are English too (errors included)
    results = [m["content"] for r in actor for m in r["messages"] if m["role"] == "tool"]
    assert any("must be an integer" in x for x in results) and any("There is no tool named" in x for x in results)
    assert any("Version conflict" in x for x in results) and any("is not in the draft" in x for x in results)
    scribe_text = reqs[11]["messages"][1]["content"]
    assert "[Warnings from the last booking]" in scribe_text and "Unknown field mood" in scribe_text
    # the system prompt and the tools are the same bytes in every call of both beats (the provider's prefix cache)
    heads = {json.dumps([r["messages"][0], r["tools"]], ensure_ascii=False) for r in actor}
    assert len(heads) == 1
    assert [t["function"]["name"] for t in actor[0]["tools"]] == list(ROLEPLAY_TOOLS)
    # the data blocks before the user's words
    user = actor[-1]["messages"][-1]["content"] if actor[-1]["messages"][-1]["role"] == "user" else ""
    words = [m["content"] for m in actor[0]["messages"] if m["role"] == "user"][-1]
    assert words.startswith("[World state]\n") and "[Language] Write narration" in words
    assert "[Roster]" in next(m["content"] for m in reqs[8]["messages"] if m["role"] == "user"
                              and "I offer the gull" in m["content"])
    del user
    # the inspector's data: every call as rebuilt from the tree, the scribe's included
    for beat_reply in (first, second):
        assert beat_reply.sealed
    for entry in [e for e in chat.tree.path_to() if e.type == "assistant"]:
        calls = chat.inspect_beat(entry.id)
        assert calls and calls[-1]["purpose"] == "scribe"
        assert not cjk_in([c["request"] for c in calls]), cjk_in([c["request"] for c in calls])[:5]
    # what the inspector rebuilds is what was sent
    rebuilt = chat.inspect_beat(chat.tree.path_to()[-2].id if chat.tree.path_to()[-2].type == "assistant"
                                else [e for e in chat.tree.path_to() if e.type == "assistant"][-1].id)
    assert rebuilt[0]["request"]["tools"] == reqs[8]["tools"]
    chat.close()
    await model.aclose()


async def test_english_compact_prompt_for_local_models(tmp_path, server):
    model = build_model(ProviderSettings(name="cpu", base_url=server.base_url, model="qwen-0.5b",
                                         compact_prompt=True), api_key="")
    chat = Chat.create(tmp_path / "c", load_card(english_card(tmp_path)), model)
    for k, words in enumerate(("I step in from the rain.", "I ask about the lamp.")):
        server.script(sse_reply(*call(10 * k + 1, "draft_write", {"version": 0, "content": f"Beat {k}: rain."})),
                      sse_reply(*call(10 * k + 2, "draft_seal", {"version": 1})), sse_reply(*SCRIBE))
        assert (await chat.send(words)).sealed
    reqs = [r.json for r in server.requests]
    assert_english(reqs, "compact prompt")
    system = reqs[0]["messages"][0]["content"]
    assert system.startswith("# Liyuan · Role-play (compact)") and "## Personality" in system
    assert reqs[0]["messages"][0] == reqs[3]["messages"][0] and reqs[0]["tools"] == reqs[3]["tools"]
    chat.close()
    await model.aclose()


async def test_english_agent_turn_sends_no_chinese(tmp_path, server):
    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "book", load_card(english_card(tmp_path)), model, mode="agent")
    chapter = "The storm came in over the rocks. Mira lit the lamp and waited.\n"
    server.script(
        sse_reply(*call(1, "write", {"path": "001-Storm.md", "content": chapter})),
        sse_reply(*call(2, "read", {"path": "001-Storm.md", "offset": 1, "limit": 1})),
        sse_reply(*call(3, "grep", {"pattern": "lamp"})),
        sse_reply(*call(4, "grep", {"pattern": "nothing like this"})),
        sse_reply(*call(5, "edit", {"path": "001-Storm.md", "oldText": "not in the file", "newText": "x"})),
        sse_reply(*call(6, "edit", {"path": "../outside.md", "oldText": "a", "newText": "b"})),
        sse_reply(*call(7, "edit", {"path": "001-Storm.md", "oldText": "a", "newText": "b", "edits": []})),
        sse_reply(*call(8, "read", {"path": "009-Missing.md"})),
        sse_reply(*call(9, "memory_search", {"query": "lamp"})),
        sse_reply(*text("I wrote chapter one: the storm and the lamp.")),
        sse_reply(*SCRIBE),
        # a second turn: the state block now has a ledger, a roster and a chapter
        sse_reply(*text("Shall the keeper return in chapter two?")),
    )
    res = await chat.send("Write the first chapter: the storm reaches the lighthouse.")
    assert res.outcome == "discussed"
    await chat.send("What next?")
    reqs = [r.json for r in server.requests]
    assert_english(reqs, "agent mode")
    actor = [r for r in reqs if r.get("tools")]
    assert {json.dumps([r["messages"][0], r["tools"]]) for r in actor} == {json.dumps([actor[0]["messages"][0],
                                                                                        actor[0]["tools"]])}
    results = [m["content"] for r in actor for m in r["messages"] if m["role"] == "tool"]
    assert any("Created 001-Storm.md" in x for x in results)
    assert any("is not in the file" in x for x in results) and any("does not exist" in x for x in results)
    last_words = actor[-1]["messages"][-1]["content"]
    assert "[Chapters] 1 files" in last_words and "[World state]" in last_words
    for entry in [e for e in chat.tree.path_to() if e.type == "assistant"]:
        calls = chat.inspect_beat(entry.id)
        assert not cjk_in([c["request"] for c in calls if c["request"]])
    chat.close()
    await model.aclose()


async def test_english_agent_with_outline_tools(tmp_path, server):
    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "book", load_card(english_card(tmp_path)), model, mode="agent")
    from liyuan_desktop.core.story.outline import OUTLINE_FILE
    (tmp_path / "book" / OUTLINE_FILE).write_text("# Volume One\n\n## Storm\n- the lamp fails\n", "utf-8")
    chat.agent.story.write("001-Storm.md", "The lamp failed at midnight.\n")
    server.script(sse_reply(*call(1, "outline_read", {})),
                  sse_reply(*call(2, "outline_edit", {"chapter": "1"})),  # refused: nothing to change
                  sse_reply(*call(3, "chapter_review", {"path": "001-Storm.md"})),
                  sse_reply(*call(4, "outline_edit", {"oldText": "not in the outline", "newText": "x"})),
                  sse_reply(*call(5, "outline_edit", {"chapter": "9", "status": "done"})),
                  sse_reply(*text("The outline and the chapter agree.")))
    await chat.send("Check chapter one against the outline.")
    reqs = [r.json for r in server.requests]
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == [*AGENT_TOOLS, *WRITING_TOOLS]
    assert_english(reqs, "agent mode with an outline")
    last = [r for r in reqs if r.get("tools")][-1]
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert "with chapter, also give one of status" in results[1] and "oldText is not in the outline" in results[3]
    assert "The outline has no chapter" in results[4] and "self_check" in results[2]
    chat.close()
    await model.aclose()


async def test_every_tool_schema_has_english_texts_and_chinese_ones_unchanged():
    names = (*ROLEPLAY_TOOLS, *AGENT_TOOLS, *WRITING_TOOLS)
    en = tool_specs(names, "en")
    assert not cjk_in(en), cjk_in(en)[:5]
    assert json.dumps(tool_specs(names, "en")) == json.dumps(en)  # cached: the same bytes every time
    zh = json.dumps(tool_specs(names), ensure_ascii=False)
    assert "x-liyuan-en" not in zh and "稿件当前版本号" in zh  # the Chinese schemas carry no English key
    assert tool_specs(names, "ja") == en  # a chat in another language reads the English texts


async def test_english_compaction_call_is_english(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from synthetic_game import SyntheticModel, user_words

    model = SyntheticModel(context_window=6000)
    card = load_card(english_card(tmp_path))
    chat = Chat.create(tmp_path / "c", card, model)
    for k in range(1, 25):
        assert (await chat.send(user_words(k))).sealed
    summaries = [m for p, m, _ in model.requests if p == "summary"]
    assert summaries
    assert summaries[0][0]["content"] == compact_system("en") and not cjk_in(summaries[0][0]["content"])
    head = summaries[0][-1]["content"].split("\n\n", 1)[0]
    assert head.startswith("[Story to compact]") and not cjk_in(head)
    framing = re.sub(r"\n(User|Mira): .*", "", summaries[0][-1]["content"])  # the turns' words are the test's
    assert "\nUser: " in summaries[0][-1]["content"] and not cjk_in(framing), cjk_in(framing)[:3]
    actor = [m for p, m, _ in model.requests if p == "actor"]  # (the synthetic words themselves are Chinese)
    assert not cjk_in([[m[0], m[1]] for m in actor])  # the system prompt and the opening with its header
    assert actor[0][1]["content"].startswith("[Opening · Mira]\n")
    chat.close()


def test_relay_summaries_go_back_under_an_english_header():
    h = HistoryCache("en")
    assert summary_block(["Mira lit the lamp."], h.language) == (
        "[Story so far] Relay summaries of the earlier story; they are established fact:\n\nMira lit the lamp.")
    assert summary_block(["x"]).startswith("【前情提要】")


async def test_chinese_chat_still_sends_chinese(tmp_path, server):
    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    server.script(sse_reply(*call(1, "draft_seal", {"version": 3})),
                  sse_reply(*text("雨还在下。")), sse_reply(*text('{"patch": {}}')))
    assert (await chat.send("我推门进去。")).sealed
    first = server.requests[0].json
    assert first["messages"][0]["content"].startswith("# 梨园 · 扮演")
    assert "【世界状态】" in first["messages"][-1]["content"]
    assert first["tools"] == tool_specs(ROLEPLAY_TOOLS)
    tool_msg = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"][0]["content"]
    assert "版本冲突" in tool_msg
    chat.close()
    await model.aclose()


async def test_english_continue_impersonate_and_authors_note(tmp_path, server):
    from liyuan_desktop.core.prompt.authors_note import AuthorsNote

    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "c", load_card(english_card(tmp_path)), model)
    chat.set_authors_note(AuthorsNote(text="Keep the storm loud.", position="before"))
    server.script(sse_reply(*text("Rain hammers the glass.")), sse_reply(*SCRIBE),
                  sse_reply(*call(1, "draft_append", {"version": 1, "content": "The lamp flickers."})),
                  sse_reply(*call(2, "draft_seal", {"version": 2})), sse_reply(*SCRIBE),
                  sse_reply(*text("I hang my coat by the door.")))
    assert (await chat.send("I wait by the window.")).sealed
    assert (await chat.continue_reply()).sealed
    assert await chat.impersonate() == "I hang my coat by the door."
    reqs = [r.json for r in server.requests]
    assert_english(reqs, "continue / impersonate / author's note")
    assert "[Author's note] Keep the storm loud." in reqs[0]["messages"][-1]["content"]
    assert "(Continue: the draft holds your reply" in json.dumps(reqs[2]["messages"])
    assert "as {{user}}" not in reqs[-1]["messages"][-1]["content"]  # macros applied
    assert reqs[-1]["messages"][-1]["content"].startswith("[Write the next line User says")
    chat.close()
    await model.aclose()


async def test_english_chapter_review_and_its_notes_for_the_agent(tmp_path, server):
    model = build_model(ProviderSettings(name="t", base_url=server.base_url, model="m"), api_key="")
    chat = Chat.create(tmp_path / "book", load_card(english_card(tmp_path)), model, mode="agent")
    from liyuan_desktop.core.story.outline import OUTLINE_FILE
    (tmp_path / "book" / OUTLINE_FILE).write_text("# Volume One\n\n## Storm {target=4000}\n- the lamp fails\n", "utf-8")
    para = "The lamp failed at midnight and the gulls screamed over the rocks below the tower.\n"
    chat.agent.story.write("001-Storm.md", para * 3)  # a repeated sentence, and far under the target
    quote = "The lamp failed at midnight"
    server.script(sse_reply(*text(json.dumps({"findings": [{"kind": "ooc", "quote": quote,
                                                            "note": "Mira would not panic here."}]}))),
                  sse_reply(*text("Fixed the panic line.")))
    result = await chat.review_chapter("001-Storm.md")
    review_call = server.requests[0].json
    assert_english([review_call], "chapter review")
    assert review_call["messages"][0]["content"].startswith("You are the review editor")
    assert result.findings and not cjk_in([f.note for f in result.findings])
    chat.accept_finding(result.findings[0].id)
    await chat.send("Apply the accepted notes.")
    turn = server.requests[1].json
    assert "[Review notes] The user accepted" in turn["messages"][-1]["content"]
    assert not cjk_in([m for m in turn["messages"] if m["role"] != "tool"]), cjk_in(turn["messages"])[:5]
    assert not chat.review.pending()  # the English marker is read back: the finding counts as delivered
    chat.close()
    await model.aclose()


def test_english_chat_with_a_preset_titles_its_layers_in_english(tmp_path):
    from liyuan_desktop.core.prompt.presets.model import Preset

    prompts = [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system",
                "content": "Write vividly."},
               {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
               {"identifier": "charPersonality", "name": "Char Personality", "system_prompt": True, "marker": True},
               {"identifier": "scenario", "name": "Scenario", "system_prompt": True, "marker": True},
               {"identifier": "dialogueExamples", "name": "Chat Examples", "system_prompt": True, "marker": True},
               {"identifier": "personaDescription", "name": "Persona", "system_prompt": True, "marker": True},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True}]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    preset = Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]},
                              "small")
    from liyuan_desktop.core.llm.replay import ReplayModel
    chat = Chat.create(tmp_path / "c", load_card(english_card(tmp_path)), ReplayModel([]), preset=preset)
    system = chat.system
    assert not cjk_in(system), cjk_in(system)[:5]
    assert "## The card author's system prompt\n" in system and "## Character description\n" in system
    assert "## The user's character\nThe user plays \"User\"." in system
    chat.close()


def test_memory_search_says_ledger_changes_in_english():
    from liyuan_desktop.core.beat.tools.context import ToolContext
    from liyuan_desktop.core.beat.tools.registry import get_tool, parse_args

    def search(_q: str, _n: int) -> list[dict]:
        return [{"beat": 2, "kind": "ledger", "snippet": "time → night；characters.Mira 已更新", "score": 1.0},
                {"beat": 2, "kind": "final", "snippet": "Mira lit the lamp.", "score": 0.5}]

    spec = get_tool("memory_search")
    assert spec is not None
    res = spec.handler(ToolContext(memory_search=search, language="en"), parse_args(spec, '{"query": "Mira"}'))
    assert not cjk_in(res), res
    assert res["results"][1]["snippet"] == "Mira lit the lamp."
    zh = spec.handler(ToolContext(memory_search=search), parse_args(spec, '{"query": "Mira"}'))
    assert zh["results"][0]["snippet"] == "time → night；characters.Mira 已更新"  # a Chinese chat: as stored


def test_an_imported_sillytavern_chat_of_an_english_card_gets_the_english_opening_header(tmp_path):
    from liyuan_desktop.core.cards.st_chat import OPENING_HEADER
    from liyuan_desktop.core.chat.st_import import import_st_chat
    from liyuan_desktop.core.llm.replay import ReplayModel
    from liyuan_desktop.core.prompt.assemble import opening_body

    lines = [{"user_name": "Sam", "character_name": "Mira", "create_date": "2024-01-01@10h00m00s", "chat_metadata": {}},
             {"name": "Mira", "is_user": False, "mes": "Storm's coming.", "send_date": "2024-01-01@10h00m01s"},
             {"name": "Sam", "is_user": True, "mes": "Let me in!", "send_date": "2024-01-01@10h00m02s"}]
    f = tmp_path / "a.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    chat = import_st_chat(f, load_card(english_card(tmp_path)), tmp_path / "chat", ReplayModel([]))
    opening = chat.history().opening
    assert opening == "[Opening · Mira]\nStorm's coming."
    assert OPENING_HEADER.match(opening) and opening_body(opening) == "Storm's coming."  # read back as ours
    assert opening_body("【开场 · 青梧】\n雨夜。") == "雨夜。"  # the Chinese header still reads back
    chat.close()


def test_panel_patch_warnings_for_an_english_scribe():
    from liyuan_desktop.core.ledger.panels import Panel, apply_panel_patch

    panel = Panel.model_validate({"id": "hp", "title": "Health", "template": "<b>{{hp}}</b>", "data": {"hp": 10}})
    from liyuan_desktop.core.ledger.scribe import scribe_user_text
    from liyuan_desktop.core.ledger.state import WorldState

    _, applied, warnings = apply_panel_patch([panel], {"hp": {"hp": "lots", "mp": 3}, "nope": {}}, "en")
    assert applied == ["hp.mp"] and len(warnings) == 2
    # the warnings are messages: fed back to an English chat's scribe in English (and shown in the reader's language)
    fed = scribe_user_text(WorldState(), "Sam", "Mira", "Hi.", "Hello.", previous_warnings=warnings, language="en")
    assert "lots" in fed and not cjk_in([fed]), fed
    _, _, zh = apply_panel_patch([panel], {"nope": {}})
    assert zh == ["panel_patch 里的面板「nope」不存在，已忽略"]  # a Chinese chat's warnings as before


def test_scribe_prompts_with_a_variable_tree_and_panels_in_english():
    from liyuan_desktop.core.ledger.panels import Panel
    from liyuan_desktop.core.ledger.scribe import scribe_system_prompt, scribe_user_text
    from liyuan_desktop.core.ledger.state import WorldState

    tree = {"stat_data": {"user": {"gold": 480, "v1.2": 1}, "$meta": {"updatable": False}}}
    panels = [Panel.model_validate({"id": "hp", "title": "Health", "template": "{{hp}}", "data": {"hp": 10}})]
    state = WorldState.model_validate({"characters": {"Mira": {"affinity": 3}}})
    system = scribe_system_prompt(state, "User", "Mira", tree, panels, "en", era=True)
    user = scribe_user_text(state, "User", "Mira", "I wave.", "She waves back.", ["Unknown field mood"], tree, panels,
                            "gold changes when bought", "en")
    assert not cjk_in([system, user]), cjk_in([system, user])[:5]
    assert "mvu_patch" in system and "panel_patch" in system and "JSON Pointer" in system and "ERA" in system
    assert "[State tree · current values]" in user and "[The card author's variable rules]" in user
    zh = scribe_system_prompt(state, "你", "青梧", tree, panels, "zh", era=True)
    assert "状态树" in zh and "面板" in zh  # Chinese chats keep the seed's sections


def test_an_older_english_chat_sends_its_stored_chinese_opening_header_in_english():
    from types import SimpleNamespace

    path = [SimpleNamespace(id="h", type="header"), SimpleNamespace(id="o", type="opening", text="【开场 · Mira】\nStorm.")]
    assert HistoryCache("en").update(path).messages[0].content == "[Opening · Mira]\nStorm."
    assert HistoryCache("zh").update(path).messages[0].content == "【开场 · Mira】\nStorm."  # Chinese: as stored


def test_an_english_chats_copied_data_blocks_are_caught_by_the_echo_filter():
    """The echo filter (core/beat/echo.py) knows an English chat's block headers as it knows the Chinese ones: the
    two lists stay in step with core/prompt/wording.BLOCKS, and a reply that copies the [World state] block back
    keeps only its prose."""
    import re as _re

    from liyuan_desktop.core.beat.echo import INJECTION_HEADERS_EN, strip_echo
    from liyuan_desktop.core.prompt.wording import BLOCKS

    heads = {m for v in BLOCKS["en"].values() for m in _re.findall(r"^\[[A-Za-z' ]+\]", v)}
    assert heads and heads <= set(INJECTION_HEADERS_EN), heads - set(INJECTION_HEADERS_EN)
    injection = "[World state]\nTime: dusk\nPlace: the ferry inn"
    reply = injection + "\n\n*Mira wipes the counter.* \"Rain again.\""
    assert strip_echo(reply, injection) == "*Mira wipes the counter.* \"Rain again.\""
