"""The crash dialog: what the user sees when an exception escapes (``runtime.install_excepthook`` logs it first and
then calls ``show_crash_dialog``). Non-modal and one at a time; every exception is in the log anyway."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox

from ..infra.i18n import tr

_crash_box: Optional[QMessageBox] = None  # the crash dialog on screen


def show_crash_dialog(tp: type[BaseException], value: BaseException, logfile: Path) -> Optional[QMessageBox]:
    """Show the error ``tp: value`` and the log path in a non-modal dialog with an "open the log folder" button, and
    return it; None when no QApplication exists (nothing can be shown). While one is visible, later errors return
    it instead of stacking another. Non-modal, so no nested event loop starts inside the failing code and the engine
    keeps running."""
    global _crash_box
    if QApplication.instance() is None:
        return None
    if _crash_box is not None and _crash_box.isVisible():
        return _crash_box
    box = QMessageBox(QMessageBox.Icon.Critical, tr("crash.title"),
                      tr("crash.body", error=f"{tp.__name__}: {value}", log=str(logfile)))
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    open_logs = box.addButton(tr("crash.open_logs"), QMessageBox.ButtonRole.ActionRole)
    open_logs.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(logfile).parent))))
    box.setModal(False)
    box.show()
    _crash_box = box
    return box


def current_crash_dialog() -> Optional[QMessageBox]:
    """The crash dialog shown last (visible or closed since), or None when none has been shown."""
    return _crash_box
