"""Render the app icon ``liyuan_desktop/resources/icons/liyuan.svg`` to the PNG sizes a desktop needs.

    python packaging/make_icons.py [--check]

Writes ``liyuan_desktop/resources/icons/liyuan-<N>.png`` for N in 16, 32, 48, 64, 128, 256, 512 (the hicolor theme
sizes; the app uses them for its window icon, the installers copy them into ``hicolor/<N>x<N>/apps/liyuan.png``).
The PNGs are committed, so neither the app nor the build needs Qt's SVG plugin. Rerun this after editing the SVG.
``--check`` only verifies that every PNG exists with the right size (exit 1 otherwise).
Windows (.ico) and macOS (.icns) formats: see packaging/README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "liyuan_desktop" / "resources" / "icons"
SVG = ICONS / "liyuan.svg"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    """The committed PNG of the icon at ``size`` pixels."""
    return ICONS / f"liyuan-{size}.png"


def render(size: int, out: Path) -> None:
    """Render the SVG into a square ARGB PNG of ``size`` pixels at ``out``."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: cannot read {SVG}")
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(p)
    p.end()
    if not img.save(str(out), "PNG"):
        raise SystemExit(f"make_icons: cannot write {out}")


def check() -> list[str]:
    """Problems with the committed PNGs (missing, or not the size in their name); empty when all is well."""
    from PySide6.QtGui import QImage

    bad = []
    for n in SIZES:
        img = QImage(str(png_path(n)))
        if img.isNull() or (img.width(), img.height()) != (n, n):
            bad.append(f"{png_path(n).name}: missing or not {n}x{n}")
    return bad


def main() -> int:
    """Command line: render all sizes, or ``--check`` them."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check the committed PNGs")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # QPainter on a QImage wants one
    if args.check:
        bad = check()
        for b in bad:
            print(b, file=sys.stderr)
        return 1 if bad else 0
    for n in SIZES:
        render(n, png_path(n))
        print(f"{png_path(n).relative_to(ICONS.parents[2])}: {png_path(n).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
