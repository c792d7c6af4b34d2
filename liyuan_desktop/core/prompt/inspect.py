"""The prompt inspector's data (issue 7): every model call of a beat exactly as sent, without storing whole prompts.

A beat entry keeps ``sent`` (:func:`encode_sent`): the first call's messages encoded against the branch history of
that moment — runs of history messages as index ranges, the system prompt as its sha256, everything else (the
injection + the user's words, depth injections, preset segments) in full — and the tool names offered. The history
is rebuilt from the tree (assemble.HistoryCache is a pure function of the path), so :func:`rebuild_calls` gives
back the exact message lists; later calls of the beat are the first call's messages followed, call by call, by the
assistant message (content + tool calls) and one tool message per call with ``json.dumps(result,
ensure_ascii=False)`` — the same construction as beat.Beat.run. The encoding costs O(messages) per beat, with an
identity fast path (history messages are shared objects).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

from ..llm.types import ChatMessage


def sha(text: str) -> str:
    """sha256 hex of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _same(a: ChatMessage, b: ChatMessage) -> bool:
    return a is b or (a.role == b.role and a.content == b.content and not a.tool_calls and not b.tool_calls
                      and a.tool_call_id is None and b.tool_call_id is None)


def encode_sent(messages: list[ChatMessage], system: str, history: list[ChatMessage], tools: list[str]) -> dict[str, Any]:
    """``{"system": sha256 | None, "parts": [...], "tools": [names]}`` for a first call's ``messages``: ``parts``
    holds ``["sys"]`` for the system message equal to ``system``, ``["h", start, end]`` for ``history[start:end]``
    (end exclusive) and OpenAI-style dicts for anything else, in order."""
    parts: list[Any] = []
    j = 0
    n = len(history)
    where: Optional[dict[int, int]] = None  # built only when a message is not the next history message
    i0 = 1 if messages and messages[0].role == "system" and messages[0].content == system else 0
    if i0:
        parts.append(["sys"])
    # the usual case: the whole history follows as is (list equality compares identical objects in C first)
    if n and messages[i0:i0 + n] == history:
        parts.append(["h", 0, n])
        i0, j = i0 + n, n
    for m in messages[i0:]:
        k = j if j < n and (history[j] is m or _same(m, history[j])) else None
        if k is None and j < n:  # (past the history's end — the new words — nothing to look up)
            if where is None:  # history messages are shared objects: find them by identity
                where = {id(h): x for x, h in enumerate(history)}
            k = where.get(id(m))
        if k is not None:
            if parts and isinstance(parts[-1], list) and parts[-1][0] == "h" and parts[-1][2] == k:
                parts[-1][2] = k + 1
            else:
                parts.append(["h", k, k + 1])
            j = k + 1
            continue
        parts.append(m.to_openai())
    return {"system": sha(system), "parts": parts, "tools": list(tools)}


def decode_sent(sent: dict[str, Any], system: Optional[str], history: list[ChatMessage]) -> list[dict[str, Any]]:
    """The first call's messages as OpenAI dicts. ``system``: the chat's system prompt now; when its sha256 differs
    from the recorded one (the card was edited since) the system message says so instead of showing a wrong text."""
    out: list[dict[str, Any]] = []
    for p in sent.get("parts", []):
        if isinstance(p, dict):
            out.append(p)
        elif p[0] == "sys":
            if system is not None and sha(system) == sent.get("system"):
                out.append({"role": "system", "content": system})
            else:
                out.append({"role": "system", "content": f"（系统提示词在这之后改过，原文未保存；sha256 {sent.get('system', '')[:12]}…）"})
        elif p[0] == "h":
            out.extend(m.to_openai() for m in history[p[1]:p[2]])
    return out


def rebuild_calls(first: list[dict[str, Any]], calls: list[Any], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every call of a beat: ``[{"round", "request": {"messages", "tools"}, "reply": {...}, "usage", "model", "ms",
    "error"}]`` from the first call's messages and the beat's call logs (session.CallLog)."""
    msgs = list(first)
    out = []
    for c in calls:
        reply = {"content": c.content, "reasoning": c.reasoning, "finish_reason": c.finish_reason,
                 "tool_calls": [{"id": t.id, "name": t.name, "arguments": t.arguments, "result": t.result, "ok": t.ok}
                                for t in c.tool_calls]}
        out.append({"round": c.round, "purpose": "actor", "request": {"messages": list(msgs), "tools": tools},
                    "reply": reply, "usage": dict(c.usage), "model": c.model, "ms": c.ms, "error": c.error})
        if not c.tool_calls:
            break
        a: dict[str, Any] = {"role": "assistant", "content": c.content,
                             "tool_calls": [{"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}}
                                            for t in c.tool_calls]}
        msgs.append(a)
        for t in c.tool_calls:
            msgs.append({"role": "tool", "content": json.dumps(t.result, ensure_ascii=False), "tool_call_id": t.id})
    return out


def tool_specs_for(names: list[str]) -> list[dict[str, Any]]:
    """The OpenAI tool specs for tool names as a beat offered them (role-play tools, agent file tools,
    memory_search), built the way beat.Beat._tool_specs builds them."""
    from ..memory.search import memory_tool_spec
    from ..story.workspace import AGENT_FILE_TOOLS
    from ..beat.tools import TOOLS_BY_NAME, schema_of, tool_specs

    names = list(names)
    if all(n in TOOLS_BY_NAME for n in names):
        return tool_specs(tuple(names))
    extra = {sp.name: sp for sp in AGENT_FILE_TOOLS}
    ms = memory_tool_spec()
    extra[ms.name] = ms
    out = []
    for n in names:
        sp = extra.get(n) or TOOLS_BY_NAME.get(n)
        if sp is not None:
            out.append({"type": "function", "function": {"name": sp.name, "description": sp.description,
                                                         "parameters": schema_of(sp.args)}})
    return out
