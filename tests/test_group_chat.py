"""Group chats (issue 31): a 3-member group on the replay model with each speaker strategy (seeded), the prompt
per speaker, witness scoping, SillyTavern group import/export, the CLI."""

from __future__ import annotations

import json

import pytest

from liyuan_desktop.core.cards.library import import_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.group_play import member_rows
from liyuan_desktop.core.group import Group, list_groups, load_group, save_group
from liyuan_desktop.core.group.model import group_dir
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.messages import message

SEAL = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
MEMBERS = {
    "Aster": {"description": "Aster is a tall archer from the north.", "talk": "0.9", "first": "Aster nods."},
    "Birch": {"description": "Birch is a quiet herbalist.", "talk": "0.5", "first": "Birch smiles."},
    "青梧": {"description": "青梧是茶馆的掌柜。", "talk": "0.1", "first": "青梧抬头。"},
}


BIRCH_BOOK = {"name": "Birch's herbs", "entries": [
    {"id": 0, "keys": ["moonleaf"], "content": "Moonleaf heals burns.", "comment": "Moonleaf", "enabled": True,
     "insertion_order": 100}]}


def w(text: str) -> dict:
    return {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": text}}]}


def make_members(tmp_path) -> list[str]:
    names = []
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, f in MEMBERS.items():
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": f["description"], "first_mes": f["first"],
                        "personality": f"{name} personality", "extensions": {"talkativeness": f["talk"]},
                        **({"character_book": BIRCH_BOOK} if name == "Birch" else {})}}
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
        names.append(import_card(p, replace=True).name)
    return names


def replay(n: int, scribe: list[str] | None = None) -> ReplayModel:
    actor = []
    for i in range(n):
        actor += [w(f"reply {i + 1}"), SEAL]
    return ReplayModel(actor=actor, scribe=scribe or ["{}"] * n)


def new_group(tmp_path, **kw) -> Group:
    g = Group(name="Party", members=make_members(tmp_path), **kw)
    save_group(g)
    return g


def speakers(chat: Chat) -> list[str]:
    return [e.speaker for e in chat.tree.path_to() if e.type == "assistant"]


USERS = ["Hello Birch.", "青梧, tea please.", "Aster and Birch, come here.", "We wait.", "Night falls.", "Morning."]


async def play(tmp_path, users=USERS, chat_name="one", **kw) -> Chat:
    g = new_group(tmp_path, **kw)
    chat = Chat.create_group(group_dir(g.name) / "对话" / chat_name, g, replay(len(users)), group_seed="seed-1")
    for u in users:
        await chat.send(u)
    return chat


async def test_natural_order_names_first_then_talkativeness_seeded(tmp_path):
    chat = await play(tmp_path)
    got = speakers(chat)
    assert got[:3] == ["Birch", "青梧", "Aster"]  # named in the user's words (the first named first)
    again = await play(tmp_path, chat_name="again")  # the same seed gives the same speakers
    assert speakers(again) == got
    assert got[3:] == ["Birch", "Aster", "Aster"]  # then talkativeness rolls in a shuffled order (pinned seed)
    seen = []
    g = load_group("Party")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "why", g, replay(1), group_seed="seed-1")
    await chat.send("Hello Birch.", on_event=seen.append)
    texts = [getattr(e, "text", "") for e in seen]
    assert message("group.why.named", name="Birch") in texts  # the choice and why, in the activity list


async def test_list_order_pooled_and_manual(tmp_path):
    chat = await play(tmp_path, chat_name="l", strategy="list")
    assert speakers(chat) == ["Aster", "Birch", "青梧"] * 2
    chat = await play(tmp_path, chat_name="p", strategy="pooled")
    got = speakers(chat)
    assert sorted(got[:3]) == sorted(got[3:]) == sorted(["Aster", "Birch", "青梧"])  # who spoke least goes next
    assert all(a != b for a, b in zip(got, got[1:]))
    g = new_group(tmp_path, strategy="manual")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "m", g, replay(6), group_seed="s")
    with pytest.raises(ValueError):
        await chat.send("Anyone?")  # manual: nobody unless chosen, nothing written
    assert not [e for e in chat.tree.path_to() if e.type == "user"]
    for who in ["青梧", "Aster", "Aster", "Birch", "青梧", "Birch"]:
        await chat.send("Go.", speaker=who)
    assert speakers(chat) == ["青梧", "Aster", "Aster", "Birch", "青梧", "Birch"]


async def test_muted_members_are_skipped_but_can_be_made_to_speak(tmp_path):
    chat = await play(tmp_path, users=["a", "b", "c", "d"], strategy="list", muted=["Birch"])
    assert speakers(chat) == ["Aster", "青梧", "Aster", "青梧"]
    g = load_group("Party")
    chat2 = Chat.create_group(group_dir(g.name) / "对话" / "two", g, replay(1), group_seed="x")
    await chat2.send("Birch?", speaker="Birch")
    assert speakers(chat2) == ["Birch"]


async def test_each_speaker_prompt_carries_its_card_fields(tmp_path):
    g = new_group(tmp_path, strategy="list")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "p", g, replay(3), group_seed="s")
    for _ in range(3):
        r = await chat.send("Next.")
        system = r.sent[0].content
        who = speakers(chat)[-1]
        assert MEMBERS[who]["description"] in system
        for other in MEMBERS.keys() - {who}:  # swap mode: only the speaker's card
            assert MEMBERS[other]["description"] not in system
    g2 = Group(name="Joined", members=g.members, strategy="list", join_cards="join", muted=["青梧"])
    save_group(g2)
    chat = Chat.create_group(group_dir(g2.name) / "对话" / "j", g2, replay(1), group_seed="s")
    r = await chat.send("Hi.")
    system = r.sent[0].content
    assert MEMBERS["Aster"]["description"] in system and MEMBERS["Birch"]["description"] in system
    assert MEMBERS["青梧"]["description"] not in system  # muted: not joined (join_muted would)
    assert "【Birch】" in system


async def test_opening_has_the_members_greetings_as_swipes(tmp_path):
    g = new_group(tmp_path)
    chat = Chat.create_group(group_dir(g.name) / "对话" / "o", g, replay(0))
    openings = [e.text for e in chat.tree.entries.values() if e.type == "opening"]
    assert openings == ["【开场 · Aster】\nAster nods.", "【开场 · Birch】\nBirch smiles.", "【开场 · 青梧】\n青梧抬头。"]
    assert chat.transcript()[0]["text"] == openings[0]  # the first member's greeting is shown, the others a swipe away


def scribe_flag(key: str, value: str) -> str:
    return json.dumps({"flags": {key: value}})


async def test_witness_scoping_a_fact_seen_by_a_and_b_is_not_in_cs_state_block(tmp_path):
    scribe = ["{}", scribe_flag("密信", "藏在井里"), "{}", scribe_flag("密信", "移到了屋顶"), "{}"]
    g = new_group(tmp_path, strategy="manual")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "w", g, replay(5, scribe), group_seed="s")
    await chat.send("Aster?", speaker="Aster")
    await chat.send("Birch, hide the letter.", speaker="Birch")  # the scribe records it: witnesses Aster, Birch
    r = await chat.send("Aster, where is it?", speaker="Aster")
    assert "藏在井里" in r.injection  # Aster witnessed it
    r = await chat.send("青梧?", speaker="青梧")
    assert "密信" not in r.injection  # 青梧 was not present: left out of her state block
    assert chat.ledger.state().flags["密信"] == "移到了屋顶"  # the ledger itself keeps everything
    r = await chat.send("青梧, again?", speaker="青梧")
    assert "移到了屋顶" in r.injection  # changed while 青梧 was present: now she knows
    assert "【登场名录】人物：Aster、Birch、青梧" in r.injection  # presence follows who spoke (and who speaks now)
    rows = {row.member: row for row in member_rows(chat)}
    assert rows["青梧"].present and rows["Aster"].replies == 2


def test_groups_are_stored_in_the_library(tmp_path):
    g = new_group(tmp_path, strategy="pooled", allow_self_responses=True)
    assert (group_dir("Party") / "group.json").is_file()
    assert [x.name for x in list_groups()] == ["Party"]
    assert load_group("Party") == g


async def test_other_members_replies_are_sent_with_their_names(tmp_path):
    g = new_group(tmp_path, strategy="list")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "n", g, replay(2), group_seed="s")
    await chat.send("One.")
    r = await chat.send("Two.")
    assert any(m.role == "assistant" and m.content == "Aster：reply 1" for m in r.sent)


ST_GROUP = {"id": "1700000000000", "name": "Tea House", "members": ["Aster.png", "Birch.png", "青梧.png"],
            "avatar_url": "", "allow_self_responses": True, "activation_strategy": 3, "generation_mode": 1,
            "disabled_members": ["Birch.png"], "chat_metadata": {"note_prompt": ""}, "fav": True,
            "chat_id": "Tea House - 2024-01-01", "chats": ["Tea House - 2024-01-01"], "auto_mode_delay": 7,
            "generation_mode_join_prefix": "<{{char}}>", "generation_mode_join_suffix": "</{{char}}>",
            "hideMutedSprites": False, "past_metadata": {}}
ST_CHAT = [
    {"user_name": "unused", "character_name": "unused", "create_date": "2024-01-01@10h00m00s",
     "chat_metadata": {"scenario": ""}},
    {"name": "Aster", "is_user": False, "is_system": False, "send_date": "January 1, 2024 10:00am", "mes": "Aster nods.",
     "original_avatar": "Aster.png", "extra": {}, "swipe_id": 0, "swipes": ["Aster nods.", "Aster waves."],
     "swipe_info": [{"send_date": "January 1, 2024 10:00am", "extra": {}}, {"send_date": "January 1, 2024 10:01am", "extra": {}}]},
    {"name": "You", "is_user": True, "is_system": False, "send_date": "January 1, 2024 10:02am", "mes": "Hi Birch.",
     "extra": {"isSmallSys": False}, "force_avatar": "User Avatars/you.png"},
    {"name": "Birch", "is_user": False, "is_system": False, "send_date": "January 1, 2024 10:03am", "mes": "Hello.",
     "original_avatar": "Birch.png", "extra": {"api": "openai", "model": "x"}, "gen_started": "2024-01-01T10:03:00.000Z",
     "gen_finished": "2024-01-01T10:03:05.000Z", "swipe_id": 1, "swipes": ["Hi.", "Hello."],
     "swipe_info": [{"send_date": "January 1, 2024 10:03am", "extra": {}}, {"send_date": "January 1, 2024 10:03am", "extra": {"api": "openai", "model": "x"}}]},
]


def st_folder(root):
    (root / "groups").mkdir(parents=True)
    (root / "group chats").mkdir()
    (root / "groups" / "1700000000000.json").write_text(json.dumps(ST_GROUP, ensure_ascii=False), "utf-8")
    (root / "group chats" / "Tea House - 2024-01-01.jsonl").write_text(
        "\n".join(json.dumps(m, ensure_ascii=False) for m in ST_CHAT), "utf-8")


def by_stem(avatar: str):
    from liyuan_desktop.core.cards.library import card_folder
    stem = avatar.rsplit(".", 1)[0]
    return stem if (card_folder(stem) / "card.json").is_file() else None


async def test_sillytavern_group_and_group_chat_round_trip(tmp_path):
    from liyuan_desktop.core.chat.group_play import member_cards
    from liyuan_desktop.core.group.st import export_st_group, import_st_group

    make_members(tmp_path / "cards")
    src = tmp_path / "st"
    st_folder(src)
    group, notes = import_st_group(src / "groups" / "1700000000000.json", by_stem)
    assert notes == []
    assert group.members == ["Aster", "Birch", "青梧"] and group.muted == ["Birch"]
    assert group.strategy == "pooled" and group.join_cards == "join" and group.allow_self_responses
    out = tmp_path / "out"
    export_st_group(group, member_cards(group), out)
    assert json.loads((out / "groups" / "1700000000000.json").read_text("utf-8")) == ST_GROUP
    lines = (out / "group chats" / "Tea House - 2024-01-01.jsonl").read_text("utf-8").split("\n")
    assert [json.loads(x) for x in lines] == ST_CHAT  # nothing SillyTavern keeps is lost

    # played on in Liyuan: the new reply names its speaker, and re-imports into a fresh SillyTavern-shaped folder
    from liyuan_desktop.core.chat.group_play import chat_group
    from liyuan_desktop.core.group.model import group_chats
    d = group_chats(group)[0]
    card = member_cards(group)["Aster"]
    chat = Chat.open(d, card, replay(1))
    assert chat_group(chat).name == "Tea House"
    await chat.send("青梧, your turn.", speaker="青梧")
    export_st_group(group, member_cards(group), tmp_path / "out2")
    msgs = [json.loads(x) for x in (tmp_path / "out2" / "group chats" / "Tea House - 2024-01-01.jsonl").read_text("utf-8").split("\n")]
    assert msgs[-1]["name"] == "青梧" and msgs[-1]["original_avatar"] == "青梧.png" and msgs[-1]["mes"] == "reply 1"
    assert msgs[:4] == ST_CHAT and msgs[4]["is_user"] and len(msgs) == 6


def test_import_sillytavern_brings_groups_and_their_chats(tmp_path):
    from liyuan_desktop.core.migrate import run, scan

    src = tmp_path / "st"
    st_folder(src)
    (src / "characters").mkdir()
    for name, f in MEMBERS.items():
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": f["description"], "first_mes": f["first"]}}
        (src / "characters" / f"{name}.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    plan = scan(src)
    assert plan.counts()["group"] == {"new": 1}
    assert not [n for n in plan.not_imported if n.what.startswith("群聊")]  # its chats come with the group
    report = run(plan)
    assert report.imported["group"] == 1
    g = load_group("Tea House")
    assert g.members == ["Aster", "Birch", "青梧"] and g.strategy == "pooled"
    chats = list((group_dir("Tea House") / "对话").iterdir())
    assert [c.name for c in chats] == ["Tea House - 2024-01-01"]
    again = scan(src)  # a second run finds the same group: skipped, never a 「Tea House-2」
    assert again.counts()["group"] == {"same": 1}


def test_cli_group_create_list_show_delete_in_both_languages(tmp_path, capsys):
    from liyuan_desktop.cli import main as cli_main

    make_members(tmp_path)
    assert cli_main(["group", "create", "Party", "--member", "Aster", "--member", "Birch", "--member", "青梧",
                     "--strategy", "list", "--mute", "Birch"]) == 0
    assert "已保存群组「Party」（3 位成员）" in capsys.readouterr().out
    assert cli_main(["--lang", "en", "group", "create", "Party", "--member", "Aster"]) == 2
    assert "A group named “Party” exists already" in capsys.readouterr().err
    assert cli_main(["group", "create", "X", "--member", "Nobody"]) == 2
    assert "Nobody" in capsys.readouterr().err
    assert cli_main(["group", "list"]) == 0
    assert "Party  (Aster, Birch, 青梧)  列表顺序" in capsys.readouterr().out
    assert cli_main(["--lang", "en", "group", "list"]) == 0
    assert "list order" in capsys.readouterr().out
    assert cli_main(["--lang", "en", "group", "show", "Party"]) == 0
    shown = capsys.readouterr().out
    assert "Group “Party”: list order" in shown and "Birch  0.50 (muted)" in shown and "0 chats" in shown
    assert cli_main(["group", "show", "Party", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["members"][1] == {"member": "Birch", "muted": True, "talkativeness": 0.5}
    assert cli_main(["group", "delete", "Party"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert cli_main(["--lang", "en", "group", "delete", "Party", "--yes"]) == 0
    assert "Deleted the group “Party”" in capsys.readouterr().out
    assert cli_main(["group", "show", "Party"]) == 2
    assert "没有名为「Party」的群组" in capsys.readouterr().err


def test_cli_chat_with_a_group_and_a_chosen_speaker(tmp_path, capsys):
    from liyuan_desktop.cli import main as cli_main

    make_members(tmp_path)
    save_group(Group(name="Party", members=["Aster", "Birch", "青梧"], strategy="list"))
    beats = [{"user": u, "actor": [w(f"reply {i}"), SEAL], "scribe": ["{}"]}
             for i, u in enumerate(["Hi.", "Hi.", "Hi.", "Birch?"])]  # list order: every member answers "Hi."
    f = tmp_path / "replay.json"
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    assert cli_main(["chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Hi.", "--json"]) == 0
    capsys.readouterr()
    assert cli_main(["chat", "--group", "Party", "--model", f"replay:{f}", "--say", "Birch?", "--speaker", "青梧",
                     "--json"]) == 0
    capsys.readouterr()
    d = group_dir("Party") / "对话" / "群聊"
    chat = Chat.open(d, load_group_card("Aster"), replay(0))
    assert speakers(chat) == ["Aster", "Birch", "青梧", "青梧"]
    assert cli_main(["--lang", "en", "chat", "--group", "Party", "--model", f"replay:{f}", "--say", "x",
                     "--speaker", "Nobody"]) == 2
    assert "“Nobody” is not a member of the group “Party”" in capsys.readouterr().err


def load_group_card(name: str):
    from liyuan_desktop.core.group.model import member_card
    return member_card(name)


async def test_regenerate_keeps_the_speaker_after_reopening(tmp_path):
    g = new_group(tmp_path, strategy="pooled")
    d = group_dir(g.name) / "对话" / "r"
    chat = Chat.create_group(d, g, replay(1), group_seed="s")
    await chat.send("Hi.")
    who = speakers(chat)[0]
    chat = Chat.open(d, load_group_card("Aster"), replay(1))
    await chat.regenerate()
    assert speakers(chat) == [who]
    assert len([e for e in chat.tree.entries.values() if e.type == "assistant"]) == 2


async def test_the_inspector_shows_each_beat_with_its_speakers_card(tmp_path):
    g = new_group(tmp_path, strategy="list")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "i", g, replay(3), group_seed="s")
    for _ in range(3):
        await chat.send("Next.")
    replies = [e for e in chat.tree.path_to() if e.type == "assistant"]
    for e in replies:
        calls = chat.inspect_beat(e.id)
        system = calls[0]["request"]["messages"][0]["content"]
        assert MEMBERS[e.speaker]["description"] in system, e.speaker
        assert not any(MEMBERS[o]["description"] in system for o in MEMBERS.keys() - {e.speaker})


async def test_every_members_world_book_applies_whoever_speaks(tmp_path):
    g = new_group(tmp_path, strategy="manual")
    chat = Chat.create_group(group_dir(g.name) / "对话" / "b", g, replay(2), group_seed="s")
    r = await chat.send("Aster, have you seen moonleaf?", speaker="Aster")
    assert r.activated == ["Moonleaf"]  # Birch's book, Aster speaking
    r = await chat.send("And you, Birch? moonleaf?", speaker="Birch")
    assert r.activated == ["Moonleaf"]


def test_speaker_rules_unit():
    import random

    from liyuan_desktop.core.cards import Card
    from liyuan_desktop.core.group.speakers import mention_position, select_speaker

    cards = {n: Card(name=n, extensions={"talkativeness": t}) for n, t in (("Ann Lee", "0"), ("Bo", "0"), ("青梧", "0"))}
    g = Group(name="g", members=list(cards))
    pick = lambda text, **kw: select_speaker(g, cards, kw.pop("spoken", []), text, random.Random(1), **kw).speaker
    assert pick("bo and lee, come") == "Bo"  # the first named speaks first; a Latin name by any of its words
    assert pick("青梧和Bo") == "青梧"  # a CJK name as a substring
    assert mention_position("Bo", "Bob") is None  # whole words only
    # not the user's words (a member answering a member): the last speaker is left out unless self responses are on
    assert pick("Bo?", spoken=["Bo"], user_input=False) != "Bo"
    g.allow_self_responses = True
    assert pick("Bo?", spoken=["Bo"], user_input=False) == "Bo"
    g.muted = ["Bo"]
    assert pick("Bo?") != "Bo"  # muted: never picked by a strategy
    assert pick("x", chosen="Bo") == "Bo"  # but can be made to speak
    g.muted = list(cards)
    assert pick("anyone?") is None  # all muted: nobody (the caller says so)
    g.muted, g.strategy = [], "list"
    assert pick("x", spoken=["青梧"]) == "Ann Lee"  # list order wraps around


def test_join_muted_joins_every_members_card_with_the_groups_prefix():
    from liyuan_desktop.core.cards import Card
    from liyuan_desktop.core.group.prompt import speaker_card

    cards = {"A": Card(name="A", description="{{char}} is first."), "B": Card(name="B", description="{{char}} is second.")}
    g = Group(name="g", members=["A", "B"], muted=["B"], join_cards="join_muted", join_prefix="<{{char}}>",
              join_suffix="</{{char}}>")
    card = speaker_card(g, cards, "A")
    assert card.description == "<A>{{char}} is first.</A>\n\n<B>B is second.</B>"  # the speaker's own macros stay
    assert speaker_card(g.model_copy(update={"join_cards": "join"}), cards, "A").description == "<A>{{char}} is first.</A>"


async def test_edit_and_continue_keep_the_replys_speaker(tmp_path):
    g = new_group(tmp_path, strategy="list")
    d = group_dir(g.name) / "对话" / "e"
    chat = Chat.create_group(d, g, replay(2), group_seed="s")
    await chat.send("One.")
    await chat.send("Two.")  # Birch
    new_id = chat.edit_reply(speakers_ids(chat)[-1], "Birch, edited.")
    assert chat.transcript()[-1]["speaker"] == "Birch" and chat.transcript()[-1]["id"] == new_id
    chat = Chat.open(d, load_group_card("Aster"), ReplayModel(actor=[w(" And more."), SEAL], scribe=["{}"]))
    r = await chat.continue_reply()
    assert r.sealed and speakers(chat)[-1] == "Birch"  # the continuation is Birch's, with Birch's card
    assert MEMBERS["Birch"]["description"] in r.sent[0].content


def speakers_ids(chat):
    return [e.id for e in chat.tree.path_to() if e.type == "assistant"]
