"""The Liyuan panels beside the conversation (seed 002; ``core/panels.py``): a 「面板」 tab in the main window's
right-hand column with one :class:`QTextBrowser` showing every panel of the chat's card, each rendered from its
fixed template with the ledger and its data. The tab exists only while the card declares panels; it is refreshed
after each scribe run, branch change or ledger edit (``MainWindow.refresh_state``).

A QTextBrowser, not a web view: it runs no scripts at all, and :meth:`PanelsBrowser.loadResource` refuses every
resource except ``data:`` images, so a template can neither execute code nor reach a file or the network. Links
are not followed.
"""

from __future__ import annotations

import html
import logging
import re
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTabWidget, QTextBrowser, QVBoxLayout, QWidget

from ...core.ledger.panels import render_panel
from ..infra import theme
from ..infra.i18n import tr

if TYPE_CHECKING:  # pragma: no cover
    from ...core.chat import Chat

log = logging.getLogger(__name__)

STYLE = """<style>
h3 { margin: 10px 0 4px 0; font-size: 14px; }
td.k { color: {muted}; padding-right: 10px; white-space: nowrap; }
table.ly-panel td { padding: 2px 4px; }
</style>"""


def panels_style() -> str:
    """:data:`STYLE` in the applied theme's colours (ui/infra/theme.py ``colors()``; the keys column is ``muted``)."""
    return STYLE.replace("{muted}", theme.colors()["muted"])


class PanelsBrowser(QTextBrowser):
    """A text browser that loads nothing from outside: only ``data:`` URLs (inline images) are resolved."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setObjectName("panelsBrowser")

    def loadResource(self, kind: int, url: QUrl) -> Any:  # noqa: N802 - Qt API
        """Only ``data:`` resources; everything else (files, http, qrc) is refused (returns None)."""
        if url.scheme().lower() == "data":
            return super().loadResource(kind, url)
        log.info("panels: refused resource %s", url.toString())
        return None


def panels_html(panels: list, state: Any) -> str:
    """The HTML the dock shows: each panel's escaped title as a heading, then its rendered template."""
    parts = [panels_style()]
    for p in panels:
        if p.title:
            parts.append(f"<h3>{html.escape(p.title)}</h3>")
        parts.append(f'<div class="panel" id="{html.escape(p.id, quote=True)}">{render_panel(p, state)}</div>')
    return "".join(parts)


class PanelsView(QWidget):
    """The panels tab beside the conversation (in the main window's right-hand tab column, so that showing it
    never changes the widths of the window's panes). :meth:`refresh` with the open chat (or None) shows its card's
    panels; the tab is visible only while the card has panels."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("panelsView")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.browser = PanelsBrowser(self)
        lay.addWidget(self.browser)
        self.last_html = ""
        self.available = False
        theme.notifier.changed.connect(self._theme_changed)  # a bound slot: disconnected when the view goes

    def _theme_changed(self, _mode: str) -> None:
        """The shown panels in the new theme's colours (their style block swapped; nothing is rendered again)."""
        if self.last_html.startswith("<style>"):
            self.last_html = re.sub(r"^<style>.*?</style>", lambda _m: panels_style(), self.last_html, count=1,
                                    flags=re.S)
            self.browser.setHtml(self.last_html)

    def _tabs(self) -> Optional[QTabWidget]:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QTabWidget):
            w = w.parentWidget()
        return w

    def refresh(self, chat: Optional[Chat]) -> None:
        """Render ``chat.current_panels()`` against ``chat.current_state()``; hide the tab when the chat is None or
        its card has no panels. Never raises for a broken panel (logged, the view shows what it can)."""
        try:
            panels = chat.current_panels() if chat is not None else []
        except Exception:  # a damaged card must not break the window
            log.exception("panels: could not read the card's panels")
            panels = []
        if panels and chat is not None:
            try:
                self.last_html = panels_html(panels, chat.current_state())
            except Exception:
                log.exception("panels: rendering failed")
                self.last_html = html.escape(tr("panels.empty"))
        else:
            self.last_html = ""
        self.browser.setHtml(self.last_html)
        self.available = bool(panels)
        tabs = self._tabs()
        if tabs is not None:
            tabs.setTabVisible(tabs.indexOf(self), self.available)
