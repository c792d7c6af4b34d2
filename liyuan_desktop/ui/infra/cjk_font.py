"""A Chinese font (and a colour-emoji font) for the window, or a hint saying which package brings one (issue 16 §1,
issue 24 §1).

On a machine without a CJK font every Chinese character is a box; without a colour-emoji font so is every emoji of a
status bar. The package carries both fallbacks in its resources — a source run (``pip install -e .``) as much as the
built app: ``resources/fonts/cjk/wqy-microhei.ttc`` (WenQuanYi Micro Hei, 5 MB, Simplified and Traditional Chinese;
Apache-2.0, or GPL-3 with the font exception) and ``resources/fonts/emoji/OpenMoji-color-glyf_colr0.ttf`` (OpenMoji
17, COLRv0, 2.6 MB; CC BY-SA 4.0) with their licence files (``resources/fonts/README.md``). Two steps:

* :func:`prepare_fontconfig` — lives in ``runtime`` (every process preparation does; ``runtime.prepare_env`` runs
  it for the window and the card preview alike; re-exported here) — before Qt loads. When fontconfig knows no
  Chinese font (``fc-list :lang=zh``) or no colour-emoji font (``fc-list :lang=und-zsye`` / ``:color=true``), ~10 ms
  each, it points ``FONTCONFIG_FILE`` at a config that includes the system's and adds the bundled folder(s) that are
  lacking — so Qt widgets AND QtWebEngine's Chromium (which asks fontconfig itself, not Qt's font database; the card
  frames' CSP allows only ``data:`` fonts, so an ``@font-face`` file URL would not reach them, while fontconfig's
  fonts need no fetch) both find them. A system with its own font of a kind is left alone for that kind: the user's
  (usually Noto CJK, better hinted and with more weights) wins, and our copy never competes with it.
* :func:`cjk_hint` — after the QApplication exists: the one-line hint for the window's status bar when Qt's font
  database has no Simplified-Chinese family (or only the bundled fallback, ``runtime.bundled_cjk_in_use``), naming
  the package for this distribution (fonts-noto-cjk / google-noto-sans-cjk-fonts / noto-fonts-cjk /
  noto-sans-sc-fonts).

Qt is imported only inside :func:`cjk_hint`. Strings use the ``cjkfont.`` keys registered below.
"""

from __future__ import annotations

from typing import Optional

from ... import runtime
from ...platform_check import package_manager
from . import i18n
from .i18n import register, tr

FONT_PACKAGES = {"apt": "fonts-noto-cjk", "dnf": "google-noto-sans-cjk-fonts", "pacman": "noto-fonts-cjk",
                 "zypper": "noto-sans-sc-fonts"}
"""The Noto CJK package of each package manager (Debian/Ubuntu, Fedora, Arch, openSUSE)."""

BUNDLED_FAMILIES = ("WenQuanYi Micro Hei", "文泉驿微米黑", "文泉驛微米黑", "WenQuanYi Micro Hei Mono")

register({
    # Latin first: without a Chinese font the Chinese half of this very line is boxes
    "cjkfont.missing": {"zh": "No Chinese font: {cmd} · 未找到中文字体，中文会显示成方框：请安装 {pkg} 后重启",
                        "en": "No Chinese font found, Chinese text shows as boxes: install {pkg} ({cmd}) and restart"},
    "cjkfont.bundled": {"zh": "系统没有中文字体，正在使用内置的文泉驿微米黑；想要更好的显示请安装 {pkg}（{cmd}）",
                        "en": "No system Chinese font: using the bundled WenQuanYi Micro Hei; for better text install "
                              "{pkg} ({cmd})"},
})


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
    :func:`prepare_fontconfig` added the bundled font) — then only other families count as the system's. With only
    the bundled font, the hint is given in a Chinese window only (issue 32: an English desktop starts quiet)."""
    bundled_in_use = runtime.bundled_cjk_in_use() if bundled_in_use is None else bundled_in_use
    if families is None:
        from PySide6.QtGui import QFontDatabase

        families = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    own = [f for f in families if not (bundled_in_use and f in BUNDLED_FAMILIES)]
    if own or (families and i18n.language() != "zh"):
        # the bundled font shows Chinese well enough: only a Chinese window suggests a better one (an English user
        # who never reads Chinese is not told to install fonts); text shown as boxes is said in every language
        return None
    pkg, cmd = install_hint_parts(manager)
    return tr("cjkfont.bundled" if families else "cjkfont.missing", pkg=pkg, cmd=cmd)
