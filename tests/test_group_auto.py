"""Group chats, several replies per user message and auto-mode (issue 31): every member a message activates
replies in turn (natural: the named ones in the order named; list: every unmuted member), each reply a message of
its own with its speaker; auto-mode plays at most its limit, stops on Stop, and each turn is a beat by the member
the strategy picks, its card in the prompt the inspector shows."""

from __future__ import annotations

import asyncio

import pytest
from test_group_chat import MEMBERS, SEAL, new_group, replay, speakers, w

from liyuan_desktop.cli import main as cli_main
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.group_play import waiting
from liyuan_desktop.core.group import load_group, save_group
from liyuan_desktop.core.group.auto import AutoRun
from liyuan_desktop.core.group.model import group_dir, member_card
from liyuan_desktop.core.messages import message


def chat_of(tmp_path, name: str, n: int, seed: str = "seed-1", **kw) -> Chat:
    g = new_group(tmp_path, **kw)
    return Chat.create_group(group_dir(g.name) / "对话" / name, g, replay(n), group_seed=seed)


async def say_all(chat: Chat, text: str, on_event=None) -> list:
    """What a front end does: the user's beat, then every member it activated, one beat each."""
    out = [await chat.send(text, on_event=on_event)]
    while waiting(chat):
        out.append(await chat.group_reply(on_event=on_event))
    return out


def shown(chat: Chat) -> list[tuple[str, str]]:
    """(role, speaker or text) of the transcript's user messages and replies."""
    return [(it["role"], it.get("speaker", it["text"])) for it in chat.transcript() if it["role"] in ("user", "assistant")]


async def test_a_message_naming_two_members_makes_both_reply_in_order(tmp_path):
    chat = chat_of(tmp_path, "two", 6)
    seen: list = []
    results = await say_all(chat, "Birch and Aster, come here.", on_event=seen.append)
    got = speakers(chat)
    assert got[:2] == ["Birch", "Aster"]  # both named: both reply, the first named first
    assert all(r.outcome == "sealed" for r in results)
    texts = [getattr(e, "text", "") for e in seen]
    assert message("group.why.named", name="Birch") in texts and message("group.why.named", name="Aster") in texts
    # each reply is a message of its own with its speaker; the follow-up beats' nudges are not shown
    view = shown(chat)
    assert view[0] == ("user", "Birch and Aster, come here.")
    assert [v for v in view[1:3]] == [("assistant", "Birch"), ("assistant", "Aster")]
    assert [v for v in view if v[0] == "user"] == [("user", "Birch and Aster, come here.")]
    # the second speaker's prompt: its card, the first speaker's reply before the nudge naming it
    last = results[1].sent
    assert MEMBERS["Aster"]["description"] in last[0].content and MEMBERS["Birch"]["description"] not in last[0].content
    assert any(m.role == "assistant" and m.content.startswith("Birch：") for m in last)
    assert last[-1].content.endswith(str(message("group.nudge", name="Aster")))


async def test_natural_order_six_beats_for_three_messages_seeded(tmp_path):
    chat = chat_of(tmp_path, "six", 8)
    seen: list = []
    for text in ["Hello Birch.", "青梧, tea please.", "We wait."]:
        await say_all(chat, text, on_event=seen.append)
    # Birch named, Aster rolled his talkativeness 0.9; 青梧 named, then Birch and Aster rolled; nobody named: Aster
    assert speakers(chat) == ["Birch", "Aster", "青梧", "Birch", "Aster", "Aster"]
    reasons = [e.text for e in seen if getattr(e, "text", "") and getattr(e.text, "key", "").startswith("group.why.")]
    assert [r.key for r in reasons] == ["group.why.named", "group.why.talkative", "group.why.named",
                                        "group.why.talkative", "group.why.talkative", "group.why.talkative"]


async def test_natural_order_same_seed_same_queue(tmp_path):
    a = chat_of(tmp_path, "a", 12)
    b = chat_of(tmp_path, "b", 12)
    for text in ["青梧, tea please.", "We wait."]:
        await say_all(a, text)
        await say_all(b, text)
    assert speakers(a) == speakers(b) and speakers(a)[0] == "青梧"


async def test_list_order_every_unmuted_member_replies_in_list_order(tmp_path):
    chat = chat_of(tmp_path, "l", 8, strategy="list", muted=["Birch"])
    await say_all(chat, "Hello all.")
    assert speakers(chat) == ["Aster", "青梧"]  # muted Birch is skipped
    await say_all(chat, "Again.")
    assert speakers(chat) == ["Aster", "青梧"] * 2
    g = load_group("Party")
    save_group(g.model_copy(update={"muted": []}))
    await say_all(chat, "And Birch.")
    assert speakers(chat)[4:] == ["Aster", "Birch", "青梧"]


async def test_pooled_and_manual_one_reply_per_message(tmp_path):
    chat = chat_of(tmp_path, "p", 3, strategy="pooled")
    for text in ["One.", "Two.", "Three."]:
        await say_all(chat, text)
    assert sorted(speakers(chat)) == sorted(MEMBERS)  # one each: who spoke least goes next
    chat = chat_of(tmp_path, "m", 2, strategy="manual")
    with pytest.raises(ValueError):
        await say_all(chat, "Anyone?")  # manual: nobody unless picked
    await chat.send("You.", speaker="Birch")
    assert waiting(chat) == [] and speakers(chat) == ["Birch"]


@pytest.mark.parametrize("strategy", ["natural", "list", "pooled", "manual"])
async def test_auto_mode_plays_exactly_the_limit_and_stops(tmp_path, strategy):
    chat = chat_of(tmp_path, strategy, 8, strategy=strategy, auto_mode=True, auto_limit=6)
    run = AutoRun(load_group("Party").auto_limit, delay=0)
    results = await run.run(lambda: chat.group_reply())
    assert len(results) == 6 == run.played and not run.want()
    assert run.ended == message("group.auto.done", n=6, limit=6)
    got = speakers(chat)
    assert len(got) == 6
    if strategy != "pooled" or not load_group("Party").allow_self_responses:
        assert all(x != y for x, y in zip(got, got[1:]))  # nobody answers themselves (self responses off)
    if strategy == "list":
        assert got == ["Aster", "Birch", "青梧"] * 2
    if strategy == "pooled":
        assert sorted(got[:3]) == sorted(got[3:]) == sorted(MEMBERS)
    pinned = {"natural": ["Aster", "青梧", "Birch", "Aster", "Birch", "Aster"],  # talkativeness rolls (seed-1)
              "manual": ["Aster", "青梧", "Birch", "Aster", "青梧", "Aster"]}  # one at random, not the last one
    assert got == pinned.get(strategy, got)
    # the prompt of each auto turn carries its speaker's card (the inspector's data: the system of each beat)
    for e in [e for e in chat.tree.path_to() if e.type == "assistant"]:
        system = chat.inspect_beat(e.id)[0]["request"]["messages"][0]["content"]
        assert MEMBERS[e.speaker]["description"] in system, e.speaker
        assert not any(MEMBERS[o]["description"] in system for o in MEMBERS.keys() - {e.speaker})
    again = chat_of(tmp_path, strategy + "-again", 8, strategy=strategy)
    await AutoRun(6).run(lambda: again.group_reply())
    assert speakers(again) == got  # seeded: the same chat seed plays the same speakers


async def test_stop_ends_the_run_before_its_next_turn(tmp_path):
    chat = chat_of(tmp_path, "s", 8, strategy="list")
    run = AutoRun(6, delay=0)

    async def turn():
        res = await chat.group_reply()
        if run.played == 1:
            run.stop()  # the Stop button (or the user typing) during the second turn
        return res

    results = await run.run(turn)
    assert len(results) == 2 and run.stopped and run.ended == message("group.auto.stopped", n=1)
    assert len(speakers(chat)) == 2


async def test_a_delay_waits_between_turns_and_stop_cuts_the_wait(tmp_path):
    chat = chat_of(tmp_path, "d", 4, strategy="list")
    run = AutoRun(3, delay=30)
    waited: list[float] = []

    async def sleep(s: float) -> None:
        waited.append(s)
        if len(waited) == 5:
            run.stop()
        await asyncio.sleep(0)

    results = await run.run(lambda: chat.group_reply(), sleep=sleep)
    assert len(results) == 1 and len(waited) == 5  # the first turn at once, then stopped while waiting


async def test_auto_mode_with_every_member_muted_ends_with_nobody(tmp_path):
    chat = chat_of(tmp_path, "n", 2, strategy="natural", muted=list(MEMBERS))
    run = AutoRun(6)
    assert await run.run(lambda: chat.group_reply()) == []
    assert run.ended == message("group.auto.none")


def test_cli_group_chat_say_then_auto_turns(tmp_path, capsys):
    import json

    new_group(tmp_path, strategy="list")
    beats = [{"user": "Hi all.", "actor": [w(f"reply {i}"), SEAL], "scribe": ["{}"]} for i in range(5)]
    f = tmp_path / "replay.json"
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    assert cli_main(["chat", "--group", "Party", "--chat", "cli", "--model", f"replay:{f}", "--say", "Hi all.",
                     "--auto", "2", "--json"]) == 0
    beats = json.loads(capsys.readouterr().out)["beats"]
    assert len(beats) == 5  # three replies to the message (list order), then two auto turns
    chat = Chat.open(group_dir("Party") / "对话" / "cli", member_card("Aster"), replay(0))
    assert speakers(chat) == ["Aster", "Birch", "青梧", "Aster", "Birch"]
    assert [it["text"] for it in chat.transcript() if it["role"] == "user"] == ["Hi all."]


async def test_follow_up_replies_regenerate_as_their_member_and_export_as_consecutive_replies(tmp_path):
    from liyuan_desktop.core.cards.st_chat_export import st_messages

    chat = chat_of(tmp_path, "x", 6)
    await say_all(chat, "Birch and Aster, come here.")
    assert speakers(chat)[:2] == ["Birch", "Aster"]
    n = len(speakers(chat))
    res = await chat.regenerate()  # the last reply again: the same member writes it
    assert res.outcome == "sealed" and speakers(chat)[n - 1] == speakers(chat)[-1]
    _header, msgs = st_messages(chat.tree)
    assert [m["is_user"] for m in msgs[:3]] == [False, True, False] and msgs[1]["mes"] == "Birch and Aster, come here."
    assert [m["name"] for m in msgs[2:4]] == ["Birch", "Aster"]  # the nudges are not SillyTavern messages
    assert not any("轮到" in m["mes"] for m in msgs)
    assert len(msgs[-1].get("swipes", [])) == 2  # the regenerated reply keeps its first version as a swipe


def test_cli_auto_turns_without_say_and_a_bare_auto_before_the_card(tmp_path, capsys):
    import json

    new_group(tmp_path, strategy="pooled")
    beats = [{"user": "-", "actor": [w(f"reply {i}"), SEAL], "scribe": ["{}"]} for i in range(3)]
    f = tmp_path / "replay.json"
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    assert cli_main(["--lang", "en", "chat", "--group", "Party", "--chat", "a", "--model", f"replay:{f}",
                     "--auto", "3"]) == 0
    assert "Auto-mode ended: 3 turns played (limit 3)" in capsys.readouterr().err
    chat = Chat.open(group_dir("Party") / "chats" / "a", member_card("Aster"), replay(0))  # English data folder
    assert sorted(speakers(chat)) == sorted(MEMBERS)  # pooled: each once
    assert not [it for it in chat.transcript() if it["role"] == "user"]  # no user words shown
    import argparse

    from liyuan_desktop.cli.chat import _auto_turns_wanted, add_parser
    sub = argparse.ArgumentParser().add_subparsers()
    parser = add_parser(sub)
    args = parser.parse_args(["--auto", "Aster"])  # a bare --auto before the card: the card stays the card
    assert _auto_turns_wanted(args) == 0 and args.card == "Aster" and args.auto is True
    args = parser.parse_args(["Aster", "--auto"])
    assert _auto_turns_wanted(args) == 0 and args.auto is True
