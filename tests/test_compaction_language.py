"""The compaction summary call follows the chat's language (issue 32 §1: every prompt the engine writes to the model
follows the chat's language): an English chat's summary call ends its system prompt with a language line and frames
the turns in English; a Chinese chat's call is byte-identical to before (``compact.md`` alone, 【待压缩的剧情】)."""

from __future__ import annotations

import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from synthetic_game import SyntheticModel, demo_card_path, user_words  # noqa: E402

from liyuan_desktop.core.cards import load_card  # noqa: E402
from liyuan_desktop.core.chat.facade import Chat  # noqa: E402
from liyuan_desktop.core.memory.compaction import COMPACT_WORDING, compact_system  # noqa: E402
from liyuan_desktop.core.prompt.assemble import prompt_resource  # noqa: E402


async def _summary_calls(tmp_path, language: str) -> list[list[dict]]:
    model = SyntheticModel(context_window=6000)
    card = load_card(demo_card_path())
    card.extensions["liyuan"] = {**(card.extensions.get("liyuan") or {}), "language": language}
    chat = Chat.create(tmp_path / language, card, model)
    for k in range(1, 25):
        assert (await chat.send(user_words(k))).sealed
    return [m for p, m, _ in model.requests if p == "summary"]


async def test_english_chat_summary_call_is_in_english(tmp_path):
    calls = await _summary_calls(tmp_path, "en")
    assert calls
    system, user = calls[0][0]["content"], calls[0][-1]["content"]
    assert system == compact_system("en")
    assert system.endswith(COMPACT_WORDING["en"]["line"]) and "Write the summary in English" in system
    assert user.startswith("[Story to compact] beats ") and "\nBeat " in "\n" + user.split("\n\n", 1)[1]
    assert "【待压缩的剧情】" not in user and "拍" not in user.split("\n\n", 1)[0]


async def test_chinese_chat_summary_call_is_unchanged(tmp_path):
    calls = await _summary_calls(tmp_path, "zh")
    assert calls
    assert calls[0][0]["content"] == prompt_resource("compact.md")
    assert calls[0][-1]["content"].startswith("【待压缩的剧情】第 ")
