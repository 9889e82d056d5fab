#!/bin/bash
# SPDX-License-Identifier: MIT
#
# compact.sh: cold storage (SPEC §12.8), with a fake clock ($SYMDB_NOW, no
# sleeps).  `symdb compact --unused-for` picks the images gc would (last
# query, else build time); a compacted image is one LZ4 frame that the lz4
# CLI (an independent decoder) turns back into the exact index file; the
# first query thaws it transparently - results equal llvm-symbolizer-14's,
# and the .symdb is back byte-identical to a copy taken before compaction.
# 8 reader threads, then 8 reader processes of 8 threads each, ask for cold
# images at once: every result matches the oracle and each image is
# decompressed exactly once ($SYMDB_THAW_LOG, one line per decompression),
# no temp file left.  A database the user cannot write is queried from
# memory and left unchanged.  A damaged .lz4 (flipped byte, truncated, a
# content size other than the catalog's) gives one error line naming it,
# changes nothing, is reported by verify and removed by --repair.  SIGKILL
# during compact and during thawing leaves a database that gc + verify
# find clean and that resolves like the oracle.  export/import, gc, rm,
# reindex and build understand compacted images.
source "$(dirname "$0")/../cli/lib.sh"
require gcc strip

: "${REL_READERS:?REL_READERS (tests/reliability/rel_readers) must be set}"
require lz4
KILL_RUNS=${COMPACT_KILL_RUNS:-30}
RANDOM=6060
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
T0=$(date +%s)
DAY=86400
LOG=$SCRATCH/thaw.log
EXP=$SCRATCH/expect
mkdir -p "$EXP" "$SCRATCH/orig"

# A and B: gcc -g -O2 DWARF fixtures (built at test time); C: symbols only;
# P: a `strip -g` copy of libpython (a real, larger index), if present.
A=$FIXTURES/full/c_gcc_O2_pie
B=$FIXTURES/full/cpp_g++_O2_pie
C=$BIN/lib_gcc_O2.so.symtab
FILES=("$A" "$B" "$C")
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")' 2>/dev/null || true)
for p in "$pylib/libpython3.11.so.1.0" /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 ""; do
	if [[ -z $p ]]; then
		skip_part "no libpython3.11.so.1.0: compacting a large image is not tested"
	elif [[ -f $p ]]; then
		strip -g -o "$SCRATCH/libpython3.11.so.1.0" "$p"
		FILES+=("$SCRATCH/libpython3.11.so.1.0")
		break
	fi
done
declare -A ID
for f in "${FILES[@]}"; do ID[$f]=$(build_id "$f"); done
UA=${ID[$A]} UB=${ID[$B]} UC=${ID[$C]}
lz() { echo "$DB/images/${1:0:2}/$1.symdb.lz4"; }
sy() { echo "$DB/images/${1:0:2}/$1.symdb"; }

# The oracle: start and middle of every sized function symbol (at most 400
# per image), ascending; llvm-symbolizer-14, LLVM style, raw linkage names.
specs=()
for f in "${FILES[@]}"; do
	id=${ID[$f]}
	llvm-nm-14 -S --defined-only "$f" | awk '$3 ~ /^[tT]$/ && NF == 4 {print $1, $2}' |
		python3 -c 'import sys
out = set()
for l in sys.stdin:
    a, n = (int(x, 16) for x in l.split())
    out.update((a, a + n // 2))
for a in sorted(out)[:400]: print("%x" % a)' >"$EXP/$id.addrs"
	(($(wc -l <"$EXP/$id.addrs") >= 10)) || fail "$f: too few function symbols"
	sed 's/^/0x/' "$EXP/$id.addrs" | llvm_query "$f" --no-demangle >"$EXP/$id.expect"
	specs+=("$id:$EXP/$id.addrs:$EXP/$id.expect")
done
# query_matches FILE: symdb query --obj FILE answers like the oracle
query_matches() {
	local id=${ID[$1]}
	sed 's/^/0x/' "$EXP/$id.addrs" | "${S[@]}" query --obj "$1" --no-demangle >"$SCRATCH/got" ||
		fail "$1: query failed"
	cmp -s "$SCRATCH/got" "$EXP/$id.expect" || fail "$1: query differs from llvm-symbolizer-14"
}
forms() { # forms UUID: which files exist, e.g. "symdb", "lz4", "symdb+lz4", "none"
	local s=
	[[ -f $(sy "$1") ]] && s=symdb
	[[ -f $(lz "$1") ]] && s=${s:+$s+}lz4
	echo "${s:-none}"
}
tmp_empty() { [[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "$*: files left in DB/tmp: $(ls "$DB/tmp")"; }

run "${S[@]}" build -q "${FILES[@]}"
expect_ok build
for f in "${FILES[@]}"; do cp "$(sy "${ID[$f]}")" "$SCRATCH/orig/"; done
LIST0=$("${S[@]}" list)

# ---- selection: gc's last use, fake clock ---------------------------------
SYMDB_NOW=$((T0 + 50 * DAY)) run "${S[@]}" query --obj "$A" "0x$(head -1 "$EXP/$UA.addrs")"
expect_ok "query A on day 50"
state=$(db_state "$DB")
SYMDB_NOW=$((T0 + 60 * DAY)) run "${S[@]}" compact --unused-for 45d --dry-run
expect_ok "compact --dry-run"
grep -q "would compact $UB" "$OUT" || fail "dry run does not list B"
grep -q "$UA" "$OUT" && fail "dry run lists A, queried 10 days ago"
[[ $(db_state "$DB") == "$state" ]] || fail "compact --dry-run changed the database"
SYMDB_NOW=$((T0 + 60 * DAY)) run "${S[@]}" compact --unused-for 45d
expect_ok "compact --unused-for 45d"
note "compact: $(tail -1 "$OUT")"
[[ $(forms "$UA") == symdb ]] || fail "A (used on day 50) was compacted: $(forms "$UA")"
for f in "${FILES[@]:1}"; do
	id=${ID[$f]}
	[[ $(forms "$id") == lz4 ]] || fail "$f not compacted: $(forms "$id")"
	grep -q "^compacted $id " "$OUT" || fail "no 'compacted' line for $f"
	# An independent decoder gets the exact index file back.
	lz4 -t -q "$(lz "$id")" || fail "lz4 -t rejects $(lz "$id")"
	lz4 -d -c -q "$(lz "$id")" | cmp -s - "$SCRATCH/orig/$id.symdb" ||
		fail "lz4 -d of $f's cold file differs from its index file"
done
tmp_empty compact
[[ $("${S[@]}" list) == "$LIST0" ]] || fail "compact changed the catalog listing"
SYMDB_NOW=$((T0 + 60 * DAY)) run "${S[@]}" compact --unused-for 45d
expect_ok "compact again"
grep -q "^0 images compacted.* $((${#FILES[@]} - 1)) already cold" "$OUT" ||
	fail "a second compact did not skip the cold images"
note "selection by last use: A stays, the others are LZ4 frames lz4 -d turns back into the index files"

# ---- verify, info, build leave a cold image cold --------------------------
run "${S[@]}" verify
expect_ok "verify with cold images"
run "${S[@]}" info "$UB"
expect_ok "info of a cold image"
grep -q "^storage.*cold" "$OUT" || fail "info does not say the image is cold"
grep -q "^verify  *ok" "$OUT" || fail "info does not verify the cold image"
run "${S[@]}" info "$(lz "$UB")"
expect_ok "info of a .lz4 file"
run "${S[@]}" build "$B"
expect_ok "build of a compacted image"
grep -q "^skipped $UB" "$OUT" || fail "build rebuilt a compacted image: $(cat "$OUT")"
for f in "${FILES[@]:1}"; do [[ $(forms "${ID[$f]}") == lz4 ]] || fail "verify/info/build thawed $f"; done
note "verify, info and build see cold images as indexed and leave them cold"

# ---- transparent thaw: oracle and bytes ------------------------------------
t0=$(date +%s%N)
SYMDB_THAW_LOG=$LOG query_matches "$B"
t1=$(date +%s%N)
query_matches "$B"
t2=$(date +%s%N)
note "query of $(wc -l <"$EXP/$UB.addrs") addresses on B: cold $(((t1 - t0) / 1000000)) ms, warm $(((t2 - t1) / 1000000)) ms"
[[ $(forms "$UB") == symdb ]] || fail "B not thawed: $(forms "$UB")"
cmp -s "$(sy "$UB")" "$SCRATCH/orig/$UB.symdb" || fail "thawed B differs from its index file before compaction"
[[ $(grep -c "^thawed $UB" "$LOG") == 1 ]] || fail "B thawed $(grep -c "^thawed $UB" "$LOG") times"
tmp_empty thaw
run "${S[@]}" verify --grace 0
expect_ok "verify after thaw"
note "first query thawed B: oracle output, byte-identical .symdb, .lz4 gone"

# ---- 8 readers at once -------------------------------------------------------
cold_all() { # compact everything (the clock far ahead), check all are cold
	SYMDB_NOW=$((T0 + $1 * DAY)) run "${S[@]}" compact --unused-for 1d
	expect_ok "compact on day $1"
	for f in "${FILES[@]}"; do [[ $(forms "${ID[$f]}") == lz4 ]] || fail "day $1: $f not cold"; done
}
cold_all 200
rm -f "$LOG"
touch "$SCRATCH/stop" # rel_readers: one pass per thread, all at once
SYMDB_THAW_LOG=$LOG run "$REL_READERS" "$DB" 8 "$SCRATCH/stop" "${specs[@]}"
expect_ok "8 reader threads on cold images"
note "threads: $(cat "$OUT")"
for f in "${FILES[@]}"; do
	id=${ID[$f]}
	[[ $(grep -c " $id" "$LOG") == 1 && $(grep -c "^thawed $id" "$LOG") == 1 ]] ||
		fail "8 threads: $f decompressed $(grep -c " $id" "$LOG") times"
	cmp -s "$(sy "$id")" "$SCRATCH/orig/$id.symdb" || fail "8 threads: thawed $f differs"
	[[ $(forms "$id") == symdb ]] || fail "8 threads: $f left as $(forms "$id")"
done
tmp_empty "8 threads"

cold_all 300
rm -f "$LOG"
pids=()
for p in 1 2 3 4 5 6 7 8; do
	SYMDB_THAW_LOG=$LOG "$REL_READERS" "$DB" 8 "$SCRATCH/stop" "${specs[@]}" \
		>"$SCRATCH/readers.$p" 2>&1 &
	pids+=($!)
done
for p in "${!pids[@]}"; do
	wait "${pids[p]}" || fail "reader process $((p + 1)): $(cat "$SCRATCH/readers.$((p + 1))")"
done
for f in "${FILES[@]}"; do
	id=${ID[$f]}
	[[ $(grep -c " $id" "$LOG") == 1 && $(grep -c "^thawed $id" "$LOG") == 1 ]] ||
		fail "8 processes: $f decompressed $(grep -c " $id" "$LOG") times"
	cmp -s "$(sy "$id")" "$SCRATCH/orig/$id.symdb" || fail "8 processes: thawed $f differs"
done
tmp_empty "8 processes"
run "${S[@]}" verify --grace 0
expect_ok "verify after concurrent thaws"
note "8 threads, then 8 processes x 8 threads: oracle output, one decompression per image"

# ---- a database the user cannot write ----------------------------------------
cold_all 400
RO=$(mktemp -d /tmp/symdb-compact-ro.XXXXXX)
cp -a "$DB" "$RO/db"
chmod -R a+rX,a-w "$RO"
ro_state=$(db_state "$RO/db")
sed 's/^/0x/' "$EXP/$UA.addrs" >"$RO.addrs"
chmod a+r "$RO.addrs"
set +e
setpriv --reuid=65534 --regid=65534 --clear-groups env SYMDB_THAW_LOG= \
	"$SYMDB" --db "$RO/db" query --obj "$A" --no-demangle <"$RO.addrs" >"$SCRATCH/got" 2>"$ERR"
RC=$?
set -e
((RC == 0)) || { chmod -R u+w "$RO"; rm -rf "$RO" "$RO.addrs"; fail "query as nobody on a read-only database: exit $RC: $(cat "$ERR")"; }
cmp -s "$SCRATCH/got" "$EXP/$UA.expect" || { chmod -R u+w "$RO"; rm -rf "$RO" "$RO.addrs"; fail "read-only query differs from the oracle"; }
[[ $(db_state "$RO/db") == "$ro_state" ]] || { chmod -R u+w "$RO"; rm -rf "$RO" "$RO.addrs"; fail "a read-only query changed the database"; }
chmod -R u+w "$RO"
rm -rf "$RO" "$RO.addrs"
note "read-only database (user nobody): answers from memory, nothing written"

# ---- damaged .lz4 --------------------------------------------------------------
good=$SCRATCH/good.lz4
cp "$(lz "$UC")" "$good"
size=$(stat -c %s "$good")
damage() { # damage KIND: replace C's cold file by a damaged one
	cp "$good" "$(lz "$UC")"
	case $1 in
	flip) printf '\x5a' | dd of="$(lz "$UC")" bs=1 seek=$((size / 2)) conv=notrunc status=none ;;
	truncated) truncate -s $((size - 100)) "$(lz "$UC")" ;;
	size) # a valid frame, checksums and all, of one byte more than File_Size
		(cat "$SCRATCH/orig/$UC.symdb"; printf '\0') >"$SCRATCH/plus1"
		lz4 -q -f -BX --content-size "$SCRATCH/plus1" "$(lz "$UC")" ;;
	esac
}
for kind in flip truncated size; do
	damage $kind
	state=$(db_state "$DB")
	run "${S[@]}" query --no-build --obj "$C" 0x1000
	expect_error "query of a cold image with a $kind .lz4" "$UC.symdb.lz4"
	((RC == 4)) || fail "$kind .lz4: exit $RC, expected 4"
	[[ $(db_state "$DB") == "$state" ]] || fail "$kind .lz4: the database changed"
	run "${S[@]}" verify
	((RC == 4)) || fail "verify of a $kind .lz4: exit $RC, expected 4"
	grep -q "^damaged $UC .*$UC.symdb.lz4" "$OUT" || fail "verify does not report the $kind .lz4"
done
run "${S[@]}" verify --repair
((RC == 5)) || fail "verify --repair: exit $RC, expected 5"
[[ $(forms "$UC") == none ]] || fail "--repair left C's files: $(forms "$UC")"
"${S[@]}" list | grep -q "^$UC" && fail "--repair left C's entry"
run "${S[@]}" verify --grace 0
expect_ok "verify after --repair"
run "${S[@]}" build -q "$C"
expect_ok "rebuild C"
note "damaged .lz4 (flipped, truncated, wrong content size): one error line, exit 4, nothing changed; --repair removed it"

# ---- stray cold files ------------------------------------------------------------
# An orphan .lz4 (no entry) and a redundant one (its .symdb exists too, as a
# compaction killed between rename and unlink leaves it), both older than
# the grace period: verify lists them, gc removes them, the image stays.
cold_all 450
orphan=$DB/images/00/00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff.symdb.lz4
mkdir -p "$DB/images/00"
cp "$(lz "$UB")" "$orphan"
cp "$SCRATCH/orig/$UB.symdb" "$(sy "$UB")"
touch -d @$((T0 - 7200)) "$orphan" "$(lz "$UB")"
run "${S[@]}" verify
((RC == 4)) || fail "verify with stray cold files: exit $RC, expected 4"
grep -q "^orphan images/00/00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff.symdb.lz4$" "$OUT" ||
	fail "verify does not list the orphan .lz4"
grep -q "^leftover images/${UB:0:2}/$UB.symdb.lz4 (its .symdb exists" "$OUT" ||
	fail "verify does not list the redundant .lz4"
run "${S[@]}" gc
expect_ok "gc of stray cold files"
[[ ! -e $orphan && $(forms "$UB") == symdb ]] || fail "gc left $(forms "$UB") / the orphan"
run "${S[@]}" verify --grace 0
expect_ok "verify after gc of stray cold files"
query_matches "$B"
note "orphan and redundant .lz4: listed by verify, removed by gc, the image intact"

# ---- SIGKILL during compact and during thaw ----------------------------------
killed=0
for ((i = 0; i < KILL_RUNS; i++)); do
	if ((i % 2 == 0)); then # kill a compaction of everything
		SYMDB_NOW=$((T0 + (500 + i) * DAY)) "${S[@]}" compact --unused-for 1d >/dev/null 2>&1 &
	else # kill a thawing reader
		SYMDB_NOW=$((T0 + (500 + i) * DAY)) "${S[@]}" compact --unused-for 1d >/dev/null 2>&1
		"$REL_READERS" "$DB" 2 "$SCRATCH/stop" "${specs[@]}" >/dev/null 2>&1 &
	fi
	pid=$!
	sleep "$(printf '0.%03d' $((RANDOM % 25)))"
	kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null || true
	run "${S[@]}" verify --grace 1000000d
	((RC == 0)) || fail "kill run $i: verify: $(cat "$OUT")"
done
SYMDB_NOW=$(($(date +%s) + 7200)) run "${S[@]}" gc
expect_ok "gc after the kills"
note "gc: $(tail -1 "$OUT")"
run "${S[@]}" verify --grace 0
expect_ok "verify --grace 0 after the kills"
tmp_empty "kills + gc"
for f in "${FILES[@]}"; do query_matches "$f"; done
note "$KILL_RUNS runs ($killed killed) of compact / thaw: verify clean after gc, every image resolves like the oracle"

# ---- export / import, rm, gc, reindex --------------------------------------------
cold_all 700
run "${S[@]}" export --all
expect_ok "export --all of cold images"
cp "$OUT" "$SCRATCH/cold.bundle"
for f in "${FILES[@]}"; do [[ $(forms "${ID[$f]}") == lz4 ]] || fail "export thawed $f"; done
D2=$SCRATCH/db2
run_in "$SCRATCH/cold.bundle" "$SYMDB" --db "$D2" import
expect_ok "import of a bundle of cold images"
for f in "${FILES[@]}"; do
	id=${ID[$f]}
	cmp -s "$D2/images/${id:0:2}/$id.symdb" "$SCRATCH/orig/$id.symdb" || fail "imported $f differs"
	sed 's/^/0x/' "$EXP/$id.addrs" | "$SYMDB" --db "$D2" query --obj "$f" --no-demangle |
		cmp -s - "$EXP/$id.expect" || fail "imported $f: query differs from llvm-symbolizer-14"
done
note "compact -> export -> import: identical index files and oracle answers"

# gc --max-size counts bytes on disk: the cold files fit, the index files would not.
cold=0 full=0
for f in "${FILES[@]}"; do
	cold=$((cold + $(stat -c %s "$(lz "${ID[$f]}")")))
	full=$((full + $(stat -c %s "$SCRATCH/orig/${ID[$f]}.symdb")))
done
SYMDB_NOW=$((T0 + 701 * DAY)) run "${S[@]}" gc --max-size "$cold"
expect_ok "gc --max-size with cold images"
[[ $("${S[@]}" list | wc -l) == "${#FILES[@]}" ]] || fail "gc --max-size $cold removed a cold image (index files: $full bytes)"
SYMDB_NOW=$((T0 + 701 * DAY)) run "${S[@]}" gc --max-size $((cold - 1))
expect_ok "gc --max-size below the cold total"
(($("${S[@]}" list | wc -l) == ${#FILES[@]} - 1)) || fail "gc --max-size $((cold - 1)) removed not exactly one image"
note "gc --max-size counts the cold files' $cold bytes, not the index files' $full"

# reindex rebuilds the entries of cold images; rm removes the cold file.
LIST1=$("${S[@]}" list | awk '{sub(/.*\//, "", $5); print $1, $2, $3, $5}')
rm -rf "$DB/catalog"
run "${S[@]}" reindex
expect_ok "reindex with cold images"
[[ $("${S[@]}" list | awk '{sub(/.*\//, "", $5); print $1, $2, $3, $5}') == "$LIST1" ]] || fail "reindex: list differs"
for f in "${FILES[@]}"; do
	id=${ID[$f]}
	"${S[@]}" list | grep -q "^$id" || continue
	[[ $(forms "$id") == lz4 ]] || fail "reindex thawed $f"
	query_matches "$f"
done
id=$("${S[@]}" list | awk 'NR == 1 {print $1}')
[[ $(forms "$id") == symdb ]] || fail "$id not thawed before rm"
run "${S[@]}" rm "$id"
expect_ok "rm of a thawed image"
[[ $(forms "$id") == none ]] || fail "rm left $(forms "$id")"
SYMDB_NOW=$((T0 + 900 * DAY)) run "${S[@]}" compact --unused-for 1d
expect_ok "compact before rm"
id=$("${S[@]}" list | awk 'NR == 1 {print $1}')
[[ $(forms "$id") == lz4 ]] || fail "$id not cold before rm"
run "${S[@]}" rm "$id"
expect_ok "rm of a cold image"
[[ $(forms "$id") == none ]] || fail "rm left $(forms "$id")"
run "${S[@]}" verify --grace 0
expect_ok "final verify"
note "reindex restores cold entries (still cold, oracle answers); rm removes the .lz4"
