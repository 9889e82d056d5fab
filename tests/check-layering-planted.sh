#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-layering-planted.sh SRC_DIR SCRATCH: the layering check must catch a
# bad include.  Copies format/, reader/, indexer/ and tools/ to SCRATCH, checks
# that the copy passes, then plants one forbidden include at a time (format ->
# reader, indexer -> the catalog, tools -> an indexer-internal header, reader
# -> libdwarf) and requires check-layering.sh to fail naming that file.
set -euo pipefail
src=${1:?usage: check-layering-planted.sh SRC_DIR SCRATCH}
scratch=${2:?usage: check-layering-planted.sh SRC_DIR SCRATCH}
check=$src/tests/check-layering.sh
copy=$scratch/layering-planted
rm -rf "$copy" && mkdir -p "$copy"
cp -r "$src/format" "$src/reader" "$src/indexer" "$src/tools" "$copy/"
"$check" "$copy" > /dev/null || { echo "FAIL: the unmodified copy does not pass"; exit 1; }

# plant FILE LINE: add LINE to FILE of a fresh copy; the check must fail
# and name FILE.
plant() {
	local file=$1 line=$2 out
	cp "$copy/$file" "$copy/$file.orig"
	printf '%s\n' "$line" >> "$copy/$file"
	if out=$("$check" "$copy"); then
		echo "FAIL: $file with '$line' passed the layering check"
		exit 1
	fi
	if ! grep -q "^$file: " <<< "$out"; then
		echo "FAIL: the check failed but did not name $file: $out"
		exit 1
	fi
	mv "$copy/$file.orig" "$copy/$file"
	echo "ok: $file with '$line' -> $(head -1 <<< "$out")"
}
first() { (cd "$copy" && find "$1" -maxdepth 1 -name '*.c' | sort | head -1); }
plant "$(first format)" '#include "symdb.h"'
plant "$(first indexer)" '#include "reader_internal.h"'
plant "$(first tools)" "#include \"$(cd "$copy" && find indexer -maxdepth 1 -name '*.h' ! -name symdb_indexer.h | sort | head -1 | xargs basename)\""
plant "$(first reader)" '#include <libdwarf.h>'
"$check" "$copy" > /dev/null || { echo "FAIL: the restored copy does not pass"; exit 1; }
echo "PASS: every planted include was caught"
