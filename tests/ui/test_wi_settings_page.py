"""The world-info settings page (世界书设置, issue 14 §1), offscreen: it shows the app's settings and saves them to
settings.json, shows and saves a chat's own overrides (only what differs from the app's; reopening the chat keeps
them), fills itself from a SillyTavern settings.json, keeps min activations and max recursion steps exclusive as
SillyTavern's page does, and is reachable from the window's menu."""

from __future__ import annotations

import json

from liyuan_desktop.core import settings as S
from liyuan_desktop.core.cards import card_from_json
from liyuan_desktop.core.chat.facade import Chat
from liyuan_desktop.core.llm.replay import ReplayModel
from liyuan_desktop.core.lore.settings import WorldInfoSettings
from liyuan_desktop.ui.infra import i18n
from liyuan_desktop.ui.settings.world_info_settings import WorldInfoSettingsDialog


def _card(tmp_path):
    data = {"name": "阿青", "first_mes": "你好。", "description": "d",
            "character_book": {"entries": [{"id": 0, "comment": "灯塔", "keys": ["灯塔"], "content": "北边。",
                                            "enabled": True, "insertion_order": 100, "extensions": {"position": 0}}]}}
    raw = {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "card.json").write_text(json.dumps(raw, ensure_ascii=False), "utf-8")
    return card_from_json(raw, str(tmp_path / "card" / "card.json"))


def test_app_scope_shows_and_saves(qtbot):
    i18n.set_language("zh")
    app = S.AppSettings()
    app.world_info = WorldInfoSettings(world_info_depth=3)
    dlg = WorldInfoSettingsDialog(app, None)
    qtbot.addWidget(dlg)
    assert dlg.windowTitle() == "世界书设置"
    assert dlg.scope.count() == 1  # no chat open: only the app's settings
    assert dlg.spins["world_info_depth"].value() == 3
    assert dlg.spins["world_info_budget"].value() == 25 and dlg.checks["world_info_recursive"].isChecked()
    assert dlg.strategy.currentData() == 1
    dlg.spins["world_info_depth"].setValue(5)
    dlg.checks["world_info_recursive"].setChecked(False)
    dlg.spins["world_info_budget_cap"].setValue(800)
    dlg.strategy.setCurrentIndex(dlg.strategy.findData(2))
    saved = []
    dlg.settingsSaved.connect(saved.append)
    assert dlg.save() is True
    on_disk = json.loads(S.settings_path().read_text("utf-8"))["world_info"]
    assert on_disk["world_info_depth"] == 5 and on_disk["world_info_recursive"] is False
    assert on_disk["world_info_budget_cap"] == 800 and on_disk["world_info_character_strategy"] == 2
    assert saved and saved[0].world_info.world_info_depth == 5
    assert S.load_settings().world_info == saved[0].world_info
    assert app.world_info.world_info_depth == 3  # the page edited a copy
    i18n.set_language("en")
    try:
        en = WorldInfoSettingsDialog(app, None)
        qtbot.addWidget(en)
        assert en.windowTitle() == "World info"
    finally:
        i18n.set_language("zh")


def test_chat_scope_saves_overrides_that_survive_reopening(qtbot, tmp_path):
    card = _card(tmp_path)
    app = S.AppSettings()
    app.world_info = WorldInfoSettings(world_info_recursive=False)
    chat = Chat.create(tmp_path / "c", card, ReplayModel(actor=[]), world_info=app.world_info)
    dlg = WorldInfoSettingsDialog(app, chat, "局一")
    qtbot.addWidget(dlg)
    assert dlg.scope.count() == 2 and "局一" in dlg.scope.itemText(1)
    assert dlg.scope.currentIndex() == 0  # the chat has no overrides yet
    dlg.scope.setCurrentIndex(1)
    assert not dlg.checks["world_info_recursive"].isChecked()  # the chat starts from the app's settings
    dlg.spins["world_info_depth"].setValue(4)
    dlg.checks["world_info_include_names"].setChecked(False)
    assert dlg.save() is True
    assert chat.world_info_overrides() == {"world_info_depth": 4, "world_info_include_names": False}
    assert not S.settings_path().exists()  # the app's settings were not touched
    again = Chat.open(tmp_path / "c", card, ReplayModel(actor=[]), world_info=app.world_info)
    assert again.world_info_overrides() == {"world_info_depth": 4, "world_info_include_names": False}
    dlg2 = WorldInfoSettingsDialog(app, again, "局一")
    qtbot.addWidget(dlg2)
    assert dlg2.scope.currentIndex() == 1  # a chat with its own settings opens on them
    assert dlg2.spins["world_info_depth"].value() == 4 and not dlg2.checks["world_info_include_names"].isChecked()
    dlg2.scope.setCurrentIndex(0)
    assert dlg2.spins["world_info_depth"].value() == 2  # the app's value


def test_import_from_sillytavern_and_exclusive_rule(qtbot, tmp_path):
    st = tmp_path / "settings.json"
    st.write_text(json.dumps({"world_info_settings": {
        "world_info": {"globalSelect": ["Eldoria"]}, "world_info_depth": 6, "world_info_budget": 40,
        "world_info_match_whole_words": False, "world_info_max_recursion_steps": 2}}), "utf-8")
    dlg = WorldInfoSettingsDialog(S.AppSettings(), None)
    qtbot.addWidget(dlg)
    assert dlg.import_st_file(st) is True
    assert dlg.spins["world_info_depth"].value() == 6 and dlg.spins["world_info_budget"].value() == 40
    assert not dlg.checks["world_info_match_whole_words"].isChecked()
    assert dlg.spins["world_info_max_recursion_steps"].value() == 2
    assert "Eldoria" in dlg.notes.text()
    dlg.spins["world_info_min_activations"].setValue(3)  # SillyTavern: the other one goes to 0
    assert dlg.spins["world_info_max_recursion_steps"].value() == 0
    assert dlg.values().world_info_min_activations == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    assert dlg.import_st_file(bad) is False and dlg.notes.text()
    assert dlg.spins["world_info_depth"].value() == 6  # a failed import changes nothing
    assert dlg.save() is True
    assert S.load_settings().world_info.world_info_min_activations == 3


def test_window_menu_opens_the_page(qtbot):
    from PySide6.QtGui import QAction

    from liyuan_desktop.ui.window.main_window import MainWindow

    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    acts = [a for m in win.menuBar().actions() if m.menu() for a in m.menu().actions() if isinstance(a, QAction)]
    act = next(a for a in acts if a.text() == "世界书设置…")
    act.trigger()
    dlg = win._wi_dialog
    assert isinstance(dlg, WorldInfoSettingsDialog) and dlg.isVisible()
    dlg.reject()


def test_the_page_says_what_the_budget_is_a_share_of(qtbot, tmp_path):
    """SillyTavern takes the budget's percentage of the preset's context size minus its reply length: the page says
    which one this chat uses, with the numbers, and follows the percentage as it is edited."""
    from liyuan_desktop.core.prompt.presets.model import Preset

    i18n.set_language("zh")
    preset = Preset.from_json({"prompts": [], "openai_max_context": 8000, "openai_max_tokens": 1000}, "长预设")
    chat = Chat.create(tmp_path / "c", _card(tmp_path), ReplayModel(actor=[]), preset=preset)
    dlg = WorldInfoSettingsDialog(S.AppSettings(), chat, "一号")
    qtbot.addWidget(dlg)
    text = dlg.budget_basis.text()
    assert "预设「长预设」" in text and "8,000 − 回复长度 1,000 = 7,000" in text and "预算 1,750 token" in text
    dlg.spins["world_info_budget"].setValue(10)
    assert "预算 700 token" in dlg.budget_basis.text()
    other = tmp_path / "x"
    other.mkdir()
    plain = Chat.create(tmp_path / "d", _card(other), ReplayModel(actor=[]))
    dlg2 = WorldInfoSettingsDialog(S.AppSettings(), plain, "二号")
    qtbot.addWidget(dlg2)
    assert "模型的上下文窗口" in dlg2.budget_basis.text()
    i18n.set_language("en")
    try:
        app_only = WorldInfoSettingsDialog(S.AppSettings(), None)
        qtbot.addWidget(app_only)
        assert "as in SillyTavern" in app_only.budget_basis.text()
    finally:
        i18n.set_language("zh")
