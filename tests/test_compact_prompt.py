"""Issue 30 §6, the compact prompt for small / CPU models: with ``compact_prompt`` on the provider, a role-play beat
sends the compact rules (the card layers untouched) and five tools instead of twelve — over real HTTP on loopback —
and the prompt's head stays byte-identical from one beat to the next (the server's prefix cache holds)."""

from __future__ import annotations

import json

import pytest
from helpers import DEMO_CARD
from sse_server import ScriptedServer, chunk, sse_reply

from liyuan_desktop.core.beat.tools.sets import COMPACT_ROLEPLAY_TOOLS
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm import ProviderSettings, build_model
from liyuan_desktop.core.prompt.assemble import prompt_resource


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def _tool(i: int, name: str, args: dict) -> list:
    return [chunk(tool_calls=[{"index": 0, "id": f"c{i}", "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]),
            chunk(finish="tool_calls")]


def _beat(text: str) -> list:
    return [sse_reply(*_tool(1, "draft_write", {"version": 0, "content": text})),
            sse_reply(*_tool(2, "draft_seal", {"version": 1})),
            sse_reply(chunk('{"patch": {}}'), chunk(finish="stop"))]


async def test_the_compact_prompt_is_smaller_and_stable(tmp_path, server):
    full_model = build_model(ProviderSettings(name="cpu", base_url=server.base_url, model="qwen-0.5b"), api_key="")
    compact_model = build_model(ProviderSettings(name="cpu", base_url=server.base_url, model="qwen-0.5b",
                                                 compact_prompt=True), api_key="")
    sizes = {}
    for name, model in (("full", full_model), ("compact", compact_model)):
        chat = Chat.create(tmp_path / name, load_card(DEMO_CARD), model)
        server.script(*_beat("门帘一掀，雨声涌了进来。"), *_beat("她把伞靠在门边。"))
        start = len(server.requests)
        assert (await chat.send("我推门进去。")).outcome == "sealed"
        assert (await chat.send("我坐下。")).outcome == "sealed"
        first, second = server.requests[start].json, server.requests[start + 3].json
        sizes[name] = (len(json.dumps(first["messages"][0], ensure_ascii=False)),
                       len(json.dumps(first.get("tools", []), ensure_ascii=False)))
        assert first["messages"][0] == second["messages"][0]  # the head is byte-stable beat to beat
        assert first.get("tools") == second.get("tools")
        if name == "compact":
            names = [t["function"]["name"] for t in first["tools"]]
            assert names == list(COMPACT_ROLEPLAY_TOOLS)
            system = first["messages"][0]["content"]
            assert system.startswith(prompt_resource("roleplay_system_compact.md"))
            assert "## 性格" in system and "听雨轩" in system  # the card layers are still there
            calls = chat.inspect_beat(chat.tree.latest("assistant").id)
            assert calls[0]["request"]["messages"][0]["content"] == system  # the inspector shows what was sent
        chat.close()
        await model.aclose()
    print("system+tools chars, full vs compact:", sizes)
    assert sum(sizes["compact"]) < 0.6 * sum(sizes["full"])
