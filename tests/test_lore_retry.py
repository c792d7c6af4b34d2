"""Issue 30, "lore that reaches the reply": a local model asked about something the world book says, whose reply
uses none of it, is asked once to rewrite from the book.

The real 1.5B (``bench/real_model.py``) answered 「掌柜的，这客栈开了多少年了？」 with 「这客栈开了一百多年了」 in most
runs although 【相关设定】 right before the question said 近百年 and named the 老梨树 behind the inn — a fact in about
half of the beats that asked about one. When the user's words hold a question and a key of the book matched in them
(``prompt.prose_only.asked_entries``), a local model's first reply that shares nothing with those entries beyond what
the prompt already said (``beat.echo.uses_entry``) is not sealed: the notice says so, the nudge goes with the user's
words (no higher temperature: heat invents more), and the second reply is sealed whatever it says. Hosted models, a
beat without a question, and 「继续」 are not checked. Scripted replies on the loopback server (not recordings).
"""

from __future__ import annotations

import pytest
from helpers import DEMO_CARD, play_scripted
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.beat.echo import uses_entry
from liyuan_desktop.core.beat.events import Activity
from liyuan_desktop.core.beat.loop import LORE_NUDGE, LORE_RETRY_NOTICE
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
ASK = "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」"
INN = ("听雨轩是栖水镇上开了近百年的老客栈，前后两进，后院有一株老梨树。店里的规矩是祖上传下来的：不问来处，不问去处，"
       "账清即可。")
INVENTED = "*青梧放下干布。*「这客栈开了一百多年了，客官。」*她把茶推过去。*"
USED = "*青梧放下干布。*「快一百年了。后院那株老梨树，比这客栈还老些。」*她把茶推过去。*"
SCRIBE = sse_reply(chunk('{"patch": {}}', model=MODEL), chunk(finish="stop", model=MODEL))


def prose(text: str):
    return sse_reply(*(chunk(text[i:i + 16], model=MODEL) for i in range(0, len(text), 16)),
                     chunk(finish="stop", model=MODEL))


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


async def beat(tmp_path, server, *replies, say: str = ASK, local: bool = True):
    res, said, _chat = await play_scripted(tmp_path, server, *replies, says=(say,), model=MODEL, local=local)
    actor = [r.json for r in server.requests if "patch" not in r.json["messages"][0]["content"][:200]]
    return res, said, actor


def test_a_reply_uses_an_entry_when_it_shares_words_the_prompt_did_not_already_hold():
    known = ASK + "青梧是栖水镇老客栈「听雨轩」的年轻女掌柜"
    assert not uses_entry(INVENTED, INN, known)  # 客栈 / 开了: the question and the card say them already
    assert uses_entry(USED, INN, known) and uses_entry("「近百年了。」", INN, known)
    assert not uses_entry(USED, "", known)
    en = "The inn has stood for nearly a hundred years; an old pear tree grows behind it."
    assert uses_entry("She says it is nearly a hundred years old.", en, "How old is this inn?")
    assert not uses_entry("She says it is two hundred years old.", en, "How old is this inn?")


async def test_a_local_reply_that_invents_instead_is_rewritten_once_from_the_book(tmp_path, server):
    res, said, actor = await beat(tmp_path, server, prose(INVENTED), prose(USED), SCRIBE)
    assert res.sealed and res.final == USED
    assert LORE_RETRY_NOTICE in said
    assert len(actor) == 2 and actor[1]["messages"][-1]["content"].endswith(LORE_NUDGE)
    assert "temperature" not in actor[1]  # not hotter: heat invents more


async def test_the_second_reply_is_sealed_whatever_it_says(tmp_path, server):
    res, said, actor = await beat(tmp_path, server, prose(INVENTED), prose(INVENTED), SCRIBE)
    assert res.sealed and res.final == INVENTED and len(actor) == 2
    assert said.count(LORE_RETRY_NOTICE) == 1


async def test_a_reply_that_uses_the_book_is_sealed_at_once(tmp_path, server):
    res, said, actor = await beat(tmp_path, server, prose(USED), SCRIBE)
    assert res.sealed and len(actor) == 1 and LORE_RETRY_NOTICE not in said


async def test_no_question_or_a_hosted_model_is_not_checked(tmp_path, server):
    res, said, actor = await beat(tmp_path / "statement", server, prose(INVENTED), SCRIBE,
                                  say="我走到柜台前，看了看这听雨轩。")
    assert res.sealed and len(actor) == 1 and LORE_RETRY_NOTICE not in said
    server.requests.clear()
    res, said, actor = await beat(tmp_path / "hosted", server, prose(INVENTED), SCRIBE, local=False)
    assert res.sealed and len(actor) == 1 and LORE_RETRY_NOTICE not in said


async def test_an_entry_asked_about_is_found_by_its_key_in_the_question_even_when_the_opening_names_it(tmp_path, server):
    """Seen on screen (English window, a loopback server in the 1.5B's shape): 「I walk to the counter: "How long has
    this inn been open?"」 activated the inn's entry, but the activation reported its other key, "Rainsong", in the
    opening, so the entry did not count as asked about and the invented answer was sealed. The question's own key
    ("counter") now decides."""
    from pathlib import Path
    card = load_card(Path(DEMO_CARD).parent.parent / "Qingwu" / "default_Qingwu.json")
    invented = '*Qingwu sets down her cloth.* "Two hundred years, give or take." *She pushes the cup across.*'
    used = '*Qingwu sets down her cloth.* "Nearly a hundred years. The old pear tree out back is older." *She smiles.*'
    server.script(prose(invented), prose(used), SCRIBE)
    model = OpenAIChatModel(server.base_url, MODEL, None, retry_base_wait=0.0, read_timeout=5.0)
    chat = Chat.create(tmp_path / "c", card, model)
    events: list = []
    try:
        res = await chat.send('I walk to the counter: "How long has this inn been open?"', on_event=events.append)
    finally:
        await model.aclose()
    assert res.sealed and res.final == used
    assert LORE_RETRY_NOTICE in [e.text for e in events if isinstance(e, Activity)]


def test_our_note_written_back_into_a_reply_is_never_prose():
    """After a nudge the real 1.5B (bench run ak1, tool beat 1) sealed a reply ending in
    「（系统提示：用户这句话本身就在要方向……）」 — our note's opening words, in its own paragraph. Such a paragraph
    is taken out like any other echo of the prompt (``echo.NOTE_MARKS``, both languages); the words inside prose
    are left alone."""
    from liyuan_desktop.core.beat.echo import strip_echo
    reply = ("*老板说：「客栈已经有好几百年的历史了。」*\n\n"
             "（系统提示：用户这句话本身就在要方向、又要选项，任何一拍都可以直接 ask。）")
    assert strip_echo(reply) == "*老板说：「客栈已经有好几百年的历史了。」*"
    assert strip_echo("She smiles.\n\n*(System note: the last reply copied the opening.)*") == "She smiles."
    assert strip_echo("她笑了。（系统提示是什么？）她问。") == "她笑了。（系统提示是什么？）她问。"


async def test_a_looping_reply_is_sealed_by_the_loop_rule_not_held_back_for_unused_lore(tmp_path, server):
    """The lore rewrite is a reason to retry a reply about to be sealed as it is, not an echo: a local model's
    looping reply is sealed with its prose before the loop (issue 30, a30loop) whether or not that prose used the
    entry asked about (the first build returned "lore" from the echo test itself and left such a beat unsealed)."""
    prose_part = ("*青梧放下手里的干布，抬眼看了看你肩头的雨水，没有急着答话。*\n\n「这客栈开了一百多年了，客官。」她把茶盏往你面前"
                  "推了推，「今晚雨大，先喝口热茶暖暖身子再说。」\n\n*檐下的铜铃又响了一声，雨势没有要停的意思。*\n\n")
    loop_line = "「客官，今晚就在这里歇下吧，雨太大了。」\n\n"
    pieces = [prose_part[i:i + 12] for i in range(0, len(prose_part), 12)] + [loop_line] * 8
    looping = sse_reply(*(chunk(p, model=MODEL) for p in pieces), chunk(finish="stop", model=MODEL))
    res, said, actor = await beat(tmp_path, server, looping, SCRIBE)
    assert res.sealed and "一百多年" in res.final and len(actor) == 1
    assert LORE_RETRY_NOTICE not in said
