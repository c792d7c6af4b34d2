"""Settings → 本地模型 offscreen (issue 18 §3, §1): a scan finds loopback servers of our own that imitate Ollama and
LM Studio, one click sets a provider up (base URL, model, no key), the model picker lists a provider's models, the
output caps and a tools override are saved with the provider, and a successful 测试连接 stores the probed
capabilities. Async tests run on the qasync loop and poll with ``await asyncio.sleep`` (tests/ui/conftest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring
import pytest

try:
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.loopback_routes import RouteServer

from keyring_memory import MemoryKeyring  # noqa: E402
from uihelpers import LoopStallMeter, wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.discovery import Target
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.settings import SettingsDialog

SHOTS = Path("/tmp/shots/w1_llm")


@pytest.fixture(autouse=True)
def mem_keyring():
    old = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    S.clear_session_keys()
    i18n.set_language("zh")
    yield
    keyring.set_keyring(old)


def sse_ok(text: str = "OK") -> str:
    parts = [{"object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": text},
                                                                             "finish_reason": None}]},
             {"object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {},
                                                                             "finish_reason": "stop"}]}]
    return "".join(f"data: {json.dumps(p)}\n\n" for p in parts) + "data: [DONE]\n\n"


def shot(widget, name: str) -> None:
    if os.environ.get("LIYUAN_SHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(SHOTS / name))


async def test_scan_finds_local_servers_and_one_click_sets_one_up(qtbot):
    ollama = RouteServer({("GET", "/api/tags"): (200, {"models": [{"name": "qwen2.5:3b"}, {"name": "llama3.2:1b"}]})})
    lmstudio = RouteServer({("GET", "/v1/models"): (200, {"data": [{"id": "qwen2.5-7b-instruct"}]})})
    with ollama, lmstudio:
        dlg = SettingsDialog(S.AppSettings())
        qtbot.addWidget(dlg)
        dlg.resize(980, 680)
        dlg.show()
        page = dlg.local_page
        page.targets = [Target(kind="ollama", label="Ollama", port=ollama.port),
                        Target(kind="lmstudio", label="LM Studio", port=lmstudio.port)]
        dlg.tabs.setCurrentWidget(page)
        assert dlg.tabs.tabText(dlg.tabs.indexOf(page)) == "本地模型"
        with LoopStallMeter() as meter:
            page.scan_button.click()
            assert page.scanning() and "扫描" in page.status.text()
            await wait_for(lambda: not page.scanning() and page.scan_button.isEnabled())
        assert meter.worst_ms < 2000  # generous: the probes are coroutines, the UI thread never waits on a socket
        assert [s.kind for s in page.servers] == ["ollama", "lmstudio"]
        assert page.tree.topLevelItem(0).child(1).text(0) == "llama3.2:1b"
        shot(dlg, "local_models_found.png")
        assert page.choose("ollama", "llama3.2:1b")
        page.use_button.click()
        assert dlg.tabs.currentIndex() == 0
        assert dlg.name_edit.text() == "ollama" and dlg.model_edit.text() == "llama3.2:1b"
        assert dlg.url_edit.text() == f"http://127.0.0.1:{ollama.port}/v1" and dlg.env_edit.text() == ""
        # the model picker lists what the LM Studio server serves
        assert page.choose("lmstudio")
        page.use_button.click()
        assert dlg.name_edit.text() == "lmstudio"
        dlg.model_edit.setText("")
        dlg.model_picker.refresh()
        await wait_for(lambda: dlg.model_picker.isEnabled() and dlg.model_picker.models)
        assert dlg.model_picker.models == ["qwen2.5-7b-instruct"]
        dlg.model_picker.menu_.actions()[0].trigger()
        assert dlg.model_edit.text() == "qwen2.5-7b-instruct"
        dlg.model_picker.menu_.hide()
        # output caps and a tools override are saved with the provider
        dlg.extras_box.max_spin.setValue(1536)
        dlg.extras_box.scribe_spin.setValue(0)
        dlg.extras_box.tools_combo.setCurrentIndex(dlg.extras_box.tools_combo.findData("rejected"))
        assert not dlg.extras_box.compact_check.isChecked()  # issue 30 §6: off unless asked for
        dlg.extras_box.compact_check.setChecked(True)
        shot(dlg, "provider_extras.png")
        assert dlg.save()
    saved = S.load_settings()
    lm = saved.provider("lmstudio")
    assert lm.max_tokens == 1536 and lm.scribe_max_tokens is None and lm.model == "qwen2.5-7b-instruct"
    assert lm.caps().tools == "rejected" and "tools" in lm.caps().overridden
    assert lm.compact_prompt is True and saved.provider("ollama").compact_prompt is False
    assert saved.provider("ollama").model == "llama3.2:1b" and saved.active_provider == "ollama"


async def test_connection_test_probes_and_stores_capabilities(qtbot):
    routes = {("GET", "/props"): (200, {"default_generation_settings": {"n_ctx": 4096}})}
    with RouteServer(routes, chat=[(200, sse_ok())]) as srv:
        local = ProviderSettings(name="local", base_url=srv.base_url, model="m")
        dlg = SettingsDialog(S.AppSettings(providers=[local], active_provider="local"))
        qtbot.addWidget(dlg)
        dlg.resize(980, 760)
        dlg.show()
        assert "还没有探测过" in dlg.extras_box.summary_label.text()
        dlg.test_button.click()
        await wait_for(lambda: dlg.test_button.isEnabled())
        assert dlg.test_result.text().startswith("连接成功")
        text = dlg.extras_box.summary_label.text()
        assert "4096 tokens" in text and "模型不调用" in text, text
        shot(dlg, "capabilities_after_test.png")
        assert dlg.save()
    caps = S.load_settings().provider("local").caps()
    assert caps.context_window == 4096 and caps.tools == "ignored" and caps.probed_at


async def test_english_texts(qtbot):
    i18n.set_language("en")
    dlg = SettingsDialog(S.AppSettings(ui_language="en"))
    qtbot.addWidget(dlg)
    assert dlg.tabs.tabText(dlg.tabs.indexOf(dlg.local_page)) == "Local models"
    assert dlg.local_page.scan_button.text() == "Scan"


def test_estimated_usage_is_shown_as_approximate(qtbot):
    from liyuan_desktop.core.beat.events import CallFinished
    from liyuan_desktop.ui.roleplay.draft_pane import DraftPane

    pane = DraftPane()
    qtbot.addWidget(pane)
    pane.on_event(CallFinished(round=1, tools=[], usage={"prompt_tokens": 900, "estimated": True}, prompt_tokens=900,
                               completion_tokens=40))
    assert pane.meta.text().startswith("约 #1: 输入 900")
    pane.on_event(CallFinished(round=2, tools=[], usage={"prompt_tokens": 950}, prompt_tokens=950, completion_tokens=4))
    assert pane.meta.text().splitlines()[-1].startswith("#2: 输入 950")


async def test_profile_dialog_model_picker_lists_the_providers_models(qtbot):
    from liyuan_desktop.ui.settings.profiles import ProfilesDialog

    with RouteServer({("GET", "/v1/models"): (200, {"data": [{"id": "a-model"}, {"id": "b-model"}]})}) as srv:
        s = S.AppSettings(providers=[ProviderSettings(name="local", base_url=srv.base_url, model="a-model")])
        dlg = ProfilesDialog(s)
        qtbot.addWidget(dlg)
        dlg.provider.setCurrentText("local")
        dlg.model_picker.refresh()
        await wait_for(lambda: dlg.model_picker.models)
        assert dlg.model_picker.models == ["a-model", "b-model"]
        dlg.model_picker.menu_.actions()[1].trigger()
        assert dlg.model.text() == "b-model"
