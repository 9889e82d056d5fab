#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# demangle_hostile.sh: `symdb query` on an ELF whose symbol table holds the
# hostile names of issue 12 (defect 5): "_Z1fP" + 10^6 'P' + "i", a 200 KB
# nested template, a 400 KB nested function type and the 454-byte name whose
# printed size doubles with each substitution step (llvm-symbolizer-14
# crashes or grows past 4 GB demangling them), and the same doubling through
# Rust back references and Microsoft nested templates.  Each is answered with its
# raw name, in the LLVM, GNU and JSON styles, exactly as llvm-symbolizer-14
# --no-demangle prints it, in one batch with normal C++ names that stay
# demangled exactly as llvm-symbolizer-14 demangles them; and each query of
# one hostile address costs under 100 ms of CPU and 64 MiB of peak RSS more
# than the same query of a normal one (measured with wait4's rusage).
source "$(dirname "$0")/lib.sh"
require gcc

asm=$SCRATCH/hostile.s
elf=$SCRATCH/hostile.elf
db=$SCRATCH/db
python3 - "$asm" <<'PY'
import sys
def b36(n):
    d = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"; s = ""
    while True:
        s = d[n % 36] + s; n //= 36
        if n == 0: return s
doubling = "_Z1fPFv1AE"
for k in range(40):                     # S1_ S1_, S3_ S3_, ...
    sub = "S" + b36(2 * k + 1) + "_"
    doubling += "PFv" + sub + sub + "E"
assert len(doubling) == 454

def b62(n):
    d = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"; s = ""
    if n == 0: return "_"
    n -= 1
    while True:
        s = d[n % 62] + s; n //= 62
        if n == 0: return s + "_"

def rust_doubling(steps):              # each tuple holds the previous twice
    s = "INvC1a1f"; prev = len(s); s += "ThhE"
    for _ in range(steps):
        here = len(s); s += "T" + "B" + b62(prev) + "B" + b62(prev) + "E"; prev = here
    return "_R" + s + "E"

def ms_doubling(levels):               # nested templates of doubling fn types
    t = "PEAH"
    for l in range(levels + 1):
        args = t + "".join("P6AX%d%d@Z" % (i, i) for i in range(9))
        t = ("V?$A@P6AX" + args + "@Z@@") if l < levels else ("?f@@YAX" + args + "@Z")
    return t
names = [
    ("hostile", "_Z1fP" + "P" * 10**6 + "i"),
    ("normal", "_ZN3foo3barIiEEvT_"),
    ("hostile", "_Z1fI" + "1AI" * 50000 + "i" + "E" * 50000 + "Evv"),
    ("normal", "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKcm"),
    ("hostile", "_Z1f" + "PF" * 133333 + "vv" + "E" * 133333),
    ("hostile", doubling),
    ("normal", "_ZZ4mainENKUlT_E_clIiEEDaS_"),
    ("hostile", rust_doubling(36)),
    ("normal", "_RNvCs1234_7mycrate3foo"),
    ("hostile", ms_doubling(3)),
]
with open(sys.argv[1], "w") as f:
    f.write("\t.text\n\t.globl _start\n_start:\n\tret\n\t.p2align 4\nsyms_base:\n")
    for kind, n in names:
        f.write('\t.globl "%s"\n\t.type "%s", @function\n"%s":\n\t.fill 16, 1, 0x90\n'
                '\t.size "%s", 16\n' % (n, n, n, n))
with open(sys.argv[1] + ".kinds", "w") as f:
    f.write("".join(k + "\n" for k, _ in names))
PY
gcc -nostdlib -Wl,--build-id -o "$elf" "$asm" || fail "could not assemble the hostile symbol table"
base=$(llvm-nm-14 "$elf" | awk '$3 == "syms_base" { print $1 }')
[[ -n $base ]] || fail "no syms_base in $elf"
mapfile -t kinds <"$asm.kinds"
addrs=()
for i in "${!kinds[@]}"; do
	addrs+=("$(printf '0x%x' $((0x$base + 16 * i)))")
done
normal_addr=${addrs[1]}

run "$SYMDB" build --db "$db" "$elf"
expect_ok "build"

# The expected batch: llvm-symbolizer-14 itself, one address at a time (a
# hostile one with --no-demangle, the only way it survives them).
printf '%s\n' "${addrs[@]}" >"$SCRATCH/batch.in"
for style in LLVM GNU JSON; do
	: >"$SCRATCH/expect.$style"
	for i in "${!addrs[@]}"; do
		flags=()
		[[ ${kinds[i]} == hostile ]] && flags=(--no-demangle)
		echo "${addrs[i]}" | llvm_query "$elf" --output-style=$style "${flags[@]}" \
			>>"$SCRATCH/expect.$style"
	done
	run_in "$SCRATCH/batch.in" "$SYMDB" query --db "$db" --obj "$elf" --output-style=$style
	expect_ok "query --output-style=$style"
	cmp -s "$OUT" "$SCRATCH/expect.$style" ||
		fail "$style: symdb query differs from llvm-symbolizer-14 ($(diff "$OUT" "$SCRATCH/expect.$style" | head -c 400))"
	note "$style: ${#addrs[@]} addresses identical to llvm-symbolizer-14 (hostile names raw)"
done

# Cost of one hostile address over a normal one, from the child's own
# rusage (CPU, not wall time, so a loaded machine does not fail the test).
python3 - "$SYMDB" "$db" "$elf" "$normal_addr" "${addrs[@]}" -- "${kinds[@]}" <<'PY' || fail "over budget"
import os, subprocess, sys
symdb, db, elf, normal = sys.argv[1:5]
rest = sys.argv[5:]
sep = rest.index("--")
addrs, kinds = rest[:sep], rest[sep + 1:]

def cost(addr):
    p = subprocess.Popen([symdb, "query", "--db", db, "--obj", elf, addr],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit("query %s: status %#x" % (addr, status))
    return (ru.ru_utime + ru.ru_stime) * 1000.0, ru.ru_maxrss

base_ms, base_kb = min(cost(normal) for _ in range(3))
bad = 0
for addr, kind in zip(addrs, kinds):
    if kind != "hostile":
        continue
    ms, kb = min(cost(addr) for _ in range(3))
    extra_ms, extra_kb = ms - base_ms, kb - base_kb
    print("-- %s: %.1f ms CPU, %d KiB peak RSS (%+.1f ms, %+d KiB over a normal name)"
          % (addr, ms, kb, extra_ms, extra_kb))
    if extra_ms >= 100 or extra_kb >= 64 * 1024:
        bad += 1
sys.exit(1 if bad else 0)
PY
echo "PASS demangle_hostile: 6 hostile names raw in 3 styles, within 100 ms and 64 MiB each"
