#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perf_python.sh: `symdb perf` on a real profile.  `perf record -e cpu-clock
# -g` of a few seconds of Python work (Debian's /usr/bin/python3.11, whose
# symbols are in python3.11-dbg's debug file, plus its extension modules,
# libc, libz and the kernel); `perf script` as README "Profiles" runs it,
# piped into `symdb perf`; the oracle is `perf report --no-children` on the
# same perf.data, perf's own symbolization.  perf_compare.py compares the
# leaf function of every sample by weight (inline frames: see there; the
# names of one function, symbols at one address, count as one) and needs
# >= 99 % agreement.  The same profile with --no-debug-names (names
# from the stripped binary's .dynsym and DWARF, as llvm-symbolizer names
# them) must NOT reach 99 %: GCC's clone names (.lto_priv.0, .isra.0) are
# how perf names those functions, which shows the comparison can fail.
# Also: each distinct address once (locations <= frames), the summary line,
# the SVG rendered by a browser (svg_check.sh, when chromium is there); and
# a second profile without callchains (perf record without -g), with and
# without comm and mmap events.
# Label `slow`: it drives perf record.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/aliases.sh"
here=$(cd "$(dirname "$0")" && pwd)
require perf python3
py=/usr/bin/python3.11
[[ -x $py ]] || { echo "SKIP: no /usr/bin/python3.11"; exit 77; }
id=$(readelf -n "$py" 2>/dev/null | awk '/Build ID/ {print $3}')
if [[ ! -f /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug ]]; then
	echo "SKIP: no debug file for $py (install python3.11-dbg)"
	exit 77
fi
start=$(date +%s)

# perf keeps its build-id cache under $HOME/.debug: this test's own.
export HOME=$SCRATCH/home
mkdir -p "$HOME"
cat >"$SCRATCH/work.py" <<'PY'
import hashlib, json, re, sys, time, zlib
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
data = [{"k": i, "v": str(i) * 3, "l": list(range(i % 17))} for i in range(20000)]
pat = re.compile(r"(\d+)-(\w+)")
end = time.time() + 3
while time.time() < end:
    fib(18)
    s = json.dumps(data[:3000]); json.loads(s)
    sorted(data[:5000], key=lambda d: d["v"])
    pat.findall("12-ab 34-cd 56-ef " * 200)
    zlib.compress(s.encode()); hashlib.sha256(s.encode()).hexdigest()
PY
data=$SCRATCH/perf.data
if ! perf record -q -e cpu-clock -g -o "$data" "$py" "$SCRATCH/work.py" >"$SCRATCH/record.log" 2>&1; then
	echo "SKIP: perf record does not work here: $(tail -1 "$SCRATCH/record.log")"
	exit 77
fi

# The oracle: perf's own symbols, one line per leaf symbol with its samples.
perf report -i "$data" --no-children --stdio -n --sort sym -g none >"$SCRATCH/report.txt" \
	2>"$SCRATCH/report.err" || fail "perf report: $(tail -1 "$SCRATCH/report.err")"
# README "Profiles": the invocation symdb perf documents.
perf script --no-inline -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i "$data" \
	>"$SCRATCH/script.txt" 2>"$SCRATCH/script.err" || fail "perf script: $(tail -1 "$SCRATCH/script.err")"
perf buildid-list -i "$data" >"$SCRATCH/buildids.txt" 2>/dev/null || true

run "$SYMDB" perf --build-ids "$SCRATCH/buildids.txt" "$SCRATCH/script.txt" -o "$SCRATCH/out.folded" \
	--svg "$SCRATCH/out.svg" --title "perf_python"
[[ $RC == 0 ]] || fail "symdb perf exited $RC"
summary=$(cat "$ERR")
note "$summary"
[[ $summary =~ ^symdb\ perf:\ ([0-9]+)\ samples,\ [0-9]+\ stacks,\ ([0-9]+)\ locations ]] ||
	fail "no summary line on stderr"
samples=${BASH_REMATCH[1]} locs=${BASH_REMATCH[2]}
frames=$(grep -c $'^\t' "$SCRATCH/script.txt" || true)
((locs <= frames)) || fail "$locs locations for $frames frames"
((samples >= 100)) || { echo "SKIP: only $samples samples (a machine too loaded?)"; exit 77; }
# Aliases (symbols at one address) of every profiled image with a file.
profile_aliases "$SCRATCH/buildids.txt" "$SCRATCH/aliases.txt"
[[ -s $SCRATCH/aliases.txt ]] || fail "no function symbols read from the profiled images"
python3 "$here/perf_compare.py" --aliases "$SCRATCH/aliases.txt" "$SCRATCH/out.folded" \
	"$SCRATCH/report.txt" 99 || fail "symdb perf's leaf functions disagree with perf report's"

# The same with llvm-symbolizer's names: below 99 %, or the comparison
# could not tell the naming policies apart.
"$SYMDB" perf -q --no-debug-names "$SCRATCH/script.txt" -o "$SCRATCH/llvm.folded" ||
	fail "symdb perf --no-debug-names failed"
if python3 "$here/perf_compare.py" --aliases "$SCRATCH/aliases.txt" "$SCRATCH/llvm.folded" \
	"$SCRATCH/report.txt" 99 >"$SCRATCH/llvm.cmp"; then
	fail "--no-debug-names agrees too: $(head -1 "$SCRATCH/llvm.cmp")"
fi
note "with --no-debug-names: $(head -1 "$SCRATCH/llvm.cmp")"

# Without a callchain (perf record without -g): each sample is its header
# line alone, the command name right-aligned and the address the runtime
# one, which the mmap events map back to the file.  The same oracle.
nog=$SCRATCH/nog.data
perf record -q -e cpu-clock -o "$nog" "$py" "$SCRATCH/work.py" >"$SCRATCH/record2.log" 2>&1 ||
	fail "perf record without -g: $(tail -1 "$SCRATCH/record2.log")"
perf report -i "$nog" --no-children --stdio -n --sort sym -g none >"$SCRATCH/report2.txt" 2>/dev/null ||
	fail "perf report of the profile without callchains"
perf script -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i "$nog" \
	>"$SCRATCH/nog.txt" 2>/dev/null || fail "perf script without callchains"
grep -q '^ ' "$SCRATCH/nog.txt" || fail "perf should right-align the command name without -g"
run "$SYMDB" perf "$SCRATCH/nog.txt" -o "$SCRATCH/nog.folded"
[[ $RC == 0 ]] || fail "symdb perf without callchains exited $RC: $(cat "$ERR")"
[[ $(grep -c . "$ERR") == 1 ]] || fail "without callchains: expected the summary alone: $(cat "$ERR")"
python3 "$here/perf_compare.py" --aliases "$SCRATCH/aliases.txt" "$SCRATCH/nog.folded" \
	"$SCRATCH/report2.txt" 99 || fail "without callchains, symdb perf's names disagree with perf report's"
# Without the mmap events a runtime address of a file is placed nowhere:
# [unknown], and one line says why, never a name from a wrong offset.
grep -v PERF_RECORD_MMAP "$SCRATCH/nog.txt" >"$SCRATCH/nog_nommap.txt"
run "$SYMDB" perf "$SCRATCH/nog_nommap.txt" -o "$SCRATCH/nog_nommap.folded"
[[ $RC == 0 ]] || fail "symdb perf without mmap events exited $RC"
grep -q "lie in files no mmap event places (perf script --show-mmap-events prints them)" "$ERR" ||
	fail "without mmap events: no line saying why: $(cat "$ERR")"
awk '{ n = split($1, f, ";"); leaf = f[n]; if (leaf !~ /_\[k\]$/ && leaf != "[unknown]") bad++ }
	END { exit bad > 0 }' "$SCRATCH/nog_nommap.folded" ||
	fail "without mmap events a user-space sample was named: $(grep -v '_\[k\] \|\[unknown\] ' "$SCRATCH/nog_nommap.folded" | head -3)"
# -F without comm: the first field is PID/TID.
perf script -F pid,tid,time,period,event,ip,dso --show-mmap-events -i "$nog" >"$SCRATCH/nocomm.txt" 2>/dev/null
run "$SYMDB" perf "$SCRATCH/nocomm.txt" -o "$SCRATCH/nocomm.folded"
[[ $RC == 0 ]] || fail "symdb perf without comm exited $RC: $(cat "$ERR")"
python3 "$here/perf_compare.py" --aliases "$SCRATCH/aliases.txt" "$SCRATCH/nocomm.folded" \
	"$SCRATCH/report2.txt" 99 || fail "without comm, symdb perf's names disagree with perf report's"
note "without callchains: as perf report, with and without comm; without mmap events: [unknown]"

# The flame graph renders in a browser (svg_check.sh: title, the root
# frame, the zoom and search script), and names the hottest leaf.
hot=$(awk '/^ *[0-9.]+%/ && $4 !~ /^0x/ {print $4; exit}' "$SCRATCH/report.txt")
grep -qF "$hot" "$SCRATCH/out.svg" || fail "the SVG does not name the hottest function $hot"
if [[ -f $here/svg_check.sh ]]; then
	rc=0
	bash "$here/svg_check.sh" "$SCRATCH/out.svg" perf_python python3.11 || rc=$?
	((rc == 0 || rc == 77)) || fail "the SVG flame graph did not render"
	((rc == 0)) && note "the SVG renders (title, frames, script)"
fi
echo "ok ($(($(date +%s) - start)) s)"
