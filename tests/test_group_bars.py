"""Issue 31: in a group chat each reply's status bar and display scripts come from the card of the member who spoke
it (core/chat/group_display.py), and MVU variables stay per card unless the group shares them."""

from __future__ import annotations

import json

import pytest
from group_bars_cards import BARS, make_group, replay

from liyuan_desktop.core.cards.library import card_folder
from liyuan_desktop.core.cards.meta import set_card_scripts_allowed
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.group.model import group_dir, load_group, member_card


def shown(chat: Chat) -> list[tuple[str, str]]:
    """(speaker or role, display text) of each reply and the opening, as the conversation view gets them."""
    items = chat.transcript()
    n = len(items)
    return [(it.get("speaker") or it["role"], chat.display_text(it, n - 1 - i)) for i, it in enumerate(items)
            if it["role"] in ("assistant", "opening")]


async def test_each_reply_is_shown_with_its_speakers_bar_and_scripts(tmp_path):
    g = make_group(tmp_path)
    chat = Chat.create_group(group_dir(g.name) / "对话" / "b", g, replay(6), group_seed="s")
    for _ in range(4):
        await chat.send("Next.")
    got = shown(chat)
    assert [who for who, _ in got] == ["opening", "Aster", "Birch", "Cedar", "Aster"]
    for who, text in got[1:]:
        assert f'id="bar-{who}"' in text and f"{who}'s bar · {who}" in text  # its own bar, {{char}} = the speaker
        assert f"[{who} says] reply" in text
        for other in BARS.keys() - {who}:
            assert f"bar-{other}" not in text and f"[{other} says]" not in text
    assert 'id="bar-Aster"' in got[0][1]  # the opening is the opening card's (Aster's greeting)
    await chat.send("Next.")  # Birch's beat: the others' replies are still known at once (no flash of raw text)
    items = chat.transcript()
    older = items[:-3]  # (the previous newest reply is at another depth now: run again, as in a one-card chat)
    assert all(chat.display_text_if_known(it, len(items) - 1 - i) is not None for i, it in enumerate(older))
    set_card_scripts_allowed(card_folder("Cedar"), False)  # a member's switch changed: its replies follow it
    await chat.send("Next.")
    cedar = [text for who, text in shown(chat) if who == "Cedar"]
    assert cedar and all("bar-" not in t and "[Cedar says]" not in t for t in cedar)
    again = Chat.open(chat.dir, member_card(g.members[0]), replay(0))  # reopened as the window opens it: the same
    assert shown(again)[:5] == got[:3] + [("Cedar", "reply 3\n\n<StatusPlaceHolderImpl/>"), got[4]]
    known = [again.display_text_if_known(it, 0) for it in again.transcript()]
    assert all(k is None or "bar-" in k or it["role"] == "user" or it.get("speaker") == "Cedar"
               for k, it in zip(known, again.transcript()))


def scribe(**stat) -> str:
    return json.dumps({"patch": {}, "mvu_patch": stat})


def stats(chat: Chat) -> list[tuple[str, dict]]:
    return [(it.get("speaker") or it["role"], it["variables"]["stat_data"]) for it in chat.transcript()
            if it["role"] in ("assistant", "opening")]


async def play_vars(tmp_path, name: str, **kw) -> tuple[Chat, list]:
    g = make_group(tmp_path, name=name, hp_macro=True, **kw)
    model = replay(4, [scribe(hp=9), scribe(herbs=4), scribe(coins=41), scribe()],
                   {4: "reply 4\n<UpdateVariable>\n_.set('arrows', 20, 19);\n</UpdateVariable>"})
    chat = Chat.create_group(group_dir(g.name) / "对话" / "v", g, model, group_seed="s")
    results = [await chat.send("Next.") for _ in range(4)]
    return chat, results


async def test_each_members_variables_stay_with_its_card(tmp_path):
    chat, rs = await play_vars(tmp_path, "PerCard")
    assert stats(chat) == [("opening", {"hp": 10, "arrows": 20}), ("Aster", {"hp": 9, "arrows": 20}),
                           ("Birch", {"hp": 7, "herbs": 4}), ("Cedar", {"hp": 12, "coins": 41}),
                           ("Aster", {"hp": 9, "arrows": 19})]  # Aster's own update changed Aster's tree only
    assert '"herbs": 3' in rs[1].scribe.user and "arrows" not in rs[1].scribe.user  # Birch's beat reads Birch's
    assert '"hp": 9' in rs[3].scribe.user and "coins" not in rs[3].scribe.user  # Aster continues from its own
    assert chat.current_mvu().stat_data == {"hp": 9, "arrows": 19}
    hp = [r.sent[0].content.split("HP now: ")[1].split(".")[0] for r in rs]  # the actor's prompt, each speaker's own
    assert hp == ["10", "7", "12", "9"]
    bars = dict(shown(chat)[1:4])
    assert "HP 9" in bars["Aster"] and "HP 7" in bars["Birch"] and "HP 12" in bars["Cedar"]  # each bar its own


async def test_shared_variables_make_one_tree_for_the_group(tmp_path):
    chat, rs = await play_vars(tmp_path, "Shared", shared_variables=True)
    one = {"hp": 9, "arrows": 19, "herbs": 4, "coins": 41}
    assert stats(chat)[-1] == ("Aster", one)
    assert stats(chat)[2] == ("Birch", {"hp": 9, "arrows": 20, "herbs": 4, "coins": 40})  # Aster's hp, all keys
    assert '"arrows": 20' in rs[1].scribe.user and '"coins": 40' in rs[1].scribe.user
    assert chat.current_mvu().stat_data == one
    hp = [r.sent[0].content.split("HP now: ")[1].split(".")[0] for r in rs]  # the one tree, whoever speaks
    assert hp == ["10", "9", "9", "9"]
    assert "HP 9" in dict(shown(chat)[1:4])["Cedar"]
    assert load_group("Shared").shared_variables is True


def test_cli_group_create_shared_variables(tmp_path, capsys):
    from liyuan_desktop.cli import main as cli_main

    g = make_group(tmp_path, name="Cards")  # the cards in the library (a group with the default: per card)
    assert load_group("Cards").shared_variables is False
    assert cli_main(["group", "create", "One", "--shared-variables", *[x for m in g.members for x in ("--member", m)]]) == 0
    assert cli_main(["group", "create", "Each", *[x for m in g.members for x in ("--member", m)]]) == 0
    assert load_group("One").shared_variables is True and load_group("Each").shared_variables is False
    capsys.readouterr()
    assert cli_main(["group", "show", "One", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_variables"] is True
    assert cli_main(["--lang", "en", "group", "show", "One"]) == 0
    assert "Variables: one set shared by the group" in capsys.readouterr().out
    assert cli_main(["group", "show", "Each"]) == 0
    assert "变量：每张卡各有各的" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli_main(["--lang", "en", "group", "create", "--help"])
    assert "one MVU variable tree for all members" in capsys.readouterr().out


async def test_join_mode_system_prompt_is_the_same_whoever_speaks(tmp_path):
    """The byte-stable prefix holds across speakers in the join modes (bench/group_cache.py measures it): the card
    section is headed with every joined member, and the speaker is named at the end of the prompt."""
    g = make_group(tmp_path, name="Joined", join_cards="join")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "j", g, replay(3), group_seed="s")
    rs = [await chat.send("Next.") for _ in range(3)]
    systems = {r.sent[0].content for r in rs}
    # (the members' cards are English: the chat's prompt is English, issue 32)
    assert len(systems) == 1 and "# Character card: Aster, Birch, Cedar" in systems.pop()
    for r, who in zip(rs, ["Aster", "Birch", "Cedar"]):
        assert r.injection.endswith(f"【发言】这一条回复只写「{who}」的言行。")
        assert r.sent[-1].content.startswith(r.injection)
    h1, h2 = [m.content for m in rs[1].sent[:-1]], [m.content for m in rs[2].sent[:-1]]
    assert h2[:len(h1)] == h1  # Cedar's request starts with all of Birch's but its last message


async def test_a_revised_group_reply_keeps_its_speakers_name_in_the_history(tmp_path):
    g = make_group(tmp_path, name="Rev")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "r", g, replay(1), group_seed="s")
    await chat.send("Next.")
    reply = [e for e in chat.tree.path_to() if e.type == "assistant"][-1]
    assert any(m.content == "Aster：reply 1" for m in chat.history().messages)
    chat.tree.append("revision", target=reply.id, text="reply 1, revised", version=2)
    assert any(m.content == "Aster：reply 1, revised" for m in chat.history().messages)


async def test_an_opened_group_chat_reads_the_last_speakers_variables(tmp_path):
    g = make_group(tmp_path, name="Open")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "o", g, replay(2, [scribe(hp=9)]),
                             group_seed="s")
    await chat.send("One.")
    await chat.send("Two.")  # Birch's beat: no scribe answer left, no snapshot holds Birch's tree
    assert chat.current_mvu().stat_data == {"hp": 7, "herbs": 3}
    again = Chat.open(chat.dir, member_card(g.members[0]), replay(0))
    assert again.current_mvu().stat_data == {"hp": 7, "herbs": 3}  # Birch spoke last: Birch's card's own tree
