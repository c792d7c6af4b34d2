"""The scribe (场记): after a sealed beat, a separate model call that keeps the ledger.

Seed 002, 场记：收笔后另一次调用专门记账. The scribe sees only the current ledger and this beat's exchange (no card,
no opening); it outputs ``{"patch": {...}}``, which :func:`state.apply_patch` merges with the fixed rules. The
system prompt's name guide differs between the first beat (empty ledger) and later beats — both are golden
(``round1.json`` / ``round2.json`` ``scribe.systemPrompt``). Thinking off, at most 2048 output tokens.
Warnings from the previous scribe run are fed back in the next user text so the scribe learns the format.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import json_repair
from pydantic import BaseModel, Field

from .llm.types import ChatMessage, ChatModel, ChatRequest, ModelError
from .state import PatchResult, WorldState, apply_patch

SCRIBE_MAX_TOKENS = 2048

_SYSTEM = """你是一场角色扮演的场记。阅读【当前账本】与【本轮对话】，只做一件事：输出 JSON，更新需要记账的持久变化。

输出唯一字段：
"patch"：从本轮对话中提取需要记账的持久变化。字段语义：
- "time" / "location"：字符串，整体替换。剧内时间推移（入夜、次日清晨、数日后）必须更新 time。
- "characters"：{{ "名字": {{ "affinity"?, "status"?, "notes"?, "at"? }} }}，按字段合并。affinity 为 -100..100 的对{user}态度值，基于账本当前值小步调整（通常 ±1~10）。"at" 是该角色此刻所在地，与 location 同一写法；离开当前场景的人写他去了哪。{name_guide}；只有全新出场的人物才建新条目，键用正文中的人名——不要把作品/剧本标题（如「{char}」这类非人名）当作角色。
- "inventory"：字符串数组，整体替换——只在物品归属变化时给出变化后的完整清单，条目注明归属（如「黄铜怀表（{user}持有）」）。
- "flags"：键值对，按键合并（值为字符串）。
- "plot_threads"：字符串数组，整体替换——新增或了结剧情线时给出完整清单。
要点：否定性事件也要记账（赠礼被拒→物品仍在原主处；承诺被收回→记入 flags）；新的承诺、约定、伏笔进 plot_threads；没有变化的字段不要出现在 patch 中；完全无变化则 "patch" 为 {{}}。

只输出 JSON 对象，例如 {{"patch":{{...}}}} 或 {{"patch":{{}}}}。不要输出 warnings、不要输出其他文字。"""


def name_guide(state: WorldState, user_name: str) -> str:
    """First beat (no characters yet): 「用户角色写作「X」」; later: the names already in the ledger."""
    if not state.characters:
        return f"用户角色写作「{user_name}」"
    names = "、".join(state.characters)
    return f"名字必须使用账本中已有的写法（当前已有：{names}；用户角色「{user_name}」）"


def scribe_system_prompt(state: WorldState, user_name: str, char_name: str) -> str:
    """The scribe's system prompt (seed 002 scribe.ts 94-105, without the MVU/panel sections)."""
    return _SYSTEM.format(user=user_name, char=char_name, name_guide=name_guide(state, user_name))


def scribe_user_text(state: WorldState, user_name: str, char_name: str, user_text: str, assistant_text: str,
                     previous_warnings: Optional[list[str]] = None) -> str:
    """【当前账本】 (the ledger as ``JSON.stringify(state, null, 2)``) and 【本轮对话】 (``名字：话`` pairs; in agent
    mode, where there are no user words, the chapter text alone). Previous warnings, when any, are appended to the
    ledger section so the scribe corrects its format."""
    exchange = f"{user_name}：{user_text}\n\n{char_name}：{assistant_text}" if user_text.strip() else assistant_text
    feedback = ""
    if previous_warnings:
        feedback = "\n\n【上次记账的告警】以下是上一次 patch 被拒收或丢弃的部分，这次请按要求写：\n" + "\n".join(f"- {w}" for w in previous_warnings)
    return f"【当前账本】\n{state.to_json(2)}{feedback}\n\n【本轮对话】\n{exchange}"


def parse_scribe_output(raw: str) -> tuple[Any, list[str]]:
    """Pull the patch out of the scribe's text: tolerant of code fences, prose around the JSON and broken JSON
    (repaired with the json-repair library). Returns (patch, problems); patch is ``{}`` when nothing usable."""
    problems: list[str] = []
    text = (raw or "").strip()
    fence = re.search(r"```(?:json)?\s*([\s\S]*?)```", text)
    if fence:
        text = fence.group(1).strip()
    obj: Any = None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        start = text.find("{")
        candidate = text[start:] if start >= 0 else text
        try:
            obj = json_repair.loads(candidate)
        except Exception:  # json_repair raises on some inputs; treat as unusable
            obj = None
        if isinstance(obj, dict) and obj:
            problems.append("场记输出不是严格的 JSON，已自动修复后使用")
    if not isinstance(obj, dict):
        problems.append("场记没有输出 JSON 对象，本拍账本未更新")
        return {}, problems
    if "patch" in obj:
        return obj["patch"], problems
    if any(k in obj for k in ("time", "location", "characters", "inventory", "flags", "plot_threads")):
        problems.append("场记输出缺少 patch 外层，已按 patch 使用")
        return obj, problems
    problems.append("场记输出里没有 patch 字段，本拍账本未更新")
    return {}, problems


class ScribeOutcome(BaseModel):
    """What one scribe run did: prompts, raw output, the merge result; ``error`` when the call itself failed
    (the beat is kept; the ledger stays as it was)."""

    system: str
    user: str
    raw: str = ""
    patch: Any = None
    result: Optional[PatchResult] = None
    problems: list[str] = Field(default_factory=list)
    error: Optional[str] = None
    usage: dict[str, Any] = Field(default_factory=dict)


async def run_scribe(model: ChatModel, state: WorldState, *, user_name: str, char_name: str, user_text: str,
                     assistant_text: str, previous_warnings: Optional[list[str]] = None) -> ScribeOutcome:
    """Call the scribe and merge its patch. Never raises for model or parse failures: they come back in
    ``error``/``problems`` (CancelledError still propagates)."""
    system = scribe_system_prompt(state, user_name, char_name)
    user = scribe_user_text(state, user_name, char_name, user_text, assistant_text, previous_warnings)
    out = ScribeOutcome(system=system, user=user)
    req = ChatRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        max_tokens=SCRIBE_MAX_TOKENS, thinking=False, purpose="scribe", temperature=0.2,
    )
    try:
        resp = await model.complete(req)
    except ModelError as e:
        out.error = f"场记调用失败：{e.message}"
        return out
    out.raw = resp.content
    out.usage = resp.usage.raw or resp.usage.model_dump(exclude={"raw"})
    patch, problems = parse_scribe_output(resp.content)
    out.patch = patch
    out.problems = problems
    out.result = apply_patch(state, patch)
    return out
