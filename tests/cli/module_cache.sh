#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# module_cache.sh: the body cache on a "MODULE ADDR" stream (no --obj),
# keyed by image and address (cli_query.h, cli_query_cache_key_tagged).
# One set of addresses is asked of four fixtures of different content, each
# through two symbolic links (one image, two paths), and of a module that
# does not exist, the lines shuffled, so that a later window finds most of
# its (image, address) pairs cached: an answer cached for another image, or
# for the missing module, would print another function or "??" where
# llvm-symbolizer-14 names one.  The whole output must be the oracle's
# bytes in the LLVM, GNU and --print-address styles, and in JSON (which is
# not cached on such a stream: it names the module in the body).
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
mods=$SCRATCH/mods
mkdir -p "$mods"
targets=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie"
	"$FIXTURES/full/c_clang_O2_pie" "$FIXTURES/full/lib_clang_O2.so")
run "$SYMDB" build --db "$db" "${targets[@]}"
expect_ok "build"

python3 - "$mods" "$SCRATCH/in.txt" "${targets[@]}" <<'PY'
import os, random, subprocess, sys
mods, inp, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
rng = random.Random(18042)
addrs = set()
for t in targets:
    out = subprocess.check_output(["llvm-nm-14", "--defined-only", t]).decode()
    addrs |= {int(f[0], 16) for f in (l.split() for l in out.splitlines())
              if len(f) == 3 and f[1] in "tT" and int(f[0], 16)}
addrs = sorted(addrs)
paths = []
for i, t in enumerate(targets):
    for k in range(2):
        p = os.path.join(mods, "t%d-%d" % (i, k))
        os.symlink(t, p)
        paths.append(p)
paths.append(os.path.join(mods, "missing"))
# 400 addresses (each of some fixture's functions, a few bytes in), asked
# of every path again and again: 50,000 lines, several windows.
hot = [a + rng.randrange(4) for a in rng.sample(addrs, min(400, len(addrs)))]
lines = ["%s 0x%x" % (rng.choice(paths), rng.choice(hot)) for _ in range(50000)]
with open(inp, "w") as f:
    f.write("\n".join(lines) + "\n")
PY

n=0
for opts in "" "--output-style=GNU" "--print-address" "--output-style=JSON"; do
	# shellcheck disable=SC2086 # opts is a list of words
	llvm-symbolizer-14 --debug-file-directory=/nonexistent $opts <"$SCRATCH/in.txt" \
		>"$SCRATCH/expect" 2>/dev/null || true
	# shellcheck disable=SC2086
	run_in "$SCRATCH/in.txt" "$SYMDB" query --db "$db" --no-build $opts
	no_crash "module stream $opts"
	cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "module stream $opts: output differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
	n=$((n + 1))
done
note "$n runs over 50000 lines of 9 module paths equal llvm-symbolizer-14's"
