#!/bin/bash
# SPDX-License-Identifier: MIT
#
# upstream_nginx.sh: a real nginx, configured with the server block of
# README.md's "Deployment" section, serves a tree written by `symdb export
# --tree` as the upstream index store (SPEC §12.9) of `symdb query --uuid
# HEX --upstream URL` on an empty node database.
#   1. a miss is fetched (one GET in nginx's access log), published, and
#      answered like llvm-symbolizer-14 on the file itself; the published
#      file is the store's; a second query asks nobody
#   2. damaged store files - a flipped byte, a file cut in half, another
#      image's file under this build-id - are each rejected with one line
#      on stderr: nothing published (catalog, images/, tmp/ unchanged,
#      `verify` clean), the addresses unanswered (??), and a retry asks
#      the store again (a damaged file is not "nobody has it")
#   3. several upstreams in order: a dead port and a store without the
#      image before the good one (each asked, the image fetched); the good
#      one first (the next never asked); an id no store has: each asked
#      once, then the negative cache answers without asking
#   4. a `symdb serve` over the store's database answers the same URLs: a
#      node fetches from it and answers like llvm-symbolizer-14
#   5. the README config serves only the layout: the export's temporary
#      names and other paths are 404
source "$(dirname "$0")/lib.sh"

require nginx curl
F=$FIXTURES/full
A=$F/c_gcc_O2_pie
B=$F/cpp_g++_O2_pie
C=$F/lib_gcc_O2.so
D=$F/c_clang_O2_pie
E=$F/cpp_clang++_O2_pie
STORE=$SCRATCH/store-db
TREE=$SCRATCH/tree
NODE=$SCRATCH/node
declare -A HEX
for x in A B C D E; do
	HEX[$x]=$(build_id "${!x}")
	[[ -n ${HEX[$x]} ]] || fail "$x: no build-id"
done
url_path() { echo "/symdb/v1/${1:0:2}/$1.symdb"; }
tree_file() { echo "$TREE$(url_path "$1")"; }
t0=$(date +%s.%N)

# The store: built once, exported as a tree.
run "$SYMDB" --db "$STORE" build -q "$A" "$B" "$C" "$D" "$E"
expect_ok "build the store's images"
run "$SYMDB" --db "$STORE" export --tree "$TREE"
expect_ok "export --tree"
# the damaged files: B one flipped byte, C cut in half, D holds A's file
python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x10
open(p, "wb").write(b)' "$(tree_file "${HEX[B]}")"
truncate -s $(($(stat -c %s "$(tree_file "${HEX[C]}")") / 2)) "$(tree_file "${HEX[C]}")"
cp "$(tree_file "${HEX[A]}")" "$(tree_file "${HEX[D]}")"
nginx_start "$TREE"
STORE_URL=$NGINX_URL
STORE_LOG=$NGINX_ACCESS
note "nginx over the exported tree at $STORE_URL"

# addrs FILE: every 2nd byte of every function (at most 600 addresses)
addrs() {
	llvm-nm-14 -S --defined-only "$1" | awk '$3 ~ /[tTwW]/ && NF == 4 {print $1, $2}' |
		python3 -c 'import sys
out = set()
for l in sys.stdin:
    a, n = (int(x, 16) for x in l.split())
    out.update(range(a, a + max(n, 1), 2))
for a in sorted(out)[:600]: print(hex(a))'
}
# node_query DB HEX UPSTREAM...: symdb query --uuid HEX with those upstreams
node_query() {
	local db=$1 hex=$2 u args=()
	shift 2
	for u; do args+=(--upstream "$u"); done
	run_in "$SCRATCH/addrs" "$SYMDB" --db "$db" query --uuid "$hex" "${args[@]}"
}

# 1. A miss: fetched, verified, published, answered like llvm-symbolizer-14.
addrs "$A" >"$SCRATCH/addrs"
llvm_query "$A" <"$SCRATCH/addrs" >"$SCRATCH/oracle"
node_query "$NODE" "${HEX[A]}" "$STORE_URL"
expect_ok "query --uuid A --upstream nginx"
cmp -s "$OUT" "$SCRATCH/oracle" || fail "A fetched from nginx: answers differ from llvm-symbolizer-14"
[[ ! -s $ERR ]] || fail "A fetched from nginx: stderr: $(cat "$ERR")"
[[ $(nginx_gets "$STORE_LOG" "$(url_path "${HEX[A]}")") == 1 ]] || fail "nginx was not asked once for A"
grep -q "^${HEX[A]} " <("$SYMDB" --db "$NODE" list) || fail "A is not in the node's catalog"
cmp -s "$NODE/images/${HEX[A]:0:2}/${HEX[A]}.symdb" "$(tree_file "${HEX[A]}")" ||
	fail "the node's index file of A is not the store's"
[[ -z $(find "$NODE/tmp" -mindepth 1 2>/dev/null) ]] || fail "files left in the node's tmp/"
node_query "$NODE" "${HEX[A]}" "$STORE_URL"
expect_ok "query A again"
cmp -s "$OUT" "$SCRATCH/oracle" || fail "A from the node's database: answers differ"
[[ $(nginx_gets "$STORE_LOG" "$(url_path "${HEX[A]}")") == 1 ]] || fail "the second query of A asked nginx"
note "miss: $(wc -l <"$SCRATCH/addrs") addresses of A equal to llvm-symbolizer-14; one GET, none the second time"

# 2. Damaged store files: nothing published, the image unknown, retried.
for x in B C D; do
	hex=${HEX[$x]}
	state=$(db_state "$NODE")
	node_query "$NODE" "$hex" "$STORE_URL"
	expect_error "store file of $x damaged" "$hex"
	((RC == 1)) || fail "$x damaged: exit $RC, expected 1"
	[[ $(db_state "$NODE") == "$state" ]] || fail "$x damaged: the node's database changed"
	[[ $(grep -c '^??$' "$OUT") == $(wc -l <"$SCRATCH/addrs") ]] &&
		[[ -z $(grep -v -e '^$' -e '^??$' -e '^??:0:0$' "$OUT") ]] ||
		fail "$x damaged: not every address answered ?? (unknown image)"
	node_query "$NODE" "$hex" "$STORE_URL"
	((RC == 1)) || fail "$x damaged, again: exit $RC"
	[[ $(nginx_gets "$STORE_LOG" "$(url_path "$hex")") == 2 ]] ||
		fail "$x damaged: the retry did not ask the store again (a damaged file is no negative answer)"
done
run "$SYMDB" --db "$NODE" verify
expect_ok "verify the node after the damaged downloads"
note "damaged store files (flipped byte, truncated, another image's file): rejected, nothing published"

# 3. Several upstreams, in order.
DEAD=http://127.0.0.1:$(free_port)
mkdir -p "$SCRATCH/empty-tree"
nginx_start "$SCRATCH/empty-tree" nginx-empty
EMPTY_URL=$NGINX_URL
EMPTY_LOG=$NGINX_ACCESS
addrs "$E" >"$SCRATCH/addrs"
llvm_query "$E" <"$SCRATCH/addrs" >"$SCRATCH/oracle"
node_query "$NODE" "${HEX[E]}" "$DEAD" "$EMPTY_URL" "$STORE_URL"
expect_ok "query E: a dead upstream, one without E, then the store"
cmp -s "$OUT" "$SCRATCH/oracle" || fail "E through three upstreams: answers differ from llvm-symbolizer-14"
[[ $(nginx_gets "$EMPTY_LOG" "$(url_path "${HEX[E]}")") == 1 ]] || fail "the store without E was not asked"
[[ $(nginx_gets "$STORE_LOG" "$(url_path "${HEX[E]}")") == 1 ]] || fail "the store with E was not asked once"
# the good store first: the next one is never asked
addrs "$A" >"$SCRATCH/addrs"
llvm_query "$A" <"$SCRATCH/addrs" >"$SCRATCH/oracle"
node_query "$SCRATCH/node2" "${HEX[A]}" "$STORE_URL" "$EMPTY_URL"
expect_ok "query A on a second node: the store first"
cmp -s "$OUT" "$SCRATCH/oracle" || fail "A on node2: answers differ from llvm-symbolizer-14"
[[ $(nginx_gets "$EMPTY_LOG" "$(url_path "${HEX[A]}")") == 0 ]] || fail "the second upstream was asked for A"
# an id nobody has: each store asked once, then remembered
nobody=$(printf '%s' "${HEX[A]}" | tr '0-9a-f' '1-9a-f0')
node_query "$NODE" "$nobody" "$EMPTY_URL" "$STORE_URL"
expect_error "an id no store has" "$nobody"
for log in "$EMPTY_LOG" "$STORE_LOG"; do
	[[ $(nginx_gets "$log" "$(url_path "$nobody")") == 1 ]] || fail "$log: not asked once for $nobody"
done
node_query "$NODE" "$nobody" "$EMPTY_URL" "$STORE_URL"
((RC == 1)) || fail "an id no store has, again: exit $RC"
for log in "$EMPTY_LOG" "$STORE_LOG"; do
	[[ $(nginx_gets "$log" "$(url_path "$nobody")") == 1 ]] || fail "$log: asked again inside the TTL"
done
note "upstreams in order: dead, 404, good; good first stops there; 404 everywhere remembered"

# 4. A symdb serve over the store's database is an upstream too (its
# /symdb/v1/ route).
node_serve_start "$STORE"
node_query "$SCRATCH/node3" "${HEX[A]}" "$NODE_SERVE_URL"
expect_ok "query A with a symdb serve as the upstream"
cmp -s "$OUT" "$SCRATCH/oracle" || fail "A from symdb serve: answers differ from llvm-symbolizer-14"
grep -q "$(url_path "${HEX[A]}")" "$NODE_SERVE_LOG" || fail "symdb serve's log has no GET for A"
note "symdb serve as the upstream: A fetched, equal to llvm-symbolizer-14"

# 5. The README's config serves the layout and nothing else.
cp "$(tree_file "${HEX[A]}")" "$TREE/symdb/v1/${HEX[A]:0:2}/.${HEX[A]}.symdb.0123456789ab"
for p in "/symdb/v1/${HEX[A]:0:2}/.${HEX[A]}.symdb.0123456789ab" "/symdb/v1/${HEX[A]:0:2}/" \
	"/symdb/v1/${HEX[A]:0:2}/${HEX[A]^^}.symdb" "/symdb/" "/"; do
	st=$(curl -s -o /dev/null -w '%{http_code}' "$STORE_URL$p")
	[[ $st == 404 ]] || fail "nginx: GET $p: $st, expected 404"
done
curl -s -D "$SCRATCH/hdr" -o "$SCRATCH/got" "$STORE_URL$(url_path "${HEX[A]}")"
cmp -s "$SCRATCH/got" "$(tree_file "${HEX[A]}")" || fail "nginx: the layout's file differs"
grep -qi '^content-type: application/octet-stream' "$SCRATCH/hdr" || fail "nginx: content type: $(grep -i content-type "$SCRATCH/hdr")"
note "README's nginx block: only /symdb/v1/XX/ID.symdb served"
echo "upstream_nginx: ok ($(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)") s)"
