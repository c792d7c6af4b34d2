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

from ..beat.loop import ECHO_ERROR_PREFIX, echo_nudge
from ..beat.text_calls import find_text_calls, is_text_call
from ..beat.tools import sets as _tool_sets  # noqa: F401  (declares every tool)
from ..beat.tools.registry import get_tool, spec_language, tool_specs
from ..ledger.mvu import MvuState, apply_ops, parse_update_blocks
from ..ledger.panels import panels_with_data
from ..ledger.scribe import scribe_system_prompt, scribe_user_text
from ..ledger.state import WorldState
from ..llm.types import ChatMessage
from ..messages import message
from .assemble import HistoryCache


def sha(text: str) -> str:
    """sha256 hex of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _same(a: ChatMessage, b: ChatMessage) -> bool:
    return a is b or (a.role == b.role and a.content == b.content and not a.tool_calls and not b.tool_calls
                      and a.tool_call_id is None and b.tool_call_id is None)


def encode_sent(messages: list[ChatMessage], system: str, history: list[ChatMessage], tools: list[str],
                language: str = "zh") -> dict[str, Any]:
    """``{"system": sha256 | None, "parts": [...], "tools": [names]}`` for a first call's ``messages``: ``parts``
    holds ``["sys"]`` for the system message equal to ``system``, ``["h", start, end]`` for ``history[start:end]``
    (end exclusive) and OpenAI-style dicts for anything else, in order. A chat not in Chinese adds ``"lang"``
    (the language its tool texts and notes were sent in, :func:`..beat.tools.registry.spec_language`)."""
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
    out: dict[str, Any] = {"system": sha(system), "parts": parts, "tools": list(tools)}
    if spec_language(language) != "zh":
        out["lang"] = spec_language(language)
    return out


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


def _sent_content(c: Any) -> str:
    """The assistant content a call log's reply went back to the model with: the reply as written, less the calls
    it wrote as text (those were sent back as tool calls, :mod:`core.beat.text_calls`)."""
    content: str = c.content
    if not any(is_text_call(t.id) for t in c.tool_calls):
        return content
    offered = {t.name: sp for t in c.tool_calls if (sp := get_tool(t.name)) is not None}
    return find_text_calls(c.content, offered)[1]


def rebuild_calls(first: list[dict[str, Any]], calls: list[Any], tools: list[dict[str, Any]],
                  language: str = "zh") -> list[dict[str, Any]]:
    """Every call of a beat: ``[{"round", "request": {"messages", "tools"}, "reply": {...}, "usage", "model", "ms",
    "error"}]`` from the first call's messages and the beat's call logs (session.CallLog); ``language``: the one
    the beat's notes were sent in (``sent["lang"]``)."""
    msgs = list(first)
    out = []
    for c in calls:
        reply = {"content": c.content, "reasoning": c.reasoning, "finish_reason": c.finish_reason,
                 "tool_calls": [{"id": t.id, "name": t.name, "arguments": t.arguments, "result": t.result, "ok": t.ok,
                                 **({"from_text": True} if is_text_call(t.id) else {})}
                                for t in c.tool_calls]}
        out.append({"round": c.round, "purpose": "actor", "request": {"messages": list(msgs), "tools": tools},
                    "reply": reply, "usage": dict(c.usage), "model": c.model, "ms": c.ms, "error": c.error})
        if not c.tool_calls:
            kind = (c.error or "")[len(ECHO_ERROR_PREFIX):] if (c.error or "").startswith(ECHO_ERROR_PREFIX) else ""
            if not kind:
                break
            # an echo caught before sealing (issue 30 §1): the retry went out with the nudge after the user's words
            i = next((k for k in range(len(msgs) - 1, -1, -1) if msgs[k].get("role") == "user"), None)
            if i is not None and isinstance(msgs[i].get("content"), str):
                msgs[i] = {**msgs[i], "content": f"{msgs[i]['content']}\n\n{echo_nudge(kind, language)}"}
            continue
        a: dict[str, Any] = {"role": "assistant", "content": _sent_content(c),
                             "tool_calls": [{"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}}
                                            for t in c.tool_calls]}
        msgs.append(a)
        for t in c.tool_calls:
            msgs.append({"role": "tool", "content": json.dumps(t.result, ensure_ascii=False), "tool_call_id": t.id})
    return out


def tool_specs_for(names: list[str], language: str = "zh") -> list[dict[str, Any]]:
    """The OpenAI tool specs for tool names as a beat offered them (a set of core.beat.tools.sets), in that order
    and byte for byte as the beat sent them (core.beat.tools.registry.tool_specs, in ``language``); names no tool
    has any more are left out."""
    return tool_specs(tuple(n for n in names if get_tool(n) is not None), language)


# -- rebuilding a beat's calls from the tree (the inspector dialog, ``liyuan inspect``) ---------------------------
def beat_of_item(tree: Any, entry_id: str) -> Any:
    """The beat entry behind a transcript item of ``tree`` (a session.SessionTree): a draft item is the beat; a
    reply names its beat; a user message → the newest beat below it on the shown branch (else its newest beat
    child). Raises KeyError for an unknown id, ValueError for an item without model calls."""
    e = tree.get(entry_id)
    if e.type == "beat":
        return e
    if e.type == "assistant":
        if e.beat and e.beat in tree.entries:
            return tree.get(e.beat)
        cur = e
        while cur.parent_id is not None:
            cur = tree.get(cur.parent_id)
            if cur.type == "beat":
                return cur
        raise ValueError(message("inspect.reply_no_calls"))
    if e.type == "user":
        path = tree.path_to()
        ids = [x.id for x in path]
        if e.id in ids:
            beats = [x for x in path[ids.index(e.id) + 1:] if x.type == "beat"]
            nxt = next((x for x in path[ids.index(e.id) + 1:] if x.type == "user"), None)
            if nxt is not None:
                beats = [x for x in beats if ids.index(x.id) < ids.index(nxt.id)]
            if beats:
                return beats[-1]
        kids = [k for k in tree.children(e.id) if k.type == "beat"]
        if kids:
            return kids[-1]
    raise ValueError(message("inspect.no_calls"))


def inspect_calls(tree: Any, beat: Any, system: str) -> list[dict[str, Any]]:
    """Every actor call of ``beat`` exactly as sent (:func:`rebuild_calls`), its history rebuilt from the tree and
    ``system`` the chat's system prompt of the beat's mode; beats without a ``sent`` record get ``"request": None``.
    When the beat's prompt evaluated templates (EJS, TavernHelper macros), the first call has ``"templates"``:
    ``[{"label", "output", "error"?}]`` — where each came from and what it rendered to ('' = dropped). Every call
    has ``"play_mode"`` ("tools" / "prose", issue 18 §2) and, for a beat ended early, ``"cut"`` ("length" /
    "repetition")."""
    if beat.sent:
        lang = str(beat.sent.get("lang") or "zh")
        hist = HistoryCache(lang).update(tree.path_to(beat.parent_id)).prompt_messages()
        calls = rebuild_calls(decode_sent(beat.sent, system, hist), beat.calls,
                              tool_specs_for(beat.sent.get("tools") or [], lang), lang)
    else:
        calls = [dict(c, request=None) for c in rebuild_calls([], beat.calls, [])]
    templates = getattr(beat, "templates", None)  # an extra key of the beat entry (chat.templates.finish)
    if calls and templates:
        calls[0]["templates"] = list(templates)
    for c in calls:  # how the beat played (issue 18 §2): "prose" (prose-only, no tools) or "tools"; why it was cut
        c["play_mode"] = getattr(beat, "play_mode", None) or "tools"
        if getattr(beat, "cut", None):
            c["cut"] = beat.cut
    return calls


def inspect_scribe(tree: Any, beat: Any, *, persona: str, char: str, card_panels: list[Any], mvu_initial: Any,
                   mvu_rules: str, agent: bool, model_name: str) -> Optional[dict[str, Any]]:
    """The scribe's call after ``beat`` as a call dict (``"purpose": "scribe"``), its prompts rebuilt by the
    scribe's own functions from the ledger before the beat; None when the beat has no kept reply with a scribe
    snapshot. ``card_panels``: the card's panels (templates, initial data); ``mvu_initial``: the card's raw
    initial variable tree or None; ``agent``: agent mode (the scribe read chapters, not the user's words);
    ``model_name``: the label when the snapshot does not name the model that answered (snapshots before issue 18)."""
    reply = next((k for k in tree.children(beat.id) if k.type == "assistant"), None)
    if reply is None:
        return None
    snap = next((k for k in tree.children(reply.id) if k.type == "rp-state" and k.source == "scribe"), None)
    if snap is None:
        return None
    before_path = tree.path_to(beat.parent_id)
    prev = next((x for x in reversed(before_path) if x.type == "rp-state"), None)
    state = WorldState.model_validate(prev.state) if prev else WorldState()
    # mvu / panels / *_warnings are optional extra keys of a snapshot (absent on most): read with a default
    warnings = (list(prev.warnings) + list(getattr(prev, "mvu_warnings", None) or [])) if prev and prev.source == "scribe" else []
    mvu = None
    if getattr(snap, "mvu", None) is not None:
        mv = next((x for x in reversed(before_path) if x.type == "rp-state" and getattr(x, "mvu", None) is not None), None)
        mvu = MvuState.from_any(mv.mvu) if mv else (MvuState.initial(mvu_initial) if mvu_initial is not None else None)
        if getattr(snap, "mvu_actor_applied", None) and mvu is not None:  # the actor's own blocks came first
            mvu = apply_ops(mvu, parse_update_blocks(beat.draft)).state
    panels = None
    if getattr(snap, "panels", None) is not None:
        pv = next((x for x in reversed(before_path) if x.type == "rp-state" and isinstance(getattr(x, "panels", None), dict)), None)
        panels = [p for p in (panels_with_data(card_panels, pv.panels) if pv else card_panels) if p.data] or None
        if panels and prev is not None and prev.source == "scribe":
            warnings += list(getattr(prev, "panel_warnings", None) or [])
    user = next((x for x in reversed(before_path) if x.type == "user"), None)
    user_text = "" if agent else (user.text if user else "")
    language = getattr(snap, "language", None) or "zh"
    system = scribe_system_prompt(state, persona, char, mvu, panels, language)
    text = scribe_user_text(state, persona, char, user_text, reply.text, warnings, mvu, panels, mvu_rules, language)
    return {"round": len(beat.calls) + 1, "purpose": "scribe",
            "request": {"messages": [{"role": "system", "content": system}, {"role": "user", "content": text}], "tools": []},
            "reply": {"content": snap.raw or "", "reasoning": "", "finish_reason": None, "tool_calls": []},
            # the snapshot keeps the real call's usage and model (older snapshots: none, the chat's scribe model)
            "usage": dict(getattr(snap, "scribe_usage", None) or {}),
            "model": getattr(snap, "scribe_model", None) or model_name, "ms": 0.0, "error": None,
            "applied": list(snap.applied), "warnings": list(snap.warnings)}
