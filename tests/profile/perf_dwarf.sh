#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perf_dwarf.sh: `symdb perf` on a profile unwound with DWARF (`perf record
# --call-graph dwarf`, what code built without frame pointers needs) and
# printed by `perf script` without --no-inline: perf then resolves inlined
# functions itself and prints an address that has some as one entry per
# function, the inlined ones with "(inlined)" where the DSO goes, and, when
# the outermost function's DWARF name is not its symbol's (glibc's
# __libc_start_main_impl), no entry with the DSO at all.  A C program whose
# hot loop inlines a function calling libm's sin and cos, so that the
# leaves are in the program and in libm.  The oracle is `perf report
# --no-children` on the same perf.data (perf_compare.py: leaf functions by
# weight, >= 99 %); no frame may be named after a module "inlined", and the
# frames with no DSO are counted in one line that names --no-inline.  Then
# the same perf.data printed with --no-inline (README's command): the same
# agreement, and no such line.
# Before, symdb read "(inlined)" as a file named "inlined": frames
# "inlined+0x705ff", one unknown image, and about 60 % of the leaves agreed.
# Label `slow`: it drives perf record.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/aliases.sh"
here=$(cd "$(dirname "$0")" && pwd)
require perf gcc python3 readelf
export HOME=$SCRATCH/home # perf's build-id cache: this test's own
mkdir -p "$HOME"
cat >"$SCRATCH/p.c" <<'C'
#include <math.h>
#include <stdio.h>
static volatile double sink;
static inline double inner(double x)
{
	double s = 0;
	for (int i = 0; i < 200; i++)
		s += sin(x + i) * cos(x - i);
	return s;
}
__attribute__((noinline)) double mid(double x) { return inner(x) + inner(x * 2); }
int main(void)
{
	for (long k = 0; k < 30000; k++)
		sink += mid(k * 0.001);
	printf("%f\n", sink);
	return 0;
}
C
# -fno-plt: no samples in PLT stubs, which perf 6.1 names "_init" when they
# are in .plt.sec (a naming difference of its own, not under test here)
gcc -O2 -g -fno-plt -o "$SCRATCH/p" "$SCRATCH/p.c" -lm || fail "gcc"
data=$SCRATCH/perf.data
if ! perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o "$data" "$SCRATCH/p" \
	>"$SCRATCH/record.log" 2>&1; then
	echo "SKIP: perf record --call-graph dwarf does not work here: $(tail -1 "$SCRATCH/record.log")"
	exit 77
fi
perf report -i "$data" --no-children --stdio -n --sort sym -g none >"$SCRATCH/report.txt" \
	2>"$SCRATCH/report.err" || fail "perf report: $(tail -1 "$SCRATCH/report.err")"
perf buildid-list -i "$data" >"$SCRATCH/buildids.txt" 2>/dev/null || true
# Aliases (symbols at one address) of the profiled images.
profile_aliases "$SCRATCH/buildids.txt" "$SCRATCH/aliases.txt"

fields=comm,pid,tid,time,period,event,ip,dso
for mode in inline no-inline; do
	opt=()
	[[ $mode == no-inline ]] && opt=(--no-inline)
	perf script "${opt[@]}" -F $fields --show-mmap-events -i "$data" >"$SCRATCH/$mode.txt" \
		2>"$SCRATCH/script.err" || fail "perf script ${opt[*]}: $(tail -1 "$SCRATCH/script.err")"
	inl=$(grep -c '(inlined)$' "$SCRATCH/$mode.txt" || true)
	run "$SYMDB" perf "$SCRATCH/$mode.txt" -o "$SCRATCH/$mode.folded"
	((RC == 0)) || fail "symdb perf ($mode): exit $RC: $(cat "$ERR")"
	note "$mode: $inl '(inlined)' entries; $(tail -1 "$ERR")"
	if grep -q 'inlined+0x' "$SCRATCH/$mode.folded"; then
		fail "$mode: frames named after a module 'inlined': $(grep -o '[^;]*inlined+0x[0-9a-f]*' "$SCRATCH/$mode.folded" | sort -u | head -3)"
	fi
	grep -q 'unknown images*: inlined' "$ERR" && fail "$mode: 'inlined' counted as an image: $(tail -1 "$ERR")"
	if [[ $mode == inline ]]; then
		((inl > 0)) || { echo "SKIP: this perf printed no '(inlined)' entries"; exit 77; }
		if grep -q "only as '(inlined)'" "$ERR"; then
			grep -q "run perf script with --no-inline" "$ERR" || fail "the '(inlined)' line names no remedy"
		fi
	else
		grep -q "(inlined)" "$ERR" && fail "--no-inline: a line about '(inlined)' entries: $(cat "$ERR")"
	fi
	python3 "$here/perf_compare.py" --aliases "$SCRATCH/aliases.txt" "$SCRATCH/$mode.folded" \
		"$SCRATCH/report.txt" 99 || fail "$mode: symdb perf's leaf functions disagree with perf report's"
done
