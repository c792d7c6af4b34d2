"""Tool calls written as text (issue 18 follow-up): many local models put their tool call into the reply's content
instead of the ``tool_calls`` field. Seen with Qwen2.5-Coder-1.5B on llama.cpp (``tests/data/wire/tools_stream``):
a fenced block ```` ```json {"name": …, "arguments": {…}} ```` ; Hermes/Qwen chat templates teach
``<tool_call>{"name": …, "arguments": …}</tool_call>``; some models answer with a bare JSON object and nothing else.

:func:`find_text_calls` is the one parser. It recognises those three forms and turns a candidate into a real
:class:`ToolCall` ONLY when the named tool is one the beat offered and the arguments validate against that tool's
pydantic argument model (:mod:`core.beat.tools.registry`); any other JSON in prose stays prose. Slightly broken JSON
(a trailing comma, a missing closing brace) is mended with ``json_repair`` (already a dependency), but only inside
one of the three forms. A call object is ``{"name": str, "arguments": object | JSON string}`` (``"parameters"`` is
accepted for ``"arguments"``, as Llama-3 style templates write it; ``"function": str`` for ``"name"``, as a 0.5B
model wrote it, issue 30 §5); a list of such objects is several calls.

Calls made from text get ids starting with :data:`TEXT_CALL_PREFIX` (:func:`is_text_call`), so logs and the
inspector can tell them from native ones. :func:`text_call_candidates` lists every call-shaped object whatever its
validity (agent mode uses it to flag a reply that wrote an edit call that could not be run).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from pydantic import ValidationError

from ..llm.types import ToolCall
from .tools.registry import ToolSpec

__all__ = ["TEXT_CALL_PREFIX", "Candidate", "find_text_calls", "is_text_call", "text_call_candidates"]

#: Id prefix of a tool call recovered from the reply's text (native ids come from the server).
TEXT_CALL_PREFIX = "text_call_"

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|tool_call|tool_code|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
#: ``<tool_call>…</tool_call>``, or ``<tools>…</tools>`` — the tag Qwen's template puts around the tool list, which a
#: 1.5B used around its call in an agent turn of ``bench/real_model.py`` (issue 30)
_TAGGED = re.compile(r"<(?:tool_call|tools)>\s*(.*?)\s*(?:</(?:tool_call|tools)>|$)", re.DOTALL)


@dataclass(frozen=True)
class Candidate:
    """One call-shaped object found in text: ``name``, its ``arguments`` (whatever the model wrote: usually a dict),
    and the span ``start``..``end`` (character offsets into the text) of the form that carried it."""

    name: str
    arguments: Any
    start: int
    end: int


def is_text_call(call_id: str) -> bool:
    """Whether a tool call id belongs to a call recovered from the reply's text (:func:`find_text_calls`)."""
    return call_id.startswith(TEXT_CALL_PREFIX)


def _load(body: str) -> Any:
    """JSON from a form's body: strict first, then mended with json_repair; None when neither gives an object/list."""
    body = body.strip()
    if not body or body[0] not in "{[":
        return None
    try:
        return json.loads(body)
    except ValueError:
        pass
    import json_repair  # on first use (issue 15: start-up)

    try:
        obj = json_repair.loads(body)
    except Exception:  # json_repair raises on some inputs: not a call
        return None
    return obj if isinstance(obj, (dict, list)) and obj else None


def _calls_in(obj: Any) -> list[tuple[str, Any]]:
    """(name, arguments) of every call object in ``obj`` (an object, or a list of them); [] when any is not one."""
    items = obj if isinstance(obj, list) else [obj]
    out: list[tuple[str, Any]] = []
    for it in items:
        if not isinstance(it, dict):
            return []
        inner = it.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else it  # OpenAI-shaped {"function": {…}}
        name = fn.get("name")
        if name is None and isinstance(inner, str):  # {"function": "story_write", "arguments": …} (issue 30 §5)
            name = inner
        if not isinstance(name, str) or not name.strip():
            return []
        args = fn.get("arguments", fn.get("parameters", {}))
        if isinstance(args, str):  # arguments as a JSON string, like the wire format
            args = _load(args) if args.strip() else {}
        out.append((name.strip(), args))
    return out


def text_call_candidates(text: str) -> list[Candidate]:
    """Every call-shaped object in ``text`` in the three forms (module doc), in order, valid or not."""
    if not text or "{" not in text:
        return []
    found: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    for rx in (_TAGGED, _FENCE):
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            obj = _load(m.group(1))
            calls = _calls_in(obj) if obj is not None else []
            if calls:
                taken.append((m.start(), m.end()))
                found.extend(Candidate(n, a, m.start(), m.end()) for n, a in calls)
    if not found:  # a bare JSON object (or list) that is the whole reply
        s = text.strip()
        if s[:1] in "{[" and s[-1:] in "}]":
            obj = _load(s)
            if obj is not None:
                start = text.index(s[0])
                found.extend(Candidate(n, a, start, start + len(s)) for n, a in _calls_in(obj))
    return sorted(found, key=lambda c: c.start)


def _as_object(spec: ToolSpec, args: Any) -> Any:
    """Arguments a small model wrote as a list, read as the object it meant (seen from a 0.5B on llama.cpp, a30rec
    sweep): ``[{…}]`` → that object; ``["001-x.md", "text"]`` (values only) → the tool's fields in their declared
    order, when there are no more values than fields. Anything else is returned as it is (and will not validate)."""
    if not isinstance(args, list):
        return args
    if len(args) == 1 and isinstance(args[0], dict):
        return args[0]
    fields = list(spec.args.model_fields)
    if args and len(args) <= len(fields) and all(isinstance(v, (str, int, float, bool)) for v in args):
        return dict(zip(fields, args))
    return args


def _valid(spec: ToolSpec, args: Any) -> Optional[str]:
    """The arguments as JSON text when they validate against the tool's argument model (a list read as the object
    it meant first, :func:`_as_object`), else None."""
    args = _as_object(spec, args)
    if not isinstance(args, dict):
        return None
    try:
        spec.args.model_validate(args)
    except ValidationError:
        return None
    return json.dumps(args, ensure_ascii=False)


def find_text_calls(text: str, offered: Mapping[str, ToolSpec], tag: str = "") -> tuple[list[ToolCall], str]:
    """The tool calls written as text in a reply, and the reply's text without them.

    ``offered``: the tools this beat offered, by name (empty: nothing is parsed, prose-only play). A candidate
    becomes a :class:`ToolCall` (id ``text_call_<tag>_<n>``, arguments re-serialised as JSON) only when its tool is
    offered and its arguments validate; a form (fenced block, tag, bare object) is taken out of the text only when
    every call in it became a real call. Returns ``([], text)`` when nothing qualified (the text untouched)."""
    if not offered or not text:
        return [], text
    cands = text_call_candidates(text)
    if not cands:
        return [], text
    spans: dict[tuple[int, int], list[Optional[ToolCall]]] = {}
    for i, c in enumerate(cands):
        spec = offered.get(c.name)
        args = _valid(spec, c.arguments) if spec is not None else None
        call = ToolCall(id=f"{TEXT_CALL_PREFIX}{tag}_{i}" if tag else f"{TEXT_CALL_PREFIX}{i}", name=c.name,
                        arguments=args) if args is not None else None
        spans.setdefault((c.start, c.end), []).append(call)
    calls: list[ToolCall] = []
    rest = text
    for (a, b), made in sorted(spans.items(), reverse=True):
        if made and all(m is not None for m in made):
            rest = rest[:a] + rest[b:]
            calls[:0] = [m for m in made if m is not None]
    if not calls:
        return [], text
    return calls, re.sub(r"\n{3,}", "\n\n", rest).strip()
