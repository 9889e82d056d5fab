#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb flame`'s SVG in a real browser (headless Chromium, svg_check.py):
# the picture is not blank, the DOM holds the title and the frame
# 'compute_fib', and the graph's own script works when the SVG is opened
# alone and when it is inlined into an HTML page: a click zooms,
# Reset zoom restores, hovering shows details, search highlights and
# reports a share, no uncaught error.  Then the check itself is shown to
# fail: on a copy whose click handler throws and on a blank picture.
# On main before `symdb flame` existed the first step fails.
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
case $SCRATCH in */scratch/*) ;; *) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH"
fail() { echo "FAIL: $*" >&2; exit 1; }
start=$(date +%s)

printf '%s\n' \
	'python3;_start;main;_PyEval_EvalFrameDefault;compute_fib 120' \
	'python3;_start;main;_PyEval_EvalFrameDefault;list_append_[i] 30' \
	'python3;_start;main;PyObject_Malloc 25' \
	'python3;entry_SYSCALL_64_[k];do_syscall_64_[k];__x64_sys_write_[k] 40' \
	'node;LazyCompile:*fib /app/fib.js:3_[j];LazyCompile:*fib /app/fib.js:3_[j] 60' \
	'node;[unknown] 10' >in.folded
title='symdb flame: browser test'
"$SYMDB" flame in.folded -o flame.svg --title "$title" || fail "symdb flame exited $?"

set +e
"$here/svg_check.sh" flame.svg "$title" compute_fib --html --work "$SCRATCH/check"
rc=$?
set -e
((rc == 77)) && exit 77
((rc == 0)) || fail "svg_check on symdb flame's SVG"

# The check must be able to fail.
python3 - <<'PY'
s = open("flame.svg").read()
old = "if (g && g.symdbFrame) zoom(g.symdbFrame);"
assert old in s, "click handler not found"
open("broken.svg", "w").write(s.replace(old, "if (g && g.symdbFrame) zoom(g.symdbFrame.no.such);"))
open("blank.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg" width="600" height="200">'
                             '<title>t</title><rect width="600" height="200" fill="#fff"/></svg>\n')
PY
if "$here/svg_check.sh" broken.svg "$title" compute_fib --only script --work "$SCRATCH/neg1" \
	2>neg1.err; then
	fail "svg_check passed an SVG whose click handler throws"
fi
grep -q 'uncaught error' neg1.err || fail "broken script not reported as an error: $(cat neg1.err)"
if "$here/svg_check.sh" blank.svg t compute_fib --only screenshot --work "$SCRATCH/neg2" \
	2>neg2.err; then
	fail "svg_check passed a blank picture"
fi
grep -q 'blank' neg2.err || fail "blank picture not reported: $(cat neg2.err)"
echo "flame_browser: ok ($(($(date +%s) - start)) s)"
