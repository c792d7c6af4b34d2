"""Agent mode's four file tools (seed 000, 「写长篇：agent 模式，正文是文件」), declared once.

``read`` reads, ``grep`` finds, ``edit`` changes exact text in place, ``write`` creates a chapter or replaces it whole
(and, when the chat has an outline, links the chapter to the outline entry it was written for:
:func:`core.story.links.link_written`) — all on ``ctx.story`` (:class:`core.story.workspace.StoryFolder`, which owns paths, units and limits). Results are
the text the folder returns. A refusal reaches the model as ``{"ok": false, "error": code, "message": …}`` — code and
message only: the folder's extra fields (``index``, ``count``, ``path``) are for its callers and tests, and the agent
tools' error results have never carried them.

The order of declaration is the order of :data:`core.beat.tools.sets.AGENT_FILE_TOOLS`. Argument models carry no
docstrings (pydantic would put them into the schema).
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Optional

from pydantic import BaseModel, BeforeValidator, Field, model_validator

from ...errors import ToolError
from ...messages import message
from ...story.links import link_written
from ...story.workspace import GREP_MAX_LIMIT, StoryFolder
from .context import ToolContext
from .registry import ArgError, PosInt, en, no_bool, tool

_PATH = "章节文件路径：本局正文目录下的 .md 文件，相对工作目录（如 cards/…/正文/001-标题.md），也可只写文件名"
_PATH_EN = en("Chapter file path: an .md file in this story's chapter folder, relative to the working folder, or "
              "just the file name")


class StoryReadArgs(BaseModel):
    path: str = Field(description=_PATH, json_schema_extra=_PATH_EN)
    offset: Optional[PosInt] = Field(None, description="从第几行开始读（从 1 起）；省略从头读",
                                     json_schema_extra=en("The line to start reading at (from 1); omitted: the start"))
    limit: Optional[PosInt] = Field(None, description="最多读几行；省略读到结尾（单次上限 2000 行）",
                                    json_schema_extra=en("At most this many lines; omitted: to the end (2000 lines per call at most)"))


class StoryGrepArgs(BaseModel):
    pattern: str = Field(min_length=1, description="要找的文字；默认按字面匹配，区分大小写",
                         json_schema_extra=en("The text to find; matched literally by default, case-sensitive"))
    path: Optional[str] = Field(None, description="只在这一章里找；省略则找正文目录下全部章节",
                                json_schema_extra=en("Search only this chapter; omitted: every chapter in the folder"))
    regex: bool = Field(False, description="为 true 时 pattern 按正则表达式（Python re）解释",
                        json_schema_extra=en("When true, pattern is a regular expression (Python re)"))
    limit: Annotated[int, Field(ge=1, le=GREP_MAX_LIMIT), BeforeValidator(no_bool)] = Field(
        100, description="最多列出几行命中", json_schema_extra=en("At most this many matching lines are listed"))


class StoryEditItem(BaseModel):
    oldText: str = Field(description="文件里要换掉的原文，逐字照抄，须在文件中只出现一次",
                         json_schema_extra=en("The text in the file to replace, copied exactly; it must occur once in the file"))
    newText: str = Field(description="换成的新文字", json_schema_extra=en("The new text put in its place"))


class StoryEditArgs(BaseModel):
    path: str = Field(description=_PATH, json_schema_extra=_PATH_EN)
    oldText: Optional[str] = Field(None, description="要换掉的原文（改一处时用），逐字照抄，须唯一",
                                   json_schema_extra=en("The text to replace (for one change), copied exactly; it must be unique"))
    newText: Optional[str] = Field(None, description="换成的新文字（改一处时用）",
                                   json_schema_extra=en("The new text (for one change)"))
    edits: Optional[list[StoryEditItem]] = Field(
        None, min_length=1, description="一次改多处时用：[{oldText, newText}, …]，都以改前的同一份原文定位",
        json_schema_extra=en("For several changes at once: [{oldText, newText}, …], all located in the text as it was before"))

    @model_validator(mode="after")
    def _one_form(self) -> "StoryEditArgs":
        single = self.oldText is not None or self.newText is not None
        if single and self.edits:
            raise ArgError("oldText/newText 和 edits 只能二选一", en="give either oldText/newText or edits, not both")
        if single and (self.oldText is None or self.newText is None):
            raise ArgError("改一处时 oldText 和 newText 都要给", en="one change needs both oldText and newText")
        if not single and not self.edits:
            raise ArgError("要给 oldText 和 newText，或给 edits 数组", en="give oldText and newText, or an edits array")
        return self


class StoryWriteArgs(BaseModel):
    path: str = Field(description="章节文件路径，必须以 .md 结尾；文件名决定顺序，建议 NNN-标题.md",
                      json_schema_extra=en("Chapter file path, ending in .md; the file name decides the order (suggested: NNN-Title.md)"))
    content: str = Field(description="整章的完整正文，原样写入",
                         json_schema_extra=en("The whole chapter's full prose, written as it is"))


def _file_name(a: dict[str, Any], _res: Any) -> str:
    return str(a.get("path", "")).rsplit("/", 1)[-1]


def _grep_line(a: dict[str, Any], _res: Any) -> str:
    return message("tool.grep", pattern=str(a.get("pattern", "")))


def _on_story(ctx: ToolContext, op: Callable[[StoryFolder], str]) -> str:
    """Run ``op`` on the chapter folder; a refusal keeps only its code and message (see the module note)."""
    if ctx.story is None:
        raise ToolError("unavailable", "这一局没有正文目录，文件工具用不了。",
                        en="This story has no chapter folder; the file tools cannot be used.")
    try:
        return op(ctx.story)
    except ToolError as e:
        raise ToolError(e.code, e.message, en=e.en) from e


@tool("read", "read", StoryReadArgs,
      "读正文目录里一章的精确原文。offset/limit 按行计（offset 从 1 起），省略即读整章；"
      "太长时只返回前一部分，末尾一行注明读到第几行和下一次的 offset。改之前先读。",
      summary=_file_name,
      en="Read the exact text of one chapter in the chapter folder. offset/limit count lines (offset from 1); "
         "omitted: the whole chapter. A long one returns only its first part, the last line saying how far it "
         "read and the next offset. Read before you edit.")
def _read(ctx: ToolContext, a: StoryReadArgs) -> str:
    return _on_story(ctx, lambda s: s.read(a.path, a.offset, a.limit))


@tool("grep", "read", StoryGrepArgs,
      "在正文章节里找文字：默认按字面匹配，regex=true 时按正则；给 path 只找这一章，省略则找全部章节。"
      "每行命中写成「文件名:行号: 原文」，最后一行是命中总数。命中保留原文标点，可直接拿去当 edit 的 oldText。",
      summary=_grep_line,
      en="Find text in the chapters: literal by default, a regular expression with regex=true; with path only "
         "that chapter, omitted every chapter. Each hit is a line \"file:line: text\", the last line the number of "
         "hits. Hits keep the original punctuation and can be used as edit's oldText as they are.")
def _grep(ctx: ToolContext, a: StoryGrepArgs) -> str:
    return _on_story(ctx, lambda s: s.grep(a.pattern, a.path, a.regex, a.limit))


@tool("edit", "write", StoryEditArgs,
      "定点修改一章：oldText 是文件里要换掉的原文，逐字照抄（全角标点、空格、换行都要一致），必须只出现一次；"
      "换成 newText，其余文字原样不动。一次改多处用 edits，都以改前的同一份原文定位，互不重叠；"
      "任何一处找不到、不唯一或没变化，整批都不改。先 read 再改。成功回执 ok。",
      summary=_file_name,
      en="Change one chapter in place: oldText is the text in the file to replace, copied exactly (full-width "
         "punctuation, spaces and line breaks alike) and occurring only once; it becomes newText, the rest stays "
         "as it is. For several changes use edits, all located in the text as it was before and not overlapping; "
         "if any is missing, not unique or changes nothing, nothing is changed. Read before you edit. Success "
         "answers ok.")
def _edit(ctx: ToolContext, a: StoryEditArgs) -> str:
    edits = [e.model_dump() for e in a.edits] if a.edits is not None else None
    return _on_story(ctx, lambda s: s.edit(a.path, a.oldText, a.newText, edits))


@tool("write", "write", StoryWriteArgs,
      "新建一章，或把一章整个替换成 content。只能写正文目录下的 .md 文件，一个文件一章，文件名决定顺序"
      "（建议 NNN-标题.md，插章就起一个排在中间的名字）。只改几句时用 edit，不要整章重写。",
      summary=_file_name,
      en="Create a chapter, or replace a chapter whole with content. Only .md files in the chapter folder, one "
         "file per chapter, the file name deciding the order (suggested: NNN-Title.md; a chapter inserted between "
         "two gets a name that sorts between them). To change a few sentences use edit; do not rewrite the chapter.")
def _write(ctx: ToolContext, a: StoryWriteArgs) -> str:
    def op(s: StoryFolder) -> str:
        try:
            created = not s.resolve(a.path, write=True).exists()
        except ToolError:  # write says why, in its own order of checks
            created = False
        done = s.write(a.path, a.content)
        try:  # a chapter written for an outline entry is linked to it (issue 28); the write itself has succeeded
            link_written(s.story_dir.parent, s.resolve(a.path, write=True).name, created)
        except (OSError, ValueError):
            pass
        return done

    return _on_story(ctx, op)
