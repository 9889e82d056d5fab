#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb query --kernel` with DWARF, on fixtures standing in for the running
# kernel (this machine has no vmlinux, no /proc/modules, no /lib/modules):
# - a vmlinux-shaped ELF with DWARF (kernel_vmlinux.c) whose build-id the
#   fake /sys/kernel/notes carries (after a Xen note, as real notes have),
#   found in the second --debug-dir (the first holds one with another
#   build-id), in a debug directory's .build-id tree (addresses on stdin), or
#   under --kernel-root's usr/lib/debug/boot/vmlinux-RELEASE;
#   kallsyms moved by a KASLR offset: every answer equals llvm-symbolizer-14
#   on the vmlinux at address - offset (LLVM and GNU styles, with and
#   without inlines);
# - a module (.ko-shaped, tests/fixtures/dw_kmod.c + dw_reloc.c) listed in
#   the fake /proc/modules with its .text in the fake sysfs: addresses in
#   .text equal llvm-symbolizer-14 on the .ko at the offset into .text; an
#   address in its .init.text and one of a module whose .ko is missing
#   answer from kallsyms;
# - notes with another build-id: no vmlinux is used, kallsyms answers.
# On main before `--kernel` existed every part fails (unknown option).
source "$(dirname "$0")/../cli/lib.sh"
require gcc ld objcopy
src=$(cd "$(dirname "$0")" && pwd)
fx=$src/../fixtures

rel=6.99.0-test
kaslr=0x1e00000
db=$SCRATCH/db
root=$SCRATCH/root
sys=$SCRATCH/sys/module
mkdir -p "$root/usr/lib/debug/boot" "$root/lib/modules/$rel/kernel/drivers" "$sys" \
	"$SCRATCH/d1" "$SCRATCH/d2"

cflags=(-O2 -g -fno-pie -no-pie -mcmodel=kernel -ffreestanding -nostdlib -static
	-Wl,--build-id=sha1 -Wl,-Ttext-segment=0xffffffff81000000 -Wl,-e,start_kernel)
gcc "${cflags[@]}" "$src/kernel_vmlinux.c" -o "$SCRATCH/vmlinux"
gcc "${cflags[@]}" -DOTHER "$src/kernel_vmlinux.c" -o "$SCRATCH/vmlinux-other"
[[ $(build_id "$SCRATCH/vmlinux") != "$(build_id "$SCRATCH/vmlinux-other")" ]] ||
	fail "the two vmlinux fixtures share a build-id"
cp "$SCRATCH/vmlinux-other" "$SCRATCH/d1/vmlinux-$rel"
cp "$SCRATCH/vmlinux" "$SCRATCH/d2/vmlinux"

# the module: two units merged by ld -r with a build-id, as kbuild links one
m=$SCRATCH/mod
mkdir -p "$m"
gcc -c -O2 -g -fno-pie -mcmodel=kernel "$fx/dw_reloc.c" -o "$m/a.o"
gcc -c -O2 -g -fno-pie -mcmodel=kernel "$fx/dw_kmod.c" -o "$m/b.o"
ld -r --build-id=sha1 "$m/a.o" "$m/b.o" -o "$m/kmod-fx.ko"
cp "$m/kmod-fx.ko" "$root/lib/modules/$rel/kernel/drivers/"
text=0xffffffffc0002000 init=0xffffffffc0010000 gone=0xffffffffc0020000
for mod in kmod_fx kmodgone; do mkdir -p "$sys/$mod/sections"; done
printf '%s\n' $text >"$sys/kmod_fx/sections/.text"
printf '0xffffffffc0008000\n' >"$sys/kmod_fx/sections/.data"
printf '%s\n' $init >"$sys/kmod_fx/sections/.init.text"
printf '%s\n' $gone >"$sys/kmodgone/sections/.text"
printf 'kmod_fx 16384 0 - Live %s\nkmodgone 8192 0 - Live %s\n' $text $gone >"$SCRATCH/modules"

# kallsyms: the vmlinux's symbols moved by kaslr, the module's .text and
# .init.text symbols at their load addresses, kmodgone's one function
python3 - "$SCRATCH/vmlinux" "$m/kmod-fx.ko" $kaslr $text $init $gone >"$SCRATCH/kallsyms" <<'PY'
import subprocess, sys
vm, ko, kaslr, text, init, gone = sys.argv[1], sys.argv[2], *[int(x, 16) for x in sys.argv[3:]]
for line in subprocess.run(["llvm-nm-14", "--defined-only", vm], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    a, t, n = line.split()
    print("%016x %s %s" % (int(a, 16) + kaslr, t, n))
sec = {".text": text, ".init.text": init}
out = subprocess.run(["llvm-readelf-14", "-sW", ko], capture_output=True, text=True,
                     check=True).stdout
names = {}
for l in subprocess.run(["llvm-readelf-14", "-SW", ko], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    l = l.replace("[ ", "[")
    f = l.split()
    if f and f[0].startswith("[") and f[0].endswith("]") and len(f) > 1:
        names[f[0][1:-1]] = f[1]
for l in out.splitlines():
    f = l.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6].isdigit() and names.get(f[6]) in sec:
        print("%016x t %s\t[kmod_fx]" % (sec[names[f[6]]] + int(f[1], 16), f[7]))
print("%016x t gone_fn\t[kmodgone]" % gone)
PY
# the notes: a Xen-like note, then the vmlinux's build-id note
objcopy -O binary --only-section=.note.gnu.build-id "$SCRATCH/vmlinux" "$SCRATCH/bid.note"
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<III", 4, 4, 6) + b"Xen\0" + b"\1\0\0\0")' \
	>"$SCRATCH/notes"
cat "$SCRATCH/bid.note" >>"$SCRATCH/notes"
objcopy -O binary --only-section=.note.gnu.build-id "$SCRATCH/vmlinux-other" "$SCRATCH/other.notes"

# kallsyms_names ADDR...: the kallsyms line at or below each address
# (the fixture's symbols are unique per address)
kallsyms_names() {
	python3 - "$SCRATCH/kallsyms" "$@" <<'PY'
import sys
syms = sorted((int(l.split()[0], 16), l.split()[2]) for l in open(sys.argv[1]))
for a in sys.argv[2:]:
    a = int(a, 0)
    print(max((s for s in syms if s[0] <= a), default=(0, "??"))[1])
PY
}

kq() {
	"$SYMDB" query --db "$db" --kernel --kallsyms "$SCRATCH/kallsyms" --kernel-release $rel \
		--kernel-modules "$SCRATCH/modules" --sysfs-module "$sys" "$@"
}

# ---- the vmlinux --------------------------------------------------------------
# functions with their sizes: offsets inside them (past a function's end
# the vmlinux knows nothing and kallsyms' inferred size answers instead)
mapfile -t fns < <(llvm-nm-14 -S --defined-only "$SCRATCH/vmlinux" | awk '$3 ~ /^[Tt]$/ && $4 != "_stext" {print $1, $2}')
((${#fns[@]} >= 3)) || fail "vmlinux fixture: ${#fns[@]} functions"
vaddrs=() runtime=()
for f in "${fns[@]}"; do
	read -r a sz <<<"$f"
	for off in 0 4 9 17 30; do
		((off < 0x$sz)) || continue
		v=$((0x$a + off))
		vaddrs+=("$(printf '0x%x' $v)")
		runtime+=("$(printf '0x%x' $((v + kaslr)))")
	done
done
compare_vmlinux() { # WHAT ARGS...: symdb query --kernel ARGS vs llvm-symbolizer on the vmlinux
	local what=$1
	shift
	for style in "" --output-style=GNU --no-inlines "--functions=short --no-inlines"; do
		# shellcheck disable=SC2086
		run kq "$@" $style "${runtime[@]}"
		expect_ok "$what $style"
		# shellcheck disable=SC2086
		llvm_query "$SCRATCH/vmlinux" $style "${vaddrs[@]}" >"$SCRATCH/want"
		diff -u "$SCRATCH/want" "$OUT" >"$SCRATCH/diff" ||
			fail "$what $style: differs from llvm-symbolizer-14 at address - KASLR offset:
$(head -30 "$SCRATCH/diff")"
	done
	grep -q 'kernel_vmlinux.c:[1-9]' "$OUT" || fail "$what: no file:line from the vmlinux"
}
compare_vmlinux "vmlinux in the second --debug-dir" --kernel-notes "$SCRATCH/notes" \
	--kernel-root "$root" --debug-dir "$SCRATCH/d1" --debug-dir "$SCRATCH/d2"

# the build-id tree of a debug directory (.build-id/xx/rest.debug), the
# addresses on stdin
id=$(build_id "$SCRATCH/vmlinux")
mkdir -p "$SCRATCH/d3/.build-id/${id:0:2}"
cp "$SCRATCH/vmlinux" "$SCRATCH/d3/.build-id/${id:0:2}/${id:2}.debug"
printf '%s\n' "${runtime[@]}" >"$SCRATCH/runtime"
run_in "$SCRATCH/runtime" kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" \
	--debug-dir "$SCRATCH/d3"
expect_ok "vmlinux in .build-id, stdin"
llvm_query "$SCRATCH/vmlinux" "${vaddrs[@]}" >"$SCRATCH/want"
diff -u "$SCRATCH/want" "$OUT" >"$SCRATCH/diff" ||
	fail "vmlinux in .build-id, stdin: differs from llvm-symbolizer-14:
$(head -30 "$SCRATCH/diff")"

cp "$SCRATCH/vmlinux" "$root/usr/lib/debug/boot/vmlinux-$rel"
compare_vmlinux "vmlinux under ROOT/usr/lib/debug/boot" --kernel-notes "$SCRATCH/notes" \
	--kernel-root "$root"
rm "$root/usr/lib/debug/boot/vmlinux-$rel"

# an inline chain is there to compare: some address has more than one frame
run kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" --debug-dir "$SCRATCH/d2" \
	"${runtime[@]}"
grep -qE '^(leaf|mid)$' "$OUT" || fail "no inlined frame (leaf, mid) in the vmlinux answers"

# notes of another kernel: nothing matches, kallsyms names each function
run kq --kernel-notes "$SCRATCH/other.notes" --kernel-root "$root" --debug-dir "$SCRATCH/d2" \
	"${runtime[@]}"
expect_ok "another kernel's notes"
grep -q 'kernel_vmlinux.c' "$OUT" && fail "another kernel's notes: the vmlinux was used"
want=$(kallsyms_names "${runtime[@]}")
[[ $(awk 'NR % 3 == 1' "$OUT") == "$want" ]] || fail "another kernel's notes: not kallsyms' names: $(cat "$OUT")"

# ---- modules ------------------------------------------------------------------
tsize=$(llvm-readelf-14 -SW "$m/kmod-fx.ko" | sed -n 's/.* \.text  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
[[ -n $tsize ]] || fail "module fixture: no .text size"
mapfile -t mfns < <(awk '/\[kmod_fx\]/ {print $1}' "$SCRATCH/kallsyms")
moffs=() mrun=() expect_kallsyms=()
for a in "${mfns[@]}"; do
	if ((0x$a >= init)); then
		expect_kallsyms+=("$(printf '0x%x' $((0x$a + 2)))")
		continue
	fi
	for off in 0 3 8 16 32 48 64; do
		((0x$a - text + off < 0x$tsize)) || continue
		moffs+=("$(printf '0x%x' $((0x$a - text + off)))")
		mrun+=("$(printf '0x%x' $((0x$a + off)))")
	done
done
((${#moffs[@]} >= 6)) || fail "module fixture: ${#moffs[@]} .text addresses"
((${#expect_kallsyms[@]} >= 1)) || fail "module fixture: no .init.text symbol"
for style in "" --output-style=GNU --no-inlines; do
	# shellcheck disable=SC2086
	run kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" $style "${mrun[@]}"
	expect_ok "module .text $style"
	# shellcheck disable=SC2086
	llvm_query "$m/kmod-fx.ko" $style "${moffs[@]}" >"$SCRATCH/want"
	diff -u "$SCRATCH/want" "$OUT" >"$SCRATCH/diff" ||
		fail "module .text $style: differs from llvm-symbolizer-14 on the .ko at the offset into .text:
$(head -30 "$SCRATCH/diff")"
done
grep -q 'dw_reloc.c:[1-9]' "$OUT" || fail "module: no file:line from the .ko"

# .init.text and the module without a file: kallsyms
run kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" "${expect_kallsyms[@]}" \
	"$(printf 0x%x $((gone + 5)))"
expect_ok "kallsyms fallback"
want=$(kallsyms_names "${expect_kallsyms[@]}" "$(printf 0x%x $((gone + 5)))")
[[ $(awk 'NR % 3 == 1' "$OUT") == "$want" ]] || fail "kallsyms fallback: got $(cat "$OUT"), expected $want"
grep -q '^??:0:0$' "$OUT" || fail "kallsyms fallback: a file:line where kallsyms has none"
run kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" --output-style=JSON "$(printf 0x%x $((gone + 5)))"
grep -q '"ModuleName":"\[kmodgone\]"' "$OUT" || fail "JSON ModuleName of a module without a file: $(cat "$OUT")"
# JSON: the image that answered; an unparsable line names the kernel (not
# the module of the line before it)
run kq --kernel-notes "$SCRATCH/notes" --kernel-root "$root" --debug-dir "$SCRATCH/d2" \
	--output-style=JSON "${runtime[0]}" "${mrun[0]}" "$(printf 0x%x $((gone + 5)))" junk
expect_ok "JSON"
python3 - "$OUT" <<'PY' || fail "JSON ModuleNames: $(cat "$OUT")"
import json, sys
names = [r["ModuleName"] for r in json.load(open(sys.argv[1]))]
sys.exit(names != ["vmlinux", "kmod-fx.ko", "[kmodgone]", "[kernel.kallsyms]"])
PY
note "kernel_dwarf: ok"
