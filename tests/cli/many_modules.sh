#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# many_modules.sh: one `symdb query` stream that names 5,000 module paths
# ("PATH ADDR" lines, as sanitizers and pprof speak it), the paths found by
# hash (cli_query_intern_module), and a path to a file whose image another
# path already got shares it without reading the file again.  The paths are symlinks to four fixtures
# of different content, spelled alike but for a few digits (one length, one
# directory), so a line answered from another path's module prints another
# function.  Every line is answered by symdb in one run; a sample of the
# lines (every path at least once among them) goes to llvm-symbolizer-14,
# and each sampled line's JSON object must be the oracle's; in the default
# style every line's answer must be the oracle's for its link's target.  Time is not
# asserted (the per-line cost at 10 and 5,000 paths is measured by hand).
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
mods=$SCRATCH/mods
mkdir -p "$mods"
targets=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie"
	"$FIXTURES/full/c_clang_O2_pie" "$FIXTURES/full/lib_clang_O2.so")
run "$SYMDB" build --db "$db" "${targets[@]}"
expect_ok "build"

# Symlink i points at targets[(i * 7) % 4]; three lines per path, each an
# address of a function of its target (from its symbol table), the paths
# interleaved so that consecutive lines rarely name the same module.
python3 - "$mods" "$SCRATCH/in.txt" "$SCRATCH/sample.txt" "${targets[@]}" <<'PY'
import os, random, subprocess, sys
mods, inp, sample, targets = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rng = random.Random(18005)
funcs = []
for t in targets:
    out = subprocess.check_output(["llvm-nm-14", "--defined-only", t]).decode()
    a = sorted({int(f[0], 16) for f in (l.split() for l in out.splitlines())
                if len(f) == 3 and f[1] in "tT" and int(f[0], 16)})
    funcs.append(a)
N = 5000
paths = []
for i in range(N):
    p = os.path.join(mods, "m%05d" % i)
    os.symlink(targets[(i * 7) % len(targets)], p)
    paths.append(p)
lines = []
for k in range(3):
    order = list(range(N))
    rng.shuffle(order)
    for i in order:
        a = rng.choice(funcs[(i * 7) % len(targets)]) + rng.randrange(4)
        lines.append("%s 0x%x" % (paths[i], a))
# The last line names a file other than the first line's (module 0's): an
# answer for the stream's last line left without its module shows.
def target(l):
    return (int(l.split()[0][-5:]) * 7) % len(targets)
j = next(j for j in range(len(lines) - 1, 0, -1) if target(lines[j]) != target(lines[0]))
lines[j], lines[-1] = lines[-1], lines[j]
with open(inp, "w") as f:
    f.write("\n".join(lines) + "\n")
# The sample: the first line of every 10th path, and every 97th line.
seen, pick = set(), []
for n, l in enumerate(lines):
    i = int(l.split()[0][-5:])
    if (i % 10 == 0 and i not in seen) or n % 97 == 0:
        seen.add(i)
        pick.append(n)
with open(sample, "w") as f:
    f.write("\n".join(map(str, pick)) + "\n")
PY

set +e
"$SYMDB" query --db "$db" --no-build --output-style=JSON <"$SCRATCH/in.txt" \
	>"$SCRATCH/symdb.json" 2>"$ERR"
RC=$?
set -e
[[ $RC -eq 0 ]] || fail "symdb query over 5,000 paths: exit $RC: $(head -c 300 "$ERR")"
[[ ! -s $ERR ]] || fail "symdb query over 5,000 paths wrote to stderr: $(head -c 300 "$ERR")"
python3 - "$SCRATCH/in.txt" "$SCRATCH/sample.txt" "$SCRATCH/picked.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
pick = [int(x) for x in open(sys.argv[2]).read().split()]
open(sys.argv[3], "w").write("\n".join(lines[n] for n in pick) + "\n")
PY
llvm-symbolizer-14 --output-style=JSON <"$SCRATCH/picked.txt" >"$SCRATCH/llvm.json" 2>/dev/null ||
	fail "llvm-symbolizer-14 on the sample"
python3 - "$SCRATCH/symdb.json" "$SCRATCH/llvm.json" "$SCRATCH/sample.txt" <<'PY'
import json, sys
got = open(sys.argv[1]).read().splitlines()
want = open(sys.argv[2]).read().splitlines()
pick = [int(x) for x in open(sys.argv[3]).read().split()]
if len(got) != 15000:
    sys.exit("FAIL: %d answers for 15000 lines" % len(got))
if len(want) != len(pick):
    sys.exit("FAIL: llvm-symbolizer-14 gave %d answers for %d lines" % (len(want), len(pick)))
paths, found = set(), 0
for n, w in zip(pick, want):
    if got[n] != w:
        sys.exit("FAIL: line %d:\n  symdb %s\n  llvm  %s" % (n + 1, got[n], w))
    o = json.loads(w)
    paths.add(o["ModuleName"])
    found += any(s["FunctionName"] for s in o["Symbol"])
if len(paths) < 500 or found < len(pick) * 9 // 10:
    sys.exit("FAIL: the sample covers %d paths, %d of %d lines named a function"
             % (len(paths), found, len(pick)))
print("-- %d sampled lines over %d paths equal llvm-symbolizer-14's (%d named a function)"
      % (len(pick), len(paths), found))
PY

# Every line in the default style, whose text does not name the module:
# each line's answer must be llvm-symbolizer-14's for its link's target and
# address (asked of each target with --obj, in one run each), so that a
# line whose module lookup was deferred or mixed up, wherever the batches,
# chunks and windows cut the stream, prints another function.
set +e
"$SYMDB" query --db "$db" --no-build <"$SCRATCH/in.txt" >"$SCRATCH/all.txt" 2>"$ERR"
RC=$?
set -e
[[ $RC -eq 0 ]] || fail "symdb query over 5,000 paths (LLVM style): exit $RC: $(head -c 300 "$ERR")"
python3 - "$SCRATCH/in.txt" "$SCRATCH/all.txt" <<'PY'
import os, subprocess, sys
lines = open(sys.argv[1]).read().splitlines()
got = open(sys.argv[2]).read().split("\n\n")
if got and got[-1] == "":
    got.pop()
if len(got) != len(lines):
    sys.exit("FAIL: %d answers for %d lines" % (len(got), len(lines)))
by_target = {}
for l in lines:
    path, addr = l.split()
    by_target.setdefault(os.readlink(path), []).append(addr)
answers = {}
for t, addrs in by_target.items():
    out = subprocess.run(["llvm-symbolizer-14", "--obj=" + t], input="\n".join(addrs) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(addrs):
        sys.exit("FAIL: llvm-symbolizer-14 gave %d answers for %d addresses" % (len(out), len(addrs)))
    answers[t] = iter(out)
for n, l in enumerate(lines):
    want = next(answers[os.readlink(l.split()[0])])
    if got[n] != want:
        sys.exit("FAIL: line %d (%s):\n  symdb %r\n  llvm  %r" % (n + 1, l, got[n], want))
print("-- all %d lines equal llvm-symbolizer-14's for their links' targets" % len(lines))
PY

# Paths to a file seen before share its image: over the whole stream the
# links are opened (to read their headers) a few times for each of the four
# files, not once or more for each of the 5,000 paths.
if command -v strace >/dev/null 2>&1; then
	# LeakSanitizer cannot run under ptrace (it stops the process with a
	# fatal error in a sanitizer build): no leak check for this one run.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -e trace=open,openat -o "$SCRATCH/trace" \
		"$SYMDB" query --db "$db" --no-build <"$SCRATCH/in.txt" >"$SCRATCH/plain.txt" 2>"$ERR" ||
		fail "symdb query under strace: $(head -c 300 "$ERR")"
	opens=$(grep -c "\"$mods/m[0-9]*\"" "$SCRATCH/trace" || true)
	((opens <= 4 * 4)) || fail "the 5,000 paths to four files were opened $opens times (expected at most 16)"
	note "the 5,000 paths to four files were opened $opens times"
else
	skip_part "strace not found: the opens per path are not counted"
fi
