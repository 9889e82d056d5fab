#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb list` prints the path each image was built from (realpath of the
# input, spaces kept), takes filters (--name substring or glob, on the
# image name or the path; --machine; --older-than AGE by last use, the
# clock being $SYMDB_NOW as for gc), and --json prints one JSON document
# (parsed here by python3's json module).  UUIDs and machines are checked
# against binutils' readelf, paths against realpath(1), sizes against stat.
source "$(dirname "$0")/lib.sh"
require realpath stat

mkdir -p "$SCRATCH/my dir"
cp "$BIN/c_gcc_O2_pie.symtab" "$SCRATCH/my dir/prog"
cp "$BIN/lib_gcc_O2.so.symtab" "$SCRATCH/libx.so"
cp "$BIN/nostd_aarch64.symtab" "$SCRATCH/far"
db=$SCRATCH/db
# a relative path too: the recorded path is absolute
(cd "$SCRATCH" && "$SYMDB" build --db "$db" "my dir/prog" libx.so far >/dev/null) || fail build
P=$(build_id "$SCRATCH/my dir/prog") L=$(build_id "$SCRATCH/libx.so") F=$(build_id "$SCRATCH/far")
[[ $P && $L && $F ]] || fail "readelf shows no build-ids"
# (the header text whole: grep -q on a pipe can SIGPIPE llvm-readelf-14 under pipefail)
fh=$(llvm-readelf-14 -h "$SCRATCH/far")
grep -q 'Machine: *AArch64' <<<"$fh" || fail "far is not AArch64"

# Text: the last field is the path.
run "$SYMDB" list --db "$db"
expect_ok list
for pair in "$P|$SCRATCH/my dir/prog" "$L|$SCRATCH/libx.so" "$F|$SCRATCH/far"; do
	id=${pair%%|*} path=$(realpath "${pair#*|}")
	line=$(grep "^$id " "$OUT") || fail "list: no line for $id"
	[[ $line == *" $path" ]] || fail "list: '$line' does not end with the path $path"
done

count() { run "$SYMDB" list --db "$db" "$@"; expect_ok "list $*"; wc -l <"$OUT"; }
[[ $(count --name libx) == 1 ]] && grep -q "^$L " "$OUT" || fail "--name libx"
[[ $(count --name 'my dir') == 1 ]] && grep -q "^$P " "$OUT" || fail "--name on the path"
[[ $(count --name '*/my dir/*') == 1 ]] || fail "--name glob on the path"
[[ $(count --name 'f?r') == 1 ]] && grep -q "^$F " "$OUT" || fail "--name glob on the image name"
[[ $(count --name nothing-like-this) == 0 ]] || fail "--name with no match"
[[ $(count --machine aarch64) == 1 ]] && grep -q "^$F aarch64 " "$OUT" || fail "--machine aarch64"
[[ $(count --machine x86_64) == 2 ]] || fail "--machine x86_64"
[[ $(count --machine x86_64 --name libx) == 1 ]] || fail "--machine with --name"

# --older-than: by last use; built now, so 40 days later all are older
# than 30 days, until one is queried (then used) at that later time.
later=$(($(date +%s) + 40 * 86400))
[[ $(SYMDB_NOW=$later count --older-than 30d) == 3 ]] || fail "--older-than 30d, 40 days later"
[[ $(count --older-than 30d) == 0 ]] || fail "--older-than 30d, now"
# the largest age: nothing is that old (its + 1 wrapped to 0: every image)
[[ $(SYMDB_NOW=$later count --older-than 18446744073709551615) == 0 ]] ||
	fail "--older-than 2^64-1 listed images"
[[ $(SYMDB_NOW=$later count --older-than 18446744073709551614) == 0 ]] ||
	fail "--older-than 2^64-2 listed images"
addr=$(llvm-nm-14 --defined-only "$SCRATCH/libx.so" | awk '$2 ~ /[Tt]/ {print "0x" $1; exit}')
SYMDB_NOW=$later "$SYMDB" query --db "$db" --obj "$SCRATCH/libx.so" "$addr" >/dev/null || fail "query"
[[ $(SYMDB_NOW=$((later + 3600)) count --older-than 30d) == 2 ]] && ! grep -q "^$L " "$OUT" ||
	fail "--older-than after a use"

# --json: one document with every field, filters applied.
run "$SYMDB" list --db "$db" --json
expect_ok "list --json"
python3 - "$OUT" "$db" "$P" "$(realpath "$SCRATCH/my dir/prog")" "$F" <<'PY' || fail "list --json"
import json, os, sys
out, db, p, ppath, f = sys.argv[1:]
doc = json.load(open(out))
imgs = doc["images"]
assert len(imgs) == 3, imgs
by = {i["uuid"]: i for i in imgs}
assert by[p]["path"] == ppath, by[p]
assert by[p]["image_name"] == "prog" and by[p]["machine"] == "x86_64", by[p]
assert by[p]["uuid_kind"] == "gnu-build-id"
assert by[f]["machine"] == "aarch64"
for i in imgs:
    assert i["index_bytes"] == os.stat(os.path.join(db, i["index_file"])).st_size, i
    assert isinstance(i["built_at_unix"], int) and isinstance(i["last_used_unix"], int)
    assert i["built_at"].endswith("Z")
PY
run "$SYMDB" list --db "$db" --json --machine riscv
expect_ok "list --json with no match"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == {"images": []}' "$OUT" ||
	fail "empty --json: $(cat "$OUT")"

# An imported image has no recorded path: its image name, JSON null.
"$SYMDB" export --db "$db" "$P" >"$SCRATCH/p.bundle" || fail export
"$SYMDB" import --db "$SCRATCH/db2" "$SCRATCH/p.bundle" >/dev/null || fail import
run "$SYMDB" list --db "$SCRATCH/db2"
[[ $(cat "$OUT") == "$P "*" prog" ]] || fail "imported image: $(cat "$OUT")"
run "$SYMDB" list --db "$SCRATCH/db2" --json
python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["images"]; assert len(i)==1 and i[0]["path"] is None, i' "$OUT" ||
	fail "imported image --json: $(cat "$OUT")"

# Bad arguments: usage errors.
run "$SYMDB" list --db "$db" --older-than soon
expect_error "--older-than soon" "list: invalid age 'soon'"
((RC == 2)) || fail "--older-than soon: exit $RC"
run "$SYMDB" list --db "$db" --machine
expect_error "--machine without a value" "--machine"
((RC == 2)) || fail "--machine without a value: exit $RC"
note "list: paths, --name, --machine, --older-than, --json"
