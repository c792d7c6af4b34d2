"""The outline (大纲, issue 19 §1): ``大纲.md`` in the chat folder, beside ``正文/``, edited by the user and the agent.

It is plain Markdown with one small convention (our own; no other tool defines it):

- ``# 第一卷 风起`` — a volume (卷). Chapters before the first ``#`` belong to an unnamed volume. A volume heading may
  end in ``{id=v…}`` too (its stable id; a trailing ``{…}`` without any ``key=value`` stays part of the title).
- ``## 第三章 雨夜 {id=c3f2a1 status=drafted target=3000}`` — a chapter. The trailing ``{…}`` is optional and
  holds space-separated ``key=value`` attributes: ``id`` (the chapter's stable id, issue 28: added by the engine
  when it edits the outline, never changed afterwards; the chapter file linked to it is kept in the sidecar
  ``大纲链接.json``, :mod:`core.story.links`, so renaming the file or the chapter keeps the link), ``file`` (a link
  written by hand: the chapter file in ``正文/``; ``正文/`` in front is accepted and dropped; used when the sidecar
  has no link for the chapter), ``status`` (``planned`` / ``drafted`` / ``revised`` / ``done``, or 计划 / 初稿 / 修订 / 定稿;
  default planned), ``target`` (target length in 字, :func:`core.text.count_words`), ``due`` is not a chapter
  attribute (threads carry their own). Unknown keys are kept as they are.
- ``- 她在雨里捡到玉佩`` (or ``*``, ``+``, ``1.``) under a chapter — a beat (情节点). Other lines are notes and kept.
- ``- 回收：玉佩的来历`` (also ``回收伏笔：``) — a beat that says the thread of that title (or containing it) is due
  by this chapter (:meth:`Outline.due_chapters`; a due chapter the user set wins).

The file is versioned with the chapters: :class:`core.story.checkpoints.StoryHistory` captures ``大纲.md`` (key
:data:`OUTLINE_KEY`) in every checkpoint and a restore puts it back. Parsing never fails: whatever is not a heading or
a list item under a chapter is free text. Line numbers are 0-based lines of the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional, cast

from pydantic import Field

from ..deferred import DeferredModel
from ..errors import ToolError
from ..text import count_words, prompt_language
from .layout import ZH_LAYOUT, layout_of_story_dir, outline_file, strip_story_prefix

#: The outline's file name in a chat folder of the Chinese layout (``大纲.md``; an English-layout folder has
#: ``outline.md``: :func:`outline_path` and :mod:`.layout` say which a folder uses).
OUTLINE_FILE = ZH_LAYOUT.outline
#: How checkpoints of the Chinese layout name the outline in their manifest (relative to ``正文/``; a chapter name
#: never has a ``/``); an English-layout history keys it ``../outline.md`` (:func:`outline_key`).
OUTLINE_KEY = "../" + OUTLINE_FILE

ChapterStatus = Literal["planned", "drafted", "revised", "done"]
STATUSES: tuple[str, ...] = ("planned", "drafted", "revised", "done")
#: Chinese spellings accepted for a status (and how the state block shows each one).
STATUS_ZH: dict[str, str] = {"planned": "计划", "drafted": "初稿", "revised": "修订", "done": "定稿"}
#: Status as written in 大纲.md (English or Chinese) → status; the keys of STATUS_ZH and STATUSES are exactly the
#: ChapterStatus values, which their ``str`` annotations cannot say.
_STATUS_ALIASES = cast("dict[str, ChapterStatus]", {**{v: k for k, v in STATUS_ZH.items()}, **{k: k for k in STATUSES}})



def parse_status(name: str) -> Optional[ChapterStatus]:
    """The status a spelling means (``planned``/``drafted``/``revised``/``done`` or 计划/初稿/修订/定稿, any case),
    or None."""
    return _STATUS_ALIASES.get((name or "").strip().lower())


#: What opens a ``回收：…`` beat (tried in this order).
_DUE_PREFIXES = ("回收伏笔", "伏笔回收", "回收")

# The line shapes below are read by hand-written scans, linear in the line (issue 29 §1: the regular expressions
# they replace, ``^(#{1,2})(?!#)\s*(.*?)\s*$`` and ``\s*\{([^{}]*)\}\s*$``, took minutes on one heading followed
# by 100,000 spaces). Whitespace is what ``str.isspace`` says, as ``\s`` was.


def _heading(line: str) -> Optional[tuple[int, str]]:
    """``(level, body)`` of a ``#`` / ``##`` heading line (body stripped), or None (``###`` and deeper are text)."""
    if not line.startswith("#") or line.startswith("###"):
        return None
    level = 2 if line.startswith("##") else 1
    return level, line[level:].strip()


def _split_attrs(body: str) -> tuple[str, Optional[str]]:
    """``(title, raw attributes)`` of a stripped chapter heading body ending in ``{…}`` (no brace inside), or
    ``(body, None)`` when it has no such tail."""
    if not body.endswith("}"):
        return body, None
    lb = body.rfind("{", 0, len(body) - 1)
    if lb < 0 or "}" in body[lb + 1:-1]:
        return body, None
    return body[:lb].rstrip(), body[lb + 1:-1]


def _due_title(beat: str) -> Optional[str]:
    """The thread title of a ``回收：标题`` beat (stripped), or None."""
    for p in _DUE_PREFIXES:
        if beat.startswith(p):
            rest = beat[len(p):].lstrip()
            if rest[:1] in (":", "："):
                return rest[1:].strip() or None
    return None


def _list_item(line: str) -> Optional[str]:
    """The text of a list item line (``-``/``*``/``+`` or ``1.``/``1)``/``1、`` then whitespace), stripped, or None."""
    s = line.lstrip()
    if s[:1] in ("-", "*", "+"):
        rest = s[1:]
    else:
        i = 0
        while i < len(s) and s[i].isdecimal():
            i += 1
        if i == 0 or i >= len(s) or s[i] not in ".)、":
            return None
        rest = s[i + 1:]
    if not rest[:1].isspace():
        return None
    return rest.strip() or None

#: Characters one line of the outline may have when the agent writes it (``outline_edit``; a heading or a beat is a
#: line of words, not a page).
OUTLINE_LINE_MAX = 2000

#: Bounds of the outline part of the agent state block (characters of a beat line, chapters either side).
BRANCH_BEAT_MAX = 80
BRANCH_NEIGHBOURS = 2


class OutlineChapter(DeferredModel):
    """One ``##`` chapter: ``id`` (its stable id, "" until the engine gave it one), ``title`` (the heading without
    attributes), ``status``, ``target`` (字, None when not set), ``file`` (a file name in ``正文/``, None when not yet
    linked: as parsed, the hand-written ``file=``; in :meth:`core.chat.writing_room.WritingRoom.outline`, the link
    resolved through the sidecar), ``beats`` (its list items, in order), ``beat_lines`` (each beat's 0-based line),
    ``attrs`` (every attribute as written, unknown ones included), ``line`` (the heading's 0-based line), ``end``
    (the 0-based line after its block: the next ``#``/``##`` heading or the end of the file), ``index`` (0-based over
    the whole book), ``volume`` (0-based volume index)."""

    id: str = ""
    title: str
    status: ChapterStatus = "planned"
    target: Optional[int] = None
    file: Optional[str] = None
    beats: list[str] = Field(default_factory=list)
    beat_lines: list[int] = Field(default_factory=list)
    attrs: dict[str, str] = Field(default_factory=dict)
    line: int = 0
    end: int = 0
    index: int = 0
    volume: int = 0


class OutlineVolume(DeferredModel):
    """One ``#`` volume: ``id`` ("" when none, always for the implicit one), ``title`` ("" for chapters before the
    first ``#``), its ``chapters``, ``attrs`` (as written), ``line`` (-1 when implicit), ``end`` (the 0-based line
    after its block)."""

    id: str = ""
    title: str = ""
    chapters: list[OutlineChapter] = Field(default_factory=list)
    attrs: dict[str, str] = Field(default_factory=dict)
    line: int = -1
    end: int = 0


class Outline(DeferredModel):
    """A parsed ``大纲.md``: ``volumes`` in order and the raw ``text`` it came from."""

    volumes: list[OutlineVolume] = Field(default_factory=list)
    text: str = ""

    def chapters(self) -> list[OutlineChapter]:
        """Every chapter of every volume, in book order."""
        return [c for v in self.volumes for c in v.chapters]

    def chapter_for_file(self, name: str) -> Optional[OutlineChapter]:
        """The chapter linked to file ``name`` (a name in ``正文/``), or None."""
        name = _norm_file(name)
        return next((c for c in self.chapters() if c.file == name), None)

    def due_chapters(self) -> dict[str, int]:
        """{thread title as written: 1-based chapter} from the ``回收：…`` beats (the first chapter naming it wins)."""
        out: dict[str, int] = {}
        for c in self.chapters():
            for b in c.beats:
                title = _due_title(b)
                if title is not None:
                    out.setdefault(title.strip("「」“” "), c.index + 1)
        return out

    def find(self, ref: str | int) -> OutlineChapter:
        """A chapter by stable id, by 1-based number (int or digits), by linked file name, or by exact / unique partial title.
        Raises ToolError ``not_found`` / ``ambiguous``."""
        chs = self.chapters()
        if isinstance(ref, str) and ref.strip():
            by_id = next((c for c in chs if c.id and c.id == ref.strip()), None)
            if by_id is not None:
                return by_id
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
            i = int(ref) - 1
            if 0 <= i < len(chs):
                return chs[i]
            raise ToolError("not_found", f"大纲里没有第 {int(ref)} 章（共 {len(chs)} 章）。",
                            en=f"The outline has no chapter {int(ref)} ({len(chs)} chapters).")
        ref = str(ref).strip()
        by_file = self.chapter_for_file(ref)
        if by_file is not None:
            return by_file
        exact = [c for c in chs if c.title == ref]
        if len(exact) == 1:
            return exact[0]
        part = [c for c in chs if ref and ref in c.title]
        if len(part) == 1:
            return part[0]
        if not part:
            raise ToolError("not_found", f"大纲里找不到章节「{ref}」。", en=f"The outline has no chapter \"{ref}\".")
        raise ToolError("ambiguous", f"「{ref}」对应多章：{'、'.join(c.title for c in part[:5])}，请写完整标题或章号。",
                        en=f"\"{ref}\" matches several chapters: {', '.join(c.title for c in part[:5])}; write the "
                           f"full title or the chapter number.")

    def focus(self, file: Optional[str] = None) -> Optional[OutlineChapter]:
        """The chapter being worked on: the one linked to ``file`` when given and linked; else the first chapter not
        yet done that comes after the last drafted one (the first planned after the written ones), else the last."""
        chs = self.chapters()
        if not chs:
            return None
        if file:
            c = self.chapter_for_file(file)
            if c is not None:
                return c
        written = [c.index for c in chs if c.status != "planned"]
        after = written[-1] + 1 if written else 0
        return chs[after] if after < len(chs) else chs[-1]

    def branch(self, focus: Optional[OutlineChapter] = None, neighbours: int = BRANCH_NEIGHBOURS,
               language: str = "zh") -> str:
        """The outline's current branch as the agent state block shows it (bounded): the volume line (every volume
        title, the current one marked), the focus chapter with its beats, and up to ``neighbours`` chapters either
        side (title, status, target, file; no beats). Beat lines are cut to :data:`BRANCH_BEAT_MAX` characters.
        ``language``: the chat's (the engine's words in English for every language but Chinese)."""
        w = BRANCH_WORDS[prompt_language(language)]
        chs = self.chapters()
        if not chs:
            return w["empty"]
        focus = focus or self.focus()
        assert focus is not None
        vols = [v.title or w["no_volume"] for v in self.volumes]
        lines = []
        if len(vols) > 1 or self.volumes[0].title:
            lines.append(w["volumes"] + " / ".join(f"▶{t}" if i == focus.volume else t for i, t in enumerate(vols)))
        lo, hi = max(0, focus.index - neighbours), min(len(chs), focus.index + neighbours + 1)
        if lo > 0:
            lines.append(w["before"].format(n=lo))
        for c in chs[lo:hi]:
            mark = "▶ " if c.index == focus.index else "  "
            lines.append(f"{mark}{chapter_line(c, language)}")
            if c.index == focus.index:
                lines += [f"    - {b if len(b) <= BRANCH_BEAT_MAX else b[:BRANCH_BEAT_MAX] + '…'}" for b in c.beats]
        if hi < len(chs):
            lines.append(w["after"].format(n=len(chs) - hi))
        return "\n".join(lines)


#: The words of :meth:`Outline.branch` and :func:`chapter_line` per language (issue 32).
BRANCH_WORDS: dict[str, dict[str, str]] = {
    "zh": {"empty": "（大纲还没有章节）", "no_volume": "（未分卷）", "volumes": "卷：", "before": "…（前面还有 {n} 章）",
           "after": "…（后面还有 {n} 章）", "target": "目标 {n} 字", "unwritten": "未成文", "line": "{n}. {title}〔{bits}〕",
           "sep": "｜"},
    "en": {"empty": "(the outline has no chapters yet)", "no_volume": "(no volume)", "volumes": "Volumes: ",
           "before": "…({n} chapters before)", "after": "…({n} chapters after)", "target": "target {n} characters",
           "unwritten": "not written", "line": "{n}. {title} [{bits}]", "sep": " | "},
}


def chapter_line(c: OutlineChapter, language: str = "zh") -> str:
    """One chapter in one line: ``第N章 标题〔初稿｜目标 3000 字｜03.md〕`` (English for a chat not in Chinese)."""
    en = prompt_language(language) == "en"
    w = BRANCH_WORDS[prompt_language(language)]
    bits = [c.status if en else STATUS_ZH[c.status]]
    if c.target:
        bits.append(w["target"].format(n=c.target))
    bits.append(c.file or w["unwritten"])
    return w["line"].format(n=c.index + 1, title=c.title, bits=w["sep"].join(bits))


def _norm_file(name: str) -> str:
    name = (name or "").strip().replace("\\", "/")
    name = strip_story_prefix(name)  # 正文/ or chapters/ in front (layout.STORY_FOLDER_NAMES)
    return name.rsplit("/", 1)[-1] if "/" in name else name


def _parse_attrs(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for tok in raw.split():
        k, sep, v = tok.partition("=")
        if sep and k:
            out[k.strip()] = v.strip()
    return out


def outline_lines(text: str) -> list[str]:
    """The lines of an outline as the parser numbers them: ``text.split("\\n")`` (a ``"\\r"`` before the newline
    stays on its line), so line numbers of :func:`parse_outline` index this list and ``"\\n".join`` gives the text
    back byte for byte."""
    return text.split("\n")


def parse_outline(text: str) -> Outline:
    """Parse ``大纲.md`` text (see the module doc). Never raises: a bad status or target is ignored (kept in
    ``attrs``). Line numbers index :func:`outline_lines`."""
    vols: list[OutlineVolume] = []
    cur: Optional[OutlineChapter] = None
    index = 0
    in_fence = False
    lines = outline_lines(text)
    for ln, line in enumerate(lines):
        line = line.rstrip("\r")
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        head = _heading(line)
        if head is not None:
            level, body = head
            if cur is not None:
                cur.end = ln
            if level == 1:
                if vols:
                    vols[-1].end = ln
                title, raw_attrs = _split_attrs(body)
                vattrs = _parse_attrs(raw_attrs) if raw_attrs is not None else {}
                if not vattrs:  # a trailing {…} with no key=value is part of a volume's title
                    title = body
                vols.append(OutlineVolume(id=vattrs.get("id", ""), title=title, attrs=vattrs, line=ln))
                cur = None
                continue
            attrs: dict[str, str] = {}
            body, raw_attrs = _split_attrs(body)
            if raw_attrs is not None:
                attrs = _parse_attrs(raw_attrs)
            if not vols:
                vols.append(OutlineVolume())
            status = _STATUS_ALIASES.get(attrs.get("status", "").strip().lower(), "planned")
            target = None
            t = attrs.get("target", "").strip().rstrip("字")
            if t.isdigit():
                target = int(t)
            f = _norm_file(attrs["file"]) if attrs.get("file") else None
            cur = OutlineChapter(id=attrs.get("id", ""), title=body, status=status, target=target, file=f or None,
                                 attrs=attrs, line=ln, index=index, volume=len(vols) - 1)
            vols[-1].chapters.append(cur)
            index += 1
            continue
        if cur is not None:
            item = _list_item(line)
            if item is not None:
                cur.beats.append(item)
                cur.beat_lines.append(ln)
    if cur is not None:
        cur.end = len(lines)
    if vols:
        vols[-1].end = len(lines)
    for v in vols:
        if v.line < 0:
            v.end = next((w.line for w in vols if w.line >= 0), len(lines))
    return Outline(volumes=vols, text=text)


def _format_attrs(attrs: dict[str, str]) -> str:
    return "{" + " ".join(f"{k}={v}" for k, v in attrs.items()) + "}" if attrs else ""


def set_chapter(text: str, ref: str | int, *, status: Optional[str] = None, target: Optional[int] = None,
                file: Optional[str] = None) -> str:
    """``text`` with one chapter's attributes changed (``ref`` as :meth:`Outline.find`): ``status`` (English or
    Chinese name), ``target`` (字; 0 removes it), ``file`` ("" removes the link). Only that heading line changes;
    the rest of the file is kept byte for byte. Raises ToolError ``not_found`` / ``ambiguous`` / ``bad_args``."""
    o = parse_outline(text)
    ch = o.find(ref)
    attrs = dict(ch.attrs)
    if status is not None:
        s = _STATUS_ALIASES.get(status.strip().lower())
        if s is None:
            raise ToolError("bad_args", f"状态只能是 planned/drafted/revised/done（计划/初稿/修订/定稿），不是「{status}」。",
                            en=f"The status must be planned/drafted/revised/done, not \"{status}\".")
        attrs["status"] = s
    if target is not None:
        if target < 0:
            raise ToolError("bad_args", "目标字数不能是负数。", en="The target length cannot be negative.")
        if target:
            attrs["target"] = str(target)
        else:
            attrs.pop("target", None)
    if file is not None:
        if _norm_file(file):
            attrs["file"] = _norm_file(file)
        else:
            attrs.pop("file", None)
    lines = outline_lines(text)
    raw = lines[ch.line]
    cr = raw.endswith("\r")
    level = "#" * _heading(raw.rstrip("\r"))[0]  # type: ignore[index]
    new = f"{level} {ch.title}" + (f" {_format_attrs(attrs)}" if attrs else "")
    lines[ch.line] = new + ("\r" if cr else "")
    return "\n".join(lines)


def replace_text(text: str, old: str, new: str) -> str:
    """Exact-text replace, like the agent's ``edit`` tool: ``old`` must occur exactly once in ``text``. Raises
    ToolError ``not_found`` / ``ambiguous`` / ``no_change``."""
    if old == new:
        raise ToolError("no_change", "oldText 和 newText 相同，没有可改的。",
                        en="oldText and newText are the same; nothing to change.")
    n = text.count(old) if old else 0
    if n == 0:
        raise ToolError("not_found", "大纲里找不到 oldText（要逐字照抄，包括标点和空格）。先 outline_read 再改。",
                        en="oldText is not in the outline (copy it exactly, punctuation and spaces alike). Call "
                           "outline_read first, then change it.")
    if n > 1:
        raise ToolError("ambiguous", f"oldText 在大纲里出现了 {n} 次，请多带几个字让它唯一。",
                        en=f"oldText occurs {n} times in the outline; include more of the text to make it unique.")
    return text.replace(old, new, 1)


def outline_path(chat_dir: Path, language: Optional[str] = None) -> Path:
    """Where a chat's outline lives: ``<chat folder>/大纲.md``, or ``outline.md`` in a folder of the English layout
    (:func:`core.story.layout.outline_file`: what is on disk wins, else the layout of ``language``)."""
    return outline_file(chat_dir, language)


def outline_key(story_dir: Path) -> str:
    """The manifest key the checkpoints of chapter folder ``story_dir`` give the outline beside it: ``../大纲.md``
    (:data:`OUTLINE_KEY`) beside ``正文/``, ``../outline.md`` beside ``chapters/``."""
    return "../" + layout_of_story_dir(story_dir).outline


def read_outline(chat_dir: Path) -> Optional[Outline]:
    """The chat's parsed outline, or None when ``大纲.md`` does not exist (or is not a regular file)."""
    p = outline_path(chat_dir)
    if not p.is_file() or p.is_symlink():
        return None
    return parse_outline(p.read_text("utf-8-sig", errors="replace"))  # a BOM (Notepad) is not text


def chapter_words(text: str) -> int:
    """字数 of a chapter's text (the one rule, :func:`core.text.count_words`)."""
    return count_words(text)
