#!/usr/bin/env python3
"""plot_check.py -- does any plot's key box cover its data? (tests/cli/plot_keys.sh; issue 35, point 10)

For every gnuplot script lowp wrote (lib/io/plot.c: NAME.gp beside NAME.png) under the folders given,
the script is rendered twice with its own pngcairo terminal into a scratch folder: as written with its key
filled magenta (opaque; the key box is the rectangle of magenta pixels), and without the key with the
plot area fixed to the first render's (GPVAL_TERM_*), so that nothing moves. The key covers data where
the render without it has a coloured pixel inside the key box (a curve, a point, a bar, a note: not the
white background, the grey grid or the black axes and text). A plot whose key covers more than
--tolerance such pixels (anti-aliasing: a few) is reported. A key found wholly in the margin (more than
BORDER_REACH pixels outside the plot area, where gnuplot draws no data) covers none, and is not rendered
the second time (most of lowp's keys are outside right: half the renders). A multiplot script is not
checked (said so).

With --captions it checks instead, without rendering, that each plot draws what its key and caption
name: for every results.json under the folders, every plot it lists has its script, every curve in the
script's key draws at least one point (its CSV rows, through the script's own filter, give a finite value
inside the axis ranges: positive on a log axis), and every way of drawing the caption names (dashed,
dotted, dash-dotted, solid, open circles, crosses, stars, triangles, squares, diamonds, grey, bars) is in the
script (dt 2 / dt 3 / dt 4-5, a line without dt 2-9, pt 6 / 2 / 3 / 8-11 / 4-5 / 12-13, a colour with
r = g = b, boxes or error bars or interval arrows).

Usage: python3 tools/plot_check.py [--tolerance N] [--list] DIR...
       python3 tools/plot_check.py --captions [--list] DIR...
Exit: 0 no key covers data (with --captions: every plot draws what it names), 1 some do (each listed with
the covered pixels' bounding box; with --captions each curve not drawn and each caption word without its
style), 2 bad usage or a script gnuplot cannot render.
"""
import csv
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_rgb(path):
    """The pixels of an 8-bit RGB or RGBA non-interlaced PNG (what pngcairo writes): (w, h, rows of bytes, bpp)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(path + ": not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("%s: PNG colour type %d depth %d interlace %d not handled" % (path, ctype, depth, interlace))
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride, rows, prev = w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def ppm_rgb(path):
    """The pixels through netpbm's pngtopnm when it is installed (much faster than png_rgb), else png_rgb."""
    if shutil.which("pngtopnm") is None:
        return png_rgb(path)
    data = subprocess.run(["pngtopnm", path], capture_output=True, check=True).stdout
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    if not m or m.group(3) != b"255":
        return png_rgb(path)
    w, h, off = int(m.group(1)), int(m.group(2)), m.end()
    return w, h, [data[off + y * 3 * w:off + (y + 1) * 3 * w] for y in range(h)], 3


def coloured(px):
    r, g, b = px[0], px[1], px[2]
    return max(r, g, b) - min(r, g, b) > 48  # series colours; not white, grey grid, black text


def render(gp, folder, out_png, mode, area=None):
    """mode "key": the script as written, its key filled with magenta (opaque) so that its box can be found,
    the plot area printed; mode "nokey": without the key, the plot area fixed to the first render's."""
    text = open(os.path.join(folder, gp)).read()
    text = re.sub(r"set output '[^']*\.png\.tmp'", "set output '%s'" % out_png.replace("'", ""), text)
    if mode == "key":
        text = re.sub(r"(?m)^(\s*)(s?plot )", r"\1set key opaque fc rgb '#ff00ff'\n\1\2", text)
        text += ("\nprint sprintf('AREA %g %g %g %g', GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_TERM_YMIN, "
                 "GPVAL_TERM_YMAX)\n")
    else:
        w, h, x0, x1, y0, y1 = area
        fix = "unset key\nset lmargin at screen %.6f\nset rmargin at screen %.6f\nset bmargin at screen %.6f\n" \
              "set tmargin at screen %.6f\n" % (x0 / w, x1 / w, y0 / h, y1 / h)
        text = re.sub(r"(?m)^(\s*)(s?plot )", lambda m: fix + m.group(1) + m.group(2), text)
    script = out_png + ".gp"
    open(script, "w").write(text)
    r = subprocess.run(["gnuplot", "-e", "term='png'", script], cwd=folder, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not os.path.exists(out_png):
        raise RuntimeError("%s/%s: gnuplot failed: %s" % (folder, gp, r.stderr.strip()[-300:]))
    m = re.search(r"AREA (\S+) (\S+) (\S+) (\S+)", r.stderr + r.stdout)
    return [float(v) for v in m.groups()] if m else None


def check(folder, gp, tmp, tol):
    """(covered pixels, their bounding box) when the key covers more than tol coloured pixels, else (0, None);
    None when the script is not one plot (multiplot) and cannot be checked this way"""
    text = open(os.path.join(folder, gp)).read()
    if "multiplot" in text or len(re.findall(r"(?m)^\s*s?plot ", text)) != 1:
        return None
    base = os.path.join(tmp, gp[:-3])
    area = render(gp, folder, base + ".key.png", "key")
    w, h, a, bpa = ppm_rgb(base + ".key.png")
    if not area:
        return None
    kx0, ky0, kx1, ky1 = w, h, -1, -1
    for y in range(h):
        first, last = magenta_span(a[y], bpa)
        if first >= 0:
            kx0, ky0, kx1, ky1 = min(kx0, first), min(ky0, y), max(kx1, last), max(ky1, y)
    if kx1 < 0:
        return (0, None)  # no key (or no entries)
    if outside_area(kx0, ky0, kx1, ky1, h, area):
        return (0, None)  # a key in the margin: no data under it, and no second render needed
    render(gp, folder, base + ".nokey.png", "nokey", (w, h, area[0], area[1], area[2], area[3]))
    w2, h2, b, bpb = ppm_rgb(base + ".nokey.png")
    if (w, h) != (w2, h2):
        return None
    n, box = 0, [w, h, -1, -1]
    for y in range(ky0, ky1 + 1):
        seg = b[y][kx0 * bpb:(kx1 + 1) * bpb]
        if seg[0::bpb] == seg[1::bpb] == seg[2::bpb]:
            continue  # every pixel of the row's stretch grey (r = g = b): none coloured
        for x in range(kx0, kx1 + 1):
            if coloured(b[y][x * bpb:x * bpb + 3]):
                n += 1
                box = [min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)]
    return (n, box) if n > tol else (0, None)


MAGENTA = b"\xff\x00\xff"
# pixels a point symbol drawn on the plot area's border may reach beyond it
BORDER_REACH = 8


def outside_area(kx0, ky0, kx1, ky1, h, area):
    """whether the key box (pixel columns kx0..kx1, rows ky0..ky1 from the top) lies wholly in the margin,
    more than BORDER_REACH pixels from the plot area (GPVAL_TERM_XMIN, XMAX, YMIN, YMAX: pixels, y from the
    bottom), where gnuplot draws no data: the render without the key would find nothing under it"""
    x0, x1 = area[0] - BORDER_REACH, area[1] + BORDER_REACH
    top, bottom = h - area[3] - BORDER_REACH, h - area[2] + BORDER_REACH
    return kx1 < x0 or kx0 > x1 or ky1 < top or ky0 > bottom


def magenta_span(row, bpp):
    """the first and last x of a row whose pixel is magenta (255, 0, 255), or (-1, -1): bytes.find and rfind,
    matches that do not start a pixel skipped"""
    i = row.find(MAGENTA)
    while i >= 0 and i % bpp:
        i = row.find(MAGENTA, i + 1)
    if i < 0:
        return -1, -1
    j = row.rfind(MAGENTA)
    while j % bpp:
        j = row.rfind(MAGENTA, 0, j + 2)
    return i // bpp, j // bpp


# how a caption names a way of drawing, and what in the script draws it
STYLE_WORDS = [
    (r"(?<!dash-)(?<!dot-)\bdashed\b", r"\bdt [2]\b", "dashed (dt 2)"),
    (r"(?<!dash-)\bdotted\b", r"\bdt [3]\b", "dotted (dt 3)"),
    (r"\bdash-dotted\b", r"\bdt [45]\b", "dash-dotted (dt 4 or 5)"),
    (r"(?<!look )\bsolid\b", r"with (?:lines|linespoints|steps)(?:(?!\bdt [2-9])[^\"])*title",
     "solid (a line without a dash type)"),
    (r"\bopen circles?\b", r"\bpt 6\b", "open circles (pt 6)"),
    (r"\bcross(?:es)?\b", r"\bpt 2\b", "crosses (pt 2)"),
    (r"\bstars?\b", r"\bpt 3\b", "stars (pt 3)"),
    (r"\btriangles?\b", r"\bpt (?:8|9|10|11)\b", "triangles (pt 8-11)"),
    (r"\bsquares\b", r"\bpt [45]\b", "squares (pt 4, 5)"),
    (r"\bdiamonds?\b", r"\bpt 1[23]\b", "diamonds (pt 12, 13)"),
    (r"\bgr[ae]y\b", r"rgb '#(..)\1\1'", "grey (a colour with r = g = b)"),
    (r"\bbars?\b", r"\b(?:boxes|histograms?|boxerrorbars|[xy]?errorbars)\b|set arrow .* heads\b",
     "bars (boxes, error bars, or interval arrows with heads)"),
]

SERIES = re.compile(r"'([^']+)' using (\d+):(?:\(strcol\((\d+)\) eq \"((?:[^\"\\\\]|\\\\.)*)\" \? \$(\d+) : NaN\)|(\d+))"
                    r" with (.*?) title \"((?:[^\"\\\\]|\\\\.)*)\"")


def axis_range(text, axis):
    """[lo, hi] of `set Xrange [lo:hi]` (None where open or not numeric)"""
    m = None
    for m in re.finditer(r"(?m)^\s*set %srange \[([^:\]]*):([^\]]*)\]" % axis, text):
        pass
    def num(v):
        try:
            return float(v)
        except ValueError:
            return None
    return [num(m.group(1)), num(m.group(2))] if m else [None, None]


def drawn(folder, csvname, xcol, fcol, fval, ycol, logx, logy, xr, yr, cache):
    """does the series give at least one point gnuplot draws inside the axis ranges?"""
    if csvname not in cache:
        try:
            with open(os.path.join(folder, csvname), newline="") as f:
                cache[csvname] = list(csv.reader(f))[1:]
        except OSError:
            cache[csvname] = None
    rows = cache[csvname]
    if rows is None:
        return False
    for row in rows:
        try:
            if fcol and row[fcol - 1] != fval:
                continue
            x, y = float(row[xcol - 1]), float(row[ycol - 1])
        except (IndexError, ValueError):
            continue
        if not (math.isfinite(x) and math.isfinite(y)) or (logx and x <= 0) or (logy and y <= 0):
            continue
        if (xr[0] is not None and x < xr[0]) or (xr[1] is not None and x > xr[1]):
            continue
        if (yr[0] is not None and y < yr[0]) or (yr[1] is not None and y > yr[1]):
            continue
        return True
    return False


def check_captions(top, listing):
    """problems found under top (one line each), plots checked"""
    problems, checked = [], 0
    for folder, _, files in sorted(os.walk(top)):
        if "results.json" not in files:
            continue
        try:
            res = json.load(open(os.path.join(folder, "results.json"))).get("results", {})
        except ValueError as e:
            problems.append("%s/results.json: not JSON (%s)" % (folder, e))
            continue
        for p in res.get("plots", []) if isinstance(res, dict) else []:
            name, cap = p.get("file", ""), p.get("caption", "")
            gp = os.path.join(folder, re.sub(r"\.(png|svg)$", "", name) + ".gp")
            where = os.path.join(folder, name)
            if not os.path.exists(gp):
                problems.append("NO SCRIPT: %s (results.json lists it; %s is missing)" % (where, gp))
                continue
            text = open(gp).read()
            if "multiplot" in text:
                continue
            checked += 1
            logx = re.search(r"(?m)^\s*set logscale x", text) is not None
            logy = re.search(r"(?m)^\s*set logscale y", text) is not None
            xr, yr, cache = axis_range(text, "x"), axis_range(text, "y"), {}
            for m in SERIES.finditer(text):
                csvname, xcol, fcol, fval, ycol_f, ycol, _, title = m.groups()
                if not title:
                    continue  # no key entry (marks, ranges)
                fv = fval.replace('\\"', '"').replace("\\\\", "\\") if fval is not None else None
                if not drawn(folder, csvname, int(xcol), int(fcol) if fcol else 0, fv, int(ycol_f or ycol),
                             logx, logy, xr, yr, cache):
                    problems.append("CURVE NOT DRAWN: %s: key entry \"%s\" has no point inside the axes" % (where, title))
            for word, style, what in STYLE_WORDS:
                if re.search(word, cap, re.I) and not re.search(style, text):
                    problems.append("CAPTION NAMES A STYLE NOT DRAWN: %s: the caption says %s, the script has none"
                                    % (where, what))
            if listing:
                print("checked: %s" % where)
    return problems, checked


def main_captions(dirs, listing):
    problems, checked = [], 0
    for top in dirs:
        if not os.path.isdir(top):
            print("plot_check.py: '%s' is not a folder" % top, file=sys.stderr)
            return 2
        p, c = check_captions(top, listing)
        problems += p
        checked += c
    for line in problems:
        print(line)
    print("plot_check.py --captions: %d plots checked, %d problems" % (checked, len(problems)))
    return 1 if problems else 0


def main(argv):
    tol, dirs, listing, captions = 30, [], False, False
    i = 0
    while i < len(argv):
        if argv[i] == "--captions":
            captions = True; i += 1
        elif argv[i] == "--tolerance" and i + 1 < len(argv):
            tol = int(argv[i + 1]); i += 2
        elif argv[i] == "--list":
            listing = True; i += 1
        elif argv[i] in ("-h", "--help"):
            print(__doc__); return 0
        elif argv[i].startswith("-"):
            print("plot_check.py: unknown option '%s'" % argv[i], file=sys.stderr); return 2
        else:
            dirs.append(argv[i]); i += 1
    if not dirs:
        print("plot_check.py: name the folders to check", file=sys.stderr); return 2
    if captions:
        return main_captions(dirs, listing)
    if shutil.which("gnuplot") is None:
        print("plot_check.py: gnuplot is not installed", file=sys.stderr); return 2
    bad = checked = skipped = 0
    tmp = tempfile.mkdtemp(prefix="plot_check.")
    try:
        for top in dirs:
            if not os.path.isdir(top):
                print("plot_check.py: '%s' is not a folder" % top, file=sys.stderr); return 2
            for folder, _, files in sorted(os.walk(top)):
                for gp in sorted(f for f in files if f.endswith(".gp")):
                    if "pngcairo" not in open(os.path.join(folder, gp)).read():
                        continue
                    try:
                        r = check(folder, gp, tmp, tol)
                    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                        print("plot_check.py: %s" % e, file=sys.stderr); return 2
                    if r is None:
                        skipped += 1
                        if listing:
                            print("not checked (not one plot): %s" % os.path.join(folder, gp))
                        continue
                    checked += 1
                    if r[0]:
                        bad += 1
                        print("KEY COVERS DATA: %s: %d pixels in x %d..%d, y %d..%d" %
                              (os.path.join(folder, gp[:-3] + ".png"), r[0], r[1][0], r[1][2], r[1][1], r[1][3]))
                    elif listing:
                        print("ok: %s" % os.path.join(folder, gp[:-3] + ".png"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("plot_check.py: %d plots checked, %d with a key over data; %d not checked (multiplot)" % (checked, bad, skipped))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
