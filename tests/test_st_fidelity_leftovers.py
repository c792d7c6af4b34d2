"""Issue 29 item 10: what the prompt still did differently from SillyTavern 1.12, one test per leftover.

Facts checked against SillyTavern's code (1.12.6): ``openai.js`` ``populationInjectionPrompts`` makes one message per
depth and role — the prompt manager's in-chat prompts, then ``getExtensionPrompt`` (``script.js``): the extension
prompts sorted by key (``2_floating_prompt`` = the Author's Note, ``DEPTH_PROMPT`` = the card's Character's Note,
``customDepthWI-…`` = @depth world info), each trimmed, all joined with "\\n". ``world-info.js`` ``checkWorldInfo``:
the budget is ``Math.round(world_info_budget × maxContext / 100) || 1`` (capped), constants are activated in the
first pass and cut like any entry once the activated text reaches the budget.
"""

from __future__ import annotations

import json

from test_prompt_fidelity import beats, entry, make_card, small_preset

from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.prompt.authors_note import AuthorsNote
from liyuan_desktop.core.prompt.presets.model import Preset


def _texts(messages):
    return [(m["role"], m["content"]) for m in messages]


def preset_with_in_chat_prompt():
    """The small preset plus an in-chat prompt at depth 4, system (the prompt manager's own depth injection)."""
    prompts = [{"identifier": "main", "name": "Main Prompt", "system_prompt": True, "role": "system", "content": "主提示"},
               {"identifier": "charDescription", "name": "Char Description", "system_prompt": True, "marker": True},
               {"identifier": "chatHistory", "name": "Chat History", "system_prompt": True, "marker": True},
               {"identifier": "inchat", "name": "In chat", "role": "system", "content": "预设的深度提示。",
                "injection_position": 1, "injection_depth": 4}]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    return Preset.from_json({"prompts": prompts, "prompt_order": [{"character_id": 100001, "order": order}]}, "深度预设")


# f ------------------------------------------------------------------------------------------------------------
async def test_with_a_preset_one_depth_and_role_make_one_message(tmp_path):
    card = make_card(tmp_path, [entry(0, "格式", [], "深度四的设定。", pos="at_depth", depth=4, constant=True)],
                     extensions={"depth_prompt": {"prompt": "角色注。"}})
    for preset in (small_preset(), preset_with_in_chat_prompt()):
        chat = Chat.create(tmp_path / preset.name, card, beats(3), preset=preset)
        chat.set_authors_note(AuthorsNote(text="作者注。", depth=4, role="system"))
        for words in ("一", "二", "三"):
            r = await chat.send(words)
        sent = _texts(r.messages_sent)
        i = next(k for k, (_, c) in enumerate(sent) if "角色注。" in c)
        lead = "预设的深度提示。\n" if preset.name == "深度预设" else ""
        assert sent[i] == ("system", lead + "作者注。\n角色注。\n深度四的设定。"), sent
        assert sent[i + 1] == ("assistant", "回0") and len(sent) - 1 - i == 4
        assert sum("角色注。" in c for _, c in sent) == 1 and sum("作者注。" in c for _, c in sent) == 1


# b ------------------------------------------------------------------------------------------------------------
class _Recorder:
    """A model that keeps every request (the replay model underneath answers)."""

    def __init__(self, inner):
        self.inner, self.requests = inner, []
        self.name, self.is_replay = inner.name, True

    async def complete(self, request, on_delta=None):
        self.requests.append(request.model_copy(deep=True))
        return await self.inner.complete(request, on_delta)

    def __getattr__(self, name):
        return getattr(self.inner, name)


async def test_lorebook_search_fills_last_message_macros(tmp_path):
    card = make_card(tmp_path, [entry(0, "渡口", ["渡口"], "渡口的船夫记得{{user}}刚说的：{{lastMessage}}；"
                                                           "他自己上一句：{{lastCharMessage}}")])
    model = _Recorder(ReplayModel(actor=[
        {"tool_calls": [{"name": "lorebook_search", "arguments": {"query": "渡口"}}]},
        {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "好。"}}]},
        {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}], scribe=['{"patch": {}}']))
    chat = Chat.create(tmp_path / "c", card, model, persona="旅人")
    await chat.send("去渡口")
    tool = next(m for m in model.requests[1].messages if m.role == "tool")
    hits = json.loads(tool.content)
    assert hits[0]["content"] == "渡口的船夫记得旅人刚说的：去渡口；他自己上一句：你好。"


# c ------------------------------------------------------------------------------------------------------------
def preset_with_context(context, reply):
    """The small preset with SillyTavern's context size and reply length set."""
    p = small_preset()
    return p.model_copy(update={"openai_max_context": context, "openai_max_tokens": reply})


async def test_the_world_info_budget_follows_the_preset_context(tmp_path):
    # three keyed entries of 150 CJK characters (≈150 tokens each); 25 % of the preset's 1000 − 200 = 200 tokens
    # holds one of them; 25 % of the model's window holds all three
    card = make_card(tmp_path, [entry(i, f"条目{i}", ["渡口"], "雨" * 150, order=100 - i) for i in range(3)])
    plain = Chat.create(tmp_path / "n", card, beats(1))
    assert plain.world_info_budget_basis().source == "window"
    r = await plain.send("去渡口")
    assert len(r.activated) == 3
    chat = Chat.create(tmp_path / "p", card, beats(1), preset=preset_with_context(1000, 200))
    basis = chat.world_info_budget_basis()
    assert (basis.source, basis.context, basis.tokens, basis.preset) == ("preset", 800, 200, "小预设")
    r = await chat.send("去渡口")
    assert r.activated == ["条目0"]
    # a preset without a context size leaves the model's window in charge
    other = Chat.create(tmp_path / "o", card, beats(1), preset=small_preset())
    assert other.world_info_budget_basis().source == "window"


# a ------------------------------------------------------------------------------------------------------------
async def test_constants_the_budget_drops_are_not_in_the_system_prompt(tmp_path):
    # budget 25 % of 1000 − 200 = 200 tokens; three constants of 150 CJK characters: SillyTavern keeps the first
    # (highest order, processed first) and drops the rest once the activated text reaches the budget
    card = make_card(tmp_path, [entry(i, f"常驻{i}", [], f"{'甲乙丙'[i]}" * 150, constant=True, order=100 - i)
                                for i in range(3)])
    for preset in (None, preset_with_context(1000, 200)):
        d = tmp_path / ("p" if preset else "n")
        chat = Chat.create(d, card, beats(2), preset=preset)
        if preset is None:  # the model's window: all three fit
            assert all(ch * 150 in chat.system for ch in "甲乙丙")
            continue
        assert "甲" * 150 in chat.system and "乙" * 150 not in chat.system and "丙" * 150 not in chat.system
        first = chat.system
        for words in ("出发", "再走"):
            r = await chat.send(words)
            sent = "\n".join(m["content"] for m in r.messages_sent)
            assert sent.count("甲" * 150) == 1 and "乙" * 150 not in sent and "丙" * 150 not in sent
            assert r.messages_sent[0]["content"] == first  # byte-stable across beats


async def test_a_constant_that_ignores_the_budget_stays(tmp_path):
    card = make_card(tmp_path, [entry(0, "大", [], "甲" * 300, constant=True, order=100),
                                entry(1, "必留", [], "乙" * 10, constant=True, order=90, ignore_budget=True)])
    chat = Chat.create(tmp_path / "c", card, beats(1), preset=preset_with_context(1000, 200))
    assert "甲" * 300 not in chat.system and "乙" * 10 in chat.system
    r = await chat.send("出发")
    assert "\n".join(m["content"] for m in r.messages_sent).count("乙" * 10) == 1


# d ------------------------------------------------------------------------------------------------------------
def test_card_inspect_checks_a_template_as_it_is_rendered(tmp_path):
    """The template engine sees a text after the macros: ``<user>`` / ``{{user}}`` / ``{{char}}`` in template code are
    names by then, so such a template compiles; a template broken after the macros is still reported."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    card = make_card(tmp_path, [entry(0, "称呼", [], "<% const who = <user>; %>叫<%= who %>", constant=True),
                                entry(1, "名字", [], "<% if ({{char}} === undefined) { %>无名<% } %>", constant=True),
                                entry(2, "写坏了", [], "<% if ( <user> { %>", constant=True)])
    from liyuan_desktop.core.cards.inspect import inspect_loaded

    broken = inspect_loaded(card)["templates"]["broken"]
    assert [b["where"] for b in broken] == ["世界书「写坏了」"]
    run = subprocess.run([sys.executable, "-m", "liyuan_desktop.cli", "card", "inspect", str(tmp_path / "card" / "card.json"),
                          "--json"], cwd=str(root), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert [b["where"] for b in json.loads(run.stdout)["templates"]["broken"]] == ["世界书「写坏了」"]


# e ------------------------------------------------------------------------------------------------------------
async def test_the_character_note_is_sent_with_and_without_a_preset_in_both_ways_of_play(tmp_path):
    """SillyTavern sets the card's ``DEPTH_PROMPT`` on every generation, preset or not (already so on main for tool
    play, tests/test_character_note_prompt.py; here prose-only play as well)."""
    card = make_card(tmp_path, [], extensions={"depth_prompt": {"prompt": "角色注。", "depth": 0}})
    for preset in (None, small_preset()):
        for prose in (False, True):
            d = tmp_path / f"{'p' if preset else 'n'}{int(prose)}"
            model = ReplayModel(actor=[{"content": "好。"}] if prose else [
                {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "好。"}}]},
                {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}], scribe=['{"patch": {}}'])
            chat = Chat.create(d, card, model, preset=preset)
            chat.set_prose_only(prose)
            r = await chat.send("走吧")
            assert sum("角色注。" in m["content"] for m in r.messages_sent) == 1, (preset, prose)
            assert r.messages_sent[-1] == {"role": "system", "content": "角色注。"}
