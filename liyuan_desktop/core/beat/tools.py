"""Tool specs for the actor model: argument models (pydantic) → JSON schemas → OpenAI function specs.

The descriptions are our own Chinese text following the semantics of seed 000 (稿纸, 收笔, 上一轮能原位改, 岔口交给用户)
and 002 (主演手上只有只读的 world_state_get). Specs are generated once and are byte-stable across beats and runs, so
the tool block stays in the provider's prefix cache. ``mode`` is "read" (may run concurrently) or "write"
(runs in order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Optional

from pydantic import BaseModel, BeforeValidator, Field, ValidationError

_VERSION = "稿件当前版本号（上一次写入回执里的 version；新一拍从 0 开始）"


def _no_bool(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("必须是整数，不能是 true/false")
    return v


Int = Annotated[int, BeforeValidator(_no_bool)]


class DraftWriteArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION)
    content: str = Field(description="完整稿件原文，格式与空白原样保留")


class DraftAppendArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION)
    content: str = Field(description="接在稿件末尾的新一段原文")
    separator: str = Field("\n\n", description="与上文之间的连接字符，默认两个换行；可为空串")


NonNegInt = Annotated[int, Field(ge=0), BeforeValidator(_no_bool)]


class RangeArgs(BaseModel):
    start: Optional[NonNegInt] = Field(None, description="起点，UTF-16 偏移，从 0 开始；省略为开头")
    end: Optional[NonNegInt] = Field(None, description="终点，UTF-16 偏移，不含；省略为结尾")


class DraftSearchArgs(BaseModel):
    query: str = Field(description="要找的原文片段（按字面匹配）")
    limit: int = Field(20, ge=1, le=50, description="最多返回几处命中")


class EditItem(BaseModel):
    old: str = Field(description="稿件里要换掉的原文，须唯一")
    new: str = Field(description="换成的新文字")


class EditArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION)
    edits: list[EditItem] = Field(min_length=1, description="一批修改，全部以同一版本为准定位")


class SealArgs(BaseModel):
    version: Int = Field(ge=0, description=_VERSION)


class PreviousEditArgs(BaseModel):
    version: Int = Field(ge=0, description="previous_draft_read 回执里的 version")
    edits: list[EditItem] = Field(min_length=1, description="一批修改，全部以同一版本为准定位")


class AskArgs(BaseModel):
    question: str = Field(description="交给用户定夺的问题，一句话说清眼下的局面")
    options: list[str] = Field(min_length=2, max_length=4, description="2~4 个具体、可落地、彼此不同的选项")


class NoArgs(BaseModel):
    pass


class LorebookSearchArgs(BaseModel):
    query: str = Field(description="要查的名字或关键词，多个词用空格分开")
    limit: int = Field(5, ge=1, le=20, description="最多返回几条")


@dataclass(frozen=True)
class ToolSpec:
    """A tool: name, mode, argument model, description. ``mode``: "read" (runs concurrently with neighbouring reads),
    "write" (in order), "ask" (in order, one question at a time; seed 000 declares ask a read tool, but two questions
    at once would race for the user's answer)."""

    name: str
    mode: str
    args: type[BaseModel]
    description: str


ASK_DESCRIPTION = (
    "把该由用户拍板的岔口交给用户：给一个问题和 2~4 个选项，用户点选或自己写一句，你再按答案接着演。\n"
    "什么时候问：① 用户这句话本身就在要方向、要选项（如「接下来怎么办」「给我几个选择」），任何一拍都可以直接问；"
    "② 用户这句话引出一个没定的变量，取值不同这一拍会明显走向不同，而卡和世界书里查不到——先问定再演。"
    "一次只问一个，最关键的那个。不分岔的细节自己顺着演，不事事请示；不要替用户定他角色的身份、性格或重大决定。\n"
    "用户点了停止，就是把笔收回去了：这一拍到此为止。\n"
    "预设本身规定了选择框格式（例如要求把选项写进正文）时，按预设写进正文，不用本工具。"
)

RP_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("draft_write", "write", DraftWriteArgs,
             "新建或整篇替换本拍的稿件，写入即向用户展示并保存。写入不等于收笔。局部修改用 draft_edit，接着写用 draft_append，写完用 draft_seal。很短的回应也可以不用稿纸，直接输出。"),
    ToolSpec("draft_append", "write", DraftAppendArgs,
             "在稿件末尾接着写一段并展示。默认与上文隔一个空行，separator 可指定精确的连接字符。不会收笔。"),
    ToolSpec("draft_read", "read", RangeArgs,
             "读本拍稿件的精确原文和版本号。start/end 是从 0 起的 UTF-16 偏移，end 不含；都省略即读全文。"),
    ToolSpec("draft_search", "read", DraftSearchArgs,
             "在本拍稿件里按字面查找。命中保留原文的标点与空白，可直接拿去当 draft_edit 的 old；回执带版本号和命中总数。"),
    ToolSpec("draft_edit", "write", EditArgs,
             "用唯一的原文引用成批修改稿件，所有引用都以同一版本为准。任何一处找不到、不唯一、互相重叠或版本对不上，整批都不改。"
             "首尾空白或等长标点（全角/半角等）不同也能对上，回执会报告匹配级别。"),
    ToolSpec("draft_seal", "write", SealArgs,
             "正文和需要的格式内容都写进稿件后，最后单独调用一次：把当前版本收笔，交给定稿和场记。"
             "不检查文风、字数或计划；收笔后本拍稿件不能再改，这一拍随之结束。"),
    ToolSpec("previous_draft_read", "read", RangeArgs,
             "读当前分支上一拍已交付回复的精确原文和版本号，供原位修订。start/end 是从 0 起的 UTF-16 偏移，end 不含；省略即全文。只能读上一拍。"),
    ToolSpec("previous_draft_edit", "write", PreviousEditArgs,
             "按 previous_draft_read 给的版本号和唯一原文引用，原位修订上一拍的回复：没引用的部分原样保留，任何一处冲突整批不改。"
             "只改正文，不重算账本和记忆；本拍已经动过稿纸时不能用。单独调用，成功后本拍结束，界面显示修订后的上一拍。"),
    ToolSpec("ask", "ask", AskArgs, ASK_DESCRIPTION),
    ToolSpec("world_state_get", "read", NoArgs,
             "读当前分支完整的账本（世界状态与登场名录，JSON）。只读：账本由场记在收笔后记。"),
    ToolSpec("lorebook_search", "read", LorebookSearchArgs,
             "按名字或关键词查世界书，返回 [{title, score, content}]，按相关度排序（标题与关键词命中权重最高）。写涉及设定的内容前先查。"),
    ToolSpec("lorebook_list", "read", NoArgs,
             "列出世界书全部条目标题，书中顺序；常驻条目标注「（常驻）」。"),
)

TOOLS_BY_NAME: dict[str, ToolSpec] = {t.name: t for t in RP_TOOLS}


def _clean_schema(node: Any, defs: dict[str, Any]) -> Any:
    """Inline ``$ref``s, drop pydantic's titles, turn ``anyOf [X, null]`` into X (optional params)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _clean_schema(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        if "anyOf" in node:
            branches = [b for b in node["anyOf"] if b.get("type") != "null"]
            if len(branches) == 1:
                merged = {**{k: v for k, v in node.items() if k not in ("anyOf", "default")}, **branches[0]}
                return _clean_schema(merged, defs)
        out = {}
        for k, v in node.items():
            if k in ("title", "$defs"):
                continue
            if k == "default" and v is None:
                continue
            out[k] = _clean_schema(v, defs) if k != "properties" else {pk: _clean_schema(pv, defs) for pk, pv in v.items()}
        return out
    if isinstance(node, list):
        return [_clean_schema(x, defs) for x in node]
    return node


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A compact JSON schema (object with properties/required) generated from a pydantic argument model (a fresh
    copy of a cached one: generating a schema costs milliseconds and happens for every model call)."""
    return json.loads(_schema_json(model))


@lru_cache(maxsize=None)
def _schema_json(model: type[BaseModel]) -> str:
    raw = model.model_json_schema()
    schema = _clean_schema(raw, raw.get("$defs", {}))
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return json.dumps(schema, ensure_ascii=False)


@lru_cache(maxsize=None)
def _specs_json(names: tuple[str, ...]) -> str:
    specs = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": schema_of(t.args)}}
        for t in (TOOLS_BY_NAME[n] for n in names)
    ]
    return json.dumps(specs, ensure_ascii=False)


def tool_specs(names: Optional[tuple[str, ...]] = None) -> list[dict[str, Any]]:
    """OpenAI tool specs for ``names`` (default: every role-play tool), byte-stable (cached JSON)."""
    return json.loads(_specs_json(names or tuple(TOOLS_BY_NAME)))


def _zh(err: dict[str, Any]) -> str:
    """A Chinese line for the common pydantic validation errors (the model and the user read these)."""
    t, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    n = len(got) if isinstance(got, (list, str)) else None
    table = {
        "missing": "缺少这个参数",
        "int_parsing": "必须是整数", "int_type": "必须是整数", "string_type": "必须是字符串", "list_type": "必须是数组",
        "model_type": "必须是对象", "dict_type": "必须是对象",
        "too_short": f"至少要 {ctx.get('min_length')} 项" + (f"（收到 {n} 项）" if n is not None else ""),
        "too_long": f"最多 {ctx.get('max_length')} 项" + (f"（收到 {n} 项）" if n is not None else ""),
        "greater_than_equal": f"不能小于 {ctx.get('ge')}", "less_than_equal": f"不能大于 {ctx.get('le')}",
        "value_error": str(ctx.get("error", err.get("msg", ""))),
    }
    return table.get(t, err.get("msg", t))


class ToolArgError(Exception):
    """Tool arguments could not be used; ``result`` is the error the model gets back."""

    def __init__(self, result: dict[str, Any]):
        super().__init__(result.get("message", ""))
        self.result = result


def parse_args(spec: ToolSpec, raw: str) -> BaseModel:
    """Parse the raw JSON arguments of a call and validate them against the tool's model.

    Raises :class:`ToolArgError` with ``{"ok": false, "error": "bad_json"|"bad_args", "message": …}`` — text the
    model can act on (what was wrong and how to resend)."""
    text = (raw or "").strip() or "{}"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolArgError({
            "ok": False, "error": "bad_json",
            "message": f"{spec.name} 的参数不是合法 JSON（{e.msg}，第 {e.pos} 个字符附近）。请重新发起这次调用，参数写成完整的 JSON 对象。",
        }) from e
    if not isinstance(obj, dict):
        raise ToolArgError({"ok": False, "error": "bad_args", "message": f"{spec.name} 的参数必须是 JSON 对象。"})
    try:
        return spec.args.model_validate(obj)
    except ValidationError as e:
        problems = "；".join(f"{'.'.join(str(p) for p in err['loc']) or '参数'}：{_zh(err)}" for err in e.errors()[:5])
        raise ToolArgError({"ok": False, "error": "bad_args", "message": f"{spec.name} 的参数不对：{problems}。"}) from e
