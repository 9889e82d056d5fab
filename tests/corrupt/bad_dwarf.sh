#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bad_dwarf.sh SYMDB SCRATCH: damaged debug information must give either a
# clear one-line error or a partial index (symbols kept, the bad unit skipped
# and counted in `symdb info`), never a crash or a hang.  Each case patches a
# freshly compiled fixture with patch_elf.py:
#   truncated_info   first unit's length runs past .debug_info
#   bad_abbrev       a DIE whose abbreviation code does not exist
#   origin_cycle     a DW_AT_abstract_origin that points at its own DIE
#   ref_outside      a DW_AT_abstract_origin far outside .debug_info
#   line_header      a line program whose header_length is bogus
#   bomb             a SHF_COMPRESSED section declaring 1 TiB (refused)
#   missing_debug    a .gnu_debuglink to a file that does not exist
# (A debuglink with a mismatching CRC is covered by fixtures.sh split.)
set -uo pipefail
symdb=${1:?usage: bad_dwarf.sh SYMDB SCRATCH}
for t in gcc objcopy llvm-dwarfdump-14 python3 timeout; do
	command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
scratch=${2:?}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../fixtures" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
db="$scratch/db"
fail=0
src="$srcdir/dw_inline.c"

gcc -O2 -g -gdwarf-5 "$src" -o "$scratch/base" || exit 1
gcc -O2 -g -gdwarf-5 -gz=zlib "$src" -o "$scratch/base-gz" || exit 1
first_inlined=$(llvm-dwarfdump-14 --debug-info "$scratch/base" |
	awk '/DW_TAG_inlined_subroutine/ {print $1; exit}' | tr -d :)

# run NAME EXPECT BIN: EXPECT is "partial" (build succeeds, queries work) or
# "error" (build fails with one line naming the file).
run() {
	local name=$1 expect=$2 bin=$3
	local out rc
	out=$(timeout 60 "$symdb" --db "$db" build --force "$bin" 2>&1)
	rc=$?
	if ((rc >= 124)); then
		echo "FAIL $name: build crashed or hung (exit $rc): $out"
		fail=1
		return
	fi
	if [[ $expect == error ]]; then
		if ((rc == 0)) || [[ $(printf '%s\n' "$out" | grep -c "symdb: .*$bin") != 1 ]]; then
			echo "FAIL $name: wanted one clear error, got exit $rc: $out"
			fail=1
		else
			echo "ok   $name: $out"
		fi
		return
	fi
	if ((rc != 0)); then
		echo "FAIL $name: build failed: $out"
		fail=1
		return
	fi
	local q
	q=$(printf '0x%x\n' $(seq 4096 16 8192) | timeout 60 "$symdb" --db "$db" query --obj "$bin" 2>&1)
	rc=$?
	if ((rc >= 124)); then
		echo "FAIL $name: query crashed or hung (exit $rc)"
		fail=1
		return
	fi
	echo "ok   $name: $("$symdb" --db "$db" info "$bin" | grep -E 'units (indexed|skipped)' | tr -s ' ' | paste -sd,)"
}

patch() { python3 "$here/patch_elf.py" "$@"; }

patch "$scratch/base" "$scratch/truncated_info" u32 .debug_info 0 0x7ffffff0
run truncated_info partial "$scratch/truncated_info"

# The CU DIE's abbreviation code is the byte after the DWARF 5 unit header.
patch "$scratch/base" "$scratch/bad_abbrev" u8 .debug_info 12 0x7e
run bad_abbrev partial "$scratch/bad_abbrev"

if [[ -n $first_inlined ]]; then
	off=$((first_inlined))
	# abstract_origin is GCC's first attribute of DW_TAG_inlined_subroutine
	# (DW_FORM_ref4, relative to the unit at offset 0).
	patch "$scratch/base" "$scratch/origin_cycle" u32 .debug_info $((off + 1)) $off
	run origin_cycle partial "$scratch/origin_cycle"
	patch "$scratch/base" "$scratch/ref_outside" u32 .debug_info $((off + 1)) 0x7ffffff0
	run ref_outside partial "$scratch/ref_outside"
fi

# DWARF 5 line header: unit_length(4) version(2) address_size(1)
# seg_sel(1) header_length(4).
patch "$scratch/base" "$scratch/line_header" u32 .debug_line 8 0x7ffffff0
run line_header partial "$scratch/line_header"

# Elf64_Chdr: ch_type(4) reserved(4) ch_size(8).
patch "$scratch/base-gz" "$scratch/bomb" u64 .debug_info 8 0x10000000000
run bomb error "$scratch/bomb"

gcc -O2 -g -Wl,--build-id=none "$src" -o "$scratch/md.full"
objcopy --only-keep-debug "$scratch/md.full" "$scratch/md.debug"
strip -g "$scratch/md.full" -o "$scratch/missing_debug"
(cd "$scratch" && objcopy --add-gnu-debuglink=md.debug missing_debug)
rm -f "$scratch/md.debug"
run missing_debug partial "$scratch/missing_debug"

exit $fail
