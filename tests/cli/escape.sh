#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# escape.sh: a file whose name holds a newline, ESC[2J, an OSC 8 hyperlink,
# a BEL, DEL, a C1 control (U+009B, CSI), a byte that is not UTF-8 and an é,
# compiled with the same name as its DWARF file name.  Every line-oriented
# output that shows the name (build, list, info, verify, gc, compact, query's
# LLVM and GNU styles, error lines) must keep one record on one line: no byte
# below 0x20 and no 0x7f reaches stdout or stderr except the newline ending a
# record, and the name appears escaped as README "Names in output" says
# (computed here from that rule, not from symdb).  query's answers are the
# oracle's: llvm-symbolizer-14's JSON (which escapes) rendered in the LLVM
# and GNU styles with control characters escaped.
source "$(dirname "$0")/lib.sh"
require gcc

db=$SCRATCH/db
dir=$SCRATCH/src
mkdir -p "$dir"
name=$(printf 'ev\nil\033[2J\033]8;;mailto:x@y\033\\link\033]8;;\033\\\a\177\302\233\377\303\251')
bin=$dir/$name.bin
# the DWARF file name without the byte that is not UTF-8: llvm-symbolizer's
# JSON replaces it, so it could not be the oracle for that byte
src=$dir/$(printf 'ev\nil\033[2J\033]8;;mailto:x@y\033\\link\033]8;;\033\\\a\177\302\233\303\251').c
printf 'int f(int a) { return a * 3; }\nint main(void) { return f(2); }\n' >"$src"
(cd "$dir" && gcc -g -O0 -Wl,--build-id -o "$bin" "$src") || fail "cannot compile the fixture"

# esc MODE STRING: README's escaping; strict for the maintenance commands and
# errors, ctrl for query's llvm-symbolizer styles
cat >"$SCRATCH/esc.py" <<'PY'
import sys

def esc(b, strict):
    out, i = bytearray(), 0
    named = {0x0a: b"\\n", 0x09: b"\\t", 0x0d: b"\\r", 0x5c: b"\\\\"}
    while i < len(b):
        c = b[i]
        if c < 0x20 or c == 0x7f or (strict and c == 0x5c):
            out += named.get(c, b"\\x%02x" % c)
            i += 1
            continue
        if c < 0x80 or not strict:
            out.append(c)
            i += 1
            continue
        n = 2 if 0xc0 <= c < 0xe0 else 3 if 0xe0 <= c < 0xf0 else 4 if 0xf0 <= c < 0xf8 else 0
        try:
            ch = b[i:i + n].decode("utf-8") if n else ""
        except UnicodeDecodeError:
            ch = ""
        if len(ch) == 1 and not 0x80 <= ord(ch) <= 0x9f:
            out += b[i:i + n]
            i += n
        else:
            out += b"\\x%02x" % c
            i += 1
    return bytes(out)

if __name__ == "__main__":
    arg = sys.argv[2].encode("utf-8", "surrogateescape")
    sys.stdout.buffer.write(esc(arg, sys.argv[1] == "strict"))
PY
esc() { python3 "$SCRATCH/esc.py" "$1" "$2"; }

# lines FILE N WHAT [utf8]: FILE is N records, one per line, and no control
# byte but the newlines ending them (utf8: and valid UTF-8)
lines() {
	python3 - "$@" <<'PY' || fail "$3: $(head -c 400 "$1" | od -c | head -8)"
import sys
data = open(sys.argv[1], "rb").read()
n, what = int(sys.argv[2]), sys.argv[3]
bad = [i for i, c in enumerate(data) if (c < 0x20 and c != 0x0a) or c == 0x7f]
if bad:
    sys.exit("%s: control byte 0x%02x at offset %d" % (what, data[bad[0]], bad[0]))
if data.count(b"\n") != n or (n and not data.endswith(b"\n")):
    sys.exit("%s: %d lines, expected %d records" % (what, data.count(b"\n"), n))
if len(sys.argv) > 4:
    data.decode("utf-8")
PY
}
# has FILE NEEDLE WHAT: FILE holds NEEDLE (the escaped name)
has() { grep -qF -- "$2" "$1" || fail "$3: the escaped name is not there: $2"; }

strict=$(esc strict "$name")
[[ $strict == *'ev\nil\x1b[2J\x1b]8;;mailto:x@y\x1b\\link'* ]] || fail "esc.py: $strict"

run "$SYMDB" build --db "$db" "$bin"
expect_ok "build"
lines "$OUT" 1 "build stdout" utf8
lines "$ERR" 0 "build stderr"
has "$OUT" "$strict.bin" "build"

run "$SYMDB" list --db "$db"
expect_ok "list"
lines "$OUT" 1 "list" utf8
has "$OUT" "/$strict.bin" "list" # the end of the path it was built from

run "$SYMDB" info --db "$db" "$bin"
expect_ok "info"
lines "$OUT" "$(wc -l <"$OUT")" "info" utf8
has "$OUT" "$strict.bin" "info"
# every info line is one of its labels: a forged line would not be
grep -qvE '^(uuid|image name|index file|storage|format version|object format|object type|machine|flags|address size|base address|index bytes|symbols|functions|inline nodes|line rows|files|segments|table bytes|source file bytes|symbol entries read|symbols dropped|DWARF units|DWARF versions|source XXH3|debug file XXH3|symbol table|alt symbol table|verify) ' "$OUT" &&
	fail "info: a line with no label: $(grep -vE '^(uuid|image name|index file|storage|format version|object format|object type|machine|flags|address size|base address|index bytes|symbols|functions|inline nodes|line rows|files|segments|table bytes|source file bytes|symbol entries read|symbols dropped|DWARF units|DWARF versions|source XXH3|debug file XXH3|symbol table|alt symbol table|verify) ' "$OUT" | head -2)"

# errors: a bad input, a missing one, a query of a file never indexed
printf 'not an ELF file\n' >"$bin.bad"
run "$SYMDB" build --db "$db" "$bin.bad"
expect_error "build of a bad input" "not an ELF file"
lines "$ERR" 1 "build error" utf8
lines "$OUT" 0 "build error stdout"
has "$ERR" "symdb: $dir/$strict.bin.bad: not an ELF file" "build error"
run "$SYMDB" info --db "$db" "$bin.missing"
expect_error "info of a missing file" "not a UUID"
lines "$ERR" 1 "info error" utf8
has "$ERR" "$strict.bin.missing" "info error"
cp "$bin.bad" "$bin.other"
run "$SYMDB" query --db "$db" --no-build --obj "$bin.other" 0x1000
no_crash "query of a file never indexed"
lines "$ERR" "$(wc -l <"$ERR")" "query error" utf8
has "$ERR" "$strict.bin.other" "query error"
[[ $(wc -l <"$ERR") == 1 ]] || fail "query error: $(wc -l <"$ERR") lines"

# query: llvm-symbolizer-14's answer (JSON escapes) in the LLVM and GNU styles
addr=0x$(llvm-nm-14 "$bin" | awk '$3 == "f" { print $1 }')
llvm_query "$bin" --output-style=JSON "$addr" >"$SCRATCH/oracle.json"
python3 - "$SCRATCH/oracle.json" "$SCRATCH/esc.py" "$SCRATCH" <<'PY' || fail "cannot render the oracle"
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("esc", sys.argv[2])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
fr = json.load(open(sys.argv[1]))[0]["Symbol"][0]
e = lambda s: m.esc(s.encode("utf-8", "surrogateescape"), False)
name, file = e(fr["FunctionName"]), e(fr["FileName"])
if b"\\n" not in file:
    sys.exit("the oracle's file name lost its newline: %r" % fr["FileName"])
ln, col = fr["Line"], fr["Column"]
open(sys.argv[3] + "/expect.llvm", "wb").write(name + b"\n" + file + b":%d:%d\n\n" % (ln, col))
open(sys.argv[3] + "/expect.gnu", "wb").write(name + b"\n" + file + b":%d\n" % ln)
PY
run "$SYMDB" query --db "$db" --obj "$bin" "$addr"
expect_ok "query LLVM"
cmp -s "$OUT" "$SCRATCH/expect.llvm" || fail "query LLVM: $(od -c "$OUT" | head -6) expected $(od -c "$SCRATCH/expect.llvm" | head -6)"
lines "$OUT" 3 "query LLVM"
run "$SYMDB" query --db "$db" --obj "$bin" --output-style=GNU "$addr"
expect_ok "query GNU"
cmp -s "$OUT" "$SCRATCH/expect.gnu" || fail "query GNU: $(od -c "$OUT" | head -6)"
# JSON stays llvm-symbolizer's, byte for byte
run "$SYMDB" query --db "$db" --obj "$bin" --output-style=JSON "$addr"
expect_ok "query JSON"
cmp -s "$OUT" "$SCRATCH/oracle.json" || fail "query JSON differs from llvm-symbolizer-14"

# verify and gc name files under DB/images: an orphan with the name
mkdir -p "$db/images/ab"
printf 'x' >"$db/images/ab/$name.symdb"
touch -d '2 hours ago' "$db/images/ab/$name.symdb"
run "$SYMDB" verify --db "$db"
no_crash "verify"
lines "$OUT" "$(wc -l <"$OUT")" "verify" utf8
lines "$ERR" "$(wc -l <"$ERR")" "verify stderr" utf8
has "$OUT" "$strict.symdb" "verify"
run "$SYMDB" gc --db "$db"
expect_ok "gc"
lines "$OUT" "$(wc -l <"$OUT")" "gc" utf8
has "$OUT" "$strict.symdb" "gc"

# compact shows the image name
run env SYMDB_NOW=$(($(date +%s) + 86400 * 3)) "$SYMDB" compact --db "$db" --unused-for 1d
expect_ok "compact"
lines "$OUT" 2 "compact" utf8
has "$OUT" "$strict.bin" "compact"
echo "PASS escape"
