#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-layering.sh [SRC_DIR [BUILD_DIR]]: fail when the tree breaks DESIGN.md
# (SRC_DIR defaults to the tree this script is in).
#
# Source rules (every #include of every .c/.h/.cpp under format/, reader/,
# indexer/ and tools/; a header is symdb's when a file of that name exists in
# one of those folders, and it belongs to the folder that holds it):
#   format   includes format headers only;
#   reader   format and reader headers, never libdwarf;
#   indexer  format and indexer headers, never reader's (no symdb.h, no
#            catalog) and never LMDB;
#   tools    the public headers only (reader/symdb.h, reader/symdb_build.h, reader/symdb_fetch.h,
#            indexer/symdb_indexer.h, format/include/*) and its own; never
#            libdwarf or LMDB.
# Binary rules (with BUILD_DIR): the `symdb` and `symdb-serve` executables
# define no catalog or format code of their own (they use libsymdb.so's),
# and none of them nor libsymdb.so depends on libdwarf or libseccomp
# (readelf -d, ldd) or contains indexer, libdwarf or libseccomp code (nm);
# symdb-indexer does link libseccomp and define symdb_indexer_run, so those
# checks can fail.  None depends on libcurl or libdebuginfod: symdb-fetch
# does (SPEC §12.9).  Only symdb-serve links libmicrohttpd: symdb runs it
# for `symdb serve`, and loads no HTTP or TLS library itself.
#
# Prints one line per violation, "FILE: includes HEADER (FOLDER may not
# include OWNER)", and exits 1 if there is any; 0 and one summary line if not.
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
build=${2:-}
bad=0

# owner HEADER: sets o to the folder (format, reader, indexer, tools) holding
# a file of that name, or "" for a header that is not symdb's.  (A variable,
# not a $(...) per include: thousands of forks made the check take 16 s of
# CPU, and layering.planted runs it six times.)
owner() {
	local h=${1##*/} d
	o=
	for d in format format/include reader indexer tools; do
		if [ -f "$src/$d/$h" ]; then
			o=${d%%/*}
			return
		fi
	done
}

# public HEADER: 0 when tools may include it.
public() {
	case ${1##*/} in
	symdb.h | symdb_build.h | symdb_fetch.h | symdb_indexer.h) return 0 ;;
	esac
	[ -f "$src/format/include/${1##*/}" ]
}

violation() {
	echo "$1"
	bad=1
}

# check_folder FOLDER ALLOWED-OWNERS FORBIDDEN-EXTERNAL-REGEX
check_folder() {
	local folder=$1 allowed=$2 forbidden=$3 f h o
	while IFS= read -r f; do
		while IFS= read -r h; do
			if [[ $h =~ $forbidden ]]; then
				violation "$f: includes $h ($folder may not depend on it)"
				continue
			fi
			owner "$h"
			[ -z "$o" ] && continue
			[ "$o" = "$folder" ] && continue
			if [ "$folder" = tools ]; then
				public "$h" && continue
				violation "$f: includes $h (tools may include public headers only; $h is $o's)"
			elif [[ " $allowed " != *" $o "* ]]; then
				violation "$f: includes $h ($folder may not include $o)"
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$f")
	done < <(cd "$src" && find "$folder" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) | sort)
}

cd "$src" || exit 2
check_folder format "format" '^(libdwarf|dwarf|lmdb)\.h$'
check_folder reader "format" '^(libdwarf|dwarf)\.h$'
check_folder indexer "format" '^lmdb\.h$'
check_folder tools "" '^(libdwarf|dwarf|lmdb)\.h$'

if [ -n "$build" ]; then
	for t in nm readelf; do  # without them the binary checks would pass unread
		command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
	done
	exe=$build/tools/symdb
	srv=$build/tools/symdb-serve
	lib=$(find "$build" -maxdepth 3 -name libsymdb.so -path "$build/lib*" | head -1)
	lib=${lib:-$build/lib/libsymdb.so}
	for f in "$exe" "$srv" "$lib"; do
		if [ ! -e "$f" ]; then
			violation "$f: missing (build first)"
		fi
	done
	# the server's libraries load in the process that serves only, and
	# the check can fail: symdb-serve has them
	if [ -e "$exe" ] && readelf -d "$exe" | grep -Ei 'NEEDED.*(microhttpd|gnutls|json-c)' >/dev/null; then
		violation "$exe: depends on libmicrohttpd, GnuTLS or json-c (the server is symdb-serve's)"
	fi
	if [ -e "$srv" ] && ! readelf -d "$srv" | grep -i 'NEEDED.*microhttpd' >/dev/null; then
		violation "$srv: does not link libmicrohttpd: the check above cannot fail"
	fi
	# An ASan build's tools link the static library instead (tools/CMakeLists.txt:
	# relocations at every start): one copy of the catalog either way, never two.
	san=$(sed -n 's/^SYMDB_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
	static_tools=0
	case ",$san," in *,address,*) static_tools=1 ;; esac
	for x in "$exe" "$srv"; do
		[ -e "$x" ] || continue
		# defined text symbols of the catalog and format code: libsymdb.so's own
		# are hidden, so any here is a copy linked into the executable
		copies=$(nm --defined-only "$x" | awk '$2 ~ /^[Tt]$/ {print $3}' |
			grep -E '^(rd_catalog_|catalog_|fmt_|mdb_)' | head -5 | tr '\n' ' ')
		if [ "$static_tools" = 1 ]; then
			[ -n "$copies" ] || violation "$x: an ASan build's tool without the static library's code"
			readelf -d "$x" | grep 'NEEDED.*libsymdb\.so' >/dev/null &&
				violation "$x: links libsymdb.so (an ASan build's tools link the static library)"
		else
			[ -n "$copies" ] && violation "$x: defines catalog/format code of its own: $copies"
			readelf -d "$x" | grep 'NEEDED.*libsymdb\.so' >/dev/null ||
				violation "$x: does not link libsymdb.so"
		fi
	done
	for f in "$exe" "$srv" "$lib"; do
		[ -e "$f" ] || continue
		if readelf -d "$f" | grep -i 'NEEDED.*dwarf' >/dev/null; then
			violation "$f: depends on libdwarf"
		fi
		# the sandboxes are the indexer's and the fetcher's alone
		if readelf -d "$f" | grep -i 'NEEDED.*seccomp' >/dev/null; then
			violation "$f: depends on libseccomp"
		fi
		# the network is symdb-fetch's alone (SPEC §12.9)
		if readelf -d "$f" | grep -Ei 'NEEDED.*(libcurl|libdebuginfod)' >/dev/null; then
			violation "$f: depends on libcurl or libdebuginfod"
		fi
		# no parser: neither the indexer's code nor libdwarf's, linked in
		# statically or by name
		ix=$( (nm --defined-only "$f" 2>/dev/null; nm -D --defined-only "$f" 2>/dev/null) |
			awk '{print $NF}' |
			grep -E '^(ix_|idx_|symdb_indexer_|dwarf_|_dwarf_|seccomp_)' | sort -u | head -5 | tr '\n' ' ')
		[ -n "$ix" ] && violation "$f: contains indexer, libdwarf or libseccomp code: $ix"
		ldd "$f" 2>/dev/null | grep -Ei 'libdwarf|libseccomp' >/dev/null &&
			violation "$f: loads libdwarf or libseccomp (ldd)"
	done
	# and the check above can fail: symdb-indexer has both
	idx=$build/tools/symdb-indexer
	if [ -e "$idx" ]; then
		readelf -d "$idx" | grep -i 'NEEDED.*seccomp' >/dev/null ||
			violation "$idx: does not link libseccomp (its sandbox)"
		# grep reads all of nm's output: with -q it would stop at the match,
		# and nm, killed by SIGPIPE, fails the pipeline (pipefail)
		nm --defined-only "$idx" | grep ' symdb_indexer_run$' >/dev/null ||
			violation "$idx: no symdb_indexer_run: the symbol check cannot see indexer code"
	fi
	fetch=$build/tools/symdb-fetch
	if [ -e "$fetch" ]; then
		readelf -d "$fetch" | grep -i 'NEEDED.*libcurl' >/dev/null ||
			violation "$fetch: does not link libcurl: the check above cannot fail"
		readelf -d "$fetch" | grep -i 'NEEDED.*seccomp' >/dev/null ||
			violation "$fetch: does not link libseccomp (its sandbox, tools/fetch_sandbox.c)"
	fi
fi

if [ $bad -ne 0 ]; then
	exit 1
fi
echo "layering: format, reader, indexer and tools follow DESIGN.md${build:+ (and the binaries in $build)}"
