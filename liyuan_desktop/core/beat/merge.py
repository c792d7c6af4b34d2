"""The final (定稿) of a beat: the draft, plus the format blocks the model put in the text channel.

Seed 000, 稿纸之外的输出: models often write the prose with draft_write but emit the status bar or other format
blocks as plain text. The final keeps the draft as its body and adds back only *format* content from the text
channel; free text — chatter, or prose that restates the draft — is dropped. Golden: ``merge_final_text.json``.

A format block is a tag block ``<name …>…</name>`` (ASCII or CJK tag names, e.g. ``<status>``, ``<状态栏>``) or
a fenced code block (```…```), the shapes status bars and SillyTavern regex scripts key on.
"""

from __future__ import annotations

import re

_TAG_OPEN = re.compile(r"<([A-Za-z_\u4e00-\u9fff][\w.\-\u4e00-\u9fff]*)(?:\s[^<>]*)?>")
_FENCE = re.compile(r"```")


def _block_end(text: str, start: int) -> int:
    """End (exclusive) of the format block starting at ``start``, or -1 if it is not a closed block."""
    if text.startswith("```", start):
        close = text.find("```", start + 3)
        return -1 if close < 0 else close + 3
    m = _TAG_OPEN.match(text, start)
    if not m:
        return -1
    name = m.group(1)
    # Find the matching close tag, allowing nested tags of the same name.
    depth = 1
    pos = m.end()
    pattern = re.compile(r"<(/?)" + re.escape(name) + r"(?:\s[^<>]*)?>")
    while depth:
        n = pattern.search(text, pos)
        if not n:
            return -1
        depth += -1 if n.group(1) else 1
        pos = n.end()
    return pos


def format_blocks(text: str) -> list[tuple[int, int]]:
    """Spans (code point offsets) of the top-level format blocks in ``text``, in order."""
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos < n:
        lt = text.find("<", pos)
        fe = text.find("```", pos)
        cands = [c for c in (lt, fe) if c >= 0]
        if not cands:
            break
        start = min(cands)
        end = _block_end(text, start)
        if end < 0:
            pos = start + 1
            continue
        spans.append((start, end))
        pos = end
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


_CONTENT = re.compile(r"<content>([\s\S]*?)</content>")


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

    def _trim(m: re.Match[str]) -> str:
        trimmed = trim_content_body_repeat(d, m.group(1))
        return f"<content>{trimmed}</content>" if trimmed else ""

    part = _CONTENT.sub(_trim, format_content_only(tail[start:]))
    part = re.sub(r"\n{3,}", "\n\n", part).strip()
    return dedupe_identical_blocks("\n\n".join(x for x in (d, part) if x))


def final_text(draft: str, merged: str) -> str:
    """The final as stored: the draft byte for byte, plus whatever the merge added after the trimmed draft
    (seed 000, engine.ts 1189-1196: the merge may add material but never rewrites the artifact)."""
    if not draft:
        return merged
    d = draft.strip()
    return draft + (merged[len(d) :] if merged.startswith(d) else "")
