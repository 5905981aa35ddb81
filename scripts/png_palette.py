#!/usr/bin/env python3
"""png_palette.py IN.png OUT.png [COLOURS]: the same picture in at most COLOURS colours
(default 256), as an 8-bit palette PNG: a screenshot of a page is mostly a few flat
colours, and its size drops to a third or less.

The palette is the most frequent colours that stand apart from each other, then the
most frequent of the rest; every other colour (antialiased edges, the heat strip's
shades) takes the nearest of them. Standard library only (the decoder is
png_stats.py's).
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_stats import read_png  # noqa: E402


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    size = int(sys.argv[3]) if len(sys.argv) == 4 else 256
    if not 2 <= size <= 256:
        sys.exit("png_palette: COLOURS must be 2 to 256")
    width, height, pixels = read_png(sys.argv[1])
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    # Most frequent first, but a colour close to one already taken waits: a rare colour
    # that stands apart (a red dot among blues) keeps its place. The slots left go to
    # the most frequent of those that waited (the shades of antialiased edges).
    by_count = [c for c, _ in sorted(counts.items(), key=lambda kv: -kv[1])]
    palette, waited = [], []
    for c in by_count:
        if len(palette) == size:
            break
        if all(sum((p[k] - c[k]) ** 2 for k in range(3)) > 24 ** 2 for p in palette):
            palette.append(c)
        else:
            waited.append(c)
    palette += waited[:size - len(palette)]
    index = {c: i for i, c in enumerate(palette)}
    for c in counts:
        if c not in index:
            index[c] = min(range(len(palette)),
                           key=lambda i: sum((palette[i][k] - c[k]) ** 2 for k in range(3)))
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        raw.extend(index[p] for p in pixels[y * width:(y + 1) * width])
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
    png += chunk(b"PLTE", b"".join(bytes(c) for c in palette))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open(sys.argv[2], "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
