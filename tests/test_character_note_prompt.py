"""The card's Character's Note (``data.extensions.depth_prompt``) is in every role-play prompt of the card, with and
without a preset (SillyTavern's ``DEPTH_PROMPT`` extension prompt, set on every generation by ``script.js`` and
placed by ``openai.js`` ``populationInjectionPrompts`` whatever the prompt manager holds).

Placement checked against SillyTavern: the text is trimmed and its macros expanded, it goes before the last
``depth`` messages of the chat (the user's new message counts; 0 = after it) as a message of its ``role``; in one
depth and role it follows the Author's Note (key ``2_floating_prompt`` sorts first) and precedes @depth world info
(``customDepthWI-…``), all joined with newlines into one message. Agent mode leaves it out (the agent is the
writer's assistant, not the character; the card file it reads holds the note).
"""

from __future__ import annotations

from test_prompt_fidelity import beats, entry, make_card, small_preset

from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.prompt.authors_note import AuthorsNote

NOTE = {"prompt": "  {{char}}说话简短，从不叫{{user}}的全名。 ", "depth": 1, "role": "user"}
SENT = "阿青说话简短，从不叫旅人的全名。"


class Recorder:
    """A model that records every request it is asked (the replay model underneath answers)."""

    def __init__(self, inner):
        self.inner, self.requests = inner, []
        self.name, self.is_replay = inner.name, True

    async def complete(self, request, on_delta=None):
        self.requests.append(request)
        return await self.inner.complete(request, on_delta)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _texts(messages):
    return [(m["role"], m["content"]) for m in messages]


async def test_character_note_is_sent_without_a_preset_at_its_depth_and_role(tmp_path):
    card = make_card(tmp_path, [], extensions={"depth_prompt": NOTE})
    chat = Chat.create(tmp_path / "n", card, beats(2), persona="旅人")
    assert chat.prompter is None and SENT not in chat.system  # never in the byte-stable system prompt
    r = await chat.send("走吧")
    sent = _texts(r.messages_sent)
    assert sum(SENT in c for _, c in sent) == 1
    # depth 1: before the user's new message (the last one), as a user message of its own
    assert sent[-2] == ("user", SENT) and sent[-1][0] == "user" and sent[-1][1].endswith("走吧")
    r2 = await chat.send("再走")
    sent2 = _texts(r2.messages_sent)
    assert sent2[-2] == ("user", SENT) and sum(SENT in c for _, c in sent2) == 1  # every beat, once
    # the prompt inspector shows what was sent, the note included
    item = chat.transcript()[-1]
    first = chat.inspect_beat(item["id"])[0]["request"]["messages"]
    assert ("user", SENT) in [(m["role"], m["content"]) for m in first]


async def test_character_note_with_a_preset_is_sent_once(tmp_path):
    card = make_card(tmp_path, [], extensions={"depth_prompt": NOTE})
    chat = Chat.create(tmp_path / "p", card, beats(1), persona="旅人", preset=small_preset())
    r = await chat.send("走吧")
    sent = _texts(r.messages_sent)
    assert sum(SENT in c for _, c in sent) == 1 and sent[-2] == ("user", SENT)


async def test_character_note_defaults_and_order_beside_authors_note_and_depth_lore(tmp_path):
    # no depth / role: SillyTavern's defaults, depth 4 and system
    card = make_card(tmp_path, [entry(0, "格式", [], "深度四的设定。", pos="at_depth", depth=4, constant=True)],
                     extensions={"depth_prompt": {"prompt": "角色注。"}})
    chat = Chat.create(tmp_path / "o", card, beats(3))
    chat.set_authors_note(AuthorsNote(text="作者注。", depth=4, role="system"))
    for words in ("一", "二", "三"):
        r = await chat.send(words)
    sent = _texts(r.messages_sent)
    # the chat is: opening, 一, 回0, 二, 回1, 三 — depth 4 puts the one joined message before the last four
    i = next(k for k, (_, c) in enumerate(sent) if "角色注。" in c)
    assert sent[i] == ("system", "作者注。\n角色注。\n深度四的设定。")
    assert sent[i + 1] == ("assistant", "回0") and len(sent) - 1 - i == 4


async def test_impersonation_carries_the_character_note(tmp_path):
    card = make_card(tmp_path, [], extensions={"depth_prompt": {**NOTE, "depth": 0}})
    model = Recorder(ReplayModel(actor=[{"content": "我抬头看了看天。"}], scribe=[]))
    chat = Chat.create(tmp_path / "i", card, model, persona="旅人")
    assert await chat.impersonate() == "我抬头看了看天。"
    last = model.requests[-1].messages[-1]
    assert (last.role, last.content) == ("user", SENT)  # depth 0: after the impersonation prompt


async def test_agent_mode_leaves_the_character_note_out(tmp_path):
    card = make_card(tmp_path, [], extensions={"depth_prompt": NOTE})
    model = Recorder(ReplayModel(actor=[{"content": "好的，我们先谈大纲。"}], scribe=[]))
    chat = Chat.create(tmp_path / "a", card, model, mode="agent")
    await chat.send("写第一章吧")
    assert all("从不叫" not in (m.content or "") for m in model.requests[0].messages)


async def test_no_character_note_changes_nothing(tmp_path):
    plain = make_card(tmp_path, [])
    empty = make_card(tmp_path, [], extensions={"depth_prompt": {"prompt": "  ", "depth": 4, "role": "system"}})
    a = await Chat.create(tmp_path / "x", plain, beats(1)).send("走吧")
    b = await Chat.create(tmp_path / "y", empty, beats(1)).send("走吧")
    assert a.messages_sent[1:] == b.messages_sent[1:]
