"""``liyuan chat --regenerate``, ``liyuan branches [--select|--undo|--swipe]``, ``liyuan inspect``, ``liyuan memory``
run as real processes on a demo chat (issue 7 in the terminal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import ROOT, need_shared

from liyuan_desktop.core.paths import chat_dir
from liyuan_desktop.core.session.tree import SessionTree


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_branches_inspect_memory_from_the_terminal(tmp_path):
    replay = tmp_path / "r.json"
    w = lambda t: {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": t}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    replay.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": [
        {"user": "我要一壶茶。", "actor": [w("她沏了一壶明前龙井。"), seal], "scribe": ['{"patch": {"time": "夜里"}}']},
    ]}, ensure_ascii=False), "utf-8")
    again = tmp_path / "r2.json"
    again.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": [
        {"user": "我要一壶茶。", "actor": [w("她端来一碗热汤。"), seal], "scribe": ['{"patch": {"time": "深夜"}}']},
    ]}, ensure_ascii=False), "utf-8")
    r = run_cli("chat", "青梧", "--chat", "局B", "--model", f"replay:{replay}", "--say", "我要一壶茶。", "--json")
    assert r.returncode == 0, r.stderr
    r = run_cli("chat", "青梧", "--chat", "局B", "--model", f"replay:{again}", "--regenerate", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["beats"][0]["final"] == "她端来一碗热汤。"

    r = run_cli("branches", "青梧/局B", "--json")
    nodes = json.loads(r.stdout)
    assert len(nodes) == 1 and nodes[0]["replies"] == 2 and nodes[0]["reply"] == "她端来一碗热汤。"

    r = run_cli("inspect", "青梧/局B", "--json")
    calls = json.loads(r.stdout)
    assert [c["purpose"] for c in calls] == ["actor", "actor", "scribe"]
    assert calls[0]["request"]["messages"][-1]["content"].endswith("我要一壶茶。")
    assert calls[1]["request"]["messages"][-1]["role"] == "tool"
    r = run_cli("inspect", "青梧/局B")
    assert r.returncode == 0 and "── system" in r.stdout and "draft_seal" in r.stdout

    r = run_cli("memory", "青梧/局B", "热汤", "--json")
    assert json.loads(r.stdout)[0]["snippet"] == "她端来一碗热汤。"
    assert "龙井" not in r.stdout  # the other swipe is another branch

    # swipe back to the first reply: only a leaf line is written
    tree = SessionTree.open(chat_dir("青梧", "局B") / "session.jsonl")
    reply = tree.path_to()[-2] if tree.path_to()[-1].type == "rp-state" else tree.path_to()[-1]
    r = run_cli("branches", "青梧/局B", "--swipe", reply.id[:8], "-1")
    assert r.returncode == 0, r.stderr
    r = run_cli("memory", "青梧/局B", "龙井", "--json")
    assert "明前龙井" in json.loads(r.stdout)[0]["snippet"]

    r = run_cli("branches", "青梧/局B", "--undo")
    assert r.returncode == 0 and "*" not in r.stdout.split("\n")[0][:1]
    r = run_cli("branches", "青梧/局B", "--select", "zzzz")
    assert r.returncode == 2 and "找不到" in r.stderr
    r = run_cli("inspect", "没有/这个")
    assert r.returncode == 2 and "找不到对话" in r.stderr


def test_reader_going_away_and_imported_card_names(tmp_path):
    """``liyuan … | head``: the command finishes quietly and saves its beat; ``liyuan chat NAME`` finds a card that
    ``liyuan card import`` put in the data folder."""
    fixtures = need_shared("fixtures", "cards")
    r = run_cli("card", "import", str(fixtures / "default_Seraphina.png"))
    assert r.returncode == 0, r.stderr
    replay = ROOT / "cards" / "青梧" / "replay.json"
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    p = subprocess.Popen([sys.executable, "-m", "liyuan_desktop", "chat", "Seraphina", "--chat", "管道", "--model",
                          f"replay:{replay}", "--say", "Hello there."], cwd=str(ROOT), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()  # the reader goes away after one line
    err = p.stderr.read().decode("utf-8")
    assert p.wait(timeout=120) == 0 and "Traceback" not in err, err
    tree = SessionTree.open(chat_dir("Seraphina", "管道") / "session.jsonl")
    assert [e.type for e in tree.path_to() if e.type in ("user", "assistant")] == ["user", "assistant"]
    r = run_cli("branches", "Seraphina/管道", "--swipe", tree.path_to()[-1].id[:8], "x")
    assert r.returncode == 2 and "-1 或 1" in r.stderr


def test_allow_card_scripts_for_one_run_only(tmp_path):
    """``liyuan chat CARD --allow-card-scripts`` runs the card's regex scripts for this run (through
    ``Chat.set_scripts_allowed(True, remember=False)``) and stores no permission beside the card."""
    card = tmp_path / "剧本卡.json"
    card.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "剧本卡", "description": "一位说书人。", "first_mes": "开场。",
        "extensions": {"regex_scripts": [{"scriptName": "换茶", "findRegex": "/龙井/g", "replaceString": "碧螺春",
                                          "placement": [2], "markdownOnly": True, "disabled": False}]}}},
        ensure_ascii=False), "utf-8")
    replay = tmp_path / "r.json"
    w = {"tool_calls": [{"name": "draft_write", "arguments": {"version": 0, "content": "她沏了一壶龙井。"}}]}
    seal = {"tool_calls": [{"name": "draft_seal", "arguments": {"version": 1}}]}
    replay.write_text(json.dumps({"format": "liyuan-replay", "version": 1, "beats": [
        {"user": "茶。", "actor": [w, seal], "scribe": ['{"patch": {}}']}]}, ensure_ascii=False), "utf-8")
    r = run_cli("chat", str(card), "--chat", "一次", "--model", f"replay:{replay}", "--say", "茶。",
                "--allow-card-scripts", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["beats"][0]["final"] == "她沏了一壶龙井。"  # the reply is stored as written
    assert not (tmp_path / "liyuan.json").exists()  # nothing remembered beside the card
