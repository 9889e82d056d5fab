#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb query --kernel` answers kernel addresses from kallsyms:
# - the running kernel's /proc/kallsyms: a sample of function addresses, at
#   +0 and at small offsets, names a function that kallsyms itself puts at
#   that address (computed here, independently, in Python);
# - read without privileges (a non-root uid: the kernel then prints every
#   address as 0), exactly one line on stderr says so and nothing is answered;
# - a kallsyms file with malformed lines: they are skipped, the others answer;
#   a file of nothing but garbage is an error;
# - sizes inferred as perf infers them (symbols__fixup_end): up to the next
#   symbol, and the last of the kernel image or of a module to the page
#   boundary past the next page.
# On main before `--kernel` existed every part fails (unknown option).
source "$(dirname "$0")/../cli/lib.sh"
require python3

db=$SCRATCH/db
empty=$SCRATCH/empty-root # no vmlinux, no modules: kallsyms answers
mkdir -p "$empty"
kq() { "$SYMDB" query --db "$db" --kernel --kernel-root "$empty" "$@"; }

# ---- malformed lines and perf's sizes, on a fixture --------------------------
cat >"$SCRATCH/kallsyms" <<'K'
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000000 t __pi_text
ffffffff81000100 t first_fn
this line is garbage
ffffffff81000180 r some_rodata
ffffffff81000200 T second_fn extra-field
ffffffff81000200 W second_fn
zzzzzzzzzzzzzzzz T bad_address
ffffffff81000300 T
ffffffff81000300 TT two_letter_type
ffffffff81001010 T last_kernel_fn
ffffffffc0001000 t mod_a_fn	[moda]
ffffffffc0001040 t mod_a_last	[moda]
ffffffffc0003000 t mod_b_fn	[modb
ffffffffc0003000 t mod_b_fn	[modb]
K
run kq --kallsyms "$SCRATCH/kallsyms" \
	0xffffffff81000000 0xffffffff810000ff 0xffffffff81000100 0xffffffff81000180 \
	0xffffffff81000200 0xffffffff81000fff 0xffffffff81002fff 0xffffffff81003000 \
	0xffffffffc0001041 0xffffffffc0002fff 0xffffffffc0003000 0xffffffffc0003fff \
	0xffffffffc0004000 0xffffffff80000000
expect_ok "fixture kallsyms"
# perf's answers: _stext/_text tie at 0 (global, one underscore; the longer
# name wins: _stext); first_fn covers up to the next kept symbol (rodata is
# not one); second_fn is the W line (the T line is malformed); the last
# kernel symbol ends at roundup(0x...1010 + 4096, 4096) = 0x...3000; moda's
# last symbol at roundup(0x...1040 + 4096) = 0x...3000, but modb starts there;
# modb's last (and the last of all, page-aligned) at 0x...3000 + 4096.
want=$'_stext\n_stext\nfirst_fn\nfirst_fn\nsecond_fn\nsecond_fn\nlast_kernel_fn\n??\nmod_a_last\nmod_a_last\nmod_b_fn\nmod_b_fn\n??\n??'
got=$(awk 'NR % 3 == 1' "$OUT")
[[ $got == "$want" ]] || fail "fixture kallsyms: got
$got
expected
$want"

printf 'garbage\nmore garbage\n' >"$SCRATCH/garbage"
run kq --kallsyms "$SCRATCH/garbage" 0xffffffff81000000
expect_error "kallsyms of garbage" "garbage: no symbols (2 lines skipped)"

# stdin, hex with and without 0x, a line that is no address echoed
printf 'ffffffff81000100\n0xffffffff81000101\nnot-an-address\n' >"$SCRATCH/in"
run_in "$SCRATCH/in" kq --kallsyms "$SCRATCH/kallsyms"
expect_ok "stdin"
[[ $(awk 'NR <= 6 && NR % 3 == 1' "$OUT") == $'first_fn\nfirst_fn' ]] || fail "stdin: $(cat "$OUT")"
grep -qx 'not-an-address' "$OUT" || fail "stdin: the bad line was not echoed"

# DATA requests: the kallsyms symbol covering the address, its start and
# size, as llvm-symbolizer prints DATA (they were echoed as unparsable); a
# weak and a local symbol at one address: perf keeps the local one
# (choose_best_symbol: not weak before weak)
cat >"$SCRATCH/kallsyms2" <<'K'
ffffffff82000000 D some_table
ffffffff82000040 W weak_name
ffffffff82000040 t local_name
ffffffff82000080 B some_bss
K
run kq --kallsyms "$SCRATCH/kallsyms2" 'DATA 0xffffffff82000010' 'CODE 0xffffffff82000044' \
	'DATA 0xffffffff82000044'
expect_ok "DATA requests"
want=$(python3 -c 'print("some_table\n%d 64\n\nlocal_name\n??:0:0\n\nlocal_name\n%d 64" % (0xffffffff82000000, 0xffffffff82000040))')
[[ $(cat "$OUT") == "$want" ]] || fail "DATA requests: got
$(cat "$OUT")
expected
$want"

# a kallsyms that is a directory or a FIFO: refused by name, never read
run kq --kallsyms "$SCRATCH" 0xffffffff81000000
expect_error "--kallsyms DIR" "symdb: kernel: $SCRATCH: not a regular file"
mkfifo "$SCRATCH/fifo"
run timeout 20 "$SYMDB" query --db "$db" --kernel --kernel-root "$empty" --kallsyms "$SCRATCH/fifo" 0x1
expect_error "--kallsyms FIFO" "symdb: kernel: $SCRATCH/fifo: not a regular file"

# usage errors: a source without --kernel, --kernel with another image
run "$SYMDB" query --db "$db" --kallsyms "$SCRATCH/kallsyms" 0x1
expect_error "--kallsyms without --kernel" "symdb: query: --kallsyms, --kallsyms-only, --kernel-notes, --kernel-modules, --sysfs-module, --kernel-release, --kernel-root and --debug-dir need --kernel"
((RC == 2)) || fail "--kallsyms without --kernel: exit $RC, expected 2"
run kq --obj /bin/true 0x1
expect_error "--kernel with --obj" "symdb: query: give only one of --kernel, --perf-map FILE, --obj FILE, --uuid HEX and --build-id HEX"
((RC == 2)) || fail "--kernel with --obj: exit $RC, expected 2"

# ---- the running kernel ------------------------------------------------------
if [[ ! -r /proc/kallsyms ]] || ! awk '$1 !~ /^0+$/ {f=1; exit} END {exit !f}' /proc/kallsyms; then
	skip_part "/proc/kallsyms shows no addresses to this user"
else
	# Sample: t/T symbols of the kernel image; offsets that stay below the
	# next address any kallsyms line names; acceptable names: every kept
	# (T/W/D/B) name at that address.
	python3 - "$SCRATCH/sample" "$SCRATCH/names" <<'PY'
import random, sys
by_addr, order = {}, []
for line in open("/proc/kallsyms"):
    f = line.split()
    if len(f) < 3:
        continue
    a = int(f[0], 16)
    if a not in by_addr:
        by_addr[a] = []
        order.append(a)
    by_addr[a].append((f[1], f[2], len(f) > 3))
addrs = sorted(by_addr)
nxt = {a: b for a, b in zip(addrs, addrs[1:])}
cands = [a for a in addrs if a in nxt and any(t in "tT" and not mod for t, n, mod in by_addr[a])]
rnd = random.Random(15)
with open(sys.argv[1], "w") as s, open(sys.argv[2], "w") as o:
    for a in rnd.sample(cands, min(400, len(cands))):
        gap = nxt[a] - a
        ok = " ".join(sorted({n for t, n, mod in by_addr[a] if t.upper() in "TWDB"}))
        for off in sorted({0, 1 % gap, gap // 2, gap - 1}):
            s.write("0x%x\n" % (a + off))
            o.write(ok + "\n")
PY
	run_in "$SCRATCH/sample" kq
	expect_ok "/proc/kallsyms sample"
	awk 'NR % 3 == 1' "$OUT" >"$SCRATCH/got"
	n=$(wc -l <"$SCRATCH/sample")
	[[ $(wc -l <"$SCRATCH/got") == "$n" ]] || fail "sample: $(wc -l <"$SCRATCH/got") answers for $n addresses"
	bad=$(paste -d'|' "$SCRATCH/got" "$SCRATCH/names" "$SCRATCH/sample" |
		awk -F'|' '{ split($2, ok, " "); hit = 0; for (i in ok) if (ok[i] == $1) hit = 1;
		             if (!hit) print $3 ": got " $1 ", kallsyms has " $2 }' | head -5)
	[[ -z $bad ]] || fail "sample: $bad"
	note "/proc/kallsyms: $n addresses name kallsyms' own symbol"

	# The same without privileges: as uid 65534 the kernel prints zeros
	# (unless kptr_restrict=0 and perf_event_paranoid<=1 let everyone see).
	if [[ $(id -u) != 0 ]] || ! command -v setpriv >/dev/null; then
		skip_part "unprivileged read needs root and setpriv"
	elif [[ $(cat /proc/sys/kernel/kptr_restrict) == 0 ]] &&
		(($(cat /proc/sys/kernel/perf_event_paranoid) <= 1)); then
		skip_part "kptr_restrict=0 and perf_event_paranoid<=1: every user sees addresses"
	else
		chmod 755 "$SCRATCH"
		mkdir -p "$SCRATCH/nobody-db" && chmod 777 "$SCRATCH/nobody-db"
		head -1 "$SCRATCH/sample" >"$SCRATCH/one"
		chmod 644 "$SCRATCH/one"
		set +e
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$SYMDB" query --db "$SCRATCH/nobody-db" --kernel --kernel-root "$empty" \
			<"$SCRATCH/one" >"$OUT" 2>"$ERR"
		RC=$?
		set -e
		expect_error "unprivileged kallsyms" "/proc/kallsyms: every address reads as 0: the kernel hides them from this user"
		[[ -s $OUT ]] && fail "unprivileged kallsyms answered: $(cat "$OUT")"
	fi
fi
note "kernel_kallsyms: ok"
