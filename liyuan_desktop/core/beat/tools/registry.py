"""The tool registry: every tool the model can call is declared once, here or through :func:`tool`.

A declaration (:class:`ToolSpec`) is the tool's name, its mode, its pydantic argument model (which generates the JSON
schema the model sees), its description, its handler and how a successful call is summarised on screen. The sets of
tools a beat offers (role-play, agent mode, memory) are tuples of names in :mod:`core.beat.tools.sets`; the beat
loop (:mod:`core.beat.loop`) looks a called name up here and runs its handler with a
:class:`core.beat.tools.context.ToolContext`.

Specs are generated once per language and are byte-stable across beats and runs (cached JSON), so the tool block
stays in the provider's prefix cache. Every text in them exists in Chinese and English (issue 32: the model of an
English chat reads English): a tool's ``description`` and ``en``, an argument's ``Field(description=…,
json_schema_extra=en(…))`` — the Chinese schemas are exactly those of before (the English text is taken out of
them), the English ones carry the English text in ``description``. The Chinese descriptions are our own text following the semantics of seed 000 (稿纸, 收笔,
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
from ...text import prompt_language

if TYPE_CHECKING:
    from .context import ToolContext

#: A handler: (context, validated arguments) → the result the model sees (JSON-serialisable), or an awaitable of it.
#: Refusals raise :class:`ToolError`.
ToolHandler = Callable[["ToolContext", Any], Any]
#: A summary: (the call's arguments as sent, parsed JSON object; the successful result) → one short line for the
#: activity list ("" for none). Failed calls are summarised by their error message, not by this.
ToolSummary = Callable[[dict[str, Any], Any], str]

MODES = ("read", "write", "ask")


class ArgError(ValueError):
    """A validator's refusal of an argument, in Chinese (``str()``) and English (``en``): the model of a chat in
    English reads the English (:func:`parse_args`). Model-facing, like a :class:`~core.errors.ToolError` with ``en=``:
    the English is a keyword so ``tests/test_no_chinese_raises.py`` sees both languages at the raise."""

    def __init__(self, zh: str, *, en: str):
        super().__init__(zh)
        self.en = en


def no_bool(v: Any) -> Any:
    """A ``BeforeValidator`` for integer arguments: refuse JSON ``true``/``false`` (pydantic would take them as 1/0)."""
    if isinstance(v, bool):
        raise ArgError("必须是整数，不能是 true/false", en="must be an integer, not true/false")
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
    changing a byte invalidates the provider's prefix cache), ``handler`` (:data:`ToolHandler`), ``summary``
    (:data:`ToolSummary`, or None for no activity line) and ``en`` (the description for a chat in English)."""

    name: str
    mode: str
    args: type[BaseModel]
    description: str
    handler: ToolHandler
    summary: Optional[ToolSummary] = None
    en: str = ""

    def description_for(self, language: str) -> str:
        """The description in the chat's ``language`` (:func:`spec_language`)."""
        return self.en if spec_language(language) == "en" and self.en else self.description

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
         summary: Optional[ToolSummary] = None, *, en: str = "") -> Callable[[ToolHandler], ToolHandler]:
    """Decorator form of :func:`register`: declares the decorated function as the handler of tool ``name``
    (``en``: its description in English)."""

    def deco(handler: ToolHandler) -> ToolHandler:
        register(ToolSpec(name, mode, args, description, handler, summary, en))
        return handler

    return deco


def get_tool(name: str) -> Optional[ToolSpec]:
    """The declaration of tool ``name``, or None when no tool has that name."""
    return _REGISTRY.get(name)


# -- schemas ----------------------------------------------------------------------------------------------------

#: The key under which an argument's English description rides in its pydantic schema (``json_schema_extra``);
#: never sent: :func:`schema_of` puts it in ``description`` for English and drops it for Chinese.
EN_KEY = "x-liyuan-en"


def en(text: str) -> dict[str, Any]:
    """``json_schema_extra`` of an argument whose description has an English version: ``Field(description="中文",
    json_schema_extra=en("English"))``."""
    return {EN_KEY: text}


def spec_language(language: str) -> str:
    """The language the tool texts are sent in for a chat in ``language``: "zh" for Chinese (or none), "en" for every
    other (the shipped texts exist in these two)."""
    return prompt_language(language)


def _clean_schema(node: Any, defs: dict[str, Any], lang: str = "zh") -> Any:
    """Inline ``$ref``s, drop pydantic's titles, turn ``anyOf [X, null]`` into X (optional params); the
    description in ``lang`` (:data:`EN_KEY`)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _clean_schema(defs[node["$ref"].rsplit("/", 1)[-1]], defs, lang)
        if "anyOf" in node:
            branches = [b for b in node["anyOf"] if b.get("type") != "null"]
            if len(branches) == 1:
                merged = {**{k: v for k, v in node.items() if k not in ("anyOf", "default")}, **branches[0]}
                return _clean_schema(merged, defs, lang)
        out = {}
        for k, v in node.items():
            if k in ("title", "$defs", EN_KEY):
                continue
            if k == "default" and v is None:
                continue
            if k == "description" and lang == "en" and isinstance(node.get(EN_KEY), str):
                v = node[EN_KEY]
            out[k] = (_clean_schema(v, defs, lang) if k != "properties"
                      else {pk: _clean_schema(pv, defs, lang) for pk, pv in v.items()})
        return out
    if isinstance(node, list):
        return [_clean_schema(x, defs, lang) for x in node]
    return node


def schema_of(model: type[BaseModel], language: str = "zh") -> dict[str, Any]:
    """A compact JSON schema (object with properties/required) generated from a pydantic argument model, its
    descriptions in ``language`` (:func:`spec_language`; a fresh copy of a cached one: generating a schema costs
    milliseconds and happens for every model call)."""
    schema: dict[str, Any] = json.loads(_schema_json(model, spec_language(language)))
    return schema


@lru_cache(maxsize=None)
def _schema_json(model: type[BaseModel], lang: str = "zh") -> str:
    raw = model.model_json_schema()
    schema = _clean_schema(raw, raw.get("$defs", {}), lang)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return json.dumps(schema, ensure_ascii=False)


@lru_cache(maxsize=None)
def _specs_json(names: tuple[str, ...], lang: str = "zh") -> str:
    specs = [
        {"type": "function", "function": {"name": t.name, "description": t.description_for(lang),
                                          "parameters": schema_of(t.args, lang)}}
        for t in (_REGISTRY[n] for n in names)
    ]
    return json.dumps(specs, ensure_ascii=False)


def tool_specs(names: tuple[str, ...], language: str = "zh") -> list[dict[str, Any]]:
    """OpenAI function specs (``[{"type": "function", "function": {name, description, parameters}}]``) for the tools
    ``names``, in that order, their texts in the chat's ``language`` (:func:`spec_language`); byte-stable (built
    once per tuple and language and cached as JSON). Raises KeyError for a name that is not registered (import
    :mod:`core.beat.tools.sets` to have every shipped tool declared)."""
    specs: list[dict[str, Any]] = json.loads(_specs_json(tuple(names), spec_language(language)))
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


def _en(err: ErrorDetails) -> str:
    """:func:`_zh` in English (a chat in English; pydantic's own message for the rest)."""
    t, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    n = len(got) if isinstance(got, (list, str)) else None
    raised = ctx.get("error")
    error = raised.en if isinstance(raised, ArgError) else str(raised if raised is not None else err.get("msg", ""))
    table = {
        "missing": "this argument is missing",
        "int_parsing": "must be an integer", "int_type": "must be an integer", "string_type": "must be a string",
        "list_type": "must be an array", "model_type": "must be an object", "dict_type": "must be an object",
        "too_short": f"needs at least {ctx.get('min_length')} items" + (f" (got {n})" if n is not None else ""),
        "too_long": f"takes at most {ctx.get('max_length')} items" + (f" (got {n})" if n is not None else ""),
        "greater_than_equal": f"must be at least {ctx.get('ge')}", "less_than_equal": f"must be at most {ctx.get('le')}",
        "value_error": error,
    }
    return table.get(t, err.get("msg", t))


#: Characters the raw JSON arguments of one call may have (issue 29 §1: a model could send megabytes of text into
#: a file, the outline or the draft). A long chapter written whole is ~30,000 字; the bound leaves ten times that.
#: Checked here, before parsing, for every tool, so the byte-stable schemas carry no ``maxLength``.
MAX_ARGS_CHARS = 300_000


def parse_args(spec: ToolSpec, raw: str) -> BaseModel:
    """Parse the raw JSON arguments of a call (empty means ``{}``) and validate them against the tool's model.

    Raises :class:`ToolError` with code ``bad_json`` (not JSON) or ``bad_args`` (not an object, invalid: up to
    five problems named; or over :data:`MAX_ARGS_CHARS` characters, refused unread) and a message the model can
    act on (what was wrong and how to resend), in Chinese with its English version (:meth:`ToolError.message_for`); its :meth:`~ToolError.to_result` is ``{"ok": false, "error": code, "message": …}``."""
    n = spec.name
    if raw and len(raw) > MAX_ARGS_CHARS:
        raise ToolError("bad_args", f"{n} 的参数太长（{len(raw)} 个字符，上限 {MAX_ARGS_CHARS}）。"
                                    "请分几次调用，每次只写一部分。",
                        en=f"The arguments of {n} are too long ({len(raw)} characters, the limit is {MAX_ARGS_CHARS})."
                           " Make several calls, each writing one part.")
    text = (raw or "").strip() or "{}"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(
            "bad_json",
            f"{n} 的参数不是合法 JSON（{e.msg}，第 {e.pos} 个字符附近）。请重新发起这次调用，参数写成完整的 JSON 对象。",
            en=f"The arguments of {n} are not valid JSON ({e.msg}, near character {e.pos}). Make the call again with"
               " the arguments as one complete JSON object.",
        ) from e
    if not isinstance(obj, dict):
        raise ToolError("bad_args", f"{n} 的参数必须是 JSON 对象。", en=f"The arguments of {n} must be a JSON object.")
    try:
        return spec.args.model_validate(obj)
    except ValidationError as e:
        errs = e.errors()[:5]
        problems = "；".join(f"{'.'.join(str(p) for p in err['loc']) or '参数'}：{_zh(err)}" for err in errs)
        english = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {_en(err)}" for err in errs)
        raise ToolError("bad_args", f"{n} 的参数不对：{problems}。",
                        en=f"The arguments of {n} are wrong: {english}.") from e
