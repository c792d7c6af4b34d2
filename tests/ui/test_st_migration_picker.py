"""梨园 → 从 SillyTavern 导入…: the folder picker is Qt's own dialog, a window-modal child of the migration window that
paints with the theme (it showed as a black box when the platform's dialog was opened from the window-modal migration
window, issue 24 §3); a folder chosen in it is read; after an import SillyTavern's connection is added but not made
current, and 改用 SillyTavern 的连接 switches to it (issue 24 §4). Real widgets, offscreen; shots in $LIYUAN_SHOTS."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QFileDialog
from uihelpers import wait_for

from liyuan_desktop.core import settings as S
from liyuan_desktop.ui.dialogs import st_migration
from liyuan_desktop.ui.infra import theme
from liyuan_desktop.ui.window.main_window import MainWindow

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from st_folder import build_st_folder  # noqa: E402

SHOTS = Path(os.environ.get("LIYUAN_SHOTS", "/tmp/shots/h5_migrate"))


def _open(qtbot) -> tuple[MainWindow, st_migration.StMigrationDialog]:
    win = MainWindow(S.AppSettings())
    qtbot.addWidget(win)
    win.show()
    acts = [a for m in win.menuBar().actions() if m.menu() for a in m.menu().actions()
            if a.text() == "从 SillyTavern 导入…"]
    acts[0].trigger()
    dlg = next(w for w in QApplication.topLevelWidgets()
               if isinstance(w, st_migration.StMigrationDialog) and w.isVisible() and w.parent() is win)
    return win, dlg


def _dark_share(img) -> float:
    pts = [(x, y) for x in range(0, img.width(), 5) for y in range(0, img.height(), 5)]
    return sum(1 for x, y in pts if img.pixelColor(x, y).lightness() < 16) / len(pts)


async def test_the_folder_picker_is_qts_own_dialog_and_paints(qtbot, tmp_path):
    st = build_st_folder(tmp_path / "st")
    win, dlg = _open(qtbot)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for mode in ("light", "dark"):
        theme.apply(mode)
        dlg.folder_btn.click()  # returns at once: the picker is open, no nested event loop
        picker = dlg.picker
        assert isinstance(picker, QFileDialog) and picker.isVisible()
        assert picker.parent() is dlg and picker.testOption(QFileDialog.Option.DontUseNativeDialog)
        assert picker.fileMode() == QFileDialog.FileMode.Directory
        await wait_for(lambda: picker.isVisible() and picker.width() > 100, timeout=10)
        img = picker.grab().toImage()
        img.save(str(SHOTS / f"picker-{mode}.png"))
        assert _dark_share(img) < 0.5, mode  # not a black box
        background = picker.palette().window().color()
        assert abs(background.lightness() - QApplication.palette().window().color().lightness()) < 8
        picker.reject()
        await wait_for(lambda: dlg.picker is None, timeout=10)
    theme.apply("light")
    dlg.folder_btn.click()
    dlg.picker.fileSelected.emit(str(tmp_path / "st"))  # what choosing the folder and 选择 does
    await wait_for(lambda: dlg.state == "ready", timeout=30)
    assert dlg.plan is not None and Path(dlg.plan.root) == st
    dlg.zip_btn.click()
    assert dlg.picker.fileMode() == QFileDialog.FileMode.ExistingFile
    dlg.picker.reject()
    dlg.close()


async def test_the_imported_connection_is_offered_not_switched_to(qtbot, tmp_path):
    build_st_folder(tmp_path / "st")
    win, dlg = _open(qtbot)
    dlg.scan_path(tmp_path / "st")
    await wait_for(lambda: dlg.state == "ready", timeout=30)
    dlg.start_btn.click()
    await wait_for(lambda: dlg.state == "done", timeout=60)
    assert S.load_settings().active_provider is None and win.settings.provider("sillytavern") is not None
    assert dlg.provider_btn.isVisible() and "当前连接没有改变" in dlg.status.text()
    dlg.grab().save(str(SHOTS / "report-provider.png"))
    dlg.provider_btn.click()
    assert S.load_settings().active_provider == "sillytavern" and win.settings.active_provider == "sillytavern"
    assert not dlg.provider_btn.isVisible()
    dlg.close()
