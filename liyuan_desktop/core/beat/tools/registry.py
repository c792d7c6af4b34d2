"""The tool registry: every tool the model can call is declared once, here or through :func:`tool`.

A declaration (:class:`ToolSpec`) is the tool's name, its mode, its pydantic argument model (which generates the JSON
schema the model sees), its description, its handler and how a successful call is summarised on screen. The sets of
tools a beat offers (role-play, agent mode, memory) are tuples of names in :mod:`core.beat.tools.sets`; the beat
loop (:mod:`core.beat.loop`) looks a called name up here and runs its handler with a
:class:`core.beat.tools.context.ToolContext`.

Specs are generated once and are byte-stable across beats and runs (cached JSON), so the tool block stays in the
provider's prefix cache. The descriptions are our own Chinese text following the semantics of seed 000 (稿纸, 收笔,
上一轮能原位改, 岔口交给用户, 写长篇：正文是文件) and 002 (主演手上只有只读的 world_state_get).

Declaring a tool::

    @tool("world_state_get", "read", NoArgs, "读当前分支完整的账本……", summary=None)
    def _world_state_get(ctx: ToolContext, args: NoArgs) -> dict: ...

``mode`` is "read" (runs concurrently with neighbouring reads of the same response), "write" (in order) or "ask"
(in order, one question at a time; seed 000 declares ask a read tool, but two questions at once would race for the
user's answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

from pydantic import BaseModel, BeforeValidator, Field, ValidationError
from pydantic_core import ErrorDetails

from ...errors import ToolError

if TYPE_CHECKING:
    from .context import ToolContext

#: A handler: (context, validated arguments) → the result the model sees (JSON-serialisable), or an awaitable of it.
#: Refusals raise :class:`ToolError`.
ToolHandler = Callable[["ToolContext", Any], Any]
#: A summary: (the call's arguments as sent, parsed JSON object; the successful result) → one short line for the
#: activity list ("" for none). Failed calls are summarised by their error message, not by this.
ToolSummary = Callable[[dict[str, Any], Any], str]

MODES = ("read", "write", "ask")


def no_bool(v: Any) -> Any:
    """A ``BeforeValidator`` for integer arguments: refuse JSON ``true``/``false`` (pydantic would take them as 1/0)."""
    if isinstance(v, bool):
        raise ValueError("必须是整数，不能是 true/false")
    return v


#: An integer argument that refuses booleans.
Int = Annotated[int, BeforeValidator(no_bool)]
#: A non-negative integer argument that refuses booleans (the constraint first, so the schema says "minimum").
NonNegInt = Annotated[int, Field(ge=0), BeforeValidator(no_bool)]
#: A positive integer argument that refuses booleans (``Annotated[Int, Field(ge=1)]`` would leak "ge" into the schema).
PosInt = Annotated[int, Field(ge=1), BeforeValidator(no_bool)]


# Argument models carry no docstring: pydantic would put it into the schema the model sees (and the prefix cache).
class NoArgs(BaseModel):  # a tool without arguments: schema {"properties": {}, "type": "object"}
    pass


@dataclass(frozen=True)
class ToolSpec:
    """One tool, declared once: ``name`` (what the model calls), ``mode`` (one of :data:`MODES`), ``args`` (the
    pydantic argument model; its schema is what the model sees), ``description`` (the model's only documentation;
    changing a byte invalidates the provider's prefix cache), ``handler`` (:data:`ToolHandler`) and ``summary``
    (:data:`ToolSummary`, or None for no activity line)."""

    name: str
    mode: str
    args: type[BaseModel]
    description: str
    handler: ToolHandler
    summary: Optional[ToolSummary] = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"tool {self.name!r}: mode must be one of {MODES}, not {self.mode!r}")


_REGISTRY: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> ToolSpec:
    """Add ``spec`` to the registry and return it. Raises ValueError when the name is already taken (a tool is
    declared once)."""
    if spec.name in _REGISTRY:
        raise ValueError(f"tool {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    _specs_json.cache_clear()
    return spec


def unregister(name: str) -> None:
    """Remove tool ``name`` from the registry (tests that declare a tool of their own clean up with this).
    Raises KeyError for a name that is not registered."""
    del _REGISTRY[name]
    _specs_json.cache_clear()


def tool(name: str, mode: str, args: type[BaseModel], description: str,
         summary: Optional[ToolSummary] = None) -> Callable[[ToolHandler], ToolHandler]:
    """Decorator form of :func:`register`: declares the decorated function as the handler of tool ``name``."""

    def deco(handler: ToolHandler) -> ToolHandler:
        register(ToolSpec(name, mode, args, description, handler, summary))
        return handler

    return deco


def get_tool(name: str) -> Optional[ToolSpec]:
    """The declaration of tool ``name``, or None when no tool has that name."""
    return _REGISTRY.get(name)


# -- schemas ----------------------------------------------------------------------------------------------------


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
    schema: dict[str, Any] = json.loads(_schema_json(model))
    return schema


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
        for t in (_REGISTRY[n] for n in names)
    ]
    return json.dumps(specs, ensure_ascii=False)


def tool_specs(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """OpenAI function specs (``[{"type": "function", "function": {name, description, parameters}}]``) for the tools
    ``names``, in that order; byte-stable (built once per tuple and cached as JSON). Raises KeyError for a name that
    is not registered (import :mod:`core.beat.tools.sets` to have every shipped tool declared)."""
    specs: list[dict[str, Any]] = json.loads(_specs_json(tuple(names)))
    return specs


# -- arguments --------------------------------------------------------------------------------------------------


def _zh(err: ErrorDetails) -> str:
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


#: Characters the raw JSON arguments of one call may have (issue 29 §1: a model could send megabytes of text into
#: a file, the outline or the draft). A long chapter written whole is ~30,000 字; the bound leaves ten times that.
#: Checked here, before parsing, for every tool, so the byte-stable schemas carry no ``maxLength``.
MAX_ARGS_CHARS = 300_000


def parse_args(spec: ToolSpec, raw: str) -> BaseModel:
    """Parse the raw JSON arguments of a call (empty means ``{}``) and validate them against the tool's model.

    Raises :class:`ToolError` with code ``bad_json`` (not JSON) or ``bad_args`` (not an object, invalid: up to
    five problems named, in Chinese; or over :data:`MAX_ARGS_CHARS` characters, refused unread) and a message the
    model can act on (what was wrong and how to resend); its :meth:`~ToolError.to_result` is
    ``{"ok": false, "error": code, "message": …}``."""
    if raw and len(raw) > MAX_ARGS_CHARS:
        raise ToolError("bad_args", f"{spec.name} 的参数太长（{len(raw)} 个字符，上限 {MAX_ARGS_CHARS}）。"
                                    "请分几次调用，每次只写一部分。")
    text = (raw or "").strip() or "{}"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(
            "bad_json",
            f"{spec.name} 的参数不是合法 JSON（{e.msg}，第 {e.pos} 个字符附近）。请重新发起这次调用，参数写成完整的 JSON 对象。",
        ) from e
    if not isinstance(obj, dict):
        raise ToolError("bad_args", f"{spec.name} 的参数必须是 JSON 对象。")
    try:
        return spec.args.model_validate(obj)
    except ValidationError as e:
        problems = "；".join(f"{'.'.join(str(p) for p in err['loc']) or '参数'}：{_zh(err)}" for err in e.errors()[:5])
        raise ToolError("bad_args", f"{spec.name} 的参数不对：{problems}。") from e
