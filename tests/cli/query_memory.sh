#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_memory.sh: `symdb query`'s memory does not grow with its batch.
# 2,000,000 uniform addresses of libpython (-O3, DWARF 5, deep inlines) on
# stdin, in JSON (the most bytes per answer: about 600), with the answers
# streamed into a pipe: the peak RSS of the symdb process (wait4's
# ru_maxrss) must stay within 64 MiB.  Before answers were streamed in
# bounded windows, each 1 MiB read of stdin had all its answers formatted
# in memory before the first was written (86 MiB here).  The answers are
# counted, and the first 3,000 must be llvm-symbolizer-14's (its JSON on
# the same lines).  No time is asserted.
source "$(dirname "$0")/lib.sh"

if grep -qaE '__(a|t|m)san_init' "$SYMDB"; then
	echo "SKIP: a sanitizer build: its shadow memory and quarantine are in the RSS"
	exit 77
fi
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')/libpython3.11.so.1.0
[[ -f $pylib ]] || { echo "SKIP: no pyenv libpython3.11 ($pylib)"; exit 77; }
db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$pylib"
expect_ok "build libpython"

# Uniform over .text, seeded.
python3 - "$pylib" "$SCRATCH/in.txt" <<'PY'
import random, subprocess, sys
out = subprocess.check_output(["llvm-readelf-14", "-SW", sys.argv[1]]).decode()
for l in out.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        start, size = int(f[3], 16), int(f[5], 16)
rng = random.Random(20261126)
with open(sys.argv[2], "w") as o:
    o.write("".join("0x%x\n" % (start + rng.randrange(size)) for _ in range(2000000)))
PY
head -n 3000 "$SCRATCH/in.txt" >"$SCRATCH/head.txt"
llvm-symbolizer-14 --obj="$pylib" --output-style=JSON <"$SCRATCH/head.txt" \
	>"$SCRATCH/llvm.json" 2>/dev/null || fail "llvm-symbolizer-14 on the first 3,000 lines"

# symdb reads the file and writes into a pipe that this reader drains; its
# rusage comes from wait4.
python3 - "$SYMDB" "$db" "$pylib" "$SCRATCH/in.txt" "$SCRATCH/llvm.json" <<'PY'
import os, subprocess, sys
symdb, db, lib, inp, llvm = sys.argv[1:]
want = open(llvm, "rb").read().splitlines()
with open(inp, "rb") as f:
    p = subprocess.Popen([symdb, "query", "--db", db, "--no-build", "--obj", lib,
                          "--output-style=JSON"], stdin=f, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
lines, first, last = 0, b"", b"\n"
while True:
    chunk = p.stdout.read(1 << 20)
    if not chunk:
        break
    if len(first) < (1 << 22):
        first += chunk
    lines += chunk.count(b"\n")
    last = chunk[-1:]
head, tail = first.split(b"\n")[:len(want)], last != b"\n"
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
rc = os.waitstatus_to_exitcode(status)
rss = ru.ru_maxrss / 1024.0
print("-- symdb query: %d answers, peak RSS %.1f MiB, %.2f s CPU" %
      (lines, rss, ru.ru_utime + ru.ru_stime))
if rc != 0 or err:
    sys.exit("FAIL: exit %d, stderr %r" % (rc, err[:300]))
if lines != 2000000 or tail:
    sys.exit("FAIL: %d answers for 2,000,000 lines (unterminated: %s)" % (lines, tail))
for n, (g, w) in enumerate(zip(head, want)):
    if g != w:
        sys.exit("FAIL: answer %d differs from llvm-symbolizer-14's:\n  symdb %s\n  llvm  %s" %
                 (n + 1, g[:400], w[:400]))
if rss > 64:
    sys.exit("FAIL: peak RSS %.1f MiB > 64 MiB" % rss)
PY
