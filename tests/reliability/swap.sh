#!/bin/bash
# SPDX-License-Identifier: MIT
#
# swap.sh: a file renamed over the input path while `symdb build` runs must
# never publish a wrong index (SPEC §12.5: every input is opened once and
# everything - UUID, content hash, the indexer's parse - reads that one
# descriptor).  Two different `gcc -g` programs are renamed over one path
# back to back by a writer loop (hard links + rename(2), no pause) while
# `symdb build --force` runs BUILDS times (default 300).  After each build
# the index it published is checked against llvm-symbolizer-14 run on the
# program whose build-id it carries: a handful of addresses in each function,
# symbol and file:line.  Before the fix, most builds published one program's
# symbols or lines under the other's build-id.
source "$(dirname "$0")/../cli/lib.sh"
require gcc

BUILDS=${SWAP_BUILDS:-300}
W=$SCRATCH/w
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
mkdir -p "$W"

# Two programs with the same shape and different names, code and lines, so
# that an index of the wrong one (or a mix) answers differently.
gen() { # gen NAME PAD
	local i
	{
		for ((i = 0; i < $2; i++)); do echo "/* pad $i */"; done
		for i in 1 2 3 4 5 6; do
			cat <<EOF
__attribute__((noinline)) int ${1}_$i(int x)
{
	int y = x * $i + ${#1};
	for (int k = 0; k < x; k++)
		y += k ^ $i;
	return y - $((i * ${#1}));
}
EOF
		done
		echo "int main(int c, char **v) { (void)v; return ${1}_1(c) + ${1}_2(c) + ${1}_3(c) + ${1}_4(c) + ${1}_5(c) + ${1}_6(c); }"
	} >"$W/$1.c"
	gcc -g -O0 -Wl,--build-id -o "$W/$1" "$W/$1.c" || fail "gcc $1"
}
gen alpha 3
gen betagamma 11

# uuid FILE: its GNU build-id in lowercase hex (the UUID symdb prints)
uuid() { readelf -n "$1" | awk '/Build ID:/ {print $3; exit}'; }
# addrs FILE: start, middle and last byte of every function of the program
addrs() {
	llvm-nm-14 -S --defined-only "$1" | python3 -c '
import re, sys
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "Tt" and re.match(r"(alpha|betagamma)_|main$", f[3]):
        s, n = int(f[0], 16), int(f[1], 16)
        print("0x%x 0x%x 0x%x" % (s, s + n // 2, s + n - 1))'
}
UA=$(uuid "$W/alpha")
UB=$(uuid "$W/betagamma")
[[ -n $UA && -n $UB && $UA != "$UB" ]] || fail "the two programs need two build-ids ($UA, $UB)"
AA=$(addrs "$W/alpha")
AB=$(addrs "$W/betagamma")
[[ $(wc -w <<<"$AA") -ge 21 && $(wc -w <<<"$AB") -ge 21 ]] || fail "too few function addresses"
WANT_A=$(llvm_query "$W/alpha" $AA)
WANT_B=$(llvm_query "$W/betagamma" $AB)
grep -q 'alpha.c:' <<<"$WANT_A" || fail "oracle gives no lines for alpha"

# The writer: alpha and betagamma renamed over $W/prog back to back.
python3 - "$W" <<'EOF' &
import os, sys
w = sys.argv[1]
src = [os.path.join(w, "alpha"), os.path.join(w, "betagamma")]
tmp = [os.path.join(w, ".a"), os.path.join(w, ".b")]
prog = os.path.join(w, "prog")
os.link(src[0], prog)
parent = os.getppid()
i = n = 0
while True:
    n += 1
    if n % 1024 == 0 and os.getppid() != parent:
        break  # the test ended (or failed): stop with it
    try:
        os.unlink(tmp[i])
    except FileNotFoundError:
        pass
    os.link(src[i], tmp[i])
    os.rename(tmp[i], prog)
    i ^= 1
EOF
writer=$!
for ((t = 0; t < 100; t++)); do
	[[ -e $W/prog ]] && break
	sleep 0.05
done

wrong=0 a=0 b=0
for ((i = 1; i <= BUILDS; i++)); do
	run "${S[@]}" build --force "$W/prog"
	expect_ok "build $i"
	u=$(awk '$1 == "indexed" {print $2}' "$OUT")
	case $u in
	"$UA") a=$((a + 1)) got=$("${S[@]}" query --obj "$W/alpha" $AA) want=$WANT_A ;;
	"$UB") b=$((b + 1)) got=$("${S[@]}" query --obj "$W/betagamma" $AB) want=$WANT_B ;;
	*) fail "build $i: published UUID '$u' is neither program's: $(cat "$OUT")" ;;
	esac
	if [[ $got != "$want" ]]; then
		wrong=$((wrong + 1))
		echo "build $i: the index under $u does not answer like its program" >&2
		diff <(echo "$want") <(echo "$got") | head -6 >&2 || true
	fi
done
kill $writer 2>/dev/null || true
((wrong == 0)) || fail "$wrong of $BUILDS builds published a wrong index"
((a > 0 && b > 0)) || fail "the race never built one of the programs ($a alpha, $b betagamma)"
run "${S[@]}" verify
expect_ok "verify after the race"
note "$BUILDS builds during back-to-back renames ($a alpha, $b betagamma): 0 wrong indexes"
