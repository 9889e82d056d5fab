#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# setup.sh: the README's first command on a fresh Debian 12 machine.  Installs
# the dependencies (tests/install-deps.sh), builds symdb into build/, indexes
# the system C library into the default database ($SYMDB_DIR, else
# $XDG_CACHE_HOME/symdb, else ~/.cache/symdb) and symbolizes one address in
# it, next to llvm-symbolizer-14's answer for the same address.
#   SYMDB_BUILD_DIR  build directory (default: build/ at the top level)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SYMDB_BUILD_DIR:-$root/build}
"$root/tests/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_TESTS=OFF
cmake --build "$build" -j"${JOBS:-2}"
symdb=$build/tools/symdb
lib=/lib/x86_64-linux-gnu/libc.so.6
"$symdb" build "$lib"
"$symdb" list
# malloc's address, plus 4 bytes (dynamic names carry versions: malloc@@GLIBC_2.2.5)
addr=$(llvm-nm-14 -D --defined-only "$lib" | awk '$3 ~ /^malloc(@|$)/ && !n++ {print $1}')
addr=$(printf '0x%x' $((0x$addr + 4)))
echo "symdb query --obj $lib $addr:"
echo "$addr" | "$symdb" query --obj "$lib"
echo "llvm-symbolizer-14 --obj $lib $addr:"
echo "$addr" | llvm-symbolizer-14 --obj "$lib"
