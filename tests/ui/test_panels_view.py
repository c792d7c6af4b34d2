"""The panels tab (ui/frames/panels_view.py): renders the card's panels from the ledger and panel data, escapes values,
loads no outside resources, and is visible only while the card has panels."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QTabWidget, QWidget

from liyuan_desktop.core.ledger.panels import Panel
from liyuan_desktop.core.ledger.state import WorldState
from liyuan_desktop.ui.frames.panels_view import PanelsBrowser, PanelsView


class FakeChat:
    def __init__(self, panels, state):
        self._panels, self._state = panels, state

    def current_panels(self):
        return self._panels

    def current_state(self):
        return self._state


def test_panels_tab_renders_and_hides(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QWidget(), "稿纸")
    view = PanelsView()
    idx = tabs.addTab(view, "面板")
    state = WorldState.model_validate({"time": "夜", "location": "客栈", "characters": {"青梧": {"affinity": 1, "at": "客栈"}}})
    panels = [Panel(id="此刻", title="此刻<b>", template="<p>{{state.time}} {{state.here}} {{data.x}}</p>", data={"x": "<img src=x>"})]
    view.refresh(FakeChat(panels, state))
    assert tabs.isTabVisible(idx) and view.available
    assert "此刻&lt;b&gt;" in view.last_html and "&lt;img src=x&gt;" in view.last_html
    assert "夜 青梧" in view.browser.toPlainText()
    view.refresh(FakeChat([], state))
    assert not tabs.isTabVisible(idx) and view.last_html == ""
    view.refresh(None)
    assert not tabs.isTabVisible(idx)


def test_browser_loads_only_data_urls(qtbot):
    b = PanelsBrowser()
    qtbot.addWidget(b)
    kind = int(QTextDocument.ResourceType.ImageResource.value)
    assert b.loadResource(kind, QUrl("file:///etc/passwd")) is None
    assert b.loadResource(kind, QUrl("http://127.0.0.1:9/x.png")) is None
