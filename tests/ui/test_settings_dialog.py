"""The settings dialog, offscreen: providers from presets, inline validation, saving without keys, keys into a fake
keyring (or the session fallback), the connection test against a loopback server, the language switch.

Async tests run on the qasync loop (tests/ui/conftest.py) and poll with ``await asyncio.sleep``; they never use
qtbot.wait* (../shared/design/desktop-stack.md, pitfall 3)."""

from __future__ import annotations

import json

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtWidgets import QDialog

try:
    from sse_server import Reply, ScriptedServer, chunk, json_reply, sse_reply
except ImportError:  # tests/ collected as a package
    from tests.sse_server import Reply, ScriptedServer, chunk, json_reply, sse_reply

from keyring_memory import MemoryKeyring  # noqa: E402
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.providers import ProviderSettings, preset
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.settings import SettingsDialog

KEY = "sk-ui-SECRET-0123456789abcdef"




@pytest.fixture(autouse=True)
def mem_keyring(monkeypatch):
    """A fresh in-memory keyring for every test (never the user's real one); Chinese UI; no provider env vars."""
    old = keyring.get_keyring()
    kr = MemoryKeyring()
    keyring.set_keyring(kr)
    S.clear_session_keys()
    i18n.set_language("zh")
    for var in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "LIYUAN_TEST_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield kr
    S.clear_session_keys()
    keyring.set_keyring(old)
    i18n.set_language("zh")


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def make_dialog(qtbot, settings: S.AppSettings | None = None) -> SettingsDialog:
    dlg = SettingsDialog(settings or S.AppSettings())
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def add_from_combo(dlg: SettingsDialog, preset_name: str) -> None:
    dlg.preset_combo.setCurrentIndex(dlg.preset_combo.findData(preset_name))
    dlg.add_button.click()


# ---------------------------------------------------------------------------------------------------------------


def test_empty_dialog_shows_hint(qtbot):
    dlg = make_dialog(qtbot)
    assert dlg.windowTitle() == "设置"
    assert dlg.provider_list.count() == 0
    assert dlg.form_stack.currentIndex() == 0 and "离线演示" in dlg.empty_label.text()
    assert not dlg.remove_button.isEnabled()
    assert [dlg.preset_combo.itemData(i) for i in range(dlg.preset_combo.count())] == [
        "deepseek", "openai", "openrouter", "ollama", "lmstudio", "llamacpp", ""]
    assert dlg.preset_combo.itemText(dlg.preset_combo.count() - 1) == "自定义 OpenAI 兼容"


def test_add_from_preset_and_edit_fields(qtbot):
    dlg = make_dialog(qtbot)
    add_from_combo(dlg, "deepseek")
    assert dlg.provider_list.count() == 1
    assert dlg.form_stack.currentIndex() == 1
    assert dlg.name_edit.text() == "deepseek"
    assert dlg.url_edit.text() == "https://api.deepseek.com"
    assert dlg.model_edit.text() == "deepseek-chat"
    assert dlg.env_edit.text() == "DEEPSEEK_API_KEY"
    assert dlg.context_spin.value() == 131072
    assert dlg.active_check.isChecked()  # the first provider becomes the current model
    assert "★ deepseek" in dlg.provider_list.item(0).text()

    dlg.model_edit.setText("deepseek-reasoner")
    dlg.scribe_model_edit.setText("deepseek-chat")
    dlg.context_spin.setValue(65536)
    assert "deepseek-reasoner" in dlg.provider_list.item(0).text()

    add_from_combo(dlg, "deepseek")  # a second copy gets a unique name and is not made current
    assert dlg.name_edit.text() == "deepseek-2" and not dlg.active_check.isChecked()
    add_from_combo(dlg, "")  # custom: empty URL and model are flagged inline
    assert dlg.name_edit.text() == "custom"
    assert not dlg.url_error.isHidden() and dlg.url_error.text() == "不能为空"
    assert not dlg.model_error.isHidden()
    dlg.url_edit.setText("http://127.0.0.1:8000/v1")
    dlg.model_edit.setText("my-model")
    assert dlg.url_error.isHidden() and dlg.model_error.isHidden()

    s = dlg.collect()
    assert [p.name for p in s.providers] == ["deepseek", "deepseek-2", "custom"]
    ds = s.providers[0]
    assert ds.model == "deepseek-reasoner" and ds.scribe_model == "deepseek-chat" and ds.context_window == 65536
    assert s.active_provider == "deepseek"
    assert s.providers[2].base_url == "http://127.0.0.1:8000/v1" and s.providers[2].api_key_env is None


def test_invalid_url_shows_error_and_blocks_saving(qtbot):
    dlg = make_dialog(qtbot)
    add_from_combo(dlg, "openai")
    saved = []
    dlg.settingsSaved.connect(saved.append)

    dlg.url_edit.setText("api.openai.com/v1")
    assert not dlg.url_error.isHidden()
    assert dlg.url_error.text() == "必须以 http:// 或 https:// 开头"
    dlg.save_button.click()
    assert saved == [] and not S.settings_path().exists()
    assert dlg.isVisible() and dlg.result() != QDialog.DialogCode.Accepted
    assert dlg.error_label.text() == "有错误没有改正，设置没有保存。"

    dlg.url_edit.setText("https://")
    assert dlg.url_error.text() == "地址里缺少主机名"

    # a duplicate name and a bad env variable name are caught too
    dlg.url_edit.setText("https://api.openai.com/v1")
    add_from_combo(dlg, "ollama")
    dlg.name_edit.setText("openai")
    assert dlg.name_error.text() == "这个名称已被另一个服务商使用"
    dlg.name_edit.setText("local")
    dlg.env_edit.setText("1BAD-NAME")
    assert not dlg.env_error.isHidden()
    dlg.env_edit.setText("")

    # the test-connection button refuses an invalid form without sending anything
    dlg.url_edit.setText("ftp://x")
    dlg.test_button.click()
    assert dlg.test_result.text() == "请先改正上面的错误再测试。" and not dlg.test_running()

    dlg.url_edit.setText("http://127.0.0.1:11434/v1")
    dlg.save_button.click()
    assert len(saved) == 1 and S.settings_path().exists()


def test_save_writes_settings_without_key_and_key_goes_to_keyring(qtbot, mem_keyring):
    dlg = make_dialog(qtbot)
    add_from_combo(dlg, "deepseek")
    add_from_combo(dlg, "ollama")
    assert dlg.key_status_label.text() == "未设置"
    assert dlg.keyring_notice.isHidden()  # a keyring is available

    dlg.select_provider("deepseek")
    dlg.key_edit.setText(KEY)
    assert dlg.key_edit.echoMode() == dlg.key_edit.EchoMode.Password
    assert "后生效" in dlg.key_status_label.text()
    dlg.scribe_combo.setCurrentIndex(2)  # ollama as the scribe provider
    dlg.persona_name_edit.setText("阿梨")
    dlg.persona_desc_edit.setPlainText("爱听戏的旅人")
    dlg.theme_combo.setCurrentIndex(dlg.theme_combo.findData("dark"))

    with qtbot.waitSignal(dlg.settingsSaved, timeout=2000) as blocker:
        dlg.save_button.click()
    saved = blocker.args[0]
    assert isinstance(saved, S.AppSettings)
    assert dlg.result() == QDialog.DialogCode.Accepted and not dlg.isVisible()
    assert dlg.settings == saved

    text = S.settings_path().read_text("utf-8")
    assert KEY not in text and "sk-" not in text
    data = json.loads(text)
    assert data["active_provider"] == "deepseek" and data["scribe_provider"] == "ollama"
    assert data["persona_name"] == "阿梨" and data["persona_description"] == "爱听戏的旅人"
    assert data["theme"] == "dark" and data["ui_language"] == "zh"
    assert S.load_settings() == saved

    assert mem_keyring.store == {("liyuan-desktop", "deepseek"): KEY}
    assert S.resolve_key(saved.active()) == KEY


def test_save_key_button_and_status(qtbot, mem_keyring, monkeypatch):
    dlg = make_dialog(qtbot, S.AppSettings(providers=[preset("openai")], active_provider="openai"))
    dlg.key_edit.setText(KEY)
    dlg.key_save_button.click()
    assert dlg.key_edit.text() == ""
    assert dlg.key_status_label.text() == "已保存在系统钥匙串"
    assert mem_keyring.store[("liyuan-desktop", "openai")] == KEY

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    dlg.env_edit.setText("")
    assert dlg.key_status_label.text() == "已保存在系统钥匙串"
    dlg.env_edit.setText("OPENAI_API_KEY")  # re-evaluates the status
    assert dlg.key_status_label.text() == "来自环境变量 OPENAI_API_KEY"
    monkeypatch.delenv("OPENAI_API_KEY")

    dlg.key_forget_button.click()
    assert dlg.key_status_label.text() == "未设置"
    assert mem_keyring.store == {}


def test_without_keyring_the_key_lives_in_the_user_only_file(qtbot):
    """Issue 16 §2: no keyring → the 0600 key file; Settings says where the key lives and 清除 removes it."""
    keyring.set_keyring(fail.Keyring())
    dlg = make_dialog(qtbot, S.AppSettings(providers=[preset("deepseek")], active_provider="deepseek"))
    assert not dlg.keyring_ok
    assert not dlg.keyring_notice.isHidden()
    assert dlg.keyring_notice.text() == (
        "本机没有可用的系统钥匙串：密钥保存在本机的一个文件里（只有你的账户能读，不在系统钥匙串中）；"
        "环境变量 DEEPSEEK_API_KEY 仍然优先")
    dlg.key_edit.setText(KEY)
    dlg.save_button.click()
    assert dlg.result() == QDialog.DialogCode.Accepted
    assert KEY not in S.settings_path().read_text("utf-8")
    assert S.session_key("deepseek") is None
    assert S.key_source(preset("deepseek")) == "file"

    again = make_dialog(qtbot, S.load_settings())
    assert again.key_status_label.text() == "已保存在本机文件（不在系统钥匙串中）"
    again.key_forget_button.click()
    assert again.key_status_label.text() == "未设置"
    assert S.key_source(preset("deepseek")) == "none"


def test_rename_moves_key_and_remove_forgets_it(qtbot, mem_keyring):
    mem_keyring.set_password("liyuan-desktop", "deepseek", "sk-ds")
    mem_keyring.set_password("liyuan-desktop", "openai", "sk-oa")
    dlg = make_dialog(qtbot, S.AppSettings(providers=[preset("deepseek"), preset("openai")],
                                           active_provider="openai", scribe_provider="openai"))
    assert dlg.key_status_label.text() == "已保存在系统钥匙串"
    dlg.name_edit.setText("ds-work")
    assert dlg.key_status_label.text() == "已保存在系统钥匙串"  # still found under the old name until saved
    dlg.select_provider("openai")
    dlg.remove_button.click()
    assert dlg.provider_list.count() == 1 and dlg.name_edit.text() == "ds-work"
    assert dlg.scribe_combo.currentIndex() == 0  # the removed scribe provider fell back to "same as current"
    assert dlg.save()
    assert mem_keyring.store == {("liyuan-desktop", "ds-work"): "sk-ds"}
    assert dlg.settings.active_provider is None and dlg.settings.scribe_provider is None
    assert [p.name for p in dlg.settings.providers] == ["ds-work"]


def test_active_checkbox_and_cancel(qtbot):
    dlg = make_dialog(qtbot, S.AppSettings(providers=[preset("deepseek"), preset("ollama")],
                                           active_provider="deepseek"))
    saved = []
    dlg.settingsSaved.connect(saved.append)
    dlg.select_provider("ollama")
    assert not dlg.active_check.isChecked()
    dlg.active_check.setChecked(True)
    assert dlg.collect().active_provider == "ollama"
    assert dlg.provider_list.item(1).text().startswith("★ ollama")
    dlg.active_check.setChecked(False)
    assert dlg.collect().active_provider is None
    dlg.cancel_button.click()
    assert saved == [] and not S.settings_path().exists() and not dlg.isVisible()


def test_language_switch_emits_and_cancel_restores(qtbot):
    dlg = make_dialog(qtbot, S.AppSettings(providers=[preset("deepseek")], active_provider="deepseek"))
    with qtbot.waitSignal(dlg.languageChanged, timeout=2000) as blocker:
        dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
    assert blocker.args == ["en"]
    assert i18n.language() == "en"
    assert dlg.windowTitle() == "Settings"
    assert dlg.test_button.text() == "Test connection"
    assert dlg.save_button.text() == "Save"
    assert dlg.tabs.tabText(2) == "Language and theme"
    assert "(current)" in dlg.provider_list.item(0).text()
    assert dlg.collect().ui_language == "en"

    with qtbot.waitSignal(dlg.languageChanged, timeout=2000) as blocker:
        dlg.reject()
    assert blocker.args == ["zh"] and i18n.language() == "zh"


def test_language_kept_on_save(qtbot):
    dlg = make_dialog(qtbot)
    got = []
    dlg.languageChanged.connect(got.append)
    dlg.language_combo.setCurrentIndex(dlg.language_combo.findData("en"))
    assert dlg.save()
    assert got == ["en"] and i18n.language() == "en"
    assert json.loads(S.settings_path().read_text("utf-8"))["ui_language"] == "en"


async def test_connection_button_success_then_auth_error(qtbot, server, mem_keyring):
    local = ProviderSettings(name="local", base_url=server.base_url, model="test-model",
                             api_key_env="LIYUAN_TEST_KEY")
    mem_keyring.set_password("liyuan-desktop", "local", KEY)
    dlg = make_dialog(qtbot, S.AppSettings(providers=[local], active_provider="local"))

    server.script(sse_reply(chunk(role="assistant", content="p", model="served-model"),
                            chunk(finish="length", model="served-model"), gap=0.05))
    dlg.test_button.click()
    assert not dlg.test_button.isEnabled() and dlg.test_running()
    assert dlg.test_result.text() == "正在测试……"
    await wait_for(lambda: dlg.test_button.isEnabled())
    text = dlg.test_result.text()
    assert text.startswith("连接成功 · ") and text.endswith(" ms · served-model"), text
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the stored key was used

    # a wrong key typed into the field is what the test sends
    wrong = "sk-WRONG-typed-key-987654321"
    dlg.key_edit.setText(wrong)
    server.script(json_reply({"error": {"message": f"Incorrect API key provided: {wrong}"}}, status=401))
    dlg.test_button.click()
    assert not dlg.test_button.isEnabled()
    await wait_for(lambda: dlg.test_button.isEnabled())
    text = dlg.test_result.text()
    assert "API key 无效或无权限 (401)" in text, text
    assert wrong not in text and KEY not in text
    # the last request: a successful test also probed the capabilities (issue 18) in between
    assert server.requests[-1].headers["authorization"] == f"Bearer {wrong}"
    assert "connection" not in S.settings_path().name  # nothing else was touched
    assert not S.settings_path().exists()


async def test_closing_during_a_test_cancels_it(qtbot, qapp, server):
    local = ProviderSettings(name="local", base_url=server.base_url, model="m")
    dlg = make_dialog(qtbot, S.AppSettings(providers=[local]))
    server.script(Reply(body=[": keep-alive\n\n"], stall=True))
    dlg.test_button.click()
    task = dlg._test_task
    await wait_for(lambda: len(server.requests) == 1)
    # the dialog is the only window here: closing it must not quit the app (and stop the qasync loop)
    quit_on_close = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    try:
        dlg.reject()
        await wait_for(lambda: task.done())
    finally:
        qapp.setQuitOnLastWindowClosed(quit_on_close)
    assert task.cancelled() and not dlg.test_running()
    server.release.set()
