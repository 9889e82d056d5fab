#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dwarf_kmod.sh SYMDB SCRATCH [ROOT]: real Linux kernel modules with their
# debug files, compared with llvm-symbolizer-14 on every address of every
# executable section in LLVM, GNU and JSON styles (dwcompare.py).  Looks for
# ROOT/lib/modules/VERSION/kernel/**.ko (or .ko.xz/.ko.zst, decompressed into
# SCRATCH) whose debug file ROOT/usr/lib/debug/lib/modules/VERSION/... exists
# (Debian's linux-image-*-dbg), ROOT being / unless given.  For each of up
# to SYMDB_KMOD_COUNT (default 4) such modules, smallest first plus the
# largest: the debug .ko itself, and the installed module (no debuglink:
# llvm-symbolizer-14 finds no debug file for it, symbols only).
# Exit 77 with a message when the machine has no module with its debug file.
set -euo pipefail
symdb=${1:?usage: dwarf_kmod.sh SYMDB SCRATCH [ROOT]}
scratch=${2:?}
root=${3:-/}
here=$(cd "$(dirname "$0")" && pwd)
work="$scratch/kmod"
rm -rf "$work"
mkdir -p "$work"
count=${SYMDB_KMOD_COUNT:-4}

command -v llvm-symbolizer-14 >/dev/null || { echo "SKIP: llvm-symbolizer-14 not found"; exit 77; }
pairs=()
for dbgdir in "$root"/usr/lib/debug/lib/modules/*/kernel; do
	[[ -d $dbgdir ]] || continue
	ver=$(basename "$(dirname "$dbgdir")")
	while IFS= read -r dbg; do
		rel=${dbg#"$dbgdir"/}
		for ext in "" .xz .zst; do
			mod="$root/lib/modules/$ver/kernel/$rel$ext"
			[[ -f $mod ]] && { pairs+=("$(stat -c %s "$dbg") $dbg $mod"); break; }
		done
	done < <(find "$dbgdir" -name '*.ko' -type f)
done
if ((${#pairs[@]} == 0)); then
	echo "SKIP: no kernel module with its debug file under $root (install linux-image-\$(uname -r)-dbg)"
	exit 77
fi
mapfile -t sorted < <(printf '%s\n' "${pairs[@]}" | sort -n)
pick=("${sorted[@]:0:$((count - 1))}")
((${#sorted[@]} >= count)) && pick+=("${sorted[-1]}")

fail=0
n=0
for p in "${pick[@]}"; do
	read -r _ dbg mod <<<"$p"
	n=$((n + 1))
	local_mod="$work/$n-$(basename "${mod%.xz}")"
	local_mod=${local_mod%.zst}
	case $mod in
	*.xz) xz -dc "$mod" >"$local_mod" ;;
	*.zst) zstd -qdc "$mod" >"$local_mod" ;;
	*) cp "$mod" "$local_mod" ;;
	esac
	for obj in "$dbg" "$local_mod"; do
		python3 "$here/dwcompare.py" --symdb "$symdb" --db "$work/db" --obj "$obj" \
			--style LLVM,GNU,JSON || fail=1
	done
done
exit $fail
