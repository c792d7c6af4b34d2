"""Issue 7, the prompt inspector's data: every model call of a beat rebuilt exactly as it was sent (the demo game's
three golden rounds, a compacted game with memory_search, agent mode), from the compact ``sent`` record."""

from __future__ import annotations

import json
import sys

from helpers import DEMO_CARD, ROOT

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel

sys.path.insert(0, str(ROOT / "bench"))


class Recording:
    """Wraps a model and keeps every request as OpenAI dicts (what went over the wire)."""

    def __init__(self, inner):
        self.inner, self.name, self.is_replay = inner, inner.name, getattr(inner, "is_replay", False)
        self.context_window = getattr(inner, "context_window", 0)
        self.requests = []

    async def complete(self, request, on_delta=None):
        self.requests.append({"purpose": request.purpose, "messages": [m.to_openai() for m in request.messages],
                              "tools": request.tools})
        return await self.inner.complete(request, on_delta)


def _actor(requests):
    return [r for r in requests if r["purpose"] == "actor"]


async def test_demo_game_calls_are_rebuilt_exactly(tmp_path):
    model = Recording(ReplayModel.from_file(DEMO_CARD.parent / "replay.json"))
    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), model)
    script = json.loads((DEMO_CARD.parent / "replay.json").read_text("utf-8"))
    seen = 0
    for beat in script["beats"]:
        r = await chat.send(beat["user"])
        sent_now = _actor(model.requests)[seen:]
        seen = len(_actor(model.requests))
        item = chat.transcript()[-1]
        calls = chat.inspect_beat(item["id"])
        actor = [c for c in calls if c["purpose"] == "actor"]
        assert len(actor) == len(sent_now)
        for got, want in zip(actor, sent_now):
            assert got["request"]["messages"] == want["messages"]
            assert got["request"]["tools"] == want["tools"]
        if r.scribe is not None:
            sc = calls[-1]
            assert sc["purpose"] == "scribe"
            assert sc["request"]["messages"][0]["content"] == r.scribe.system
            assert sc["request"]["messages"][1]["content"] == r.scribe.user
            assert sc["reply"]["content"] == r.scribe.raw
    # the user item of a beat and reopening from disk give the same record
    user = [i for i in chat.transcript() if i["role"] == "user"][-1]
    again = Chat.open(tmp_path / "c", load_card(DEMO_CARD), model)
    assert again.inspect_beat(user["id"]) == chat.inspect_beat(user["id"])


async def test_compacted_game_with_memory_search_is_rebuilt(tmp_path):
    from synthetic_game import SyntheticModel, demo_card_path, user_words

    model = Recording(SyntheticModel(context_window=6000, record=False))
    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), model)
    for k in range(1, 41):
        await chat.send(user_words(k))
    assert chat.summaries()
    last = _actor(model.requests)[-2:]
    calls = chat.inspect_beat(chat.transcript()[-1]["id"])
    assert [c["request"]["messages"] for c in calls if c["purpose"] == "actor"] == [r["messages"] for r in last]
    assert "memory_search" in [t["function"]["name"] for t in calls[0]["request"]["tools"]]
    assert calls[0]["request"]["tools"] == last[0]["tools"]
    # the record is small: the history is stored as index ranges
    beat = chat.tree.get(chat.tree.get(chat.transcript()[-1]["id"]).beat)
    assert len(json.dumps(beat.sent, ensure_ascii=False)) < 2000


async def test_an_item_without_model_calls(tmp_path):
    import pytest

    chat = Chat.create(tmp_path / "c", load_card(DEMO_CARD), ReplayModel(actor=[], scribe=[]))
    with pytest.raises(ValueError):
        chat.inspect_beat(chat.transcript()[0]["id"])  # the opening


async def test_agent_turn_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("LIYUAN_HOME", str(tmp_path / "home"))
    inner = ReplayModel.from_file(DEMO_CARD.parent / "agent-replay.json")
    model = Recording(inner)
    chat = Chat.create(tmp_path / "home" / "c", load_card(DEMO_CARD), model, mode="agent")
    chat.import_chapters([("001-开场.md", "雨夜。\n\n「记得。」"), ("002-坦言.md", "她说了实话。")])
    await chat.send(inner.beats[0].user)
    calls = chat.inspect_beat(chat.transcript()[-1]["id"])
    sent = _actor(model.requests)
    assert [c["request"]["messages"] for c in calls if c["purpose"] == "actor"] == [r["messages"] for r in sent]
    assert calls[0]["request"]["tools"] == sent[0]["tools"]


async def test_meter_and_cache_share_survive_reopening(tmp_path):
    from synthetic_game import SyntheticModel, demo_card_path, user_words

    chat = Chat.create(tmp_path / "c", load_card(demo_card_path()), SyntheticModel())
    for k in range(1, 6):
        r = await chat.send(user_words(k))
    assert chat.tokens.observed == 5 and r.tokens["context"] == chat.context_usage()
    before = chat.context_usage()["used"]
    again = Chat.open(tmp_path / "c", load_card(demo_card_path()), SyntheticModel())
    after = again.context_usage()["used"]
    assert again.tokens.observed == 5
    assert after == before  # calibrated from the newest beats on the tree, as they were played
    assert again.last_beat_tokens() == {k: r.tokens[k] for k in ("prompt", "cached", "completion", "cache_hit_share")}
    fresh = Chat.create(tmp_path / "d", load_card(demo_card_path()), SyntheticModel())
    fresh.context_usage()
    assert fresh.tokens.observed == -1 and fresh.last_beat_tokens() is None
