"""Qt's own texts in the app's language (issue 32 §1): the standard buttons of QMessageBox and QDialogButtonBox
(Yes/No, OK/Cancel, Save, Close…) and QFileDialog come from Qt's translation catalog ``qtbase_<locale>.qm``, which
ships in the PySide6 wheel (``QLibraryInfo.path(TranslationsPath)``).

:func:`apply_qt_language` installs that catalog on the application when the language is Chinese and removes it for
English, so Qt's texts follow the window: at start (``app.open_window``) and on the live switch in Settings
(``MainWindow.language_changed``). A dialog created after the switch shows the new language; one already open keeps
the text it was built with (as in Qt itself).
"""

from __future__ import annotations

import logging
from typing import Optional

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QTranslator

log = logging.getLogger(__name__)

QT_CATALOGS = {"zh": "qtbase_zh_CN"}  # the app's language → Qt's catalog; English is Qt's own (no catalog)

_installed: list[QTranslator] = []  # the translator on the application now (0 or 1)
_loaded: dict[str, QTranslator] = {}  # catalogs read once per process


def _translator(lang: str) -> Optional[QTranslator]:
    # a translator's language (core/catalog_files.py) gets Qt's qtbase_<lang> when this Qt has it
    name = QT_CATALOGS.get(lang) or (None if lang == "en" else f"qtbase_{lang}")
    if name is None:
        return None
    if lang not in _loaded:
        tr = QTranslator()
        if not tr.load(name, QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            log.info("Qt's catalog %s is not in this Qt build; its buttons stay in English", name)
            return None
        _loaded[lang] = tr
    return _loaded[lang]


def apply_qt_language(lang: str) -> bool:
    """Make Qt's own texts follow ``lang`` ("zh" or "en"): the previous Qt catalog is removed from the running
    application and ``lang``'s is installed (none for English). Returns True when a catalog is installed now. Without
    a QApplication it does nothing and returns False."""
    app = QCoreApplication.instance()
    if app is None:
        return False
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    tr = _translator(lang)
    if tr is None:
        return False
    app.installTranslator(tr)
    _installed.append(tr)
    return True


def installed_catalog() -> Optional[QTranslator]:
    """The Qt catalog installed by :func:`apply_qt_language` now, or None (English)."""
    return _installed[0] if _installed else None
