"""The final (定稿) of a beat: the draft, plus the format blocks the model put in the text channel.

Seed 000, 稿纸之外的输出: models often write the prose with draft_write but emit the status bar or other format
blocks as plain text. The final keeps the draft as its body and adds back only *format* content from the text
channel; free text — chatter, or prose that restates the draft — is dropped. Golden: ``merge_final_text.json``.

A format block is a tag block ``<name …>…</name>`` (ASCII or CJK tag names, e.g. ``<status>``, ``<状态栏>``) or
a fenced code block (```…```), the shapes status bars and SillyTavern regex scripts key on.
"""

from __future__ import annotations

import re
from typing import Callable

#: An opening or closing tag: ``<name …>`` / ``</name …>`` (ASCII or CJK names).
_TAG = re.compile(r"<(/?)([A-Za-z_\u4e00-\u9fff][\w.\-\u4e00-\u9fff]*)(?:\s[^<>]*)?>")


def _tag_block_ends(text: str) -> dict[int, int]:
    """For each opening tag of ``text`` that is closed, its offset → the end (exclusive) of its matching closing
    tag, nested tags of the same name allowed (a stack per name). One pass over the tags: linear (issue 29 §1 —
    searching for the close from every unclosed opening tag was quadratic on a reply of repeated ``<think>``)."""
    stacks: dict[str, list[int]] = {}
    ends: dict[int, int] = {}
    for m in _TAG.finditer(text):
        if m.group(1):
            open_ = stacks.get(m.group(2))
            if open_:
                ends[open_.pop()] = m.end()
        else:
            stacks.setdefault(m.group(2), []).append(m.start())
    return ends


def format_blocks(text: str) -> list[tuple[int, int]]:
    """Spans (code point offsets) of the top-level format blocks in ``text``, in order: closed tag blocks
    (:func:`_tag_block_ends`) and fenced blocks (```` ``` ```` to the next ```` ``` ````). Linear in ``text``."""
    ends = _tag_block_ends(text) if "<" in text else {}
    starts = sorted(ends)  # the only tags that can start a block: the closed ones
    spans: list[tuple[int, int]] = []
    pos, k, n = 0, 0, len(text)
    fe = -2  # the next "```" at or after pos (-1: none left, -2: not searched yet); searched again once passed
    while pos < n:
        while k < len(starts) and starts[k] < pos:
            k += 1
        lt = starts[k] if k < len(starts) else -1
        if fe == -2 or 0 <= fe < pos:
            fe = text.find("```", pos)
        if lt >= 0 and (fe < 0 or lt < fe):
            spans.append((lt, ends[lt]))
            pos = ends[lt]
            continue
        if fe < 0:
            break
        close = text.find("```", fe + 3)
        if close < 0:  # no fence closes after this one, so none after a later one either: tags only from here
            fe = -1
            continue
        spans.append((fe, close + 3))
        pos = close + 3
    return spans


def format_tail_start(tail: str) -> int:
    """Offset of the first format block in ``tail``, or -1 when it has none."""
    spans = format_blocks(tail)
    return spans[0][0] if spans else -1


def format_content_only(text: str) -> str:
    """Only the format blocks of ``text``, joined by a blank line (free text between them dropped)."""
    return "\n\n".join(text[s:e] for s, e in format_blocks(text))


def trim_content_body_repeat(draft: str, inner: str) -> str:
    """Inside a ``<content>`` block the model may restate the draft: drop the restated part, keep any increment."""
    i = inner.strip()
    if not i or i in draft:
        return ""
    if i.startswith(draft):
        return i[len(draft) :].strip()
    return inner


def dedupe_identical_blocks(text: str) -> str:
    """Remove a format block that repeats an earlier identical one (with the blank lines before it); all other text
    is left byte for byte."""
    seen: set[str] = set()
    out: list[str] = []
    pos = 0
    for s, e in format_blocks(text):
        block = text[s:e]
        if block in seen:
            head = text[pos:s].rstrip("\n") if not text[pos:s].strip() else text[pos:s]
            out.append(head)
        else:
            seen.add(block)
            out.append(text[pos:e])
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _content_bodies_replaced(text: str, fn: Callable[[str], str]) -> str:
    """``text`` with each ``<content>…</content>`` (the first close after each open) replaced by ``fn(body)``.
    Literal searches, linear (``<content>([\\s\\S]*?)</content>`` searched to the end from every unclosed open)."""
    out: list[str] = []
    pos = 0
    while (i := text.find("<content>", pos)) >= 0:
        j = text.find("</content>", i + 9)
        if j < 0:
            break  # no close after this open, so none after a later one
        out += [text[pos:i], fn(text[i + 9:j])]
        pos = j + 10
    out.append(text[pos:])
    return "".join(out)


def merge_final_text(draft: str, text: str) -> str:
    """Merge the draft with the text channel (seed 000 mergeFinalText).

    - no draft: the text itself (identical format blocks deduplicated);
    - text empty, equal to the draft, or contained in it: the draft;
    - otherwise only the part after the draft (when the text starts with it) is looked at, and only its format
      blocks are kept (a restated ``<content>`` body is trimmed), appended after a blank line.
    Both inputs are compared trimmed; the result starts with the trimmed draft.
    """
    d = draft.strip()
    t = text.strip()
    if not d:
        return dedupe_identical_blocks(t)
    if not t or d == t or t in d:
        return d
    tail = t[len(d) :] if t.startswith(d) else t
    start = format_tail_start(tail)
    if start < 0:
        return d

    def _trim(body: str) -> str:
        trimmed = trim_content_body_repeat(d, body)
        return f"<content>{trimmed}</content>" if trimmed else ""

    part = _content_bodies_replaced(format_content_only(tail[start:]), _trim)
    part = re.sub(r"\n{3,}", "\n\n", part).strip()
    return dedupe_identical_blocks("\n\n".join(x for x in (d, part) if x))


def final_text(draft: str, merged: str) -> str:
    """The final as stored: the draft byte for byte, plus whatever the merge added after the trimmed draft
    (seed 000, engine.ts 1189-1196: the merge may add material but never rewrites the artifact)."""
    if not draft:
        return merged
    d = draft.strip()
    return draft + (merged[len(d) :] if merged.startswith(d) else "")
