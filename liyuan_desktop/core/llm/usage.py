"""Parse the ``usage`` object of a chat completions response into :class:`Usage`.

Shared by the HTTP client (usage from the stream's last chunk or a non-stream body) and the replay model
(usage dicts recorded in a replay file), so both count tokens the same way.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

from .types import Usage


def _int(value: Any) -> int:
    """A non-negative int from whatever the server put there (None, float, numeric string); else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float):
        return max(int(value), 0)
    if isinstance(value, str):
        try:
            return max(int(float(value.strip())), 0)
        except ValueError:
            return 0
    return 0


def _sub(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def parse_usage(raw: Optional[Mapping[str, Any]]) -> Usage:
    """Turn a server usage dict into :class:`Usage`; never raises.

    Understands the OpenAI shape (``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
    ``prompt_tokens_details.cached_tokens``, ``completion_tokens_details.reasoning_tokens``), DeepSeek's
    ``prompt_cache_hit_tokens``, and our own flat shape (``cached_tokens`` / ``reasoning_tokens`` at the top,
    as in a dumped :class:`Usage`, whose ``estimated`` flag is kept). ``total_tokens`` is computed when the server
    left it out.
    ``Usage.raw`` keeps a plain-dict copy of what the server sent. ``None`` or a non-dict gives an empty Usage.
    """
    if not isinstance(raw, Mapping):
        return Usage()
    # A dumped Usage carries its own "raw": keep the server's original object rather than nesting it.
    inner_raw = raw.get("raw")
    kept = dict(inner_raw) if isinstance(inner_raw, Mapping) and inner_raw else dict(raw)

    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    total = _int(raw.get("total_tokens")) or prompt + completion

    prompt_details = _sub(raw, "prompt_tokens_details")
    cached = _int(prompt_details.get("cached_tokens"))
    if not cached:
        cached = _int(raw.get("prompt_cache_hit_tokens"))
    if not cached:
        cached = _int(raw.get("cached_tokens"))

    completion_details = _sub(raw, "completion_tokens_details")
    reasoning = _int(completion_details.get("reasoning_tokens"))
    if not reasoning:
        reasoning = _int(raw.get("reasoning_tokens"))

    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cached_tokens=cached,
        reasoning_tokens=reasoning,
        raw=kept,
        estimated=raw.get("estimated") is True,
    )


# ----------------------------------------------------------------------------------------------------------------
# estimates, for servers that report no usage

#: Tokens per CJK (3-byte UTF-8) character and per other character, and the framing of one chat message: the same
#: shape rule as the prompt room's calibrated counter (``core/prompt/tokens.py``), which this floor room cannot
#: import; DeepSeek/Qwen/o200k-style vocabularies give 0.6–1.0 tokens per CJK character, English ~4 characters a token.
CJK_TOKENS = 0.8
OTHER_TOKENS = 0.3
MESSAGE_OVERHEAD = 4


def estimate_text_tokens(text: str) -> float:
    """Raw token estimate of ``text`` from its shape (see :data:`CJK_TOKENS`); 0.0 for "". O(len), in C."""
    if not text:
        return 0.0
    n = len(text)
    wide = max(0, (len(text.encode("utf-8", "surrogatepass")) - n) // 2)
    return wide * CJK_TOKENS + (n - wide) * OTHER_TOKENS


def estimate_usage(messages: Sequence[Mapping[str, Any]], tools: Optional[list[Any]], completion: str) -> Usage:
    """An estimated :class:`Usage` (``estimated=True``, ``raw`` empty) for a call whose server sent no usage:
    ``messages`` are the request's wire messages (``content`` and tool-call names/arguments counted, plus
    :data:`MESSAGE_OVERHEAD` each), ``tools`` the tool specs (their JSON counted), ``completion`` everything the
    model produced (text, reasoning and tool arguments joined). Counts are rounded to whole tokens."""
    prompt = 0.0
    for m in messages:
        prompt += MESSAGE_OVERHEAD + estimate_text_tokens(str(m.get("content") or ""))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                prompt += estimate_text_tokens(str(fn.get("name") or "")) + estimate_text_tokens(
                    str(fn.get("arguments") or ""))
    if tools:
        prompt += estimate_text_tokens(json.dumps(tools, ensure_ascii=False))
    p, c = round(prompt), round(estimate_text_tokens(completion))
    return Usage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c, estimated=True)
