#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pprof.sh: `symdb pprof` on a real CPU profile of a native program, against
# pprof's own symbolization by llvm-symbolizer-14.
#
# pprof_work.c (with pprof_lib.c as a shared library, both with inline
# functions) runs under gperftools' CPU profiler; pprof converts the legacy
# profile to profile.proto with -symbolize=none and the executable's
# build-id (no Function, no Line anywhere).  The same unsymbolized profile
# is then symbolized twice:
#   - by pprof itself (`-symbolize=local -tools=DIR`, DIR holding only
#     llvm-symbolizer -> llvm-symbolizer-14): the oracle;
#   - by `symdb pprof`, with the executable moved away so that only its
#     build-id (indexed beforehand) can answer for it; the library and libc
#     are indexed on first sight from their files.
# `pprof -top` and `-traces` (also with -lines: file:line of every frame,
# inline frames marked) and the mappings' has_* flags must be equal; the
# same for a C++ program (pprof_cpp.cc: Function.name as pprof stores it,
# the linkage name in system_name).  Progress lines appear on a terminal
# (script(1)'s pty) and not otherwise.  Then:
# every location twice (each distinct address still resolved once, and the
# answers still equal), a location already symbolized (kept; --force
# replaces it), a library mapping whose build-id is not its file's (not
# used), malformed and truncated profiles (one line, exit 1, the existing
# output file untouched, no temporary left), and the flame graph.
#
# pprof is built from golang-github-google-pprof-dev's source once per
# build tree: `go tool pprof` has a Go-only symbolizer of its own and never
# runs llvm-symbolizer.
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
case $SCRATCH in */scratch/*) ;; *) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
S=$SCRATCH
here=$(cd "$(dirname "$0")" && pwd)
t0=$(date +%s)

src=/usr/share/gocode/src/github.com/google/pprof
command -v go >/dev/null || skip "go (golang-go) is not installed"
[[ -d $src ]] || skip "$src missing (golang-github-google-pprof-dev)"
[[ -f /usr/include/gperftools/profiler.h ]] || skip "gperftools headers missing (libgoogle-perftools-dev)"
command -v llvm-symbolizer-14 >/dev/null || skip "llvm-symbolizer-14 missing"

# ---- pprof and the profile variants' writer, built once per build tree ----
# Go's build cache is shared by build trees (a sanitizer build's tests then
# link pprof in seconds); it is safe for concurrent use.
gobin=${SYMDB_BUILD:-$S}/tests/profile-go
mkdir -p "$gobin"
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= HOME=$S
export GOCACHE=${TMPDIR:-/tmp}/symdb-tests-gocache
export PPROF_BINARY_PATH=$S/no-such-dir # binaries only where the mappings say
unset PPROF_TOOLS
pp=$gobin/pprof
[[ -x $pp ]] || go build -o "$pp" github.com/google/pprof || fail "building pprof"
craft=$gobin/pprof_craft
[[ -x $craft && $craft -nt $here/pprof_craft.go ]] || go build -o "$craft" "$here/pprof_craft.go" ||
	fail "building pprof_craft"

# ---- the program and its profile ----
gcc -O2 -g -fPIC -shared -Wl,--build-id -o "$S/libpprofwork.so" "$here/pprof_lib.c"
gcc -O2 -g -Wl,--build-id -o "$S/work" "$here/pprof_work.c" -L"$S" -lpprofwork \
	-Wl,-rpath,"$S" -lprofiler
CPUPROFILE_FREQUENCY=1000 "$S/work" "$S/cpu.prof" 300 >/dev/null 2>&1 || fail "profiled run"
bid=$(readelf -n "$S/work" | awk '/Build ID/ {print $3}')
[[ -n $bid ]] || fail "no build-id in the executable"
"$pp" -proto -symbolize=none -buildid="$bid" "$S/work" "$S/cpu.prof" >"$S/raw.pb.gz" 2>"$S/conv.err" ||
	fail "pprof -proto: $(cat "$S/conv.err")"
"$pp" -raw -symbolize=none "$S/raw.pb.gz" >"$S/raw.txt" 2>&1
grep -q '^Locations' "$S/raw.txt" || fail "no locations in the converted profile"
! grep -qE 'leaf_a|middle|lib_churn' "$S/raw.txt" || fail "the converted profile is symbolized already"

# oracle PROFILE OUT: pprof's own local symbolization by llvm-symbolizer-14
mkdir -p "$S/tools"
ln -s "$(command -v llvm-symbolizer-14)" "$S/tools/llvm-symbolizer"
oracle() { "$pp" -tools="$S/tools" -symbolize=local -proto "$1" >"$2" 2>"$2.err" || fail "pprof on $1"; }

# same A B: pprof's views of two profiles agree
same() {
	local v
	for v in "-top" "-traces" "-top -lines" "-traces -lines"; do
		# shellcheck disable=SC2086
		diff -u <("$pp" $v "$1" 2>&1) <("$pp" $v "$2" 2>&1) >&2 ||
			fail "pprof $v differs: $1 (llvm-symbolizer-14) vs $2 (symdb)"
	done
	diff -u <("$pp" -raw "$1" | sed -n '/^Mappings/,$p') <("$pp" -raw "$2" | sed -n '/^Mappings/,$p') >&2 ||
		fail "mappings (has_* flags) differ: $1 vs $2"
}

oracle "$S/raw.pb.gz" "$S/llvm.pb.gz"
"$pp" -traces -lines "$S/llvm.pb.gz" >"$S/llvm.traces"
for want in '(inline)' 'twice ' 'lib_step ' 'lib_churn ' 'main ' '__libc_start_main '; do
	grep -qF -- "$want" "$S/llvm.traces" || fail "oracle has no '$want': the fixture did not profile as meant"
done

# ---- symdb pprof: the executable by build-id only ----
"$SYMDB" build "$S/work" >/dev/null
mv "$S/work" "$S/work.away"
"$SYMDB" pprof "$S/raw.pb.gz" -o "$S/sym.pb.gz" --svg "$S/flame.svg" 2>"$S/sym.err" ||
	fail "symdb pprof: $(cat "$S/sym.err")"
mv "$S/work.away" "$S/work"
[[ $(wc -l <"$S/sym.err") == 1 ]] || fail "not one summary line: $(cat "$S/sym.err")"
grep -qE '^symdb: pprof: .*, 0 unknown images$' "$S/sym.err" || fail "summary: $(cat "$S/sym.err")"
same "$S/llvm.pb.gz" "$S/sym.pb.gz"
# Without a terminal: no progress line ("\r") on stderr.
! grep -q $'\r' "$S/sym.err" || fail "progress without a terminal: $(cat -v "$S/sym.err")"

# ---- on a terminal (a pty from script(1)): progress, cleared before the summary ----
if command -v script >/dev/null; then
	TERM=dumb script -q -e -c "'$SYMDB' pprof '$S/raw.pb.gz' -o '$S/tty.pb.gz'" /dev/null \
		>"$S/tty.out" 2>&1 </dev/null || fail "symdb pprof on a terminal: $(cat -v "$S/tty.out")"
	python3 - "$S/tty.out" <<'EOF' || fail "progress on a terminal: $(cat -v "$S/tty.out")"
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
m = re.search(r"\rsymdb pprof: symbolized (\d+)/(\d+) addresses +\r +\rsymdb: pprof: ", t)
assert m and m.group(1) == m.group(2) and int(m.group(1)) > 0, repr(t)
EOF
fi

# ---- C++: Function.name as pprof stores it ----
# system_name the linkage name, name demangled without parameters,
# template arguments, return type or clone suffix; pprof's views of the
# profile equal its own route's (llvm-symbolizer-14 names, demangled by
# pprof).  The executable again answers by build-id only.
g++ -O2 -g -Wl,--build-id -o "$S/cppwork" "$here/pprof_cpp.cc" -lprofiler
CPUPROFILE_FREQUENCY=1000 "$S/cppwork" "$S/cpp.prof" 600 >/dev/null 2>&1 || fail "profiled C++ run"
cbid=$(readelf -n "$S/cppwork" | awk '/Build ID/ {print $3}')
"$pp" -proto -symbolize=none -buildid="$cbid" "$S/cppwork" "$S/cpp.prof" >"$S/cpp-raw.pb.gz" 2>/dev/null ||
	fail "pprof -proto (C++)"
oracle "$S/cpp-raw.pb.gz" "$S/cpp-llvm.pb.gz"
"$pp" -top "$S/cpp-llvm.pb.gz" >"$S/cpp-llvm.top" 2>&1
sed -i 's/$/ /' "$S/cpp-llvm.top" # every name followed by a space
for want in 'app::detail::Ring::spin' 'app::detail::Ring::churn' 'app::fold' 'app::Acc::operator+=' \
	'(anonymous namespace)::hidden_work' 'scramble (inline)' 'app::Cmp::operator<' \
	'main::{lambda(unsigned int)#1}::operator()' 'main::{lambda(unsigned int)#2}::operator()'; do
	grep -qF -- " $want " "$S/cpp-llvm.top" || fail "C++ oracle has no '$want': the fixture did not profile as meant"
done
"$SYMDB" build "$S/cppwork" >/dev/null
mv "$S/cppwork" "$S/cppwork.away"
"$SYMDB" pprof "$S/cpp-raw.pb.gz" -o "$S/cpp-sym.pb.gz" 2>"$S/cpp.err" || fail "symdb pprof (C++): $(cat "$S/cpp.err")"
mv "$S/cppwork.away" "$S/cppwork"
same "$S/cpp-llvm.pb.gz" "$S/cpp-sym.pb.gz"
# Function.name stored short (pprof would otherwise show symdb's name
# as stored), system_name the linkage names as pprof's route stores them.
"$pp" -raw -symbolize=none "$S/cpp-sym.pb.gz" | grep -qE ' app::detail::Ring::spin .*\(_ZNK3app6detail4Ring' ||
	fail "C++: name/system_name not stored as pprof stores them"
diff <("$pp" -raw "$S/cpp-llvm.pb.gz" | grep -o '(_Z[^)]*)' | sort -u) \
	<("$pp" -raw "$S/cpp-sym.pb.gz" | grep -o '(_Z[^)]*)' | sort -u) >&2 || fail "C++: system names differ"

# ---- every location twice: one resolution per distinct address ----
n=$("$craft" dup "$S/raw.pb.gz" "$S/dup.pb.gz")
oracle "$S/dup.pb.gz" "$S/dup-llvm.pb.gz"
"$SYMDB" pprof "$S/dup.pb.gz" -o "$S/dup-sym.pb.gz" 2>"$S/dup.err" || fail "dup: $(cat "$S/dup.err")"
grep -qF "($n addresses resolved of $n)" "$S/dup.err" ||
	fail "dup: $n distinct addresses, but: $(cat "$S/dup.err")"
same "$S/dup-llvm.pb.gz" "$S/dup-sym.pb.gz"

# ---- a location already symbolized: kept, unless --force ----
"$craft" presym "$S/raw.pb.gz" "$S/presym.pb.gz"
"$SYMDB" pprof "$S/presym.pb.gz" -o "$S/presym-sym.pb.gz" 2>/dev/null || fail "presym"
"$pp" -traces "$S/presym-sym.pb.gz" | grep -q 'keep_me' || fail "an existing Line was replaced without --force"
"$SYMDB" pprof --force "$S/presym.pb.gz" -o "$S/force-sym.pb.gz" 2>/dev/null || fail "presym --force"
! "$pp" -traces "$S/force-sym.pb.gz" | grep -q 'keep_me' || fail "--force kept an existing Line"
diff <("$pp" -traces -lines "$S/llvm.pb.gz") <("$pp" -traces -lines "$S/force-sym.pb.gz") >&2 ||
	fail "--force: not pprof's answers"

# ---- a mapping whose build-id is not its file's: that file is not used ----
CRAFT_FILE=libpprofwork.so "$craft" badid "$S/raw.pb.gz" "$S/badid.pb.gz"
"$SYMDB" pprof "$S/badid.pb.gz" -o "$S/badid-sym.pb.gz" 2>"$S/badid.err" || fail "badid"
grep -qE ', 1 unknown images: libpprofwork\.so$' "$S/badid.err" || fail "badid: $(cat "$S/badid.err")"
! "$pp" -traces "$S/badid-sym.pb.gz" | grep -q 'lib_churn' || fail "another build's file was used"

# ---- malformed and truncated profiles: one line, exit 1, nothing written ----
python3 - "$S" <<'EOF'
import gzip, sys
d = sys.argv[1]
def field(num, wt, payload):
    if wt == 0:
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload
def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
empty_str = field(6, 2, b"")
raw = open(d + "/raw.pb.gz", "rb").read()
open(d + "/bad-truncated.pb.gz", "wb").write(raw[: len(raw) // 2])
open(d + "/bad-text.pb.gz", "wb").write(b"this is not a profile\n")
open(d + "/bad-gzip-text.pb.gz", "wb").write(gzip.compress(b"this is not a profile\n"))
open(d + "/bad-mapping.pb.gz", "wb").write(
    gzip.compress(field(4, 2, field(1, 0, 1) + field(2, 0, 9)) + empty_str))
open(d + "/bad-string.pb.gz", "wb").write(
    gzip.compress(field(5, 2, field(1, 0, 1) + field(2, 0, 5)) + empty_str))
open(d + "/bad-empty.pb.gz", "wb").write(b"")
EOF
check_bad() { # FILE EXPECTED-REASON
	mkdir -p "$S/out" && echo old >"$S/out/keep.pb.gz"
	local rc=0
	"$SYMDB" pprof "$S/$1" -o "$S/out/keep.pb.gz" --svg "$S/out/new.svg" 2>"$S/bad.err" || rc=$?
	[[ $rc == 1 ]] || fail "$1: exit $rc, not 1"
	[[ $(cat "$S/bad.err") == "symdb: $S/$1: $2" ]] || fail "$1: stderr: $(cat "$S/bad.err")"
	[[ $(cat "$S/out/keep.pb.gz") == old && $(ls -A "$S/out") == keep.pb.gz ]] ||
		fail "$1: output written or left: $(ls -A "$S/out")"
}
check_bad bad-truncated.pb.gz "truncated gzip stream"
check_bad bad-text.pb.gz "not a pprof profile (protobuf decoding failed)"
check_bad bad-gzip-text.pb.gz "not a pprof profile (protobuf decoding failed)"
check_bad bad-mapping.pb.gz "location 1 names mapping 9, which the profile does not have"
check_bad bad-string.pb.gz "a string index is outside the string table (1 strings)"
check_bad bad-empty.pb.gz 'empty file'

# Random damage to the unsymbolized profile (bytes changed, the end cut):
# each run symbolizes (exit 0) or refuses with one line (exit 1); under the
# sanitizers this also checks that no input reads out of bounds.
python3 - "$S" "$SYMDB" <<'EOF' || fail "damaged profiles"
import gzip, os, random, subprocess, sys
d, symdb = sys.argv[1], sys.argv[2]
raw = gzip.decompress(open(d + "/raw.pb.gz", "rb").read())
r = random.Random(17)
for i in range(40):
    b = bytearray(raw)
    for _ in range(r.randint(1, 4)):
        b[r.randrange(len(b))] = r.randrange(256)
    if i % 3 == 0:
        b = b[: r.randrange(len(b))]
    open(d + "/mut.pb", "wb").write(b)
    p = subprocess.run([symdb, "pprof", d + "/mut.pb", "-o", d + "/mut-out.pb.gz"],
                       capture_output=True)
    lines = p.stderr.decode(errors="replace").splitlines()
    if p.returncode not in (0, 1) or len(lines) != 1:
        sys.exit("case %d (seed 17): exit %d, stderr %r" % (i, p.returncode, lines[:3]))
EOF

# ---- the flame graph of the first run (--svg) ----
# Well-formed, with the profile's frames; the inline functions' boxes (and
# only theirs) marked inlined in their tooltips ("user, inlined").
python3 - "$S/flame.svg" <<'EOF' || fail "flame graph"
import re, sys, xml.etree.ElementTree as ET
text = open(sys.argv[1], encoding="utf-8").read()
ET.fromstring(text)
inl = {}
for t in re.findall(r"<title>(.*?)</title>", text, re.S):
    lines = t.split("\n")
    inl.setdefault(lines[0], set()).add(any(l.endswith(", inlined") for l in lines))
for name in ("twice", "mix", "lib_step"):
    assert inl.get(name) == {True}, (name, inl.get(name))
for name in ("leaf_a", "leaf_b", "middle", "lib_churn", "main"):
    assert inl.get(name) == {False}, (name, inl.get(name))
EOF

echo "pprof.sh: ok ($(($(date +%s) - t0)) s)"
