#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb info` labels every field: each output line is "LABEL VALUE" with a
# label from the documented list (README "info"), and no raw number stands
# for a name: no "type 3", no "flags 0x2", no "build counter 6".  Checked
# for every kind of image: ELF executable and PIE (ET_EXEC, ET_DYN), a
# shared object, a .dynsym-only binary, a separate .debug file, and Mach-O
# executable, dylib and dSYM companion.  The values named are checked
# against llvm-readelf-14 / llvm-readobj-14 (type, machine, class, endian,
# build-id, base address, DWARF present, symbol table).
source "$(dirname "$0")/lib.sh"
require objcopy llvm-readobj-14

labels='uuid|image name|index file|storage|format version|object format|object type|machine|cpu subtype|flags|address size|base address|index bytes|symbols|functions|inline nodes|line rows|files|segments|table bytes|source file bytes|symbol entries read|symbols dropped|DWARF units indexed|DWARF units skipped|DWARF versions|source XXH3|debug file XXH3|symbol table|alt symbol table|verify'
db=$SCRATCH/db
val() { sed -n "s/^$1  *//p" "$OUT"; }

# Every line labelled, no raw code in place of a name.
check_lines() {
	local what=$1 bad
	bad=$(awk -v L="^($labels) +[^ ]" '$0 !~ L' "$OUT")
	[[ -z $bad ]] || fail "$what: line without a known label: $bad"
	bad=$(grep -nE 'type [0-9]|^flags +0x|counter|BUILD_INFO\[|elf-[0-9]|unknown' "$OUT" || true)
	[[ -z $bad ]] || fail "$what: raw value where a name belongs: $bad"
	for l in uuid "object format" "object type" machine flags "symbol table" verify; do
		[[ $(val "$l") ]] || fail "$what: no '$l' line"
	done
}

check_elf() {
	local what=$1 file=$2 dwarf_from=${3:-$2} h t
	run "$SYMDB" info --db "$db" "$file"
	expect_ok "info $what"
	check_lines "$what"
	h=$(llvm-readelf-14 -h "$file" 2>/dev/null)
	t=$(awk '$1 == "Type:" {print $2}' <<<"$h")
	[[ $(val "object type") == *"(ET_$t)" ]] || fail "$what: object type '$(val "object type")', llvm-readelf-14 says $t"
	[[ $(awk '$1 == "Class:" {print $2}' <<<"$h") == ELF64 && $(val "object format") == "ELF64, little-endian" ]] ||
		fail "$what: object format '$(val "object format")'"
	grep -q 'Machine: *Advanced Micro Devices X86-64' <<<"$h" && [[ $(val machine) == x86_64 ]] ||
		fail "$what: machine '$(val machine)'"
	[[ $(val uuid) == "$(build_id "$file") (GNU build-id)" ]] || fail "$what: uuid '$(val uuid)'"
	local base
	base=$(llvm-readelf-14 -l "$file" 2>/dev/null | awk '$1 == "LOAD" {print $3}' | sort | head -1)
	[[ $(val "base address") == "$(printf '0x%x' "$base")" ]] ||
		fail "$what: base address '$(val "base address")', lowest PT_LOAD $base"
	# (grep the text whole: grep -q on a pipe would SIGPIPE llvm-readelf-14
	# under pipefail)
	local secs dsecs
	secs=$(llvm-readelf-14 -S "$file" 2>/dev/null) dsecs=$(llvm-readelf-14 -S "$dwarf_from" 2>/dev/null)
	if grep -q '\.debug_info' <<<"$dsecs"; then
		[[ $(val flags) == *"HAS_DWARF"* ]] || fail "$what: flags '$(val flags)' lack HAS_DWARF"
	else
		[[ $(val flags) == none ]] || fail "$what: flags '$(val flags)', expected none"
	fi
	if grep -q ' \.symtab ' <<<"$secs"; then
		[[ $(val "symbol table") == "ELF .symtab" ]] || fail "$what: symbol table '$(val "symbol table")'"
	else
		[[ $(val "symbol table") == "ELF .dynsym only" ]] || fail "$what: symbol table '$(val "symbol table")'"
	fi
	note "$what: $(val "object type"); flags $(val flags); $(val "symbol table")"
}

full=$FIXTURES/full
objcopy --only-keep-debug "$full/c_clang_O2_nopie" "$SCRATCH/prog.debug" || fail objcopy
run "$SYMDB" build --db "$db" "$BIN/c_gcc_O2_nopie.symtab" "$full/c_gcc_O2_pie" \
	"$full/lib_gcc_O2.so" "$BIN/lib_clang_O2.so.dynsym" "$SCRATCH/prog.debug"
expect_ok build
check_elf "ELF executable" "$BIN/c_gcc_O2_nopie.symtab"
check_elf "ELF PIE with DWARF" "$full/c_gcc_O2_pie"
check_elf "ELF shared object" "$full/lib_gcc_O2.so"
check_elf "ELF .dynsym only" "$BIN/lib_clang_O2.so.dynsym"
check_elf "separate debug file" "$SCRATCH/prog.debug"
[[ $(val "debug file XXH3") ]] || fail "debug file: no 'debug file XXH3' line"

# Mach-O, from the fixtures macho.fixtures compiles.
mo=${MACHO_FIXTURES:-}
if [[ -n $mo && -f $mo/app_x86_64 ]]; then
	declare -A mh=([0x1]=MH_OBJECT [0x2]=MH_EXECUTE [0x6]=MH_DYLIB [0x8]=MH_BUNDLE [0xA]=MH_DSYM)
	dsym=$mo/app_x86_64.dSYM/Contents/Resources/DWARF/app_x86_64
	run "$SYMDB" build --db "$db" "$mo/app_x86_64" "$mo/libmo_x86_64.dylib"
	expect_ok "build Mach-O"
	# The dSYM alone, in its own database: with its binary it is one image.
	run "$SYMDB" build --db "$SCRATCH/dsymdb" "$mo/app_x86_64.dSYM"
	expect_ok "build dSYM"
	for f in "$mo/app_x86_64" "$mo/libmo_x86_64.dylib" "$dsym"; do
		mdb=$db
		[[ $f == "$dsym" ]] && mdb=$SCRATCH/dsymdb
		run "$SYMDB" info --db "$mdb" "$f"
		expect_ok "info $f"
		check_lines "Mach-O $(basename "$f")"
		r=$(llvm-readobj-14 --file-headers "$f")
		ft=$(sed -n 's/.*FileType: .*(\(0x[0-9A-F]*\)).*/\1/p' <<<"$r")
		st=$(sed -n 's/.*CpuSubType: \(CPU_SUBTYPE_[A-Z0-9_]*\) .*/\1/p' <<<"$r")
		[[ $(val "object type") == *"(${mh[$ft]})" ]] ||
			fail "$f: object type '$(val "object type")', llvm-readobj-14 says FileType $ft"
		[[ $(val "cpu subtype") == "$st "* ]] || fail "$f: cpu subtype '$(val "cpu subtype")', llvm-readobj-14 says $st"
		[[ $(val machine) == x86_64 && $(val "object format") == "Mach-O 64-bit, little-endian" ]] ||
			fail "$f: machine/format '$(val machine)' '$(val "object format")'"
		[[ $(val "symbol table") == "Mach-O LC_SYMTAB" ]] || fail "$f: symbol table '$(val "symbol table")'"
		note "Mach-O $(basename "$f"): $(val "object type"), $(val "cpu subtype")"
	done
else
	skip_part "no Mach-O fixtures (macho.fixtures did not build them)"
fi
