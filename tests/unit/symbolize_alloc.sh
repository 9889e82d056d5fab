#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# symbolize_alloc.sh SYMDB TEST SCRATCH BINARY... NOT_INDEXED: index the binaries
# into a fresh database and run test_symbolize_alloc on them and on one
# binary left out (steady-state batches of symdb_symbolize() allocate
# nothing).
set -euo pipefail
symdb=${1:?usage: symbolize_alloc.sh SYMDB TEST SCRATCH BINARY...}
test=${2:?}
scratch=${3:?}
shift 3
rm -rf "$scratch"
mkdir -p "$scratch"
for b in "${@:1:$#-1}"; do
	"$symdb" --db "$scratch/db" build "$b" >/dev/null
done
exec "$test" "$scratch/db" "$@"
