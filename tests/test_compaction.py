"""Issue 7: compaction into 【前情提要】, summary layers, user edits, memory_search, token accounting — on a synthetic
300-beat game (bench/synthetic_game.py) with a small context window."""

from __future__ import annotations

import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from synthetic_game import DETAIL_BEAT, SyntheticModel, demo_card_path, play, user_words  # noqa: E402

from liyuan_desktop.core.cards import load_card  # noqa: E402
from liyuan_desktop.core.chat.facade import Chat  # noqa: E402
from liyuan_desktop.core.llm.types import ModelError  # noqa: E402
from liyuan_desktop.core.memory.search import MemoryDoc, MemoryIndex, TurnCost, merge_plan, plan_cut, terms  # noqa: E402
from liyuan_desktop.core.prompt.tokens import TokenCounter, estimate  # noqa: E402
from liyuan_desktop.core.session.tree import SessionTree  # noqa: E402

WINDOW = 12000


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """One 300-beat game shared by the tests below (about 3 s); the chat is reopened from disk per test."""
    import asyncio

    d = tmp_path_factory.mktemp("game") / "c"
    model = SyntheticModel(context_window=WINDOW)
    events = []

    async def run():
        chat = Chat.create(d, load_card(demo_card_path()), model)
        for k in range(1, 281):
            await chat.send(user_words(k), on_event=lambda e: events.append((k, e)) if getattr(e, "kind", "") == "compacted" else None)
        at_280 = {"zh": chat.memory_search("北斗七 铜钥匙"), "en": chat.memory_search("brass key engraved Polaris")}
        for k in range(281, 301):
            await chat.send(user_words(k), on_event=lambda e: events.append((k, e)) if getattr(e, "kind", "") == "compacted" else None)
        return chat, at_280

    chat, at_280 = asyncio.run(run())
    return {"dir": d, "model": model, "events": events, "chat": chat, "at_280": at_280}


def test_prompt_stays_under_the_window(game):
    chat, model = game["chat"], game["model"]
    actor = [msgs for p, msgs, _ in model.requests if p == "actor"]
    assert len(actor) == 600  # write + seal per beat
    assert max(chat.tokens.messages(m) for m in actor) < WINDOW
    assert len(game["events"]) >= 5 and all(e.error is None for _, e in game["events"])
    assert all(e.after < e.before for _, e in game["events"])


def test_relay_summary_is_present_and_earliest(game):
    msgs = [m for p, m, _ in game["model"].requests if p == "actor"][-1]
    assert msgs[0]["role"] == "system"
    assert msgs[1]["role"] == "user" and msgs[1]["content"].startswith("【前情提要】以下是更早剧情的接力摘要，是既定事实：")
    assert sum("【前情提要】" in (m.get("content") or "") for m in msgs) == 1
    summaries = game["chat"].summaries()
    firsts = [s["beats"][0] for s in summaries]
    assert firsts == sorted(firsts) and firsts[0] == 1
    assert all(1 <= s["layer"] <= 3 for s in summaries) and len(summaries) <= 10
    # the covered beats are not in the prompt verbatim; the newest ones are
    text = "\n".join(m.get("content") or "" for m in msgs)
    assert user_words(5) not in text and user_words(299) in text
    # the roster points to memory_search, and the tool is offered
    last_user = next(m for m in reversed(msgs) if m["role"] == "user")
    assert "名录里的人和事，细节可用 memory_search 查原文。" in last_user["content"]
    tools = [p for p, _, t in game["model"].requests if p == "actor"]
    last_tools = [t for p, _, t in game["model"].requests if p == "actor"][-1]
    assert "memory_search" in [t["function"]["name"] for t in last_tools]
    first_tools = [t for p, _, t in game["model"].requests if p == "actor"][0]
    assert "memory_search" not in [t["function"]["name"] for t in first_tools]  # before any compaction: as the seeds
    assert tools


def test_nothing_is_deleted(game):
    chat = Chat.open(game["dir"], load_card(demo_card_path()), SyntheticModel())
    items = chat.transcript()
    assert sum(i["role"] == "user" for i in items) == 300
    assert sum(i["role"] == "assistant" for i in items) == 300
    assert chat.summaries() == game["chat"].summaries()  # summaries come back from disk


def test_memory_search_finds_beat_20_at_beat_280(game):
    for lang in ("zh", "en"):
        hits = game["at_280"][lang]
        assert hits and hits[0]["beat"] == DETAIL_BEAT and hits[0]["kind"] == "final", (lang, hits)
    assert "北斗七" in game["at_280"]["zh"][0]["snippet"]
    assert "Polaris-7" in game["at_280"]["en"][0]["snippet"]


async def test_memory_search_as_a_tool_in_a_beat(game, tmp_path):
    import shutil

    from liyuan_desktop.core.llm.replay import ReplayModel

    shutil.copytree(game["dir"], tmp_path / "c")
    model = ReplayModel(actor=[{"tool_calls": [{"name": "memory_search", "arguments": {"query": "铜钥匙"}}]},
                               {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "她想起那把钥匙。"}}]},
                               {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}],
                        scribe=['{"patch": {}}'])
    chat = Chat.open(tmp_path / "c", load_card(demo_card_path()), model)
    r = await chat.send("钥匙呢？")
    assert r.sealed
    res = r.output.calls[0].tool_calls[0].result
    assert res["results"][0]["beat"] == DETAIL_BEAT


async def test_user_edits_a_summary(game, tmp_path):
    import shutil

    shutil.copytree(game["dir"], tmp_path / "c")
    model = SyntheticModel(context_window=WINDOW)
    chat = Chat.open(tmp_path / "c", load_card(demo_card_path()), model)
    first = chat.summaries()[0]
    n = len(chat.tree.order)
    new_id = chat.edit_summary(first["id"], "（用户改写）前面三百拍里，青梧一直在听雨轩。")
    assert len(chat.tree.order) == n + 1  # a new entry, nothing rewritten
    s = chat.summaries()
    assert s[0]["id"] == new_id and s[0]["source"] == "user" and s[0]["beats"] == first["beats"]
    await chat.send(user_words(301))
    sent = [m for p, m, _ in model.requests if p == "actor"][0]
    assert sent[1]["content"].split("\n\n")[1] == "（用户改写）前面三百拍里，青梧一直在听雨轩。"
    again = Chat.open(tmp_path / "c", load_card(demo_card_path()), SyntheticModel())
    assert again.summaries()[0]["id"] == new_id
    with pytest.raises(KeyError):
        chat.edit_summary("nope", "x")


class _NoSummary(SyntheticModel):
    async def complete(self, request, on_delta=None):
        if request.purpose == "summary":
            raise ModelError("network", "连接失败")
        return await super().complete(request, on_delta)


async def test_failed_summary_call_cuts_nothing(tmp_path):
    model = _NoSummary(context_window=6000)
    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), model)
    events = []
    for k in range(1, 25):
        r = await chat.send(user_words(k), on_event=lambda e: events.append(e) if getattr(e, "kind", "") == "compacted" else None)
        assert r.sealed
    assert events and all(e.error and "压缩前情失败" in e.error for e in events)
    assert chat.summaries() == []
    assert not SessionTree.open(chat.tree.path).latest("summary")


async def test_branches_keep_their_own_summaries(tmp_path):
    from synthetic_game import reply_text

    model = SyntheticModel(context_window=6000)
    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), model)
    await play(chat, 40)
    assert chat.summaries()
    tenth = [i for i in chat.transcript() if i["role"] == "user"][9]
    await chat.edit_user(tenth["id"], user_words(10))  # a new branch from beat 10: no summary there yet
    assert chat.summaries() == []
    assert chat.transcript()[-1]["text"] == reply_text(10)
    shown = [i for i in chat.transcript() if i["role"] == "user"][9]
    assert shown["branch"] == [2, 2]
    chat.swipe(shown["id"], -1)
    assert chat.summaries() and len([i for i in chat.transcript() if i["role"] == "user"]) == 40


def test_terms_and_bm25():
    assert terms("铜钥匙") == ["铜", "钥", "匙", "铜钥", "钥匙"]
    assert "keys" not in terms("Brass keys") and "key" in terms("Brass keys")
    idx = MemoryIndex()
    idx.add(MemoryDoc("a", "final", 1, "雨夜，茶馆里只有她一个人。"))
    idx.add(MemoryDoc("b", "final", 2, "她把铜钥匙藏进茶罐。"))
    idx.add(MemoryDoc("c", "final", 3, "The brass key is gone."))
    assert idx.search("钥匙")[0][0].key == "b"
    assert idx.search("KEY")[0][0].key == "c"
    assert idx.search("火车") == []


def test_token_estimate_and_calibration():
    assert estimate("") == 0
    assert estimate("你好") == pytest.approx(1.6)
    assert estimate("hello world") == pytest.approx(3.3)
    c = TokenCounter()
    assert c.text("你好你好") == 3
    c.observe(100, 150)
    assert c.ratio == pytest.approx(1.5)
    c.observe(100, 150)
    assert c.ratio == pytest.approx(1.5)
    c.observe(100, 0)  # no usage: ignored
    assert c.ratio == pytest.approx(1.5)


def test_plan_cut_and_merge_plan():
    turns = [TurnCost(f"a{i}", i, "u", "x", 100) for i in range(1, 11)]
    assert plan_cut(turns, 900, 1000) == []
    cut = plan_cut(turns, 1200, 1000)
    assert [t.beat for t in cut] == [1, 2, 3, 4, 5, 6, 7]  # down to half the trigger level
    assert plan_cut(turns[:2], 5000, 1000) == []  # the newest two are kept

    class S:
        def __init__(self, layer):
            self.layer = layer

    assert merge_plan([S(1)] * 4) is None
    layer, group = merge_plan([S(2), S(1), S(1), S(1), S(1), S(1)])
    assert layer == 2 and len(group) == 4
    assert merge_plan([S(3)] * 3)[0] == 3


async def test_a_chat_already_over_the_window_is_compacted_and_trimmed_before_sending(tmp_path):
    """A long chat played on a big window, then opened with a small one (or an imported SillyTavern chat): the next
    beat compacts first, each summary call fits the window, and what is still too old for this beat is left out of
    the prompt (with a notice) rather than sent whole."""
    big = SyntheticModel(context_window=200_000, record=False)
    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), big)
    await play(chat, 120)
    assert chat.summaries() == []
    small = SyntheticModel(context_window=8000)
    again = Chat.open(tmp_path / "c", load_card(demo_card_path()), small)
    events = []
    r = await again.send(user_words(121), on_event=events.append)
    assert r.sealed
    summary_calls = [m for p, m, _ in small.requests if p == "summary"]
    assert 1 <= len(summary_calls) and all(again.tokens.messages(m) < 8000 for m in summary_calls)
    actor = [m for p, m, _ in small.requests if p == "actor"]
    assert all(again.tokens.messages(m) < 8000 for m in actor)
    assert actor[0][1]["content"].startswith("【前情提要】")
    kinds = [getattr(e, "kind", "") for e in events]
    assert kinds.index("compacted") < kinds.index("beat_started")
    notices = [e.text for e in events if getattr(e, "kind", "") == "activity" and "超出上下文窗口" in e.text]
    if again.dropped:  # 120 beats cannot all be summarised in one go: the oldest wait, out of this prompt
        assert notices and "memory_search" in notices[0]
        assert "memory_search" in [t["function"]["name"] for t in [t for p, _, t in small.requests if p == "actor"][0]]
    # a few beats later everything is caught up and nothing needs leaving out
    for k in range(122, 130):
        await again.send(user_words(k))
    assert again.dropped == 0
    assert sum(i["role"] == "user" for i in again.transcript()) == 129


async def test_what_cannot_be_summarised_yet_is_left_out_of_the_prompt(tmp_path):
    big = SyntheticModel(context_window=200_000, record=False)
    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), big)
    await play(chat, 200)
    small = SyntheticModel(context_window=6000)
    again = Chat.open(tmp_path / "c", load_card(demo_card_path()), small)
    events = []
    r = await again.send(user_words(201), on_event=events.append)
    assert r.sealed and again.dropped > 0
    # before sending and again after sealing: each time at most 4 chunks, then up to two merges (layer count and
    # the summaries' own size budget)
    assert len([m for p, m, _ in small.requests if p == "summary"]) <= 2 * (4 + 2)
    actor = [m for p, m, _ in small.requests if p == "actor"]
    assert all(again.tokens.messages(m) < 6000 for m in actor)
    assert actor[0][1]["content"].startswith("【前情提要】")  # the relay summary stays first
    assert [m["role"] for m in actor[0][1:3]] == ["user", "assistant"]
    notice = next(e.text for e in events if getattr(e, "kind", "") == "activity" and "超出上下文窗口" in e.text)
    assert f"最早的 {again.dropped} 条" in notice
    tools = [t for p, _, t in small.requests if p == "actor"][0]
    assert "memory_search" in [t["function"]["name"] for t in tools]
    calls = again.inspect_beat(again.transcript()[-1]["id"])  # the inspector shows what was really sent
    assert calls[0]["request"]["messages"] == actor[0]


class _Talker(SyntheticModel):
    """Agent-mode discussion: every actor call answers in plain text (no tools), ~300 characters."""

    async def complete(self, request, on_delta=None):
        if request.purpose == "actor":
            from liyuan_desktop.core.llm.types import ChatResponse, Usage

            self.requests.append((request.purpose, [m.to_openai() for m in request.messages], request.tools))
            k = len([m for m in request.messages if m.role == "user"])
            text = f"第{k}轮讨论：我们把第{k}章的节奏放慢一点，雨夜、茶馆、铜铃都保留。" * 6
            if k == 3:
                text += "另外，青梧的旧伞是湘妃竹的伞骨。"
            return ChatResponse(content=text, usage=Usage(), finish_reason="stop")  # no usage: the estimate stands
        return await super().complete(request, on_delta)


async def test_agent_mode_compacts_its_discussion_and_searches_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    model = _Talker(context_window=8000)
    chat = Chat.create(tmp_path / "home" / "c", load_card(demo_card_path()), model, mode="agent")
    events = []
    for k in range(1, 31):
        r = await chat.send(f"第{k}轮：接着聊第{k}章。", on_event=lambda e: events.append(e) if getattr(e, "kind", "") == "compacted" else None)
        assert r.outcome == "discussed"
    assert chat.summaries()
    # the agent prompt and state block are large: compaction still happens in steps, not a sliver every turn
    assert 1 <= len(events) <= 8 and all(e.beats[1] - e.beats[0] >= 1 for e in events[:1])
    actor = [m for p, m, _ in model.requests if p == "actor"]
    assert all(chat.tokens.messages(m) < 8000 for m in actor)
    assert actor[-1][1]["content"].startswith("【前情提要】")
    hits = chat.memory_search("湘妃竹 伞骨")
    assert hits and hits[0]["beat"] == 3


def test_summaries_over_their_budget_are_merged_and_cuts_leave_room():
    class S:
        def __init__(self, layer, tokens):
            self.layer, self.tokens = layer, tokens

    layer, group = merge_plan([S(1, 700), S(2, 700), S(1, 100)], budget=1200)
    assert layer == 3 and len(group) == 2  # two oldest, one layer up
    assert merge_plan([S(1, 300), S(1, 300)], budget=1200) is None
    turns = [TurnCost(f"a{i}", i, "u", "x", 100) for i in range(1, 11)]
    # a large fixed part: the cut keeps half the room above it, not half the threshold (which it could never reach)
    cut = plan_cut(turns, 4000, 3600, fixed=3000)
    assert [t.beat for t in cut] == [1, 2, 3, 4, 5, 6, 7]


async def test_running_token_sums_equal_a_full_count(game, tmp_path):
    """The history's token estimate is kept as running sums (a beat costs its new messages only); it must equal
    counting every message of the prompt again — with summaries, and after a revision of the previous reply."""
    import shutil

    from liyuan_desktop.core.llm.replay import ReplayModel

    chat = game["chat"]
    h = chat.history()
    assert h.summaries and chat.window.history_tokens(h) == chat.tokens.messages(h.prompt_messages())
    shutil.copytree(game["dir"], tmp_path / "c")
    model = ReplayModel(actor=[{"tool_calls": [{"name": "previous_draft_read", "arguments": {}}]},
                               {"tool_calls": [{"name": "previous_draft_edit", "arguments": {
                                   "version": 0, "edits": [{"old": "雨还没停。", "new": "雨早就停了，可檐角还在滴水。"}]}}]}],
                        scribe=[])
    again = Chat.open(tmp_path / "c", load_card(demo_card_path()), model)
    again.compaction_share = 0  # this beat only revises the previous reply
    h = again.history()
    before = again.window.history_tokens(h)
    r = await again.send("把上一拍第一句改一下")
    assert r.revised_previous
    h = again.history()
    assert again.window.history_tokens(h) == again.tokens.messages(h.prompt_messages()) != before
