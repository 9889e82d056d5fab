#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fixtures.sh SYMDB SCRATCH GROUP: builds the DWARF fixtures of GROUP at test
# time and compares `symdb query` with llvm-symbolizer-14 on EVERY address of
# every executable section, in LLVM, GNU and JSON output styles.  Groups:
#   matrix    dw_inline.c and dw_cxx.cpp with gcc and clang, -O0/-O2/-O3,
#             -gdwarf-4 and -gdwarf-5; gcc -flto (cross-unit references);
#             -no-pie and -shared
#   compress  -gz=zlib, objcopy zlib-gnu (.zdebug_*) and zstd (compared with
#             llvm-symbolizer on the uncompressed copy: it cannot read zstd)
#   options   sources compiled by relative path (so comp_dir and include
#             directories matter), compared with --relativenames,
#             --basenames, --functions=short and --no-inlines; DWARF 5 also
#             with --verbose and --print-source-context-lines=3
#   cross     dw_nostd.c with clang for powerpc64, powerpc (big-endian),
#             i386 and aarch64, DWARF 4 and 5, linked by ld.lld
#   split     -ffunction-sections + --gc-sections; stripped binary + separate
#             debug file found by build-id (--debug-dir) and by .gnu_debuglink;
#             a debuglink whose CRC does not match is not used (both sides)
#   m32       dw_inline.c with gcc -m32 against glibc (needs gcc-multilib)
#   reloc     relocatable objects (`-c`): dw_inline.c, dw_cxx.cpp and
#             dw_reloc.c with gcc and clang, -O0/-O2, DWARF 4 and 5,
#             -ffunction-sections on and off; dw_reloc.c for aarch64,
#             i386, arm, thumb, ppc64, ppc and riscv64 (clang); two objects merged by
#             `ld -r` (several units, as in a kernel module); with and
#             without --inlines; DATA requests on the data sections
#   module    a .ko-shaped object (.modinfo, build-id, .gnu_debuglink,
#             stripped with --strip-debug) whose debug file is found by
#             build-id and by debuglink
#   dwo       split DWARF (-gsplit-dwarf): dwo_{a,b,c}.cpp -O2 with gcc and
#             clang (also with -fsplit-dwarf-inlining, with and without one
#             of its .dwo files), DWARF 4 (GNU extension) and 5: .dwo files beside the
#             objects, a .dwp package (llvm-dwp-14; binutils dwp for
#             DWARF 4) with the .dwo files gone, one .dwo missing (one
#             warning, the skeleton's line table), comp_dir "." compared
#             from inside and outside the build directory, an absolute
#             dwo_name, no comp_dir at all, a .dwo of another build (DWO
#             id mismatch) and a .dwo that is not ELF; gcc DWARF 5 with
#             -fdebug-types-section (two .debug_info.dwo per .dwo) and clang
#             -gsplit-dwarf=single (the split units in the objects)
# Exit 77 (skipped, never a pass) when a compiler, linker or target a group
# needs is missing: the parts that can run still run and are compared.
# With SYMDB_TEST_SANITIZED set (the ASan+UBSan lane, CMake sets it) symdb
# runs alone on every address (dwcompare.py), in every output style a
# comparison names, and on every DATA request in one style: each must be
# answered without a sanitizer report; the plain lane made the comparison.
set -euo pipefail
symdb=${1:?usage: fixtures.sh SYMDB SCRATCH GROUP}
scratch=${2:?}
group=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../fixtures" && pwd)
work="$scratch/dwarf-$group"
rm -rf "$work"
mkdir -p "$work"
db="$work/db"
fail=0
styles="LLVM GNU JSON"

# compare BIN [dwcompare args...]: every style of $styles in one dwcompare
# run, so one build, one address list and one interpreter per binary (a run
# per style built the binary three times).  The sanitizer lane runs symdb in
# every style too (--sanitized-all-styles): inline chains, --verbose and
# source context go through each style's printer.
compare() {
	local bin=$1
	shift
	dwcompare --obj "$bin" --style "${styles// /,}" "$@"
}

# dwcompare ARGS...: one dwcompare.py run on this group's database (compare
# and flush)
dwcompare() {
	python3 "$here/dwcompare.py" --symdb "$symdb" --db "$db" --sanitized-all-styles "$@" ||
		fail=1
}

# later BIN [dwcompare args...]: compare BIN at the next flush, with every
# other binary queued with the same styles and arguments: one dwcompare run,
# one build and one run of each tool per style for all of them ('FILE ADDR'
# requests).  Most of these tests' time was starting llvm-symbolizer-14
# (some 80 ms a start here, 3,500 page faults) and symdb per binary and
# style.  Only for binaries that stay as they are until the flush, and
# arguments that mean the same from any directory.
declare -A queued=()
queue_keys=()
later() {
	local bin=$1
	shift
	local key="${styles// /,}"$'\x1f'"$*"
	[[ -v queued[$key] ]] || queue_keys+=("$key")
	queued[$key]+="$bin"$'\n'
}

flush() {
	local key bins args style b objs
	for key in "${queue_keys[@]}"; do
		style=${key%%$'\x1f'*}
		args=${key#*$'\x1f'}
		mapfile -t bins < <(printf '%s' "${queued[$key]}")
		objs=()
		for b in "${bins[@]}"; do objs+=(--obj "$b"); done
		# shellcheck disable=SC2086  # the queued arguments, split as given (none has a space)
		dwcompare "${objs[@]}" --style "$style" $args
	done
	queued=()
	queue_keys=()
}

have() { command -v "$1" >/dev/null 2>&1; }
skipped=0
skip() { echo "SKIP: $*"; skipped=1; }

matrix() {
	for cc in gcc clang; do
		local cxx=g++
		[[ $cc == clang ]] && cxx=clang++
		have $cc && have $cxx || { skip "$cc or $cxx not found"; continue; }
		for opt in -O0 -O2 -O3; do
			for dw in 4 5; do
				local b="$work/in-$cc$opt-v$dw"
				$cc $opt -g -gdwarf-$dw "$srcdir/dw_inline.c" -o "$b"
				later "$b"
				b="$work/cxx-$cc$opt-v$dw"
				$cxx $opt -g -gdwarf-$dw "$srcdir/dw_cxx.cpp" -o "$b"
				later "$b"
			done
		done
	done
	# LTO: concrete DIEs refer to the early-debug unit (DW_FORM_ref_addr)
	for dw in 4 5; do
		gcc -O2 -g -gdwarf-$dw -flto "$srcdir/dw_inline.c" -o "$work/lto-v$dw"
		later "$work/lto-v$dw"
		g++ -O2 -g -gdwarf-$dw -flto "$srcdir/dw_cxx.cpp" -o "$work/ltoxx-v$dw"
		later "$work/ltoxx-v$dw"
	done
	# non-PIE (Base_Address 0x400000) and a shared object
	gcc -O2 -g -no-pie "$srcdir/dw_inline.c" -o "$work/nopie"
	later "$work/nopie"
	g++ -O2 -g -gdwarf-4 -shared -fPIC "$srcdir/dw_cxx.cpp" -o "$work/libxx.so"
	later "$work/libxx.so"
	flush
}

m32() {
	# i386 with glibc: needs gcc-multilib (the cross group covers i386
	# without a C library)
	if ! gcc -m32 -O2 -g "$srcdir/dw_inline.c" -o "$work/m32" 2>"$work/m32.err"; then
		skip "gcc -m32 cannot link here: $(head -1 "$work/m32.err")"
		return
	fi
	compare "$work/m32"
}

options() {
	# JSON's StartAddress under --functions=short is the reader's business
	# (symbol-table override), compared in the cli oracle tests.
	styles="LLVM GNU"
	mkdir -p "$work/src"
	cp "$srcdir/dw_inline.c" "$srcdir/dw_cxx.cpp" "$work/src/"
	for cc in gcc clang; do
		local cxx=g++
		[[ $cc == clang ]] && cxx=clang++
		have $cc && have $cxx || { skip "$cc or $cxx not found"; continue; }
		for dw in 4 5; do
			(cd "$work" && $cc -O2 -g -gdwarf-$dw src/dw_inline.c -o "rel-$cc-v$dw" &&
				$cxx -O2 -g -gdwarf-$dw src/dw_cxx.cpp -o "relxx-$cc-v$dw")
			for b in "$work/rel-$cc-v$dw" "$work/relxx-$cc-v$dw"; do
				for o in --relativenames --basenames --functions=short --no-inlines; do
					later "$b" --llvm-arg=$o --query-arg=$o
				done
				((dw == 5)) || continue
				# the verbose form (every field of every frame) and source
				# context read from the files DWARF names (DWARF 5 only: CI time)
				styles="LLVM GNU" later "$b" --llvm-arg=--verbose --query-arg=--verbose
				o=--print-source-context-lines=3
				styles="LLVM JSON" later "$b" --llvm-arg=$o --query-arg=$o
			done
		done
	done
	flush
}

cross() {
	have clang && have ld.lld || { skip "clang or ld.lld not found"; return; }
	for t in powerpc64-linux-gnu powerpc-linux-gnu i386-linux-gnu aarch64-linux-gnu; do
		for dw in 4 5; do
			local b="$work/nostd-$t-v$dw"
			clang --target=$t -O2 -g -gdwarf-$dw -nostdlib -fuse-ld=lld -static \
				"$srcdir/dw_nostd.c" -o "$b"
			later "$b"
		done
	done
	flush
}

compress() {
	local plain="$work/plain"
	gcc -O2 -g -gdwarf-5 "$srcdir/dw_inline.c" -o "$plain"
	gcc -O2 -g -gdwarf-5 -gz=zlib "$srcdir/dw_inline.c" -o "$work/gz-zlib"
	compare "$work/gz-zlib"
	g++ -O2 -g -gdwarf-4 -gz=zlib "$srcdir/dw_cxx.cpp" -o "$work/gz-zlib-cxx"
	compare "$work/gz-zlib-cxx"
	objcopy --compress-debug-sections=zlib-gnu "$plain" "$work/zdebug"
	compare "$work/zdebug"
	if objcopy --compress-debug-sections=zstd "$plain" "$work/zstd" 2>/dev/null; then
		compare "$work/zstd" --oracle-obj "$plain"
	else
		skip "objcopy cannot write zstd sections here"
	fi
}

split() {
	local b="$work/gc"
	gcc -O2 -g -gdwarf-5 -ffunction-sections -Wl,--gc-sections "$srcdir/dw_inline.c" -o "$b"
	compare "$b"
	g++ -O2 -g -gdwarf-4 -ffunction-sections -Wl,--gc-sections "$srcdir/dw_cxx.cpp" -o "$b-cxx"
	compare "$b-cxx"

	# by build-id, in a --debug-dir / --debug-file-directory
	b="$work/bid"
	g++ -O2 -g -gdwarf-5 "$srcdir/dw_cxx.cpp" -o "$b.full"
	local id
	id=$(readelf -n "$b.full" | awk '/Build ID/ {print $3}')
	mkdir -p "$work/dbg/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$b.full" "$work/dbg/.build-id/${id:0:2}/${id:2}.debug"
	strip -g "$b.full" -o "$b"
	compare "$b" --build-arg=--debug-dir="$work/dbg" \
		--llvm-arg=--debug-file-directory="$work/dbg"

	# by .gnu_debuglink, beside the binary and in .debug/
	for where in . .debug; do
		local d="$work/link-$where"
		mkdir -p "$d/$where"
		gcc -O2 -g -gdwarf-4 -Wl,--build-id=none "$srcdir/dw_inline.c" -o "$d/prog.full"
		objcopy --only-keep-debug "$d/prog.full" "$d/$where/prog.debug"
		strip -g "$d/prog.full" -o "$d/prog"
		(cd "$d/$where" && objcopy --add-gnu-debuglink=prog.debug "$d/prog")
		compare "$d/prog" --llvm-arg=--debug-file-directory=/nonexistent
	done

	# a debuglink whose CRC does not match the debug file: not used
	d="$work/link-badcrc"
	mkdir -p "$d"
	gcc -O2 -g -Wl,--build-id=none "$srcdir/dw_inline.c" -o "$d/prog.full"
	objcopy --only-keep-debug "$d/prog.full" "$d/prog.debug"
	strip -g "$d/prog.full" -o "$d/prog"
	(cd "$d" && objcopy --add-gnu-debuglink=prog.debug prog)
	printf 'x' >>"$d/prog.debug"
	compare "$d/prog" --llvm-arg=--debug-file-directory=/nonexistent
	if "$symdb" --db "$db" info "$d/prog" | grep -q 'DWARF units indexed *[1-9]'; then
		echo "FAIL: a debuglink with a bad CRC was followed"
		fail=1
	fi
}

compare_data() { # OBJ: DATA requests on every byte of its data sections
	local obj=$1 max style
	# the largest SHF_ALLOC section without SHF_EXECINSTR (all start at 0)
	max=$(python3 - "$obj" <<-'PY'
		import struct, sys
		d = open(sys.argv[1], "rb").read()
		shoff, = struct.unpack_from("<Q", d, 0x28)
		n, = struct.unpack_from("<H", d, 0x3C)
		m = 0
		for i in range(n):
		    f = struct.unpack_from("<IIQQQQIIQQ", d, shoff + 64 * i)
		    if f[2] & 2 and not f[2] & 4:  # SHF_ALLOC, not SHF_EXECINSTR
		        m = max(m, f[5])
		print(m)
		PY
	)
	((max > 0)) || { echo "FAIL: $obj: no data section"; fail=1; return; }
	seq 0 $((max + 1)) | awk '{ printf "DATA 0x%x\n", $1 }' >"$obj.data"
	for style in $styles; do
		if [[ -n ${SYMDB_TEST_SANITIZED:-} ]]; then # the sanitizer lane: symdb alone
			if "$symdb" --db "$db" query --obj "$obj" --output-style=$style <"$obj.data" \
				>"$obj.got" 2>"$obj.err" && ! grep -qE 'Sanitizer|runtime error:' "$obj.err"; then
				echo "$obj [DATA $style]: $((max + 2)) requests answered, no sanitizer report"
			else
				echo "FAIL: $obj [DATA $style]: $(tail -5 "$obj.err")"
				fail=1
			fi
			break # one style: the others format the same answers
		fi
		llvm-symbolizer-14 --obj "$obj" --output-style=$style <"$obj.data" >"$obj.want"
		"$symdb" --db "$db" query --obj "$obj" --output-style=$style <"$obj.data" >"$obj.got"
		if cmp -s "$obj.want" "$obj.got"; then
			echo "$obj [DATA $style]: $((max + 2)) requests identical"
		else
			echo "FAIL: $obj [DATA $style]:"
			diff "$obj.want" "$obj.got" | head -10
			fail=1
		fi
	done
}

reloc() {
	# DATA requests after the flush: on the objects its build indexed
	local cc cxx opt dw fs b tag data_objs=()
	for cc in gcc clang; do
		cxx=g++
		[[ $cc == clang ]] && cxx=clang++
		have $cc && have $cxx || { skip "$cc or $cxx not found"; continue; }
		for opt in -O0 -O2; do
			for dw in 4 5; do
				for fs in "" -ffunction-sections; do
					tag=$cc$opt-v$dw${fs:+-fs}
					b="$work/in-$tag.o"
					$cc -c $opt -g -gdwarf-$dw $fs "$srcdir/dw_inline.c" -o "$b"
					later "$b"
					b="$work/cxx-$tag.o"
					$cxx -c $opt -g -gdwarf-$dw $fs "$srcdir/dw_cxx.cpp" -o "$b"
					later "$b"
					b="$work/rel-$tag.o"
					$cc -c $opt -g -gdwarf-$dw $fs "$srcdir/dw_reloc.c" -o "$b"
					later "$b"
					data_objs+=("$b")
				done
			done
		done
	done
	# without inline frames, one object of each compiler
	for cc in gcc clang; do
		have $cc || continue
		b="$work/noinl-$cc.o"
		$cc -c -O2 -g "$srcdir/dw_inline.c" -o "$b"
		later "$b" --llvm-arg=--no-inlines --query-arg=--no-inlines
	done
	# aarch64: clang only needs the target, dw_reloc.c needs no headers
	if have clang; then
		for opt in -O0 -O2; do
			for dw in 4 5; do
				for fs in "" -ffunction-sections; do
					b="$work/a64$opt-v$dw${fs:+-fs}.o"
					clang --target=aarch64-linux-gnu -c $opt -g -gdwarf-$dw $fs \
						"$srcdir/dw_reloc.c" -o "$b"
					later "$b"
					data_objs+=("$b")
				done
			done
		done
	fi
	# sections given addresses (sh_addr) that overlap: the first executable
	# section in header order answers, symbols and relocations move with
	# their sections
	b="$work/shaddr.o"
	gcc -c -O2 -g "$srcdir/dw_reloc.c" -o "$b"
	python3 - "$b" <<-'PY'
		import struct, sys
		p = sys.argv[1]
		d = bytearray(open(p, "rb").read())
		shoff, = struct.unpack_from("<Q", d, 0x28)
		n, stx = struct.unpack_from("<HH", d, 0x3C)
		fmt = "<IIQQQQIIQQ"
		names = struct.unpack_from(fmt, d, shoff + 64 * stx)[4]
		for i in range(n):
		    f = list(struct.unpack_from(fmt, d, shoff + 64 * i))
		    name = d[names + f[0]:d.index(0, names + f[0])]
		    if name in (b".text.unlikely", b".text.other"):
		        f[3] = 0x30 if name == b".text.unlikely" else 0x40
		        struct.pack_into(fmt, d, shoff + 64 * i, *f)
		open(p, "wb").write(d)
		PY
	later "$b"
	# other relocation flavours: REL (i386, arm, thumb), big-endian (ppc64,
	# ppc), RISC-V ADD/SUB pairs
	if have clang; then
		for t in i386-linux-gnu arm-linux-gnueabihf thumbv7-linux-gnueabihf \
			powerpc64-linux-gnu powerpc-linux-gnu riscv64-linux-gnu; do
			b="$work/$t.o"
			clang --target=$t -c -O2 -g -gdwarf-5 -ffunction-sections \
				"$srcdir/dw_reloc.c" -o "$b"
			later "$b"
		done
	fi
	# several units in one object, merged by ld -r as a kernel module is
	if have ld; then
		for dw in 4 5; do
			gcc -c -O2 -g -gdwarf-$dw "$srcdir/dw_inline.c" -o "$work/m1-v$dw.o"
			gcc -c -O2 -g -gdwarf-$dw -ffunction-sections -Dmain=main2 -Dother=other2 \
				"$srcdir/dw_reloc.c" \
				-o "$work/m2-v$dw.o"
			ld -r "$work/m1-v$dw.o" "$work/m2-v$dw.o" -o "$work/merged-v$dw.o"
			later "$work/merged-v$dw.o"
		done
	fi
	flush
	for b in "${data_objs[@]}"; do compare_data "$b"; done
}

module() {
	# A .ko-shaped object without kernel headers: two units (dw_reloc.c with
	# -ffunction-sections, dw_kmod.c with .modinfo, .init.text and
	# .exit.text) merged by ld -r with a build-id note, as kbuild links one.
	have ld && have objcopy || { skip "ld or objcopy not found"; return; }
	local m="$work/mod" id
	mkdir -p "$m"
	for dw in 4 5; do
		gcc -c -O2 -g -gdwarf-$dw -fno-pie -mcmodel=kernel -ffunction-sections \
			"$srcdir/dw_reloc.c" -o "$m/a-v$dw.o"
		gcc -c -O2 -g -gdwarf-$dw -fno-pie -mcmodel=kernel "$srcdir/dw_kmod.c" -o "$m/b-v$dw.o"
		ld -r --build-id=sha1 "$m/a-v$dw.o" "$m/b-v$dw.o" -o "$m/full-v$dw.ko"
		compare "$m/full-v$dw.ko"
		compare_data "$m/full-v$dw.ko"
		# stripped, its debug file under a build-id directory: llvm-symbolizer
		# 14 reads build-ids from PT_NOTE only and an object has none, so
		# neither finds it (symbols only, both sides)
		id=$(readelf -n "$m/full-v$dw.ko" | awk '/Build ID/ {print $3}')
		mkdir -p "$m/dbg/.build-id/${id:0:2}"
		objcopy --only-keep-debug "$m/full-v$dw.ko" "$m/dbg/.build-id/${id:0:2}/${id:2}.debug"
		objcopy --strip-debug "$m/full-v$dw.ko" "$m/bid-v$dw.ko"
		compare "$m/bid-v$dw.ko" --build-arg=--debug-dir="$m/dbg" \
			--llvm-arg=--debug-file-directory="$m/dbg"
		if "$symdb" --db "$db" info "$m/bid-v$dw.ko" | grep -q 'DWARF units indexed *[1-9]'; then
			echo "FAIL: a module's debug file was found by build-id (llvm-symbolizer-14 does not)"
			fail=1
		fi
		# stripped with a .gnu_debuglink to the debug file beside it
		objcopy --only-keep-debug "$m/full-v$dw.ko" "$m/link-v$dw.ko.debug"
		(cd "$m" && objcopy --strip-debug --add-gnu-debuglink=link-v$dw.ko.debug \
			"full-v$dw.ko" "link-v$dw.ko")
		compare "$m/link-v$dw.ko" --llvm-arg=--debug-file-directory=/nonexistent
		if ! "$symdb" --db "$db" info "$m/link-v$dw.ko" | grep -q 'DWARF units indexed *2'; then
			echo "FAIL: a module's debug file was not found by .gnu_debuglink"
			fail=1
		fi
	done
}

# dwo: compile the three units into DIR with CXX and FLAGS (relative
# paths, from DIR, so that comp_dir is what the flags make it).
dwo_build() { # DIR CXX FLAGS...
	local d=$1 cxx=$2
	shift 2
	mkdir -p "$d"
	cp "$srcdir/dwo.h" "$srcdir"/dwo_?.cpp "$d/"
	(cd "$d" && for u in a b c; do $cxx -O2 -g -gsplit-dwarf "$@" -c dwo_$u.cpp -o $u.o; done &&
		$cxx a.o b.o c.o -o prog)
}

# symdb build's stderr names each missing .dwo once, and llvm-symbolizer-14
# says nothing about it (measured: no output on stderr).
dwo_warns() { # BIN MISSING_PATH [REASON]
	local bin=$1 missing=$2 why=${3:-not found} err n
	rm -rf "$work/wdb"
	err=$("$symdb" --db "$work/wdb" build "$bin" 2>&1 >/dev/null) || true
	n=$(grep -cxF "symdb: warning: $missing: split DWARF file $why" <<<"$err" || true)
	if [[ $n != 1 || $(wc -l <<<"$err") != 1 ]]; then
		echo "FAIL: $bin: expected one warning for $missing ($why), got: $err"
		fail=1
	fi
	err=$(llvm-symbolizer-14 --obj "$bin" 0x0 2>&1 >/dev/null)
	[[ -z $err ]] || echo "note: llvm-symbolizer-14 now says: $err"
}

# More .dwo files than one indexer run takes: 260 one-function units and
# main, the five past the 256th each named in one warning; the build
# succeeds.
dwo_many() {
	local d="$work/many" err n
	mkdir -p "$d"
	for i in $(seq 1 260); do
		echo "int f$i(int x) { return x * $i; }" >"$d/f$i.c"
	done
	echo "int main(void) { return 0; }" >"$d/main.c"
	(cd "$d" && gcc -O1 -g -gsplit-dwarf -c f*.c main.c && gcc f*.o main.o -o prog)
	rm -rf "$work/mdb"
	err=$("$symdb" --db "$work/mdb" build "$d/prog" 2>&1 >/dev/null) || {
		echo "FAIL: $d/prog: build failed: $err"
		fail=1
	}
	n=$(grep -c "^symdb: warning: $d/.*\.dwo: split DWARF file not read: more than 256 .dwo files (a .dwp package has no limit)$" <<<"$err" || true)
	if [[ $n != 5 || $(wc -l <<<"$err") != 5 ]]; then
		echo "FAIL: $d/prog: expected 5 warnings past 256 .dwo files, got $n: $err"
		fail=1
	fi
}

dwo() {
	have llvm-dwp-14 || { skip "llvm-dwp-14 not found"; }
	for cc in gcc clang; do
		local cxx=g++
		[[ $cc == clang ]] && cxx=clang++
		have $cxx || { skip "$cxx not found"; continue; }
		for dw in 4 5; do
			local d="$work/$cc-v$dw"
			dwo_build "$d" $cxx -gdwarf-$dw
			compare "$d/prog"
			if have llvm-dwp-14; then
				# the package alone: the .dwo files moved away
				mkdir -p "$d/pkg" "$d/away"
				cp "$d/prog" "$d/pkg/prog"
				llvm-dwp-14 -e "$d/prog" -o "$d/pkg/prog.dwp"
				mv "$d"/*.dwo "$d/away/"
				compare "$d/pkg/prog"
				if [[ $cc$dw == gcc4 ]] && have dwp; then
					mkdir -p "$d/gpkg"
					cp "$d/prog" "$d/gpkg/prog"
					(cd "$d/away" && cp *.dwo "$d/" && dwp -e "$d/prog" -o "$d/gpkg/prog.dwp")
					rm -f "$d"/*.dwo
					compare "$d/gpkg/prog"
				fi
				mv "$d/away"/*.dwo "$d/"
			fi
			# one .dwo missing
			mv "$d/b.dwo" "$d/b.dwo.gone"
			compare "$d/prog"
			dwo_warns "$d/prog" "$d/b.dwo"
			mv "$d/b.dwo.gone" "$d/b.dwo"
		done
		if [[ $cc == clang ]]; then
			# -fsplit-dwarf-inlining: the skeletons also carry the
			# inlining (short names, no declaration lines), which
			# LLVM reads only when a unit's .dwo is not found
			for dw in 4 5; do
				local s="$work/inl-v$dw"
				dwo_build "$s" $cxx -gdwarf-$dw -fsplit-dwarf-inlining
				compare "$s/prog"
				mv "$s/b.dwo" "$s/b.dwo.gone"
				compare "$s/prog"
				mv "$s/b.dwo.gone" "$s/b.dwo"
			done
		fi
		if [[ $cc == gcc ]]; then
			# -fdebug-types-section: gcc 12 writes two .debug_info.dwo
			# into each .dwo, the type units' first; the one holding the
			# compile unit must be read (the first was, and every split
			# unit was lost without a warning)
			local t="$work/types-v5"
			dwo_build "$t" $cxx -gdwarf-5 -fdebug-types-section
			compare "$t/prog"
		else
			# -gsplit-dwarf=single: each split unit stays in its object
			# file, beside the object's skeleton .debug_info (which was
			# read instead of the .dwo sections)
			for dw in 4 5; do
				local o="$work/single-v$dw"
				mkdir -p "$o"
				cp "$srcdir/dwo.h" "$srcdir"/dwo_?.cpp "$o/"
				(cd "$o" && for u in a b c; do
					$cxx -O2 -g -gsplit-dwarf=single -gdwarf-$dw -c dwo_$u.cpp -o $u.o
				done && $cxx a.o b.o c.o -o prog)
				compare "$o/prog"
			done
		fi
		# comp_dir ".": found from the build directory, missing elsewhere
		local r="$work/rel-$cc" flag="-fdebug-compilation-dir=."
		[[ $cc == gcc ]] && flag="-fdebug-prefix-map=$r=."
		dwo_build "$r" $cxx $flag
		(cd "$r" && compare prog)
		compare "$r/prog"
	done
	# an absolute dwo_name (gcc names the .dwo by the absolute -o)
	local a="$work/abs"
	mkdir -p "$a/obj"
	for u in a b c; do
		g++ -O2 -g -gsplit-dwarf -c "$srcdir/dwo_$u.cpp" -o "$a/obj/$u.o"
	done
	g++ "$a"/obj/?.o -o "$a/prog"
	(cd / && compare "$a/prog")
	# no comp_dir: the dwo_name is relative to the working directory
	local n="$work/nocd"
	dwo_build "$n" g++ -gdwarf-5
	python3 "$here/dwo_nocompdir.py" "$n/prog"
	(cd "$n" && compare prog)
	compare "$n/prog"
	# a .dwo of another build of b (its DWO id differs), then not ELF
	local m="$work/mismatch"
	dwo_build "$m" g++ -gdwarf-5
	(cd "$m" && sed 's/n \* 2, nullptr/n * 3, nullptr/' dwo_b.cpp >b2.cpp &&
		g++ -O2 -g -gsplit-dwarf -c b2.cpp -o b2.o && mv b2.dwo b.dwo)
	compare "$m/prog"
	echo "not an object" >"$m/b.dwo"
	compare "$m/prog"
	dwo_warns "$m/prog" "$m/b.dwo" "not an ELF file"
	dwo_many
}

case $group in
reloc) reloc ;;
module) module ;;
matrix) matrix ;;
dwo) dwo ;;
cross) cross ;;
options) options ;;
compress) compress ;;
split) split ;;
m32) m32 ;;
*) echo "dwarf_fixtures.sh: unknown group $group" >&2; exit 2 ;;
esac
((fail)) && exit 1
((skipped)) && exit 77
exit 0
