#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb build DIR`: without -r a clear error that DIR is a directory; with
# -r every object file under it is indexed and everything else is skipped
# with one "ignored PATH (why)" line and counted in the summary line, not a
# failure of the run: text files, empty files, a Java class file (same magic
# as a universal Mach-O file), a FIFO and a device (never opened: the run
# must not block), dangling links, a link loop, a link to a directory (never
# followed, so a link to an ancestor cannot loop), and a link beside its
# target (indexed once).  An object file that fails still fails the run.
# `symdb build /proc/kallsyms` says it is not an object file.  The UUIDs
# indexed are the build-ids binutils' readelf reads.
source "$(dirname "$0")/lib.sh"
require timeout mkfifo

d=$SCRATCH/tree
mkdir -p "$d/sub/deeper"
cp "$BIN/c_gcc_O2_pie.symtab" "$d/prog"
cp "$BIN/lib_gcc_O2.so.symtab" "$d/sub/libx.so"
echo "hello" >"$d/README"
: >"$d/empty"
printf '\xca\xfe\xba\xbe\x00\x00\x00\x34rest of a class file' >"$d/sub/deeper/A.class"
mkfifo "$d/sub/fifo"
ln -s /dev/null "$d/devnull"
ln -s nowhere "$d/dangling"
ln -s loop2 "$d/loop1"
ln -s loop1 "$d/loop2"
ln -s .. "$d/sub/up"
ln -s ../prog "$d/sub/prog-link"
P=$(build_id "$d/prog") L=$(build_id "$d/sub/libx.so")
[[ $P && $L ]] || fail "readelf shows no build-ids"
db=$SCRATCH/db

# Without -r: the directory is refused, nothing is indexed.
run "$SYMDB" build --db "$db" "$d"
expect_error "build DIR without -r" \
	"symdb: $d: is a directory (use -r to index the object files under it)"
((RC == 1)) || fail "build DIR without -r: exit $RC, expected 1"
[[ -s $OUT ]] && fail "build DIR without -r printed: $(cat "$OUT")"

# With -r (a FIFO in the tree must not block it).
run timeout 120 "$SYMDB" build --db "$db" -r "$d"
((RC != 124)) || fail "build -r blocked (on the FIFO?)"
expect_ok "build -r DIR"
[[ -s $ERR ]] && fail "build -r wrote to stderr: $(cat "$ERR")"
cat >"$SCRATCH/expect" <<EOT
ignored $d/README (not an object file)
ignored $d/dangling (dangling symbolic link)
ignored $d/devnull (character device)
ignored $d/empty (empty file)
ignored $d/loop1 (symbolic link loop)
ignored $d/loop2 (symbolic link loop)
ignored $d/sub/deeper/A.class (not an object file)
ignored $d/sub/fifo (fifo)
ignored $d/sub/up (symbolic link to a directory, not followed)
indexed $P $d/prog
indexed $L $d/sub/libx.so
summary: 2 indexed, 0 already indexed, 0 failed, 9 skipped (not object files)
EOT
diff "$SCRATCH/expect" "$OUT" || fail "build -r output differs from the expected lines"
[[ $("$SYMDB" list --db "$db" | awk '{print $1}' | sort | tr '\n' ' ') == \
	"$(printf '%s\n' "$P" "$L" | sort | tr '\n' ' ')" ]] || fail "list after build -r"
# The indexed image answers as llvm-symbolizer-14 does.
fa=$(llvm-nm-14 --defined-only "$d/prog" | awk '$3 == "main" {print "0x" $1}')
llvm_query "$d/prog" "$fa" >"$SCRATCH/q.expect"
run "$SYMDB" query --db "$db" --obj "$d/prog" "$fa"
diff "$SCRATCH/q.expect" "$OUT" || fail "query after build -r differs from llvm-symbolizer-14"

# Again: already indexed; --recursive spelled long; -q drops the summary.
run "$SYMDB" build --db "$db" --recursive "$d/sub"
expect_ok "build --recursive again"
tail -1 "$OUT" | grep -qxF "summary: 0 indexed, 2 already indexed, 0 failed, 3 skipped (not object files)" ||
	fail "second summary: $(tail -1 "$OUT")"
run "$SYMDB" build --db "$db" -q -r "$d/sub"
expect_ok "build -q -r"
[[ -s $OUT ]] && fail "build -q -r printed: $(cat "$OUT")"

# An object file that fails still fails the run (exit 1), and is counted.
printf '\177ELF\2\1\1' >"$d/sub/broken.so"
run "$SYMDB" build --db "$db" -r "$d/sub"
no_crash "build -r with a broken ELF"
((RC == 1)) || fail "build -r with a broken ELF: exit $RC, expected 1"
grep -qF "symdb: $d/sub/broken.so: " "$ERR" || fail "the broken ELF is not reported: $(cat "$ERR")"
tail -1 "$OUT" | grep -qxF "summary: 0 indexed, 2 already indexed, 1 failed, 3 skipped (not object files)" ||
	fail "summary with a failure: $(tail -1 "$OUT")"

# /proc/kallsyms: not an object file, said clearly (exit 1, nothing indexed).
if [[ -r /proc/kallsyms ]]; then
	run "$SYMDB" build --db "$SCRATCH/db2" /proc/kallsyms
	expect_error "build /proc/kallsyms" "symdb: /proc/kallsyms: not an object file: the running kernel's symbol list (use 'symdb query --kernel' for kernel addresses)"
	((RC == 1)) || fail "build /proc/kallsyms: exit $RC, expected 1"
	run "$SYMDB" build --db "$SCRATCH/db2" /proc/self/status
	expect_error "build /proc/self/status" "symdb: /proc/self/status: not an object file (a file of /proc)"
else
	skip_part "no /proc/kallsyms here"
fi
note "build -r: 2 indexed, 9 skipped with a note; without -r and /proc/kallsyms: clear errors"
