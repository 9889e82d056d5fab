#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# svg_check.sh SVG TITLE KNOWN_FRAME [svg_check.py options]: does a flame
# graph SVG of symdb render and work in a real browser (headless Chromium)?
# The checks are svg_check.py's (read its help); this is the name the
# profile tests call.  Exit 0 ok, 1 failed (one line per failure on
# stderr), 77 Chromium is not installed (the calling test skips).
exec python3 "$(dirname "$0")/svg_check.py" "$@"
