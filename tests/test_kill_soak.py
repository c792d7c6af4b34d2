"""kill -9 soak (issue 15, acceptance): ``liyuan chat …`` in a subprocess, over a slow fake model server on loopback,
killed at random points ~30 times on one chat. After every kill the chat is reopened and checked: it opens, no reply
that was ever on disk is gone, nothing the model had streamed into the draft more than 1 s before the kill is lost,
and every ledger gap is repaired (then, once more at the end, by ``liyuan chat --continue`` itself).

Bounded: at most :data:`KILLS` kills and :data:`BUDGET_S` seconds of killing (about 40 s)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from liyuan_desktop.core.cards import load_card
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.openai_client import OpenAIChatModel
from liyuan_desktop.core.llm.replay import ReplayModel

KILLS = 30
BUDGET_S = 42.0
PIECES = 24  # a draft_write's content arrives in this many pieces …
GAP_S = 0.04  # … this far apart


class _FakeModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that streams slowly: the actor's first call a draft_write (its content in
    :data:`PIECES` pieces, tagged 【bN】, each piece's send time logged), after a tool result a draft_seal, the
    scribe a small patch."""

    protocol_version = "HTTP/1.1"
    log: dict[str, list[tuple[float, str]]] = {}
    counter = [0]
    lock = threading.Lock()

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # the client was killed
            pass

    def _chunk(self, text: str) -> None:
        data = text.encode("utf-8")
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, delta: dict[str, Any], finish: Any = None) -> None:
        obj = {"id": "x", "object": "chat.completion.chunk", "model": "fake",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self._chunk("data: " + json.dumps(obj, ensure_ascii=False) + "\n\n")

    def _tool(self, name: str, args: str, first: bool) -> None:
        piece: dict[str, Any] = {"index": 0, "function": {"arguments": args}}
        if first:
            piece.update(id="call_1", type="function")
            piece["function"]["name"] = name
        self._event({"tool_calls": [piece]})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            msgs = body.get("messages") or []
            if body.get("tools"):
                last = msgs[-1] if msgs else {}
                if last.get("role") == "tool":
                    try:
                        version = int(json.loads(last.get("content") or "{}").get("version", 1))
                    except (ValueError, TypeError, AttributeError):
                        version = 1
                    time.sleep(GAP_S)
                    self._tool("draft_seal", json.dumps({"version": version}), True)
                else:
                    with self.lock:
                        self.counter[0] += 1
                        tag = f"【b{self.counter[0]}】"
                    timeline = self.log.setdefault(tag, [])
                    self._tool("draft_write", '{"version": 0, "content": "' + tag, True)
                    text = tag
                    for i in range(PIECES):
                        time.sleep(GAP_S)
                        piece = f"夜雨第{i}声敲窗，"
                        self._tool("draft_write", piece, False)
                        text += piece
                        timeline.append((time.monotonic(), text))
                    self._tool("draft_write", '"}', False)
                self._event({}, "tool_calls")
            else:  # the scribe
                time.sleep(GAP_S * 2)
                self._event({"content": '{"patch": '})
                time.sleep(GAP_S * 2)
                self._event({"content": '{}}'}, "stop")
            self._chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client was killed
            pass


def _texts(chat: Chat) -> tuple[set[str], list[str]]:
    """Every reply on the tree (any branch), and every draft kept in a beat entry."""
    replies = {e.text for e in chat.tree.entries.values() if e.type == "assistant"}
    drafts = [e.draft for e in chat.tree.entries.values() if e.type == "beat"]
    return replies, drafts


@pytest.mark.timeout(150)
def test_kill_9_soak(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeModel)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    _FakeModel.log.clear()
    card_path = tmp_path / "card.json"
    card_path.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "青梧", "description": "{{char}}是客栈掌柜。", "first_mes": "「客官请进。」"}}, ensure_ascii=False), "utf-8")
    card = load_card(card_path)
    home = tmp_path / "home"
    env = {**os.environ, "LIYUAN_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    d = home / "cards" / "青梧" / "对话" / "soak"
    cmd = [sys.executable, "-m", "liyuan_desktop.cli", "chat", str(card_path), "--chat", "soak", "--provider", "ollama",
           "--base-url", url, "--model", "fake", "--auto", "--json"]
    rng = random.Random(15)
    seen: set[str] = set()
    stats = {"kills": 0, "finished": 0, "drafts_checked": 0, "recovered": 0, "gaps": 0, "unanswered": 0}

    async def repair(chat: Chat) -> int:
        model = OpenAIChatModel(url, "fake", api_key="x", retry_base_wait=0.0)
        chat.model = model
        try:
            return len(await chat.repair_ledger())
        finally:
            await model.aclose()

    t_start = time.monotonic()
    try:
        for i in range(KILLS):
            if time.monotonic() - t_start > BUDGET_S:
                break
            first_tag = _FakeModel.counter[0] + 1  # streams of this run only (a dead client's stream runs on)
            proc = subprocess.Popen([*cmd, "--say", f"第{i}句"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            killed_at = None
            try:
                proc.wait(rng.uniform(0.3, 2.1))
                stats["finished"] += 1
            except subprocess.TimeoutExpired:
                killed_at = time.monotonic()
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                stats["kills"] += 1
            err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
            if killed_at is None:
                assert proc.returncode == 0, err
            if not (d / "session.jsonl").exists():
                continue  # killed before the chat was created
            chat = Chat.open(d, card, ReplayModel(actor=[]))  # every session opens (recovering what it can)
            stats["recovered"] += any("草稿记录恢复" in w for w in chat.load_warnings)
            replies, drafts = _texts(chat)
            assert seen <= replies, f"sealed replies lost: {seen - replies}"
            seen = replies
            if killed_at is not None:  # what had streamed into the draft 1 s before the kill is on disk
                for tag, timeline in list(_FakeModel.log.items()):
                    if int(tag[2:-1]) < first_tag:
                        continue
                    old = [text for t, text in timeline if t <= killed_at - 1.0]
                    if not old:
                        continue
                    stats["drafts_checked"] += 1
                    assert any(x.startswith(old[-1]) for x in replies | set(drafts)), (
                        f"{tag}: the draft streamed 1 s before the kill ({old[-1]!r}) is lost")
            gaps = chat.ledger_gaps()
            stats["unanswered"] += chat.unanswered() is not None
            if gaps:
                stats["gaps"] += len(gaps)
                assert asyncio.run(repair(chat)) == len(gaps)
                assert Chat.open(d, card, ReplayModel(actor=[])).ledger_gaps() == []
        assert stats["kills"] >= 10, stats
        # the CLI's own repair: cut the newest snapshot off as a kill would, then `liyuan chat --continue`
        chat = Chat.open(d, card, ReplayModel(actor=[]))
        if chat.pending_draft() is None and not chat.sealed_beat_count():
            # a machine so busy that every run was killed before it sealed a reply: play one beat to the end, so
            # the repair below has a reply whose snapshot it can restore (--continue has nothing to do otherwise)
            done = subprocess.run([*cmd, "--say", "最后一句"], env=env, capture_output=True, timeout=120)
            assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
            chat = Chat.open(d, card, ReplayModel(actor=[]))
        if chat.pending_draft() is None and chat.sealed_beat_count():
            lines = (d / "session.jsonl").read_bytes().splitlines(keepends=True)
            last = max(n for n, ln in enumerate(lines) if b'"type":"rp-state"' in ln)
            (d / "session.jsonl").write_bytes(b"".join(lines[:last] + lines[last + 1:]))
            assert Chat.open(d, card, ReplayModel(actor=[])).ledger_gaps()
        done = subprocess.run([*cmd, "--continue"], env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        final = Chat.open(d, card, ReplayModel(actor=[]))
        assert final.ledger_gaps() == [] and final.pending_draft() is None
        assert seen <= _texts(final)[0]
    finally:
        server.shutdown()
        server.server_close()
    print(f"\nkill soak: {stats} in {time.monotonic() - t_start:.1f} s")
