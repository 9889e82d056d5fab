#!/bin/bash
# SPDX-License-Identifier: MIT
#
# catalog_live.sh: the catalog tree check (SPEC §12.1) while another
# processes commit.  A catalog of N images; two `symdb build`s add N more
# while `list`, `query --no-build` and `reindex` run in a loop.  Each must
# succeed and see a healthy catalog: list at least the first N images,
# query answer as llvm-symbolizer-14, reindex move nothing aside (no
# DB/catalog.damaged-*).  The check read the meta page of its snapshot in
# place, where LMDB writes a later commit's: it then reported "page N:
# free-list entry names a page in use ... (run 'symdb reindex')" for a
# sound catalog, and reindex moved it aside under the running build.
source "$(dirname "$0")/../cli/lib.sh"
require gcc llvm-symbolizer-14

N=${CATALOG_LIVE_IMAGES:-3000}
DB=$SCRATCH/db
W=$SCRATCH/bin
mkdir -p "$W"
printf 'int f(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$W/p.c"
gcc -g -O0 -c "$W/p.c" -o "$W/p.o"
numbered_images "$W/p.o" "$W" $((2 * N))
f_addr=0x$(llvm-nm-14 "$W/p1" | awk '$3 == "f" { print $1 }')
want=$(llvm-symbolizer-14 --obj "$W/p1" "$f_addr")
first=() second=()
for ((i = 1; i <= N; i++)); do first+=("$W/p$i") second+=("$W/p$((N + i))"); done
run "$SYMDB" --db "$DB" build -q "${first[@]}"
expect_ok "build of the first $N images"

# two builders: more commits while a check walks the pages
"$SYMDB" --db "$DB" build -q "${second[@]:0:N/2}" >"$SCRATCH/b.out" 2>"$SCRATCH/b.err" &
builder=$!
"$SYMDB" --db "$DB" build -q "${second[@]:N/2}" >"$SCRATCH/b2.out" 2>"$SCRATCH/b2.err" &
builder2=$!
rounds=0 bad=0
while kill -0 "$builder" 2>/dev/null; do
	run "$SYMDB" --db "$DB" list
	no_crash "list during a build"
	if ((RC != 0)) || (($(wc -l <"$OUT") < N)); then
		bad=$((bad + 1)) last="list: exit $RC: $(head -c 300 "$ERR")"
	fi
	run "$SYMDB" --db "$DB" query --no-build --obj "$W/p1" "$f_addr"
	no_crash "query during a build"
	if ((RC != 0)) || [[ $(cat "$OUT") != "$want" ]]; then
		bad=$((bad + 1)) last="query: exit $RC: $(head -c 300 "$ERR")"
	fi
	run "$SYMDB" --db "$DB" reindex
	no_crash "reindex during a build"
	if ((RC != 0)) || compgen -G "$DB/catalog.damaged-*" >/dev/null; then
		bad=$((bad + 1)) last="reindex: exit $RC: $(head -c 300 "$ERR")"
	fi
	rounds=$((rounds + 1))
done
wait "$builder" || fail "the build running beside them failed: $(head -3 "$SCRATCH/b.err")"
wait "$builder2" || fail "the build running beside them failed: $(head -3 "$SCRATCH/b2.err")"
((bad == 0)) || fail "$bad of $rounds rounds saw a sound catalog as damaged; last: $last"
((rounds > 0)) || fail "the build ended before any round"
run "$SYMDB" --db "$DB" verify
expect_ok "verify after the build"
[[ $("$SYMDB" --db "$DB" list | wc -l) == $((2 * N)) ]] || fail "not all $((2 * N)) images listed"
note "catalog_live: $rounds rounds of list, query and reindex beside a build of $N images"
