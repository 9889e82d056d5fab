#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gc_age.sh: the direction of `gc --unused-for D`, checked apart from gc.sh
# (other images, other ages, the files on disk as the evidence): images last
# used longer ago than D are removed, images used more recently are kept,
# and one used exactly D ago is kept ("longer than D", SPEC §12.6).  The
# clock is faked with $SYMDB_NOW; each image's use is a `symdb query`.
source "$(dirname "$0")/../cli/lib.sh"

DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
DAY=86400
T0=$(date +%s)  # the build records the real time; uses come later
OLD=$BIN/cpp_clang++_O0_pie.symtab    # last used day 10
MID=$BIN/c_clang_O2_nopie.symtab      # last used day 20
NEW=$BIN/lib_clang_O0.so.symtab       # last used day 30
for f in "$OLD" "$MID" "$NEW"; do
	[[ -f $f ]] || fail "fixture $f missing"
done
file_of() { local u; u=$(build_id "$1"); echo "$DB/images/${u:0:2}/$u.symdb"; }

SYMDB_NOW=$T0 run "${S[@]}" build -q "$OLD" "$MID" "$NEW"
expect_ok "build on day 0"
for x in "$OLD:10" "$MID:20" "$NEW:30"; do
	IFS=: read -r bin d <<<"$x"
	SYMDB_NOW=$((T0 + d * DAY)) run "${S[@]}" query --obj "$bin" 0x1000
	expect_ok "query on day $d"
done
for f in "$OLD" "$MID" "$NEW"; do
	[[ -f $(file_of "$f") ]] || fail "no index file for $f before gc"
done

# Day 40, 15 days: OLD (30 days unused) and MID (20) go, NEW (10) stays.
SYMDB_NOW=$((T0 + 40 * DAY)) run "${S[@]}" gc --unused-for 15d
expect_ok "gc --unused-for 15d on day 40"
[[ -e $(file_of "$OLD") ]] && fail "gc kept the image last used 30 days ago"
[[ -e $(file_of "$MID") ]] && fail "gc kept the image last used 20 days ago"
[[ -f $(file_of "$NEW") ]] || fail "gc removed the image used 10 days ago"
run "${S[@]}" info "$(build_id "$NEW")"
expect_ok "info of the kept image"
run "${S[@]}" info "$(build_id "$OLD")"
((RC != 0)) || fail "info still finds the removed image"
note "gc --unused-for removes the older images and keeps the newer one"

# Unused for exactly D is not "longer than D": kept; one second more: removed.
SYMDB_NOW=$((T0 + 40 * DAY)) run "${S[@]}" gc --unused-for 10d
expect_ok "gc --unused-for 10d, exactly 10 days"
[[ -f $(file_of "$NEW") ]] || fail "gc removed an image unused for exactly the limit"
SYMDB_NOW=$((T0 + 40 * DAY + 1)) run "${S[@]}" gc --unused-for 10d
expect_ok "gc --unused-for 10d, one second later"
[[ -e $(file_of "$NEW") ]] && fail "gc kept an image unused for longer than the limit"
run "${S[@]}" verify
expect_ok "verify after gc"
note "gc_age: all cases passed"
