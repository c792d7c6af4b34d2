"""The outline tools of agent mode (issue 19 §1): ``outline_read`` and ``outline_edit`` on ``大纲.md``.

Offered only when the chat has an outline (:meth:`core.chat.agent.AgentDesk.tool_names`), so a chat without one
sends the tool block it always sent. The outline lives in the chat folder, beside ``正文/``
(``ctx.story.story_dir.parent``); its convention is :mod:`core.story.outline`. ``outline_edit`` is the exact-text
replace of the ``edit`` file tool, or a chapter's status / target / linked file (the link is kept by the chapter's
stable id in ``大纲链接.json``, :func:`core.story.links.link_chapter`; the schemas and descriptions are unchanged). Argument models carry no
docstrings (pydantic would put them into the schema), hence the private name of the edit model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field, model_validator

from ...errors import ToolError
from ...fsutil import atomic_write_text
from ...messages import message
from ...story.layout import layout_of_story_dir
from ...story.links import link_chapter
from ...story.outline import OUTLINE_LINE_MAX, parse_outline, replace_text, set_chapter
from ...story.outline_tree import carry_ids, ensure_ids
from .context import ToolContext
from .registry import ArgError, NoArgs, NonNegInt, en, tool


class _OutlineEditArgs(BaseModel):
    oldText: Optional[str] = Field(None, description="大纲里要换掉的原文，逐字照抄，须唯一（改文字时用）",
                                   json_schema_extra=en("The outline text to replace, copied exactly, unique (to change text)"))
    newText: Optional[str] = Field(None, description="换成的新文字（改文字时用）",
                                   json_schema_extra=en("The new text (to change text)"))
    chapter: Optional[str] = Field(None, description="改某一章的状态/目标字数/文件时用：章号（从 1 起）、章名或文件名",
                                   json_schema_extra=en("To change a chapter's status/target length/file: its number (from 1), title or file name"))
    status: Optional[str] = Field(None, description="章节状态：planned 计划 / drafted 初稿 / revised 修订 / done 定稿",
                                  json_schema_extra=en("Chapter status: planned / drafted / revised / done"))
    target: Optional[NonNegInt] = Field(None, description="目标字数；0 表示去掉",
                                        json_schema_extra=en("Target length; 0 removes it"))
    file: Optional[str] = Field(None, description="这一章对应的正文文件名；空字符串表示去掉",
                                json_schema_extra=en("The chapter file of this chapter; an empty string removes it"))

    @model_validator(mode="after")
    def _one_form(self) -> "_OutlineEditArgs":
        text = self.oldText is not None or self.newText is not None
        attrs = self.chapter is not None
        if text and attrs:
            raise ArgError("改文字（oldText/newText）和改章节属性（chapter）只能二选一",
                           en="change either text (oldText/newText) or a chapter's attributes (chapter), not both")
        if text and (self.oldText is None or self.newText is None):
            raise ArgError("改文字时 oldText 和 newText 都要给", en="changing text needs both oldText and newText")
        if attrs and self.status is None and self.target is None and self.file is None:
            raise ArgError("给了 chapter，还要给 status、target 或 file 之一",
                           en="with chapter, also give one of status, target or file")
        if not text and not attrs:
            raise ArgError("要给 oldText 和 newText，或给 chapter 加上要改的属性",
                           en="give oldText and newText, or chapter with the attributes to change")
        return self


def _path(ctx: ToolContext) -> Path:
    if ctx.story is None:
        raise ToolError("unavailable", "这一局没有正文目录，大纲工具用不了。",
                        en="This story has no chapter folder; the outline tools cannot be used.")
    return Path(ctx.story.story_dir).parent / layout_of_story_dir(ctx.story.story_dir).outline  # 大纲.md / outline.md


def _text(ctx: ToolContext) -> str:
    p = _path(ctx)
    if not p.is_file() or p.is_symlink():
        raise ToolError("not_found", "这一局还没有大纲（大纲.md）。", en="This story has no outline yet.")
    return p.read_text("utf-8", errors="replace")


@tool("outline_read", "read", NoArgs,
      "读大纲（大纲.md）全文：# 卷、## 章（行尾 {file=… status=… target=…} 是文件、状态、目标字数）、- 情节点。"
      "大纲即法律：写之前先对照大纲。", summary=None,
      en="Read the whole outline: # volumes, ## chapters ({file=… status=… target=…} at the end of the line is the "
         "file, status and target length), - beats. The outline is law: check it before you write.")
def _outline_read(ctx: ToolContext, _a: NoArgs) -> str:
    return _text(ctx)


@tool("outline_edit", "write", _OutlineEditArgs,
      "改大纲：oldText/newText 按原文精确替换（须唯一），或给 chapter 加 status/target/file 改一章的状态、"
      "目标字数、对应文件（写完一章把状态改成 drafted 并填 file）。大纲的情节只在用户同意时改。成功回执 ok。",
      summary=lambda a, _r: message("tool.outline", chapter=str(a["chapter"])) if a.get("chapter") else message("tool.outline.all"),
      en="Change the outline: oldText/newText replace exact text (unique), or chapter with status/target/file sets "
         "a chapter's status, target length or chapter file (after writing a chapter, set its status to drafted "
         "and fill in file). Change the outline's plot only when the user agrees. Success answers ok.")
def _outline_edit(ctx: ToolContext, a: _OutlineEditArgs) -> str:
    text = _text(ctx)
    if a.chapter is not None:
        if a.status is None and a.target is None:
            new = text
        else:
            new = set_chapter(ensure_ids(text), a.chapter, status=a.status, target=a.target)
        if a.file is not None:  # the link lives in the sidecar, by the chapter's stable id (issue 28)
            if new != text:
                atomic_write_text(_path(ctx), new)
            link_chapter(_path(ctx).parent, parse_outline(new).find(a.chapter).id or a.chapter, a.file)
            return "ok"
    else:
        longest = max((len(ln) for ln in (a.newText or "").split("\n")), default=0)
        if longest > OUTLINE_LINE_MAX:  # an outline line is a heading or a beat (issue 29 §1: one huge line)
            raise ToolError("bad_args", f"newText 里有一行 {longest} 个字符，大纲一行最多 {OUTLINE_LINE_MAX} 个字符："
                                        "标题和情节点都写短些，细节另起一行。",
                            en=f"A line of newText has {longest} characters; an outline line has at most "
                               f"{OUTLINE_LINE_MAX}: keep headings and beats short and put details on lines of their own.")
        new = carry_ids(text, replace_text(text, a.oldText or "", a.newText or ""))  # a rewritten heading keeps its id
    atomic_write_text(_path(ctx), new)
    parse_outline(new)
    return "ok"
