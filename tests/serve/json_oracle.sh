#!/bin/bash
# SPDX-License-Identifier: MIT
#
# json_oracle.sh: POST /v1/symbolize (JSON) gives, for every address, the
# frames llvm-symbolizer-14 --output-style=JSON prints and exactly what
# `symdb query --output-style=JSON` prints (json_oracle.py compares them
# field by field), on
#   1. the DWARF fixtures (C and C++, -O0 and -O2, PIE, non-PIE, shared
#      libraries) by build-id, and the C++ one with every option: no
#      demangling, no inlines, short names, no names;
#   2. a fixture named by path, indexed on first sight by the server;
#   3. libc.so.6 with libc6-dbg's debug file, and the pyenv libpython3.11
#      (DWARF 5, -O3), by build-id;
#   4. the Mach-O fixtures (tests/oracle/macho_test.py): thin dSYMs by
#      LC_UUID, a universal binary by path with "arch";
#   5. unknown build-ids: a per-module status in a 200, next to a module
#      that resolves.
# Parts whose binaries are missing (libc6-dbg, pyenv, the Mach-O tools)
# are skipped with a message; the test then ends as skipped (77).
# Before the JSON front end existed every part failed (404 from the server).
source "$(dirname "$0")/lib.sh"
require readelf llvm-dwarfdump-14
export SERVE_DB SYMDB
here=$(cd "$(dirname "$0")" && pwd)

build_id() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }
index() { run "$SYMDB" --db "$SERVE_DB" build "$@"; ((RC == 0)) || fail "symdb build $*: $(cat "$ERR")"; }

oracle_cases "c_gcc_O0_pie c_gcc_O2_pie c_gcc_O2_nopie cpp_g++_O0_pie cpp_g++_O2_pie lib_gcc_O2.so cpplib_g++_O0.so" "" "" 300

serve_start
note "1-4. ${#cases[@]} cases against llvm-symbolizer-14 and symdb query"
python3 "$here/json_oracle.py" "$SERVE_URL" "${cases[@]}" || fail "answers differ (above)"

note "5. unknown build-ids"
known=$(build_id "$FIXTURES/full/c_gcc_O2_pie")
cat >"$SCRATCH/unknown.json" <<JSON
{"modules": [{"build_id": "00112233445566778899aabbccddeeff00112233", "addresses": ["0x1000", "0x2000"]},
             {"build_id": "$known", "addresses": ["0x0"]},
             {"uuid": "00112233445566778899aabbccddeeff", "addresses": []}]}
JSON
serve_req POST /v1/symbolize --header 'Content-Type: application/json' --body-file "$SCRATCH/unknown.json"
((STATUS == 200)) || fail "unknown build-ids: status $STATUS"
python3 - "$OUT" <<'PY' || fail "unknown build-ids: $(cat "$OUT")"
import json, sys
m = json.load(open(sys.argv[1]))["modules"]
assert [x["status"] for x in m] == ["unknown_image", "ok", "unknown_image"], m
assert [r["status"] for r in m[0]["results"]] == ["unknown_image"] * 2, m[0]
assert [r["address"] for r in m[0]["results"]] == ["0x1000", "0x2000"], m[0]
assert m[0]["error"].startswith("SYMDB_E_NOT_INDEXED"), m[0]
assert m[2]["results"] == [], m[2]
PY
serve_alive
echo "PASS"
