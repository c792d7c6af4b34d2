"""Buttons whose slot used to receive Qt's ``checked`` (issue 24 §2), clicked for real: 设置 → 探测能力 probed a
provider named ``False`` (``KeyError: '没有名为「False」的服务商'`` in the log) and showed nothing. The static check
over every connection is tests/test_checked_slots.py. Async tests run on the qasync loop (tests/ui/conftest.py)."""

from __future__ import annotations

import keyring
import pytest

try:
    from loopback_routes import RouteServer
except ImportError:  # tests/ collected as a package
    from tests.loopback_routes import RouteServer

from keyring_memory import MemoryKeyring  # noqa: E402
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.providers import ProviderSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.settings import SettingsDialog


@pytest.fixture(autouse=True)
def mem_keyring():
    old = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    S.clear_session_keys()
    i18n.set_language("zh")
    yield
    keyring.set_keyring(old)


async def test_probe_button_probes_the_provider_in_the_form(qtbot):
    routes = {("GET", "/props"): (200, {"default_generation_settings": {"n_ctx": 4096}})}
    with RouteServer(routes) as srv:
        local = ProviderSettings(name="local", base_url=srv.base_url, model="m")
        dlg = SettingsDialog(S.AppSettings(providers=[local], active_provider="local"))
        qtbot.addWidget(dlg)
        dlg.resize(980, 760)
        dlg.show()
        box = dlg.extras_box
        assert "还没有探测过" in box.summary_label.text()
        box.probe_button.click()
        await wait_for(lambda: box.probe_button.isEnabled() and not box.probing())
        assert ("GET", "/props") in [(m, p) for m, p, _b in srv.requests], "the click probed nothing"
        assert "4096 tokens" in box.summary_label.text(), box.summary_label.text()
