#!/bin/bash
# SPDX-License-Identifier: MIT
#
# binary.sh: POST /v1/symbolize with Content-Type application/x-symdb-batch
# (SPEC §16), driven over HTTP by tests/serve/batch_client.py, a Python
# implementation of the messages written from SPEC.md (not symdb's codec):
#   1. binary_oracle.py: on the DWARF fixtures (C, C++, -O0/-O2, PIE,
#      non-PIE, a shared library) by build-id, the C++ one with every
#      option, a fixture by path, libc.so.6 with libc6-dbg's debug file, the
#      pyenv libpython3.11 (DWARF 5, -O3), and the Mach-O fixtures (thin
#      dSYMs by LC_UUID, a universal binary by path with an arch): the
#      binary answer equals the JSON endpoint's field by field and, frame by
#      frame, llvm-symbolizer-14's and symdb query's (json_oracle.py's
#      address choice and comparison); the same addresses as 64-frame stacks
#      give the same results, and again (from the stack cache) the same bytes;
#   2. an unknown build-id is a module status in a 200;
#   3. bad and lying requests: every proper prefix of a valid request, one
#      byte more, counts larger than the body, counts that do not add up, a
#      stack frame naming no module, bad magic, version 2, reserved bits,
#      a NUL in a path: each a 400 with a one-line reason naming the field,
#      counts over --max-addresses/--max-modules/--max-stacks a 413 decided
#      from the header; the server keeps serving, its RSS under the bound.
# Before serve_binary.c existed every part failed (the server answered the
# binary bodies with 415: no endpoint for their content type).
source "$(dirname "$0")/lib.sh"
require readelf llvm-symbolizer-14 llvm-dwarfdump-14
export SERVE_DB SYMDB
here=$(cd "$(dirname "$0")" && pwd)

build_id() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }
index() { run "$SYMDB" --db "$SERVE_DB" build "$@"; ((RC == 0)) || fail "symdb build $*: $(cat "$ERR")"; }

# the large images and the Mach-O ones with smaller samples (time under ASan)
oracle_cases "c_gcc_O0_pie c_gcc_O2_pie c_gcc_O2_nopie cpp_g++_O2_pie lib_gcc_O2.so" 600 1000 200

# the path module is indexed on first sight by the symdb-indexer of this build
serve_start --max-addresses 100000 --max-modules 64 --max-stacks 1000 \
	--indexer "$(dirname "$SYMDB")/symdb-indexer"
note "1. ${#cases[@]} cases: binary = JSON = llvm-symbolizer-14 = symdb query"
python3 "$here/binary_oracle.py" "$SERVE_URL" "${cases[@]}" || fail "answers differ (above)"

serve_stop
((SERVE_RC == 0)) || fail "symdb serve exited $SERVE_RC"

note "2-3. unknown build-ids; bad and lying requests (a small database, for the RSS bound)"
SERVE_DB=$SCRATCH/small
known=$(build_id "$FIXTURES/full/c_gcc_O2_pie")
index "$FIXTURES/full/c_gcc_O2_pie"
serve_start --max-addresses 100000 --max-modules 64 --max-stacks 1000
HERE=$here python3 - "$SERVE_URL" "$known" <<'PY' || fail "bad requests (above)"
import json, os, struct, sys
sys.path.insert(0, os.environ["HERE"])
import batch_client as bc

url, known = sys.argv[1] + "/v1/symbolize", sys.argv[2]
bad = 0

def expect(what, body, code, reason=None):
    global bad
    status, ctype, data = bc.post(url, body)
    msg = ""
    if status != 200:
        try:
            msg = json.loads(data)["error"]
        except Exception:
            msg = "(not a JSON error: %r)" % data[:80]
    if status != code or (reason and reason not in msg) or "\n" in msg:
        bad += 1
        print("FAIL %s: HTTP %d %r, want %d %s" % (what, status, msg, code, reason or ""))
    return data

# 2. unknown build-ids next to a known one
ok = bc.decode_response(expect("unknown build-id", bc.encode_request([
    {"build_id": "00112233445566778899aabbccddeeff00112233", "addresses": [0x1000, 0x2000]},
    {"build_id": known, "addresses": [0]},
    {"uuid": "00112233445566778899aabbccddeeff"}]), 200))
st = [m["status"] for m in ok["modules"]]
if st != ["unknown_image", "ok", "unknown_image"] or \
        [r["status"] for r in ok["modules"][0]["results"]] != ["unknown_image"] * 2 or \
        not ok["modules"][0]["error"].startswith("SYMDB_E_NOT_INDEXED") or \
        ok["modules"][1]["image_id"] != known:
    bad += 1
    print("FAIL unknown build-ids: %s" % ok)

# 3. every proper prefix of a valid request, and one byte more
good = bc.encode_request([{"build_id": known, "addresses": [0x1139, 0x1150]},
                          {"path": "/nonexistent/x", "arch": "x86_64", "addr_kind": "runtime",
                           "load_address": 0x7f0000000000, "addresses": [0x7f0000001139]}],
                         [[(0, 0x1139), (1, 0x7f0000001150)]])
expect("the valid request", good, 200)
for n in range(len(good)):
    expect("prefix %d of %d" % (n, len(good)), good[:n], 400, "request: ")
expect("one byte more", good + b"\0", 400, "after the last stack")

m1 = 24 + 20 + len(bytes.fromhex(known)) + 16       # the path module
st = m1 + 20 + len("/nonexistent/x") + len("x86_64") + 8  # the stack

def patch(at, fmt, *v):
    b = bytearray(good)
    struct.pack_into(fmt, b, at, *v)
    return bytes(b)

expect("Address_Count 2^32-1", patch(12, ">I", 0xFFFFFFFF), 413, "addresses and stack frames")
expect("Module_Count 2^32-1", patch(8, ">I", 0xFFFFFFFF), 413, "modules")
expect("Stack_Count 2^32-1", patch(16, ">I", 0xFFFFFFFF), 413, "stacks")
expect("Frame_Count 50000", patch(20, ">I", 50000), 400, "at least")
expect("Address_Count one too many", patch(12, ">I", 4), 400, "Address_Count")
expect("module Address_Count past the body", patch(24 + 16, ">I", 1000), 400, "module 0")
expect("stack frame naming module 2", patch(st + 4 + 12, ">I", 2), 400, "Module_Index 2")
expect("bad magic", b"SYBR" + good[4:], 400, "bad magic")
expect("version 2", patch(4, ">B", 2), 400, "version 2")
expect("reserved flag bit", patch(6, ">H", 0x10), 400, "Flags")
expect("Functions 3", patch(6, ">H", 0xF), 400, "Functions")
expect("Id_Kind 9", patch(24, ">B", 9), 400, "Id_Kind 9")
expect("NUL in a path", patch(m1 + 20 + 3, ">B", 0), 400, "NUL")
expect("Load_Address on a vaddr module", patch(24 + 8, ">Q", 1), 400, "Load_Address")
expect("a JSON body as binary", b'{"modules": [], "options": {}}', 400, "bad magic")
big = bc.encode_request([{"build_id": known, "addresses": list(range(100001))}])
expect("100001 addresses (--max-addresses 100000)", big, 413, "limit 100000")
sys.exit(1 if bad else 0)
PY
serve_alive
kb=$(serve_hwm_kb)
((kb < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${kb} KiB over the ${SERVE_RSS_BOUND_KB} KiB bound"
echo "PASS"
