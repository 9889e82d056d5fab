#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# serve_load.sh [--runs N] [--requests N] [--seconds S] [--conns C]
#               [--threads T] [--work DIR] [--build DIR] [--rev REV]
#
# The load benchmark of `symdb serve` (issue 14), loopback only, bounded in
# time.  Addresses: libpython's profile-like set (bench/gen_addrs.py,
# 100 000 addresses in generation order) cut into 1000-address batches,
# one module named by build-id, default options (demangle, inlines).
# Ways, each writing its answers to the same sink (WORK/answers.out, a
# regular file, truncated per run) unless said:
#   json-c   bench/serve_client run: C connections (default 2, one per
#            server thread on this 2-core machine), keep-alive,
#            closed loop, --requests N JSON batches (default 500 = 500 000
#            addresses); latency per request, p50/p99
#   bin-c    the same with binary batches (application/x-symdb-batch,
#            encoded by serve_client with the public symdb_batch.h)
#   json-wrk wrk -t2 -cC -dS --latency with bench/serve_wrk.lua, JSON
#            (wrk reads and drops the answers: its own sink)
#   bin-wrk  the same, binary
#   query    the 100 000 addresses through ONE long-running
#            `symdb query --output-style=JSON` fed over a pipe, 1000 per
#            batch (bench/serve_client pipe), latency per batch
#   llvm     the same through ONE long-running llvm-symbolizer-14
#            --output-style=JSON
#   stack    one request holding one 64-frame stack, repeated (--conns 1,
#            2000 requests): against a server with the stack cache (a hit
#            after the first) and one started with --cache-size 0, both
#            serving only these; JSON and binary
#   hit      bench_serve_cache: the cache's hit path in process for that
#            stack (key + lookup + copy of the real answer's bytes)
# One untimed warm-up round, then N rounds (default 5) with the order of the
# ways rotating; medians with min-max; CPU: the server's (user + system from
# its getrusage(2), read through /metrics around the run) or the piped child's (wait4
# rusage), and the client's (rusage); the 1-minute load average read before
# each run.  The server runs with its defaults (threads = online CPUs,
# 64 MiB stack cache) unless --threads is given.
#
# It builds symdb Release (a clean export of --rev, else the work tree) with
# the benchmarks in --build (default WORK/build).  Prints a Markdown table
# on stdout; raw lines go to WORK/raw.txt.  About 6 minutes at --runs 5 on
# an idle 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmdline="bench/serve_load.sh${*:+ $*}"
runs=5 requests=500 seconds=5 conns=2 threads= work=/tmp/symdb-serve-load build= rev=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--requests) requests=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--conns) conns=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	-h|--help) sed -n '4,/^set -euo/p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
	*) echo "serve_load.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
build=${build:-$work/build}
raw=$work/raw.txt
: > "$raw"
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
for t in llvm-symbolizer-14 llvm-nm-14 wrk; do
	command -v $t >/dev/null || { echo "serve_load.sh: needs $t" >&2; exit 1; }
done
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')/libpython3.11.so.1.0
[ -f "$pylib" ] || { echo "serve_load.sh: no $pylib (the pyenv Python 3.11, bench/README.md)" >&2; exit 1; }

# ---- build ------------------------------------------------------------------
if [ -n "$rev" ]; then
	src=$work/src
	commit=$(git -C "$root" rev-parse --short "$rev")
	if [ "$(cat "$work/src.rev" 2>/dev/null)" != "$commit" ]; then
		rm -rf "$src" "$work/src.rev" && mkdir -p "$src"
		git -C "$root" archive "$rev" | tar -x -C "$src"
		echo "$commit" > "$work/src.rev"
	fi
else
	src=$root
	commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
fi
log "building $commit in $build (Release)"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_TESTS=OFF \
	-DSYMDB_BUILD_BENCH=ON > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$build" -j2 --target symdb_cli symdb_indexer_exe serve_client bench_serve_cache \
	> "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
symdb=$build/tools/symdb client=$build/bench/serve_client
export SYMDB_INDEXER=$build/tools/symdb-indexer

# ---- inputs -----------------------------------------------------------------
db=$work/db in=$work/in sink=$work/answers.out
mkdir -p "$in"
bid=$(python3 "$root/bench/elfinfo.py" build-id "$pylib")
[ -n "$bid" ] || { echo "serve_load.sh: $pylib has no build-id" >&2; exit 1; }
if ! "$symdb" --db "$db" list 2>/dev/null | grep -q "$bid"; then
	log "indexing $pylib"
	"$symdb" --db "$db" build -q "$pylib"
fi
addrs=$in/libpython.profile.100000.unsorted.txt
[ -f "$addrs" ] || python3 "$root/bench/gen_addrs.py" "$pylib" "$in" --name libpython \
	--sizes 100000 --kinds profile >/dev/null
if [ ! -f "$in/json.0099.json" ] || [ ! -f "$in/bin.0099.bin" ]; then
	log "writing 100 JSON and 100 binary request bodies of 1000 addresses, and the stack requests"
	python3 - "$addrs" "$bid" "$in" <<'EOF'
import json, sys
addrs = open(sys.argv[1]).read().split()
bid, out = sys.argv[2], sys.argv[3]
for k in range(len(addrs) // 1000):
    with open("%s/json.%04d.json" % (out, k), "w") as f:
        json.dump({"modules": [{"build_id": bid, "addresses": addrs[k * 1000:(k + 1) * 1000]}]}, f)
with open(out + "/stack.json", "w") as f:
    json.dump({"modules": [{"build_id": bid}], "stacks": [[[0, a] for a in addrs[:64]]]}, f)
with open(out + "/stack.txt", "w") as f:
    f.write("\n".join(addrs[:64]) + "\n")
EOF
	"$client" encode --id "$bid" --addrs "$addrs" --batch 1000 --out "$in/bin"
	"$client" encode --id "$bid" --addrs "$in/stack.txt" --batch 64 --stack --out "$in/stack"
fi
jsons=("$in"/json.*.json) bins=("$in"/bin.*.bin)

# ---- servers ------------------------------------------------------------------
pids=()
cleanup() { local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# start_server NAME EXTRA-ARGS...: sets port_NAME and pid_NAME
start_server() {
	local name=$1 err=$work/serve.$1.err port= i
	shift
	"$symdb" --db "$db" serve --listen 127.0.0.1:0 --log none ${threads:+--threads "$threads"} \
		"$@" 2> "$err" &
	pids+=($!)
	eval "pid_$name=$!"
	for ((i = 0; i < 100; i++)); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$err" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$err" >&2; echo "serve_load.sh: the server did not start" >&2; exit 1; }
	eval "port_$name=$port"
	python3 - "http://127.0.0.1:$port/healthz" <<'PY' || { cat "$err" >&2; exit 1; }
import sys, time, urllib.request
for i in range(100):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=10).read()
        sys.exit(0)
    except OSError as e:
        err = e
        time.sleep(0.1)
sys.exit("serve_load.sh: %s: %s" % (sys.argv[1], err))
PY
}
# main: the batches; stacks and nocache: only the stack requests, so that
# the cached and uncached stack figures come from servers in the same state
# (the batches leave main's heap in another shape)
start_server main
start_server stacks
start_server nocache --cache-size 0
log "servers: 127.0.0.1:$port_main (pid $pid_main); stacks 127.0.0.1:$port_stacks, without a cache 127.0.0.1:$port_nocache"

# Check once that the server answers what symdb query answers (functions,
# files and lines of every frame of batch 0).
"$symdb" --db "$db" query --obj "$pylib" --output-style=JSON < <(python3 -c '
import json, sys; print("\n".join(json.load(open(sys.argv[1]))["modules"][0]["addresses"]))' \
	"${jsons[0]}") > "$work/check.query.json"
curl_json() { python3 - "$@" <<'EOF'
import sys, urllib.request
req = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], "rb").read(),
                             headers={"Content-Type": sys.argv[3]})
sys.stdout.buffer.write(urllib.request.urlopen(req, timeout=60).read())
EOF
}
curl_json "http://127.0.0.1:$port_main/v1/symbolize" "${jsons[0]}" application/json > "$work/check.serve.json"
same=$(python3 - "$work/check.query.json" "$work/check.serve.json" <<'EOF'
import json, sys
def norm(v):
    return None if v in ("", "??", None) else v
q = [[(norm(s.get("FunctionName")), norm(s.get("FileName")), s.get("Line", 0))
      for s in json.loads(l)["Symbol"]] for l in open(sys.argv[1])]
m = json.load(open(sys.argv[2]))["modules"][0]
s = [[(norm(f["function"]), norm(f["file"]), f["line"]) for f in r["frames"]]
     for r in m["results"]]
q = [[t for t in chain if t != (None, None, 0)] for chain in q]
bad = sum(a != b for a, b in zip(q, s)) + abs(len(q) - len(s))
print("yes" if not bad else "no (%d of %d differ)" % (bad, len(q)))
EOF
)
log "server vs symdb query on batch 0: same frames: $same"
echo "meta commit=$commit runs=$runs requests=$requests seconds=$seconds conns=$conns threads=${threads:-default} same=${same// /_}" >> "$raw"
stack_bytes=$(curl_json "http://127.0.0.1:$port_main/v1/symbolize" "$in/stack.json" application/json | wc -c)

# ---- measuring ------------------------------------------------------------------
# The server's CPU (user + system, all threads) from its own getrusage(2),
# read through /metrics (symdb_serve_cpu_seconds_total): microseconds, not
# /proc's 10 ms ticks.  The two /metrics requests cost the server ~0.1 ms.
cpu_of() {
	python3 -c '
import re, sys, urllib.request
t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=30).read().decode()
v = re.findall(r"^symdb_serve_cpu_seconds_total\{mode=\"\w+\"\} ([0-9.]+)$", t, re.M)
assert len(v) == 2, "no symdb_serve_cpu_seconds_total in /metrics"
print("%.6f" % sum(map(float, v)))' "$1"
}
# wrk_kv: wrk's text -> key=value (req_per_s, p50_us, p99_us, non200)
wrk_kv() {
	python3 -c '
import re, sys
t = sys.stdin.read()
def us(v, u):
    return float(v) * {"us": 1, "ms": 1e3, "s": 1e6, "m": 6e7}[u]
rps = re.search(r"Requests/sec:\s*([\d.]+)", t)
pct = {p: us(v, u) for p, v, u in re.findall(r"^\s*(50|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", t, re.M)}
n2 = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", t)
reqs = re.search(r"(\d+) requests in", t)
print("requests=%s items=%d req_per_s=%s items_per_s=%.1f p50_us=%.1f p99_us=%.1f non200=%s" % (
    reqs.group(1) if reqs else 0, int(reqs.group(1)) * 1000 if reqs else 0, rps.group(1) if rps else 0,
    float(rps.group(1)) * 1000 if rps else 0, pct.get("50", 0), pct.get("99", 0),
    n2.group(1) if n2 else 0))'
}
# one WAY TIMED
one() {
	local way=$1 t=$2 load c0 c1 out pid=$pid_main port=$port_main
	load=$(cut -d' ' -f1 /proc/loadavg)
	case $way in
	stack|stack-bin) pid=$pid_stacks port=$port_stacks ;;
	stack-nocache|stack-bin-nocache) pid=$pid_nocache port=$port_nocache ;;
	esac
	c0=$(cpu_of "$port")
	case $way in
	json-c) out=$("$client" run --connect "127.0.0.1:$port" --type application/json \
		--conns "$conns" --requests "$requests" --out "$sink" "${jsons[@]}") ;;
	bin-c) out=$("$client" run --connect "127.0.0.1:$port" --type application/x-symdb-batch \
		--conns "$conns" --requests "$requests" --out "$sink" "${bins[@]}") ;;
	json-wrk) out=$(wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$root/bench/serve_wrk.lua" \
		"http://127.0.0.1:$port" -- application/json "${jsons[@]}" | wrk_kv) ;;
	bin-wrk) out=$(wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$root/bench/serve_wrk.lua" \
		"http://127.0.0.1:$port" -- application/x-symdb-batch "${bins[@]}" | wrk_kv) ;;
	stack|stack-nocache) out=$("$client" run --connect "127.0.0.1:$port" \
		--type application/json --conns 1 --requests 2000 --items 64 --out "$sink" "$in/stack.json") ;;
	stack-bin|stack-bin-nocache) out=$("$client" run --connect "127.0.0.1:$port" \
		--type application/x-symdb-batch --conns 1 --requests 2000 --items 64 --out "$sink" \
		"$in/stack.0000.bin") ;;
	query) out=$("$client" pipe --addrs "$addrs" --out "$sink" -- "$symdb" --db "$db" query \
		--obj "$pylib" --output-style=JSON | tr '\n' ' ') ;;
	llvm) out=$("$client" pipe --addrs "$addrs" --out "$sink" -- llvm-symbolizer-14 \
		--obj "$pylib" --output-style=JSON | tr '\n' ' ') ;;
	hit) out=$("$build/bench/bench_serve_cache" --runs 1 --iters 200000 \
		--value-bytes "$stack_bytes" | tail -1) ;;
	esac
	c1=$(cpu_of "$port")
	case $way in
	query|llvm|hit) ;;
	*) out="$out server_cpu_s=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.6f", b - a }')" ;;
	esac
	((t)) && echo "run $way load=$load $out" >> "$raw"
	return 0
}

ways=(json-c json-wrk query llvm stack stack-nocache hit)
# The binary ways, when every answer is a 200 that symdb_batch_response_parse() accepts.
if "$client" run --connect "127.0.0.1:$port_main" --type application/x-symdb-batch --conns 1 \
	--requests 100 --check-binary "${bins[@]}" 2>> "$work/binary-check.err" |
	grep -q 'non200=0 bad_body=0'; then
	ways+=(bin-c bin-wrk stack-bin stack-bin-nocache)
else
	log "binary ways skipped: the server's binary answers were not all 200s that parse ($work/binary-check.err)"
	echo "skip binary" >> "$raw"
fi
log "warm-up round"
for w in "${ways[@]}"; do one "$w" 0; done
for ((k = 0; k < runs; k++)); do
	log "round $((k + 1)) of $runs"
	nw=${#ways[@]}
	for ((j = 0; j < nw; j++)); do one "${ways[$(((j + k) % nw))]}" 1; done
done

# ---- report ---------------------------------------------------------------------
python3 - "$raw" "$cmdline" "$stack_bytes" <<'EOF'
import re, statistics, sys
raw, cmdline, stack_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
meta, runs = {}, {}
for line in open(raw):
    f = line.split()
    kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
    if f[0] == "meta":
        meta = kv
    elif f[0] == "run":
        runs.setdefault(f[1], []).append(kv)
def med(way, key, scale=1.0, fmt="%.0f"):
    v = [float(r[key]) * scale for r in runs.get(way, []) if key in r]
    if not v:
        return "-"
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(v), min(v), max(v))
def loads(way):
    v = [float(r["load"]) for r in runs.get(way, [])]
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)) if v else "-"
def cpu_per_addr(way, cpu_keys):
    v = []
    for r in runs.get(way, []):
        items = float(r.get("items", 0))
        if items:
            v.append(sum(float(r.get(k, 0)) for k in cpu_keys) / items * 1e9)
    return "%.0f (%.0f-%.0f)" % (statistics.median(v), min(v), max(v)) if v else "-"
print("`%s`, commit `%s`, %s rounds, %s connections, server threads %s; server answers = "
      "`symdb query` on batch 0: %s\n" % (cmdline, meta.get("commit"), meta.get("runs"),
      meta.get("conns"), meta.get("threads"), meta.get("same", "?").replace("_", " ")))
print("| way | addresses/s, median (min-max) | p50 ms | p99 ms | server CPU ns/address | client CPU ns/address | load avg | runs |")
print("|---|---|---|---|---|---|---|---|")
names = {"json-c": "JSON, C client", "bin-c": "binary, C client", "json-wrk": "JSON, wrk",
         "bin-wrk": "binary, wrk", "query": "`symdb query` over a pipe",
         "llvm": "llvm-symbolizer-14 over a pipe"}
for way in ("bin-c", "json-c", "bin-wrk", "json-wrk", "query", "llvm"):
    if way not in runs:
        continue
    server = ["server_user_s", "server_sys_s"] if way in ("query", "llvm") else ["server_cpu_s"]
    client = [] if "wrk" in way else ["client_user_s", "client_sys_s"]
    print("| %s | %s | %s | %s | %s | %s | %s | %d |" % (
        names[way], med(way, "items_per_s"), med(way, "p50_us", 1e-3, "%.2f"),
        med(way, "p99_us", 1e-3, "%.2f"), cpu_per_addr(way, server),
        cpu_per_addr(way, client) if client else "(wrk)", loads(way), len(runs[way])))
print()
print("Repeated 64-frame stack (its JSON answer: %d bytes): one request at a time, 1 connection" % stack_bytes)
print()
print("| way | p50 us | p99 us | server CPU us/request | load avg | runs |")
print("|---|---|---|---|---|---|")
for way, name in (("stack", "JSON, cache on (a hit)"), ("stack-nocache", "JSON, `--cache-size 0`"),
                  ("stack-bin", "binary, cache on (a hit)"),
                  ("stack-bin-nocache", "binary, `--cache-size 0`")):
    if way in runs:
        v = [float(r["server_cpu_s"]) / float(r["requests"]) * 1e6 for r in runs[way]]
        print("| %s | %s | %s | %.1f (%.1f-%.1f) | %s | %d |" % (name, med(way, "p50_us", 1, "%.1f"),
              med(way, "p99_us", 1, "%.1f"), statistics.median(v), min(v), max(v), loads(way), len(runs[way])))
if "hit" in runs:
    print("| in process: key + lookup + copy (bench_serve_cache) | %s ns CPU | | | %s | %d |" % (
        med("hit", "ns_per_hit_cpu", 1, "%.0f"), loads("hit"), len(runs["hit"])))
EOF
