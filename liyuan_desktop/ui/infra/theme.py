"""One theme for the whole window (issue 17): a palette, light or dark, applied to every pane, dialog and the web
views; "system" (the default) follows the desktop's colour scheme and re-applies when it changes.

Widgets never hard-code colours. They say what a text *is* with :func:`set_role` (``"muted"``, ``"small"``,
``"error"``, ``"warn"``, ``"ok"``, ``"notice"``, ``"banner"``, ``"title"``) and the theme colours it (a palette per
role widget, renewed on every switch; no application style sheet — see :func:`set_role`); HTML a widget builds
itself (the ledger, the panels) takes its colours from :func:`colors`. The conversation's web page has its own
light/dark CSS; :func:`apply` switches it through :data:`notifier` (``ConversationView.set_theme`` is connected by
the main window).

Sources: ``QStyleHints.colorScheme()`` / ``colorSchemeChanged`` (Qt 6.5+) for the system scheme; the Fusion style
because it draws every control from the palette (the platform styles ignore a dark palette on some desktops),
with the boundaries of controls drawn so they can be seen (:class:`_Style`: check boxes, radio buttons, fields). Every text colour and
control frame meets WCAG 2.x contrast in both modes (tests/ui/test_contrast.py).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QProxyStyle, QStyle, QStyleOption, QToolTip, QWidget

THEMES = ("system", "light", "dark")

# One table per mode. Keys are roles, values CSS colours. ``window``/``base``/``text`` feed the QPalette too.
# Every text colour has WCAG 2.x contrast >= 4.5:1 on window, base and alt_base (tests/ui/test_contrast.py);
# ``control`` (the frame of a check box, a radio button or a text field, see _Style) >= 3:1 on them.
_COLORS: dict[str, dict[str, str]] = {
    "light": {
        "window": "#f3efe7", "base": "#fdfbf7", "alt_base": "#f1ece2", "text": "#2b2621", "button": "#ece6da",
        "highlight": "#b5543c", "highlight_text": "#ffffff", "link": "#8a3a24", "border": "#d4cabb",
        "muted": "#6b645b", "error": "#b00020", "warn": "#9a5800", "ok": "#1e7a45", "control": "#7d7468",
        "notice_bg": "#fff4e0", "notice_fg": "#7a4b00", "notice_border": "#f0c36d",
        "heading": "#34465a", "tooltip_bg": "#fffbe8", "disabled": "#a39a8e",
    },
    "dark": {
        "window": "#23211e", "base": "#1c1a18", "alt_base": "#2a2724", "text": "#e8e2d8", "button": "#2f2c28",
        "highlight": "#b5543c", "highlight_text": "#ffffff", "link": "#e7a48c", "border": "#4a443c",
        "muted": "#aea596", "error": "#ff8a80", "warn": "#f0c36d", "ok": "#8fd19e", "control": "#8f867a",
        "notice_bg": "#3a3018", "notice_fg": "#f0d9a0", "notice_border": "#8a6a22",
        "heading": "#a9c1dc", "tooltip_bg": "#2f2c28", "disabled": "#6e665c",
    },
}


_PE = QStyle.PrimitiveElement
_INDICATORS = (_PE.PE_IndicatorCheckBox, _PE.PE_IndicatorRadioButton)


def _is_text_area(widget: Optional[QWidget]) -> bool:
    """An editable multi-line field (QTextEdit/QPlainTextEdit, not read-only): its frame is a field's boundary."""
    from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

    return isinstance(widget, (QTextEdit, QPlainTextEdit)) and not widget.isReadOnly()


class _Style(QProxyStyle):
    """Fusion, with the boundaries that identify a control drawn again in the theme's ``control`` colour: the
    indicator of a check box or radio button (in item views too) and the frame of a text field (line edit, spin
    box, editable combo box, editable text area). Fusion draws them in the window colour darkened by 40 %: 1.1:1
    against the dark window (a black square on near-black, a field that cannot be told from the window), 1.7-2:1
    against the light one, where WCAG 2.x (success criterion 1.4.11, non-text contrast) asks 3:1. Everything else
    is Fusion's, from the palette; a control with keyboard focus keeps Fusion's highlighted frame."""

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter,  # noqa: N802
                      widget: Optional[QWidget] = None) -> None:
        """Fusion's drawing, then the frame again for indicators (``disabled`` colour when disabled), line-edit
        frames and the frame of an editable text area."""
        super().drawPrimitive(element, option, painter, widget)
        if element in _INDICATORS:
            enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
            _frame(painter, option, "control" if enabled else "disabled", 0,
                   ellipse=element == _PE.PE_IndicatorRadioButton)
        elif element == _PE.PE_FrameLineEdit or (element == _PE.PE_Frame and _is_text_area(widget)):
            if option.state & QStyle.StateFlag.State_Enabled:
                _frame(painter, option, "control", 2 if element == _PE.PE_FrameLineEdit else 0)

    def drawComplexControl(self, control: QStyle.ComplexControl, option: QStyleOption, painter: QPainter,  # noqa: N802
                           widget: Optional[QWidget] = None) -> None:
        """Fusion's drawing, then the frame again for a spin box and an editable combo box."""
        super().drawComplexControl(control, option, painter, widget)
        CC = QStyle.ComplexControl
        if not option.state & QStyle.StateFlag.State_Enabled:
            return
        if control == CC.CC_SpinBox and getattr(option, "frame", True):
            _frame(painter, option, "control", 2)
        elif control == CC.CC_ComboBox and getattr(option, "editable", False) and getattr(option, "frame", True):
            _frame(painter, option, "control", 2)


def _frame(painter: QPainter, option: QStyleOption, key: str, radius: float, ellipse: bool = False) -> None:
    """A 1 px line in the colour table's ``key`` just inside ``option.rect`` (Fusion's geometry for frames and
    indicators); nothing while the control shows keyboard focus (Fusion's highlight stays)."""
    state = option.state
    if state & QStyle.StateFlag.State_HasFocus and state & QStyle.StateFlag.State_KeyboardFocusChange:
        return
    c = _COLORS["dark" if _state["mode"] == "dark" else "light"]
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(QPen(QColor(c[key]), 1))
    r = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
    if ellipse:
        painter.drawEllipse(r)
    elif radius:
        painter.drawRoundedRect(r, radius, radius)
    else:
        painter.drawRect(r)
    painter.restore()


class _Notifier(QObject):
    """``changed(str)`` with the resolved mode ("light"/"dark") after every :func:`apply`."""

    changed = Signal(str)


notifier = _Notifier()
_state: dict = {"setting": "system", "mode": "light", "hooked": False, "style": None}


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


_ROLE_COLOUR = {"muted": "muted", "small": "muted", "error": "error", "warn": "warn", "ok": "ok"}
"""The text colour each role takes from the colour table (``notice``/``banner`` have their own, ``title`` none)."""


def _colour_role(widget: QWidget, role: str, c: dict[str, str]) -> None:
    """Give ``widget`` the colours of ``role`` from the table ``c``: a palette with only those roles set, so the rest
    still follows the application palette (the theme)."""
    R = QPalette.ColorRole
    pal = QPalette()
    if role in ("notice", "banner"):
        pal.setColor(R.Window, QColor(c["notice_bg"]))
        for r in (R.WindowText, R.Text):
            pal.setColor(r, QColor(c["notice_fg"]))
        pal.setColor(R.Mid, QColor(c["notice_border"]))
        pal.setColor(R.Dark, QColor(c["notice_border"]))
    elif role in _ROLE_COLOUR:
        for r in (R.WindowText, R.Text, R.ButtonText):
            pal.setColor(r, QColor(c[_ROLE_COLOUR[role]]))
            pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(c["disabled"]))
    else:
        return
    widget.setPalette(pal)


def set_role(widget: QWidget, role: str) -> None:
    """Mark ``widget`` as a ``role`` text (see the module doc): its colour (a palette of the current theme, renewed
    by :func:`apply`), its font (``small``: 11 px; ``title``, ``warn``: semi-bold) and, for ``notice``/``banner``,
    a filled, framed box with a little padding.

    Roles are palettes and fonts, not an application style sheet (issue 15): any application style sheet makes Qt
    style every widget through its slower style-sheet engine, which cost 50-110 ms of building the main window."""
    widget.setProperty("role", role)
    if role in ("small", "title", "warn"):
        font = widget.font()
        if role == "small":
            font.setPixelSize(11)
        else:
            font.setWeight(QFont.Weight.DemiBold)
        widget.setFont(font)
    if role in ("notice", "banner"):
        widget.setAutoFillBackground(True)
        if isinstance(widget, QFrame):
            widget.setFrameShape(QFrame.Shape.StyledPanel)
        if isinstance(widget, QLabel):
            widget.setContentsMargins(6, 4, 6, 4)
    _colour_role(widget, role, _COLORS["dark" if _state["mode"] == "dark" else "light"])


def apply(setting: Optional[str] = None, app: Optional[QApplication] = None) -> str:
    """Apply the theme ``setting`` ("system", "light" or "dark"; None = the last one) to the application: Fusion
    style (:class:`_Style`), palette (and every role widget's colours; every widget with its own style sheet is
    re-polished so it takes the new palette); emits ``notifier.changed`` (web views follow). "system" also re-applies whenever
    the desktop's scheme changes. Returns the resolved mode.

    When the resolved mode is the one already applied to ``app`` (and its palette is still ours) nothing is done
    and nothing emitted: a window built again (the live language switch, ui/window/language_switch.py; Settings
    saved with the same theme) does not re-polish every widget of the application (~28 ms) for the same colours.
    A widget made since then took the application's palette and its role colours (:func:`set_role`) already."""
    app = app or QApplication.instance()  # type: ignore[assignment]
    if setting is not None:
        _state["setting"] = setting if setting in THEMES else "system"
    which = resolve(_state["setting"])
    _state["mode"] = which
    if app is None:
        return which
    if _state["style"] is None:  # once (kept here: the application does not keep the Python object alive)
        _state["style"] = _Style("Fusion")
        app.setStyle(_state["style"])
    pal = palette(which)
    if _state.get("applied") == (which, id(app)) and app.palette() == pal:
        return which
    _state["applied"] = (which, id(app))
    app.setPalette(pal)
    QToolTip.setPalette(pal)
    c = _COLORS[which]
    for w in app.allWidgets():
        role = w.property("role")
        if role:  # the role colours of every widget there is (set_role)
            _colour_role(w, str(role), c)
        elif w.styleSheet():
            # A widget with its own style sheet (a font size, a padding) took its palette from the application's
            # when the style-sheet engine polished it and keeps it through app.setPalette: the ask dialog's
            # question, polished in light, stayed #2b2621 on the dark window. Setting the sheet again re-polishes
            # it from the new palette.
            w.setStyleSheet(w.styleSheet())
    if not _state["hooked"]:
        _state["hooked"] = True
        QGuiApplication.styleHints().colorSchemeChanged.connect(_system_changed)
    notifier.changed.emit(which)
    return which


def _system_changed(_scheme: object) -> None:
    if _state["setting"] == "system":
        apply()
