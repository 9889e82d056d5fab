#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fleet_scaleout.sh [--images N] [--nodes M] [--requests R] [--seconds S]
#                   [--conns C] [--work DIR] [--build DIR]
#
# The scale-out simulation of issue 16, on one machine, loopback only:
# M `symdb serve` nodes (default 4), each with its own empty database,
# share one upstream index store -- nginx over a tree written by
# `symdb export --tree` -- and take a stream of requests over N images
# (default 500).
#
#   images   one small generated C library (bench/fleet_stream.py images:
#            40 functions, some inlined), compiled once and linked N times
#            with N distinct build-ids; indexed ONCE, into the store's
#            database (`symdb build`, N indexer runs), exported as the tree.
#            Built once per WORK directory and reused.
#   cold     for 1 node and then for M nodes (fresh databases each time):
#            R requests (default 2000) of 8 images x 50 addresses, drawn
#            uniformly, round robin over the nodes from 8 client threads;
#            nodes fetch on miss (--fetch-budget-ms 1000): modules answered
#            ok / pending, (node, image) pairs met, store GETs per image
#            (nginx's access log), each node's fetches by result, images
#            in each node's database, indexer runs on the nodes (none: a
#            node imports the store's index file, it never indexes)
#   warm     then every node has met every image (a pass over all N on
#            each): bench/serve_client run for S seconds (default 10), the
#            same 64 request bodies, M x C client connections in both
#            rounds (C per node with M nodes, default 1; all M x C on the
#            one node alone); addresses/s for 1 node, and summed over M
#            nodes run at once
# Every figure is printed with the 1-minute load average read just before
# it.  The machine's cores bound the warm figures (M nodes on one machine
# share them): the point of the warm run is the per-node cost and that
# nothing is shared between nodes but the store; bench/RESULTS.md has the
# extrapolation to N nodes.
#
# It builds symdb Release with the benchmarks in --build (default
# WORK/build).  Prints a Markdown table on stdout; raw lines go to
# WORK/raw.txt.  Needs nginx, llvm-nm-14, gcc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmdline="bench/fleet_scaleout.sh${*:+ $*}"
nimages=500 nnodes=4 requests=2000 seconds=10 conns=1 work=/tmp/symdb-fleet build=
while [ $# -gt 0 ]; do
	case $1 in
	--images) nimages=$2; shift 2 ;;
	--nodes) nnodes=$2; shift 2 ;;
	--requests) requests=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--conns) conns=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	-h|--help) sed -n '4,/^set -euo/p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
	*) echo "fleet_scaleout.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
for t in nginx llvm-nm-14 gcc; do
	command -v $t >/dev/null || { echo "fleet_scaleout.sh: needs $t" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
build=${build:-$work/build}
raw=$work/raw.txt
: > "$raw"
stream=$root/bench/fleet_stream.py
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# ---- build --------------------------------------------------------------------
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
log "building $commit in $build (Release)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_TESTS=OFF \
	-DSYMDB_BUILD_BENCH=ON > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$build" -j2 --target symdb_cli symdb_indexer_exe symdb_fetch_exe serve_client \
	> "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
symdb=$build/tools/symdb client=$build/bench/serve_client

# ---- the images, indexed once into the store, exported as a tree --------------------
fx=$work/images.$nimages store=$work/store.$nimages tree=$work/tree.$nimages
if [ ! -f "$fx/.done" ]; then
	log "generating $nimages images"
	rm -rf "$fx" && mkdir -p "$fx/lib"
	python3 "$stream" images "$fx" "$nimages"
	gcc -g -O2 -fPIC -c "$fx/fleet.c" -o "$fx/fleet.o"
	k=0
	while read -r id; do
		gcc -shared -o "$fx/lib/libfleet.$k.so" "$fx/fleet.o" -Wl,--build-id=0x"$id"
		k=$((k + 1))
	done < "$fx/ids.txt"
	llvm-nm-14 --defined-only "$fx/lib/libfleet.0.so" | python3 -c '
import sys
for l in sys.stdin:
    f = l.split()
    if len(f) == 3 and f[2].startswith("fn"):
        a = int(f[0], 16)
        print("0x%x\n0x%x\n0x%x" % (a, a + 8, a + 24))' > "$fx/addrs.txt"
	touch "$fx/.done"
fi
if [ ! -f "$tree/.done" ]; then
	rm -rf "$store" "$tree"
	log "indexing the $nimages images once, into the store's database (load $(load1))"
	t0=$(date +%s.%N)
	"$symdb" --db "$store" build -q "$fx"/lib/*.so
	t1=$(date +%s.%N)
	mkdir -p "$tree"
	echo "index images=$nimages seconds=$(echo "$t1 - $t0" | bc) load=$(load1)" > "$tree/index.txt"
	if "$symdb" help export 2>&1 | grep -q -- '--tree'; then
		"$symdb" --db "$store" export --tree "$tree" > /dev/null
	else # the same layout: DB/images/XX/HEX.symdb is TREE/symdb/v1/XX/HEX.symdb
		mkdir -p "$tree/symdb" && cp -r "$store/images" "$tree/symdb/v1"
	fi
	touch "$tree/.done"
fi
cat "$tree/index.txt" >> "$raw" 2>/dev/null || echo "index images=$nimages seconds=unknown load=-" >> "$raw"
bodies=$work/bodies.$nimages
if [ ! -f "$bodies.0063.json" ]; then
	python3 "$stream" bodies "$fx/ids.txt" "$fx/addrs.txt" "$bodies" --requests 64 --images 8 --addrs 50
fi

# ---- nginx over the tree ------------------------------------------------------------
pids=()
cleanup() { local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ng=$work/nginx
rm -rf "$ng" && mkdir -p "$ng"
nport=$(free_port)
cat > "$ng/nginx.conf" <<EOF
worker_processes 1;
pid $ng/nginx.pid;
error_log $ng/error.log;
events { worker_connections 1024; }
http {
    access_log $ng/access.log;
    client_body_temp_path $ng/body;
    proxy_temp_path $ng/proxy;
    fastcgi_temp_path $ng/fastcgi;
    uwsgi_temp_path $ng/uwsgi;
    scgi_temp_path $ng/scgi;
    server {
        listen 127.0.0.1:$nport;
        root $tree;
        location /symdb/v1/ { default_type application/octet-stream; }
        location / { return 404; }
    }
}
EOF
nginx -c "$ng/nginx.conf" -g 'daemon off;' &
pids+=($!)
nginx_master=$!
store_url=http://127.0.0.1:$nport
for ((i = 0; i < 100; i++)); do
	curl -s -o /dev/null "$store_url/" && break
	sleep 0.1
done

# ---- the nodes --------------------------------------------------------------------
# start_nodes M: fresh databases; sets urls[] and node_pids[]
start_nodes() {
	local m=$1 k err port i
	urls=() node_pids=()
	for ((k = 0; k < m; k++)); do
		rm -rf "$work/node$k"
		err=$work/node$k.err
		: > "$err" # read below before the server may have opened it
		"$symdb" --db "$work/node$k" serve --listen 127.0.0.1:0 --log none \
			--upstream "$store_url" --fetch-budget-ms 1000 2> "$err" &
		node_pids+=($!)
		pids+=($!)
		port=
		for ((i = 0; i < 100; i++)); do
			port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$err" | head -1)
			[ -n "$port" ] && break
			sleep 0.1
		done
		[ -n "$port" ] || { cat "$err" >&2; exit 1; }
		urls+=("http://127.0.0.1:$port")
	done
}
stop_nodes() {
	local p
	for p in "${node_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
csv() { local IFS=,; echo "$*"; }
# nginx's CPU (master + workers, user + system) in clock ticks
store_ticks() {
	local p t=0
	for p in $nginx_master $(cat "/proc/$nginx_master/task/$nginx_master/children" 2>/dev/null); do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo $t
}

# round M: the cold stream, then the warm throughput, on M fresh nodes
round() {
	local m=$1 k l
	start_nodes "$m"
	: > "$ng/access.log"
	local c0
	c0=$(store_ticks)
	l=$(load1)
	log "cold stream: $requests requests over $m node(s) (load $l)"
	echo "cold nodes=$m load=$l $(python3 "$stream" cold "$(csv "${urls[@]}")" "$fx/ids.txt" \
		"$fx/addrs.txt" --requests "$requests" --images 8 --addrs 50 --threads 8)" >> "$raw"
	# store GETs per image (one per node that met it), bytes sent, nginx's CPU
	echo "store nodes=$m cpu_ticks=$(($(store_ticks) - c0)) $(awk '$7 ~ /^\/symdb\/v1\// {
		n[$7]++; b += $10 } END { for (p in n) { t += n[p]; c[n[p]]++ }
		printf "gets=%d bytes=%d images=%d", t, b, length(n)
		for (g in c) printf " images_with_%d_gets=%d", g, c[g] }' "$ng/access.log")" >> "$raw"
	for ((k = 0; k < m; k++)); do
		echo "node nodes=$m node=$k images=$("$symdb" --db "$work/node$k" list 2>/dev/null | wc -l)" \
			"$(python3 "$stream" metrics "${urls[k]}" symdb_serve_fetches_total \
				symdb_serve_indexer_runs_total symdb_serve_modules_pending_total)" >> "$raw"
	done
	# every node meets every image before the warm run
	for ((k = 0; k < m; k++)); do
		python3 - "${urls[k]}" "$fx/ids.txt" <<'PY'
import json, sys, time, urllib.request
url, ids = sys.argv[1], open(sys.argv[2]).read().split()
for _ in range(100):
    body = json.dumps({"modules": [{"build_id": i, "addresses": ["0x0"]} for i in ids]}).encode()
    rq = urllib.request.Request(url + "/v1/symbolize", data=body, headers={"Content-Type": "application/json"})
    if all(m["status"] == "ok" for m in json.load(urllib.request.urlopen(rq, timeout=120))["modules"]):
        sys.exit(0)
    time.sleep(0.5)
sys.exit("fleet_scaleout.sh: %s did not get every image" % url)
PY
	done
	l=$(load1)
	log "warm: $m node(s), $conns connection(s) each, $seconds s (load $l)"
	# the same client concurrency in both rounds: nnodes x conns connections
	local outs=() c=$((conns * nnodes / m))
	for ((k = 0; k < m; k++)); do
		"$client" run --connect "${urls[k]#http://}" --type application/json --conns "$c" \
			--seconds "$seconds" --items 400 "$bodies".*.json > "$work/warm.$m.$k.txt" &
		outs+=($!)
	done
	for k in "${outs[@]}"; do wait "$k"; done
	for ((k = 0; k < m; k++)); do
		echo "warm nodes=$m node=$k load=$l $(cat "$work/warm.$m.$k.txt")" >> "$raw"
	done
	stop_nodes
}

round 1
round "$nnodes"

# ---- the table ----------------------------------------------------------------------
python3 - "$raw" "$cmdline" "$commit" <<'PY'
import re, sys
raw, cmdline, commit = sys.argv[1:4]
rows = [dict(re.findall(r"([^\s={]+(?:\{[^}]*\})?)=(\S+)", l)) | {"_": l.split()[0]} for l in open(raw)]
print("`%s` on %s\n" % (cmdline, commit))
for r in rows:
    if r["_"] == "index":
        print("- indexed once into the store: %s images in %s s (load %s)" % (r["images"], r["seconds"], r["load"]))
for r in rows:
    if r["_"] == "store":
        g = int(r["gets"]) or 1
        print("- %s node(s), cold: the store sent %s GETs, %s bytes (%.0f per GET), nginx CPU %s ticks (%.2f ms per GET at 100 Hz)" % (
            r["nodes"], r["gets"], r["bytes"], int(r["bytes"]) / g, r["cpu_ticks"], int(r["cpu_ticks"]) * 10.0 / g))
print("\n| nodes | cold: requests/s | modules ok / pending | (node, image) pairs | store GETs | fetches per node | images in node DBs | indexer runs on nodes | warm: addresses/s (sum) | load |")
print("|---|---|---|---|---|---|---|---|---|---|")
for m in sorted({r["nodes"] for r in rows if "nodes" in r}, key=int):
    c = next(r for r in rows if r["_"] == "cold" and r["nodes"] == m)
    s = next(r for r in rows if r["_"] == "store" and r["nodes"] == m)
    ns = [r for r in rows if r["_"] == "node" and r["nodes"] == m]
    ws = [r for r in rows if r["_"] == "warm" and r["nodes"] == m]
    warm = sum(float(w.get("items_per_s", 0)) for w in ws)
    fetched = "/".join(n.get("fetches_total{source=upstream,result=ok}", "0") for n in ns)
    other = sum(float(v) for n in ns for k, v in n.items()
                if k.startswith("fetches_total") and not k.endswith("source=upstream,result=ok}"))
    if other:
        fetched += " (+%d not ok)" % other
    print("| %s | %s | %s / %s | %s | %s | %s | %s | %d | %.0f | cold %s, warm %s |" % (
        m, c["requests_per_s"], c.get("modules_ok", 0), c.get("modules_pending", 0), c["pairs"],
        s["gets"], fetched, "/".join(n["images"] for n in ns),
        sum(int(float(n.get("indexer_runs_total", 0))) for n in ns), warm, c["load"],
        ws[0]["load"] if ws else "-"))
PY
