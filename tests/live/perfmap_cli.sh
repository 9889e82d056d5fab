#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perfmap_cli.sh: `symdb query --perf-map FILE` on bad and changing maps.
# The expected texts are written here from the map lines and perf 6.1's
# reading of them (README "Bad inputs and what you see"), and the output
# shape is llvm-symbolizer-14's for a function without line information
# (checked against it on an ELF symbol below): garbage lines, a size of
# zero, overlapping entries, a huge line, a line still being written, a
# missing map, a directory, options that do not go with --perf-map, and a
# line appended while one query process runs (fed through a pipe).
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
case $SCRATCH in */scratch/*) ;; *) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
fail() { echo "FAIL: $*" >&2; exit 1; }
S=$SCRATCH

# same WHAT EXPECTED-FILE ACTUAL-FILE
same() { diff -u "$2" "$3" >&2 || fail "$1"; }

map=$S/perf-4242.map
{
	printf '7f0000001000 40 JS:*hot /app/x.js:3:10\n'     # 1
	printf 'this is not a perf map line\n'                # 2 skipped
	printf '7f0000002000 0 Builtin:ZeroSize\n'            # 3: answers its start only
	printf '7f0000003000 100 Stub:Outer\n'                # 4: [3000, 3100)
	printf '7f0000003040 10 Stub:InnerLater\n'            # 5: wins [3040, 3050)
	printf '7f0000004000 zz BadSize\n'                    # 6 skipped
	printf '7f0000005000 10 %s\n' "$(head -c 10000 /dev/zero | tr '\0' x)" # 7 too long
	printf '7f0000006000 10 ab\n'                         # 8 skipped: perf needs 3 bytes
	printf '7f0000007000 10 JS:~still being writ'         # no newline: not read
} >"$map"

# LLVM style (the default), every kind of answer.
"$SYMDB" query --perf-map "$map" 0x7f0000001000 0x7f000000103f 0x7f0000001040 \
	0x7f0000002000 0x7f0000002001 0x7f000000303f 0x7f0000003040 0x7f0000003050 \
	0x7f0000005000 0x7f0000007000 nonsense >"$S/out" 2>"$S/err" || fail "exit $?"
cat >"$S/want" <<'EOF'
JS:*hot /app/x.js:3:10
??:0:0

JS:*hot /app/x.js:3:10
??:0:0

??
??:0:0

Builtin:ZeroSize
??:0:0

??
??:0:0

Stub:Outer
??:0:0

Stub:InnerLater
??:0:0

Stub:Outer
??:0:0

??
??:0:0

??
??:0:0

nonsense
EOF
same "LLVM style" "$S/want" "$S/out"
printf 'symdb: %s: 4 malformed lines skipped (first: line 2; 1 too long)\n' "$map" >"$S/want"
same "skipped-lines report" "$S/want" "$S/err"

# GNU style with addresses, and DATA requests (name, then "START SIZE").
"$SYMDB" query --perf-map "$map" --output-style=GNU -a 0x7f0000003045 0x10 \
	>"$S/out" 2>/dev/null || fail "GNU: exit $?"
printf '0x7f0000003045\nStub:InnerLater\n??:0\n0x10\n??\n??:0\n' >"$S/want"
same "GNU style" "$S/want" "$S/out"
"$SYMDB" query --perf-map "$map" 'DATA 0x7f0000003001' 'DATA 0x10' >"$S/out" 2>/dev/null ||
	fail "DATA: exit $?"
printf 'Stub:Outer\n%d 256\n\n??\n0 0\n\n' $((0x7f0000003000)) >"$S/want"
same "DATA requests" "$S/want" "$S/out"

# The shape is llvm-symbolizer-14's for a function without line info: a
# symbol-table-only function of a stripped-of-DWARF object.
if command -v llvm-symbolizer-14 >/dev/null && command -v cc >/dev/null; then
	printf 'int nodebug_fn(int x) { return x * 3; }\nint main(void) { return nodebug_fn(1); }\n' \
		>"$S/nd.c"
	cc -O0 -g0 -o "$S/nd" "$S/nd.c"
	addr=$(llvm-nm-14 "$S/nd" | awk '$3 == "nodebug_fn" { print "0x" $1 }')
	for style in LLVM GNU JSON; do
		llvm-symbolizer-14 --obj "$S/nd" --output-style=$style "$addr" |
			sed "s|\"ModuleName\":\"[^\"]*\"|\"ModuleName\":\"M\"|" >"$S/want"
		printf '%x 10 nodebug_fn\n' "$addr" >"$S/nd.map"
		"$SYMDB" query --perf-map "$S/nd.map" --output-style=$style "$addr" |
			sed "s|\"ModuleName\":\"[^\"]*\"|\"ModuleName\":\"M\"|" >"$S/out"
		same "$style shape vs llvm-symbolizer-14" "$S/want" "$S/out"
	done
else
	echo "SKIP part: no llvm-symbolizer-14 or cc: output shape not compared"
fi

# A missing map: one line on stderr, "??" per address, exit 1; JSON: Error.
set +e
"$SYMDB" query --perf-map "$S/perf-1.map" 0x1 0x2 >"$S/out" 2>"$S/err"
rc=$?
set -e
((rc == 1)) || fail "missing map: exit $rc"
printf '??\n??:0:0\n\n??\n??:0:0\n\n' >"$S/want"
same "missing map, stdout" "$S/want" "$S/out"
printf 'symdb: %s: No such file or directory\n' "$S/perf-1.map" >"$S/want"
same "missing map, stderr" "$S/want" "$S/err"
"$SYMDB" query --perf-map "$S/perf-1.map" --output-style=JSON 0x1 >"$S/out" 2>/dev/null || true
printf '[{"Address":"0x1","Error":{"Message":"%s: No such file or directory"},"ModuleName":"%s"}]\n' \
	"$S/perf-1.map" "$S/perf-1.map" >"$S/want"
same "missing map, JSON" "$S/want" "$S/out"

# A directory; --perf-map with --obj.
set +e
"$SYMDB" query --perf-map "$S" 0x1 >/dev/null 2>"$S/err"
rc=$?
set -e
((rc == 1)) || fail "directory: exit $rc"
printf 'symdb: %s: not a regular file\n' "$S" >"$S/want"
same "directory" "$S/want" "$S/err"
set +e
"$SYMDB" query --perf-map "$map" --obj /bin/true 0x1 >/dev/null 2>"$S/err"
rc=$?
set -e
((rc == 2)) || fail "--perf-map with --obj: exit $rc"
echo 'symdb: query: --perf-map takes no --obj, --uuid, --build-id or --output-style=atos' >"$S/want"
same "--perf-map with --obj" "$S/want" "$S/err"

# A line appended (and the unfinished one completed) while a query runs:
# the next request that misses refreshes the map.
live=$S/perf-4343.map
printf '1000 10 First\n' >"$live"
coproc SQ { "$SYMDB" query --perf-map "$live" 2>"$S/live.err"; }
sq=$SQ_PID
trap 'kill $sq 2>/dev/null || true' EXIT
ask() {
	local name loc blank
	printf '%s\n' "$1" >&"${SQ[1]}"
	IFS= read -r -t 30 name <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 30 loc <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 30 blank <&"${SQ[0]}" || fail "no answer for $1"
	printf '%s\n' "$name"
}
[[ $(ask 0x1000) == First ]] || fail "before append"
[[ $(ask 0x5008) == '??' ]] || fail "0x5008 before it was written"
printf '5000 10 Appen' >>"$live"
[[ $(ask 0x5008) == '??' ]] || fail "0x5008 while its line is unfinished"
printf 'ded\n' >>"$live"
got=$(ask 0x5008)
[[ $got == Appended ]] || fail "0x5008 after append: '$got'"
# Rewritten from the start (a JIT that truncates its map): read whole again.
printf '6000 10 Rewritten\n' >"$live"
got=$(ask 0x6000)
[[ $got == Rewritten ]] || fail "0x6000 after rewrite: '$got'"
[[ $(ask 0x1000) == '??' ]] || fail "0x1000 after rewrite still answers"
exec {SQ[1]}>&-
wait "$sq" || fail "live query exit $?"
[[ ! -s $S/live.err ]] || fail "live query stderr: $(cat "$S/live.err")"
echo PASS
