"""The provider form shows every time limit of a model call (issue 29 item 3, issue 30): connect, between reads, no
new content, the whole call and the minimum rate — loaded from the provider, saved back, labelled in both
languages."""

from __future__ import annotations

import keyring
import pytest
from keyring_memory import MemoryKeyring  # noqa: E402

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.llm.providers import preset
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.settings import SettingsDialog


@pytest.fixture(autouse=True)
def mem_keyring():
    old = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    i18n.set_language("zh")
    yield
    keyring.set_keyring(old)
    i18n.set_language("zh")


def test_the_form_shows_and_saves_every_time_limit(qtbot, tmp_path):
    slow = preset("ollama").model_copy(update={"total_timeout": 900.0, "idle_timeout": 240.0,
                                               "min_rate_chars": 30, "min_rate_window": 90.0})
    dlg = SettingsDialog(S.AppSettings(providers=[slow, preset("deepseek")], active_provider="ollama"))
    qtbot.addWidget(dlg)
    dlg.show()
    spins = dlg.timeout_spins
    assert set(spins) == {"connect_timeout", "read_timeout", "idle_timeout", "total_timeout", "min_rate_chars",
                          "min_rate_window"}
    dlg.select_provider("ollama")
    assert spins["total_timeout"].value() == 900 and spins["idle_timeout"].value() == 240
    assert spins["min_rate_chars"].value() == 30 and spins["min_rate_window"].value() == 90
    assert spins["total_timeout"].suffix() == " 秒"
    dlg.select_provider("deepseek")  # the defaults of a provider that never set them
    assert spins["total_timeout"].value() == 600 and spins["min_rate_chars"].value() == 60
    spins["total_timeout"].setValue(1200)
    spins["min_rate_chars"].setValue(0)  # off
    assert spins["min_rate_chars"].text() == "不限"
    dlg.select_provider("ollama")
    assert spins["total_timeout"].value() == 900  # each provider keeps its own
    saved = {p.name: p for p in dlg.collect().providers}
    assert saved["deepseek"].total_timeout == 1200.0 and saved["deepseek"].min_rate_chars == 0
    assert saved["ollama"].min_rate_window == 90.0 and saved["ollama"].connect_timeout == 10.0

    i18n.set_language("en")
    dlg._retranslate()
    assert spins["total_timeout"].suffix() == " s"
    labels = {w.text() for w in dlg.findChildren(type(dlg.name_error))}
    assert {"Time limits", "Whole call", "No new content", "Minimum rate"} <= labels
    if (shot := __import__("os").environ.get("LIYUAN_SHOT")):
        dlg.grab().save(shot)
