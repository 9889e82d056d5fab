# SPDX-License-Identifier: MIT
#
# serve_lib.sh: what the serve_*.sh tests of this folder that drive a
# `symdb serve` node share, on top of tests/serve/lib.sh (serve_start,
# serve_py, note, fail...).  A file of its own, not lib.sh: lib.sh's EXIT
# trap would replace serve/lib.sh's, which kills the serve nodes and fails
# the test on a sanitizer report in their logs.
#   here, serve_dir   this folder and tests/serve (json_oracle.py)
#   t0                the start time, for the "wall time" line
#   build_id FILE     FILE's GNU build-id (hex)
#   three_images      objs: three fixture images, ids: their build-ids,
#                     absent: a build-id nobody has
#   store_tree OBJ... OBJs built into $SCRATCH/store-db, their index files
#                     laid out as an upstream store in $tree (SPEC §12.9);
#                     the caller may add slow_store.py's delay.HEX/hang.HEX
#   slow_store_start  slow_store.py over $tree on a free loopback port (its
#                     request log in $SCRATCH/store.log), waited for; killed
#                     at exit with the serve nodes.  Sets store (its URL).
source "$(dirname "${BASH_SOURCE[0]}")/../serve/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
serve_dir=$(cd "$here/../serve" && pwd)
t0=$(date +%s.%N)

build_id() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }

three_images() {
	local o
	objs=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie" "$FIXTURES/full/lib_gcc_O2.so")
	ids=()
	for o in "${objs[@]}"; do ids+=("$(build_id "$o")"); done
	absent=00112233445566778899aabbccddeeff00112233
}

store_tree() {
	run "$SYMDB" --db "$SCRATCH/store-db" build "$@"
	((RC == 0)) || fail "symdb build: $(cat "$ERR")"
	tree=$SCRATCH/tree
	mkdir -p "$tree/symdb"
	cp -r "$SCRATCH/store-db/images" "$tree/symdb/v1"
}

slow_store_start() {
	local i
	python3 "$here/slow_store.py" "$tree" "$SCRATCH/store.log" "$SCRATCH/store.port" &
	SERVE_PIDS+=($!)
	for ((i = 0; i < 200; i++)); do [[ -s $SCRATCH/store.port ]] && break; sleep 0.05; done
	[[ -s $SCRATCH/store.port ]] || fail "slow_store.py did not start"
	store=http://127.0.0.1:$(cat "$SCRATCH/store.port")
}
