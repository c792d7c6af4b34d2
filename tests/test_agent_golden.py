"""The seed's agent-mode turn (../shared/golden/agent.json), end to end through the live engine: the role-play
demo's first two beats give the ledger; an agent chat 「局C」 gets the opening and the two finals as chapters (a user
checkpoint 「导入三章」); the seed's agent turn is replayed (only what the model said). Compared byte for byte: the
system prompt (its three path lines aside), the state block, both checkpoints' files and changes, the 5 objects, the
chapter texts after the turn, and the log lines (ids and times aside)."""

from __future__ import annotations

import json
import os
from datetime import datetime

from helpers import DEMO_CARD, load_golden

from liyuan_desktop.core.beat.events import AskAnswer
from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.paths import chat_dir


def _path_lines_aside(system: str) -> str:
    return system.split("\n\n工作目录：")[0]


async def test_agent_turn_reproduces_the_seed():
    g = load_golden("agent.json")
    r1, r2 = load_golden("round1.json"), load_golden("round2.json")
    card = load_card(DEMO_CARD)
    # the ledger: beats 1-2 of the role-play demo on the golden replay (model output only)
    actor = [{"tool_calls": [{"name": c["name"], "arguments": c["args"]} for c in st["calls"]]} for st in r1["calls"]]
    actor += [{"reasoning": s["reasoning"], "tool_calls": [{"name": c["name"], "arguments": c["args"]} for c in s["calls"]]} for s in r2["steps"]]
    rp = Chat.create(chat_dir(card.name, "局C-扮演"), card, ReplayModel(actor=actor, scribe=[r1["scribe"]["raw"], r2["scribe"]["raw"]]))

    async def ask(req):
        return AskAnswer(answer="直问怀瑾的下落与生死，看她肯不肯给一句实话", by="user")

    f1 = (await rp.send(r1["user"])).final
    f2 = (await rp.send(r2["user"], ask=ask)).final
    # the agent chat, its chapters, the import checkpoint
    steps = [{"reasoning": s["reasoning"], "content": s["content"], "tool_calls": [{"name": c["name"], "arguments": c["args"]} for c in s["calls"]]} for s in g["steps"]]
    d = chat_dir(card.name, "局C")
    chat = Chat.create(d, card, ReplayModel(actor=steps, scribe=['{"patch": {}}']), mode="agent")
    chat.tree.append("rp-state", state=rp.current_state().to_dict(), source="init")
    chat.tree.commit()
    names = sorted(g["checkpoint0"]["files"])
    cp0 = chat.import_chapters(list(zip(names, [card.first_mes, f1, f2])), message="导入三章")
    assert cp0.files == g["checkpoint0"]["files"] and cp0.changed.model_dump() == g["checkpoint0"]["changed"]
    assert cp0.author == "user" and cp0.message == "导入三章"
    stamp = datetime(2026, 10, 20, 16, 14).timestamp()
    for n in names:
        os.utime(d / "正文" / n, (stamp, stamp))
    # the turn
    res = await chat.send(g["user"])
    assert res.injection == g["stateBlock"]
    assert res.sent[-1].content == g["stateBlock"] + "\n\n" + g["user"]
    assert _path_lines_aside(res.sent[0].content) == _path_lines_aside(g["system"])
    assert res.sent[0].content.endswith(f"稿子目录：cards/{card.name}/对话/局C/正文")
    assert res.calls == [["read", "read", "read"], ["edit", "edit"], []]
    assert res.final == g["steps"][2]["content"]
    assert res.output.calls[1].tool_calls[0].result == "ok" and res.output.calls[1].tool_calls[1].result == "ok"
    chapters = {p.name: p.read_text("utf-8") for p in sorted((d / "正文").glob("*.md"))}
    assert chapters == g["chapters"]
    cps = chat.history_log.checkpoints()
    assert len(cps) == 2
    cp1 = cps[1]
    assert cp1.files == g["checkpoint1"]["files"] and cp1.changed.model_dump() == g["checkpoint1"]["changed"]
    assert cp1.author == "agent" and cp1.message == g["checkpoint1"]["message"]
    assert sorted(p.name for p in (d / "历史" / "对象").iterdir() if not p.name.startswith(".")) == sorted(g["objects"])
    lines = (d / "历史" / "检查点.jsonl").read_text("utf-8").splitlines()
    want = g["log"].splitlines()
    for got_line, want_line, cp, gcp in zip(lines, want, cps, (g["checkpoint0"], g["checkpoint1"])):
        fixed = got_line.replace(json.dumps(cp.id), json.dumps(gcp["id"])).replace(f'"ts":{cp.ts}', f'"ts":{gcp["ts"]}')
        fixed = fixed.replace(f',"turnId":{json.dumps(cp.turnId)}', "") if cp.turnId else fixed
        assert fixed == want_line


def test_cli_demo_agent_json(tmp_path):
    import subprocess
    import sys

    g = load_golden("agent.json")
    env = {"LIYUAN_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    p = subprocess.run([sys.executable, "-m", "liyuan_desktop", "--lang", "zh", "chat", "--demo-agent", "--json"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"system", "state_block", "checkpoints", "chapters"}
    assert out["chapters"] == g["chapters"]
    assert [c["files"] for c in out["checkpoints"]] == [g["checkpoint0"]["files"], g["checkpoint1"]["files"]]
    assert _path_lines_aside(out["system"]) == _path_lines_aside(g["system"])
    # the state block matches the seed's but for the chapters' change times
    strip = lambda s: "\n".join(line.rsplit(" ", 2)[0] if line.endswith(tuple("0123456789")) and ".md " in line else line for line in s.splitlines())
    assert strip(out["state_block"]) == strip(g["stateBlock"])
