#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb flame FOLDED -o OUT.svg` without a browser: on hand-written folded
# stacks (below; every expected number is worked out from them by hand):
# - the SVG is well-formed XML whose <title> is --title;
# - one box per call path, repeated lines merged: each box's weight
#   (data-w), offset (data-x, children in name order) and pixel width
#   (weight / total * 1180) are the hand-computed ones;
# - kinds from the suffixes (_[k] kernel, _[j] JIT, _[i] inlined, [unknown]);
# - names with < & " and bytes that are not UTF-8 read back through an XML
#   parser as the name (\xNN for the bad bytes);
# - --min-width leaves out the boxes narrower than it, and only those;
# - '-' reads stdin and writes stdout;
# - a bad line: one line 'symdb: FILE:LINE: reason' on stderr, exit 1, no
#   output file, an existing OUT untouched, no temporary file left;
#   a missing input: 'symdb: PATH: No such file or directory', exit 1;
#   no FOLDED: exit 2.
# On main before `symdb flame` existed every part fails (no such command).
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
case $SCRATCH in */scratch/*) ;; *) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Total 300: node 30 (JIT 20, unknown 10) and python3 270 (main 175 =
# compute_fib 100 + 20 merged, list_append 30, PyObject_Malloc 25; kernel 40;
# weird 5; bad UTF-8 48; tiny 1 + 1 merged).  Children are laid out in byte
# order of their names: '<' < 'P' < '_' < 'b' < 'e' < 't'.
printf '%s\n' \
	'python3;_start;main;_PyEval_EvalFrameDefault;compute_fib 100' \
	'python3;_start;main;_PyEval_EvalFrameDefault;list_append_[i] 30' \
	'python3;_start;main;PyObject_Malloc 25' \
	'python3;entry_SYSCALL_64_[k];do_syscall_64_[k];__x64_sys_write_[k] 40' \
	'node;LazyCompile:*fib /app/fib.js:3_[j];LazyCompile:*fib /app/fib.js:3_[j] 20' \
	'node;[unknown] 10' \
	'python3;<weird> & "quoted" 5' \
	'python3;tiny 1' \
	'python3;_start;main;_PyEval_EvalFrameDefault;compute_fib 20' \
	'python3;tiny 1' >in.folded
printf 'python3;bad\xff\xfeutf8 48\n' >>in.folded

"$SYMDB" flame in.folded -o out.svg --title 'Test <profile> & more' ||
	fail "symdb flame exited $?"
python3 - out.svg <<'EOF' || fail "SVG content (above)"
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
bad = []
def want(what, got, exp):
    if got != exp:
        bad.append("%s: got %r, want %r" % (what, got, exp))
want("title", root.find(NS + "title").text, "Test <profile> & more")
boxes = {}
for g in root.iter(NS + "g"):
    cls = (g.get("class") or "").split()
    if "f" not in cls:
        continue
    name = g.find(NS + "title").text.split("\n")[0]
    key = (name, int(g.get("data-d")))
    if key in boxes:
        bad.append("two boxes for %r" % (key,))
    boxes[key] = (int(g.get("data-x")), int(g.get("data-w")), g.get("data-k"), "i" in cls,
                  float(g.find(NS + "rect").get("width")))
total = 300
exp = {  # (name, depth): (x, weight, kind, inlined)
    ("all", 0): (0, 300, "r", False),
    ("node", 1): (0, 30, "u", False),
    ("python3", 1): (30, 270, "u", False),
    ("<weird> & \"quoted\"", 2): (30, 5, "u", False),   # '<' sorts first
    ("_start", 2): (35, 175, "u", False),
    ("bad\\xff\\xfeutf8", 2): (210, 48, "u", False),
    ("entry_SYSCALL_64", 2): (258, 40, "k", False),
    ("tiny", 2): (298, 2, "u", False),
    ("main", 3): (35, 175, "u", False),
    ("PyObject_Malloc", 4): (35, 25, "u", False),      # 'P' < '_'
    ("_PyEval_EvalFrameDefault", 4): (60, 150, "u", False),
    ("compute_fib", 5): (60, 120, "u", False),
    ("list_append", 5): (180, 30, "u", True),
    ("do_syscall_64", 3): (258, 40, "k", False),
    ("__x64_sys_write", 4): (258, 40, "k", False),
    ("LazyCompile:*fib /app/fib.js:3", 2): (0, 20, "j", False),
    ("LazyCompile:*fib /app/fib.js:3", 3): (0, 20, "j", False),
    ("[unknown]", 2): (20, 10, "n", False),
}
want("boxes", sorted(boxes), sorted(exp))
for k, (x, w, kind, inl) in exp.items():
    if k in boxes:
        want(repr(k), boxes[k][:4], (x, w, kind, inl))
        px = w * 1180.0 / total
        if abs(boxes[k][4] - px) > 0.051:
            bad.append("%r: %.1f px wide, want %.2f" % (k, boxes[k][4], px))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# --min-width 8: 'tiny' (2 of 300 = 7.9 px) goes, 'weird' (19.7 px) stays.
"$SYMDB" flame --min-width 8 in.folded -o narrow.svg || fail "--min-width exited $?"
grep -q '<title>tiny' narrow.svg && fail "--min-width 8 kept the 7.9 px box 'tiny'"
grep -q '<title>&lt;weird&gt;' narrow.svg || fail "--min-width 8 dropped a 19.7 px box"
grep -q '<title>tiny' out.svg || fail "default min-width dropped 'tiny'"

# stdin to stdout
"$SYMDB" flame - <in.folded >stdout.svg || fail "flame - exited $?"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' stdout.svg ||
	fail "stdin -> stdout SVG is not XML"
grep -q '<title>Flame Graph</title>' stdout.svg || fail "default title"

# A bad line: nothing written, an existing output untouched.
printf 'a;b 1\na;b;c 2\nx;y 3.5\n' >bad.folded
echo keep >old.svg
set +e
"$SYMDB" flame bad.folded -o new.svg 2>err1
rc1=$?
"$SYMDB" flame bad.folded -o old.svg 2>err2
rc2=$?
"$SYMDB" flame "$SCRATCH/missing.folded" -o new.svg 2>err3
rc3=$?
"$SYMDB" flame -o new.svg 2>err4
rc4=$?
set -e
[[ $rc1 == 1 && $rc2 == 1 && $rc3 == 1 && $rc4 == 2 ]] || fail "exit codes $rc1 $rc2 $rc3 $rc4, want 1 1 1 2"
[[ $(cat err1) == "symdb: bad.folded:3: sample count is not a whole number" ]] ||
	fail "bad line message: $(cat err1)"
cmp -s err1 err2 || fail "second bad-line message differs"
[[ $(cat err3) == "symdb: $SCRATCH/missing.folded: No such file or directory" ]] ||
	fail "missing input message: $(cat err3)"
[[ $(wc -l <err4) == 1 ]] || fail "usage error is not one line: $(cat err4)"
[[ ! -e new.svg ]] || fail "a failed run created new.svg"
[[ $(cat old.svg) == keep ]] || fail "a failed run changed old.svg"
leftover=$(find . -name '*.svg.*')
[[ -z $leftover ]] || fail "temporary files left: $leftover"
echo "flame_cli: ok"
