"""Issue 18: ``liyuan chat --provider NAME`` takes a configured provider (not only built-in presets), and
``liyuan models probe|local|list`` work against a real loopback server, run as the ``liyuan`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

try:
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.loopback_routes import RouteServer

from liyuan_desktop.core.llm import ProviderSettings
from liyuan_desktop.core.settings import AppSettings, save_settings

ROOT = Path(__file__).resolve().parents[1]


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LIYUAN_HOME": str(home), "NO_PROXY": "*"}
    return subprocess.run([sys.executable, "-m", "liyuan_desktop", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=120)


def sse(*texts: str) -> str:
    chunks = [{"object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": t},
                                                                              "finish_reason": None}]} for t in texts]
    chunks.append({"object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {},
                                                                                  "finish_reason": "stop"}]})
    return "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_chat_provider_takes_a_configured_provider(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    with RouteServer({("GET", "/v1/models"): (200, {"data": [{"id": "tiny"}]})},
                     chat=[(200, sse("月色如水，", "青梧抬眼看你。"))]) as srv:
        save_settings(AppSettings(providers=[ProviderSettings(name="我的本地", base_url=srv.base_url, model="tiny",
                                                              max_tokens=333, extra_body={"top_k": 7})]))
        done = run_cli(home, "chat", "青梧", "--chat", "本地", "--provider", "我的本地", "--say", "你好", "--json")
        bodies = srv.chat_bodies()
        listed = run_cli(home, "models", "list", "我的本地", "--json")
    assert bodies, done.stderr
    assert bodies[0]["model"] == "tiny" and bodies[0]["max_tokens"] == 333 and bodies[0]["top_k"] == 7
    assert json.loads(listed.stdout) == {"provider": "我的本地", "models": ["tiny"]}
    bad = run_cli(home, "chat", "青梧", "--provider", "nobody", "--say", "x")
    assert bad.returncode == 2 and "我的本地" in bad.stderr and "deepseek" in bad.stderr


def test_models_probe_and_local_json(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("LIYUAN_HOME", str(home))
    with RouteServer({("GET", "/props"): (200, {"default_generation_settings": {"n_ctx": 4096}})},
                     chat=[(200, sse("OK"))]) as srv:
        save_settings(AppSettings(providers=[ProviderSettings(name="local", base_url=srv.base_url, model="m")],
                                  active_provider="local"))
        probed = run_cli(home, "models", "probe", "--json")
    caps = json.loads(probed.stdout)
    assert caps["provider"] == "local" and caps["tools"] == "ignored" and caps["context_window"] == 4096
    stored = json.loads((home / "settings.json").read_text("utf-8"))["providers"][0]["capabilities"]
    assert stored[0]["context_window"] == 4096
    local = run_cli(home, "models", "local", "--json")
    assert local.returncode == 0 and isinstance(json.loads(local.stdout), list)
