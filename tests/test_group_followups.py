"""Group chats' follow-up replies (issue 31): the hidden turn that carries a member's follow-up (``group_nudge``) is
never the user's words. A quit mid-chain leaves nothing half-done (SillyTavern simply stops; the next message
starts afresh); a crash during a follow-up is offered back as that member's reply (or dropped), never as the user's
unanswered words; search, transcripts, exports, the memory index and summaries, the branch navigator and the beat
numbers skip the nudges; the nudge follows the chat's language."""

from __future__ import annotations

import json

from test_group_chat import SEAL, make_members, replay, speakers, w

from liyuan_desktop.core.beat.draft import DRAFT_LOG_NAME, Draft, DraftLog
from liyuan_desktop.core.cards.library import import_card
from liyuan_desktop.core.cards.st_chat_export import st_messages
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.chat.group_play import NUDGE, nudge_text, prepare_follow_up, waiting
from liyuan_desktop.core.chat.search import Matcher, search_file
from liyuan_desktop.core.chat.summary import chat_summary
from liyuan_desktop.core.chat.transcript_export import transcript_markdown
from liyuan_desktop.core.group import Group, save_group
from liyuan_desktop.core.group.model import group_dir, member_card
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.memory.search import format_turns
from liyuan_desktop.core.session.branches import first_words
from liyuan_desktop.core.session.transcript import hidden_turn

NUDGE_ZH = "（轮到"  # the start of every Chinese nudge (group_play.NUDGE)
CALL = "Birch and Aster, come here."  # names two members: Birch answers, Aster is left waiting


def group_chat(tmp_path, name: str, n: int) -> Chat:
    g = Group(name="Party", members=make_members(tmp_path))
    save_group(g)
    return Chat.create_group(group_dir(g.name) / "对话" / name, g, replay(n), group_seed="seed-1")


def reopen(chat: Chat, model: ReplayModel) -> Chat:
    d = chat.dir
    chat.close()
    return Chat.open(d, member_card("Aster"), model)


def nudges(chat: Chat) -> list:
    return [e for e in chat.tree.entries.values() if hidden_turn(e)]


async def test_quit_mid_chain_then_reopen_starts_afresh(tmp_path):
    chat = group_chat(tmp_path, "quit", 4)
    await chat.send(CALL)
    assert waiting(chat) == ["Aster"]  # Birch replied; Aster is still to reply when the window closes
    chat = reopen(chat, replay(2))
    # SillyTavern simply stops: nobody waits any more, nothing half-done is offered back
    assert waiting(chat) == [] and chat.unanswered() is None and chat.cut_turn() is None
    assert chat.pending_draft() is None and nudges(chat) == []
    await chat.send("Morning, everyone.")  # the next message starts afresh
    assert [it["role"] for it in chat.transcript()][-4:] == ["user", "assistant", "user", "assistant"]
    assert all("branch" not in it for it in chat.transcript())


async def test_crash_during_a_follow_up_offers_that_members_reply(tmp_path):
    chat = group_chat(tmp_path, "crash", 3)
    await chat.send(CALL)
    prepare_follow_up(chat)  # Aster's turn is on disk; killed before the model answered
    chat = reopen(chat, replay(1))
    assert chat.unanswered() is None  # never shown as the user's words
    assert chat.cut_turn() == "Aster"
    assert all(NUDGE_ZH not in str(it["text"]) for it in chat.transcript())
    res = await chat.regenerate()  # 「让TA接着说」: the member whose turn it was replies
    assert res.outcome == "sealed" and speakers(chat) == ["Birch", "Aster"]
    assert chat.cut_turn() is None and chat.unanswered() is None


async def test_crash_during_a_follow_up_can_be_dropped(tmp_path):
    chat = group_chat(tmp_path, "drop", 3)
    await chat.send(CALL)
    prepare_follow_up(chat)
    chat = reopen(chat, replay(1))
    assert chat.cut_turn() == "Aster"
    chat.drop_unanswered()
    assert chat.cut_turn() is None and chat.tree.path_to()[-1].type != "user"
    await chat.send("Never mind.")  # beside the dropped turn, which is no alternative of these words
    users = [it for it in chat.transcript() if it["role"] == "user"]
    assert [u["text"] for u in users] == [CALL, "Never mind."] and all("branch" not in u for u in users)


async def test_crash_mid_draft_of_a_follow_up_continues_as_that_member(tmp_path):
    chat = group_chat(tmp_path, "draft", 3)
    await chat.send(CALL)
    prepare_follow_up(chat)
    nudge = chat.tree.latest("user")
    DraftLog(chat.dir / DRAFT_LOG_NAME, nudge.id).record(Draft("Aster draws", 1))  # what it had written when killed
    chat = reopen(chat, ReplayModel(actor=[SEAL], scribe=["{}"]))
    assert chat.pending_draft() is not None and chat.unanswered() is None and chat.cut_turn() is None
    res = await chat.continue_beat()
    assert res.outcome == "sealed" and speakers(chat) == ["Birch", "Aster"]  # written on by the member it was for


async def _chain(tmp_path) -> Chat:
    chat = group_chat(tmp_path, "chain", 6)
    await chat.send(CALL)
    while waiting(chat):
        await chat.group_reply()
    await chat.send("Thank you both.")
    while waiting(chat):
        await chat.group_reply()
    assert nudges(chat)  # follow-up turns were played
    return chat


async def test_nudges_are_no_message_anywhere(tmp_path):
    chat = await _chain(tmp_path)
    name = NUDGE_ZH
    items = chat.transcript()
    assert all(name not in str(it["text"]) for it in items)
    assert chat.search_messages(name) == [] and chat.search_messages(name, all_branches=True) == []
    assert list(search_file(chat.dir / "session.jsonl", Matcher(name))) == []  # what `liyuan search` streams
    assert chat.search_messages("Thank you")[0].beat == 2
    assert all(name not in str(m.get("mes", "")) for m in st_messages(chat.tree)[1])  # SillyTavern export
    summary = chat_summary(chat.dir)  # the chat list's line
    assert summary is not None and summary.messages == len(chat.transcript())
    md = transcript_markdown(chat)
    assert name not in md and "### Birch" in md and "### Aster" in md  # each reply under its member's name
    users = [d for d in chat.memory.index().docs if d.kind == "user"]  # memory_search's index
    assert [d.text for d in users] == [CALL, "Thank you both."] and [d.beat for d in users] == [1, 2]
    nav = chat.branch_tree()
    assert [n["text"] for n in nav] == [first_words(CALL), "Thank you both."] and [n["beat"] for n in nav] == [1, 2]
    # summaries: the compactor's turns give a follow-up no user words
    beat_of, nudged = chat.compactor._beat_numbers()
    assert nudged and all(beat_of[r] in (1, 2) for r in nudged)
    assert name not in format_turns([], "你", "Aster")


async def test_undo_after_a_follow_up_gives_back_no_nudge(tmp_path):
    chat = await _chain(tmp_path)
    assert chat.last_user_text() == ""  # the last turn was a member's follow-up: no words of the user's
    chat.undo()
    assert chat.last_user_text() in ("", "Thank you both.")


async def test_beat_numbers_count_only_the_users_messages(tmp_path):
    chat = await _chain(tmp_path)
    items = [it for it in chat.transcript() if it["role"] in ("user", "assistant")]
    assert [(it["role"], it["beat"]) for it in items] == [
        ("user", 1), ("assistant", 1), ("assistant", 1), ("user", 2), *[("assistant", 2)] * (len(items) - 4)]
    first, total, page = chat._transcript.page(None, 2)  # a page read from the middle numbers the same
    assert page == chat.transcript()[first:total]


def english_members(tmp_path) -> list[str]:
    names = []
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("Ann", "Bob"):
        raw = {"spec": "chara_card_v2", "spec_version": "2.0",
               "data": {"name": name, "description": f"{name} is a sailor.", "first_mes": f"{name} waves.",
                        "extensions": {"talkativeness": "0.5", "liyuan": {"language": "en"}}}}
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(raw), "utf-8")
        names.append(import_card(p, replace=True).name)
    return names


async def test_the_nudge_follows_the_chats_language(tmp_path):
    g = Group(name="Crew", members=english_members(tmp_path))
    save_group(g)
    chat = Chat.create_group(group_dir(g.name) / "对话" / "en", g, replay(3), group_seed="s")
    await chat.send("Ann and Bob, ahoy.")
    assert waiting(chat) == ["Bob"]
    res = await chat.group_reply()
    assert res.sent[-1].content.endswith(NUDGE["en"].format(name="Bob"))
    assert all(NUDGE_ZH not in m.content for m in res.sent)  # (the other prompt texts: core/prompt's own work)


async def test_the_chinese_chat_keeps_the_chinese_nudge(tmp_path):
    chat = group_chat(tmp_path, "zh", 3)
    await chat.send(CALL)
    res = await chat.group_reply()
    assert res.sent[-1].content.endswith(NUDGE["zh"].format(name="Aster"))


def test_nudge_pair_is_complete():
    assert set(NUDGE) == {"zh", "en"} and all("{name}" in t for t in NUDGE.values())
    assert nudge_text("Ann", "ja") == nudge_text("Ann", "en") == "[Write the next reply only as Ann.]"
    assert nudge_text("青梧", "zh") == "（轮到青梧发言）"
    assert w("x")  # the shared helpers import


def test_cli_names_the_cut_member_and_regenerate_resumes_them(tmp_path, capsys):
    import asyncio

    from liyuan_desktop.cli import main as cli_main

    async def cut() -> None:
        chat = group_chat(tmp_path, "cut", 1)
        await chat.send(CALL)
        prepare_follow_up(chat)  # Aster's turn on disk when the process died
        chat.close()

    asyncio.run(cut())
    beats = [{"user": "-", "actor": [w("Aster sits."), SEAL], "scribe": ["{}"]}]
    f = tmp_path / "replay.json"
    f.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": beats}), "utf-8")
    assert cli_main(["--lang", "en", "chat", "--group", "Party", "--chat", "cut", "--model", f"replay:{f}",
                     "--regenerate", "--json"]) == 0
    err = capsys.readouterr().err
    assert "Aster's group-chat reply was cut off" in err and NUDGE_ZH not in err and "got no reply" not in err
    chat = Chat.open(group_dir("Party") / "对话" / "cut", member_card("Aster"), replay(0))
    assert speakers(chat) == ["Birch", "Aster"] and chat.cut_turn() is None


async def test_a_cut_turn_written_before_members_were_named_still_resumes(tmp_path):
    chat = group_chat(tmp_path, "old", 2)
    await chat.send("Hello Birch.")
    chat.tree.append("user", text="（轮到Aster发言）", group_nudge=True)  # an older file: no nudge_for
    chat.tree.commit()
    chat = reopen(chat, replay(1))
    assert chat.cut_turn() == "" and chat.unanswered() is None  # someone's turn; never the user's words
    res = await chat.regenerate()  # the strategy picks who speaks (no user words), nobody is queued
    assert res.outcome == "sealed" and len(speakers(chat)) == 2 and waiting(chat) == []
