"""Issue 14 §3 in the real window (offscreen): a preset imported and chosen in the 预设 dialog survives reopening and,
with the chat's own sampling, reaches the request body of a loopback server; the connection-profile chooser switches
provider, model, preset and sampling in one click; a new chat gets the default preset."""

from __future__ import annotations

import asyncio
import json

from PySide6.QtCore import Qt

try:
    from sse_server import ScriptedServer, chunk, sse_reply
except ImportError:  # pragma: no cover
    from tests.sse_server import ScriptedServer, chunk, sse_reply

from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import library
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.profiles import ConnectionProfile
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.core.llm.sampling import Sampling
from liyuan_desktop.core.paths import home
from liyuan_desktop.core.prompt.presets.store import install_preset
from liyuan_desktop.ui.dialogs.presets_dialog import NewChatDialog
from liyuan_desktop.ui.window.main_window import MainWindow


def make_window(qtbot, settings: S.AppSettings) -> MainWindow:
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    return win


def preset_file(name: str, text: str, **sampling) -> str:
    path = home() / f"{name}.json"
    path.write_text(json.dumps({
        "prompts": [{"identifier": "main", "name": "Main Prompt", "content": text},
                    {"identifier": "nsfw", "name": "Auxiliary Prompt", "content": ""}],
        "prompt_order": [{"character_id": 100001, "order": [{"identifier": "main", "enabled": True},
                                                            {"identifier": "nsfw", "enabled": True},
                                                            {"identifier": "chatHistory", "enabled": True}]}],
        **sampling}, ensure_ascii=False), "utf-8")
    return str(path)


def script_beat(srv: ScriptedServer, text: str = "雨停了，她推开窗。") -> None:
    srv.script(
        sse_reply(chunk(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {
            "name": "draft_write", "arguments": json.dumps({"version": 0, "content": text}, ensure_ascii=False)}}]),
            chunk(finish="tool_calls")),
        sse_reply(chunk(tool_calls=[{"index": 0, "id": "c2", "type": "function", "function": {
            "name": "draft_seal", "arguments": '{"version": 1}'}}]), chunk(finish="tool_calls")),
        sse_reply(chunk('{"patch": {}}'), chunk(finish="stop")),
    )


async def play_beat(win: MainWindow, words: str, timeout: float = 30.0):
    n = len(win.results)
    win.input.setPlainText(words)
    win.send_clicked()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while len(win.results) == n:
        assert loop.time() < end, "beat timed out"
        await asyncio.sleep(0.02)
    return win.results[-1]


def activity_texts(win: MainWindow) -> list[str]:
    a = win.draft_pane.activity
    return [a.item(i).text() for i in range(a.count())]


async def test_preset_chosen_in_the_window_survives_reopening_and_reaches_the_request(qtbot):
    with ScriptedServer() as srv:
        prov = ProviderSettings(name="loop", base_url=srv.base_url, model="test-model")
        S.remember_key_for_session("loop", "sk-loop-test")
        settings = S.AppSettings(providers=[prov], active_provider="loop")
        win = make_window(qtbot, settings)
        await wait_for(win.view.is_ready)
        card = library.ensure_demo_card()
        d = library.new_chat_dir(card, "带预设")
        Chat.create(d, card.load(), win.provider_models()[0])
        ref = library.ChatRef(name=d.name, dir=str(d))
        assert win.open_chat(card, ref) and win.chat.preset_name() == ""
        # 对话 → 预设…: import, see what it does, use it in this chat
        win.presets_action.trigger()
        dlg = win.presets_dialog
        assert dlg.isVisible() and "没有打开的对话" not in dlg.chat_label.text()
        assert dlg.import_files([preset_file("夜雨", "用白描写雨夜。", temperature=1.1, top_k=40)]) == ["夜雨"]
        assert "Auxiliary Prompt——内容为空" in dlg.report.toPlainText()  # dropped, and why
        assert "温度 = 1.1" in dlg.report.toPlainText()  # one language per label (issue 32)
        qtbot.mouseClick(dlg.use_btn, Qt.MouseButton.LeftButton)
        assert win.chat.preset_name() == "夜雨" and "▶ 夜雨" in dlg.list.currentItem().text()
        assert any("换用预设「夜雨」" in t for t in activity_texts(win))  # the user is told
        # this chat's own sampling: temperature overridden, the preset's top_k kept
        dlg.sampling.boxes["temperature"].setValue(0.4)
        dlg.sampling.stop.setPlainText("<END>")
        qtbot.mouseClick(dlg.sampling_save, Qt.MouseButton.LeftButton)
        assert "temperature=0.4" in dlg.sent_label.text()
        dlg.close()
        script_beat(srv)
        r = await play_beat(win, "推窗看看")
        assert r.sealed
        sent = srv.requests[0].json
        assert "用白描写雨夜。" in sent["messages"][0]["content"]
        assert sent["temperature"] == 0.4 and sent["top_k"] == 40 and sent["stop"] == ["<END>"]
        await win.chat.model.aclose()
        win.close()
        # a new window (the app restarted): the chat opens with its preset and its sampling
        win2 = make_window(qtbot, settings)
        await wait_for(win2.view.is_ready)
        assert win2.open_chat(card, ref)
        assert win2.chat.preset_name() == "夜雨" and "用白描写雨夜。" in win2.chat.system
        assert win2.chat.sampling().temperature == 0.4
        win2.presets_action.trigger()
        assert "本对话：夜雨" in win2.presets_dialog.chat_label.text()
        win2.presets_dialog.close()
        await win2.chat.model.aclose()


async def test_profile_switch_changes_provider_model_preset_and_sampling(qtbot):
    with ScriptedServer() as srv:
        install_preset(preset_file("甲", "甲的写法。"))
        install_preset(preset_file("乙", "乙的写法。", temperature=0.7))
        a = ProviderSettings(name="cloud", base_url=srv.base_url, model="m-cloud")
        b = ProviderSettings(name="local", base_url=srv.base_url + "/v1", model="m-local")
        settings = S.AppSettings(providers=[a, b], active_provider="cloud", profiles=[
            ConnectionProfile(name="云端", provider="cloud", preset="甲"),
            ConnectionProfile(name="本地夜跑", provider="local", model="qwen-local", preset="乙",
                              sampling=Sampling(min_p=0.05, temperature=0.95))])
        win = make_window(qtbot, settings)
        await wait_for(win.view.is_ready)
        card = library.ensure_demo_card()
        d = library.new_chat_dir(card, "切换")
        Chat.create(d, card.load(), win.provider_models()[0])
        assert win.open_chat(card, library.ChatRef(name=d.name, dir=str(d)))
        chooser = win.profile_chooser
        assert [chooser.combo.itemText(i) for i in range(chooser.combo.count())][1:] == ["云端", "本地夜跑"]
        i = chooser.combo.findData("本地夜跑")
        chooser.combo.setCurrentIndex(i)
        chooser.combo.activated.emit(i)  # one click in the toolbar
        assert win.chat.model.model == "qwen-local" and win.chat.model.base_url.endswith("/v1")
        assert win.chat.preset_name() == "乙"
        saved = S.load_settings()
        assert saved.active_provider == "local" and saved.active_profile == "本地夜跑"
        assert saved.provider("local").model == "qwen-local"
        script_beat(srv)
        await play_beat(win, "换个模型试试")
        sent = srv.requests[0].json
        assert srv.requests[0].path.startswith("/v1/") and sent["model"] == "qwen-local"
        assert "乙的写法。" in sent["messages"][0]["content"]
        assert sent["temperature"] == 0.95 and sent["min_p"] == 0.05  # the profile's sampling over the preset's
        await win.chat.model.aclose()
        assert chooser.choose("云端")
        assert win.chat.model.model == "m-cloud" and win.chat.preset_name() == "甲"
        assert win.chat.sampling().temperature is None
        await win.chat.model.aclose()


async def test_new_chat_gets_the_default_preset(qtbot, monkeypatch):
    install_preset(preset_file("默认预设", "默认的写法。"))
    settings = S.AppSettings(default_preset="默认预设")
    win = make_window(qtbot, settings)
    await wait_for(win.view.is_ready)
    win.card_ref = library.ensure_demo_card()
    seen: list[str] = []

    def accept(self):
        seen.append(self.preset.currentData())
        return NewChatDialog.DialogCode.Accepted

    monkeypatch.setattr(NewChatDialog, "exec", accept)
    win.new_chat_dialog()
    await wait_for(lambda: win.chat is not None)  # created and opened on a worker thread (issue 15)
    assert seen == ["默认预设"]  # preselected
    assert win.chat is not None and win.chat.preset_name() == "默认预设"
    assert "默认的写法。" in win.chat.system
