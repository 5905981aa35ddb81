#!/usr/bin/env python3
"""png_stats.py FILE.png [#rrggbb ...]: what a screenshot holds, as one JSON line.

  {"width": 1100, "height": 1400, "colours": 2318, "non_background": 0.31,
   "background": "#f5f6f8", "matches": {"#4e79a7": 5120}}

colours: distinct RGB colours; background: the most frequent one; non_background:
the fraction of pixels of any other colour; matches: pixels within 8 of each colour
asked for (per channel). Decodes 8-bit greyscale, RGB, RGBA and palette PNGs, not
interlaced (what Chromium's --screenshot writes), with the standard library only.
"""
import json
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"png_stats: {path}: not a PNG file")
    pos, idat, palette = 8, [], None
    width = height = depth = ctype = interlace = None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if width is None or depth != 8 or interlace or ctype not in (0, 2, 3, 6):
        sys.exit(f"png_stats: {path}: unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    channels = {0: 1, 2: 3, 3: 1, 6: 4}[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    pixels = []
    for line in rows:
        for x in range(width):
            px = line[x * channels:(x + 1) * channels]
            if ctype == 0:
                pixels.append((px[0],) * 3)
            elif ctype == 3:
                pixels.append(palette[px[0]])
            else:
                pixels.append(tuple(px[:3]))
    return width, height, pixels


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    width, height, pixels = read_png(sys.argv[1])
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    background, n_bg = max(counts.items(), key=lambda kv: kv[1])
    matches = {}
    for want in sys.argv[2:]:
        rgb = tuple(int(want.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
        matches[want] = sum(n for c, n in counts.items() if all(abs(c[i] - rgb[i]) <= 8 for i in range(3)))
    print(json.dumps({
        "width": width, "height": height, "colours": len(counts),
        "non_background": round(1 - n_bg / len(pixels), 4),
        "background": "#%02x%02x%02x" % background, "matches": matches,
    }))


if __name__ == "__main__":
    main()
