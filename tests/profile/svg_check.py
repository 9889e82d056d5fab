#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check in a real browser that a flame graph SVG of symdb renders and works.

usage: svg_check.py [--only STAGE]... [--html] [--work DIR] SVG TITLE KNOWN_FRAME

Headless Chromium (/usr/bin/chromium, or $CHROMIUM) loads the file:
  static      the file is self-contained: no href/src/url()/@import, no
              http(s):// other than XML namespaces (nothing can be fetched)
  screenshot  a PNG screenshot is not blank: decoded here (zlib, PNG
              filters), it has several colours and the frames cover a
              good part of the picture
  dom         the DOM after load has the <title> TITLE and a frame whose
              name is KNOWN_FRAME, with that name (or its cut form
              "prefix..") as its visible text
  script      a copy of the SVG with a test script appended runs the flame
              graph's own script: a click on KNOWN_FRAME zooms to it (full
              width, frames outside its range hidden), hovering shows its
              details, "Reset zoom" restores the root, the search box
              highlights it and reports a matched share, a bad regular
              expression does not throw; no uncaught error at any point
  html        (--html) the same script checks with the SVG inlined into an
              HTML page
Every stage runs unless --only names some.  Exit 0 when all pass, 1 with
one line per failure on stderr, 77 when Chromium is not installed.
Each browser gets its own profile directory and no network (a proxy that
does not exist), and is killed after 90 s.
"""
import argparse
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"


class Fail(Exception):
    pass


def chromium_path():
    p = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return p if os.access(p, os.X_OK) else None


def run_chromium(chrome, work, args, url):
    prof = tempfile.mkdtemp(prefix="chrome-", dir=work)
    cmd = [chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
           "--proxy-server=127.0.0.1:9", "--user-data-dir=" + prof] + args + [url]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=90)
    except subprocess.TimeoutExpired:
        raise Fail("chromium did not finish in 90 s")
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    if r.returncode != 0:
        raise Fail("chromium exited %d: %s" % (r.returncode, r.stderr.decode(errors="replace")
                                                  .strip().splitlines()[-1:]))
    return r.stdout.decode("utf-8", errors="replace")


# ---- static -------------------------------------------------------------------

def check_static(text):
    no_ns = re.sub(r'xmlns(:\w+)?="[^"]*"', "", text)
    for pat, what in ((r"\bhref\s*=", "an href"), (r"\bsrc\s*=", "a src"),
                      (r"url\s*\(", "a url()"), (r"@import", "an @import"),
                      (r"https?://", "a URL")):
        m = re.search(pat, no_ns)
        if m:
            raise Fail("not self-contained: %s at offset %d" % (what, m.start()))


# ---- screenshot -------------------------------------------------------------------

def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Fail("screenshot is not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise Fail("screenshot PNG of a kind this check does not decode")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride, rows, prev = w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_screenshot(chrome, work, svg_path, svg_text):
    m = re.search(r'<svg\b[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"', svg_text)
    w, h = (int(m.group(1)), int(m.group(2))) if m else (1200, 800)
    w, h = min(max(w, 200), 1600), min(max(h, 100), 1600)
    png = os.path.join(work, "screenshot.png")
    run_chromium(chrome, work, ["--window-size=%d,%d" % (w, h), "--screenshot=" + png],
                 "file://" + os.path.abspath(svg_path))
    if not os.path.exists(png):
        raise Fail("chromium wrote no screenshot")
    with open(png, "rb") as f:
        pw, ph, bpp, rows = png_pixels(f.read())
    counts = {}
    for row in rows:
        for x in range(0, pw * bpp, bpp * 2):  # every other pixel is plenty
            px = row[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    top = max(counts.values())
    if len(counts) < 4:
        raise Fail("screenshot is blank: %d colour(s)" % len(counts))
    # The background (the commonest colour) must leave room for frames.
    if top > total * 0.995:
        raise Fail("screenshot is nearly blank: %.2f%% one colour" % (100.0 * top / total))
    return "%dx%d, %d colours, %.1f%% background" % (pw, ph, len(counts), 100.0 * top / total)


# ---- dom --------------------------------------------------------------------------

def frame_text_ok(name, shown):
    if shown == name:
        return True
    return shown.endswith("..") and len(shown) > 2 and name.startswith(shown[:-2])


def check_dom(chrome, work, svg_path, title, known):
    dom = run_chromium(chrome, work, ["--dump-dom", "--virtual-time-budget=2000"],
                       "file://" + os.path.abspath(svg_path))
    try:
        root = ET.fromstring(dom)
    except ET.ParseError as e:
        raise Fail("the DOM after load is not an SVG document (%s)" % e)
    t = root.find(SVG_NS + "title")
    if t is None or (t.text or "") != title:
        raise Fail("DOM title is %r, not %r" % (None if t is None else t.text, title))
    frames = [g for g in root.iter(SVG_NS + "g") if "f" in (g.get("class") or "").split()]
    names = len(frames)
    for g in frames:
        tip = g.find(SVG_NS + "title")
        txt = g.find(SVG_NS + "text")
        if tip is None or (tip.text or "").split("\n")[0] != known:
            continue
        shown = (txt.text or "") if txt is not None else ""
        if frame_text_ok(known, shown):
            return "%d frames, %r shown as %r" % (names, known, shown)
        raise Fail("frame %r is in the DOM but shows %r" % (known, shown))
    raise Fail("no frame %r among the %d frames in the DOM" % (known, names))


# ---- script -------------------------------------------------------------------------

ERRORS_JS = """window.__svgCheckErrors = [];
window.addEventListener('error', function (e) {
  window.__svgCheckErrors.push(String(e.message || e.error || e));
});
"""

TEST_JS = r"""(function () {
var out = { fail: [], notes: [] };
function check(ok, what) { if (!ok) out.fail.push(what); }
function click(el) { el.dispatchEvent(new MouseEvent('click', { bubbles: true })); }
try {
  var svgs = document.querySelectorAll('svg.symdb-flame');
  var svg = svgs[svgs.length - 1];
  var api = svg && svg.symdbFlame;
  if (!api) throw new Error('the flame graph script did not run (no svg.symdbFlame)');
  var F = api.frames, known = null, root = null, i;
  for (i = 0; i < F.length; i++) {
    if (F[i].d === 0) root = F[i];
    if (!known && F[i].name === KNOWN) known = F[i];
  }
  if (!known) throw new Error('the script has no frame named ' + KNOWN);
  var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');
  var before = +known.r.getAttribute('width');
  click(known.r);
  check(api.zoomed() === known, 'a click on the frame did not zoom to it');
  check(Math.abs(+known.r.getAttribute('width') - (W - 2 * PAD)) < 0.6,
        'the zoomed frame is ' + known.r.getAttribute('width') + ' px wide, not ' + (W - 2 * PAD));
  var shown = 0, hidden = 0, outside = 0;
  for (i = 0; i < F.length; i++) {
    var f = F[i], vis = f.g.style.display !== 'none';
    var inside = f.x >= known.x && f.x + f.w <= known.x + known.w;
    if (vis) shown++; else hidden++;
    if (vis && f.d >= known.d && !inside) outside++;
  }
  check(outside === 0, outside + ' frame(s) outside the zoomed range still shown');
  out.notes.push('zoom: ' + shown + ' shown, ' + hidden + ' hidden');
  known.r.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  var details = svg.querySelector('.details').textContent;
  check(details.indexOf(KNOWN) === 0, 'hover shows ' + JSON.stringify(details));
  var reset = svg.querySelector('.reset');
  check(reset && reset.style.display !== 'none', 'no Reset zoom control while zoomed');
  click(reset);
  check(api.zoomed() === root, 'Reset zoom did not go back to the root');
  check(Math.abs(+known.r.getAttribute('width') - before) < 0.6, 'after reset the frame is '
        + known.r.getAttribute('width') + ' px wide, was ' + before);
  var input = svg.querySelector('input');
  check(input, 'no search box');
  if (input) {
    input.value = KNOWN.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    input.dispatchEvent(new Event('input', { bubbles: true }));
    var m = svg.querySelector('.matched').textContent;
    check(/^Matched: [0-9.]+% /.test(m) && !/^Matched: 0\.00%/.test(m), 'search shows ' + JSON.stringify(m));
    check(known.g.classList.contains('hit'), 'search did not highlight the frame');
    check(known.r.getAttribute('fill') !== known.fill, 'search did not recolour the frame');
    out.notes.push('search: ' + m);
  }
  api.search('((');
  api.search('');
  check(!known.g.classList.contains('hit') && known.r.getAttribute('fill') === known.fill,
        'clearing the search left the highlight');
} catch (e) {
  out.fail.push('exception: ' + e);
}
out.errors = window.__svgCheckErrors || ['the error recorder did not run'];
var pre = document.createElementNS('http://www.w3.org/2000/svg', 'text');
pre.setAttribute('id', 'svg-check-result');
pre.textContent = JSON.stringify(out);
(svg || document.documentElement).appendChild(pre);
})();
"""


def instrumented(svg_text, known, inline_html):
    test = "var KNOWN = %s;\n%s" % (json.dumps(known), TEST_JS)
    m = re.search(r"<svg\b[^>]*>", svg_text)
    end = svg_text.rfind("</svg>")
    if not m or end < 0:
        raise Fail("no <svg> root element")
    if inline_html:
        body = svg_text[m.start():]
        return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>harness</title>"
                "<script>%s</script></head><body>\n%s\n<script>%s</script></body></html>\n"
                % (ERRORS_JS, body, test))
    cdata = lambda js: "<script type=\"text/javascript\"><![CDATA[\n%s]]></script>\n" % js
    return (svg_text[:m.end()] + "\n" + cdata(ERRORS_JS) + svg_text[m.end():end] + cdata(test)
            + svg_text[end:])


def check_script(chrome, work, svg_text, known, inline_html):
    page = os.path.join(work, "harness.html" if inline_html else "harness.svg")
    with open(page, "w", encoding="utf-8") as f:
        f.write(instrumented(svg_text, known, inline_html))
    dom = run_chromium(chrome, work, ["--dump-dom", "--virtual-time-budget=2000"],
                       "file://" + os.path.abspath(page))
    m = re.search(r'<text id="svg-check-result"[^>]*>(.*?)</text>', dom, re.S)
    if not m:
        raise Fail("the test script did not report (did the page load?)")
    res = json.loads(html.unescape(m.group(1)))
    problems = res["fail"] + ["uncaught error: " + e for e in res["errors"]]
    if problems:
        raise Fail("; ".join(problems))
    return "; ".join(res["notes"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("svg")
    ap.add_argument("title")
    ap.add_argument("known_frame")
    ap.add_argument("--only", action="append",
                    choices=["static", "screenshot", "dom", "script", "html"])
    ap.add_argument("--html", action="store_true")
    ap.add_argument("--work", help="scratch directory (default: a temporary one)")
    a = ap.parse_args()
    chrome = chromium_path()
    if not chrome:
        print("svg_check: SKIP: chromium is not installed (Debian package chromium)",
              file=sys.stderr)
        return 77
    stages = a.only or ["static", "screenshot", "dom", "script"] + (["html"] if a.html else [])
    with open(a.svg, encoding="utf-8", errors="strict") as f:
        text = f.read()
    work = a.work or tempfile.mkdtemp(prefix="svg_check.")
    os.makedirs(work, exist_ok=True)
    failed = 0
    try:
        for st in stages:
            try:
                if st == "static":
                    check_static(text)
                    note = "no external reference"
                elif st == "screenshot":
                    note = check_screenshot(chrome, work, a.svg, text)
                elif st == "dom":
                    note = check_dom(chrome, work, a.svg, a.title, a.known_frame)
                else:
                    note = check_script(chrome, work, text, a.known_frame, st == "html")
                print("svg_check: %s: ok (%s)" % (st, note))
            except Fail as e:
                failed += 1
                print("svg_check: %s: %s: FAILED: %s" % (a.svg, st, e), file=sys.stderr)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
