"""Issue 25: one way from the app's settings to a chat (core/chat/build.py). The window's 新对话 and ``liyuan chat``
make the chat from the same settings — connection profile's sampling, compaction share, the separate scribe provider,
the persona of the settings, the app's world-info settings — and so send byte-identical first prompts.

Before, the CLI applied none of the profile's sampling, the persona or the scribe provider: the same card, settings
and words gave a different request body from each front end.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

try:
    from sse_server import ScriptedServer, chunk, sse_reply
except ImportError:  # pragma: no cover
    from tests.sse_server import ScriptedServer, chunk, sse_reply

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.llm.profiles import ConnectionProfile
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.core.llm.sampling import Sampling
from liyuan_desktop.ui.dialogs.presets_dialog import NewChatDialog
from liyuan_desktop.ui.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
WORDS = "我推门进去，抖了抖伞上的雨。"


def script_beat(srv: ScriptedServer) -> None:
    """One sealed beat: draft_write, draft_seal, then the scribe's empty patch."""
    srv.script(
        sse_reply(chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {
            "name": "draft_write", "arguments": json.dumps({"version": 0, "content": "雨停了。"}, ensure_ascii=False)}}]),
            chunk(finish="tool_calls")),
        sse_reply(chunk(tool_calls=[{"index": 0, "id": "c2", "type": "function", "function": {
            "name": "draft_seal", "arguments": '{"version": 1}'}}]), chunk(finish="tool_calls")),
        sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")),
    )


def settings_for(srv: ScriptedServer) -> S.AppSettings:
    """Settings that the old CLI path ignored in part: a profile's sampling, a persona, a scribe provider."""
    main = ProviderSettings(name="loop", base_url=srv.base_url, model="story-model", api_key_env="LOOP_TEST_KEY")
    scribe = ProviderSettings(name="cheap", base_url=srv.base_url, model="scribe-model", api_key_env="LOOP_TEST_KEY")
    return S.AppSettings(providers=[main, scribe], active_provider="loop", scribe_provider="cheap",
                         profiles=[ConnectionProfile(name="夜跑", provider="loop",
                                                     sampling=Sampling(temperature=0.33, top_p=0.9))],
                         active_profile="夜跑", compaction_share=0.5,
                         persona_name="阿梨", persona_description="梨园的常客，爱听雨。")


async def test_window_and_cli_send_the_same_first_prompt(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("LOOP_TEST_KEY", "sk-loop-test")
    with ScriptedServer() as srv:
        settings = settings_for(srv)
        # the window: 新对话 on the demo card, through the real command (the dialog accepted as it opens)
        S.save_settings(settings)
        win = MainWindow(S.load_settings())
        qtbot.addWidget(win)
        win.show()
        await wait_for(win.view.is_ready)
        win.card_ref = library.ensure_demo_card()
        monkeypatch.setattr(NewChatDialog, "exec", lambda self: NewChatDialog.DialogCode.Accepted)
        win.new_chat_dialog()
        await wait_for(lambda: win.chat is not None)
        script_beat(srv)
        win.input.setPlainText(WORDS)
        win.send_clicked()
        loop = asyncio.get_running_loop()
        end = loop.time() + 60
        while len(srv.requests) < 3 or not win.results:
            assert loop.time() < end, "the window's beat did not finish"
            await asyncio.sleep(0.05)
        from_window = [r.json for r in srv.requests]
        await win.chat.model.aclose()
        win.close()

        # the CLI: the same settings in a fresh data folder, the same card and words
        home2 = tmp_path / "home-cli"
        home2.mkdir()
        (home2 / "settings.json").write_text(settings.model_dump_json(), "utf-8")
        script_beat(srv)
        env = {**os.environ, "LIYUAN_HOME": str(home2), "NO_PROXY": "*", "QT_QPA_PLATFORM": "offscreen"}
        r = subprocess.run([sys.executable, "-m", "liyuan_desktop", "chat", "青梧", "--provider", "loop",
                            "--say", WORDS], cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        from_cli = [q.json for q in srv.requests[3:]]

    assert len(from_cli) == 3
    first_w, first_c = from_window[0], from_cli[0]
    assert first_w["temperature"] == 0.33 and first_w["top_p"] == 0.9  # the profile's sampling reached both
    assert "阿梨" in json.dumps(first_w["messages"], ensure_ascii=False)  # the persona of the settings
    assert json.dumps(first_c, ensure_ascii=False, sort_keys=True) == json.dumps(first_w, ensure_ascii=False,
                                                                                  sort_keys=True)
    # the scribe's call went to the scribe provider's model from both front ends
    assert from_window[2]["model"] == from_cli[2]["model"] == "scribe-model"
