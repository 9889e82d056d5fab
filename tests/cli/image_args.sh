#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Naming an image on the command line: a UUID, a unique prefix of one (at
# least 8 hex digits, odd counts too), or the path of the binary (its
# build-id, as `symdb build` computes it), for info, rm, export and
# query --uuid.  A prefix shared by several images is an error that says how
# many and which; a prefix under 8 digits is a usage error.  The build-ids
# are chosen with ld --build-id=0xHEX so that they share prefixes; every
# expected UUID comes from binutils' readelf, every answer from
# llvm-symbolizer-14.
source "$(dirname "$0")/lib.sh"
require cc

src=$SCRATCH/p.c
printf 'int f(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$src"
mk() { cc -g -O0 -Wl,--build-id=0x"$2" -o "$SCRATCH/$1" "$src" || fail "cc $1"; }
mk a deadbeef00000001      # A2's UUID begins with A's whole UUID
mk a2 deadbeef00000001aaaaaaaa
mk b deadbeef00000002
mk c cafe00000000000000000042
for f in a a2 b c; do
	[[ $(build_id "$SCRATCH/$f") ]] || fail "readelf shows no build-id in $f"
done
A=$(build_id "$SCRATCH/a") A2=$(build_id "$SCRATCH/a2") B=$(build_id "$SCRATCH/b") C=$(build_id "$SCRATCH/c")
db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$SCRATCH"/{a,a2,b,c}
expect_ok build

info_uuid() { sed -n 's/^uuid  *\([0-9a-f]*\) .*/\1/p' "$OUT"; }

# A unique prefix, even and odd digit counts, any case, dashes ignored.
for p in cafe0000 CAFE00000 cafe-0000-0000; do
	run "$SYMDB" info --db "$db" "$p"
	expect_ok "info $p"
	[[ $(info_uuid) == "$C" ]] || fail "info $p: not the image $C"
done
run "$SYMDB" info --db "$db" deadbeef00000001a
expect_ok "info (odd prefix)"
[[ $(info_uuid) == "$A2" ]] || fail "info deadbeef00000001a: not $A2"
# A whole UUID is never ambiguous with a longer one it begins.
run "$SYMDB" info --db "$db" "$A"
expect_ok "info of a UUID that begins another"
[[ $(info_uuid) == "$A" ]] || fail "info $A: not $A"

# Ambiguous: how many and which, exit 1, nothing printed.
run "$SYMDB" info --db "$db" deadbeef
expect_error "ambiguous prefix" "ambiguous UUID prefix: 3 images match"
((RC == 1)) || fail "ambiguous prefix: exit $RC, expected 1"
for u in "$A" "$A2" "$B"; do
	grep -qF "$u (a" "$ERR" || grep -qF "$u (b)" "$ERR" || fail "ambiguity error does not name $u"
done
grep -qF "$C" "$ERR" && fail "ambiguity error names $C, which does not match"
[[ -s $OUT ]] && fail "info printed something for an ambiguous prefix"
grep -qF "symdb: deadbeef: ambiguous UUID prefix: 3 images match: $A (a), $A2 (a2), $B (b)" "$ERR" ||
	fail "ambiguity error not in the documented form"

# Too short: a usage error.
run "$SYMDB" info --db "$db" deadbee
expect_error "7-digit prefix" "symdb: deadbee: UUID prefix too short: give at least 8 hex digits"
((RC == 2)) || fail "7-digit prefix: exit $RC, expected 2"
run "$SYMDB" rm --db "$db" dead
expect_error "rm 4-digit prefix" "UUID prefix too short"
((RC == 2)) || fail "rm 4-digit prefix: exit $RC, expected 2"
# No match.
run "$SYMDB" info --db "$db" 0123456789
expect_error "unknown prefix" "symdb: 0123456789: not in the database"
((RC == 1)) || fail "unknown prefix: exit $RC, expected 1"

# query --uuid PREFIX answers as llvm-symbolizer-14 does for the file.
fa=$(llvm-nm-14 "$SCRATCH/c" | awk '$3 == "f" {print "0x" $1}')
[[ $fa ]] || fail "no f in c"
llvm_query "$SCRATCH/c" "$fa" >"$SCRATCH/expect"
run "$SYMDB" query --db "$db" --uuid cafe00000 "$fa"
expect_ok "query --uuid prefix"
diff "$SCRATCH/expect" "$OUT" || fail "query --uuid prefix differs from llvm-symbolizer-14"
run "$SYMDB" query --db "$db" --uuid deadbeef "$fa"
expect_error "query --uuid ambiguous" "ambiguous UUID prefix: 3 images match"

# export PREFIX and export FILE: the bundle holds that image.
"$SYMDB" export --db "$db" cafe0000 >"$SCRATCH/c.bundle" || fail "export cafe0000"
"$SYMDB" export --db "$db" "$SCRATCH/b" >"$SCRATCH/b.bundle" || fail "export FILE"
run "$SYMDB" import --db "$SCRATCH/db2" "$SCRATCH/c.bundle"
expect_ok "import of the prefix bundle"
[[ $(cat "$OUT") == "imported $C" ]] || fail "prefix bundle: $(cat "$OUT")"
run "$SYMDB" import --db "$SCRATCH/db2" "$SCRATCH/b.bundle"
[[ $(cat "$OUT") == "imported $B" ]] || fail "file bundle: $(cat "$OUT")"
run "$SYMDB" export --db "$db" deadbeef
expect_error "export ambiguous" "ambiguous UUID prefix"
[[ -s $OUT ]] && fail "export wrote a bundle for an ambiguous prefix"

# info FILE and rm FILE: the binary's build-id names the image.
run "$SYMDB" info --db "$db" "$SCRATCH/b"
expect_ok "info FILE"
[[ $(info_uuid) == "$B" ]] || fail "info FILE: not $B"
run "$SYMDB" rm --db "$db" "$SCRATCH/b"
expect_ok "rm FILE"
[[ $(cat "$OUT") == "removed $B" ]] || fail "rm FILE printed: $(cat "$OUT")"
run "$SYMDB" rm --db "$db" "$SCRATCH/b"
expect_error "rm FILE again" "symdb: $SCRATCH/b: not in the database (UUID $B)"
((RC == 1)) || fail "rm FILE again: exit $RC, expected 1"
# Ambiguous rm removes nothing; a unique prefix removes its one image.
run "$SYMDB" rm --db "$db" deadbeef0000000
expect_error "rm ambiguous" "ambiguous UUID prefix: 2 images match"
run "$SYMDB" rm --db "$db" deadbeef00000001a
expect_ok "rm prefix"
[[ $(cat "$OUT") == "removed $A2" ]] || fail "rm prefix printed: $(cat "$OUT")"
left=$("$SYMDB" list --db "$db" | awk '{print $1}' | sort | tr '\n' ' ')
[[ $left == "$(printf '%s\n' "$A" "$C" | sort | tr '\n' ' ')" ]] || fail "left after rm: $left"
run "$SYMDB" rm --db "$db" "$SCRATCH/nonexistent"
expect_error "rm of a missing path" "no such file, and not a UUID"
note "prefixes, ambiguity, short prefixes and paths: info, rm, export, query --uuid"
