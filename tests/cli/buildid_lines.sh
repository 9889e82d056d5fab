#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# buildid_lines.sh: modules named "BUILDID:HEX" and "FILE:PATH" on request
# lines (llvm-symbolizer 15 and later; cli_query_input.c parse_module,
# cli_query_open.c open_build_id).  The oracle is llvm-symbolizer-16 on the
# same input, the images found under --debug-file-directory DIR as
# DIR/.build-id/XX/REST.debug:
#   1. build-ids in lower and upper case, after CODE, with a space or in
#      quotes after the prefix, FILE: paths, and the invalid forms (a
#      repeated or doubled prefix, a build-id that is not hex, odd-length,
#      unknown or missing, no address) mixed with plain path lines: stdout
#      and stderr equal llvm-symbolizer-16's, LLVM, GNU and JSON styles, on
#      an empty database (the images are indexed on first sight); names
#      mangled (LLVM 16's demangler prints "<a<b>>" where 14's has "> >");
#   2. CODE and DATA lines by build-id answer as llvm-symbolizer-14 does on
#      the same lines by path (LLVM 16 prints DATA answers differently);
#   3. the images are then in the database: --no-build without the debug
#      directory answers the same;
#   4. a file at a build-id's path that carries another build-id, and a
#      FIFO there, are not used: "could not find build ID", at once;
#   5. a file that is not an object and a directory at build-id paths: their
#      errors, once, as llvm-symbolizer-16's (LLVM and JSON styles);
#   6. --build-id HEX (LLVM 15's option): addresses on stdin and as
#      arguments, with invalid lines, and an unknown build-id (said at each
#      request) answer as llvm-symbolizer-16 (stdout, stderr, exit code);
#      its bad values and --build-id with --obj are llvm's errors under the
#      llvm-symbolizer name, symdb's usage errors under `symdb query`.
source "$(dirname "$0")/lib.sh"
require llvm-symbolizer-16 llvm-symbolizer-14 llvm-nm-14 readelf timeout

db=$SCRATCH/db
dbg=$SCRATCH/dbg
cpp=$BIN/cpp_g++_O2_rdyn.full
c=$BIN/c_gcc_O2_nopie.full
build_id() { readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }
ids=()
for f in "$cpp" "$c"; do
	id=$(build_id "$f")
	[[ $id =~ ^[0-9a-f]{40}$ ]] || fail "$f: no GNU build-id ($id)"
	mkdir -p "$dbg/.build-id/${id:0:2}"
	cp "$f" "$dbg/.build-id/${id:0:2}/${id:2}.debug"
	ids+=("$id")
done

python3 - "$SCRATCH" "$cpp" "${ids[0]}" "$c" "${ids[1]}" <<'PY'
import subprocess, sys
out, images = sys.argv[1], [(sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5])]
def funcs(path):
    nm = subprocess.check_output(["llvm-nm-14", "--defined-only", "--print-size", path]).decode()
    f = []
    for l in nm.splitlines():
        w = l.split()
        if len(w) == 4 and w[2] in "tT" and int(w[1], 16) > 2:
            f.append((int(w[0], 16), int(w[1], 16)))
    return sorted(set(f))[:40]
v16, by_id, by_path = [], [], []
for k, (path, bid) in enumerate(images):
    with open(f"{out}/opt{k}.txt", "wb") as f:
        f.write(b"".join(b"0x%x\n" % (s + 1) for s, _ in funcs(path)) +
                b"garbage\n\n0x10 more\nCODE 0x%x\n" % funcs(path)[0][0])
    P, B = path.encode(), bid.encode()
    for start, size in funcs(path):
        for a in (start + 1, start + size // 2):
            A = b"0x%x" % a
            v16 += [b"BUILDID:" + B + b" " + A, b"CODE BUILDID:" + B.upper() + b" " + A,
                    b"BUILDID: " + B + b" " + A, b"BUILDID:'" + B + b"' " + A,
                    b"FILE:" + P + b" " + A, P + b" " + A]
            for kind in (b"CODE ", b"DATA "):
                by_id.append(kind + b"BUILDID:" + B + b" " + A)
                by_path.append(kind + P + b" " + A)
    A = b"0x%x" % funcs(path)[0][0]
    v16 += [b"BUILDID:zz " + A, b"BUILDID: " + A, b"BUILDID:abc " + A, b"BUILDID:" + B,
            b"BUILDID:" + B + b" ", b"FILE:BUILDID:" + B + b" " + A,
            b"BUILDID:BUILDID:" + B + b" " + A, b"FILE:FILE:" + P + b" " + A,
            b'"BUILDID:' + B + b'" ' + A, b"FILE: " + A, b"BUILDID:" + B + b"00 " + A,
            b"BUILDID:" + B[:10] + b" " + A, b"buildid:" + B + b" " + A,
            b"BUILDID:" + B[:8] + b"-" + B[8:] + b" " + A, b"BUILDID:" + B + b" " + A + b" more",
            b"BUILDID:" + b"ab" * 40 + b" " + A, b"BUILDID:\"" + B + b" " + A,
            b" BUILDID:" + B + b" " + A, b"CODE  BUILDID:" + B + b" " + A, b" FILE:" + P + b" " + A]
for name, lines in (("in16", v16), ("by_id", by_id), ("by_path", by_path)):
    with open(f"{out}/{name}.txt", "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
PY

note "1. against llvm-symbolizer-16: $(wc -l <"$SCRATCH/in16.txt") lines, indexed on first sight"
for style in LLVM GNU JSON; do
	llvm-symbolizer-16 --output-style=$style --no-demangle --debug-file-directory "$dbg" \
		<"$SCRATCH/in16.txt" >"$SCRATCH/want.$style" 2>"$SCRATCH/want.$style.err" ||
		fail "llvm-symbolizer-16 failed"
	run_in "$SCRATCH/in16.txt" "$SYMDB" query --db "$db" --output-style=$style --no-demangle \
		--debug-file-directory "$dbg"
	expect_ok "BUILDID lines ($style)"
	cmp -s "$OUT" "$SCRATCH/want.$style" ||
		fail "$style: output differs from llvm-symbolizer-16: $(diff "$SCRATCH/want.$style" "$OUT" | head -5)"
	cmp -s "$ERR" "$SCRATCH/want.$style.err" ||
		fail "$style: stderr differs from llvm-symbolizer-16: $(diff "$SCRATCH/want.$style.err" "$ERR" | head -5)"
done
grep -q "could not find build ID" "$SCRATCH/want.LLVM.err" || fail "the oracle found every build-id: the input is not what it should be"
(($(grep -cE '^/.*:[1-9][0-9]*:[0-9]+$' "$SCRATCH/want.LLVM") > 200)) || fail "the oracle answered too few lines with a source line"

note "2. CODE and DATA by build-id equal llvm-symbolizer-14 by path"
for style in LLVM GNU; do
	llvm-symbolizer-14 --output-style=$style <"$SCRATCH/by_path.txt" >"$SCRATCH/want14" 2>/dev/null
	run_in "$SCRATCH/by_id.txt" "$SYMDB" query --db "$db" --output-style=$style --debug-file-directory "$dbg"
	expect_ok "by build-id ($style)"
	cmp -s "$OUT" "$SCRATCH/want14" || fail "$style: differs from llvm-symbolizer-14 by path: $(diff "$SCRATCH/want14" "$OUT" | head -5)"
	[[ ! -s $ERR ]] || fail "$style: stderr: $(cat "$ERR")"
done

note "3. indexed on first sight: the database answers without the debug directory"
run "$SYMDB" list --db "$db"
for id in "${ids[@]}"; do grep -q "^$id " "$OUT" || fail "$id is not in the database"; done
run_in "$SCRATCH/by_id.txt" "$SYMDB" query --db "$db" --no-build --debug-file-directory "$SCRATCH/none"
expect_ok "from the database"
llvm-symbolizer-14 <"$SCRATCH/by_path.txt" >"$SCRATCH/want14" 2>/dev/null
cmp -s "$OUT" "$SCRATCH/want14" || fail "from the database: differs from llvm-symbolizer-14"

note "4. a file with another build-id and a FIFO at build-id paths are not used"
other=$(build_id "$BIN/c_gcc_O0_pie.symtab")
[[ -n $other && $other != "${ids[1]}" ]] || fail "no second build-id"
mkdir -p "$SCRATCH/bad/.build-id/${other:0:2}" "$SCRATCH/bad/.build-id/${ids[0]:0:2}"
cp "$c" "$SCRATCH/bad/.build-id/${other:0:2}/${other:2}.debug" # carries ids[1]
fifo_id=${ids[0]:0:38}ff
mkfifo "$SCRATCH/bad/.build-id/${fifo_id:0:2}/${fifo_id:2}.debug"
a=$(llvm-nm-14 --defined-only "$c" | awk '$3 == "main" { print "0x" $1 }')
printf 'BUILDID:%s %s\nBUILDID:%s %s\n' "$other" "$a" "$fifo_id" "$a" >"$SCRATCH/bad.txt"
set +e
timeout 20 "$SYMDB" query --db "$SCRATCH/db-bad" --debug-file-directory "$SCRATCH/bad" \
	<"$SCRATCH/bad.txt" >"$OUT" 2>"$ERR"
RC=$?
set -e
expect_ok "wrong build-id and FIFO"
[[ $(grep -c '^??$' "$OUT") == 2 ]] || fail "a candidate of another build-id or a FIFO answered: $(cat "$OUT")"
for id in "$other" "$fifo_id"; do
	grep -qx "LLVMSymbolizer: error reading file: could not find build ID '${id^^}'" "$ERR" ||
		fail "no 'could not find build ID' for $id: $(cat "$ERR")"
done

note "5. a file that is not an object and a directory at build-id paths: as llvm-symbolizer-16"
mkdir -p "$SCRATCH/junk/.build-id/ab" "$SCRATCH/junk/.build-id/cd/ef.debug"
echo junk >"$SCRATCH/junk/.build-id/ab/ce.debug"
printf 'BUILDID:abce %s\nBUILDID:abce %s\nBUILDID:cdef %s\nFRAME BUILDID:cdef %s\n' "$a" "$a" "$a" "$a" \
	>"$SCRATCH/junk.txt"
for style in LLVM JSON; do
	llvm-symbolizer-16 --output-style=$style --debug-file-directory "$SCRATCH/junk" \
		<"$SCRATCH/junk.txt" >"$SCRATCH/want.junk" 2>"$SCRATCH/want.junk.err"
	run_in "$SCRATCH/junk.txt" "$SYMDB" query --db "$SCRATCH/db-junk" --output-style=$style \
		--debug-file-directory "$SCRATCH/junk"
	no_crash "junk candidates ($style)"
	cmp -s "$OUT" "$SCRATCH/want.junk" || fail "junk $style: output differs: $(diff "$SCRATCH/want.junk" "$OUT")"
	cmp -s "$ERR" "$SCRATCH/want.junk.err" || fail "junk $style: stderr differs: $(diff "$SCRATCH/want.junk.err" "$ERR")"
	grep -q "not recognized" "$SCRATCH/want.junk"* || fail "the oracle did not read the junk file ($style)"
done

note "6. --build-id HEX: as llvm-symbolizer-16"
expect_usage() { # WHAT: exit 2, one stderr line naming --build-id
	expect_error "$1" "build-id"
	((RC == 2)) || fail "$1: exit $RC, expected 2 (usage)"
}
mkdir -p "$SCRATCH/pers"
ln -sf "$SYMDB" "$SCRATCH/pers/llvm-symbolizer"
for k in 0 1; do
	id=${ids[$k]}
	for style in LLVM GNU JSON; do
		for bid in "$id" "${id^^}" "abc"; do
			for how in stdin args; do
				db6=$SCRATCH/db-opt-$k-$style-$how
				if [[ $how == stdin ]]; then
					set +e
					llvm-symbolizer-16 --output-style=$style --no-demangle --debug-file-directory "$dbg" \
						--build-id="$bid" <"$SCRATCH/opt$k.txt" >"$SCRATCH/want.opt" 2>"$SCRATCH/want.opt.err"
					wrc=$?
					set -e
					run_in "$SCRATCH/opt$k.txt" "$SYMDB" query --db "$db6" --output-style=$style \
						--no-demangle --debug-file-directory "$dbg" --build-id="$bid"
				else
					mapfile -t av < <(grep '^0x' "$SCRATCH/opt$k.txt" | head -5)
					set +e
					llvm-symbolizer-16 --output-style=$style --no-demangle --debug-file-directory "$dbg" \
						--build-id "$bid" "${av[@]}" >"$SCRATCH/want.opt" 2>"$SCRATCH/want.opt.err"
					wrc=$?
					set -e
					run "$SYMDB" query --db "$db6" --output-style=$style --no-demangle \
						--debug-file-directory "$dbg" --build-id "$bid" "${av[@]}"
				fi
				[[ $RC == "$wrc" ]] || fail "--build-id $bid ($style, $how): exit $RC, llvm-symbolizer-16 $wrc"
				cmp -s "$OUT" "$SCRATCH/want.opt" ||
					fail "--build-id $bid ($style, $how): output differs: $(diff "$SCRATCH/want.opt" "$OUT" | head -5)"
				cmp -s "$ERR" "$SCRATCH/want.opt.err" ||
					fail "--build-id $bid ($style, $how): stderr differs: $(diff "$SCRATCH/want.opt.err" "$ERR" | head -5)"
			done
		done
	done
done
grep -q "could not find build ID '0ABC'" "$SCRATCH/want.opt" || fail "the oracle found build-id abc"
llvm-symbolizer-16 --debug-file-directory "$dbg" --build-id "${ids[1]}" <"$SCRATCH/opt1.txt" \
	>"$SCRATCH/want.lines"
grep -qE '^/.*:[1-9][0-9]*:[0-9]+$' "$SCRATCH/want.lines" || fail "the oracle answered no line by --build-id"
# a build-id longer than any message buffer: said whole, at each request
long=$(printf 'ab%.0s' {1..1500})
for style in LLVM JSON; do
	llvm-symbolizer-16 --output-style=$style --build-id "$long" 0x10 0x20 >"$SCRATCH/want.long" \
		2>"$SCRATCH/want.long.err"
	run "$SCRATCH/pers/llvm-symbolizer" --db "$SCRATCH/db-long" --output-style=$style \
		--build-id "$long" 0x10 0x20
	cmp -s "$OUT" "$SCRATCH/want.long" && cmp -s "$ERR" "$SCRATCH/want.long.err" ||
		fail "a 3000-digit --build-id ($style): differs from llvm-symbolizer-16"
done
grep -q "${long^^}'" "$SCRATCH/want.long" || fail "the oracle cut the long build-id"
for bad in "--build-id=xyz" "--build-id=" "--build-id=ab --obj=$c" "--build-id=ab -e $c" "--build-id=0x12" \
	"--build-id=xyz --obj=$c"; do
	# shellcheck disable=SC2086 # each case is a list of words
	set +e
	llvm-symbolizer-16 $bad 0x10 >"$SCRATCH/want.bad" 2>"$SCRATCH/want.bad.err"
	wrc=$?
	set -e
	# shellcheck disable=SC2086
	run "$SCRATCH/pers/llvm-symbolizer" --db "$SCRATCH/db-bad" $bad 0x10
	[[ $RC == "$wrc" && $wrc != 0 ]] || fail "$bad: exit $RC, llvm-symbolizer-16 $wrc"
	cmp -s "$OUT" "$SCRATCH/want.bad" && cmp -s "$ERR" "$SCRATCH/want.bad.err" ||
		fail "$bad: differs from llvm-symbolizer-16: $(cat "$ERR") vs $(cat "$SCRATCH/want.bad.err")"
	# shellcheck disable=SC2086
	run "$SYMDB" query --db "$SCRATCH/db-bad" $bad 0x10
	expect_usage "$bad (symdb query)"
done
run "$SYMDB" query --db "$SCRATCH/db-bad" --build-id ab --uuid ab 0x10
expect_usage "--build-id with --uuid"
run "$SYMDB" query --db "$SCRATCH/db-bad" --build-id ab --pid $$ 0x10
expect_usage "--build-id with --pid"
