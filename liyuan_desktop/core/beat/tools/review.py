"""``chapter_review`` (issue 19 §4): the agent reviews a chapter of its own — the local checks of
:mod:`core.story.review` on one file, never an edit.

Offered with the outline tools (:data:`core.beat.tools.sets.WRITING_TOOLS`: only when the chat has ``大纲.md``), so a
chat without an outline sends the tool block it always sent (golden agent runs). Inside a turn the tool has what the
turn has: the ledger as the turn started (a character dead there, an item marked lost in the inventory), the open
``plot_threads`` with the due chapters the outline's 「回收：…」 beats give, the outline's target, the previous
chapter and the user's stock-phrase list; findings the user marked intentional (``审稿.json``) are left out. What
needs judgement (out-of-character lines, timeline, the outline's beats, contradictions with the previous chapter) is
the agent's own reading: the result lists those questions with the chapter's outline beats. Argument models carry
no docstrings (pydantic would put them into the schema).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...errors import ToolError
from ...messages import message
from .context import ToolContext
from .registry import en, spec_language, tool

#: What the agent is asked to judge itself after the local checks.
SELF_CHECK = ("以上是本地检查（重复、套话、死者开口、失物复现、过期伏笔、篇幅）。人物是否走样、时间线、与上一章是否矛盾、"
              "大纲的情节点是否写到，请你读过原文后自己判断；只报告，改不改先问用户。")
SELF_CHECK_EN = ("Those are the local checks (repetition, stock phrases, the dead speaking, lost items reappearing, "
                 "overdue foreshadowing, length). Whether characters stay in character, the timeline, contradictions "
                 "with the previous chapter and whether the outline's beats are written: judge these yourself after "
                 "reading the text; only report, and ask the user before changing anything.")


class _ChapterReviewArgs(BaseModel):
    path: str = Field(description="要审读的章节文件名（正文目录下，如 003-雨夜.md）",
                      json_schema_extra=en("The chapter file to review (in the chapter folder, such as 003-Night.md)"))


@tool("chapter_review", "read", _ChapterReviewArgs,
      "审读一章（不改稿）：查重复句与高频短语、套话、账本里已死的人开口说话、已失去的物品又出现、过期未回收的伏笔、"
      "篇幅与大纲目标；返回问题清单（kind、引文 quote、UTF-16 偏移 offset、说明 note）和本章的大纲情节点。",
      summary=lambda a, r: message("tool.review", path=str(a.get("path", "")), n=len(r.get("findings", []))) if isinstance(r, dict) else "",
      en="Review a chapter (no edits): repeated sentences and frequent phrases, stock phrases, characters dead in "
         "the ledger who speak, lost items that reappear, overdue foreshadowing, length against the outline's "
         "target; returns the findings (kind, quote, UTF-16 offset, note) and the chapter's outline beats.")
def _chapter_review(ctx: ToolContext, a: _ChapterReviewArgs) -> dict[str, Any]:
    if ctx.story is None:
        raise ToolError("unavailable", "这一局没有正文目录，审稿用不了。",
                        en="This story has no chapter folder; the review cannot be used.")
    from ...story.outline import read_outline  # the review room loads when a chapter is reviewed (issue 15)
    from ...story.review import (
        ReviewInput,
        ThreadView,
        is_dead,
        load_store,
        local_findings,
        lost_items,
        outline_chapter,
        stock_phrases,
    )

    story = ctx.story
    path = story.resolve(a.path)
    if not path.is_file():
        raise ToolError("not_found", f"正文目录里没有「{a.path}」。", en=f"The chapter folder has no \"{a.path}\".")
    name = path.name
    text = path.read_text("utf-8", errors="replace")
    order = [c.name for c in story.chapters()]
    prev = order[order.index(name) - 1] if name in order and order.index(name) > 0 else ""
    chat_dir = Path(story.story_dir).parent
    outline = read_outline(chat_dir)
    oc = outline_chapter(outline, name, order)
    chapter = oc.index + 1 if oc is not None else (order.index(name) + 1 if name in order else None)
    due = outline.due_chapters() if outline is not None else {}
    st = ctx.state
    threads = []
    for t in st.plot_threads:
        d = due.get(t) or next((n for k, n in due.items() if k and (k in t or t in k)), None)
        threads.append(ThreadView(title=t, due_chapter=d))
    names = list(st.characters)
    if st.roster is not None:
        for table in (st.roster.characters, st.roster.places, st.roster.items, st.roster.events):
            names += list(table)
    inp = ReviewInput(file=name, text=text, chapter=chapter, previous_file=prev, language=spec_language(ctx.language),
                      previous=story.resolve(prev).read_text("utf-8", errors="replace") if prev else "",
                      dead={n: c.status for n, c in st.characters.items() if is_dead(c.status)},
                      lost=lost_items([st.inventory]), threads=threads, target=oc.target if oc is not None else None,
                      names=sorted(set(names)), phrases=stock_phrases())
    found, skipped = local_findings(inp, load_store(chat_dir).intentional)
    out: dict[str, Any] = {
        "file": name, "chapter": chapter,
        "findings": [{"kind": f.kind, "quote": f.quote, "file": f.file, "offset": f.offset, "note": f.note}
                     for f in found],
        "self_check": SELF_CHECK_EN if spec_language(ctx.language) == "en" else SELF_CHECK,
    }
    if oc is not None and oc.beats:
        out["outline_beats"] = oc.beats
    if skipped:
        out["intentional_skipped"] = skipped
    return out
