"""The outline as a structure (issue 28): volumes → chapters → beats, edited as a tree with ``大纲.md`` as storage.

Every operation is a pure function from the outline's text to the new text (and what it made): it moves, inserts or
rewrites whole lines and leaves every other byte as it was, so notes, free text, fenced blocks and attributes the
engine does not know survive any number of edits (hand edits are simply read again). The convention is
:mod:`core.story.outline`; the links from chapters to files are :mod:`core.story.links`.

Addressing: a volume by its ``id`` or its 0-based index (:func:`find_volume`); a chapter as
:meth:`core.story.outline.Outline.find` (stable id first, then 1-based number, file, title); a beat by its chapter and
0-based index in it. Stable ids are short random hex (``c`` + 6 for chapters, ``v`` + 6 for volumes), unique in the
file, written as the heading's ``id`` attribute by :func:`ensure_ids` — which every operation here runs first, so
an outline the engine has touched has an id on every heading and the ids of headings that had one never change.

Errors: :class:`core.errors.ToolError` — ``not_found`` (no such volume/chapter/beat), ``bad_args`` (empty title,
a position out of range, a title over :data:`core.story.outline.OUTLINE_LINE_MAX` characters or with a newline).
Deleting asks first in the front ends: :func:`deletion_preview` says what would be lost (chapters, beats, note
lines, linked files) without changing anything.
"""

from __future__ import annotations

import secrets
from typing import Literal, Optional

from pydantic import Field

from ..deferred import DeferredModel
from ..errors import ToolError
from ..messages import message
from .outline import (
    OUTLINE_LINE_MAX,
    STATUSES,
    Outline,
    OutlineChapter,
    OutlineVolume,
    outline_lines,
    parse_outline,
    parse_status,
)

NodeKind = Literal["volume", "chapter", "beat"]
#: The operations :meth:`core.chat.writing_room.WritingRoom.outline_edit` (and ``Chat.edit_outline_tree``) run.
OUTLINE_OPS: tuple[str, ...] = ("add_volume", "add_chapter", "add_beat", "rename_volume", "rename_chapter",
                                "rename_beat", "move_chapter", "move_volume", "move_beat", "set_attrs", "delete")


class DeletionPreview(DeferredModel):
    """What deleting one node would lose: ``kind`` and ``title`` of the node, the ``chapters`` (titles) and
    ``beats`` (count) inside it, ``notes`` (count of other non-blank lines inside it: free text the user wrote),
    ``files`` (chapter files linked to the chapters removed — the files themselves are kept, only unlinked)."""

    kind: NodeKind
    title: str
    chapters: list[str] = Field(default_factory=list)
    beats: int = 0
    notes: int = 0
    files: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------------
# ids


def new_id(prefix: str, taken: set[str]) -> str:
    """A fresh id ``prefix`` + 6 hex digits not in ``taken`` (random: an id deleted by hand is never reused for
    another chapter, so a stale link in the sidecar cannot attach to it)."""
    while True:
        cand = prefix + secrets.token_hex(3)
        if cand not in taken:
            return cand


def _format_heading(level: int, title: str, attrs: dict[str, str], cr: bool) -> str:
    a = " {" + " ".join(f"{k}={v}" for k, v in attrs.items()) + "}" if attrs else ""
    return "#" * level + " " + title + a + ("\r" if cr else "")


def _rewrite(lines: list[str], line: int, level: int, title: str, attrs: dict[str, str]) -> None:
    lines[line] = _format_heading(level, title, attrs, lines[line].endswith("\r"))


def ensure_ids(text: str) -> str:
    """``text`` with an ``id`` attribute on every chapter and (explicit) volume heading that has none (put first:
    ``{id=c1a2b3 status=…}``); headings with an id, and every other line, unchanged. A duplicate id (a heading
    copied by hand) is replaced on the later heading. Returns ``text`` itself when nothing was missing."""
    o = parse_outline(text)
    lines = outline_lines(text)
    taken: set[str] = set()
    avoid = _all_ids(o)  # ids written anywhere: a new one never repeats one, even a duplicate's
    changed = False
    for v in o.volumes:
        if v.line >= 0:
            if not v.id or v.id in taken:
                v.id = new_id("v", avoid)
                avoid.add(v.id)
                _rewrite(lines, v.line, 1, v.title, {"id": v.id, **{k: x for k, x in v.attrs.items() if k != "id"}})
                changed = True
            taken.add(v.id)
        for c in v.chapters:
            if not c.id or c.id in taken:
                c.id = new_id("c", avoid)
                avoid.add(c.id)
                _rewrite(lines, c.line, 2, c.title, {"id": c.id, **{k: x for k, x in c.attrs.items() if k != "id"}})
                changed = True
            taken.add(c.id)
    return "\n".join(lines) if changed else text


def carry_ids(old_text: str, new_text: str) -> str:
    """``new_text`` with the ids of ``old_text`` put back on headings that lost theirs: a chapter (volume) heading
    without an id gets the id of the old chapter (volume) with the same title, when exactly one has it and the
    new text does not use that id already. So a text editor that saved a copy without ids, or an agent that
    rewrote a heading, does not cut the chapter from its linked file. Returns ``new_text`` itself when nothing
    was carried."""
    old, new = parse_outline(old_text), parse_outline(new_text)
    used = _all_ids(new)
    lines = outline_lines(new_text)
    changed = False

    def by_title(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for t, i in pairs:
            if i:
                out.setdefault(t, []).append(i)
        return out

    def pick(title: str, candidates: dict[str, list[str]]) -> str:
        hits = candidates.get(title, [])
        return hits[0] if len(hits) == 1 and hits[0] not in used else ""

    old_vols = by_title([(v.title, v.id) for v in old.volumes])
    old_chs = by_title([(c.title, c.id) for c in old.chapters()])
    for v in new.volumes:
        if v.line >= 0 and not v.id:
            vid = pick(v.title, old_vols)
            if vid:
                _rewrite(lines, v.line, 1, v.title, {"id": vid, **v.attrs})
                used.add(vid)
                changed = True
        for c in v.chapters:
            if not c.id:
                cid = pick(c.title, old_chs)
                if cid:
                    _rewrite(lines, c.line, 2, c.title, {"id": cid, **c.attrs})
                    used.add(cid)
                    changed = True
    return "\n".join(lines) if changed else new_text


def _all_ids(o: Outline) -> set[str]:
    return {v.id for v in o.volumes if v.id} | {c.id for c in o.chapters() if c.id}


# ---------------------------------------------------------------------------------------------------------------
# lookups


def find_volume(o: Outline, ref: str | int) -> OutlineVolume:
    """A volume by id or 0-based index (an int, or digits). Raises ToolError ``not_found``."""
    if isinstance(ref, str) and not ref.strip().isdigit():
        hit = next((v for v in o.volumes if v.id and v.id == ref.strip()), None)
        if hit is None:
            raise ToolError("not_found", message("outline.no_volume", ref=ref))
        return hit
    i = int(ref)
    if not 0 <= i < len(o.volumes):
        raise ToolError("not_found", message("outline.no_volume_n", n=i + 1, total=len(o.volumes)))
    return o.volumes[i]


def _clean_title(title: str, what: str = "outline.what.title") -> str:
    """``title`` stripped; ToolError ``bad_args`` when blank, not one line or too long (``what``: the catalog key
    naming the field)."""
    t = (title or "").strip()
    if not t:
        raise ToolError("bad_args", message("outline.blank", what=message(what)))
    if "\n" in t or "\r" in t:
        raise ToolError("bad_args", message("outline.one_line", what=message(what)))
    if len(t) > OUTLINE_LINE_MAX:
        raise ToolError("bad_args", message("outline.too_long", what=message(what), max=OUTLINE_LINE_MAX))
    return t


def _prepared(text: str) -> tuple[Outline, list[str]]:
    text = ensure_ids(text)
    return parse_outline(text), outline_lines(text)


def _block(lines: list[str], start: int, end: int) -> list[str]:
    """Lines ``start..end`` as a block that ends with one blank line (so it can be put anywhere)."""
    block = lines[start:end]
    while block and not block[-1].strip():
        block.pop()
    return [*block, ""]


def _insert(lines: list[str], at: int, block: list[str]) -> list[str]:
    """Insert ``block`` before line ``at`` (at the end: after a blank line when the file does not end in one)."""
    if at >= len(lines):
        head = list(lines)
        while head and not head[-1].strip():
            head.pop()
        if head:
            head.append("")
        return [*head, *block]
    return [*lines[:at], *block, *lines[at:]]


def _join(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text if text.endswith("\n") or not text else text + "\n"


# ---------------------------------------------------------------------------------------------------------------
# add


def add_volume(text: str, title: str, position: Optional[int] = None) -> tuple[str, str]:
    """Add a volume ``# title {id=…}`` before the volume at 0-based ``position`` (None: at the end). Chapters
    before the first ``#`` stay in the unnamed volume. Returns (new text, the volume's id). ToolError ``bad_args``."""
    title = _clean_title(title)
    o, lines = _prepared(text)
    vid = new_id("v", _all_ids(o))
    block = [_format_heading(1, title, {"id": vid}, False), ""]
    if position is None or position >= len(o.volumes):
        at = len(lines)
    elif position < 0:
        raise ToolError("bad_args", message("outline.negative_position"))
    else:
        v = o.volumes[position]
        at = v.line if v.line >= 0 else (v.chapters[0].line if v.chapters else len(lines))
    return _join(_insert(lines, at, block)), vid


def add_chapter(text: str, title: str, volume: Optional[str | int] = None, position: Optional[int] = None, *,
                status: Optional[str] = None, target: Optional[int] = None) -> tuple[str, str]:
    """Add a chapter ``## title {id=… status=… target=…}`` to ``volume`` (id or index; None: the last volume, or
    the file's end when there is none) before its chapter at 0-based ``position`` (None: after its last chapter).
    Returns (new text, the chapter's id). ToolError ``not_found`` / ``bad_args``."""
    title = _clean_title(title)
    o, lines = _prepared(text)
    cid = new_id("c", _all_ids(o))
    attrs = {"id": cid}
    if status is not None:
        s = parse_status(status)
        if s is None:
            raise ToolError("bad_args", message("outline.bad_status", statuses="/".join(STATUSES), status=status))
        attrs["status"] = s
    if target:
        if target < 0:
            raise ToolError("bad_args", message("outline.negative_target"))
        attrs["target"] = str(target)
    block = [_format_heading(2, title, attrs, False), ""]
    if not o.volumes:
        return _join(_insert(lines, len(lines), block)), cid
    v = find_volume(o, volume) if volume is not None else o.volumes[-1]
    return _join(_insert(lines, _chapter_slot(v, position), block)), cid


def _chapter_slot(v: OutlineVolume, position: Optional[int]) -> int:
    if position is not None and position < 0:
        raise ToolError("bad_args", message("outline.negative_position"))
    if position is not None and position < len(v.chapters):
        return v.chapters[position].line
    return v.end


def add_beat(text: str, chapter: str | int, beat: str, position: Optional[int] = None) -> str:
    """Add a beat ``- beat`` to ``chapter`` before its beat at 0-based ``position`` (None: after its last beat, or
    right under the heading). ToolError ``not_found`` / ``bad_args``."""
    beat = _clean_title(beat, "outline.what.beat")
    o, lines = _prepared(text)
    c = o.find(chapter)
    if position is not None and 0 <= position < len(c.beat_lines):
        at = c.beat_lines[position]
    elif c.beat_lines:
        at = c.beat_lines[-1] + 1
    else:
        at = c.line + 1
    return _join([*lines[:at], f"- {beat}", *lines[at:]])


# ---------------------------------------------------------------------------------------------------------------
# rename, status, target


def rename_volume(text: str, volume: str | int, title: str) -> str:
    """Give a volume a new title (its attributes kept). The unnamed volume gets a ``#`` heading above its first
    chapter. ToolError ``not_found`` / ``bad_args``."""
    title = _clean_title(title)
    o, lines = _prepared(text)
    v = find_volume(o, volume)
    if v.line < 0:
        at = v.chapters[0].line if v.chapters else len(lines)
        return _join(_insert(lines, at, [_format_heading(1, title, {"id": new_id("v", _all_ids(o))}, False), ""]))
    _rewrite(lines, v.line, 1, title, v.attrs)
    return "\n".join(lines)


def rename_chapter(text: str, chapter: str | int, title: str) -> str:
    """Give a chapter a new title; its id, attributes and link stay. ToolError ``not_found`` / ``bad_args``."""
    title = _clean_title(title)
    o, lines = _prepared(text)
    c = o.find(chapter)
    _rewrite(lines, c.line, 2, title, c.attrs)
    return "\n".join(lines)


def rename_beat(text: str, chapter: str | int, index: int, beat: str) -> str:
    """Rewrite beat ``index`` (0-based) of ``chapter``, keeping its list marker and indentation."""
    beat = _clean_title(beat, "outline.what.beat")
    o, lines = _prepared(text)
    c = o.find(chapter)
    ln = _beat_line(c, index)
    raw = lines[ln]
    cr = raw.endswith("\r")
    body = raw.rstrip("\r")
    old = c.beats[index]
    cut = body.rfind(old)
    lines[ln] = (body[:cut] if cut >= 0 else "- ") + beat + ("\r" if cr else "")
    return "\n".join(lines)


def _beat_line(c: OutlineChapter, index: int) -> int:
    if not 0 <= index < len(c.beat_lines):
        raise ToolError("not_found", message("outline.no_beat", chapter=c.title, n=index + 1, total=len(c.beats)))
    return c.beat_lines[index]


def set_attrs(text: str, chapter: str | int, *, status: Optional[str] = None, target: Optional[int] = None) -> str:
    """Set a chapter's ``status`` (English or Chinese name) and/or ``target`` (字; 0 removes it) by any reference
    :meth:`Outline.find` takes, ids first. ToolError ``not_found`` / ``ambiguous`` / ``bad_args``."""
    from .outline import set_chapter

    text = ensure_ids(text)
    return set_chapter(text, chapter, status=status, target=target)


# ---------------------------------------------------------------------------------------------------------------
# move


def move_chapter(text: str, chapter: str | int, volume: Optional[str | int] = None,
                 position: Optional[int] = None) -> str:
    """Move a chapter (its heading, beats and notes, as one block) into ``volume`` (id or index; None: its own)
    before that volume's chapter at 0-based ``position`` counted without the moved chapter (None: at the end).
    ToolError ``not_found`` / ``bad_args``."""
    o, lines = _prepared(text)
    c = o.find(chapter)
    block = _block(lines, c.line, c.end)
    rest = "\n".join([*lines[:c.line], *lines[c.end:]])
    o2 = parse_outline(rest)
    lines2 = outline_lines(rest)
    src_vol = o.volumes[c.volume]
    v = find_volume(o2, volume if volume is not None else (src_vol.id or c.volume))
    return _join(_insert(lines2, _chapter_slot(v, position), block))


def move_volume(text: str, volume: str | int, position: int) -> str:
    """Move an explicit volume (its heading and all its chapters) before the volume now at 0-based ``position``
    counted without it (past the end: last). The unnamed volume cannot move (it has no heading): ToolError
    ``bad_args``."""
    o, lines = _prepared(text)
    v = find_volume(o, volume)
    if v.line < 0:
        raise ToolError("bad_args", message("outline.unnamed_volume"))
    block = _block(lines, v.line, v.end)
    rest = "\n".join([*lines[:v.line], *lines[v.end:]])
    o2 = parse_outline(rest)
    lines2 = outline_lines(rest)
    explicit = [w for w in o2.volumes if w.line >= 0]
    at = explicit[position].line if 0 <= position < len(explicit) else len(lines2)
    if position < 0:
        raise ToolError("bad_args", message("outline.negative_position"))
    return _join(_insert(lines2, at, block))


def move_beat(text: str, chapter: str | int, index: int, to_chapter: Optional[str | int] = None,
              position: Optional[int] = None) -> str:
    """Move beat ``index`` of ``chapter`` to ``to_chapter`` (None: the same) before its beat at ``position``
    counted without the moved one (None: last). The beat's line moves as it is."""
    o, lines = _prepared(text)
    c = o.find(chapter)
    ln = _beat_line(c, index)
    raw = lines[ln]
    target_id = o.find(to_chapter).id if to_chapter is not None else c.id
    rest = [*lines[:ln], *lines[ln + 1:]]
    o2 = parse_outline("\n".join(rest))
    t = o2.find(target_id)
    if position is not None and 0 <= position < len(t.beat_lines):
        at = t.beat_lines[position]
    else:
        at = t.beat_lines[-1] + 1 if t.beat_lines else t.line + 1
    return _join([*rest[:at], raw, *rest[at:]])


# ---------------------------------------------------------------------------------------------------------------
# delete


def _notes(lines: list[str], start: int, end: int, skip: set[int]) -> int:
    return sum(1 for i in range(start, end) if i not in skip and lines[i].strip())


def deletion_preview(text: str, kind: NodeKind, ref: str | int, index: int = 0,
                     links: Optional[dict[str, str]] = None) -> DeletionPreview:
    """What :func:`delete_node` would lose, changing nothing: for a ``volume`` (``ref`` id or index) its chapters
    and their beats, for a ``chapter`` its beats, for a ``beat`` (``ref`` its chapter, ``index`` the beat) that
    one; ``notes`` counts the other non-blank lines of the block; ``files`` the files linked to the chapters
    (``links``: {chapter id: file}, :func:`core.story.links.resolve`; hand-written ``file=`` links too)."""
    o = parse_outline(text)
    lines = outline_lines(text)
    links = links or {}

    def file_of(c: OutlineChapter) -> Optional[str]:
        return links.get(c.id) or c.file

    if kind == "beat":
        c = o.find(ref)
        _beat_line(c, index)
        return DeletionPreview(kind="beat", title=c.beats[index], beats=1)
    if kind == "chapter":
        c = o.find(ref)
        f = file_of(c)
        return DeletionPreview(kind="chapter", title=c.title, chapters=[c.title], beats=len(c.beats),
                               notes=_notes(lines, c.line + 1, c.end, set(c.beat_lines)),
                               files=[f] if f else [])
    v = find_volume(o, ref)
    heads = {c.line for c in v.chapters} | {b for c in v.chapters for b in c.beat_lines}
    start = v.line + 1 if v.line >= 0 else (v.chapters[0].line if v.chapters else v.end)
    return DeletionPreview(kind="volume", title=v.title, chapters=[c.title for c in v.chapters],
                           beats=sum(len(c.beats) for c in v.chapters), notes=_notes(lines, start, v.end, heads),
                           files=[f for c in v.chapters if (f := file_of(c))])


def delete_node(text: str, kind: NodeKind, ref: str | int, index: int = 0) -> str:
    """Delete a ``volume`` (heading, chapters, beats and notes), a ``chapter`` (its block) or a ``beat`` (its
    line). The front ends ask first (:func:`deletion_preview`); chapter files are never deleted here. ToolError
    ``not_found``."""
    o, lines = _prepared(text)
    if kind == "beat":
        c = o.find(ref)
        ln = _beat_line(c, index)
        return "\n".join([*lines[:ln], *lines[ln + 1:]])
    if kind == "chapter":
        c = o.find(ref)
        start, end = c.line, c.end
    else:
        v = find_volume(o, ref)
        start = v.line if v.line >= 0 else (v.chapters[0].line if v.chapters else v.end)
        end = v.end
    return _join([*lines[:start], *lines[end:]])


__all__ = ["DeletionPreview", "NodeKind", "OUTLINE_OPS", "add_beat", "carry_ids", "add_chapter", "add_volume", "delete_node",
           "deletion_preview", "ensure_ids", "find_volume", "move_beat", "move_chapter", "move_volume", "new_id",
           "rename_beat", "rename_chapter", "rename_volume", "set_attrs"]
