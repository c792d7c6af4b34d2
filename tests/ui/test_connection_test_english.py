"""The Settings dialog's connection test in English (issue 32 §1): against a real loopback server, a working
provider reads "Connected · N ms · model" and a refused key reads the English auth error — no Chinese, the typed key
masked. Runs on the qasync loop (tests/ui/conftest.py) and polls with ``wait_for``."""

from __future__ import annotations

import re

import keyring
import pytest

try:
    from sse_server import ScriptedServer, chunk, json_reply, sse_reply
except ImportError:  # tests/ collected as a package
    from tests.sse_server import ScriptedServer, chunk, json_reply, sse_reply
from keyring_memory import MemoryKeyring  # noqa: E402
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.settings import SettingsDialog

KEY = "sk-ui-SECRET-0123456789abcdef"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """A fresh in-memory keyring (never the user's real one), the English UI, no provider env vars."""
    old = keyring.get_keyring()
    kr = MemoryKeyring()
    keyring.set_keyring(kr)
    S.clear_session_keys()
    i18n.set_language("en")
    monkeypatch.delenv("LIYUAN_TEST_KEY", raising=False)
    yield kr
    S.clear_session_keys()
    keyring.set_keyring(old)
    i18n.set_language("zh")


async def test_connection_test_is_said_in_english(qtbot, english):
    with ScriptedServer() as server:
        local = ProviderSettings(name="local", base_url=server.base_url, model="test-model", api_key_env="LIYUAN_TEST_KEY")
        english.set_password("liyuan-desktop", "local", KEY)
        dlg = SettingsDialog(S.AppSettings(providers=[local], active_provider="local"))
        qtbot.addWidget(dlg)
        dlg.show()

        server.script(sse_reply(chunk(role="assistant", content="p", model="served-model"),
                                chunk(finish="length", model="served-model")))
        dlg.test_button.click()
        await wait_for(lambda: dlg.test_button.isEnabled())
        text = dlg.test_result.text()
        assert re.fullmatch(r"Connected · \d+ ms · served-model", text), text

        wrong = "sk-WRONG-typed-key-987654321"
        dlg.key_edit.setText(wrong)
        server.script(json_reply({"error": {"message": f"Incorrect API key provided: {wrong}"}}, status=401))
        dlg.test_button.click()
        await wait_for(lambda: dlg.test_button.isEnabled())
        text = dlg.test_result.text()
        assert text.startswith("The API key is invalid or not allowed (401)"), text
        assert "Incorrect API key provided: ***" in text
        assert not CJK.search(text), text
        assert wrong not in text and KEY not in text
