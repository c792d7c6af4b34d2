"""Issue 30, what stayed open: a small local model's looping beat, and lore that reaches its reply.

* **Looping beats** (the 1.5B's repetition stop fired on 3 of 8 ``bench/real_model.py`` beats, each left unsealed):
  for a model on this machine or its network the prose before the loop — cut before a sentence that nearly repeats
  an earlier one, trimmed to its last sentence end — is sealed when it is long enough and no echo, with a notice
  that the repeated tail was cut; otherwise the beat stays unsealed as before. Scripted replies (not recordings) in
  the recorded models' shape, streamed by the loopback server piece by piece so the live loop guard stops them.
* **Lore next to the question** (prose-only play and the compact prompt): the 【相关设定】 block goes right before
  the user's words, this beat's own matches first; the system prompt stays byte-identical beat after beat.
"""

from __future__ import annotations

import pytest
from helpers import DEMO_CARD, play_scripted
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.beat.echo import repeat_start
from liyuan_desktop.core.beat.loop import LOOP_SEAL_MIN_CHARS
from liyuan_desktop.core.beat.repetition import sentence_prefix
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import OpenAIChatModel, ProviderSettings, build_model
from liyuan_desktop.core.messages import message

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PROSE = ("*青梧放下手里的干布，抬眼看了看你肩头的雨水，没有急着答话。*\n\n"
         "「听雨轩啊，"
         "开了快一百年了。」她把茶盏往你面前推了推，「后院那株老梨树，比这客栈还老些。」\n\n"
         "*檐下的铜铃又响了一声，雨势没有要停的意思。*\n\n")
LOOP = "「客官，今晚就在这里歇下吧，雨太大了。」\n\n"
ASK = "我收起湿透的伞，推门走进听雨轩，走到柜台前：「掌柜的，这客栈开了多少年了？」"


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def looping(prose: str, loop: str = LOOP, times: int = 8):
    """A streamed reply: ``prose``, then ``loop`` again and again (never finished: the guard stops it)."""
    pieces = [prose[i:i + 12] for i in range(0, len(prose), 12)] + [loop] * times
    return sse_reply(*(chunk(p, model=MODEL) for p in pieces), chunk(finish="stop", model=MODEL))


def said_repeat(said: list[str], key: str) -> bool:
    """Whether one of ``said`` is the catalog's ``key`` ("beat.cut_repeat" / "beat.cut_repeat_sealed") for any loop."""
    return any(message(key, what=message(f"beat.repeat.{r}")) in said for r in ("paragraph", "sentence", "clause", "periodic"))


SCRIBE = sse_reply(chunk('{"patch": {}}', model=MODEL), chunk(finish="stop", model=MODEL))


async def beat(tmp_path, server, *replies, local: bool = True, prose_only: bool = True):
    return await play_scripted(tmp_path, server, *replies, says=(ASK,), model=MODEL, local=local, prose=prose_only)


def test_the_prose_before_a_loop_is_cut_at_its_first_near_repeat_and_a_sentence_end():
    text = ("她把茶推过去，说客栈开了快一百年。厨房里摆放的是各种餐具，都是刚从上层传来。"
            "厨房里摆放的是各种物品，都是刚从上层传来。她又说")
    cut = text[:repeat_start(text)]
    assert cut.endswith("都是刚从上层传来。") and cut.count("上层") == 1
    assert repeat_start("一句不重复的话。另一句完全不同的话！") == len("一句不重复的话。另一句完全不同的话！")
    assert sentence_prefix("*她笑了。*\n\n「客官请。」他说，然后") == "*她笑了。*\n\n「客官请。」"
    assert sentence_prefix("It cost 3.5 coins. Then he") == "It cost 3.5 coins."
    assert sentence_prefix("没有句末") == ""


async def test_a_local_models_looping_beat_is_sealed_with_the_prose_before_the_loop(tmp_path, server):
    """The de-duplicated prose is long enough and new: sealed, the loop's first copy kept once, the repeats cut, the
    notice by key, and the scribe books the beat (its call is the second request). Before: unsealed, 继续 / 按现稿收笔."""
    res, said, chat = await beat(tmp_path, server, looping(PROSE), SCRIBE)
    assert res.sealed and res.output.cut is None
    assert res.final.startswith("*青梧放下手里的干布") and "一百年" in res.final
    assert res.final.count("今晚就在这里歇下吧") == 1 and res.final.rstrip().endswith("」")
    assert said_repeat(said, "beat.cut_repeat_sealed") and not said_repeat(said, "beat.cut_repeat")
    assert len(server.requests) == 2  # the beat's call (stopped by the guard), then the scribe
    assert chat.latest_beat().outcome == "sealed"


async def test_a_loop_with_a_near_repeat_before_it_loses_the_variant_too(tmp_path, server):
    """A small model's loop often varies a word before it repeats exactly (the 0.5B's 「厨房里摆放的是各种餐具／
    物品，都是刚从上层传来」): the sealed prose ends before the first near copy."""
    variant = "「客官，今夜就在这里歇下吧，雨实在太大了。」\n\n"
    res, said, _chat = await beat(tmp_path, server, looping(PROSE + variant), SCRIBE)
    assert res.sealed and "歇下吧" in res.final and res.final.count("歇下吧") == 1
    assert "今夜" in res.final and "今晚" not in res.final


async def test_too_little_prose_before_the_loop_stays_unsealed(tmp_path, server):
    short = "*青梧抬眼看你。*\n\n"
    assert len("".join((short + LOOP).split())) < LOOP_SEAL_MIN_CHARS
    res, said, chat = await beat(tmp_path, server, looping(short))
    assert not res.sealed and res.output.cut == "repetition"
    assert said_repeat(said, "beat.cut_repeat") and not said_repeat(said, "beat.cut_repeat_sealed")
    assert "青梧抬眼看你" in (chat.latest_beat().draft or "")
    assert len(server.requests) == 1  # no scribe for an unsealed beat


async def test_prose_before_the_loop_that_copies_the_opening_stays_unsealed(tmp_path, server):
    """The kept prose is itself an echo of the opening (issue 30 §1): never sealed, the beat ends as before."""
    opening = load_card(DEMO_CARD).first_mes.strip() + "\n\n"
    res, said, _chat = await beat(tmp_path, server, looping(opening))
    assert not res.sealed and res.output.cut == "repetition"
    assert said_repeat(said, "beat.cut_repeat") and not said_repeat(said, "beat.cut_repeat_sealed")


async def test_a_hosted_models_looping_beat_stays_unsealed(tmp_path, server):
    res, said, _chat = await beat(tmp_path, server, looping(PROSE), local=False)
    assert not res.sealed and res.output.cut == "repetition"
    assert said_repeat(said, "beat.cut_repeat") and not said_repeat(said, "beat.cut_repeat_sealed")


async def test_prose_only_lore_stands_next_to_the_question_with_this_beats_matches_first(tmp_path, server):
    """Beat 2 asks about the watchman; 旧油纸伞 fires on the last reply (its key 擦) and comes first in the book. The
    【相关设定】 block is the last one before the user's words and starts with 更夫, matched by this beat's words;
    no block of titles besides it; the system prompt is the same bytes in both beats."""
    reply = sse_reply(chunk("*青梧擦着那把伞，没有抬头。*「快一百年了，客官。后院那株老梨树还是开张那年种的。」", model=MODEL),
                      chunk(finish="stop", model=MODEL))
    again = sse_reply(chunk("*她侧耳听了听。*「是老钱，腿脚不好，记性倒好。」", model=MODEL),
                      chunk(finish="stop", model=MODEL))
    server.script(reply, SCRIBE, again, SCRIBE)
    model = OpenAIChatModel(server.base_url, MODEL, None, retry_base_wait=0.0, read_timeout=5.0)
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    chat.set_prose_only(True)
    try:
        await chat.send(ASK)
        await chat.send("夜深了，外面传来梆子声。「这打更的是什么人？」")
    finally:
        await model.aclose()
    actor = [r.json for r in server.requests if r.json["messages"][0]["role"] == "system"
             and "patch" not in r.json["messages"][0]["content"][:200]]
    first, second = actor[0]["messages"], actor[-1]["messages"]
    assert first[0]["content"] == second[0]["content"]  # the byte-stable prefix
    last = second[-1]["content"]
    blocks = last.split("\n\n")
    lore_at = next(i for i, b in enumerate(blocks) if b.startswith("【相关设定】"))
    assert any(b.startswith("【语言】") for b in blocks[:lore_at])  # after 【语言】: the last data block
    assert last.endswith("「这打更的是什么人？」")
    lore = last[last.index("【相关设定】"):]
    assert lore.index("镇上的更夫姓钱") < lore.index("柜台后墙上挂着一把青灰色的旧油纸伞")
    assert last.count("【相关设定】") == 1 and "镇上的更夫姓钱" not in second[0]["content"]


async def test_a_local_models_lore_is_next_to_the_question_and_a_hosted_full_prompt_is_as_before(tmp_path, server):
    """Tool play of a model that has not looked lore up (issue 30 §4) gets the inlined entries last, under the
    use-in-your-own-words header, when the model is local — compact prompt or full (a30: the same place and form
    as prose-only play); a hosted model's full prompt (what the golden runs hold) keeps 【相关设定】 before 【语言】,
    and a hosted model with the compact prompt gets it last as before."""
    reply = sse_reply(chunk("*青梧抬眼看你。*「快一百年了。后院那株老梨树还在。」", model=MODEL),
                      chunk(finish="stop", model=MODEL))
    orders = {}
    for compact, local in ((True, True), (False, True), (True, False), (False, False)):
        server.requests.clear()
        server.script(reply, SCRIBE)
        model = build_model(ProviderSettings(name="local", base_url=server.base_url, model=MODEL,
                                             compact_prompt=compact), api_key="")
        model.is_local = local
        chat = Chat.create(tmp_path / f"c{compact}{local}", load_card(DEMO_CARD), model)
        try:
            await chat.send(ASK)
        finally:
            await model.aclose()
        last = server.requests[0].json["messages"][-1]["content"]
        assert "听雨轩是栖水镇上开了近百年的老客栈" in last
        orders[compact, local] = last.index("【相关设定】") > last.index("【语言】")
        assert ("用你自己的话" in last) == orders[compact, local]
    assert orders == {(True, True): True, (False, True): True, (True, False): True, (False, False): False}


def test_the_block_next_to_the_question_follows_the_chats_language():
    """An English chat gets the English header (issue 32), last, and the echo filter still knows it as a block."""
    from liyuan_desktop.core.beat.echo import INJECTION_HEADERS, strip_echo
    from liyuan_desktop.core.ledger.state import WorldState
    from liyuan_desktop.core.prompt.assemble import build_injection

    lore = "[The Inn] The inn has stood for nearly a hundred years."
    en = build_injection(WorldState(), ["The Inn"], [], "en", lore=lore, lore_last=True)
    blocks = en.split("\n\n")
    assert blocks[-2].startswith("[Relevant lore]") and blocks[-1] == lore
    assert any(b.startswith("[Language]") for b in blocks[:-2]) and "【" not in en
    zh = build_injection(WorldState(), ["听雨轩"], [], "zh", lore="【听雨轩】开了近百年。", lore_last=True)
    assert zh.split("\n\n")[-2].startswith("【相关设定】") and zh.split("\n\n")[-2].startswith(INJECTION_HEADERS)
    assert strip_echo(f"{en}\n\nShe smiled.", en) == "She smiled."
    assert build_injection(WorldState(), ["听雨轩"], [], "zh", lore="【听雨轩】开了近百年。").index("【相关设定】") < \
        build_injection(WorldState(), ["听雨轩"], [], "zh", lore="【听雨轩】开了近百年。").index("【语言】")
