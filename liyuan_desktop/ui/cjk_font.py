"""A Chinese font for the window, or a hint saying which package brings one (issue 16 §1, fonts).

On a machine without a CJK font every Chinese character is a box. Two steps:

* :func:`prepare_fontconfig` — before Qt loads. When the app carries a fallback font (the built app bundles one under
  ``resources/fonts/``: packaging/build.sh copies WenQuanYi Micro Hei there, Apache-2.0 / GPL-3 with font exception)
  and fontconfig knows no Chinese font (``fc-list :lang=zh``, ~10 ms), it points ``FONTCONFIG_FILE`` at a config that
  includes the system's and adds the bundled folder — so Qt widgets AND QtWebEngine's Chromium (which asks fontconfig
  itself, not Qt's font database) both find it. A system with its own CJK font is left alone.
* :func:`cjk_hint` — after the QApplication exists: the one-line hint for the window's status bar when Qt's font
  database has no Simplified-Chinese family (or only the bundled fallback), naming the package for this distribution
  (fonts-noto-cjk / google-noto-sans-cjk-fonts / noto-fonts-cjk / noto-sans-sc-fonts).

Qt is imported only inside :func:`cjk_hint`. Strings use the ``cjkfont.`` keys registered below.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Optional

import platformdirs

from ..platform_check import package_manager
from .i18n import register, tr

FONT_PACKAGES = {"apt": "fonts-noto-cjk", "dnf": "google-noto-sans-cjk-fonts", "pacman": "noto-fonts-cjk",
                 "zypper": "noto-sans-sc-fonts"}
"""The Noto CJK package of each package manager (Debian/Ubuntu, Fedora, Arch, openSUSE)."""

BUNDLED_FAMILIES = ("WenQuanYi Micro Hei", "文泉驿微米黑", "文泉驛微米黑", "WenQuanYi Micro Hei Mono")

#: set by :func:`prepare_fontconfig` when it added the bundled font (then its families do not count as the system's)
_bundled_in_use = False

register({
    # Latin first: without a Chinese font the Chinese half of this very line is boxes
    "cjkfont.missing": {"zh": "No Chinese font: {cmd} · 未找到中文字体，中文会显示成方框：请安装 {pkg} 后重启",
                        "en": "No Chinese font found, Chinese text shows as boxes: install {pkg} ({cmd}) and restart"},
    "cjkfont.bundled": {"zh": "系统没有中文字体，正在使用内置的文泉驿微米黑；想要更好的显示请安装 {pkg}（{cmd}）",
                        "en": "No system Chinese font: using the bundled WenQuanYi Micro Hei; for better text install "
                              "{pkg} ({cmd})"},
})


def bundled_font_dir() -> Optional[Path]:
    """``liyuan_desktop/resources/fonts`` when it holds a font file (the built app), else None (a source checkout)."""
    d = Path(__file__).resolve().parent.parent / "resources" / "fonts"
    if d.is_dir() and any(p.suffix.lower() in (".ttf", ".ttc", ".otf") for p in d.iterdir()):
        return d
    return None


def fontconfig_has_cjk() -> Optional[bool]:
    """Whether fontconfig lists a font for Chinese (``fc-list :lang=zh family``); None when fc-list is missing or
    fails (then nothing is known)."""
    fc = shutil.which("fc-list")
    if fc is None:
        return None
    try:
        out = subprocess.run([fc, ":lang=zh", "family"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip())


def prepare_fontconfig(has_cjk: Callable[[], Optional[bool]] = fontconfig_has_cjk) -> Optional[Path]:
    """Before Qt loads: when a bundled font exists and the system has no Chinese font (``has_cjk()`` False, or
    unknown because fc-list is missing), write ``fonts.conf`` in the user cache folder (including the system's
    ``/etc/fonts/fonts.conf`` when present, plus the bundled folder) and set ``FONTCONFIG_FILE`` to it. Returns the
    file written, or None (nothing to do, a FONTCONFIG_FILE already set, or the cache folder cannot be written)."""
    d = bundled_font_dir()
    if d is None or os.environ.get("FONTCONFIG_FILE") or has_cjk():
        return None
    cache = Path(platformdirs.user_cache_dir("liyuan", appauthor=False))
    conf = cache / "fonts.conf"
    text = ('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
            '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
            '  <dir>/usr/share/fonts</dir>\n'
            f'  <dir>{_xml(str(d))}</dir>\n'
            f'  <cachedir>{_xml(str(cache / "fontconfig"))}</cachedir>\n'
            '</fontconfig>\n')
    try:
        cache.mkdir(parents=True, exist_ok=True)
        conf.write_text(text, encoding="utf-8")
    except OSError:
        return None
    os.environ["FONTCONFIG_FILE"] = str(conf)
    global _bundled_in_use
    _bundled_in_use = True
    return conf


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def install_hint_parts(manager: Optional[str] = None) -> tuple[str, str]:
    """(package, install command) for this distribution's Noto CJK fonts; a generic name without a manager."""
    manager = manager if manager is not None else package_manager()
    pkg = FONT_PACKAGES.get(manager or "", "Noto Sans CJK")
    prefix = {"apt": "sudo apt install", "dnf": "sudo dnf install", "pacman": "sudo pacman -S",
              "zypper": "sudo zypper install"}.get(manager or "")
    return pkg, (f"{prefix} {pkg}" if prefix else pkg)


def cjk_hint(families: Optional[list[str]] = None, manager: Optional[str] = None,
             bundled_in_use: Optional[bool] = None) -> Optional[str]:
    """The status-bar hint, or None when a system Chinese font exists. ``families``: the Simplified-Chinese families
    (default: Qt's font database, so call it after the QApplication exists); ``bundled_in_use`` (default: whether
    :func:`prepare_fontconfig` added the bundled font) — then only other families count as the system's."""
    bundled_in_use = _bundled_in_use if bundled_in_use is None else bundled_in_use
    if families is None:
        from PySide6.QtGui import QFontDatabase

        families = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    own = [f for f in families if not (bundled_in_use and f in BUNDLED_FAMILIES)]
    if own:
        return None
    pkg, cmd = install_hint_parts(manager)
    return tr("cjkfont.bundled" if families else "cjkfont.missing", pkg=pkg, cmd=cmd)
