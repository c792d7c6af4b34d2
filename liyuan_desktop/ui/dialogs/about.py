"""「关于梨园」: version, build date, the web sandbox state, where the data and the logs live, and the app icon.

The build date comes from ``liyuan_desktop/_build_info.py``, which packaging/build.sh writes into the build's staged
copy of the source only; a source checkout has no such file and says 源码运行 / from source instead.
"""

from __future__ import annotations

import importlib
import platform
import sys
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QMessageBox, QWidget

from ... import __version__
from ...runtime import SandboxMode, log_path, sandbox_mode
from ..infra.i18n import tr

ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)


def icons_dir() -> Path:
    """The folder of the shipped icons (``liyuan_desktop/resources/icons``: liyuan.svg and liyuan-<N>.png)."""
    from importlib import resources

    return Path(str(resources.files("liyuan_desktop") / "resources" / "icons"))


def app_icon() -> QIcon:
    """The window icon: the pear blossom in every PNG size (no SVG plugin needed)."""
    icon = QIcon()
    d = icons_dir()
    for n in ICON_SIZES:
        p = d / f"liyuan-{n}.png"
        if p.exists():
            icon.addFile(str(p))
    return icon


def build_info() -> dict:
    """Version and build facts: ``version``, ``build_date`` (None when running from source), ``commit``,
    ``platform``, ``frozen`` (True inside a PyInstaller build)."""
    info = {"version": __version__, "build_date": None, "commit": None, "platform": None,
            "frozen": bool(getattr(sys, "frozen", False))}
    try:
        bi = importlib.import_module("liyuan_desktop._build_info")
    except ImportError:
        return info
    info.update(version=getattr(bi, "VERSION", __version__), build_date=getattr(bi, "BUILD_DATE", None),
                commit=getattr(bi, "COMMIT", None), platform=getattr(bi, "PLATFORM", None))
    return info


def build_label(info: dict | None = None) -> str:
    """The build line as shown: the build date (and commit), or 源码运行 / from source."""
    info = info or build_info()
    if not info.get("build_date"):
        return tr("about.from_source")
    return info["build_date"] + (f" · {info['commit']}" if info.get("commit") else "")


def sandbox_text(mode: SandboxMode) -> str:
    """The web sandbox as the user should read it: on, or off and why (``runtime.prepare_env`` decides ``mode``)."""
    return tr("sandbox.on") if mode == "on" else tr(f"sandbox.off.{mode}")


def about_html() -> str:
    """The About text (rich text): name, version, build, Qt/Python versions, sandbox state, data and log folders."""
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    from ...core.paths import home

    info = build_info()
    try:
        logs, sandbox = str(log_path().parent), sandbox_text(sandbox_mode())
    except Exception:  # noqa: BLE001 - the dialog must open whatever happens
        logs, sandbox = "?", "?"
    rows = [
        (tr("about.version"), info["version"]),
        (tr("about.build"), build_label(info)),
        (tr("about.runtime"), f"Qt {qVersion()} · PySide6 {pyside_version} · Python {platform.python_version()}"),
        (tr("about.sandbox"), sandbox),
        (tr("about.data"), str(home())),
        (tr("about.logs"), logs),
    ]
    body = "".join(f"<tr><td style='padding-right:12px'><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
                   for k, v in rows)
    return (f"<h3>{escape(tr('about.heading'))}</h3><p>{escape(tr('about.tagline'))}</p>"
            f"<table>{body}</table>")


def make_about_box(parent: QWidget | None = None) -> QMessageBox:
    """The About dialog, not yet shown (tests read its text)."""
    box = QMessageBox(parent)
    box.setWindowTitle(tr("about.title"))
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_html())
    pix = QPixmap(str(icons_dir() / "liyuan-64.png"))
    if not pix.isNull():
        box.setIconPixmap(pix)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box


def show_about(parent: QWidget | None = None) -> None:
    """Open the About dialog (modal) from the menu."""
    make_about_box(parent).exec()
