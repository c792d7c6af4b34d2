"""A synthetic long game for compaction tests and bench/prefix_cache.py: a deterministic model that plays the actor
(draft_write then draft_seal, one reply of ~300 characters per beat), the scribe (a small ledger patch) and the
summariser (a short digest of what it was given), and records every request it got.

Beat 20 plants a detail in both languages (「北斗七」铜钥匙 / the brass key engraved "Polaris-7") that later beats
never repeat, so finding it at beat 280 needs memory_search.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

from liyuan_desktop.core.llm.types import ChatRequest, ChatResponse, ToolCall, Usage

PLACES = ["茶馆", "渡口", "后院", "石桥", "药铺", "码头", "竹林", "祠堂"]
PEOPLE = ["掌柜", "船夫", "药师", "渔女", "更夫", "书生", "老僧", "货郎"]
DETAIL_BEAT = 20
DETAIL_ZH = "青梧把一枚刻着「北斗七」的铜钥匙藏进了柜台下第三只茶罐"
DETAIL_EN = "she hid the brass key engraved Polaris-7 inside the third tea caddy"


def user_words(k: int) -> str:
    """The user's words of beat ``k`` (1-based)."""
    return f"第{k}拍：我问{PEOPLE[k % len(PEOPLE)]}，{PLACES[(k * 3) % len(PLACES)]}那边后来怎样了？"


def reply_text(k: int) -> str:
    """The final of beat ``k``: about 300 characters of prose; beat DETAIL_BEAT carries the planted detail."""
    place, who = PLACES[k % len(PLACES)], PEOPLE[(k * 5) % len(PEOPLE)]
    body = (f"雨还没停。{who}从{place}那头走来，衣角沾着泥，说第{k}夜的灯笼又灭了两盏。"
            f"青梧低头擦着杯沿，听他把{place}的事一件件讲完：米价涨了三文，桥头新来的{who}不爱说话，"
            f"北边的商队说是要改走水路。她没接话，只把一盏热茶推过去，茶面上浮着两片陈年的叶子。"
            f"窗外有人在喊收摊，声音被雨压得很低，像从很远的地方传来。")
    if k == DETAIL_BEAT:
        body += f"{DETAIL_ZH}。（Later that night {DETAIL_EN}.）"
    return body


def _beat_of(request: ChatRequest) -> int:
    last_user = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    m = re.findall(r"第(\d+)拍：", last_user)
    return int(m[-1]) if m else 0


class SyntheticModel:
    """A ChatModel for long synthetic games. ``requests`` records ``(purpose, messages as OpenAI dicts, tools)``
    for every call; ``prompt_tokens`` in the usage is a fixed estimate (len/1.5) so calibration has numbers."""

    is_replay = False

    def __init__(self, name: str = "synthetic", context_window: int = 12000, record: bool = True):
        self.name = name
        self.context_window = context_window
        self.record = record
        self.requests: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = []
        self._n = 0

    async def complete(self, request: ChatRequest, on_delta: Optional[Any] = None) -> ChatResponse:
        """Answer by purpose (actor: write then seal; scribe: a ledger patch; summary: a digest)."""
        msgs = [m.to_openai() for m in request.messages]
        if self.record:
            self.requests.append((request.purpose, msgs, request.tools))
        size = sum(len(m.get("content") or "") for m in msgs)
        usage = Usage(prompt_tokens=int(size / 1.5), completion_tokens=50, total_tokens=int(size / 1.5) + 50)
        self._n += 1
        if request.purpose == "actor":
            last = request.messages[-1]
            if last.role == "tool":
                return ChatResponse(tool_calls=[ToolCall(id=f"c{self._n}", name="draft_seal", arguments=json.dumps({"version": 1}))],
                                    usage=usage, finish_reason="tool_calls")
            k = _beat_of(request)
            return ChatResponse(tool_calls=[ToolCall(id=f"c{self._n}", name="draft_write",
                                                     arguments=json.dumps({"version": 0, "content": reply_text(k)}, ensure_ascii=False))],
                                usage=usage, finish_reason="tool_calls")
        if request.purpose == "scribe":
            user = request.messages[-1].content
            m = re.findall(r"第(\d+)拍：", user)
            k = int(m[-1]) if m else 0
            patch: dict[str, Any] = {"time": f"第{k}夜", "location": PLACES[k % len(PLACES)]}
            if k % 10 == 1:
                who = PEOPLE[(k // 10) % len(PEOPLE)]
                patch["characters"] = {who: {"status": f"第{k}夜露面"}}
            return ChatResponse(content=json.dumps({"patch": patch}, ensure_ascii=False), usage=usage, finish_reason="stop")
        # summary: one line per beat or per merged summary, the first words of each
        text = request.messages[-1].content
        parts = re.findall(r"第 (\d+) 拍\n[^\n]*\n[^：]+：(.{0,24})", text)
        if parts:
            digest = "；".join(f"第{b}拍{p}" for b, p in parts)
        else:
            digest = "；".join(s[:60] for s in re.findall(r"（第 [\d–]+ 拍）([^\n]+)", text))
        return ChatResponse(content=digest[:400], usage=usage, finish_reason="stop")


async def play(chat: Any, beats: int, start: int = 1, on_beat: Any = None) -> None:
    """Play beats ``start`` … ``beats`` (inclusive) on ``chat`` with the synthetic words."""
    for k in range(start, beats + 1):
        r = await chat.send(user_words(k))
        if r.outcome != "sealed":
            raise RuntimeError(f"beat {k}: {r.outcome} {r.error}")
        if on_beat is not None:
            on_beat(k)


def demo_card_path() -> Path:
    """The shipped demo card (cards/青梧/default_Qingwu.json)."""
    return Path(__file__).resolve().parents[1] / "cards" / "青梧" / "default_Qingwu.json"
