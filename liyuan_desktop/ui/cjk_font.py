"""A Chinese font (and a colour-emoji font) for the window, or a hint saying which package brings one (issue 16 §1,
issue 24 §1).

On a machine without a CJK font every Chinese character is a box; without a colour-emoji font so is every emoji of a
status bar. The package carries both fallbacks in its resources — a source run (``pip install -e .``) as much as the
built app: ``resources/fonts/cjk/wqy-microhei.ttc`` (WenQuanYi Micro Hei, 5 MB, Simplified and Traditional Chinese;
Apache-2.0, or GPL-3 with the font exception) and ``resources/fonts/emoji/OpenMoji-color-glyf_colr0.ttf`` (OpenMoji
17, COLRv0, 2.6 MB; CC BY-SA 4.0) with their licence files (``resources/fonts/README.md``). Two steps:

* :func:`prepare_fontconfig` — before Qt loads. When fontconfig knows no Chinese font (``fc-list :lang=zh``) or no
  colour-emoji font (``fc-list :lang=und-zsye`` / ``:color=true``), ~10 ms each, it points ``FONTCONFIG_FILE`` at a
  config that includes the system's and adds the bundled folder(s) that are lacking — so Qt widgets AND
  QtWebEngine's Chromium (which asks fontconfig itself, not Qt's font database; the card frames' CSP allows only
  ``data:`` fonts, so an ``@font-face`` file URL would not reach them, while fontconfig's fonts need no fetch) both
  find them. A system with its own font of a kind is left alone for that kind: the user's (usually Noto CJK, better
  hinted and with more weights) wins, and our copy never competes with it in fontconfig's matching.
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


_FONT_SUFFIXES = (".ttf", ".ttc", ".otf")


def _fonts_root() -> Path:
    return Path(__file__).resolve().parent.parent / "resources" / "fonts"


def _font_folder(name: str) -> Optional[Path]:
    d = _fonts_root() / name
    if d.is_dir() and any(p.suffix.lower() in _FONT_SUFFIXES for p in d.iterdir()):
        return d
    return None


def bundled_font_dir() -> Optional[Path]:
    """``liyuan_desktop/resources/fonts/cjk`` (WenQuanYi Micro Hei) when it holds a font file, else None."""
    return _font_folder("cjk")


def bundled_emoji_dir() -> Optional[Path]:
    """``liyuan_desktop/resources/fonts/emoji`` (OpenMoji, colour) when it holds a font file, else None."""
    return _font_folder("emoji")


def _fc_list(*patterns: str) -> Optional[bool]:
    """Whether ``fc-list PATTERN family`` names any font for one of ``patterns`` (asked in order, stopping at the
    first that does); None when fc-list is missing or fails (then nothing is known)."""
    fc = shutil.which("fc-list")
    if fc is None:
        return None
    for pattern in patterns:
        try:
            out = subprocess.run([fc, pattern, "family"], capture_output=True, text=True, timeout=10,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.stdout.strip():
            return True
    return False


def fontconfig_has_cjk() -> Optional[bool]:
    """Whether fontconfig lists a font for Chinese (``fc-list :lang=zh family``); None when fc-list is missing or
    fails (then nothing is known)."""
    return _fc_list(":lang=zh")


def fontconfig_has_emoji() -> Optional[bool]:
    """Whether fontconfig lists a colour-emoji font: one covering the emoji "language" ``und-zsye`` (fontconfig ≥
    2.13.1), or any colour font (``:color=true``, COLR/CBDT/sbix: in practice emoji fonts). A monochrome font with a
    few emoji (DejaVu Sans has 😀) does not count. None when fc-list is missing or fails."""
    return _fc_list(":lang=und-zsye", ":color=true")


def prepare_fontconfig(has_cjk: Callable[[], Optional[bool]] = fontconfig_has_cjk,
                       has_emoji: Callable[[], Optional[bool]] = fontconfig_has_emoji,
                       cache: Optional[Path] = None) -> Optional[Path]:
    """Before Qt loads: add the bundled fonts the system lacks. The Chinese folder is added when ``has_cjk()`` is
    False (or unknown: fc-list missing), the emoji folder when ``has_emoji()`` is; when either is, ``fonts.conf`` is
    written in ``cache`` (default: the user cache folder) — the system's ``/etc/fonts/fonts.conf`` included when
    present, plus those folders — and ``FONTCONFIG_FILE`` set to it. Returns the file written, or None (nothing to
    add, a FONTCONFIG_FILE already set, or the folder cannot be written)."""
    if os.environ.get("FONTCONFIG_FILE"):
        return None
    cjk, emoji = bundled_font_dir(), bundled_emoji_dir()
    add_cjk = cjk is not None and not has_cjk()
    dirs = ([cjk] if add_cjk else []) + ([emoji] if emoji is not None and not has_emoji() else [])
    if not dirs:
        return None
    cache = cache or Path(platformdirs.user_cache_dir("liyuan", appauthor=False))
    conf = cache / "fonts.conf"
    text = ('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
            '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
            '  <dir>/usr/share/fonts</dir>\n'
            + "".join(f'  <dir>{_xml(str(d))}</dir>\n' for d in dirs)
            + f'  <cachedir>{_xml(str(cache / "fontconfig"))}</cachedir>\n'
            '</fontconfig>\n')
    try:
        cache.mkdir(parents=True, exist_ok=True)
        conf.write_text(text, encoding="utf-8")
    except OSError:
        return None
    os.environ["FONTCONFIG_FILE"] = str(conf)
    global _bundled_in_use
    _bundled_in_use = _bundled_in_use or add_cjk
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
