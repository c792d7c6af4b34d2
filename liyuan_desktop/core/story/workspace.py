"""Agent mode (写长篇): the story is files — one ``.md`` per chapter in the chat's ``正文/`` folder.

Seed 000, 「写长篇：agent 模式，正文是文件」: the model works on the chapters with four file tools — ``read`` reads,
``grep`` finds, ``edit`` changes exact text in place, ``write`` creates a chapter or replaces it whole. File names
decide the order (``NNN-标题.md``); the per-turn state block carries only the index (:func:`format_story_index`),
never the text, so the model reads before it edits.

Units: sizes and 「字」 counts are UTF-16 code units (JavaScript ``length``, what the seed reports); ``read``'s
``offset``/``limit`` are lines (``offset`` 1-based). A line is everything up to and including ``"\\n"`` (a ``"\\r"``
before it stays part of the line); a final line without ``"\\n"`` counts as a line.

Paths: the model gives paths relative to the work directory (``cards/青梧/对话/局C/正文/001-雨夜问名.md``, as in the
golden run), or ``正文/001-雨夜问名.md``, or the bare name; the folder's name may be either layout's (``正文`` or
``chapters``, :mod:`.layout`) whatever the folder is called on disk. Only plain files directly inside the story folder are
reachable (no sub-folders); see :meth:`StoryFolder.resolve` for what is refused.

Text is kept byte for byte: UTF-8, no newline translation, and ``edit`` splices ``newText`` into the original —
nothing is ever normalised (pi's edit tool turned full-width punctuation into ASCII on a loose match; we never do).
Every write is atomic (temp file in the same folder, fsync, ``os.replace``).

Errors: :class:`ToolError` with a stable ``code`` (``not_found``, ``not_unique``, ``no_change``, ``bad_path``,
``bad_args``, ``too_large``) and a Chinese ``message`` naming the file and what to do next; nothing changes on error.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from pydantic import BaseModel

from ..errors import ToolError
from ..fsutil import atomic_write_text
from ..linear_regex import LinearRegexRefused, compile_python_pattern
from ..linear_regex import search as linear_search
from ..paths import WINDOWS_RESERVED
from ..text import canon_punct, prompt_language, utf16_len
from .chapters import BAD_NAME_CHARS, split_lines
from .checkpoint_model import clean_leftover_tmp, scan_chapters, warn_ignored_once
from .layout import STORY_FOLDER_NAMES

# ---------------------------------------------------------------------------------------------------------------
# limits

READ_MAX_LINES = 2000          # lines returned by one read without limit
READ_MAX_CHARS = 200_000       # UTF-16 units returned by one read
READ_MAX_FILE_BYTES = 20_000_000
WRITE_MAX_CHARS = 2_000_000    # UTF-16 units in one chapter
NAME_MAX_CHARS = 200
NAME_MAX_BYTES = 255           # common file-system limit on one name (UTF-8 bytes)
GREP_LINE_SHOW = 400           # UTF-16-ish display budget of one grep hit line
GREP_MAX_LIMIT = 1000

_RESERVED = WINDOWS_RESERVED  # the one list: core.paths (issue 32 §2)


# ---------------------------------------------------------------------------------------------------------------
# errors


class StoryPathError(ToolError):
    """A path the story tools will not touch (code ``bad_path``): outside the story folder, unsafe or not a chapter.
    Refusals of any other kind are plain :class:`~core.errors.ToolError`."""

    def __init__(self, message: str, **extra: Any):
        super().__init__("bad_path", message, **extra)


# ---------------------------------------------------------------------------------------------------------------
# helpers


def quoted(name: str) -> str:
    """A file name as error messages show it: in double quotes with JSON escapes, so a leading space, a tab or a
    look-alike character is visible (issue 30 §5: 「001-雨夜客栈.md 不存在。现有章节： 001-雨夜客栈.md」)."""
    return json.dumps(name, ensure_ascii=False)


def _count_all(hay: str, needle: str) -> list[int]:
    """Start offsets (code points) of every occurrence of ``needle``, overlapping ones included."""
    out, i = [], hay.find(needle)
    while i != -1:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def _atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically: temp file in the same folder, fsync, ``os.replace``."""
    atomic_write_text(path, text)


# ---------------------------------------------------------------------------------------------------------------
# the folder


@dataclass(frozen=True)
class ChapterInfo:
    """One chapter file: ``name`` (file name), ``size`` (UTF-16 code units of its text — the seed's 「字」),
    ``mtime`` (seconds since the epoch)."""

    name: str
    size: int
    mtime: float


class StoryFolder:
    """The chat's story folder (``story_dir``, e.g. ``<data>/cards/青梧/对话/局C/正文``) as the model sees it.

    ``workspace`` is the data folder the model's paths are relative to. ``story_dir`` need not exist yet (the first
    ``write`` creates it). The four tools :meth:`read`, :meth:`grep`, :meth:`edit`, :meth:`write` return the text the
    model sees and raise :class:`ToolError`; the model reaches them through the registry
    (core.beat.tools.story_files)."""

    def __init__(self, workspace: Path, story_dir: Path):
        self.workspace = Path(workspace)
        self.story_dir = Path(story_dir)
        ws = os.path.realpath(self.workspace)
        sd = os.path.realpath(self.story_dir)
        try:
            rel = Path(os.path.relpath(sd, ws))
            self._prefix: tuple[str, ...] = () if rel.parts[:1] == ("..",) else tuple(p for p in rel.parts if p != ".")
        except ValueError:  # different drives on Windows
            self._prefix = ()
        if not self._prefix:
            try:
                self._prefix = self.story_dir.relative_to(self.workspace).parts
            except ValueError:
                self._prefix = ()
        self.label = "/".join(self._prefix) or self.story_dir.name  # how messages name the folder
        #: the chat's language (issue 32): the tools' answers — notes, counts, refusals — are in it ("zh" / "en";
        #: refusals carry both, :class:`~core.errors.ToolError` ``en``)
        self.language = "zh"
        #: temp files of ours a killed write left in the folder, removed when it was opened (paths; issue 29 §9)
        self.cleaned: list[str] = clean_leftover_tmp(self.story_dir)

    # -- paths ----------------------------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"本局正文目录（{self.label}/）"

    def _where_en(self) -> str:  # the folder by what it is, not its name on disk (a chat in English reads no 正文)
        return "this story's chapter folder"

    def _en(self) -> bool:
        return prompt_language(self.language) == "en"

    def _parts(self, path: Any) -> list[str]:
        """Split a model path into components, refusing the unsafe shapes (absolute, ``..``, NUL, empty)."""
        if not isinstance(path, str):
            raise StoryPathError("path 必须是字符串，例如 \"001-雨夜问名.md\"。", en="path must be a string, such as \"001-Title.md\".")
        if "\x00" in path:
            raise StoryPathError("路径里有 NUL 字符，不能用。请只写章节文件名，例如 \"001-雨夜问名.md\"。",
                                 en="The path has a NUL character. Write just the chapter file name, such as \"001-Title.md\".")
        p = path.strip()
        if not p:
            raise StoryPathError(f"path 为空。请给出{self._where()}里的章节文件名，例如 \"001-雨夜问名.md\"。",
                                 en=f"path is empty. Give a chapter file name in {self._where_en()}, such as \"001-Title.md\".")
        p = p.replace("\\", "/")
        if p.startswith("/") or p == "~" or p.startswith("~/") or re.match(r"^[A-Za-z]:", p):
            raise StoryPathError(f"不接受绝对路径「{path}」。只能读写{self._where()}里的文件，请写相对路径，"
                                 f"例如 \"{self.label}/001-雨夜问名.md\" 或 \"001-雨夜问名.md\"。",
                                 en=f"Absolute paths are not accepted ({quoted(path)}). Only files in "
                                    f"{self._where_en()} can be read and written: write the chapter's file name, such as "
                                    f"\"001-Title.md\".")
        # each name trimmed and in NFC (issue 30 §5: 「正文/ 001-….md」 made a chapter no later call could name)
        parts = [x for x in (unicodedata.normalize("NFC", y.strip()) for y in p.split("/")) if x not in ("", ".")]
        if any(x == ".." for x in parts):
            raise StoryPathError(f"路径「{path}」里有 ..，不允许跳出目录。只能读写{self._where()}里的文件。",
                                 en=f"The path {quoted(path)} has .. in it; leaving the folder is not allowed. Only "
                                    f"files in {self._where_en()} can be read and written.")
        return parts

    def _strip_folder(self, parts: list[str]) -> Optional[list[str]]:
        """``parts`` after the story folder's own name, or None when they do not start with it: the
        workspace-relative folder (``cards/…/局C/正文``) or the bare folder name, where the folder's last name may be
        that of any layout (``正文`` or ``chapters``, :data:`.layout.STORY_FOLDER_NAMES`): a model told one name
        reaches the same files by the other (issue 32)."""
        n = len(self._prefix)
        names = {self.story_dir.name, *STORY_FOLDER_NAMES}
        if n and tuple(parts[:n - 1]) == self._prefix[:-1] and len(parts) >= n and parts[n - 1] in names:
            return parts[n:]
        if len(parts) == 2 and parts[0] in names:
            return parts[1:]
        return None

    def _is_dir_ref(self, path: str) -> bool:
        """Does ``path`` name the story folder itself (``正文``, ``正文/``, ``chapters``, ``.``, the workspace-relative
        folder under either name)?"""
        try:
            parts = self._parts(path) if path.strip() not in (".", "./") else []
        except StoryPathError:
            return False
        names = {self.story_dir.name, *STORY_FOLDER_NAMES}
        return parts == [] or (len(parts) == 1 and parts[0] in names) or self._strip_folder(parts) == []

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The file in ``story_dir`` that ``path`` names (it need not exist).

        Accepted: a workspace-relative path inside the story folder (``cards/青梧/对话/局C/正文/001-雨夜问名.md``),
        ``正文/<name>`` and a bare ``<name>`` — the folder named by either layout's name (``正文`` or ``chapters``,
        :mod:`.layout`), whichever it has on disk. Refused with :class:`StoryPathError`: absolute paths, ``..`` anywhere,
        NUL bytes, names over 200 characters (or 255 UTF-8 bytes), reserved device names (CON, NUL, AUX, COM1…),
        characters that are not portable in file names, sub-folders, paths into another folder of the workspace,
        anything whose real path (symlinks followed) is outside ``story_dir``, and — when ``write`` — any name not
        ending in ``.md``."""
        parts = self._parts(path)
        rest = self._strip_folder(parts)
        if rest is None and len(parts) == 1:
            rest = parts
        if rest is None:
            raise StoryPathError(f"「{path}」不在{self._where()}里。只能读写本局正文目录下的章节文件，"
                                 f"请写成 \"{self.label}/<文件名>.md\" 或直接写文件名。",
                                 en=f"{quoted(path)} is not in {self._where_en()}. Only its chapter files can be read "
                                    f"and written: write just the chapter's file name, such as \"001-Title.md\".")
        if not rest:
            raise StoryPathError(f"「{path}」是正文目录本身，不是文件。请给出章节文件名，例如 \"001-雨夜问名.md\"。",
                                 en=f"{quoted(path)} is the chapter folder itself, not a file. Give a chapter file "
                                    f"name, such as \"001-Title.md\".")
        if len(rest) > 1:
            raise StoryPathError(f"「{path}」在子文件夹里。正文目录不分子文件夹：一章一个 .md 文件，直接放在"
                                 f"{self._where()}下。",
                                 en=f"{quoted(path)} is in a sub-folder. The chapter folder has no sub-folders: one "
                                    f".md file per chapter, directly in {self._where_en()}.")
        name = rest[0]
        if len(name) > NAME_MAX_CHARS or len(name.encode("utf-8")) > NAME_MAX_BYTES:
            raise StoryPathError(f"文件名太长（{len(name)} 个字符）。请把文件名缩到 {NAME_MAX_CHARS} 个字符以内，"
                                 f"建议 \"NNN-短标题.md\"。",
                                 en=f"The file name is too long ({len(name)} characters). Keep it within "
                                    f"{NAME_MAX_CHARS} characters, such as \"NNN-Short-title.md\".")
        bad = sorted({c for c in name if c in BAD_NAME_CHARS})
        if bad:
            shown = "".join(c if c.isprintable() else repr(c) for c in bad)
            raise StoryPathError(f"文件名「{name}」里有不能用的字符 {shown}。请换一个只含文字、数字、-、_ 的名字。",
                                 en=f"The file name {quoted(name)} has characters that cannot be used: {shown}. "
                                    f"Choose a name of letters, digits, - and _ only.")
        if name.endswith((" ", ".")):
            raise StoryPathError(f"文件名「{name}」不能以空格或句点结尾。",
                                 en=f"The file name {quoted(name)} cannot end in a space or a dot.")
        stem = name.split(".", 1)[0].rstrip(" ").upper()
        if stem in _RESERVED:
            raise StoryPathError(f"「{name}」是系统保留的设备名，不能当文件名。请换一个名字，例如 \"001-标题.md\"。",
                                 en=f"{quoted(name)} is a reserved device name and cannot be a file name. Choose "
                                    f"another, such as \"001-Title.md\".")
        if write and name.startswith("."):
            raise StoryPathError(f"「{name}」以句点开头，是隐藏文件名，目录和检查点都看不到它。请换一个不以 . 开头的名字，"
                                 f"例如 \"001-标题.md\"。",
                                 en=f"{quoted(name)} starts with a dot: a hidden name that neither the index nor the "
                                    f"checkpoints see. Choose a name that does not start with ., such as \"001-Title.md\".")
        if write and not name.lower().endswith(".md"):
            raise StoryPathError(f"只能写 .md 文件，「{name}」不是。一章一个 .md 文件，例如 \"001-雨夜问名.md\"。",
                                 en=f"Only .md files can be written; {quoted(name)} is not one. One .md file per "
                                    f"chapter, such as \"001-Title.md\".")
        target = self.story_dir / name
        real_dir = os.path.realpath(self.story_dir)
        real = os.path.realpath(target)
        if os.path.dirname(real) != real_dir or os.path.basename(real) == "":
            raise StoryPathError(f"「{name}」实际指向正文目录之外（符号链接），不能读写。只能动{self._where()}里的普通文件。",
                                 en=f"{quoted(name)} really points outside the chapter folder (a symbolic link) and "
                                    f"cannot be read or written. Only plain files in {self._where_en()} can.")
        return target

    def _legacy(self, target: Path) -> Path:
        """``target`` when it exists, else the one chapter on disk whose name, trimmed and in NFC, is its name — a
        file an earlier release created as 「 001-….md」 (issue 30 §5), so it can be read and edited again."""
        if target.exists() or not self.story_dir.is_dir():
            return target
        hits = [p for p in self.story_dir.iterdir()
                if p.name != target.name and unicodedata.normalize("NFC", p.name.strip()) == target.name and p.is_file()]
        return hits[0] if len(hits) == 1 else target

    def _load(self, path: str) -> tuple[Path, str]:
        target = self._legacy(self.resolve(path))
        name = target.name
        if not target.exists():
            known = [c.name for c in self.chapters()]
            hint = ("现有章节：" + "、".join(map(quoted, known[:30])) + ("……" if len(known) > 30 else "")) if known else "正文目录还是空的"
            hint_en = ("Chapters: " + ", ".join(map(quoted, known[:30])) + ("…" if len(known) > 30 else "")
                       if known else "The chapter folder is still empty")
            raise ToolError("not_found", f"{quoted(name)} 不存在。{hint}。新建章节请用 write。", path=path,
                            en=f"{quoted(name)} does not exist. {hint_en}. To create a chapter, use write.")
        if not target.is_file():
            raise StoryPathError(f"「{name}」不是文件。请给出章节文件名。",
                                 en=f"{quoted(name)} is not a file. Give a chapter file name.")
        size = target.stat().st_size
        if size > READ_MAX_FILE_BYTES:
            raise ToolError("too_large", f"{name} 有 {size} 字节，太大了，不能读入。请用 grep 找到要看的地方。",
                            en=f"{name} has {size} bytes, too big to read. Find the place to look at with grep.")
        try:
            with open(target, "r", encoding="utf-8", newline="") as f:
                return target, f.read()
        except UnicodeDecodeError as e:
            raise StoryPathError(f"{name} 不是 UTF-8 文本（第 {e.start} 字节附近），不能按正文读写。",
                                 en=f"{name} is not UTF-8 text (near byte {e.start}) and cannot be read as prose.") from e

    def chapters(self) -> list[ChapterInfo]:
        """The ``.md`` files directly in the story folder, ordered by file name (code point order), with size in
        UTF-16 units and mtime. Symlinks (wherever they lead), non-files, hidden names (``.liyuan-*`` …) and names with
        bidi controls are skipped (checkpoint_model.scan_chapters); missing folder → []."""
        entries, ignored = scan_chapters(self.story_dir)  # the checkpoints' rule: no links, no hidden/bidi names
        warn_ignored_once(self.story_dir, ignored)
        out: list[ChapterInfo] = []
        for e in entries:
            try:
                st = os.stat(e.path, follow_symlinks=False)
                with open(e.path, "r", encoding="utf-8", errors="replace", newline="") as f:
                    size = utf16_len(f.read())
            except OSError:
                continue
            out.append(ChapterInfo(e.name, size, st.st_mtime))
        out.sort(key=lambda c: c.name)
        return out

    # -- tools ----------------------------------------------------------------------------------------------------

    def read(self, path: str, offset: Optional[int] = None, limit: Optional[int] = None) -> str:
        """The chapter's text exactly as stored. ``offset`` (1-based line) and ``limit`` (lines) pick a window.

        Without them the whole file comes back untouched, unless it is longer than 2,000 lines or 200,000 UTF-16
        units; then (and whenever a window was asked for) one note line follows the text, e.g.
        ``[第 1–2000 行，共 5000 行；用 offset=2001 继续读]`` (separated by a newline if the text did not end in one).
        Errors: ``not_found``, ``bad_path``, ``bad_args`` (offset past the end, non-positive numbers), ``too_large``
        (a single line longer than the character cap)."""
        for label, v in (("offset", offset), ("limit", limit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ToolError("bad_args", f"read 的 {label} 必须是不小于 1 的整数（行数；offset 从 1 开始）。",
                                en=f"read's {label} must be an integer of at least 1 (lines; offset starts at 1).")
        target, text = self._load(path)
        name = target.name
        lines = split_lines(text)
        total = len(lines)
        windowed = offset is not None or limit is not None
        if not windowed and total <= READ_MAX_LINES and utf16_len(text) <= READ_MAX_CHARS:
            return text
        if total == 0:
            return "" if not windowed else (f"[{name} is empty: 0 lines]" if self._en() else f"[{name} 是空文件，共 0 行]")
        start = (offset or 1) - 1
        if start >= total:
            raise ToolError("bad_args", f"offset={offset} 超出范围：{name} 共 {total} 行。请用 1 到 {total} 之间的 offset。",
                            en=f"offset={offset} is out of range: {name} has {total} lines. Use an offset from 1 to {total}.")
        want = min(limit or READ_MAX_LINES, READ_MAX_LINES)
        chunk: list[str] = []
        used = 0
        for ln in lines[start:start + want]:
            n = utf16_len(ln)
            if used + n > READ_MAX_CHARS:
                break
            chunk.append(ln)
            used += n
        if not chunk:
            raise ToolError("too_large", f"{name} 第 {start + 1} 行超过 {READ_MAX_CHARS} 字，一次读不完。"
                                              f"请用 grep 找到要改的句子，再用 edit 定点改。",
                            en=f"Line {start + 1} of {name} is longer than {READ_MAX_CHARS} characters and cannot be "
                               f"read at once. Find the sentence with grep, then change it with edit.")
        first, last = start + 1, start + len(chunk)
        body = "".join(chunk)
        if self._en():
            note = (f"[lines {first}–{last} of {total}; " + (f"read on with offset={last + 1}]" if last < total
                                                              else "the end]"))
        elif last < total:
            note = f"[第 {first}–{last} 行，共 {total} 行；用 offset={last + 1} 继续读]"
        else:
            note = f"[第 {first}–{last} 行，共 {total} 行；已到结尾]"
        return body + ("" if body.endswith("\n") else "\n") + note

    def grep(self, pattern: str, path: Optional[str] = None, regex: bool = False, limit: int = 100) -> str:
        """Search one chapter (``path``) or every chapter (``path`` omitted or naming the story folder).

        Literal, case-sensitive, line by line; ``regex=True`` reads the pattern as Python ``re`` syntax (an invalid
        pattern is ``bad_args``) and runs it in linear time (RE2, :func:`~..linear_regex.compile_python_pattern`:
        the model can write both the pattern and the line, so ``(a+)+$`` must not freeze the window); a pattern
        RE2 cannot run (backreferences, lookaround…) is ``bad_args`` too, saying what to write instead.
        Returns one ``name:line: text`` row per matching line (line 1-based; text without its line ending; lines
        over ~400 characters are shown as an exact window around the first hit between ``…``), at most ``limit``
        rows, then a count line ``共 N 行命中（M 个文件）`` (plus ``，只列出前 K 行`` when cut)."""
        if not isinstance(pattern, str) or pattern == "":
            raise ToolError("bad_args", "grep 的 pattern 不能为空：给出要找的原文片段。",
                            en="grep's pattern cannot be empty: give the passage to find.")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ToolError("bad_args", "grep 的 limit 必须是不小于 1 的整数。", en="grep's limit must be an integer of at least 1.")
        limit = min(limit, GREP_MAX_LIMIT)
        if regex:
            try:
                rx = compile_python_pattern(pattern)
            except re.error as e:
                raise ToolError("bad_args", f"正则表达式「{pattern}」写错了：{e}。要按字面找就去掉 regex=true。",
                                en=f"The regular expression {quoted(pattern)} is wrong: {e}. To find it literally, "
                                   f"drop regex=true.") from e
            except LinearRegexRefused as e:
                raise ToolError(
                    "bad_args",
                    f"正则表达式「{pattern}」不能用：{e}。请改写成不含反向引用、前后查找的正则（例如用两次 grep 代替），"
                    f"或去掉 regex=true 按字面找。",
                    en=f"The regular expression {quoted(pattern)} cannot be used: {e}. Rewrite it without "
                       f"backreferences or lookaround (two greps, for example), or drop regex=true to find it literally.",
                ) from e

            def find(line: str) -> Optional[tuple[int, int]]:
                m = linear_search(rx, line)
                return (m.start(), m.end()) if m else None
        else:
            def find(line: str) -> Optional[tuple[int, int]]:
                i = line.find(pattern)
                return (i, i + len(pattern)) if i != -1 else None

        if path is None or (isinstance(path, str) and self._is_dir_ref(path)):
            targets: list[tuple[str, Optional[str]]] = [(c.name, None) for c in self.chapters()]
        else:
            target, loaded = self._load(path)
            targets = [(target.name, loaded)]
        rows: list[str] = []
        hits = 0
        files = 0
        for name, text in targets:
            if text is None:
                try:
                    _, text = self._load(name)
                except ToolError:
                    continue
            found_here = False
            for no, line in enumerate(text.split("\n"), 1):
                line = line[:-1] if line.endswith("\r") else line
                span = find(line)
                if span is None:
                    continue
                hits += 1
                found_here = True
                if len(rows) < limit:
                    rows.append(f"{name}:{no}: {self._show(line, span)}")
            files += found_here
        if self._en():
            return self._grep_tail_en(pattern, path, targets, rows, hits, files)
        if hits == 0:
            where = targets[0][0] if path is not None and len(targets) == 1 else f"全部 {len(targets)} 章"
            return f"没有找到「{pattern}」（{where}）。\n共 0 行命中"
        tail = f"共 {hits} 行命中（{files} 个文件）"
        if hits > len(rows):
            tail += f"，只列出前 {len(rows)} 行；缩小范围（path）或换更具体的词再找"
        return "\n".join(rows) + "\n" + tail

    @staticmethod
    def _grep_tail_en(pattern: str, path: Optional[str], targets: list[Any], rows: list[str], hits: int,
                      files: int) -> str:
        """:meth:`grep`'s answer in English (a chat in English)."""
        if hits == 0:
            where = targets[0][0] if path is not None and len(targets) == 1 else f"all {len(targets)} chapters"
            return f"{quoted(pattern)} was not found ({where}).\n0 matching lines"
        tail = f"{hits} matching lines ({files} files)"
        if hits > len(rows):
            tail += f"; only the first {len(rows)} listed — narrow it down (path) or search for something more specific"
        return "\n".join(rows) + "\n" + tail

    @staticmethod
    def _show(line: str, span: tuple[int, int]) -> str:
        if len(line) <= GREP_LINE_SHOW:
            return line
        s, e = span
        a = max(0, s - 120)
        b = min(len(line), max(e, s) + 120, a + GREP_LINE_SHOW)
        b = max(b, min(len(line), e))
        return ("…" if a > 0 else "") + line[a:b] + ("…" if b < len(line) else "")

    def edit(self, path: str, oldText: Optional[str] = None, newText: Optional[str] = None,
             edits: Optional[list[Any]] = None) -> str:
        """Replace exact text in one chapter: one edit (``oldText``/``newText``) or a batch ``edits=[{oldText,
        newText}, …]`` all located in the same original text and applied together. Returns ``"ok"``.

        Each ``oldText`` must occur exactly once (occurrences counted with overlaps). The new text is spliced into the
        original; nothing else in the file changes (full-width punctuation, newlines and spacing stay as they are).
        Only fallback: when the file uses ``\\r\\n`` and an ``oldText`` with bare ``\\n`` is not found, both texts
        get ``\\r\\n`` so the file's line endings stay uniform. Errors (file untouched): ``not_found`` (message names
        the closest original text when it differs only in punctuation width), ``not_unique`` (with the count),
        ``no_change`` (``newText`` equals ``oldText``, or the result equals the file), ``bad_args`` (missing/empty
        texts, both forms given, overlapping edits), ``bad_path``."""
        items = self._edit_items(oldText, newText, edits)
        target = self.resolve(path, write=True)
        target, text = self._load(path)
        name = target.name
        crlf = "\r\n" in text and "\n" not in text.replace("\r\n", "")
        spans: list[tuple[int, int, str, int]] = []
        for i, (old, new) in enumerate(items, 1):
            which = f"第 {i} 处修改" if len(items) > 1 else "oldText"
            which_en = f"change {i}" if len(items) > 1 else "oldText"
            if old == new:
                raise ToolError("no_change", f"{name}：{which}的 newText 和 oldText 完全一样，没有可改的。"
                                                  f"请给出改动后的新文字。", index=i,
                                en=f"{name}: the newText of {which_en} is the same as its oldText; nothing to "
                                   f"change. Give the new text.")
            occ = _count_all(text, old)
            if not occ and crlf and "\n" in old and "\r\n" not in old:
                old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
                occ = _count_all(text, old)
            if not occ:
                raise ToolError("not_found", self._not_found_msg(name, which, old, text), index=i,
                                en=self._not_found_msg_en(name, which_en, old, text))
            if len(occ) > 1:
                raise ToolError("not_unique", f"{name}：{which}的 oldText 出现了 {len(occ)} 次，不唯一。"
                                                   f"请多带几个前后的字，让它在文件里只出现一次。",
                                     index=i, count=len(occ),
                                en=f"{name}: the oldText of {which_en} occurs {len(occ)} times, not once. Include "
                                   f"more of the text around it so it occurs only once in the file.")
            spans.append((occ[0], occ[0] + len(old), new, i))
        spans.sort()
        for a, b in zip(spans, spans[1:]):
            if b[0] < a[1]:
                raise ToolError("bad_args", f"{name}：第 {a[3]} 处和第 {b[3]} 处修改的 oldText 互相重叠，整批都没改。"
                                                 f"请把它们合成一处修改，或让每处引用不相交的原文。",
                                en=f"{name}: the oldTexts of changes {a[3]} and {b[3]} overlap; nothing was changed. "
                                   f"Merge them into one change, or quote text that does not overlap.")
        out, pos = [], 0
        for s, e, new, _ in spans:
            out.append(text[pos:s])
            out.append(new)
            pos = e
        out.append(text[pos:])
        result = "".join(out)
        if result == text:
            raise ToolError("no_change", f"{name}：改完和原文一模一样，文件没有变化。",
                            en=f"{name}: the result is the same as the original; the file did not change.")
        if utf16_len(result) > WRITE_MAX_CHARS:
            raise ToolError("too_large", f"{name} 改完会超过 {WRITE_MAX_CHARS} 字，太长了。请把内容拆成几章。",
                            en=f"{name} would be longer than {WRITE_MAX_CHARS} characters after the change. Split it "
                               f"into several chapters.")
        _atomic_write_text(target, result)
        return "ok"

    @staticmethod
    def _edit_items(oldText: Any, newText: Any, edits: Any) -> list[tuple[str, str]]:
        single = oldText is not None or newText is not None
        if single and edits:
            raise ToolError("bad_args", "edit 要么给 oldText/newText（改一处），要么给 edits 数组（改多处），不能两样都给。",
                            en="edit takes either oldText/newText (one change) or an edits array (several), not both.")
        if single:
            raw: list[Any] = [{"oldText": oldText, "newText": newText}]
        elif edits:
            if not isinstance(edits, (list, tuple)):
                raise ToolError("bad_args", "edits 必须是数组：[{\"oldText\": …, \"newText\": …}, …]。",
                                en="edits must be an array: [{\"oldText\": …, \"newText\": …}, …].")
            raw = list(edits)
        else:
            raise ToolError("bad_args", "edit 缺少要改的内容：给 oldText 和 newText，或给 edits 数组。",
                            en="edit has nothing to change: give oldText and newText, or an edits array.")
        items: list[tuple[str, str]] = []
        for i, it in enumerate(raw, 1):
            if isinstance(it, BaseModel):
                it = it.model_dump()
            if not isinstance(it, dict):
                raise ToolError("bad_args", f"edits 第 {i} 项必须是对象 {{\"oldText\": …, \"newText\": …}}。",
                                en=f"Item {i} of edits must be an object {{\"oldText\": …, \"newText\": …}}.")
            old, new = it.get("oldText"), it.get("newText")
            if not isinstance(old, str) or not isinstance(new, str):
                raise ToolError("bad_args", f"第 {i} 处修改缺少 oldText 或 newText（都必须是字符串）。",
                                en=f"Change {i} lacks oldText or newText (both must be strings).")
            if old == "":
                raise ToolError("bad_args", f"第 {i} 处修改的 oldText 是空的。请引用文件里要换掉的原文；"
                                                 f"整章重写用 write。",
                                en=f"The oldText of change {i} is empty. Quote the text in the file to replace; to "
                                   f"rewrite a whole chapter use write.")
            items.append((old, new))
        return items

    @staticmethod
    def _not_found_msg(name: str, which: str, old: str, text: str) -> str:
        msg = f"{name}：{which}在文件里找不到。"
        hits = _count_all(canon_punct(text), canon_punct(old))
        if len(hits) == 1:
            actual = text[hits[0]:hits[0] + len(old)]
            msg += f"标点写法不同的一处是：「{actual}」。请照原文逐字复制（全角/半角标点也要一致）后再改。"
        else:
            msg += "请先用 read 读出原文，逐字复制要换掉的句子（标点、空格、换行都要一致）；或用 grep 找到它。"
        return msg

    @staticmethod
    def _not_found_msg_en(name: str, which: str, old: str, text: str) -> str:
        """:meth:`_not_found_msg` in English."""
        msg = f"{name}: {which} is not in the file."
        hits = _count_all(canon_punct(text), canon_punct(old))
        if len(hits) == 1:
            actual = text[hits[0]:hits[0] + len(old)]
            msg += (f" A place with different punctuation is: {quoted(actual)}. Copy the original exactly (full-width"
                    f" and half-width punctuation alike) and change it again.")
        else:
            msg += (" Read the original with read first and copy the sentence to replace exactly (punctuation, spaces"
                    " and line breaks alike); or find it with grep.")
        return msg

    def write(self, path: str, content: str) -> str:
        """Create a chapter or replace it whole with ``content`` (stored exactly, UTF-8). ``.md`` names only.
        Returns e.g. ``已新建 003-雨停.md（812 字）`` / ``已整章替换 001-雨夜问名.md（259 字）`` — 字 in UTF-16 units.
        Errors: ``bad_path``, ``bad_args`` (content not a string), ``too_large`` (over 2,000,000 units)."""
        if not isinstance(content, str):
            raise ToolError("bad_args", "write 的 content 必须是字符串：整章的完整正文。",
                            en="write's content must be a string: the chapter's full prose.")
        if "\x00" in content:
            raise ToolError("bad_args", "content 里有 NUL 字符，正文不能含这个字符。",
                            en="content has a NUL character; prose cannot contain it.")
        target = self.resolve(path, write=True)
        n = utf16_len(content)
        if n > WRITE_MAX_CHARS:
            raise ToolError("too_large", f"内容有 {n} 字，超过一章的上限 {WRITE_MAX_CHARS}。请拆成几章分别写。",
                            en=f"The content has {n} characters, over a chapter's limit of {WRITE_MAX_CHARS}. Write "
                               f"it as several chapters.")
        if target.exists() and not target.is_file():
            raise StoryPathError(f"「{target.name}」不是文件，不能写。",
                                 en=f"{quoted(target.name)} is not a file and cannot be written.")
        existed = target.exists()
        self.story_dir.mkdir(parents=True, exist_ok=True)
        target = self.resolve(path, write=True)  # re-check now that the folder exists
        _atomic_write_text(target, content)
        if self._en():
            return f"{'Replaced' if existed else 'Created'} {target.name} ({n} characters)"
        return f"{'已整章替换' if existed else '已新建'} {target.name}（{n} 字）"


    def rename(self, mapping: dict[str, str]) -> dict[str, str]:
        """Rename chapters ``{old name: new name}`` all at once (the window's rename / reorder; no checkpoint — the
        caller commits one). Every name goes through :meth:`resolve` (new names as ``write``: ``.md``, no hidden
        name, nothing outside the folder); an old name must be an existing chapter and a new name must not be taken
        by a chapter that is not itself renamed away, so swaps (``001-a ↔ 002-b``) work: the files move to hidden
        temp names first, then to their new names. On any failure everything moved is put back and the error is
        raised (:class:`StoryPathError`, ``not_found``, or OSError). Returns the mapping without no-op entries.
        Links from outline chapters to the renamed files (``大纲链接.json`` beside the folder, issue 28) follow them."""
        mapping = {a: b for a, b in mapping.items() if a != b}
        if not mapping:
            return {}
        olds = {a: self.resolve(a) for a in mapping}
        news = {a: self.resolve(b, write=True) for a, b in mapping.items()}
        for a, p in olds.items():
            if not p.is_file():
                raise ToolError("not_found", f"{quoted(a)} 不存在，不能改名。",
                                en=f"{quoted(a)} does not exist; it cannot be renamed.")
        for a, p in news.items():
            if p.name != mapping[a]:
                raise StoryPathError(f"「{mapping[a]}」不是一个正文文件名。",
                                     en=f"{quoted(mapping[a])} is not a chapter file name.")
            if p.exists() and p.name not in mapping:
                raise StoryPathError(f"已经有「{p.name}」了，换一个名字。",
                                     en=f"{quoted(p.name)} already exists; choose another name.")
        if len(set(p.name for p in news.values())) != len(news):
            raise StoryPathError("改名后有两个文件同名。", en="Two chapters would have the same name after renaming.")
        token = os.urandom(3).hex()
        moved: list[tuple[Path, Path]] = []
        try:
            temps: dict[str, Path] = {}
            for i, (a, p) in enumerate(olds.items()):
                tmp = self.story_dir / f".liyuan-mv-{token}-{i}.tmp"
                os.rename(p, tmp)
                moved.append((p, tmp))
                temps[a] = tmp
            for a, tmp in temps.items():
                os.rename(tmp, news[a])
                moved.append((tmp, news[a]))
        except OSError:
            for src, dst in reversed(moved):  # best effort: put everything back
                try:
                    os.rename(dst, src)
                except OSError:
                    pass
            raise
        done = {a: news[a].name for a in mapping}
        from .links import follow_renames  # the outline's links follow the files (issue 28)

        follow_renames(self.story_dir.parent, done)
        return done


# ---------------------------------------------------------------------------------------------------------------
# the index in the state block


def format_story_index(folder: Union[StoryFolder, Iterable[ChapterInfo]], rel_label: str = "正文/",
                       language: str = "zh") -> str:
    """The 【正文目录】 block of the agent state block, exactly as in seed 000::

        【正文目录】正文/ 共 3 个文件 725 字（按文件名排序）
        000-开场.md 184 字 2026-10-20 16:14

    字 = UTF-16 code units; time = local time of the file's mtime, ``YYYY-MM-DD HH:MM``. ``folder`` may also be a list
    of :class:`ChapterInfo`. Empty (or missing) folder: the header alone, ``【正文目录】正文/ 共 0 个文件 0 字（按文件名排序）``.
    ``language``: the chat's — English for every language but Chinese (``[Chapters] 3 files, 725 characters
    (sorted by file name)``: the files are named by their bare names, which the file tools take)."""
    files = folder.chapters() if isinstance(folder, StoryFolder) else sorted(folder, key=lambda c: c.name)
    total = sum(c.size for c in files)
    en = prompt_language(language) == "en"
    if en:
        lines = [f"[Chapters] {len(files)} files, {total} characters (sorted by file name)"]
    else:
        lines = [f"【正文目录】{rel_label} 共 {len(files)} 个文件 {total} 字（按文件名排序）"]
    for c in files:
        when = datetime.fromtimestamp(c.mtime).strftime('%Y-%m-%d %H:%M')
        lines.append(f"{c.name} {c.size} characters {when}" if en else f"{c.name} {c.size} 字 {when}")
    return "\n".join(lines)
