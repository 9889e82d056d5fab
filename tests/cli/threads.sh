#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# threads.sh: the parallel DWARF walk (--threads N; SPEC §14: a writer is deterministic) writes the
# same bytes as one thread.  Inputs with several units, so that shards > 0
# exist and their strings, files, functions and nodes are merged: a
# five-unit C program (DWARF 4 and 5, and -flto, whose inlined copies name
# abstract origins in other units), libpython, libc with libc6-dbg's debug
# file, the libstdc++ debug build; each built with --threads 1, 2, 3 and 7
# and compared with cmp.  Also -j 2 without --threads (the default split).
source "$(dirname "$0")/lib.sh"
require gcc

src=$SCRATCH/src
mkdir -p "$src"
for i in 1 2 3 4; do
	cat >"$src/u$i.c" <<EOF
static inline __attribute__((always_inline)) int in$i(int x) { return x * $i + (x >> $i); }
int leaf$i(int x);
int f$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += in$i(k) ^ leaf$i(k); return s; }
int leaf$i(int x) { return x ? in$i(x - 1) + 1 : 0; }
EOF
done
cat >"$src/main.c" <<'EOF'
int f1(int), f2(int), f3(int), f4(int);
int main(int argc, char **argv) { (void)argv; return f1(argc) + f2(argc) + f3(argc) + f4(argc); }
EOF
inputs=()
for v in 4 5; do
	gcc -O2 -g -gdwarf-$v "$src"/u*.c "$src/main.c" -o "$SCRATCH/multi_dw$v" || fail "gcc -gdwarf-$v"
	inputs+=("$SCRATCH/multi_dw$v")
done
if gcc -O2 -g -flto "$src"/u*.c "$src/main.c" -o "$SCRATCH/multi_lto" 2>/dev/null; then
	inputs+=("$SCRATCH/multi_lto")
else
	skip_part "gcc -flto does not work here: no LTO input"
fi
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')/libpython3.11.so.1.0
for f in "$pylib" /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30; do
	if [[ -f $f ]]; then
		inputs+=("$f")
	else
		skip_part "$f not installed"
	fi
done

for t in 1 2 3 7; do
	run "$SYMDB" build --db "$SCRATCH/t$t" --threads "$t" "${inputs[@]}"
	expect_ok "build --threads $t"
done
run "$SYMDB" build --db "$SCRATCH/j2" -j 2 "${inputs[@]}"
expect_ok "build -j 2"
n=0
while read -r f; do
	rel=${f#"$SCRATCH/t1/"}
	for other in t2 t3 t7 j2; do
		cmp "$f" "$SCRATCH/$other/$rel" || fail "$rel: --threads 1 and $other differ"
	done
	n=$((n + 1))
done < <(index_files "$SCRATCH/t1")
((n == ${#inputs[@]})) || fail "expected ${#inputs[@]} index files, got $n"

run "$SYMDB" build --db "$SCRATCH/bad" --threads x "${inputs[0]}"
expect_error "--threads x" "--threads" "x"
echo "PASS threads: $n index files identical with 1, 2, 3 and 7 threads and with -j 2"
