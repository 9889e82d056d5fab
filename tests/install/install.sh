#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# install.sh: `cmake --install` into a scratch prefix, then build the README's
# library example (example.c) against the installed files twice -- with
# pkg-config and with CMake find_package(symdb) -- run both on an indexed
# fixture, and check their symbol names against llvm-symbolizer-14.  Also the
# ABI hygiene checks: libsymdb.so exports only symdb_* names, and symdb.h
# compiles as C11 and as C++, included twice.  Every exported target is
# consumed: symdb::symdb (shared), symdb::symdb_static and symdb::indexer,
# each with CMake and with pkg-config (symdb.pc --static, symdb-indexer.pc);
# no internal target (symdb_warnings, the executables) is exported.  The
# llvm-symbolizer link lands in libexec/symdb/ and runs as llvm-symbolizer;
# the installed `symdb serve` runs the installed symdb-serve and answers.
# No executable, built or installed, loads libraries from the current
# directory (an empty RUNPATH entry).
source "$(dirname "$0")/../cli/lib.sh"
require cmake pkg-config gcc nm readelf curl
: "${SYMDB_BUILD:?SYMDB_BUILD (the build tree) must be set}"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
prefix=$SCRATCH/prefix
# A sanitizer build installs an instrumented library: programs linking it
# must be built with the same -fsanitize flags.
san=$(sed -n 's/^SYMDB_SANITIZE:[A-Z]*=//p' "$SYMDB_BUILD/CMakeCache.txt")
sanflags=()
[[ -n $san ]] && sanflags=(-fsanitize="$san")

# No executable, built or installed, looks for libraries in the current
# directory: an empty RUNPATH entry (CMake padded the build tree's for its
# install-time edit: ".../build/reader:") is read by the loader as ".".  A
# libz.so.1 whose constructor leaves a mark, in the directory symdb is run
# from, must not be loaded.
runpath_check() { # BIN...
	local b rp
	for b; do
		rp=$(readelf -d "$b" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
		[[ -z $rp || ! $rp =~ (^|:)(:|$) ]] || fail "$b: RUNPATH '$rp' has an empty entry (the current directory)"
	done
	mkdir -p "$SCRATCH/cwd"
	printf '#include <stdio.h>\n__attribute__((constructor)) static void mark(void) { fclose(fopen("%s/loaded", "w")); }\n' \
		"$SCRATCH/cwd" >"$SCRATCH/cwd/evil.c"
	gcc -shared -fPIC -o "$SCRATCH/cwd/libz.so.1" "$SCRATCH/cwd/evil.c" || fail "gcc (planted libz)"
	for b; do
		rm -f "$SCRATCH/cwd/loaded"
		(cd "$SCRATCH/cwd" && "$b" --version >/dev/null 2>&1) || true
		[[ ! -e $SCRATCH/cwd/loaded ]] || fail "$b loaded libz.so.1 from the current directory"
	done
}
runpath_check "$SYMDB_BUILD/tools/symdb" "$SYMDB_BUILD/tools/symdb-serve"

run cmake --install "$SYMDB_BUILD" --prefix "$prefix"
expect_ok "cmake --install"
runpath_check "$prefix/bin/symdb" "$prefix/bin/symdb-serve"
libdir=$(dirname "$(find "$prefix" -name 'libsymdb.so' | head -1)")
[[ -f $libdir/libsymdb.so ]] || fail "no libsymdb.so installed"
[[ -f $prefix/include/symdb.h && -f $prefix/include/symdb_build.h &&
   -f $prefix/include/symdb_indexer.h && -f $prefix/include/symdb_batch.h ]] || fail "headers not installed"
[[ -x $prefix/bin/symdb-indexer ]] || fail "symdb-indexer not installed"
[[ -f $libdir/pkgconfig/symdb.pc ]] || fail "symdb.pc not installed"
[[ -f $libdir/pkgconfig/symdb-indexer.pc && -f $libdir/libsymdb_indexer.a && -f $prefix/include/symdb_indexer.h ]] ||
	fail "the indexer library, its header or symdb-indexer.pc not installed"
[[ -x $prefix/bin/symdb && -x $prefix/bin/symdb-indexer ]] || fail "symdb or symdb-indexer not installed"
# The llvm-symbolizer personality: a relative link under libexec/symdb/,
# never in bin/ (it would shadow a real llvm-symbolizer), that runs as one.
link=$prefix/libexec/symdb/llvm-symbolizer
[[ -L $link ]] || fail "libexec/symdb/llvm-symbolizer is not installed as a link"
[[ $(readlink "$link") == ../../bin/symdb ]] || fail "libexec/symdb/llvm-symbolizer -> $(readlink "$link"), want ../../bin/symdb"
[[ ! -e $prefix/bin/llvm-symbolizer ]] || fail "bin/llvm-symbolizer installed: it would shadow a real one"
run "$link" --version
expect_ok "libexec/symdb/llvm-symbolizer --version"
[[ $(head -1 "$OUT") == llvm-symbolizer ]] && grep -q 'LLVM version 14' "$OUT" ||
	fail "libexec/symdb/llvm-symbolizer --version: $(head -2 "$OUT")"

note "symdb serve runs the installed symdb-serve"
[[ -x $prefix/bin/symdb-serve ]] || fail "symdb-serve not installed"
readelf -d "$prefix/bin/symdb" | grep -qi 'NEEDED.*microhttpd' &&
	fail "the installed symdb links libmicrohttpd (the server is symdb-serve's)"
"$prefix/bin/symdb" serve --db "$SCRATCH/serve-db" --listen 127.0.0.1:0 2>"$SCRATCH/serve.err" &
spid=$!
addr=
for _ in $(seq 200); do
	addr=$(sed -n 's/^symdb: serve: listening on \([^ ]*\) .*/\1/p' "$SCRATCH/serve.err")
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n $addr ]] || { kill $spid; fail "installed symdb serve: no 'listening on' line in 20 s: $(head -3 "$SCRATCH/serve.err")"; }
[[ $(readlink /proc/$spid/exe) == "$(readlink -f "$prefix/bin/symdb-serve")" ]] ||
	{ kill $spid; fail "installed symdb serve runs $(readlink /proc/$spid/exe), not symdb-serve"; }
health=$(curl -s -m 10 "http://$addr/healthz" || true)
kill $spid
wait $spid 2>/dev/null || true
[[ $health == ok* ]] || fail "installed symdb serve: /healthz answered '$health'"
run env SYMDB_SERVE=$SCRATCH/no-such-serve "$prefix/bin/symdb" serve --db "$SCRATCH/serve-db"
[[ $RC == 1 ]] && grep -q "no-such-serve: cannot run: No such file" "$ERR" ||
	fail "SYMDB_SERVE naming nothing: exit $RC, '$(head -2 "$ERR")'"
run env SYMDB_SERVE="$prefix/bin/symdb" timeout 20 "$prefix/bin/symdb" serve --db "$SCRATCH/serve-db"
[[ $RC == 1 ]] && grep -q "is this symdb, which has no server" "$ERR" ||
	fail "SYMDB_SERVE naming symdb itself: exit $RC, '$(head -2 "$ERR")'"
# its usage needs no symdb-serve, and is the one symdb-serve prints
"$prefix/bin/symdb-serve" serve --help >"$SCRATCH/serve-help" ||
	fail "symdb-serve serve --help: exit $?"
grep -q '^usage: symdb serve ' "$SCRATCH/serve-help" || fail "symdb-serve serve --help: $(head -2 "$SCRATCH/serve-help")"
for h in --help -h; do
	run env SYMDB_SERVE=$SCRATCH/no-such-serve "$prefix/bin/symdb" serve --listen 127.0.0.1:0 $h
	[[ $RC == 0 && ! -s $ERR ]] || fail "symdb serve $h without symdb-serve: exit $RC, '$(head -2 "$ERR")'"
	cmp -s "$OUT" "$SCRATCH/serve-help" || fail "symdb serve $h without symdb-serve: not symdb-serve's usage"
done

exported=$(sed -n 's/^add_library(\([^ ]*\) .*/\1/p' "$libdir"/cmake/symdb/symdb*Targets.cmake | sort | tr '\n' ' ')
[[ $exported == "symdb::indexer symdb::symdb symdb::symdb_static " ]] ||
	fail "exported targets are '$exported', want symdb::indexer symdb::symdb symdb::symdb_static"

note "exported symbols"
bad=$(nm -D --defined-only "$libdir/libsymdb.so" | awk '$2 ~ /[TDBRVW]/ {print $3}' | grep -v '^symdb_' || true)
[[ -z $bad ]] || fail "libsymdb.so exports non-symdb_ names: $(echo $bad | head -c 300)"

note "header hygiene"
printf '#include "symdb.h"\n#include "symdb.h"\n#include "symdb_build.h"\n#include "symdb_batch.h"\n#include "symdb_batch.h"\nint main(void){return symdb_strerror(0)==0;}\n' >"$SCRATCH/h.c"
run gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -Wc++-compat -fsyntax-only -I"$prefix/include" "$SCRATCH/h.c"
expect_ok "symdb.h as C11"
cp "$SCRATCH/h.c" "$SCRATCH/h.cpp"
run g++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$SCRATCH/h.cpp"
expect_ok "symdb.h as C++"

bin=$BIN/lib_gcc_O2.so.symtab
run "$SYMDB" build "$bin"
expect_ok "symdb build"
addrs=$(llvm-nm-14 --defined-only "$bin" | awk '$2 ~ /[tT]/ {print $1}' | head -8)
for a in $addrs; do
	echo "0x$a $(llvm-symbolizer-14 --obj "$bin" "0x$a" | head -1)"
done | sort >"$SCRATCH/expect"

note "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
flags=$(pkg-config --cflags --libs symdb)
run gcc -std=c11 -Wall -Werror "${sanflags[@]}" "$here/example.c" -o "$SCRATCH/ex-pc" $flags -Wl,-rpath,"$libdir"
expect_ok "build example.c with pkg-config ($flags)"
run "$SCRATCH/ex-pc" "$bin" $addrs
expect_ok "run the pkg-config example"
sort "$OUT" | sed 's/^0x0*/0x/' >"$SCRATCH/got-pc"
cmp -s "$SCRATCH/got-pc" <(sed 's/^0x0*/0x/' "$SCRATCH/expect") ||
	fail "pkg-config example: $(diff "$SCRATCH/got-pc" "$SCRATCH/expect" | head -6)"

note "pkg-config --static"
sflags=$(pkg-config --static --cflags --libs symdb | sed "s#-lsymdb#$libdir/libsymdb.a#")
run gcc -std=c11 -Wall -Werror "${sanflags[@]}" "$here/example.c" -o "$SCRATCH/ex-pcs" $sflags
expect_ok "build example.c statically with pkg-config ($sflags)"
readelf -d "$SCRATCH/ex-pcs" | grep -q 'NEEDED.*libsymdb' && fail "the static example needs libsymdb.so"
run "$SCRATCH/ex-pcs" "$bin" $addrs
expect_ok "run the static pkg-config example"
sort "$OUT" | sed 's/^0x0*/0x/' | cmp -s - "$SCRATCH/got-pc" || fail "static pkg-config example differs"

# stage_check EXE TAG: stage $bin with the indexer consumer EXE, then the
# installed symdb must call the staged file a sound index of $bin's build-id.
buildid=$(readelf -n "$bin" | sed -n 's/.*Build ID: *//p')
stage_check() {
	local stagedir=$SCRATCH/staged-$2
	rm -rf "$stagedir" && mkdir -p "$stagedir"
	run "$1" "$bin" "$stagedir" "1:$buildid"
	expect_ok "$2: stage $bin with the installed indexer library"
	grep -q '^rc=0 report_bytes=[1-9]' "$OUT" || fail "$2: no report records: $(cat "$OUT")"
	staged=$(find "$stagedir" -type f -name "$buildid*" | head -1)
	[[ -n $staged ]] || fail "$2: nothing staged in $stagedir"
	mv "$staged" "$stagedir/staged.symdb" # info takes an index file by its suffix
	run "$prefix/bin/symdb" info "$stagedir/staged.symdb"
	expect_ok "$2: installed symdb info on the staged file"
	grep -qi "$buildid" "$OUT" || fail "$2: symdb info does not show build-id $buildid"
}
note "pkg-config symdb-indexer"
iflags=$(pkg-config --static --cflags --libs symdb-indexer)
run gcc -std=c11 -Wall -Werror "${sanflags[@]}" "$here/indexer_example.c" -o "$SCRATCH/stager-pc" $iflags
expect_ok "build indexer_example.c with pkg-config ($iflags)"
stage_check "$SCRATCH/stager-pc" pc

note "cmake find_package"
run cmake -S "$here" -B "$SCRATCH/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_BUILD_RPATH="$libdir" -DCMAKE_C_FLAGS="${sanflags[*]}"
expect_ok "configure the consumer project"
run cmake --build "$SCRATCH/consumer"
expect_ok "build the consumer project"
run "$SCRATCH/consumer/example" "$bin" $addrs
expect_ok "run the find_package example"
sort "$OUT" | sed 's/^0x0*/0x/' >"$SCRATCH/got-cm"
cmp -s "$SCRATCH/got-cm" "$SCRATCH/got-pc" || fail "find_package example differs"
run "$SCRATCH/consumer/example_static" "$bin" $addrs
expect_ok "run the find_package symdb::symdb_static example"
readelf -d "$SCRATCH/consumer/example_static" | grep -q 'NEEDED.*libsymdb' &&
	fail "the symdb::symdb_static example needs libsymdb.so"
sort "$OUT" | sed 's/^0x0*/0x/' | cmp -s - "$SCRATCH/got-pc" || fail "symdb::symdb_static example differs"
stage_check "$SCRATCH/consumer/stage" cmake
echo "PASS install"
