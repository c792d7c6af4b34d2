"""One theme for the whole window (issue 17): a palette and one application style sheet, light or dark, applied to
every pane, dialog and the web views; "system" (the default) follows the desktop's colour scheme and re-applies
when it changes.

Widgets never hard-code colours. They say what a text *is* with :func:`set_role` (``"muted"``, ``"small"``,
``"error"``, ``"warn"``, ``"ok"``, ``"notice"``, ``"banner"``, ``"title"``) and the application style sheet colours
it for the current theme; HTML a widget builds itself (the ledger, the panels) takes its colours from
:func:`colors`. The conversation's web page has its own light/dark CSS; :func:`apply` switches it through
:data:`notifier` (``ConversationView.set_theme`` is connected by the main window).

Sources: ``QStyleHints.colorScheme()`` / ``colorSchemeChanged`` (Qt 6.5+) for the system scheme; the Fusion style
because it draws every control from the palette (the platform styles ignore a dark palette on some desktops).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

THEMES = ("system", "light", "dark")

# One table per mode. Keys are roles, values CSS colours. ``window``/``base``/``text`` feed the QPalette too.
_COLORS: dict[str, dict[str, str]] = {
    "light": {
        "window": "#f3efe7", "base": "#fdfbf7", "alt_base": "#f1ece2", "text": "#2b2621", "button": "#ece6da",
        "highlight": "#b5543c", "highlight_text": "#ffffff", "link": "#8a3a24", "border": "#d4cabb",
        "muted": "#6b645b", "error": "#b00020", "warn": "#a15c00", "ok": "#1e7a45",
        "notice_bg": "#fff4e0", "notice_fg": "#7a4b00", "notice_border": "#f0c36d",
        "heading": "#34465a", "tooltip_bg": "#fffbe8", "disabled": "#a39a8e",
    },
    "dark": {
        "window": "#23211e", "base": "#1c1a18", "alt_base": "#2a2724", "text": "#e8e2d8", "button": "#2f2c28",
        "highlight": "#c0674c", "highlight_text": "#ffffff", "link": "#e7a48c", "border": "#4a443c",
        "muted": "#a59c8f", "error": "#ff8a80", "warn": "#f0c36d", "ok": "#8fd19e",
        "notice_bg": "#3a3018", "notice_fg": "#f0d9a0", "notice_border": "#8a6a22",
        "heading": "#a9c1dc", "tooltip_bg": "#2f2c28", "disabled": "#6e665c",
    },
}


class _Notifier(QObject):
    """``changed(str)`` with the resolved mode ("light"/"dark") after every :func:`apply`."""

    changed = Signal(str)


notifier = _Notifier()
_state = {"setting": "system", "mode": "light", "hooked": False, "fusion": False}


def system_mode() -> str:
    """The desktop's colour scheme as "light" or "dark" (``QStyleHints.colorScheme()``; Unknown reads as light)."""
    app = QGuiApplication.instance()
    if app is None:
        return "light"
    scheme = QGuiApplication.styleHints().colorScheme()
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def resolve(setting: Optional[str]) -> str:
    """The mode a theme setting means now: "light" or "dark" ("system" or anything unknown asks the desktop)."""
    if setting in ("light", "dark"):
        return setting
    return system_mode()


def mode() -> str:
    """The mode last applied ("light" or "dark")."""
    return _state["mode"]


def colors(which: Optional[str] = None) -> dict[str, str]:
    """The colour table for ``which`` (default: the applied mode), for HTML a widget builds itself."""
    return dict(_COLORS["dark" if (which or _state["mode"]) == "dark" else "light"])


def palette(which: str) -> QPalette:
    """A full QPalette for "light" or "dark" (window, base, text, buttons, highlight, links, disabled text)."""
    c = _COLORS["dark" if which == "dark" else "light"]
    p = QPalette()
    R = QPalette.ColorRole
    for role, key in ((R.Window, "window"), (R.WindowText, "text"), (R.Base, "base"), (R.AlternateBase, "alt_base"),
                      (R.Text, "text"), (R.Button, "button"), (R.ButtonText, "text"), (R.BrightText, "error"),
                      (R.Highlight, "highlight"), (R.HighlightedText, "highlight_text"), (R.Link, "link"),
                      (R.LinkVisited, "link"), (R.ToolTipBase, "tooltip_bg"), (R.ToolTipText, "text"),
                      (R.PlaceholderText, "muted"), (R.Mid, "border"), (R.Dark, "border"), (R.Midlight, "alt_base"),
                      (R.Light, "button"), (R.Shadow, "base")):
        p.setColor(role, QColor(c[key]))
    for role in (R.WindowText, R.Text, R.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["disabled"]))
    return p


def style_sheet(which: str) -> str:
    """The application style sheet for "light" or "dark": role colours for labels, borders for frames."""
    c = _COLORS["dark" if which == "dark" else "light"]
    return f"""
*[role="muted"] {{ color: {c['muted']}; }}
*[role="small"] {{ color: {c['muted']}; font-size: 11px; }}
*[role="error"] {{ color: {c['error']}; }}
*[role="warn"] {{ color: {c['warn']}; font-weight: 600; }}
*[role="ok"] {{ color: {c['ok']}; }}
*[role="title"] {{ font-weight: 600; }}
*[role="notice"], *[role="banner"] {{ background: {c['notice_bg']}; color: {c['notice_fg']};
    border: 1px solid {c['notice_border']}; border-radius: 4px; padding: 4px 6px; }}
QToolTip {{ background: {c['tooltip_bg']}; color: {c['text']}; border: 1px solid {c['border']}; }}
QSplitter::handle {{ background: {c['window']}; }}
"""


def set_role(widget: QWidget, role: str) -> None:
    """Mark ``widget`` as a ``role`` text (see the module doc); the style sheet colours it in every theme."""
    widget.setProperty("role", role)
    st = widget.style()
    if st is not None:
        st.unpolish(widget)
        st.polish(widget)


def apply(setting: Optional[str] = None, app: Optional[QApplication] = None) -> str:
    """Apply the theme ``setting`` ("system", "light" or "dark"; None = the last one) to the application: Fusion
    style, palette, style sheet; emits ``notifier.changed`` (web views follow). "system" also re-applies whenever
    the desktop's scheme changes. Returns the resolved mode."""
    app = app or QApplication.instance()  # type: ignore[assignment]
    if setting is not None:
        _state["setting"] = setting if setting in THEMES else "system"
    which = resolve(_state["setting"])
    _state["mode"] = which
    if app is None:
        return which
    if not _state["fusion"]:  # once (app.style() reads "" behind a style sheet, so it cannot be asked)
        _state["fusion"] = True
        app.setStyle("Fusion")
    app.setPalette(palette(which))
    app.setStyleSheet(style_sheet(which))
    if not _state["hooked"]:
        _state["hooked"] = True
        QGuiApplication.styleHints().colorSchemeChanged.connect(_system_changed)
    notifier.changed.emit(which)
    return which


def _system_changed(_scheme: object) -> None:
    if _state["setting"] == "system":
        apply()
