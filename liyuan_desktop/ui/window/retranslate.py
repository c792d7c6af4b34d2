"""The language switch without a restart (issue 17): every visible text of a window re-set in the new language.

The settings dialog registers each of its texts with a setter (``SettingsDialog._tx``); the rest of the window
was built with ``tr(key)`` once. :func:`retranslate_tree` generalises that without touching every pane: a widget's
current text is looked up in the one catalog (``ui/i18n.STRINGS`` and the engine's ``core/messages.CATALOG``) in
*either* language — a text that is exactly some key's Chinese or English (an unformatted string) is that key — and
re-set with ``tr(key)``. Buttons, labels, check boxes, group boxes, tab titles, menu titles, actions, placeholders,
tool tips, window titles and table headers are covered; a pane that builds formatted or HTML text has a
``retranslate()`` method, which is called; the conversation page gets its strings again (``setStrings``).

Texts built with values (the status bar's 「角色卡 · 对话 · 模型」 line, counters, the draft pane's activity lines
and notices) are not any key's text exactly: :func:`switch_text` finds them by pattern — every catalog template (either
language) with its ``{placeholders}`` as wildcards, the most literal text first — and formats that key again in the
new language with the captured values (each value switched in turn, so an engine message inside a window line
follows too). Activity lines keep their marker (※, ✓ name, ·) and switch the rest. Values that are story or card
data match nothing and stay as written.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from ..infra import i18n

i18n.register({"lang.switched": {"zh": "界面语言已切换为中文。", "en": "The window is in English now."}})

_reverse: dict[str, str] = {}
_reverse_size = [-1]


def _index() -> dict[str, str]:
    """text (zh or en) → key, for catalog texts without placeholders; rebuilt when modules registered more."""
    from ...core.messages import CATALOG

    size = (len(i18n.STRINGS) + len(CATALOG)) * 100 + len(i18n.shown_languages())
    if size != _reverse_size[0]:
        _reverse.clear()
        for table in (CATALOG, i18n.STRINGS):  # the window's own texts win on a tie
            for key, entry in table.items():
                for lang in i18n.shown_languages():  # zh, en and a translator's language shown in this run
                    text = i18n.text_in(key, entry, lang)
                    if text and "{" not in text:
                        _reverse[text] = key
        _reverse_size[0] = size
    return _reverse


def translated(text: str) -> Optional[str]:
    """``text`` in the current language when it is a catalog text (either language), else None."""
    if not text:
        return None
    key = _index().get(text)
    if key is None:
        return None
    return i18n.tr(key)


_patterns: list[tuple[str, "re.Pattern[str]", str]] = []  # (longest literal chunk, pattern, key), most literal first
_patterns_size = [-1]


def _formatted() -> list[tuple[str, "re.Pattern[str]", str]]:
    """Patterns of every catalog template with placeholders, in both languages (module doc)."""
    from ...core.messages import CATALOG, template_pattern

    size = (len(i18n.STRINGS) + len(CATALOG)) * 100 + len(i18n.shown_languages())
    if size == _patterns_size[0]:
        return _patterns
    built = []
    for table in (i18n.STRINGS, CATALOG):
        for key, entry in table.items():
            if entry.get("match") == "no":  # carried by key, never matched back (core/messages.py)
                continue
            for lang in i18n.shown_languages():
                text = i18n.text_in(key, entry, lang)
                if "{" not in text:
                    continue
                pat = template_pattern(text, strip=True)
                if pat is not None:
                    built.append((*pat, key))
    built.sort(key=lambda b: -b[0])
    _patterns[:] = [(c, p, k) for _n, c, p, k in built]
    _patterns_size[0] = size
    return _patterns


def switch_text(text: str, depth: int = 0) -> Optional[str]:
    """``text`` — a catalog text in either language, plain or built with values — in the current language, or None
    when it is no catalog text (module doc)."""
    if not text:
        return None
    plain = translated(text)
    if plain is not None:
        return plain
    if depth > 2:
        return None
    for chunk, pat, key in _formatted():
        if chunk not in text:
            continue
        m = pat.fullmatch(text)
        if m is None:
            continue
        params = {k: _switch_value(v, depth + 1) for k, v in m.groupdict().items()}
        try:
            return i18n.tr(key, **params)
        except (KeyError, IndexError, ValueError):
            return None
    return None


_SEMI = re.compile(r"；|; ")


def _switch_value(value: str, depth: int) -> str:
    """A captured value switched: whole, else part by part when it is a 「；」 / "; " list (the scribe's changes)."""
    whole = switch_text(value, depth)
    if whole is not None:
        return whole
    parts = _SEMI.split(value)
    if len(parts) < 2:
        return value
    switched = [switch_text(p, depth) for p in parts]
    if all(x is None for x in switched):
        return value
    return i18n.tr("sep.semi").join(x if x is not None else p for x, p in zip(switched, parts))


_MARKER = re.compile(r"^(\s*(?:※ |· |[✓✗] \S+  |[✓✗] \S+$|→ ))(.*)$", re.S)


def switch_line(text: str) -> Optional[str]:
    """An activity line (``※ notice``, ``✓ tool  summary``, ``  · reason``) or any text in the current language:
    the marker kept, the rest switched (:func:`switch_text`); None when nothing changes."""
    m = _MARKER.match(text)
    if m is None or not m.group(2):  # no marker: the line is one text
        return switch_text(text)
    rest = switch_text(m.group(2))
    if rest is None:
        from ...core.messages import translate

        rest = translate(m.group(2), i18n.language()) if i18n.language() != "zh" else None
        if rest == m.group(2):
            rest = None
    return None if rest is None else m.group(1) + rest


def _swap(obj: Any, slot: str, getter: Any, setter: Any) -> None:
    """Re-set one text. The key found the first time is kept on ``obj`` (property ``i18n.<slot>``) and used from
    then on: an English text can belong to two keys (“Edit” is 编辑 and 改了再发), the first lookup is made while
    the window is still in the language it was built in."""
    current = getter()
    prop = f"i18n.{slot}"
    key = obj.property(prop) if hasattr(obj, "property") else None
    if key:
        entry = i18n.STRINGS.get(key)
        known = {i18n.text_in(key, entry, lang) for lang in i18n.shown_languages()} if entry else set()
        if current not in known:  # the pane set another text meanwhile: look that one up
            key = None
    if not key:
        key = _index().get(current) if current else None
        if key is None:  # a text built with values (module doc)
            new = switch_text(current) if slot in ("text", "tooltip") and current else None
            if new is not None and new != current:
                setter(new)
            return
        if hasattr(obj, "setProperty"):
            obj.setProperty(prop, key)
    new = i18n.tr(key)
    if new != current:
        setter(new)


def retranslate_widget(w: QWidget) -> None:
    """One widget's own texts (not its children)."""
    if isinstance(w, (QAbstractButton, QLabel)):
        _swap(w, "text", w.text, w.setText)
    if isinstance(w, QGroupBox):
        _swap(w, "title", w.title, w.setTitle)
    if isinstance(w, (QLineEdit, QPlainTextEdit, QTextEdit)):
        _swap(w, "placeholder", w.placeholderText, w.setPlaceholderText)
    if isinstance(w, QTabWidget):
        for i in range(w.count()):
            _swap(w, f"tab{i}", lambda i=i: w.tabText(i), lambda t, i=i: w.setTabText(i, t))
    if isinstance(w, QMenu):
        _swap(w, "title", w.title, w.setTitle)
    if isinstance(w, QTableWidget):
        for i in range(w.columnCount()):
            it = w.horizontalHeaderItem(i)
            if it is not None:
                _swap(w, f"head{i}", it.text, it.setText)
    _swap(w, "tooltip", w.toolTip, w.setToolTip)
    if w.isWindow():
        _swap(w, "title", w.windowTitle, w.setWindowTitle)
    if isinstance(w, QListWidget) and w.objectName() == "draftActivity":
        for i in range(w.count()):
            it = w.item(i)
            new = switch_line(it.text())
            if new is not None:
                it.setText(new)
    if isinstance(w, QMainWindow):
        msg = w.statusBar().currentMessage()
        new = switch_text(msg) if msg else None
        if new is not None and new != msg:
            w.statusBar().showMessage(new, 6000)
    for act in w.actions():
        if isinstance(act, QAction):
            _swap(act, "text", act.text, act.setText)


def retranslate_tree(root: QWidget) -> None:
    """``root`` and every widget under it; panes with a ``retranslate()`` method re-build their own texts."""
    seen = set()
    for w in [root, *root.findChildren(QWidget)]:
        retranslate_widget(w)
        fn = getattr(type(w), "retranslate", None)
        if callable(fn) and id(w) not in seen:
            seen.add(id(w))
            try:
                w.retranslate()
            except Exception:  # noqa: BLE001 - one pane's failure must not stop the switch
                pass
    for menu in root.findChildren(QMenu):
        _swap(menu, "title", menu.title, menu.setTitle)
        for act in menu.actions():
            _swap(act, "text", act.text, act.setText)


def retranslate_app(main: Optional[QWidget] = None) -> None:
    """Every top-level window of the application (and the main window's conversation page strings)."""
    for top in QApplication.topLevelWidgets():
        retranslate_tree(top)
    view = getattr(main, "view", None)
    if view is not None and hasattr(view, "refresh_strings"):
        view.refresh_strings()
