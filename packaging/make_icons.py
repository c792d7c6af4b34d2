"""Render the app icon ``liyuan_desktop/resources/icons/liyuan.svg`` to the PNG sizes a desktop needs.

    python packaging/make_icons.py [--check]
    python packaging/make_icons.py --ico OUT.ico --icns OUT.icns    # the Windows and macOS icons (standard library)

Writes ``liyuan_desktop/resources/icons/liyuan-<N>.png`` for N in 16, 32, 48, 64, 128, 256, 512 (the hicolor theme
sizes; the app uses them for its window icon, the installers copy them into ``hicolor/<N>x<N>/apps/liyuan.png``).
The PNGs are committed, so neither the app nor the build needs Qt's SVG plugin. Rerun this after editing the SVG.
``--check`` only verifies that every PNG exists with the right size (exit 1 otherwise).
``--ico``/``--icns`` pack the committed PNGs into a Windows ``.ico`` (16–256 px, PNG-compressed entries, readable
since Windows Vista) and a macOS ``.icns`` (16–512 px and the @2x slots up to 256@2x; each slot gets the committed PNG
of its pixel size, so 512@2x, a 1024 px image, is left out). Python's standard library only, so the CI's build jobs make them on any OS before PyInstaller runs (build output, not committed).
"""

from __future__ import annotations

import argparse
import os
import struct
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


ICO_SIZES = (16, 32, 48, 64, 128, 256)
#: icns slot types (Apple's "icns" format): OSType -> pixel size of the PNG it holds (the @2x slots hold the
#: doubled size: ic11 = 16@2x = 32 px, ic12 = 32@2x = 64 px, ic13 = 128@2x = 256 px, ic14 = 256@2x = 512 px)
ICNS_SLOTS = (("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512),
              ("ic11", 32), ("ic12", 64), ("ic13", 256), ("ic14", 512))


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk. Raises ValueError for anything that is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding ``pngs`` ({size: PNG bytes}, sizes 1–256) as PNG entries (ICONDIR + ICONDIRENTRY
    records; 256 is written as 0 in the one-byte width and height fields, as the format wants)."""
    sizes = sorted(pngs)
    out = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    blobs = b""
    for n in sizes:
        data = pngs[n]
        out += struct.pack("<BBBBHHII", n % 256, n % 256, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return out + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns with every :data:`ICNS_SLOTS` slot whose pixel size is in ``pngs`` (big-endian ``icns`` header,
    then type + length + PNG per slot)."""
    body = b""
    for ostype, n in ICNS_SLOTS:
        if n in pngs:
            body += ostype.encode("ascii") + struct.pack(">I", 8 + len(pngs[n])) + pngs[n]
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def committed_pngs() -> dict[int, bytes]:
    """{size: bytes} of the committed PNGs (:data:`SIZES`)."""
    return {n: png_path(n).read_bytes() for n in SIZES}


def main() -> int:
    """Command line: render all sizes, or ``--check`` them."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check the committed PNGs")
    ap.add_argument("--ico", type=Path, help="write the Windows icon here (from the committed PNGs)")
    ap.add_argument("--icns", type=Path, help="write the macOS icon here (from the committed PNGs)")
    args = ap.parse_args()
    if args.ico or args.icns:
        pngs = committed_pngs()
        for n, data in pngs.items():
            if png_size(data) != (n, n):
                raise SystemExit(f"make_icons: {png_path(n).name} is not {n}x{n}; rerun make_icons.py")
        if args.ico:
            args.ico.parent.mkdir(parents=True, exist_ok=True)
            args.ico.write_bytes(ico_bytes({n: pngs[n] for n in ICO_SIZES}))
            print(f"{args.ico}: {args.ico.stat().st_size} bytes")
        if args.icns:
            args.icns.parent.mkdir(parents=True, exist_ok=True)
            args.icns.write_bytes(icns_bytes(pngs))
            print(f"{args.icns}: {args.icns.stat().st_size} bytes")
        return 0
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
