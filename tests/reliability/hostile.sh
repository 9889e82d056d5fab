#!/bin/bash
# SPDX-License-Identifier: MIT
#
# hostile.sh: hostile inputs through `symdb build` (the CLI, isolated in the
# cage by default, SPEC §12.5).  Every case runs against a database that
# already holds real images and asserts, besides its own outcome:
#   - the parent survived (exit status below 128, no sanitizer report);
#   - a failure is exactly one stderr line naming the file;
#   - the database is unchanged: `symdb list` and the sha256 of every
#     pre-existing index file are identical, and DB/tmp is empty.
# Inputs are generated here (hostile_gen.py writes the DWARF by hand), never
# checked in.  Crash hooks: the test build of the indexer, run with
# `--test-hook segv|abort|hang|oom` through a wrapper given as
# SYMDB_INDEXER (indexer_hook in lib.sh), fails right after it wrote a temp
# file (README "Tests").
source "$(dirname "$0")/../cli/lib.sh"

GEN=$(dirname "$0")/hostile_gen.py
W=$SCRATCH/w
mkdir -p "$W"
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
BASE=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/lib_gcc_O2.so" "$BIN/nostd_aarch64.symtab")
ASAN=0
[[ $(ldd "$SYMDB" 2>/dev/null) == *libasan* ]] && ASAN=1 # (not ldd | grep -q: see query_rss.sh)

run "${S[@]}" build -q "${BASE[@]}"
expect_ok "base build"

# snapshot: the state of DB; unchanged: compare with it
snapshot() { db_state "$DB" >"$SCRATCH/before"; }
unchanged() {
	db_state "$DB" >"$SCRATCH/after"
	diff "$SCRATCH/before" "$SCRATCH/after" >&2 || fail "$1: the database changed"
	[[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "$1: temp files left in DB/tmp"
}
# grew: every pre-existing line (entry and file hash) still there, DB/tmp empty
grew() {
	db_state "$DB" >"$SCRATCH/after"
	local missing
	missing=$(comm -23 <(sort "$SCRATCH/before") <(sort "$SCRATCH/after"))
	[[ -z $missing ]] || fail "$1: pre-existing state changed: $missing"
	[[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "$1: temp files left in DB/tmp"
}
cc_asm() { cc -nostdlib -static -Wl,--build-id -o "$2" "$1"; }
# info_flags FILE: the header Flags (SPEC §5.1) of FILE's index, by name
info_flags() { "${S[@]}" info "$1" | sed -n 's/^flags  *//p'; }
fn_addr() { echo "0x$(llvm-nm-14 "$1" | awk -v n="$2" '$3 == n {print $1}')"; }

# --- 1. DW_AT_abstract_origin pointing at its own DIE, and a 2-cycle -----------
for k in self cycle; do
	python3 "$GEN" "dwarf-$k" "$W/$k.s"
	cc_asm "$W/$k.s" "$W/$k"
	snapshot
	run "${S[@]}" build "$W/$k"
	expect_ok "origin $k"
	grew "origin $k"
	# A partial index: the origin loop is cut (MAX_HOPS, SPEC §13); what
	# resolves answers like the oracle.
	a=$(fn_addr "$W/$k" f)
	diff <(timeout 20 llvm-symbolizer-14 --obj "$W/$k" "$a") \
		<("${S[@]}" query --obj "$W/$k" "$a") >&2 ||
		fail "origin $k: query differs from llvm-symbolizer-14"
	note "origin $k: indexed, resolves like llvm-symbolizer-14"
done

# --- 2. a DIE tree nested 100 000 deep -----------------------------------------
python3 "$GEN" dwarf-deep "$W/deep.s" 100000
cc_asm "$W/deep.s" "$W/deep"
snapshot
run "${S[@]}" build "$W/deep"
no_crash "deep DIE tree"
if ((RC == 0)); then
	grew "deep DIE tree"
	# The unit is skipped past MAX_DEPTH (Flags PARTIAL); the symbol table
	# still answers.  llvm-symbolizer-14 itself overflows its stack here, so
	# the oracle is the symbol table: llvm-nm's _start at that address.
	[[ $(info_flags "$W/deep") == *PARTIAL* ]] || fail "deep DIE tree: index not marked PARTIAL"
	run "${S[@]}" query --obj "$W/deep" "$(fn_addr "$W/deep" f)"
	expect_ok "deep DIE tree: query"
	[[ $(head -1 "$OUT") == _start ]] || fail "deep DIE tree: expected _start, got $(head -1 "$OUT")"
	note "deep DIE tree: partial index (unit skipped), symbol table resolves"
else
	expect_error "deep DIE tree" "$W/deep"
	unchanged "deep DIE tree"
fi

# --- 3. SHF_COMPRESSED .debug_info declaring ch_size 2^40 -----------------------
printf 'int g(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return g(c); }\n' >"$W/p.c"
cc -g -O1 -Wl,--build-id -o "$W/p" "$W/p.c"
objcopy --compress-debug-sections=zlib-gabi "$W/p" "$W/bomb"
python3 "$GEN" chsize "$W/bomb"
snapshot
run "${S[@]}" build "$W/bomb"
expect_error "ch_size 2^40" "$W/bomb: section .debug_info: compressed section declares 1099511627776 bytes"
unchanged "ch_size 2^40"

# --- 4. a 40-byte universal Mach-O header declaring 0xFFFFFFFF slices -----------
python3 "$GEN" fat-ffff "$W/fat"
[[ $(stat -c %s "$W/fat") == 40 ]] || fail "fat: not 40 bytes"
snapshot
run "${S[@]}" build "$W/fat"
expect_error "fat 0xFFFFFFFF" "$W/fat: universal header declares 4294967295 slices"
unchanged "fat 0xFFFFFFFF"

# --- 5. .gnu_debuglink naming ../../etc/passwd is never followed ----------------
# A decoy - the binary's real debug file, with the CRC the link asks for -
# sits where the name resolves from the binary's directory; following it would
# add DWARF and print "(debug file ...)".  The control case, a plain name,
# is followed (so the test can fail).
mkdir -p "$W/dl/x/y" "$W/dl/etc"
objcopy --only-keep-debug "$W/p" "$W/dl/etc/passwd"
strip --strip-debug -o "$W/dl/x/y/b" "$W/p"
python3 "$GEN" debuglink "$W/dl/sec" ../../etc/passwd "$W/dl/etc/passwd"
objcopy --add-section .gnu_debuglink="$W/dl/sec" "$W/dl/x/y/b"
snapshot
if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace: no leak check for this one run.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		run strace -f -qq -e trace=open,openat -o "$W/dl/trace" "${S[@]}" build "$W/dl/x/y/b"
	if grep -n 'passwd' "$W/dl/trace" >&2; then fail "debuglink: ../../etc/passwd was opened"; fi
	note "debuglink: strace -f shows no open of any *passwd path"
else
	skip_part "debuglink: strace not found, the opened paths are not checked"
	run "${S[@]}" build "$W/dl/x/y/b"
fi
expect_ok "debuglink ../../etc/passwd"
grep -q 'debug file' "$OUT" && fail "debuglink: a debug file was used: $(cat "$OUT")"
grew "debuglink ../../etc/passwd"
[[ $(info_flags "$W/dl/x/y/b") == *HAS_DWARF* ]] && fail "debuglink: the index has DWARF (HAS_DWARF)"
# control: the same link with a plain name beside the binary is followed
cp "$W/dl/etc/passwd" "$W/dl/x/y/c.debug"
strip --strip-debug -o "$W/dl/x/y/c" "$W/p"
python3 "$GEN" debuglink "$W/dl/sec2" c.debug "$W/dl/x/y/c.debug"
objcopy --add-section .gnu_debuglink="$W/dl/sec2" "$W/dl/x/y/c"
run "$SYMDB" --db "$SCRATCH/db-control" build "$W/dl/x/y/c"
expect_ok "debuglink control"
grep -q "(debug file $W/dl/x/y/c.debug)" "$OUT" || fail "debuglink control: plain name not followed"

# --- 6. the same build-id with different contents (SPEC §12.5) ------------------
ID=0x5a5a5a5a00112233445566778899aabbccddeeff
printf 'int one(void) { return 1; }\nint main(void) { return one(); }\n' >"$W/v1.c"
printf 'int two(void) { return 2; }\nint three(void) { return 3; }\nint main(void) { return two() + three(); }\n' >"$W/v2.c"
cc -O1 -Wl,--build-id=$ID -o "$W/v1" "$W/v1.c"
cc -O1 -Wl,--build-id=$ID -o "$W/v2" "$W/v2.c"
run "${S[@]}" build "$W/v1"
expect_ok "build-id: first"
run "${S[@]}" build "$W/v1"
expect_ok "build-id: same input again"
grep -q '^skipped ' "$OUT" || fail "build-id: the same input is not skipped"
snapshot
run "${S[@]}" build "$W/v2"
size=$(stat -c %s "$W/v1")
expect_error "build-id: different contents" \
	"$W/v2: build-id ${ID#0x} is already indexed from different contents ($size bytes, xxh3 "
grep -q '; kept the existing index (use --force to replace)$' "$ERR" || fail "build-id: message tail"
((RC == 1)) || fail "build-id: conflict exit $RC, expected 1"
unchanged "build-id conflict"
a=$(fn_addr "$W/v1" one)
[[ $("${S[@]}" query --obj "$W/v1" "$a" | head -1) == one ]] || fail "build-id: v1 no longer resolves"
run "${S[@]}" build --force "$W/v2"
expect_ok "build-id: --force"
[[ $("${S[@]}" query --obj "$W/v2" "$(fn_addr "$W/v2" three)" | head -1) == three ]] ||
	fail "build-id: --force did not replace"
note "build-id: same input skipped, different contents refused (exit 1), --force replaces"

# A stripped binary and its own .debug file (the Debian layout) are one
# image, in either order, and never a conflict.
cc -g -O1 -Wl,--build-id=0x5b5b5b5b00112233445566778899aabbccddeeff -o "$W/d.full" "$W/p.c"
mkdir -p "$W/deb"
objcopy --only-keep-debug "$W/d.full" "$W/deb/d.debug"
strip --strip-debug -o "$W/d" "$W/d.full"
run "$SYMDB" --db "$SCRATCH/deb1" build "$W/d"
expect_ok "debian: stripped first"
run "$SYMDB" --db "$SCRATCH/deb1" build "$W/deb/d.debug"
expect_ok "debian: then its .debug"
grep -q 'replaced an index without DWARF' "$OUT" || fail "debian: .debug did not replace: $(cat "$OUT")"
run "$SYMDB" --db "$SCRATCH/deb1" build "$W/d"
expect_ok "debian: stripped again"
grep -q '^skipped ' "$OUT" || fail "debian: stripped binary after .debug not skipped"
run "$SYMDB" --db "$SCRATCH/deb2" build "$W/deb/d.debug" "$W/d"
expect_ok "debian: .debug first, then stripped"
[[ $(grep -c '^indexed ' "$OUT") == 1 && $(grep -c '^skipped ' "$OUT") == 1 ]] ||
	fail "debian: expected one indexed and one skipped: $(cat "$OUT")"
mkdir -p "$W/deb/.build-id/5b"
ln -sf ../../d.debug "$W/deb/.build-id/5b/5b5b5b00112233445566778899aabbccddeeff.debug"
run "$SYMDB" --db "$SCRATCH/deb4" build --debug-dir "$W/deb" "$W/d" "$W/deb/d.debug"
expect_ok "debian: stripped with its .debug found, then the .debug"
grep -q "(debug file $W/deb/.build-id" "$OUT" || fail "debian: debug file not found by build-id"
[[ $(grep -c '^skipped ' "$OUT") == 1 ]] || fail "debian: the .debug after its binary is not skipped"
note "debian: stripped binary and its .debug file are one image in either order"
# A `strip` copy (.dynsym only) and a `strip -g` copy (.symtab): the fuller
# one wins in either order, without an error.
run "$SYMDB" --db "$SCRATCH/st1" build "$BIN/c_gcc_O2_pie.dynsym" "$BIN/c_gcc_O2_pie.symtab"
expect_ok "strip then strip -g"
grep -q 'c_gcc_O2_pie.symtab (replaced an index made from .dynsym only)$' "$OUT" ||
	fail "strip -g copy did not replace the strip copy: $(cat "$OUT")"
run "$SYMDB" --db "$SCRATCH/st2" build "$BIN/c_gcc_O2_pie.symtab" "$BIN/c_gcc_O2_pie.dynsym"
expect_ok "strip -g then strip"
grep -q '^skipped .*c_gcc_O2_pie.dynsym (already indexed)$' "$OUT" ||
	fail "strip copy after the strip -g copy not skipped: $(cat "$OUT")"
a=$(fn_addr "$BIN/c_gcc_O2_pie.symtab" main)
diff <(llvm_query "$BIN/c_gcc_O2_pie.symtab" "$a") \
	<("$SYMDB" --db "$SCRATCH/st1" query --obj "$BIN/c_gcc_O2_pie.symtab" "$a") >&2 ||
	fail "strip -g copy: query differs from llvm-symbolizer-14"
note "strip / strip -g copies: the .symtab one is kept in either order"

# --- 7. the cage child crashes, aborts, hangs, runs out of memory ----------------
snapshot
SYMDB_INDEXER=$(indexer_hook segv) run "${S[@]}" build --force "$W/v1"
expect_error "child SIGSEGV" "$W/v1: indexer crashed: signal 11 (Segmentation fault)"
((RC == 1)) || fail "child SIGSEGV: exit $RC"
unchanged "child SIGSEGV"
SYMDB_INDEXER=$(indexer_hook abort) run "${S[@]}" build --force "$W/v1"
expect_error "child abort" "$W/v1: indexer aborted (libdwarf abort): signal 6 (Aborted)"
unchanged "child abort"
t0=$(date +%s)
SYMDB_INDEXER=$(indexer_hook hang) run "${S[@]}" build --force --timeout 2 "$W/v1"
expect_error "child hang" "$W/v1: indexer timed out after 2 s"
(($(date +%s) - t0 < 20)) || fail "child hang: the timeout took too long"
unchanged "child hang"
if ((ASAN)); then
	note "child out of memory: skipped under AddressSanitizer (no RLIMIT_AS)"
else
	SYMDB_INDEXER=$(indexer_hook oom) run "${S[@]}" build --force --memory-limit 1G "$W/v1"
	expect_error "child oom" "$W/v1: indexer ran out of memory (address-space limit 1 GiB)"
	unchanged "child oom"
fi
# -j: every worker starts its own indexer; each failure is its own line
SYMDB_INDEXER=$(indexer_hook segv) run "${S[@]}" build --force -j 3 "${BASE[@]}"
no_crash "-j 3 crashes"
[[ $(grep -c 'indexer crashed: signal 11' "$ERR") == 3 ]] || fail "-j 3: $(cat "$ERR")"
unchanged "-j 3 crashes"
# An indexer names its builder on its command line (--parent PID, SPEC §12.5).
pgrep -f -- "--db $DB build" >/dev/null && fail "a builder survived"
for b in "${BASE[@]}"; do
	pgrep -f -- "symdb-indexer .*--input [0-9]+:$b( |\$)" >/dev/null && fail "a cage child survived"
done
note "cage: segv, abort, hang and oom each one line, exit 1, database unchanged"

# --- 8. isolated and in-process builds write byte-identical files ----------------
ALL=("${BASE[@]}" "$W/deep" "$W/self" "$W/p" "$FIXTURES/full/cpp_g++_O2_pie")
# Mach-O too (a universal file and a .dSYM bundle, from macho.fixtures, which
# CTest runs first).  No two inputs share an image: with -j 4 the first to
# finish would name it (Image_Name), which is not what is compared.
MO=${SYMDB_BUILD:-/nonexistent}/tests/scratch/macho
for m in "$MO/fixtures/libmo_fat.dylib" "$MO/fixtures/app_x86_64.dSYM"; do
	if [[ -e $m ]]; then ALL+=("$m"); else skip_part "isolated vs in-process: no $m"; fi
done
run "$SYMDB" --db "$SCRATCH/iso" build -j 4 "${ALL[@]}"
expect_ok "isolated build"
run "$SYMDB" --db "$SCRATCH/noiso" build --no-isolate "${ALL[@]}"
expect_ok "in-process build"
(cd "$SCRATCH/iso" && find images -type f | sort | xargs sha256sum) >"$SCRATCH/h1"
(cd "$SCRATCH/noiso" && find images -type f | sort | xargs sha256sum) >"$SCRATCH/h2"
diff "$SCRATCH/h1" "$SCRATCH/h2" >&2 || fail "isolated and in-process index files differ"
note "isolated and --no-isolate: $(wc -l <"$SCRATCH/h1") byte-identical index files"

# --- 9. bad option values -------------------------------------------------------
for bad in "--timeout 0" "--timeout abc" "--timeout 86401" "--memory-limit 1K" \
	"--memory-limit 2X" "--memory-limit -5" "--memory-limit" "--timeout"; do
	# shellcheck disable=SC2086
	run "${S[@]}" build $bad "$W/v1"
	expect_error "build $bad" "build: invalid" "requires a value" "build:"
	((RC == 2)) || fail "build $bad: exit $RC, expected 2"
done
note "bad --timeout / --memory-limit values: exit 2"

# --- 10. symdb gc removes what a killed builder's cage child left ---------------
touch "$DB/tmp/00112233445566778899aabbccddeeff.cage-99999.Ab12Cd"
SYMDB_NOW=$(($(date +%s) + 7200)) run "${S[@]}" gc
expect_ok "gc of a cage leftover"
[[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "gc left a cage temp file"
note "gc removes a stale DB/tmp/UUID.cage-PID.XXXXXX"
