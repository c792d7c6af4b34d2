"""Dark theme everywhere (issue 17, ui/infra/theme.py): in dark mode every top-level widget and dialog has a dark window
colour and dark text fields, the conversation page turns dark, no widget carries a hard-coded light colour in its
own style sheet, the ledger's HTML takes the theme's colours, "system" follows the desktop's colour scheme and a
switch applies live."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from liyuan_desktop.core.settings import AppSettings
from liyuan_desktop.ui.infra import theme

UI = Path(__file__).resolve().parents[2] / "liyuan_desktop" / "ui"
HEX = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def _light(css: str) -> list[str]:
    """Hex colours in ``css`` lighter than mid-grey, plus the named light colours."""
    out = [m.group(0) for m in HEX.finditer(css) if QColor(m.group(0)).lightness() > 160]
    out += re.findall(r"\b(white|ivory|beige|linen|snow)\b", css, re.I)
    return out


def _dark(w: QWidget) -> bool:
    pal = w.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 90 and pal.color(QPalette.ColorRole.Base).lightness() < 90 \
        and pal.color(QPalette.ColorRole.WindowText).lightness() > 160


@pytest.fixture
def dark():
    theme.apply("dark")
    yield
    theme.apply("light")


def _open_dialogs(win) -> list[QWidget]:
    """Every dialog the window offers, opened (non-modal) so their widgets exist."""
    from liyuan_desktop.ui.dialogs.about import make_about_box

    win.open_settings()
    win.open_world_info_settings()
    box = make_about_box(win)
    box.open()
    win.persona_action.trigger()  # 本对话的角色
    return [w for w in QApplication.topLevelWidgets() if w.isVisible()]


def test_dark_theme_reaches_every_window_and_dialog(qtbot, dark):
    from liyuan_desktop.ui.window.main_window import MainWindow

    win = MainWindow(AppSettings(theme="dark"))
    qtbot.addWidget(win)
    win.show()
    win.start_demo()
    tops = _open_dialogs(win)
    assert len(tops) >= 3
    for w in tops:
        qtbot.addWidget(w) if w is not win else None
        assert _dark(w), f"{type(w).__name__} {w.objectName()} is not dark"
        for child in [w, *w.findChildren(QWidget)]:
            bad = _light(child.styleSheet())
            assert not bad, f"{type(child).__name__} {child.objectName()} hard-codes {bad}"
    assert win.view._theme == "dark"
    # the ledger HTML uses the dark table (no light greys meant for a white page)
    html = win.state_pane.view.toHtml()
    assert theme.colors("dark")["muted"] in html and "#555" not in html


def test_no_hard_coded_colours_in_widget_code():
    """Colours belong to ui/infra/theme.py: no setStyleSheet call with a hex colour or a named colour elsewhere."""
    bad = []
    for p in sorted(UI.glob("*.py")):
        if p.name == "theme.py":
            continue
        text = p.read_text("utf-8")
        for m in re.finditer(r"setStyleSheet\((?:[^()]|\([^()]*\))*\)", text):
            call = m.group(0)
            if HEX.search(call) or re.search(r"color:\s*(white|black|gray|grey)\b", call):
                bad.append(f"{p.name}: {call[:80]}")
    assert not bad, bad


def test_system_follows_the_desktop_and_switches_live(qtbot, monkeypatch):
    """"system" asks the desktop (QStyleHints.colorScheme; the offscreen platform cannot change it, so the answer is
    patched) and re-applies when the desktop's scheme changes (what colorSchemeChanged calls)."""
    from liyuan_desktop.ui.roleplay.state_pane import StatePane

    desktop = {"mode": "dark"}
    monkeypatch.setattr(theme, "system_mode", lambda: desktop["mode"])
    seen: list[str] = []
    theme.notifier.changed.connect(seen.append)
    pane = StatePane()
    qtbot.addWidget(pane)
    pane.show()
    try:
        assert theme.apply("system") == "dark"
        QApplication.processEvents()  # shown widgets take the new palette as its change event arrives
        assert _dark(pane)
        assert theme.colors("dark")["muted"] in pane.view.toHtml()
        desktop["mode"] = "light"
        theme._system_changed(Qt.ColorScheme.Light)  # the desktop changed: the window follows by itself
        QApplication.processEvents()
        assert theme.mode() == "light" and not _dark(pane)
        assert theme.colors("light")["muted"] in pane.view.toHtml()
        assert theme.apply("dark") == "dark"  # an explicit choice ignores the desktop
        theme._system_changed(Qt.ColorScheme.Light)
        assert theme.mode() == "dark" and seen[-1] == "dark"
    finally:
        theme.notifier.changed.disconnect(seen.append)
        theme.apply("light")


def test_settings_dialog_offers_system_first_and_saving_applies_it(qtbot):
    from liyuan_desktop.ui.window.main_window import MainWindow

    win = MainWindow(AppSettings(theme="light"))
    qtbot.addWidget(win)
    try:
        win.open_settings()
        dlg = win.settings_dialog
        combo = dlg.theme_combo
        assert [combo.itemData(i) for i in range(combo.count())] == ["system", "light", "dark"]
        assert combo.itemText(0) == "跟随系统"
        s = win.settings.model_copy(update={"theme": "dark"})
        win.apply_settings(s)
        QApplication.processEvents()
        assert theme.mode() == "dark" and _dark(win) and win.view._theme == "dark"
    finally:
        theme.apply("light")


def test_a_widget_with_its_own_style_sheet_follows_a_switch(qtbot):
    """A widget with its own style sheet (a font size, a padding — no colour) takes the new palette on a switch:
    the style-sheet engine copied the application's palette into it when it polished it, and the ask dialog's
    question, polished in light, stayed #2b2621 on the dark window (issue 24)."""
    from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout

    theme.apply("light")
    dialog = QDialog()
    label = QLabel("往哪里走？")
    label.setStyleSheet("font-size: 15px; font-weight: 600; padding: 4px 0 8px 0;")
    QVBoxLayout(dialog).addWidget(label)
    qtbot.addWidget(dialog)
    dialog.show()
    QApplication.processEvents()
    try:
        for mode in ("dark", "light"):
            theme.apply(mode)
            QApplication.processEvents()
            assert label.palette().color(QPalette.ColorRole.WindowText).name() == theme.colors(mode)["text"], mode
            assert label.styleSheet().startswith("font-size: 15px")  # its own sheet is kept
    finally:
        theme.apply("light")


def test_panels_follow_a_switch_without_being_rendered_again(qtbot):
    """The panels' HTML takes its colours from the theme and swaps them on a switch (the keys column was a fixed
    #8a7f70: 3.8:1 on the light page, issue 24)."""
    from liyuan_desktop.ui.frames.panels_view import PanelsView, panels_style

    theme.apply("light")
    view = PanelsView()
    qtbot.addWidget(view)
    view.last_html = panels_style() + "<table><tr><td class='k'>地点</td><td>渡口</td></tr></table>"
    view.browser.setHtml(view.last_html)
    try:
        assert theme.colors("light")["muted"] in view.last_html and "#8a7f70" not in view.last_html
        theme.apply("dark")
        assert theme.colors("dark")["muted"] in view.last_html and theme.colors("light")["muted"] not in view.last_html
        assert view.last_html.endswith("<td>渡口</td></tr></table>")
    finally:
        theme.apply("light")


def test_applying_the_theme_already_applied_does_nothing(qtbot, monkeypatch):
    """The live language switch builds a window again with the same theme: ``theme.apply`` then neither sets the
    palette nor re-polishes the application's widgets nor notifies (it cost ~28 ms a switch); the new window's
    conversation view still takes the theme. A real change, or a palette someone else set, applies as before."""
    from PySide6.QtWidgets import QLabel

    from liyuan_desktop.ui.window.main_window import MainWindow

    theme.apply("dark")
    label = QLabel("x")
    label.setStyleSheet("font-size: 15px;")
    qtbot.addWidget(label)
    repolished: list[str] = []
    monkeypatch.setattr(QLabel, "setStyleSheet", lambda self, css: repolished.append(css))
    seen: list[str] = []
    theme.notifier.changed.connect(seen.append)
    try:
        assert theme.apply("dark") == "dark"
        assert seen == [] and repolished == []
        win = MainWindow(AppSettings(theme="dark"))
        qtbot.addWidget(win)
        assert win.view._theme == "dark" and seen == []  # the full path always notifies
        repolished.clear()  # the window's own style sheets
        assert theme.apply("light") == "light" and seen == ["light"] and repolished
        QApplication.instance().setPalette(theme.palette("dark"))  # not ours any more: applied again
        assert theme.apply("light") == "light" and seen == ["light", "light"]
        assert QApplication.instance().palette() == theme.palette("light")
    finally:
        theme.notifier.changed.disconnect(seen.append)
        theme.apply("light")
