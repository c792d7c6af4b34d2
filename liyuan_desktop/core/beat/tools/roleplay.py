"""The role-play tools (seed 000 稿纸/收笔/上一轮能原位改/岔口交给用户, seed 002 world_state_get), declared once.

The draft tools work on ``ctx.draft`` (:class:`core.beat.draft.Draft`); previous_draft_read/edit on
``ctx.previous``; ask suspends the beat until ``ctx.ask`` answers; the world-state and lorebook tools read
``ctx.state`` and ``ctx.book``. A successful draft_seal or previous_draft_edit, and Stop in an ask, set
``ctx.ended``: the beat is over. Refusals are :class:`~core.errors.ToolError` (the draft's own codes, plus
``draft_in_use``, ``stale_version`` and ``no_previous`` for the previous beat).

The order of declaration is the order of :data:`core.beat.tools.sets.ROLEPLAY_TOOLS`. Argument models carry no
docstrings (pydantic would put them into the schema).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, Field

from ...errors import ToolError
from ...ledger.state import format_roster
from ...messages import message
from ..draft import apply_edits, read_text
from ..events import AskAnswer, AskRequest, Revised
from .context import ToolContext
from .registry import Int, NoArgs, NonNegInt, en, spec_language, tool

if TYPE_CHECKING:  # the previous beat's type lives with the loop, which imports this module
    from ..loop import PreviousBeat

_VERSION = "稿件当前版本号（上一次写入回执里的 version；新一拍从 0 开始）"
_VERSION_EN = en("The draft's current version (the version in the last write's receipt; a new beat starts at 0)")
_EDITS = "一批修改，全部以同一版本为准定位"
_EDITS_EN = en("A batch of edits, all located against the same version")


class DraftWriteArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION, json_schema_extra=_VERSION_EN)
    content: str = Field(description="完整稿件原文，格式与空白原样保留",
                         json_schema_extra=en("The whole draft text; layout and whitespace are kept as written"))


class DraftAppendArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION, json_schema_extra=_VERSION_EN)
    content: str = Field(description="接在稿件末尾的新一段原文",
                         json_schema_extra=en("The new passage to add at the end of the draft"))
    separator: str = Field("\n\n", description="与上文之间的连接字符，默认两个换行；可为空串",
                           json_schema_extra=en("What joins it to the text before: two newlines by default; may be empty"))


class RangeArgs(BaseModel):
    start: Optional[NonNegInt] = Field(None, description="起点，UTF-16 偏移，从 0 开始；省略为开头",
                                         json_schema_extra=en("Start, a UTF-16 offset from 0; omitted: the beginning"))
    end: Optional[NonNegInt] = Field(None, description="终点，UTF-16 偏移，不含；省略为结尾",
                                       json_schema_extra=en("End, a UTF-16 offset, exclusive; omitted: the end"))


class DraftSearchArgs(BaseModel):
    query: str = Field(description="要找的原文片段（按字面匹配）",
                       json_schema_extra=en("The passage to find (matched literally)"))
    limit: int = Field(20, ge=1, le=50, description="最多返回几处命中",
                       json_schema_extra=en("At most this many hits are returned"))


class EditItem(BaseModel):
    old: str = Field(description="稿件里要换掉的原文，须唯一",
                     json_schema_extra=en("The text in the draft to replace; it must occur once"))
    new: str = Field(description="换成的新文字", json_schema_extra=en("The new text put in its place"))


class EditArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION, json_schema_extra=_VERSION_EN)
    edits: list[EditItem] = Field(min_length=1, description=_EDITS, json_schema_extra=_EDITS_EN)


class SealArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION, json_schema_extra=_VERSION_EN)


class PreviousEditArgs(BaseModel):
    version: Int = Field(ge=0, description="previous_draft_read 回执里的 version",
                         json_schema_extra=en("The version in previous_draft_read's receipt"))
    edits: list[EditItem] = Field(min_length=1, description=_EDITS, json_schema_extra=_EDITS_EN)


class AskArgs(BaseModel):
    question: str = Field(description="交给用户定夺的问题，一句话说清眼下的局面",
                          json_schema_extra=en("The question the user decides, saying in one sentence where things stand"))
    options: list[str] = Field(min_length=2, max_length=4, description="2~4 个具体、可落地、彼此不同的选项",
                               json_schema_extra=en("2-4 concrete, playable options that differ from each other"))


class LorebookSearchArgs(BaseModel):
    query: str = Field(description="要查的名字或关键词，多个词用空格分开",
                       json_schema_extra=en("The name or keywords to look up, several words separated by spaces"))
    limit: int = Field(5, ge=1, le=20, description="最多返回几条", json_schema_extra=en("At most this many entries are returned"))


ASK_DESCRIPTION = (
    "把该由用户拍板的岔口交给用户：给一个问题和 2~4 个选项，用户点选或自己写一句，你再按答案接着演。\n"
    "什么时候问：① 用户这句话本身就在要方向、要选项（如「接下来怎么办」「给我几个选择」），任何一拍都可以直接问；"
    "② 用户这句话引出一个没定的变量，取值不同这一拍会明显走向不同，而卡和世界书里查不到——先问定再演。"
    "一次只问一个，最关键的那个。不分岔的细节自己顺着演，不事事请示；不要替用户定他角色的身份、性格或重大决定。\n"
    "用户点了停止，就是把笔收回去了：这一拍到此为止。\n"
    "预设本身规定了选择框格式（例如要求把选项写进正文）时，按预设写进正文，不用本工具。"
)
ASK_DESCRIPTION_EN = (
    "Hand a fork the user should decide to the user: one question and 2-4 options; the user picks one or writes a "
    "line of their own, and you play on from the answer.\n"
    "When to ask: (1) the user's words themselves ask for a direction or options (\"what now?\", \"give me some "
    "choices\") — ask directly, in any beat; (2) the user's words open an undecided variable whose value would send "
    "this beat clearly different ways, and neither the card nor the world book settles it — ask first, then play. "
    "Ask one question at a time, the one that matters most. Details that do not fork you play yourself without "
    "asking; never decide the user's character's identity, personality or major choices for them.\n"
    "When the user presses Stop, they have taken the pen back: this beat ends here.\n"
    "When the preset itself sets a format for choices (for example options written into the prose), write them "
    "into the prose as the preset says instead of using this tool."
)


# -- summaries (the activity line of a successful call) ---------------------------------------------------------


def _version_chars(_a: dict[str, Any], res: Any) -> str:
    return message("tool.version_chars", version=res.get("version"), chars=res.get("chars")) if isinstance(res, dict) else ""


def _matches(_a: dict[str, Any], res: Any) -> str:
    return message("tool.matches", m=list(res.get("matches", ["exact"]))) if isinstance(res, dict) else ""


def _answer(_a: dict[str, Any], res: Any) -> str:
    if not isinstance(res, dict):
        return ""
    return message("tool.stopped") if res.get("by") == "stop" else message("tool.answer", answer=str(res.get("answer")))


def _lore_hits(a: dict[str, Any], res: Any) -> str:
    if not isinstance(res, list):
        return ""
    titles = [str(h["title"]) for h in res]
    return message("tool.lore", query=str(a.get("query", "")), hits=titles if titles else message("tool.lore.none"))


# -- the draft --------------------------------------------------------------------------------------------------


def _written(ctx: ToolContext, res: dict[str, Any]) -> dict[str, Any]:
    """After a model's own write: count it and show the draft."""
    ctx.draft.explicit_writes += 1
    ctx.emit(ctx.draft.changed())
    return res


@tool("draft_write", "write", DraftWriteArgs,
      "新建或整篇替换本拍的稿件，写入即向用户展示并保存。写入不等于收笔。局部修改用 draft_edit，接着写用 draft_append，写完用 draft_seal。很短的回应也可以不用稿纸，直接输出。",
      summary=_version_chars,
      en="Create or wholly replace this beat's draft; what you write is shown to the user and saved at once. Writing is "
         "not sealing. Use draft_edit for local changes, draft_append to write on, draft_seal when done. A very short "
         "response may skip the draft and be written directly.")
def _draft_write(ctx: ToolContext, a: DraftWriteArgs) -> dict[str, Any]:
    return _written(ctx, ctx.draft.write(a.version, a.content))


@tool("draft_append", "write", DraftAppendArgs,
      "在稿件末尾接着写一段并展示。默认与上文隔一个空行，separator 可指定精确的连接字符。不会收笔。",
      summary=_version_chars,
      en="Write one more passage at the end of the draft and show it. A blank line separates it from the text "
         "before by default; separator sets the exact joining characters. Does not seal.")
def _draft_append(ctx: ToolContext, a: DraftAppendArgs) -> dict[str, Any]:
    return _written(ctx, ctx.draft.append(a.version, a.content, a.separator))


@tool("draft_read", "read", RangeArgs,
      "读本拍稿件的精确原文和版本号。start/end 是从 0 起的 UTF-16 偏移，end 不含；都省略即读全文。",
      en="Read the exact text and version of this beat's draft. start/end are UTF-16 offsets from 0, end "
         "exclusive; omit both to read it all.")
def _draft_read(ctx: ToolContext, a: RangeArgs) -> dict[str, Any]:
    return ctx.draft.read(a.start, a.end)


@tool("draft_search", "read", DraftSearchArgs,
      "在本拍稿件里按字面查找。命中保留原文的标点与空白，可直接拿去当 draft_edit 的 old；回执带版本号和命中总数。",
      en="Search this beat's draft literally. Hits keep the original punctuation and whitespace and can be used as "
         "draft_edit's old as they are; the receipt carries the version and the number of hits.")
def _draft_search(ctx: ToolContext, a: DraftSearchArgs) -> dict[str, Any]:
    return ctx.draft.search(a.query, a.limit)


@tool("draft_edit", "write", EditArgs,
      "用唯一的原文引用成批修改稿件，所有引用都以同一版本为准。任何一处找不到、不唯一、互相重叠或版本对不上，整批都不改。"
      "首尾空白或等长标点（全角/半角等）不同也能对上，回执会报告匹配级别。",
      summary=_matches,
      en="Edit the draft in a batch by unique quotes of its text, all against the same version. If any quote is "
         "missing, not unique, overlapping or the version does not match, nothing is changed. Quotes still match when "
         "leading/trailing whitespace or same-length punctuation (full-width/half-width) differs; the receipt reports "
         "the match level.")
def _draft_edit(ctx: ToolContext, a: EditArgs) -> dict[str, Any]:
    return _written(ctx, ctx.draft.edit(a.version, [e.model_dump() for e in a.edits]))


@tool("draft_seal", "write", SealArgs,
      "正文和需要的格式内容都写进稿件后，最后单独调用一次：把当前版本收笔，交给定稿和场记。"
      "不检查文风、字数或计划；收笔后本拍稿件不能再改，这一拍随之结束。",
      en="When the prose and any format content are all in the draft, call this once, on its own, last: it seals the "
         "current version and hands it to the final text and the scribe. It does not check style, length or plans; "
         "after sealing this beat's draft cannot change and the beat ends.")
def _draft_seal(ctx: ToolContext, a: SealArgs) -> dict[str, Any]:
    res = ctx.draft.seal(a.version)
    ctx.ended = True
    ctx.emit(ctx.draft.changed())
    return res


# -- the previous beat ------------------------------------------------------------------------------------------


def _previous(ctx: ToolContext) -> PreviousBeat:
    if ctx.previous is None:
        raise ToolError("no_previous", "当前分支还没有已交付的上一拍，没有可回改的回复。",
                        en="This branch has no delivered previous beat yet: there is no reply to revise.")
    return ctx.previous


@tool("previous_draft_read", "read", RangeArgs,
      "读当前分支上一拍已交付回复的精确原文和版本号，供原位修订。start/end 是从 0 起的 UTF-16 偏移，end 不含；省略即全文。只能读上一拍。",
      en="Read the exact text and version of the previous beat's delivered reply on this branch, to revise it in "
         "place. start/end are UTF-16 offsets from 0, end exclusive; omitted: all of it. Only the previous beat.")
def _previous_draft_read(ctx: ToolContext, a: RangeArgs) -> dict[str, Any]:
    prev = _previous(ctx)
    return read_text(prev.text, prev.version, a.start, a.end)


@tool("previous_draft_edit", "write", PreviousEditArgs,
      "按 previous_draft_read 给的版本号和唯一原文引用，原位修订上一拍的回复：没引用的部分原样保留，任何一处冲突整批不改。"
      "只改正文，不重算账本和记忆；本拍已经动过稿纸时不能用。单独调用，成功后本拍结束，界面显示修订后的上一拍。",
      summary=_matches,
      en="Revise the previous beat's reply in place by previous_draft_read's version and unique quotes: the rest is "
         "kept as is, and any conflict changes nothing. Only the prose changes, not the ledger or memory; not "
         "available once this beat has written on the draft. Call it on its own; on success the beat ends and the "
         "window shows the revised previous beat.")
def _previous_draft_edit(ctx: ToolContext, a: PreviousEditArgs) -> dict[str, Any]:
    prev = _previous(ctx)
    d = ctx.draft
    if d.version > 0 or d.text:
        raise ToolError("draft_in_use", "本拍已经写过稿纸，不能再回改上一拍；请在本拍稿件里继续，或用 draft_seal 收笔。",
                        en="This beat has already written on the draft, so the previous beat can no longer be revised; "
                           "go on in this beat's draft, or seal it with draft_seal.")
    if a.version != prev.version:
        raise ToolError("stale_version", f"版本冲突：你基于版本 {a.version}，上一拍当前是版本 {prev.version}。先 previous_draft_read。",
                        en=f"Version conflict: you wrote against version {a.version}, the previous beat is at version "
                           f"{prev.version}. Call previous_draft_read first.", version=prev.version)
    new_text, levels = apply_edits(prev.text, [e.model_dump() for e in a.edits])
    prev.text, prev.version = new_text, prev.version + 1
    ctx.revision = (prev.assistant_id, new_text, prev.version)
    ctx.ended = True
    ctx.emit(Revised(target=prev.assistant_id, text=new_text, version=prev.version))
    res: dict[str, Any] = {"ok": True, "version": prev.version}
    if any(lv != "exact" for lv in levels):
        res["matches"] = levels
    return res


# -- the user, the ledger, the world book -----------------------------------------------------------------------


@tool("ask", "ask", AskArgs, ASK_DESCRIPTION, summary=_answer, en=ASK_DESCRIPTION_EN)
async def _ask(ctx: ToolContext, a: AskArgs) -> dict[str, Any]:
    req = AskRequest(question=a.question, options=list(a.options))
    ctx.emit(req)
    ans = AskAnswer(answer=None, by="stop") if ctx.ask is None else await ctx.ask(req)
    ctx.asks.append((req, ans))
    if ans.by == "stop":
        ctx.stopped = True
        ctx.ended = True
        return {"answer": None, "by": "stop", "note": STOP_NOTE[spec_language(ctx.language)]}
    return {"answer": ans.answer, "by": ans.by}


@tool("world_state_get", "read", NoArgs,
      "读当前分支完整的账本（世界状态与登场名录，JSON）。只读：账本由场记在收笔后记。",
      en="Read the whole ledger of this branch (world state and roster, JSON). Read-only: the scribe keeps the "
         "ledger after each seal.")
def _world_state_get(ctx: ToolContext, _a: NoArgs) -> dict[str, Any]:
    return {"state": ctx.state.to_dict(), "roster": format_roster(ctx.state, ctx.language)}


@tool("lorebook_search", "read", LorebookSearchArgs,
      "按名字或关键词查世界书，返回 [{title, score, content}]，按相关度排序（标题与关键词命中权重最高）。写涉及设定的内容前先查。",
      summary=_lore_hits,
      en="Search the world book by name or keyword; returns [{title, score, content}] by relevance (title and key "
         "hits weigh most). Look things up before writing anything the setting defines.")
def _lorebook_search(ctx: ToolContext, a: LorebookSearchArgs) -> list[dict[str, Any]]:
    hits = [h.model_dump() for h in ctx.book.search(a.query, a.limit)]
    if ctx.macros is not None:  # lore text reaches the model through the macros like every card text
        for h in hits:
            h["content"] = ctx.macros(h["content"])
    return hits


@tool("lorebook_list", "read", NoArgs,
      "列出世界书全部条目标题，书中顺序；常驻条目标注「（常驻）」。",
      en="List every entry title of the world book in book order; constant entries are marked (constant).")
def _lorebook_list(ctx: ToolContext, _a: NoArgs) -> Any:
    """Every title as a list (the seed's result) up to :data:`LIST_MAX_TITLES`; a bigger book (issue 15 item 10:
    50,000 titles were ~390,000 characters in one tool result) gives ``{"total", "titles", "note"}`` with the first
    titles in book order and a note that ``lorebook_search`` reaches the rest (the tool takes no arguments, so its
    schema — and every golden request — stays as it was)."""
    titles = ctx.book.list_titles()
    if spec_language(ctx.language) == "en":  # the constant mark in English (the titles are the book's own)
        titles = [t[:-len(CONSTANT_MARK)] + " (constant)" if t.endswith(CONSTANT_MARK) else t for t in titles]
    if len(titles) <= LIST_MAX_TITLES:
        return titles
    return {"total": len(titles), "titles": titles[:LIST_MAX_TITLES],
            "note": LIST_NOTE[spec_language(ctx.language)].format(n=len(titles), shown=LIST_MAX_TITLES)}


#: Above this many titles ``lorebook_list`` returns the first ones and a note (see _lorebook_list).
LIST_MAX_TITLES = 2000

#: What ask answers when the user pressed Stop, per language.
STOP_NOTE = {"zh": "用户点了停止：笔已交还用户，本拍到此为止。",
             "en": "The user pressed Stop: the pen is back with the user and this beat ends here."}
#: lorebook_list's note for a big book, per language (``{n}`` titles, ``{shown}`` listed).
LIST_NOTE = {"zh": "世界书共 {n} 条，这里只列出书中顺序的前 {shown} 条；其余请用 lorebook_search 按名字或关键词查。",
             "en": "The world book has {n} entries; only the first {shown} in book order are listed here. Look the "
                   "rest up by name or keyword with lorebook_search."}
#: How :meth:`Lorebook.list_titles` marks a constant entry (said " (constant)" to a chat in English).
CONSTANT_MARK = "（常驻）"
