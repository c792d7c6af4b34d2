"""The draft (稿纸): the artifact a beat is written on, with versions, targeted edits and seal.

Seed 000, 稿纸：正文能定点改 and 收笔就结束这一轮. Every write carries the version it was based on; a stale version
changes nothing. Offsets the model sees are UTF-16 code units (JavaScript string offsets), end exclusive.
Edits are found in the original text — exactly, or with limited matching (trimmed ends, same-length punctuation
variants such as full/half width) — and spliced into the original, never into a normalised copy.

Refusals are :class:`~core.errors.ToolError` (nothing changed) with a stable ``code``: ``stale_version``,
``sealed``, ``not_found``, ``not_unique``, ``overlap``, ``empty_old``, ``no_change``, ``empty_draft``, ``bad_range``,
``bad_args``; ``message`` is Chinese text the model can act on.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import ToolError
from ..text import canon_punct, utf16_len, utf16_span
from .events import DraftChanged

MATCH_LEVELS = ("exact", "trimmed", "punct", "trimmed+punct")


@dataclass
class _Span:
    start: int  # code point offsets in the original text
    end: int
    new: str
    level: str
    index: int


def _find_all(hay: str, needle: str, overlapping: bool = True) -> list[int]:
    """Start offsets of ``needle`` in ``hay``. Overlapping occurrences count (「哈哈」 is twice in 「哈哈哈」), which is
    what uniqueness of an edit reference needs; search hits use non-overlapping ones."""
    out: list[int] = []
    if not needle:
        return out
    step = 1 if overlapping else len(needle)
    i = hay.find(needle)
    while i >= 0:
        out.append(i)
        i = hay.find(needle, i + step)
    return out


def _locate(text: str, canon_text: str, old: str, index: int) -> tuple[int, int, str]:
    """Find ``old`` once in ``text``. Returns (start, end, level) in code points, or raises ToolError."""
    hits = _find_all(text, old)
    if len(hits) == 1:
        return hits[0], hits[0] + len(old), "exact"
    if len(hits) > 1:
        raise ToolError("not_unique", f"第 {index + 1} 处引用在稿件中出现 {len(hits)} 次，不唯一；请带上前后更多原文使它唯一。整批未改。",
                        en=f"Quote {index + 1} occurs {len(hits)} times in the draft, not once; include more of the text around it to make it unique. Nothing was changed.", edit=index, count=len(hits))
    stripped = old.strip()
    candidates: list[tuple[str, str]] = []
    if stripped and stripped != old:
        candidates.append((stripped, "trimmed"))
    candidates.append((old, "punct"))
    if stripped and stripped != old:
        candidates.append((stripped, "trimmed+punct"))
    for probe, level in candidates:
        if level == "trimmed":
            found = _find_all(text, probe)
        else:
            found = _find_all(canon_text, canon_punct(probe))
        if len(found) == 1:
            return found[0], found[0] + len(probe), level
        if len(found) > 1:
            raise ToolError("not_unique", f"第 {index + 1} 处引用（{level} 匹配）在稿件中出现 {len(found)} 次，不唯一；请带上前后更多原文。整批未改。",
                            en=f"Quote {index + 1} ({level} match) occurs {len(found)} times in the draft, not once; include more of the text around it. Nothing was changed.", edit=index, count=len(found))
    raise ToolError("not_found", f"第 {index + 1} 处引用在稿件中找不到：{old[:40]!r}。请先用 draft_search/draft_read 取精确原文。整批未改。",
                    en=f"Quote {index + 1} is not in the draft: {old[:40]!r}. Take the exact text with draft_search/draft_read first. Nothing was changed.", edit=index)


def _adjust_new(old: str, new: str, level: str) -> str:
    """When ends were trimmed to match, drop the same leading/trailing whitespace from ``new`` if it repeats it."""
    if "trimmed" not in level:
        return new
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()) :]
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if trail and new.endswith(trail):
        new = new[: len(new) - len(trail)]
    return new


def apply_edits(text: str, edits: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """Apply a batch of ``{"old", "new"}`` edits to ``text``, all located against the same original.

    Returns (new text, match level per edit). Raises :class:`ToolError` — and changes nothing — when an ``old`` is
    empty, missing, not unique, overlaps another, or when the batch changes nothing.
    Shared by ``draft_edit`` and ``previous_draft_edit`` (seed 000, 稿纸 and 上一轮能原位改).
    """
    if not isinstance(edits, list) or not edits:
        raise ToolError("bad_args", "edits 必须是至少一项的数组，每项 {old, new}。",
                        en="edits must be an array of at least one {old, new} item.")
    canon = canon_punct(text)
    spans: list[_Span] = []
    for i, e in enumerate(edits):
        if not isinstance(e, dict) or not isinstance(e.get("old"), str) or not isinstance(e.get("new"), str):
            raise ToolError("bad_args", f"第 {i + 1} 项必须是 {{\"old\": 字符串, \"new\": 字符串}}。整批未改。",
                            en=f"Item {i + 1} must be {{\"old\": string, \"new\": string}}. Nothing was changed.", edit=i)
        old, new = e["old"], e["new"]
        if not old:
            raise ToolError("empty_old", f"第 {i + 1} 项的 old 为空；续写请用 draft_append。整批未改。",
                            en=f"Item {i + 1} has an empty old; to write on, use draft_append. Nothing was changed.", edit=i)
        s, t, level = _locate(text, canon, old, i)
        spans.append(_Span(s, t, _adjust_new(old, new, level), level, i))
    ordered = sorted(spans, key=lambda sp: (sp.start, sp.end))
    for a, b in zip(ordered, ordered[1:]):
        if b.start < a.end:
            raise ToolError("overlap", f"第 {a.index + 1} 与第 {b.index + 1} 处引用重叠；请合并成一处再改。整批未改。",
                            en=f"Quotes {a.index + 1} and {b.index + 1} overlap; merge them into one edit. Nothing was changed.", edits=[a.index, b.index])
    out: list[str] = []
    pos = 0
    for sp in ordered:
        out.append(text[pos : sp.start])
        out.append(sp.new)
        pos = sp.end
    out.append(text[pos:])
    result = "".join(out)
    if result == text:
        raise ToolError("no_change", "这批修改不改变任何文字（new 与原文相同）。",
                        en="These edits change no text (new is the same as the original).")
    return result, [sp.level for sp in spans]


def _cp_to_u16(text: str, cp: int) -> int:
    return utf16_len(text[:cp])


class Draft:
    """The current beat's draft: ``text``, ``version`` (0 before the first write, +1 per successful write/append/
    edit), ``sealed`` (frozen after :meth:`seal`). Every mutating method checks ``version`` first and raises
    :class:`ToolError` on any conflict, leaving the draft untouched. Results are the tool results the model sees
    (golden ``round1.json``: ``{"ok": true, "version": 1, "chars": 259}`` where chars are UTF-16 units)."""

    def __init__(self, text: str = "", version: int = 0, sealed: bool = False):
        self.text = text
        self.version = version
        self.sealed = sealed
        #: Writes made by the model itself (not by stray-text capture).
        self.explicit_writes = 0

    # -- guards ---------------------------------------------------------------------------------------------
    def _check(self, version: Any) -> None:
        if self.sealed:
            raise ToolError("sealed", "本拍稿件已收笔，不能再改。",
                            en="This beat's draft is sealed and cannot be changed.", version=self.version)
        if not isinstance(version, int) or isinstance(version, bool) or version != self.version:
            raise ToolError(
                "stale_version",
                f"版本冲突：你基于版本 {version!r}，稿件当前是版本 {self.version}。先 draft_read 取最新原文再改。",
                en=f"Version conflict: you wrote against version {version!r}, the draft is at version {self.version}. "
                   "Take the latest text with draft_read, then edit.",
                version=self.version,
            )

    def changed(self, by: str = "model") -> DraftChanged:
        """The event that shows the draft as it is now (``by``: model | capture | resume); chars in UTF-16 units."""
        return DraftChanged(text=self.text, version=self.version, chars=utf16_len(self.text), sealed=self.sealed, by=by)

    def _ok(self) -> dict[str, Any]:
        return {"ok": True, "version": self.version, "chars": utf16_len(self.text)}

    # -- tools ----------------------------------------------------------------------------------------------
    def write(self, version: Any, content: Any) -> dict[str, Any]:
        """Create or replace the whole draft. Result ``{"ok", "version", "chars"}``."""
        self._check(version)
        if not isinstance(content, str):
            raise ToolError("bad_args", "content 必须是字符串（完整稿件原文）。",
                            en="content must be a string (the whole draft text).", version=self.version)
        self.text = content
        self.version += 1
        return self._ok()

    def append(self, version: Any, content: Any, separator: Any = "\n\n") -> dict[str, Any]:
        """Append ``content`` after ``separator`` (default two newlines, may be ""; none when the draft is empty)."""
        self._check(version)
        if not isinstance(content, str) or not isinstance(separator, str):
            raise ToolError("bad_args", "content 与 separator 必须是字符串。",
                            en="content and separator must be strings.", version=self.version)
        self.text = content if not self.text else self.text + separator + content
        self.version += 1
        return self._ok()

    def read(self, start: Any = None, end: Any = None) -> dict[str, Any]:
        """Exact text and version; ``start``/``end`` are UTF-16 offsets from 0, end exclusive, both optional.
        Without a range: ``{"version", "content"}``; with one, also ``start``, ``end`` and ``total`` (UTF-16)."""
        return read_text(self.text, self.version, start, end)

    def search(self, query: Any, limit: Any = 20) -> dict[str, Any]:
        """Literal search; see :func:`search_text`."""
        return search_text(self.text, self.version, query, limit)

    def edit(self, version: Any, edits: Any) -> dict[str, Any]:
        """Batch edit against one version (:func:`apply_edits`). Result ``{"ok", "version", "chars"}`` plus
        ``"matches": [level…]`` when any edit needed limited matching."""
        self._check(version)
        new_text, levels = apply_edits(self.text, edits)
        self.text = new_text
        self.version += 1
        res = self._ok()
        if any(lv != "exact" for lv in levels):
            res["matches"] = levels
        return res

    def seal(self, version: Any) -> dict[str, Any]:
        """Freeze the current version. Refused for a stale version or an empty draft."""
        self._check(version)
        if not self.text.strip():
            raise ToolError("empty_draft", "稿件还是空的，不能收笔；先用 draft_write 写正文。",
                            en="The draft is still empty and cannot be sealed; write the prose with draft_write first.", version=self.version)
        self.sealed = True
        return {"ok": True, "sealed": True, "version": self.version}


def read_text(text: str, version: int, start: Any = None, end: Any = None) -> dict[str, Any]:
    """Shared by draft_read and previous_draft_read. Raises ``bad_range`` for negative or non-integer offsets."""
    if start is None and end is None:
        return {"version": version, "content": text}
    total = utf16_len(text)
    for name, v in (("start", start), ("end", end)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise ToolError("bad_range", f"{name} 必须是不小于 0 的整数（UTF-16 偏移）。",
                            en=f"{name} must be an integer of at least 0 (a UTF-16 offset).", total=total)
    s = start or 0
    e = total if end is None else min(end, total)
    if s > e:
        raise ToolError("bad_range", f"start {s} 大于 end {e}（全文 {total} 个 UTF-16 单位）。",
                        en=f"start {s} is past end {e} (the text has {total} UTF-16 units).", total=total)
    content, s, e = utf16_span(text, s, e)
    return {"version": version, "content": content, "start": s, "end": e, "total": total}


def search_text(text: str, version: int, query: Any, limit: Any = 20) -> dict[str, Any]:
    """Literal search. Result ``{"version", "total", "hits": [{"start", "end", "text", "context"}]}`` with UTF-16
    offsets; ``text`` is the exact original (usable as draft_edit ``old``). When there is no exact hit, hits found
    with same-length punctuation variants are returned and flagged ``"level": "punct"``. ``limit`` 1..50."""
    if not isinstance(query, str) or not query:
        raise ToolError("bad_args", "query 必须是非空字符串。", en="query must be a non-empty string.")
    if not isinstance(limit, int) or isinstance(limit, bool):
        limit = 20
    limit = max(1, min(50, limit))
    level = "exact"
    hits = _find_all(text, query, overlapping=False)
    if not hits:
        hits = _find_all(canon_punct(text), canon_punct(query), overlapping=False)
        level = "punct"
    out = []
    for h in hits[:limit]:
        e = h + len(query)
        ls = text.rfind("\n", 0, h) + 1
        le = text.find("\n", e)
        le = len(text) if le < 0 else le
        ctx = text[max(ls, h - 30) : min(le, e + 30)]
        item = {"start": _cp_to_u16(text, h), "end": _cp_to_u16(text, e), "text": text[h:e], "context": ctx}
        if level != "exact":
            item["level"] = level
        out.append(item)
    return {"version": version, "total": len(hits), "hits": out}


# -- the draft on disk while a beat runs (issue 15: nothing lost) ------------------------------------------------
#: The draft log's file name, beside ``session.jsonl`` in the chat folder.
DRAFT_LOG_NAME = "session.draft.jsonl"

_CONTENT_KEY = re.compile(r'"content"\s*:\s*"')
_SEPARATOR_KEY = re.compile(r'"separator"\s*:\s*"')


@dataclass
class DraftRecord:
    """The newest intact line of a draft log: the draft as it stood (``text``, ``version``), the user entry its beat
    answers (``user``), when the beat started (``started``, ms since the epoch) and whether ``text`` was rebuilt
    from a tool call still streaming (``streaming``: the tool's name, else "")."""

    user: str
    started: int
    text: str
    version: int
    streaming: str = ""


def partial_string(args: str, key_re: "re.Pattern[str]" = _CONTENT_KEY) -> Optional[str]:
    """The value of the ``content`` string in the *prefix* of a JSON object (a tool call's arguments still being
    streamed): everything after ``"content": "`` up to its closing quote or the end, a torn escape at the end
    dropped. None when the key has not arrived yet."""
    m = key_re.search(args)
    if m is None:
        return None
    body = args[m.end():]
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            break
        i += 1
    body = body[:min(i, n)]
    for cut in range(0, 7):  # a torn "\" or "\u12" at the end
        try:
            return str(json.loads('"' + body[:len(body) - cut] + '"'))  # a JSON string literal
        except ValueError:
            continue
    return ""


class DraftLog:
    """The running beat's draft on disk, so a crash (kill -9, power cut) loses at most the last second of it.

    A side file beside the session (:data:`DRAFT_LOG_NAME`), not draft entries in the session tree: the tree is
    append-only and every line is kept forever, while a draft is rewritten many times a beat and streamed text
    wants a line a second — in the tree that would multiply the file (and every later open) by the drafts' sizes;
    here the file is thrown away once the beat entry (which keeps the final draft) is on disk. Append-only JSON
    lines, each the whole draft, each ``fsync``'d: a torn last line (a crash mid-write) leaves the one before it,
    and there is no rename and no folder fsync per write, so a write costs one small append + fsync.

    :meth:`record` after each write/append/edit that changed the draft; :meth:`record_stream` while a
    ``draft_write``/``draft_append`` is still streaming (the caller throttles it); :meth:`clear` once the beat
    entry is committed; :meth:`read` (recovery on open). A refused write is logged and never breaks the beat."""

    def __init__(self, path: Path, user_id: str, started: Optional[int] = None):
        self.path = Path(path)
        self.user_id = user_id
        self.started = started if started is not None else int(time.time() * 1000)
        self.version = -1
        self.writes = 0

    def _write(self, obj: dict[str, Any]) -> None:
        line = json.dumps({"user": self.user_id, "started": self.started, **obj}, ensure_ascii=False) + "\n"
        try:
            with open(self.path, "ab") as f:
                f.write(line.encode("utf-8", "replace"))
                f.flush()
                os.fsync(f.fileno())
            self.writes += 1
        except OSError as e:  # disk full: the beat goes on; its entry will still keep the draft at the end
            logging.getLogger(__name__).warning("draft log not written: %s", e)

    def record(self, draft: Draft) -> None:
        """Persist ``draft`` as it is now, if its version changed since the last record."""
        if draft.version == self.version:
            return
        self.version = draft.version
        self._write({"v": draft.version, "text": draft.text})

    def record_stream(self, draft: Draft, tool: str, args: str) -> None:
        """Persist the draft a ``draft_write``/``draft_append`` still streaming would make: ``args`` is the raw
        arguments text so far (the content is read from it at recovery, :meth:`read`)."""
        self._write({"v": draft.version, "text": draft.text, "tool": tool, "args": args})

    def clear(self) -> None:
        """Remove the log (the beat entry now keeps the draft)."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass

    @staticmethod
    def read(path: Path) -> Optional[DraftRecord]:
        """The newest intact record of the log at ``path``, or None (no file, nothing intact). A streamed record's
        text is the draft the tool would have made from the arguments that had arrived."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        for raw in reversed(data.splitlines()):
            try:
                obj = json.loads(raw)
                user, started, text, version = obj["user"], int(obj["started"]), obj["text"], int(obj["v"])
            except (ValueError, KeyError, TypeError):
                continue
            if not isinstance(user, str) or not isinstance(text, str):
                continue
            tool = obj.get("tool") or ""
            if tool and isinstance(obj.get("args"), str):
                part = partial_string(obj["args"])
                if part:
                    if tool == "draft_append" and text:
                        sep = partial_string(obj["args"], _SEPARATOR_KEY)
                        text = text + ("\n\n" if sep is None else sep) + part
                    else:
                        text = part
            return DraftRecord(user=user, started=started, text=text, version=version, streaming=tool)
        return None
