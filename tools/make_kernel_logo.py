#!/usr/bin/env python3
"""Render the gpukit Jupyter kernel logo to PNG.

Jupyter shows logo-64x64.png, logo-32x32.png and logo-svg.svg from a kernelspec
directory in its launcher.  The SVG (share/kernel-logo/logo-svg.svg) is written by
hand; this script draws the same design with plain geometry so that the PNGs can
be regenerated from code instead of being opaque binary blobs.  The generated PNGs
are committed; rerun this script after changing the design (and keep the SVG in
sync).  It uses only the Python standard library.

Usage: make_kernel_logo.py [OUTPUT_DIR]   (default: <repo>/share/kernel-logo)
"""

import os
import struct
import sys
import zlib

# Design in the SVG's 64x64 coordinate system.  Each shape is a filled rounded
# rectangle (x, y, width, height, corner radius, colour); later shapes are drawn
# on top of earlier ones.  Must match share/kernel-logo/logo-svg.svg.
DARK = (0x1F, 0x29, 0x37)
GREEN = (0x76, 0xB9, 0x00)
PIN = (0x9C, 0xA3, 0xAF)

PIN_CENTRES = (20, 28, 36, 44)


def design():
    shapes = []
    for c in PIN_CENTRES:
        shapes.append((c - 2, 4, 4, 8, 1, PIN))    # top
        shapes.append((c - 2, 52, 4, 8, 1, PIN))   # bottom
        shapes.append((4, c - 2, 8, 4, 1, PIN))    # left
        shapes.append((52, c - 2, 8, 4, 1, PIN))   # right
    shapes.append((10, 10, 44, 44, 6, DARK))       # package
    shapes.append((14, 14, 4, 4, 2, GREEN))        # pin-1 marker
    shapes.append((20, 20, 24, 24, 3, GREEN))      # die
    shapes.append((26, 26, 12, 12, 2, DARK))       # die centre
    return shapes


def inside(shape, px, py):
    x, y, w, h, r, _ = shape
    if px < x or px > x + w or py < y or py > y + h:
        return False
    # Distance from the point to the rectangle shrunk by r must be <= r.
    cx = min(max(px, x + r), x + w - r)
    cy = min(max(py, y + r), y + h - r)
    dx, dy = px - cx, py - cy
    return dx * dx + dy * dy <= r * r


def render(size, ss=4):
    """Return RGBA rows (list of bytearrays) for a size x size image."""
    shapes = design()
    scale = 64.0 / size
    n = ss * ss
    rows = []
    for j in range(size):
        row = bytearray()
        for i in range(size):
            # Accumulate premultiplied colour over ss x ss sample points.
            r_acc = g_acc = b_acc = cover = 0
            for sj in range(ss):
                py = (j + (sj + 0.5) / ss) * scale
                for si in range(ss):
                    px = (i + (si + 0.5) / ss) * scale
                    for shape in reversed(shapes):
                        if inside(shape, px, py):
                            cr, cg, cb = shape[5]
                            r_acc += cr
                            g_acc += cg
                            b_acc += cb
                            cover += 1
                            break
            if cover:
                row += bytes((
                    (r_acc + cover // 2) // cover,
                    (g_acc + cover // 2) // cover,
                    (b_acc + cover // 2) // cover,
                    (255 * cover + n // 2) // n,
                ))
            else:
                row += b"\0\0\0\0"
        rows.append(row)
    return rows


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def write_png(path, rows):
    height = len(rows)
    width = len(rows[0]) // 4
    # 8-bit depth, colour type 6 (RGBA), deflate, adaptive filtering, no interlace.
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    raw = b"".join(b"\0" + bytes(row) for row in rows)  # filter type 0 per row
    data = (b"\x89PNG\r\n\x1a\n"
            + png_chunk(b"IHDR", ihdr)
            + png_chunk(b"IDAT", zlib.compress(raw, 9))
            + png_chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(data)


def main(argv):
    if len(argv) > 2:
        sys.stderr.write(__doc__)
        return 2
    if len(argv) == 2:
        out_dir = argv[1]
    else:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out_dir = os.path.join(repo, "share", "kernel-logo")
    os.makedirs(out_dir, exist_ok=True)
    for size in (64, 32):
        path = os.path.join(out_dir, "logo-%dx%d.png" % (size, size))
        write_png(path, render(size))
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
