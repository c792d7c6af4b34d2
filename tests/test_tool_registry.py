"""The one tool registry (issue 12): a tool declared in one place appears in the specs of a set that offers it, is
dispatched by the beat loop, and its refusals reach the model as ``{"ok": false, "error": code, "message": …}``."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Iterator

import pytest
from pydantic import BaseModel, Field

from liyuan_desktop.core.beat.events import ToolFinished
from liyuan_desktop.core.beat.loop import Beat, BeatInput
from liyuan_desktop.core.beat.tools.context import ToolContext
from liyuan_desktop.core.beat.tools.registry import ToolSpec, get_tool, register, tool_specs, unregister
from liyuan_desktop.core.beat.tools.sets import AGENT_FILE_TOOLS, AGENT_TOOLS, MEMORY_TOOLS, ROLEPLAY_TOOLS
from liyuan_desktop.core.errors import ToolError
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.llm.types import ChatMessage, ChatRequest, ChatResponse
from liyuan_desktop.core.lore import Lorebook

DUMMY = "echo_dummy"
DUMMY_DESCRIPTION = "测试用：把 text 原样回声。text 为「不」时拒绝。"


class EchoArgs(BaseModel):
    text: str = Field(description="要回声的文字")


def _echo(ctx: ToolContext, a: EchoArgs) -> dict[str, Any]:
    if a.text == "不":
        raise ToolError("dummy_refused", "回声工具拒绝了「不」。换一句再试。", hint="换一句")
    return {"echo": a.text, "draft_version": ctx.draft.version}


@pytest.fixture
def dummy() -> Iterator[ToolSpec]:
    """The dummy tool, declared once through the public registration API and removed afterwards."""
    spec = register(ToolSpec(DUMMY, "read", EchoArgs, DUMMY_DESCRIPTION, _echo,
                             summary=lambda a, res: f"回声：{a.get('text', '')}"))
    try:
        yield spec
    finally:
        unregister(DUMMY)
    assert get_tool(DUMMY) is None


class RecordingReplay(ReplayModel):
    """The replay model, keeping a deep copy of every request it answered."""

    def __init__(self, actor: list[dict[str, Any]]):
        super().__init__(actor)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_delta=None) -> ChatResponse:
        self.requests.append(request.model_copy(deep=True))
        return await super().complete(request, on_delta)


def tc(name: str, arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def run_beat(actor: list[dict[str, Any]], tool_names: tuple[str, ...]) -> tuple[Any, RecordingReplay, list[Any]]:
    model = RecordingReplay(actor)
    events: list[Any] = []
    inp = BeatInput(messages=[ChatMessage(role="system", content="系统"), ChatMessage(role="user", content="你好")],
                    model=model, book=Lorebook(), state=WorldState(), previous=None, on_event=events.append,
                    tool_names=tool_names)
    out = asyncio.run(Beat(inp).run())
    return out, model, events


def tool_results(req: ChatRequest) -> list[Any]:
    return [json.loads(m.content) for m in req.messages if m.role == "tool"]


def test_the_sets_are_drawn_from_the_registry():
    assert len(ROLEPLAY_TOOLS) == 12 and ROLEPLAY_TOOLS[0] == "draft_write" and ROLEPLAY_TOOLS[-1] == "lorebook_list"
    assert AGENT_TOOLS[:4] == AGENT_FILE_TOOLS == ("read", "grep", "edit", "write")
    assert AGENT_TOOLS[-1] == MEMORY_TOOLS[0] == "memory_search"
    for name in {*ROLEPLAY_TOOLS, *AGENT_TOOLS}:
        spec = get_tool(name)
        assert spec is not None and spec.name == name and spec.mode in ("read", "write", "ask")
    assert get_tool("ask").mode == "ask" and get_tool("draft_seal").mode == "write"


def test_a_dummy_tool_appears_in_the_specs_of_a_set_that_offers_it(dummy):
    offered = (*ROLEPLAY_TOOLS, DUMMY)
    specs = tool_specs(offered)
    assert [s["function"]["name"] for s in specs] == list(offered)
    assert specs[-1] == {"type": "function", "function": {
        "name": DUMMY, "description": DUMMY_DESCRIPTION,
        "parameters": {"properties": {"text": {"description": "要回声的文字", "type": "string"}},
                       "required": ["text"], "type": "object"}}}
    # the sets that do not offer it are untouched, byte for byte
    assert json.dumps(specs[:-1], ensure_ascii=False) == json.dumps(tool_specs(ROLEPLAY_TOOLS), ensure_ascii=False)
    with pytest.raises(ValueError):  # declared once
        register(ToolSpec(DUMMY, "read", EchoArgs, "又一次", _echo))


def test_the_beat_loop_dispatches_a_dummy_tool_and_its_errors_reach_the_model(dummy):
    actor = [
        {"tool_calls": [tc(DUMMY, {"text": "你好"}), tc(DUMMY, {"text": "不"}), tc(DUMMY, {"txt": 1})]},
        {"tool_calls": [tc("draft_write", {"version": 0, "content": "她笑了。"})]},
        {"tool_calls": [tc(DUMMY, {"text": "再来"}), tc("draft_seal", {"version": 1})]},
    ]
    out, model, events = run_beat(actor, (*ROLEPLAY_TOOLS, DUMMY))
    assert out.outcome == "sealed" and out.final == "她笑了。"
    assert model.requests[0].tools[-1]["function"]["name"] == DUMMY
    first = tool_results(model.requests[1])
    assert first[0] == {"echo": "你好", "draft_version": 0}
    assert first[1] == {"ok": False, "error": "dummy_refused", "message": "回声工具拒绝了「不」。换一句再试。", "hint": "换一句"}
    assert first[2]["ok"] is False and first[2]["error"] == "bad_args" and first[2]["message"].startswith(f"{DUMMY} 的参数不对")
    # the handler sees the beat's own draft through its context (the seal ended the beat: no further request)
    assert len(model.requests) == 3 and out.calls[2].tool_calls[0].result == {"echo": "再来", "draft_version": 1}
    logs = out.calls[0].tool_calls
    assert [(t.name, t.ok, t.mode) for t in logs] == [(DUMMY, True, "read"), (DUMMY, False, "read"), (DUMMY, False, "read")]
    finished = [e for e in events if isinstance(e, ToolFinished) and e.name == DUMMY]
    assert [e.summary for e in finished] == ["回声：你好", "回声工具拒绝了「不」。换一句再试。", first[2]["message"], "回声：再来"]


def test_a_registered_tool_that_is_not_offered_is_unknown_to_the_beat(dummy):
    actor = [{"tool_calls": [tc(DUMMY, {"text": "你好"})]}, {"content": "她笑了。"}]
    out, model, _ = run_beat(actor, ROLEPLAY_TOOLS)
    assert DUMMY not in [s["function"]["name"] for s in model.requests[0].tools]
    res = tool_results(model.requests[1])[0]
    assert res["ok"] is False and res["error"] == "unknown_tool"
    assert out.outcome == "sealed" and out.final == "她笑了。"


def test_unregistered_names_are_refused_by_tool_specs():
    with pytest.raises(KeyError):
        tool_specs(("no_such_tool",))
