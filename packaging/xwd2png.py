"""Convert an X window dump (``xwd -root``, 24/32-bit TrueColor ZPixmap, as Xvfb gives) to PNG with the standard
library only, for packaging/smoke.sh on machines without ImageMagick.

    xwd -display :90 -root -silent | python3 packaging/xwd2png.py OUT.png

The XWD header is 25 big-endian 32-bit fields (X11 XWDFile.h: header_size, file_version, pixmap_format, depth,
width, height, xoffset, byte_order, bitmap_unit, bitmap_bit_order, bitmap_pad, bits_per_pixel, bytes_per_line,
visual_class, red/green/blue masks, bits_per_rgb, colormap_entries, ncolors, window size/position, border width),
then the window name up to header_size, then ncolors 12-byte colour entries, then the pixels. Exit 1 on a format
this does not read (anything but 24 or 32 bits per pixel).
"""

from __future__ import annotations

import struct
import sys
import zlib


def xwd_to_png(data: bytes) -> bytes:
    """The PNG bytes (RGB, 8 bits per channel) of the XWD image ``data``; ValueError for other pixel formats."""
    f = struct.unpack(">25I", data[:100])
    header_size, width, height = f[0], f[4], f[5]
    byte_order, bpp, bpl = f[7], f[11], f[12]
    rmask, gmask, bmask = f[14], f[15], f[16]
    ncolors = f[19]
    if bpp not in (24, 32):
        raise ValueError(f"{bpp} bits per pixel: only 24 and 32 are read")
    off = header_size + 12 * ncolors
    step = bpp // 8  # rows are bytes_per_line apart (Xvfb pads 24-bit rows to 32 bits per pixel's width)
    order = "little" if byte_order == 0 else "big"

    def shift(mask: int) -> int:
        return (mask & -mask).bit_length() - 1

    rs, gs, bs = shift(rmask), shift(gmask), shift(bmask)
    rows = []
    for y in range(height):
        line = data[off + y * bpl: off + y * bpl + step * width]
        out = bytearray(b"\0")  # filter type 0
        for i in range(0, len(line), step):
            px = int.from_bytes(line[i:i + step], order)
            out += bytes(((px & rmask) >> rs, (px & gmask) >> gs, (px & bmask) >> bs))
        rows.append(bytes(out))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
            + chunk(b"IEND", b""))


def main() -> int:
    data = sys.stdin.buffer.read()
    try:
        png = xwd_to_png(data)
    except (ValueError, struct.error) as exc:
        print(f"xwd2png: {exc}", file=sys.stderr)
        return 1
    with open(sys.argv[1], "wb") as fh:
        fh.write(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
